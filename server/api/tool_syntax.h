// How each tool-call format writes calls, as data: one row per format (tool_syntax.cpp). From a row
// and the request's tools comes the grammar that forces well-formed calls (a call's arguments follow
// its tool's JSON Schema) and the trigger words that start it lazily when tool_choice is "auto".
#pragma once

#include <string>
#include <vector>

#include "engine/chat/chat_parser.h"

namespace api {

struct ToolSyntax {
    engine::chat::ToolCallFormat format;
    std::string list_open;   // before all calls
    std::string list_close;  // after all calls
    std::string call_open;   // before each call
    std::string call_close;  // after each call
    std::string separator;   // between calls
    // The GBNF sequence of one call, given the tool name and the rule of its arguments.
    std::string (*call)(const std::string& name, const std::string& args_rule);
    std::vector<std::string> triggers;  // text that starts a call (the lazy grammar's trigger words)
};

// The row for a format (Generic for None).
const ToolSyntax& tool_syntax(engine::chat::ToolCallFormat format);

struct ToolGrammarTool {
    std::string name;
    std::string args_gbnf;  // a complete grammar (root rule) for the arguments
};

// GBNF whose root matches one call (or, with `parallel`, one or more) of the given tools.
std::string tool_call_grammar(const ToolSyntax& syntax, const std::vector<ToolGrammarTool>& tools,
                              bool parallel);

}  // namespace api
