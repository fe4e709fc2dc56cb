#include "server/api/tool_syntax.h"

#include "engine/grammar/json_schema.h"
#include "server/api/gbnf_prefix.h"

namespace api {

using engine::chat::ToolCallFormat;
using ojson = nlohmann::ordered_json;

namespace {

// The arguments' rule (an object by the tool's schema), added to `rules`; its name.
std::string args_rule(const ToolGrammarTool& tool, const std::string& prefix, std::string& rules) {
    rules += prefix_gbnf_rules(engine::json_schema_to_gbnf(tool.parameters), prefix);
    if (!rules.empty() && rules.back() != '\n') rules += "\n";
    return prefix + "root";
}

// A tool name as JSON text (tool names are validated to [A-Za-z0-9_.-], which needs no escapes).
std::string quoted(const std::string& name) { return "\"" + name + "\""; }

// {"<name_key>": "NAME", "<args_key>": ARGS}
std::string json_object_call(const ToolGrammarTool& t, const std::string& prefix, const GbnfLiterals& lit,
                             std::string& rules, const char* name_key, const char* args_key) {
    const std::string args = args_rule(t, prefix, rules);
    return lit("{\"" + std::string(name_key) + "\": " + quoted(t.name) + ", \"" + args_key + "\": ") + " " + args +
           " " + lit("}");
}

std::string arguments_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                           std::string& rules) {
    return json_object_call(t, p, lit, rules, "name", "arguments");
}

std::string parameters_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                            std::string& rules) {
    return json_object_call(t, p, lit, rules, "name", "parameters");
}

std::string command_r_plus_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                                std::string& rules) {
    return json_object_call(t, p, lit, rules, "tool_name", "parameters");
}

// Command R7B numbers the calls of a turn: {"tool_call_id": "0", "tool_name": ..., "parameters": ...}
std::string command_r7b_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                             std::string& rules) {
    const std::string args = args_rule(t, p, rules);
    return lit("{\"tool_call_id\": \"") + " [0-9]{1,3} " +
           lit("\", \"tool_name\": " + quoted(t.name) + ", \"parameters\": ") + " " + args + " " + lit("}");
}

// Text, the arguments object, text.
std::string around_args(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                        std::string& rules, const std::string& before, const std::string& after) {
    const std::string args = args_rule(t, p, rules);
    return lit(before) + " " + args + (after.empty() ? "" : " " + lit(after));
}

std::string function_tag_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                              std::string& rules) {
    return around_args(t, p, lit, rules, "<function=" + t.name + ">", "</function>");
}

std::string deepseek_r1_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                             std::string& rules) {
    return around_args(t, p, lit, rules, "function<｜tool▁sep｜>" + t.name + "\n```json\n", "\n```");
}

std::string deepseek_v31_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                              std::string& rules) {
    return around_args(t, p, lit, rules, t.name + "<｜tool▁sep｜>", "");
}

std::string mistral_args_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                              std::string& rules) {
    return around_args(t, p, lit, rules, t.name + "[ARGS]", "");
}

// Kimi K2 numbers the calls of a conversation: functions.NAME:0
std::string kimi_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit, std::string& rules) {
    const std::string args = args_rule(t, p, rules);
    return lit("functions." + t.name + ":") + " [0-9]{1,3} " + lit("<|tool_call_argument_begin|>") + " " + args;
}

// gpt-oss (Harmony): a commentary message to the function, its arguments as JSON. A call ends generation
// (<|call|>, the model's next token), so a reply has one; several are messages one after the other.
std::string harmony_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                         std::string& rules) {
    return around_args(t, p, lit, rules,
                       "<|channel|>commentary to=functions." + t.name + " <|constrain|>json<|message|>", "");
}

// ---- The XML formats: each parameter on its own, string values as plain text.

bool is_string_type(const ojson& type) {
    if (type.is_string()) return type == "string";
    if (type.is_array() && type.size() == 1) return type[0] == "string";
    return false;
}

// A JSON value of `schema` for one parameter, with the root schema's definitions (for $ref).
ojson value_schema(const ojson& schema, const ojson& root) {
    ojson s = schema;
    if (s.is_object())
        for (const char* defs : {"$defs", "definitions"})
            if (root.contains(defs) && !s.contains(defs)) s[defs] = root[defs];
    return s;
}

// The rule of one parameter's value; its name.
std::string xml_value_rule(const ojson& schema, const ojson& root, const std::string& name,
                           const std::string& close_tag, std::string& rules) {
    if (schema.is_object() && is_string_schema(schema)) {
        rules += prefix_gbnf_rules(engine::raw_string_schema_to_gbnf(schema, close_tag), name + "-");
        return name + "-root";
    }
    rules += prefix_gbnf_rules(engine::json_schema_to_gbnf(value_schema(schema, root)), name + "-");
    if (!rules.empty() && rules.back() != '\n') rules += "\n";
    return name + "-root";
}

// How one XML format writes a parameter: key_open KEY key_middle VALUE value_end, where a value
// written as text runs until close_tag.
struct XmlLayout {
    std::string key_open, key_middle, value_end, close_tag;
};

