// A string parameter's value as raw text (json_schema.h raw_string_schema_to_gbnf): what the
// XML-like tool-call formats write between a parameter's tags.
#include <set>

#include "engine/grammar/gbnf_text.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/schema_builtins.h"
#include "engine/grammar/schema_pattern.h"

namespace engine {

namespace {

using ojson = nlohmann::ordered_json;

std::string class_char(char c) {
    switch (c) {
        case '\\': return "\\\\";
        case '"': return "\\\"";
        case '[': return "\\[";
        case ']': return "\\]";
        case '-': return "\\-";
        case '\n': return "\\n";
        default: return std::string(1, c);
    }
}

// Rule `name`: any text that does not contain `tag` (a closing tag: '<', then characters other than
// '<'). Pieces: a character other than '<'; or '<' followed by a proper prefix of the tag's tail and
// a character that breaks it (not '<', which starts a new piece). A '<' with an unfinished prefix may
// end the text, or be followed by another '<'.
std::string text_without_rule(const std::string& name, const std::string& tag) {
    const std::string tail = tag.substr(1);
    std::string open = "\"<\" (\"\"", broken = "\"<\" (";
    for (size_t j = 0; j < tail.size(); ++j) {
        const std::string prefix = tail.substr(0, j);
        if (j > 0) open += " | " + gbnf::gbnf_literal(prefix);
        broken += (j ? " | " : "") + (j ? gbnf::gbnf_literal(prefix) + " " : std::string()) + "[^" +
                  class_char(tail[j]) + "<]";
    }
    open += ")";
    broken += ")";
    return name + " ::= ( [^<] | " + name + "-open* " + name + "-broken )* " + name + "-open*\n" + name +
           "-open ::= " + open + "\n" + name + "-broken ::= " + broken + "\n";
}

// The builtin rule `name` and those it needs, once each.
void add_builtin(const std::string& name, std::set<std::string>& done, std::string& out) {
    if (!done.insert(name).second) return;
    const auto& rule = gbnf::schema_builtins().at(name);
    out += name + " ::= " + rule.body + "\n";
    for (const auto& dep : rule.deps) add_builtin(dep, done, out);
}

}  // namespace

std::string raw_string_schema_to_gbnf(const ojson& schema, std::string_view close_tag) {
    static const std::set<std::string> formats = {"date", "time", "date-time", "uuid", "email", "ipv4"};
    const ojson values = schema.contains("const") ? ojson::array({schema["const"]}) : schema.value("enum", ojson());
    if (values.is_array()) {
        std::string alternatives;
        for (const auto& v : values)
            alternatives += (alternatives.empty() ? "" : " | ") + gbnf::gbnf_literal(v.get<std::string>());
        return "root ::= " + alternatives + "\n";
    }
    const bool lengths = schema.contains("minLength") || schema.contains("maxLength");
    const std::string length_key = schema.contains("minLength") ? "/minLength" : "/maxLength";
    if (schema.contains("pattern")) {
        if (!schema["pattern"].is_string()) throw SchemaError("/pattern", "'pattern' must be a string");
        if (lengths) throw SchemaError(length_key, "'pattern' together with a length limit is not supported");
        try {
            return gbnf::raw_pattern_to_gbnf(schema["pattern"].get<std::string>(), close_tag, "root");
        } catch (const std::invalid_argument& e) {
            throw SchemaError("/pattern", std::string("unsupported pattern: ") + e.what());
        }
    }
    if (schema.contains("format") && schema["format"].is_string() &&
        formats.count(schema["format"].get<std::string>())) {
        if (lengths) throw SchemaError(length_key, "'format' together with a length limit is not supported");
        // The formats' text has no '<', so it never contains a closing tag.
        std::set<std::string> done;
        std::string out = "root ::= " + schema["format"].get<std::string>() + "\n";
        add_builtin(schema["format"].get<std::string>(), done, out);
        return out;
    }
    if (lengths) {
        // Bounded text: no '<' in it, so it cannot run into the closing tag.
        const auto bound = [&](const char* key) {
            return schema.contains(key) && schema[key].is_number_unsigned() ? std::to_string(schema[key].get<uint64_t>())
                                                                            : std::string();
        };
        const std::string min = bound("minLength").empty() ? "0" : bound("minLength");
        return "root ::= [^<]{" + min + "," + bound("maxLength") + "}\n";
    }
    return text_without_rule("root", std::string(close_tag));
}

}  // namespace engine
