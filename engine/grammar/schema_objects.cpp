// Objects and arrays: property order, required/optional/additional properties, tuples, counts.
#include <algorithm>
#include <functional>
#include <map>

#include "engine/grammar/gbnf_text.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/schema_converter.h"
#include "engine/grammar/utf8.h"

namespace engine::gbnf {

std::string SchemaConverter::not_strings(const std::vector<std::string>& names) {
    struct Node {
        std::map<uint32_t, Node> kids;
        bool end = false;
    };
    Node root;
    for (const auto& n : names) {
        Node* cur = &root;
        size_t pos = 0;
        uint32_t cp;
        while (pos < n.size() && decode_utf8(n, pos, cp)) cur = &cur->kids[cp];
        cur->end = true;
    }
    builtin("char");
    const std::string escape = R"G("\\" char-escape char*)G";
    std::function<std::string(const Node&)> f = [&](const Node& node) {
        std::vector<std::string> alts;
        std::vector<CharRange> taken = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}};
        for (const auto& [cp, kid] : node.kids) {
            std::string c;
            append_utf8(c, cp);
            std::string lit = gbnf_literal(ojson(c).dump().substr(1, ojson(c).dump().size() - 2));
            alts.push_back(lit + " (" + f(kid) + ")");
            taken.push_back({cp, cp});
        }
        alts.push_back(gbnf_class(CharSet(taken, true)) + " char*");
        alts.push_back(escape);
        std::string body = join(alts, " | ");
        return node.end ? body : "(" + body + ")?";
    };
    // Grouped: the root's body is a bare alternation when the empty name is itself a property.
    return "\"\\\"\" (" + f(root) + ") \"\\\"\"";
}

std::string SchemaConverter::visit_object(const ojson& s, const std::string& name, const std::string& ptr) {
    if (s.contains("properties") && !s["properties"].is_object()) {
        throw SchemaError(ptr + "/properties", "'properties' must be an object");
    }
    if (s.contains("required") && !s["required"].is_array())
        throw SchemaError(ptr + "/required", "'required' must be an array");
    const ojson no_props = ojson::object();
    const ojson& props = s.contains("properties") ? s["properties"] : no_props;
    const ojson ap = s.contains("additionalProperties") ? s["additionalProperties"] : ojson();
    if (!ap.is_null() && !ap.is_boolean() && !ap.is_object()) {
        throw SchemaError(ptr + "/additionalProperties", "'additionalProperties' must be a schema");
    }
    std::vector<std::string> required;
    if (s.contains("required")) {
        for (const auto& r : s["required"]) {
            if (!r.is_string()) throw SchemaError(ptr + "/required", "'required' must list property names");
            if (std::find(required.begin(), required.end(), r.get<std::string>()) == required.end()) {
                required.push_back(r.get<std::string>());
            }
        }
    }
    if (props.empty() && required.empty() && (ap.is_null() || ap == true)) return builtin("object");

    // Required names without a schema of their own take additionalProperties' (or any value).
    std::vector<std::pair<std::string, ojson>> all;
    for (auto it = props.begin(); it != props.end(); ++it) all.emplace_back(it.key(), it.value());
    for (const auto& r : required) {
        if (!props.contains(r)) all.emplace_back(r, ap.is_object() ? ap : ojson(true));
    }
    builtin("space");
    std::vector<std::string> req_kv, opt_kv, names;
    for (const auto& [key, schema] : all) {
        names.push_back(key);
        const bool is_required = std::find(required.begin(), required.end(), key) != required.end();
        const std::string key_ptr = ptr + "/properties/" + pointer_token(key);
        if (schema == false) {
            if (is_required)
                throw SchemaError(key_ptr, "required property '" + key + "' has the schema false");
            continue;
        }
        const std::string value =
            visit(schema, child(name, key), props.contains(key) ? key_ptr : ptr + "/required");
        const std::string kv = add_rule(child(name, key) + "-kv",
                                        gbnf_literal(ojson(key).dump()) + " space \":\" space " + value);
        (is_required ? req_kv : opt_kv).push_back(kv);
    }
    std::string additional;
    if (ap == true || ap.is_object()) {
        const std::string value =
            ap.is_object() ? visit(ap, child(name, "additional-value"), ptr + "/additionalProperties")
                           : builtin("value");
        const std::string key =
            names.empty() ? builtin("string") : add_rule(child(name, "additional-k"), not_strings(names));
        additional = add_rule(child(name, "additional-kv"), key + " \":\" space " + value);
    }

    std::string body = "\"{\" space";
    for (size_t i = 0; i < req_kv.size(); ++i) body += (i ? " \",\" space " : " ") + req_kv[i];
    const std::string more = additional.empty() ? "" : "( \",\" space " + additional + " )*";
    if (!req_kv.empty()) {
        for (const auto& kv : opt_kv) body += " ( \",\" space " + kv + " )?";
        if (!more.empty()) body += " " + more;
    } else if (!opt_kv.empty() || !additional.empty()) {
        // The first property present has no comma: one alternative per possible first one, each
        // followed by the rest (rules rest-i, so the grammar stays linear in the property count).
        std::vector<std::string> rest(opt_kv.size() + 1);
        rest[opt_kv.size()] = more;
        for (size_t i = opt_kv.size(); i-- > 0;) {
            std::string r = "( \",\" space " + opt_kv[i] + " )?";
            if (!rest[i + 1].empty()) r += " " + rest[i + 1];
            rest[i] = add_rule(child(name, "rest-" + std::to_string(i)), r);
        }
        std::vector<std::string> firsts;
        for (size_t i = 0; i < opt_kv.size(); ++i) {
            firsts.push_back(opt_kv[i] +
                             (i + 1 < rest.size() && !rest[i + 1].empty() ? " " + rest[i + 1] : ""));
        }
        if (!additional.empty()) firsts.push_back(additional + " " + more);
        body += " ( " + join(firsts, " | ") + " )?";
    }
    // Whitespace before "}" only where a property may stand (llama.cpp's layout).
    const bool empty_only = req_kv.empty() && opt_kv.empty() && additional.empty();
    return add_rule(name, body + (empty_only ? " \"}\"" : " space \"}\""));
}