// The parameters in the schema's order, the required ones always, the others optionally.
std::string xml_params(const ToolGrammarTool& t, const std::string& prefix, const GbnfLiterals& lit,
                       std::string& rules, const XmlLayout& x) {
    const ojson& props = t.parameters.value("properties", ojson::object());
    const ojson required = t.parameters.value("required", ojson::array());
    std::string seq;
    size_t k = 0;
    for (const auto& [key, schema] : props.items()) {
        std::string value;
        try {
            value = xml_value_rule(schema, t.parameters, prefix + "p" + std::to_string(k++), x.close_tag, rules);
        } catch (const engine::SchemaError& e) {
            std::string escaped;  // a JSON Pointer token
            for (char c : key) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
            throw engine::SchemaError("/properties/" + escaped + e.pointer, e.reason);
        }
        const std::string param = lit(x.key_open + key + x.key_middle) + " " + value + " " + lit(x.value_end);
        bool needed = false;
        for (const auto& r : required) needed = needed || r == key;
        seq += needed ? param + " " : "( " + param + " )? ";
    }
    return seq;
}

std::string qwen3_coder_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                             std::string& rules) {
    return lit("<function=" + t.name + ">\n") + " " +
           xml_params(t, p, lit, rules, {"<parameter=", ">\n", "\n</parameter>\n", "</parameter>"}) +
           lit("</function>");
}

std::string seed_oss_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                          std::string& rules) {
    return lit("<function=" + t.name + ">\n") + " " +
           xml_params(t, p, lit, rules, {"<parameter=", ">", "</parameter>\n", "</parameter>"}) + lit("</function>");
}

std::string glm45_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit, std::string& rules) {
    return lit(t.name + "\n") + " " +
           xml_params(t, p, lit, rules, {"<arg_key>", "</arg_key>\n<arg_value>", "</arg_value>\n", "</arg_value>"});
}

std::string glm47_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit, std::string& rules) {
    return lit(t.name) + " " +
           xml_params(t, p, lit, rules, {"<arg_key>", "</arg_key><arg_value>", "</arg_value>", "</arg_value>"});
}

std::string minimax_call(const ToolGrammarTool& t, const std::string& p, const GbnfLiterals& lit,
                         std::string& rules) {
    return lit("<invoke name=\"" + t.name + "\">\n") + " " +
           xml_params(t, p, lit, rules, {"<parameter name=\"", "\">", "</parameter>\n", "</parameter>"}) +
           lit("</invoke>");
}

