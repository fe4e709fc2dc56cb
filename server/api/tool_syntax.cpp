#include "server/api/tool_syntax.h"

#include "server/api/gbnf_prefix.h"

namespace api {

using engine::chat::ToolCallFormat;

namespace {

// {"name": "NAME", "<args_key>": ARGS}
std::string json_call(const std::string& name, const std::string& args_rule, const char* args_key) {
    const std::string name_json = "\"" + name + "\"";  // tool names are validated to [A-Za-z0-9_.-]
    return gbnf_literal("{\"name\": " + name_json + ", \"" + args_key + "\": ") + " " + args_rule + " " +
           gbnf_literal("}");
}

std::string arguments_call(const std::string& name, const std::string& args_rule) {
    return json_call(name, args_rule, "arguments");
}

std::string parameters_call(const std::string& name, const std::string& args_rule) {
    return json_call(name, args_rule, "parameters");
}

std::string function_tag_call(const std::string& name, const std::string& args_rule) {
    return gbnf_literal("<function=" + name + ">") + " " + args_rule + " " + gbnf_literal("</function>");
}

std::string deepseek_call(const std::string& name, const std::string& args_rule) {
    return gbnf_literal("function<｜tool▁sep｜>" + name + "\n```json\n") + " " + args_rule + " " +
           gbnf_literal("\n```");
}

const std::vector<ToolSyntax>& table() {
    static const std::vector<ToolSyntax> rows = {
        {ToolCallFormat::Generic, "{\"tool_calls\": [", "]}", "", "", ", ", arguments_call, {"{\"tool_call"}},
        {ToolCallFormat::Hermes, "", "", "<tool_call>\n", "\n</tool_call>", "\n", arguments_call, {"<tool_call>"}},
        {ToolCallFormat::Llama3Json, "", "", "", "", "; ", parameters_call, {"{\"name\""}},
        {ToolCallFormat::Mistral, "[TOOL_CALLS][", "]", "", "", ", ", arguments_call, {"[TOOL_CALLS]"}},
        {ToolCallFormat::FunctionTag, "", "", "", "", "\n", function_tag_call, {"<function="}},
        {ToolCallFormat::DeepSeek, "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
         "<｜tool▁call▁end｜>", "\n", deepseek_call, {"<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"}},
    };
    return rows;
}

}  // namespace

const ToolSyntax& tool_syntax(ToolCallFormat format) {
    if (format == ToolCallFormat::None) format = ToolCallFormat::Generic;
    for (const auto& row : table())
        if (row.format == format) return row;
    return table().front();
}

std::string tool_call_grammar(const ToolSyntax& s, const std::vector<ToolGrammarTool>& tools, bool parallel) {
    std::string rules;
    std::string alternatives;
    for (size_t i = 0; i < tools.size(); ++i) {
        const std::string prefix = "tool" + std::to_string(i) + "-";
        rules += prefix_gbnf_rules(tools[i].args_gbnf, prefix);
        if (!rules.empty() && rules.back() != '\n') rules += "\n";
        rules += "call" + std::to_string(i) + " ::= " + s.call(tools[i].name, prefix + "root") + "\n";
        alternatives += (i ? " | call" : "call") + std::to_string(i);
    }
    auto lit = [](const std::string& t) { return t.empty() ? std::string() : gbnf_literal(t) + " "; };
    const std::string one = lit(s.call_open) + "call " + lit(s.call_close);
    std::string root = "root ::= " + lit(s.list_open) + "one-call ";
    if (parallel) root += "(" + lit(s.separator) + "one-call)* ";
    root += lit(s.list_close);
    return root + "\none-call ::= " + one + "\ncall ::= " + alternatives + "\n" + rules;
}

}  // namespace api
