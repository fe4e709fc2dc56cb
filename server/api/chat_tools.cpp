#include "server/api/chat_tools.h"

#include <cctype>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/schema_relax.h"
#include "server/api/gbnf_prefix.h"
#include "server/api/json_fields.h"
#include "server/api/tool_syntax.h"

namespace api {

namespace {

using ojson = nlohmann::ordered_json;

bool valid_tool_name(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    for (const char c : name)
        if (!std::isalnum((unsigned char)c) && c != '_' && c != '-' && c != '.') return false;
    return true;
}

void check_tools(const ojson& tools) {
    if (!tools.is_array()) bad_request("'tools' must be an array");
    std::set<std::string> names;
    for (size_t i = 0; i < tools.size(); ++i) {
        const ojson& t = tools[i];
        const std::string where = "tools[" + std::to_string(i) + "]";
        if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") ||
            !t["function"].is_object())
            bad_request("'" + where + "' must be {\"type\": \"function\", \"function\": {...}}");
        const ojson& fn = t["function"];
        if (!fn.contains("name") || !fn["name"].is_string() || !valid_tool_name(fn["name"].get<std::string>()))
            bad_request("'" + where + ".function.name' must be 1 to 64 letters, digits, '_', '-' or '.'");
        if (!names.insert(fn["name"].get<std::string>()).second)
            bad_request("'" + where + "': the tool name '" + fn["name"].get<std::string>() + "' is used twice");
        if (fn.contains("parameters") && !fn["parameters"].is_object())
            bad_request("'" + where + ".function.parameters' must be a JSON Schema object");
    }
}

// Every tool message answers a call made by an earlier assistant message.
void check_tool_messages(const ojson& messages) {
    if (!messages.is_array()) return;
    std::set<std::string> call_ids;
    for (size_t i = 0; i < messages.size(); ++i) {
        const ojson& m = messages[i];
        if (!m.is_object()) continue;
        const std::string role = m.value("role", "");
        if (role == "assistant" && m.contains("tool_calls") && m["tool_calls"].is_array()) {
            for (const auto& c : m["tool_calls"])
                if (c.is_object() && c.contains("id") && c["id"].is_string()) call_ids.insert(c["id"].get<std::string>());
        } else if (role == "tool") {
            const ojson id = m.value("tool_call_id", ojson());
            if (!id.is_string())
                bad_request("messages[" + std::to_string(i) + "]: a tool message needs a string 'tool_call_id'");
            if (!call_ids.count(id.get<std::string>()))
                bad_request("messages[" + std::to_string(i) + "]: tool_call_id '" + id.get<std::string>() +
                            "' does not match any earlier assistant tool call");
        }
    }
}

}  // namespace

