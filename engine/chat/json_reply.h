// The content of a chat reply written under a response format (a JSON Schema): llama-server's chat
// grammar lets the model write whitespace and a "```json" fence before the JSON value and whitespace and the
// closing fence after it, and its reply's content is the value alone. An unfinished value (the token limit
// cut it) is content as far as it goes; a reply cut before any value is its text as written.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace engine::chat {

// Reads the JSON value of a reply as the reply grows: each call examines only what was added since the
// last, so a stream of any length costs linear time.
class JsonReplyReader {
  public:
    // The value in `text`, which must extend the text of the previous call (else reset() first).
    // `growing`: more text may follow, so an unfinished fence is held back (it may still be the fence)
    // and what is returned only ever grows as the text does.
    std::string content(std::string_view text, bool growing);
    void reset() { *this = JsonReplyReader(); }

  private:
    enum class Phase { Lead, AfterFence, Value, Done };
    void advance(std::string_view text);

    Phase phase_ = Phase::Lead;
    size_t pos_ = 0;  // the next byte to examine
    size_t start_ = std::string_view::npos, end_ = std::string_view::npos;
    bool scalar_ = false, in_string_ = false, escaped_ = false;
    int depth_ = 0;
};

// The same for a whole text at once.
std::string json_reply_content(std::string_view text, bool growing);

}  // namespace engine::chat