const std::vector<ToolSyntax>& table() {
    const std::string dsl = "<｜tool▁calls▁begin｜>", dsle = "<｜tool▁calls▁end｜>", dc = "<｜tool▁call▁begin｜>",
                      dce = "<｜tool▁call▁end｜>", dsep = "<｜tool▁sep｜>";
    const std::vector<std::string> deepseek_markers = {dsl, dsle, dc, dce, dsep};
    const std::vector<std::string> kimi_markers = {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                                                   "<|tool_call_begin|>", "<|tool_call_end|>",
                                                   "<|tool_call_argument_begin|>"};
    const std::vector<std::string> glm_markers = {"<tool_call>", "</tool_call>", "<arg_key>",
                                                  "</arg_key>",  "<arg_value>",  "</arg_value>"};
    // format, list open/close, call open/close, separator, call, triggers, markers
    static const std::vector<ToolSyntax> rows = {
        // Generic replies without a call are {"response": "..."}, which the parser unwraps: held back too.
        {ToolCallFormat::Generic, "{\"tool_calls\": [", "]}", "", "", ", ", arguments_call, {"{\"tool_call"}, {},
         {"{\"response\""}},
        {ToolCallFormat::Hermes, "", "", "<tool_call>\n", "\n</tool_call>", "\n", arguments_call, {"<tool_call>"},
         {"<tool_call>", "</tool_call>"}},
        {ToolCallFormat::Llama3Json, "", "", "", "", "; ", parameters_call, {"{\"name\""}, {"<|python_tag|>"},
         {"<|python_tag|>"}},
        {ToolCallFormat::Mistral, "[TOOL_CALLS][", "]", "", "", ", ", arguments_call, {"[TOOL_CALLS]"},
         {"[TOOL_CALLS]"}},
        {ToolCallFormat::MistralArgs, "", "", "[TOOL_CALLS]", "", "", mistral_args_call, {"[TOOL_CALLS]"},
         {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}},
        {ToolCallFormat::FunctionTag, "", "", "", "", "\n", function_tag_call, {"<function="}, {}},
        {ToolCallFormat::DeepSeek, dsl, dsle, dc, dce, "\n", deepseek_r1_call, {dsl}, deepseek_markers},
        {ToolCallFormat::DeepSeekV31, dsl, dsle, dc, dce, "", deepseek_v31_call, {dsl}, deepseek_markers},
        {ToolCallFormat::Granite, "<|tool_call|>[", "]", "", "", ", ", arguments_call, {"<|tool_call|>"},
         {"<|tool_call|>"}},
        {ToolCallFormat::CommandR7B, "<|START_ACTION|>[\n    ", "\n]<|END_ACTION|>", "", "", ",\n    ",
         command_r7b_call, {"<|START_ACTION|>"},
         {"<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>"}},
        {ToolCallFormat::CommandRPlus, "Action:\n```json\n[\n", "\n]\n```", "", "", ",\n", command_r_plus_call,
         {"Action:"}, {}},
        {ToolCallFormat::Kimi, kimi_markers[0], kimi_markers[1], kimi_markers[2], kimi_markers[3], "", kimi_call,
         {kimi_markers[0]}, kimi_markers},
        {ToolCallFormat::Qwen3Coder, "", "", "<tool_call>\n", "\n</tool_call>", "\n", qwen3_coder_call,
         {"<tool_call>"}, {"<tool_call>", "</tool_call>"}},
        {ToolCallFormat::SeedOss, "", "", "<seed:tool_call>\n", "\n</seed:tool_call>", "\n", seed_oss_call,
         {"<seed:tool_call>"}, {"<seed:tool_call>", "</seed:tool_call>"}},
        {ToolCallFormat::Glm45, "", "", "<tool_call>", "</tool_call>", "\n", glm45_call, {"<tool_call>"}, glm_markers},
        {ToolCallFormat::Glm47, "", "", "<tool_call>", "</tool_call>", "", glm47_call, {"<tool_call>"}, glm_markers},
        {ToolCallFormat::FireFunction, " functools[", "]", "", "", ", ", arguments_call, {" functools["}, {}},
        {ToolCallFormat::Harmony, "", "", "", "", "<|end|><|start|>assistant", harmony_call,
         {"<|channel|>commentary to="}, {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", "<|end|>"}},
        {ToolCallFormat::MiniMaxM2, "<minimax:tool_call>\n", "\n</minimax:tool_call>", "", "", "\n", minimax_call,
         {"<minimax:tool_call>"}, {"<minimax:tool_call>", "</minimax:tool_call>"}},
    };
    return rows;
}

}  // namespace

std::string GbnfLiterals::operator()(std::string_view text) const {
    std::string out;
    auto plain = [&out](std::string_view t) {
        if (!t.empty()) out += (out.empty() ? "" : " ") + gbnf_literal(std::string(t));
    };
    while (!text.empty()) {
        size_t at = std::string_view::npos;
        const ControlMarker* first = nullptr;
        for (const auto& m : control_) {
            const size_t p = text.find(m.text);
            if (p < at) {
                at = p;
                first = &m;
            }
        }
        if (!first) break;
        plain(text.substr(0, at));
        out += (out.empty() ? "" : " ") + std::string("( <[") + std::to_string(first->token) + "]> | " +
               gbnf_literal(first->text) + " )";
        text.remove_prefix(at + first->text.size());
    }
    plain(text);
    return out.empty() ? "\"\"" : out;
}

std::vector<std::string> reply_triggers(const ToolSyntax& syntax) {
    std::vector<std::string> out = syntax.triggers;
    out.insert(out.end(), syntax.lead_ins.begin(), syntax.lead_ins.end());
    return out;
}

const ToolSyntax& tool_syntax(ToolCallFormat format) {
    if (format == ToolCallFormat::None) format = ToolCallFormat::Generic;
    for (const auto& row : table())
        if (row.format == format) return row;
    return table().front();
}

std::string tool_call_grammar(const ToolSyntax& s, const std::vector<ToolGrammarTool>& tools, bool parallel,
                              const GbnfLiterals& lit) {
    std::string rules;
    std::string alternatives;
    for (size_t i = 0; i < tools.size(); ++i) {
        const std::string call = s.call(tools[i], "tool" + std::to_string(i) + "-", lit, rules);
        rules += "call" + std::to_string(i) + " ::= " + call + "\n";
        alternatives += (i ? " | call" : "call") + std::to_string(i);
    }
    auto opt = [&lit](const std::string& t) { return t.empty() ? std::string() : lit(t) + " "; };
    const std::string one = opt(s.call_open) + "call " + opt(s.call_close);
    std::string root = "root ::= " + opt(s.list_open) + "one-call ";
    if (parallel) root += "(" + opt(s.separator) + "one-call)* ";
    root += opt(s.list_close);
    return root + "\none-call ::= " + one + "\ncall ::= " + alternatives + "\n" + rules;
}

std::vector<ControlMarker> control_markers(const std::vector<std::string>& texts, const engine::Vocab& vocab) {
    std::vector<ControlMarker> out;
    for (const auto& t : texts) {
        const auto ids = vocab.tokenize(t, false, true);
        if (ids.size() == 1 && vocab.is_control(ids[0]) && vocab.token_to_piece(ids[0], true) == t)
            out.push_back({t, ids[0]});
    }
    return out;
}

bool is_string_schema(const ojson& schema) {
    if (!schema.is_object()) return false;
    if (schema.contains("type")) return is_string_type(schema["type"]);
    const ojson values = schema.contains("const") ? ojson::array({schema["const"]}) : schema.value("enum", ojson());
    if (!values.is_array() || values.empty()) return false;
    for (const auto& v : values)
        if (!v.is_string()) return false;
    return true;
}

}  // namespace api