ChatTools parse_chat_tools(const ojson& body) {
    ChatTools out;
    if (body.contains("messages")) check_tool_messages(body["messages"]);
    if (body.contains("tools") && !body["tools"].is_null()) {
        check_tools(body["tools"]);
        out.tools = body["tools"];
    }
    if (body.contains("parallel_tool_calls") && !body["parallel_tool_calls"].is_null()) {
        if (!body["parallel_tool_calls"].is_boolean()) bad_request("'parallel_tool_calls' must be a boolean");
        out.parallel = body["parallel_tool_calls"].get<bool>();
    }
    const ojson choice = body.value("tool_choice", ojson());
    if (choice.is_null() || choice == "auto") {
        out.choice = ToolChoice::Auto;
    } else if (choice == "none") {
        out.choice = ToolChoice::None;
    } else if (choice == "required") {
        out.choice = ToolChoice::Required;
    } else if (choice.is_object() && choice.value("type", "") == "function" && choice.contains("function") &&
               choice["function"].is_object() && choice["function"].value("name", ojson()).is_string()) {
        out.choice = ToolChoice::Named;
        out.named = choice["function"]["name"].get<std::string>();
        bool known = false;
        if (out.tools.is_array())
            for (const auto& t : out.tools) known = known || t["function"]["name"] == out.named;
        if (!known) bad_request("'tool_choice' names the function '" + out.named + "', which is not in 'tools'");
    } else {
        bad_request("'tool_choice' must be \"auto\", \"none\", \"required\" or "
                    "{\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    if (out.choice == ToolChoice::Required && !out.active())
        bad_request("'tool_choice' is \"required\" but 'tools' is empty");
    return out;
}

// Whether a grammar stays within the matcher's expansion bound (engine::gbnf::check_expansion). Token
// references resolve to any id: the bound does not depend on which token. Other errors are left to the
// grammar's compilation, which reports them.
static bool within_expansion_bound(const std::string& gbnf) {
    try {
        const auto rules = engine::gbnf::parse_gbnf(gbnf, [](std::string_view) { return std::optional<int32_t>(0); });
        engine::gbnf::check_expansion(rules, engine::gbnf::find_root(rules, "root"), gbnf);
    } catch (const engine::GrammarError& e) {
        return e.message.find("matcher stacks") == std::string::npos;
    }
    return true;
}

void apply_tool_grammar(const ChatTools& tools, engine::chat::ToolCallFormat format, const engine::Vocab& vocab,
                        GenerationOptions& opts) {
    if (!tools.active() || tools.choice == ToolChoice::None) return;
    if (!opts.grammar.empty() && !opts.grammar_from_defaults)
        bad_request("'tools' cannot be combined with 'grammar', 'json_schema' or 'response_format'");
    std::vector<ToolGrammarTool> list;
    for (size_t i = 0; i < tools.tools.size(); ++i) {
        const ojson& fn = tools.tools[i]["function"];
        const std::string name = fn["name"].get<std::string>();
        if (tools.choice == ToolChoice::Named && name != tools.named) continue;
        ojson params = fn.value("parameters", ojson::object());
        try {
            // Refinements the grammar cannot enforce (uniqueItems, not, multipleOf, a pattern with
            // lookahead ...) are left to the model, which reads the whole schema, as llama-server does.
            std::vector<std::string> dropped;
            params = engine::relax_schema(params, dropped,
                                          [](const ojson& p) { (void)engine::json_schema_to_gbnf(p); });
            for (const auto& ptr : dropped)
                spdlog::info("tools[{}] '{}': the arguments' grammar does not enforce '#{}'", i, name, ptr);
        } catch (const engine::SchemaError& e) {
            bad_request("invalid JSON schema in 'tools[" + std::to_string(i) + "].function.parameters' at '#" +
                        e.pointer + "': " + e.reason);
        } catch (const std::exception& e) {
            bad_request("invalid JSON schema in 'tools[" + std::to_string(i) + "].function.parameters': " +
                        e.what());
        }
        list.push_back({name, params});
    }
    const ToolSyntax& syntax = tool_syntax(format);
    const std::vector<ControlMarker> control = control_markers(syntax.markers, vocab);
    const bool parallel = tools.parallel && tools.choice != ToolChoice::Named;
    // The calls stay forced by name, their arguments any JSON object, rather than every request that
    // offers these tools being refused.
    const auto any_object_arguments = [&](const std::string& why) {
        for (auto& t : list) t.parameters = ojson{{"type", "object"}};
        opts.grammar = tool_call_grammar(syntax, list, parallel, GbnfLiterals(control));
        spdlog::warn("tools: {}; calls are constrained to the tool names and JSON objects only", why);
    };
    try {
        try {
            opts.grammar = tool_call_grammar(syntax, list, parallel, GbnfLiterals(control));
        } catch (const engine::SchemaError& e) {
            // A string parameter written as raw text (XML-like formats) whose pattern or format cannot be
            // combined with its closing tag.
            any_object_arguments(e.what());
        }
        // Objects with many optional parameters are quadratic in the matcher's bound.
        if (!within_expansion_bound(opts.grammar))
            any_object_arguments("the arguments' schemas make too large a grammar");
    } catch (const std::exception& e) {
        bad_request(std::string("invalid JSON schema in 'tools': ") + e.what());
    }
    opts.grammar_lazy = tools.choice == ToolChoice::Auto;
    opts.triggers = {};
    if (!opts.grammar_lazy) return;
    opts.triggers.words = syntax.triggers;
    // A trigger that is one control token fires as that token, so the grammar takes it as a token.
    for (const auto& m : control_markers(syntax.triggers, vocab)) opts.triggers.tokens.push_back(m.token);
}

void close_reasoning_first(const std::string& close, const engine::Vocab& vocab, GenerationOptions& opts) {
    if (opts.grammar.empty() || opts.grammar_lazy || close.empty()) return;
    const GbnfLiterals lit(control_markers({close}, vocab));
    opts.grammar = "root ::= " + lit(close) + " [ \\t\\n]{0,4} call-root\n" + prefix_gbnf_rules(opts.grammar, "call-");
}

std::map<std::string, std::set<std::string>> string_parameters(const ChatTools& tools) {
    std::map<std::string, std::set<std::string>> out;
    if (!tools.active()) return out;
    for (const auto& t : tools.tools) {
        const ojson& fn = t["function"];
        const ojson params = fn.value("parameters", ojson::object());
        const ojson props = params.is_object() ? params.value("properties", ojson::object()) : ojson::object();
        if (!props.is_object()) continue;
        auto& strings = out[fn["name"].get<std::string>()];
        for (const auto& [key, schema] : props.items())
            if (is_string_schema(schema)) strings.insert(key);
    }
    return out;
}

}  // namespace api