std::string SchemaConverter::visit_array(const ojson& s, const std::string& name, const std::string& ptr) {
    std::vector<std::string> prefix;
    std::optional<ojson> rest = ojson(true);  // nullopt: no items beyond the prefix
    auto prefix_rules = [&](const ojson& arr, const std::string& key) {
        if (!arr.is_array()) throw SchemaError(ptr + "/" + key, "'" + key + "' must be an array of schemas");
        for (size_t i = 0; i < arr.size(); ++i) {
            if (arr[i] == false) {
                rest.reset();  // nothing can sit at position i, so the array ends before it
                return;
            }
            prefix.push_back(visit(arr[i], child(name, "tuple-" + std::to_string(i)),
                                   ptr + "/" + key + "/" + std::to_string(i)));
        }
    };
    // llama.cpp reads a single schema given as "prefixItems" (its own tests write it so) as "items".
    const bool prefix_as_items = s.contains("prefixItems") && s["prefixItems"].is_object() && !s.contains("items");
    if (prefix_as_items) {
        rest = s["prefixItems"];
    } else if (s.contains("prefixItems")) {
        // As in llama.cpp a tuple is closed unless "items" says what may follow.
        rest = s.contains("items") ? std::optional<ojson>(s["items"]) : std::nullopt;
        prefix_rules(s["prefixItems"], "prefixItems");
    } else if (s.contains("items") && s["items"].is_array()) {  // draft-07 tuple
        rest = s.contains("additionalItems") ? std::optional<ojson>(s["additionalItems"]) : std::nullopt;
        prefix_rules(s["items"], "items");
    } else if (s.contains("items")) {
        rest = s["items"];
    }
    if (rest && *rest == false) rest.reset();
    const uint64_t min_items = s.contains("minItems") ? count_of(s, "minItems", ptr) : 0;
    uint64_t hi = s.contains("maxItems") ? count_of(s, "maxItems", ptr) : kNoLimit;
    const uint64_t n = prefix.size();
    if (!rest) hi = std::min(hi, n);
    const uint64_t lo = std::max(min_items, std::min(n, hi));  // all tuple items, if allowed
    if (lo > hi) throw SchemaError(ptr + "/minItems", "'minItems' cannot be met by this array schema");

    std::string item;
    if (rest && hi > n) {
        const char* key = prefix_as_items ? "/prefixItems"
                          : s.contains("prefixItems") || !s.contains("items") || !s["items"].is_array()
                              ? "/items"
                              : "/additionalItems";
        item = visit(*rest, child(name, "item"), ptr + key);
    }
    builtin("space");
    std::function<std::string(uint64_t)> seq = [&](uint64_t i) -> std::string {
        if (i >= hi) return "";
        const std::string sep = i > 0 ? "\",\" space " : "";
        if (i < n) {
            const std::string after = seq(i + 1);
            const std::string body = sep + prefix[i] + (after.empty() ? "" : " " + after);
            return i < lo ? body : "( " + body + " )?";
        }
        if (item.empty()) return "";
        const uint64_t need = lo > i ? lo - i : 0;
        const uint64_t room = hi == kNoLimit ? kNoLimit : hi - i;
        if (i > 0) return repeat("\",\" space " + item, need, room, ptr);
        // The first item has no comma: item ("," item){need-1, room-1}, optional when need == 0.
        std::string body = item;
        const std::string tail = repeat("\",\" space " + item, need > 0 ? need - 1 : 0,
                                        room == kNoLimit ? kNoLimit : room - 1, ptr);
        if (!tail.empty()) body += " " + tail;
        return need > 0 ? body : "( " + body + " )?";
    };
    const std::string items = seq(0);
    return add_rule(name, "\"[\" space " + (items.empty() ? "" : items + " ") + "space \"]\"");
}

}  // namespace engine::gbnf
