// How each tool-call format writes calls, as data: one row per format (tool_syntax.cpp). From a row
// and the request's tools comes the grammar that forces well-formed calls (a call's arguments follow
// its tool's JSON Schema) and the trigger words that start it lazily when tool_choice is "auto".
//
// Many formats mark calls with their model's control tokens ([TOOL_CALLS], <｜tool▁calls▁begin｜>,
// <|tool_call|>, ...). Such a token has no text for character matching, so the grammar names it as a
// token (`<[id]>`, or its text spelled out), a lazy grammar also triggers on the token, and the reply
// shows the token's text so the parser finds it (control_markers below).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/chat/chat_parser.h"
#include "engine/tokenizer/vocab.h"

namespace api {

struct ToolGrammarTool {
    std::string name;
    nlohmann::ordered_json parameters = nlohmann::ordered_json::object();  // the tool's JSON Schema
};

// A format's marker that the vocabulary has as one control token.
struct ControlMarker {
    std::string text;
    engine::Token token;
};

// GBNF literals for a format: text that contains a control marker names the marker's token, or its
// text spelled out ( <[id]> | "text" ).
class GbnfLiterals {
  public:
    explicit GbnfLiterals(std::vector<ControlMarker> control = {}) : control_(std::move(control)) {}
    std::string operator()(std::string_view text) const;

  private:
    std::vector<ControlMarker> control_;
};

struct ToolSyntax {
    engine::chat::ToolCallFormat format;
    std::string list_open;   // before all calls
    std::string list_close;  // after all calls
    std::string call_open;   // before each call
    std::string call_close;  // after each call
    std::string separator;   // between calls
    // The GBNF sequence of one call of `tool`. Rules it needs are appended to `rules`, named with
    // `prefix`. Throws engine::SchemaError for a schema the converter refuses.
    std::string (*call)(const ToolGrammarTool& tool, const std::string& prefix, const GbnfLiterals& lit,
                        std::string& rules);
    std::vector<std::string> triggers;  // text that starts a call (the lazy grammar's trigger words)
    std::vector<std::string> markers;   // the format's special strings (often control tokens)
    // Text before a call that the grammar does not write but the parser reads as part of the calls (Llama
    // 3's <|python_tag|>): a stream holds it back like a trigger, so it never goes out as content.
    std::vector<std::string> lead_ins = {};
};

// What a reply's stream holds back as the possible start of calls: the triggers and the lead-ins.
std::vector<std::string> reply_triggers(const ToolSyntax& syntax);

// The row for a format (Generic for None).
const ToolSyntax& tool_syntax(engine::chat::ToolCallFormat format);

// GBNF whose root matches one call (or, with `parallel`, one or more) of the given tools.
std::string tool_call_grammar(const ToolSyntax& syntax, const std::vector<ToolGrammarTool>& tools, bool parallel,
                              const GbnfLiterals& lit = GbnfLiterals());

// Which of `texts` the vocabulary has as exactly one control token.
std::vector<ControlMarker> control_markers(const std::vector<std::string>& texts, const engine::Vocab& vocab);

// Whether a parameter's schema is a string's (plain text in the XML formats, JSON otherwise).
bool is_string_schema(const nlohmann::ordered_json& schema);

}  // namespace api
