// Reading tool-call syntax from a text that may still be growing (a reply being generated) or is
// whole. Each read answers Yes (it is there, and was consumed), No (the text says otherwise) or More
// (the text ends before it can tell; only while the text may still grow). The format parsers in
// tool_call_parser.cpp are written once with these reads and serve both the whole parse and the
// streaming scan.
#pragma once

#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/chat_parser.h"

namespace engine::chat::scan {

enum class Got { Yes, No, More };

class Scan {
  public:
    Scan(std::string_view text, bool growing) : text_(text), growing_(growing) {}

    std::string_view text() const { return text_; }
    size_t pos() const { return pos_; }
    bool growing() const { return growing_; }
    bool at_end() const { return pos_ >= text_.size(); }
    // The character at the position (0 at the end).
    char peek() const { return at_end() ? '\0' : text_[pos_]; }
    // More at the end of a growing text, else Yes when the text ended, else No.
    Got end() const;

    void space();  // skips white space
    void back(size_t n) { pos_ -= n; }  // gives back the last n characters read
    // `word` at the position.
    Got lit(std::string_view word);
    // The next `word`: Yes with `before` the text up to it (the position moves past it); More with
    // `before` the text that cannot be part of it; No (a whole text without it) with `before` the rest.
    Got until(std::string_view word, std::string_view& before);
    // The same for the first of several words; `which` is its index.
    Got until_any(std::initializer_list<std::string_view> words, std::string_view& before, size_t& which);
    // A JSON value at the position: Yes when complete and valid, with `raw` its text; More with `raw`
    // its text so far.
    Got json(std::string_view& raw);
    // A JSON string at the position, decoded.
    Got json_string(std::string& value);

  private:
    std::string_view text_;
    bool growing_;
    size_t pos_ = 0;
};

// JSON text without the white space outside strings. Works on a prefix of a value: the result of a
// prefix is a prefix of the result of the whole.
std::string minify_json(std::string_view raw);

// JSON text of a value, invalid UTF-8 replaced.
std::string json_text(const Json& value);

// The calls read so far, and the text that is content. Parsers mark where each block of tool-call
// syntax begins (a <tool_call>...</tool_call>, a [TOOL_CALLS] list, the whole reply for JSON
// replies); when a block turns out malformed, its calls are dropped and the text from its start on
// is content.
class Calls {
  public:
    Calls(const ParseOptions& options, std::string_view text) : options_(options), text_(text) {}

    void content(std::string_view piece) { content_ += piece; }
    void begin(size_t at);
    // A new call (its id given from its index).
    PartialToolCall& open();
    // The block that was being read is not tool-call syntax.
    void fail();

    const ParseOptions& options() const { return options_; }
    std::vector<PartialToolCall>& calls() { return calls_; }
    std::string& content_text() { return content_; }

  private:
    const ParseOptions& options_;
    std::string_view text_;
    std::vector<PartialToolCall> calls_;
    std::string content_;
    size_t block_at_ = 0;
    size_t block_calls_ = 0;
    size_t block_content_ = 0;
};

}  // namespace engine::chat::scan
