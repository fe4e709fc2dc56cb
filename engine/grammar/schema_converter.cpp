#include "engine/grammar/schema_converter.h"

#include <cmath>

#include <algorithm>
#include <cctype>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/gbnf_text.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/schema_builtins.h"

namespace engine::gbnf {

namespace {

constexpr int kMaxDepth = 200;           // nesting of schemas being visited
constexpr size_t kMaxUnionProduct = 64;  // alternatives produced by distributing allOf over anyOf

}  // namespace

std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
    return out;
}

std::string group(const std::string& e) {
    return e.find(' ') == std::string::npos ? e : "(" + e + ")";
}

// A float that holds an integer value int64_t can represent (converting anything else is undefined).
bool integral_double(double d) {
    return std::isfinite(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == std::trunc(d);
}

uint64_t count_of(const ojson& s, const char* key, const std::string& ptr) {
    const ojson& v = s[key];
    if (!v.is_number_integer() && !(v.is_number_float() && integral_double(v.get<double>()))) {
        throw SchemaError(ptr + "/" + key, std::string("'") + key + "' must be a non-negative integer");
    }
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    const double d = v.get<double>();
    if (d < 0)
        throw SchemaError(ptr + "/" + key, std::string("'") + key + "' must be a non-negative integer");
    return uint64_t(d);  // d < 2^63: representable
}

bool json_type_is(const ojson& v, const std::string& t) {
    if (t == "string") return v.is_string();
    if (t == "integer")
        return v.is_number_integer() ||
               (v.is_number_float() && integral_double(v.get<double>()));
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    return v.is_null();
}

std::string SchemaConverter::run() {
    const std::string top = visit(root_, "root", "");
    if (top != "root") rules_["root"] = top;
    std::string out = "root ::= " + rules_.at("root") + "\n";
    for (const auto& [name, body] : rules_) {
        if (name != "root") out += name + " ::= " + body + "\n";
    }
    try {
        parse_gbnf(out);  // validates the text, left recursion included
    } catch (const GrammarError& e) {
        if (e.message.find("left recursion") != std::string::npos) {
            throw SchemaError("", "the schema refers to itself without consuming input (" + e.message + ")");
        }
        throw SchemaError("", "the generated grammar is invalid (a converter bug): " + std::string(e.what()));
    }
    return out;
}

std::string SchemaConverter::builtin(const std::string& name) {
    const auto& table = schema_builtins();
    const auto& rule = table.at(name);
    if (!rules_.count(name)) {
        rules_[name] = rule.body;
        for (const auto& d : rule.deps) builtin(d);
    }
    return name;
}

std::string SchemaConverter::rule_name(const std::string& base) {
    std::string n = gbnf_rule_name(base);
    if (n.empty()) n = "schema";
    if (schema_builtins().count(n)) n += "-";
    return n;
}

std::string SchemaConverter::add_rule(const std::string& base, const std::string& body) {
    const std::string name = base == "root" ? base : rule_name(base);
    for (int i = 0;; ++i) {
        const std::string n = i == 0 ? name : name + std::to_string(i);
        auto it = rules_.find(n);
        if (it == rules_.end() || it->second == body || (it->second.empty() && reserved_.count(n))) {
            rules_[n] = body;
            reserved_.erase(n);
            return n;
        }
    }
}

std::string SchemaConverter::child(const std::string& name, const std::string& part) {
    if (name != "root") return name + "-" + part;
    return part == "root" ? part + "-" : part;
}

const ojson& SchemaConverter::resolve(const std::string& ref, const std::string& ptr) {
    if (ref.empty() || ref[0] != '#') {
        throw SchemaError(ptr, "only local references ('#...') are supported, not '" + ref + "'");
    }
    const ojson* cur = &root_;
    std::string fragment = ref.substr(1);
    if (fragment.empty()) return *cur;
    if (fragment[0] != '/')
        throw SchemaError(ptr, "unsupported reference '" + ref + "' (anchors are not supported)");
    size_t pos = 1;
    while (pos <= fragment.size()) {
        size_t next = fragment.find('/', pos);
        if (next == std::string::npos) next = fragment.size();
        std::string token;
        for (size_t i = pos; i < next; ++i) {
            const char c = fragment[i];
            if (c == '~' && i + 1 < next && (fragment[i + 1] == '0' || fragment[i + 1] == '1')) {
                token += fragment[++i] == '0' ? '~' : '/';
            } else if (c == '%' && i + 2 < next && std::isxdigit(uint8_t(fragment[i + 1])) &&
                       std::isxdigit(uint8_t(fragment[i + 2]))) {
                token += char(std::stoi(fragment.substr(i + 1, 2), nullptr, 16));
                i += 2;
            } else {
                token += c;
            }
        }
        if (cur->is_object() && cur->contains(token)) {
            cur = &(*cur)[token];
        } else if (cur->is_array() && !token.empty() && token.size() < 10 &&
                   token.find_first_not_of("0123456789") == std::string::npos &&
                   std::stoul(token) < cur->size()) {
            cur = &(*cur)[std::stoul(token)];
        } else {
            throw SchemaError(ptr, "reference '" + ref + "' does not resolve");
        }
        pos = next + 1;
    }
    return *cur;
}

std::string SchemaConverter::ref_rule(const ojson& ref_value, const std::string& ptr) {
    if (!ref_value.is_string()) throw SchemaError(ptr, "'$ref' must be a string");
    const std::string ref = ref_value.get<std::string>();
    auto it = ref_rules_.find(ref);
    if (it != ref_rules_.end()) return it->second;
    const ojson& target = resolve(ref, ptr);
    std::string name = rule_name("ref" + ref.substr(1));
    for (int i = 1; rules_.count(name); ++i) name = rule_name("ref" + ref.substr(1)) + std::to_string(i);
    ref_rules_[ref] = name;
    rules_[name] = "";
    reserved_.insert(name);
    const std::string result = visit(target, name, ref.substr(1));
    if (reserved_.count(name)) {
        if (result == name) throw SchemaError(ptr, "reference '" + ref + "' refers only to itself");
        rules_[name] = result;
        reserved_.erase(name);
    }
    return name;
}

void SchemaConverter::collect(const ojson& x, const std::string& ptr, std::vector<ojson>& parts, int depth) {
    if (depth > 32) throw SchemaError(ptr, "allOf / $ref nesting is too deep (is it cyclic?)");
    if (x.is_boolean()) {
        if (!x.get<bool>()) throw SchemaError(ptr, "allOf contains the schema false, which matches nothing");
        return;
    }
    if (!x.is_object()) throw SchemaError(ptr, "a schema must be an object or a boolean");
    check_keywords(x, ptr);
    ojson rest = x;
    if (x.contains("$ref")) {
        if (!x["$ref"].is_string()) throw SchemaError(ptr + "/$ref", "'$ref' must be a string");
        const std::string ref = x["$ref"].get<std::string>();
        collect(resolve(ref, ptr + "/$ref"), ref.substr(1), parts, depth + 1);
        rest.erase("$ref");
    }
    if (x.contains("allOf")) {
        if (!x["allOf"].is_array() || x["allOf"].empty())
            throw SchemaError(ptr + "/allOf", "'allOf' must be a non-empty array");
        for (size_t i = 0; i < x["allOf"].size(); ++i) {
            collect(x["allOf"][i], ptr + "/allOf/" + std::to_string(i), parts, depth + 1);
        }
        rest.erase("allOf");
    }
    parts.push_back(std::move(rest));
}

ojson SchemaConverter::flatten(const ojson& x, const std::string& ptr, int depth) {
    std::vector<ojson> parts;
    collect(x, ptr, parts, depth);
    ojson base = ojson::object();
    std::vector<ojson> unions;
    for (ojson& p : parts) {
        for (const char* k : {"anyOf", "oneOf"}) {
            if (p.contains(k)) {
                if (!p[k].is_array() || p[k].empty())
                    throw SchemaError(ptr + "/" + k, std::string("'") + k + "' must be a non-empty array");
                unions.push_back(p[k]);
                p.erase(k);
            }
        }
        base = merge_schemas(base, p, ptr);
    }
    if (unions.empty()) return base;
    size_t product = 1;
    for (const auto& u : unions) {
        product *= u.size();
        if (product > kMaxUnionProduct)
            throw SchemaError(ptr, "allOf over anyOf/oneOf expands to too many alternatives");
    }
    ojson alts = ojson::array();
    std::vector<size_t> pick(unions.size(), 0);
    for (size_t n = 0; n < product; ++n) {
        ojson all = ojson::array({base});
        for (size_t u = 0; u < unions.size(); ++u) all.push_back(unions[u][pick[u]]);
        alts.push_back(flatten(ojson{{"allOf", all}}, ptr, depth + 1));
        for (size_t u = 0; u < unions.size() && ++pick[u] == unions[u].size(); ++u) pick[u] = 0;
    }
    return ojson{{"anyOf", alts}};
}

std::string SchemaConverter::visit(const ojson& s, const std::string& name, const std::string& ptr) {
    struct Depth {
        int& d;
        explicit Depth(int& x) : d(x) { ++d; }
        ~Depth() { --d; }
    } depth(depth_);
    if (depth_ > kMaxDepth) {
        throw SchemaError(ptr, "the schema nests deeper than the limit of " + std::to_string(kMaxDepth) + " levels");
    }
    if (s.is_boolean()) {
        if (s.get<bool>()) return builtin("value");
        throw SchemaError(ptr, "the schema false matches nothing");
    }
    if (!s.is_object()) throw SchemaError(ptr, "a schema must be an object or a boolean");
    check_keywords(s, ptr);

    if (s.contains("allOf") || (s.contains("anyOf") && s.contains("oneOf"))) {
        return visit(flatten(s, ptr), name, ptr);
    }
    for (const char* k : {"anyOf", "oneOf"}) {
        if (s.contains(k)) return visit_union(s, k, name, ptr);
    }
    if (s.contains("$ref")) {
        if (has_constraints(s, {"$ref"})) return visit(flatten(s, ptr), name, ptr);
        return ref_rule(s["$ref"], ptr + "/$ref");
    }
    if (s.contains("type") && s["type"].is_array()) {
        if (s["type"].size() == 1) {
            ojson one = s;
            one["type"] = s["type"][0];
            return visit(one, name, ptr);
        }
        std::vector<std::string> alts;
        for (size_t i = 0; i < s["type"].size(); ++i) {
            ojson one = s;
            one["type"] = s["type"][i];
            alts.push_back(visit(one, child(name, s["type"][i].get<std::string>()), ptr));
        }
        return add_rule(name, join(alts, " | "));
    }
    const std::string type = s.contains("type") ? s["type"].get<std::string>() : infer_type(s);
    if (s.contains("const")) {
        if (!type.empty() && !json_type_is(s["const"], type)) {
            throw SchemaError(ptr + "/const", "'const' does not have the schema's type '" + type + "'");
        }
        return add_rule(name, gbnf_literal(s["const"].dump()));
    }
    if (s.contains("enum")) return visit_enum(s, type, name, ptr);
    if (type == "object") return visit_object(s, name, ptr);
    if (type == "array") return visit_array(s, name, ptr);
    if (type == "string") return visit_string(s, name, ptr);
    if (type == "integer" || type == "number") return visit_number(s, type == "integer", name, ptr);
    if (type == "boolean" || type == "null") return builtin(type);
    return builtin("value");
}

std::string SchemaConverter::infer_type(const ojson& s) {
    auto any = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys) {
            if (s.contains(k)) return true;
        }
        return false;
    };
    if (any({"properties", "additionalProperties", "required"})) return "object";
    if (any({"items", "prefixItems", "additionalItems", "minItems", "maxItems"})) return "array";
    if (any({"minLength", "maxLength", "pattern", "format"})) return "string";
    if (any({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) return "number";
    return "";
}

std::string SchemaConverter::visit_union(const ojson& s, const char* key, const std::string& name,
                                         const std::string& ptr) {
    const ojson& alts = s[key];
    if (!alts.is_array() || alts.empty())
        throw SchemaError(ptr + "/" + key, std::string("'") + key + "' must be a non-empty array");
    ojson base = s;
    base.erase(key);
    // Sibling constraints apply to every alternative: anyOf [A, B] + C = anyOf [A and C, B and C].
    const bool distribute = has_constraints(base);
    std::vector<std::string> rules;
    for (size_t i = 0; i < alts.size(); ++i) {
        const std::string sub_ptr = ptr + "/" + key + "/" + std::to_string(i);
        if (distribute) {
            rules.push_back(visit(flatten(ojson{{"allOf", ojson::array({base, alts[i]})}}, sub_ptr),
                                  child(name, std::to_string(i)), sub_ptr));
        } else {
            rules.push_back(visit(alts[i], child(name, std::to_string(i)), sub_ptr));
        }
    }
    return add_rule(name, join(rules, " | "));
}

std::string SchemaConverter::visit_enum(const ojson& s, const std::string& type, const std::string& name,
                                        const std::string& ptr) {
    const ojson& values = s["enum"];
    if (!values.is_array() || values.empty())
        throw SchemaError(ptr + "/enum", "'enum' must be a non-empty array");
    std::vector<std::string> alts;
    for (const auto& v : values) {
        if (type.empty() || json_type_is(v, type)) alts.push_back(gbnf_literal(v.dump()));
    }
    if (alts.empty())
        throw SchemaError(ptr + "/enum", "no 'enum' value has the schema's type '" + type + "'");
    return add_rule(name, "(" + join(alts, " | ") + ")");
}

}  // namespace engine::gbnf
