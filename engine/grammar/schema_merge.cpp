#include "engine/grammar/schema_merge.h"

#include <algorithm>
#include <set>

#include "engine/grammar/json_schema.h"

namespace engine::gbnf {

namespace {

const std::set<std::string> kUnsupported = {"not",
                                            "if",
                                            "then",
                                            "else",
                                            "dependentSchemas",
                                            "dependentRequired",
                                            "dependencies",
                                            "multipleOf",
                                            "patternProperties",
                                            "propertyNames",
                                            "minProperties",
                                            "maxProperties",
                                            "contains",
                                            "minContains",
                                            "maxContains",
                                            "unevaluatedProperties",
                                            "unevaluatedItems",
                                            "$dynamicRef",
                                            "$recursiveRef",
                                            "contentSchema"};

const std::set<std::string> kConstraints = {"type",
                                            "enum",
                                            "const",
                                            "properties",
                                            "required",
                                            "additionalProperties",
                                            "items",
                                            "prefixItems",
                                            "additionalItems",
                                            "minItems",
                                            "maxItems",
                                            "minimum",
                                            "maximum",
                                            "exclusiveMinimum",
                                            "exclusiveMaximum",
                                            "minLength",
                                            "maxLength",
                                            "pattern",
                                            "format",
                                            "anyOf",
                                            "oneOf",
                                            "allOf",
                                            "$ref"};

Decimal decimal_of(const ojson& v, const std::string& ptr) {
    if (!v.is_number()) throw SchemaError(ptr, "expected a number");
    return Decimal::parse(v.dump());
}

ojson number_of(const Decimal& d) {
    std::string s = (d.neg ? "-" : "") + d.int_digits;
    if (!d.frac_digits.empty()) s += "." + d.frac_digits;
    return ojson::parse(s);
}

std::vector<std::string> types_of(const ojson& s) {
    if (!s.contains("type")) return {};
    if (s["type"].is_string()) return {s["type"].get<std::string>()};
    std::vector<std::string> out;
    for (const auto& t : s["type"]) out.push_back(t.get<std::string>());
    return out;
}

bool type_allows(const std::vector<std::string>& types, const std::string& t) {
    if (types.empty()) return true;
    if (std::find(types.begin(), types.end(), t) != types.end()) return true;
    return t == "integer" && std::find(types.begin(), types.end(), "number") != types.end();
}

ojson both(const ojson& x, const ojson& y) {
    if (x == y) return x;
    return ojson{{"allOf", ojson::array({x, y})}};
}

// The tighter of two bounds; `lower` picks the larger value (exclusive wins on ties).
std::optional<Bound> tighter(const std::optional<Bound>& a, const std::optional<Bound>& b, bool lower) {
    if (!a) return b;
    if (!b) return a;
    const int c = compare(a->value, b->value);
    if (c == 0) return Bound{a->value, a->exclusive || b->exclusive};
    return (c > 0) == lower ? a : b;
}

}  // namespace

std::string pointer_token(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

bool is_unsupported_keyword(const std::string& key) {
    return kUnsupported.count(key) > 0;
}

void check_keywords(const ojson& s, const std::string& ptr) {
    for (auto it = s.begin(); it != s.end(); ++it) {
        const std::string& k = it.key();
        if (kUnsupported.count(k) || (k == "uniqueItems" && it.value() == true)) {
            throw SchemaError(ptr + "/" + pointer_token(k), "unsupported keyword '" + k + "'");
        }
    }
    if (s.contains("type")) {
        const auto& t = s["type"];
        static const std::set<std::string> known = {"string", "number", "integer", "boolean",
                                                    "object", "array",  "null"};
        auto check = [&](const ojson& v) {
            if (!v.is_string() || !known.count(v.get<std::string>())) {
                throw SchemaError(ptr + "/type", "unknown type " + v.dump());
            }
        };
        if (t.is_array()) {
            if (t.empty()) throw SchemaError(ptr + "/type", "empty type list");
            for (const auto& v : t) check(v);
        } else {
            check(t);
        }
    }
}

bool has_constraints(const ojson& s, std::initializer_list<const char*> except) {
    if (!s.is_object()) return false;
    for (auto it = s.begin(); it != s.end(); ++it) {
        if (!kConstraints.count(it.key())) continue;
        if (std::none_of(except.begin(), except.end(), [&](const char* e) { return it.key() == e; }))
            return true;
    }
    return false;
}

std::optional<Bound> lower_bound(const ojson& s, const std::string& ptr) {
    std::optional<Bound> b;
    if (s.contains("minimum")) b = Bound{decimal_of(s["minimum"], ptr + "/minimum"), false};
    if (s.contains("exclusiveMinimum")) {
        const auto& e = s["exclusiveMinimum"];
        if (e.is_boolean()) {  // draft-04: modifies minimum
            if (b) b->exclusive = e.get<bool>();
        } else {
            b = tighter(b, Bound{decimal_of(e, ptr + "/exclusiveMinimum"), true}, true);
        }
    }
    return b;
}

std::optional<Bound> upper_bound(const ojson& s, const std::string& ptr) {
    std::optional<Bound> b;
    if (s.contains("maximum")) b = Bound{decimal_of(s["maximum"], ptr + "/maximum"), false};
    if (s.contains("exclusiveMaximum")) {
        const auto& e = s["exclusiveMaximum"];
        if (e.is_boolean()) {
            if (b) b->exclusive = e.get<bool>();
        } else {
            b = tighter(b, Bound{decimal_of(e, ptr + "/exclusiveMaximum"), true}, false);
        }
    }
    return b;
}

ojson merge_schemas(const ojson& a, const ojson& b, const std::string& ptr) {
    ojson r = ojson::object();
    // type: intersection ("integer" is a kind of "number")
    const auto ta = types_of(a), tb = types_of(b);
    if (!ta.empty() || !tb.empty()) {
        std::vector<std::string> t;
        std::vector<std::string> all = ta;
        all.insert(all.end(), tb.begin(), tb.end());
        for (const auto& x : all) {
            if (type_allows(ta, x) && type_allows(tb, x) && std::find(t.begin(), t.end(), x) == t.end())
                t.push_back(x);
        }
        if (t.empty()) throw SchemaError(ptr, "allOf: the types do not overlap");
        r["type"] = t.size() == 1 ? ojson(t[0]) : ojson(t);
    }
    // const / enum: intersection
    if (a.contains("const") && b.contains("const") && a["const"] != b["const"]) {
        throw SchemaError(ptr, "allOf: two different const values");
    }
    if (a.contains("const") || b.contains("const"))
        r["const"] = a.contains("const") ? a["const"] : b["const"];
    if (a.contains("enum") || b.contains("enum")) {
        ojson e = ojson::array();
        const ojson& first = a.contains("enum") ? a["enum"] : b["enum"];
        for (const auto& v : first) {
            const bool in_a =
                !a.contains("enum") || std::find(a["enum"].begin(), a["enum"].end(), v) != a["enum"].end();
            const bool in_b =
                !b.contains("enum") || std::find(b["enum"].begin(), b["enum"].end(), v) != b["enum"].end();
            if (in_a && in_b) e.push_back(v);
        }
        if (e.empty()) throw SchemaError(ptr, "allOf: the enums have no value in common");
        r["enum"] = e;
    }
    // strings
    for (const char* k : {"pattern", "format"}) {
        if (a.contains(k) && b.contains(k) && a[k] != b[k]) {
            throw SchemaError(
                ptr, std::string("allOf: combining two different '") + k + "' values is not supported");
        }
        if (a.contains(k) || b.contains(k)) r[k] = a.contains(k) ? a[k] : b[k];
    }
    auto merge_count = [&](const char* k, bool take_max) {
        if (!a.contains(k) && !b.contains(k)) return;
        if (!a.contains(k) || !b.contains(k)) {
            r[k] = a.contains(k) ? a[k] : b[k];
            return;
        }
        const auto x = a[k].get<double>(), y = b[k].get<double>();
        r[k] = (x > y) == take_max ? a[k] : b[k];
    };
    merge_count("minLength", true);
    merge_count("maxLength", false);
    merge_count("minItems", true);
    merge_count("maxItems", false);
    // numbers
    const auto lo = tighter(lower_bound(a, ptr), lower_bound(b, ptr), true);
    const auto hi = tighter(upper_bound(a, ptr), upper_bound(b, ptr), false);
    if (lo) r[lo->exclusive ? "exclusiveMinimum" : "minimum"] = number_of(lo->value);
    if (hi) r[hi->exclusive ? "exclusiveMaximum" : "maximum"] = number_of(hi->value);
    // arrays
    if (a.contains("prefixItems") && b.contains("prefixItems") && a["prefixItems"] != b["prefixItems"]) {
        throw SchemaError(ptr, "allOf: combining two different prefixItems is not supported");
    }
    if (a.contains("prefixItems") || b.contains("prefixItems")) {
        r["prefixItems"] = a.contains("prefixItems") ? a["prefixItems"] : b["prefixItems"];
    }
    if (a.contains("items") && b.contains("items")) {
        if (a["items"].is_array() || b["items"].is_array()) {
            if (a["items"] != b["items"])
                throw SchemaError(ptr, "allOf: combining tuple 'items' is not supported");
            r["items"] = a["items"];
        } else {
            r["items"] = both(a["items"], b["items"]);
        }
    } else if (a.contains("items") || b.contains("items")) {
        r["items"] = a.contains("items") ? a["items"] : b["items"];
    }
    if (a.contains("additionalItems") || b.contains("additionalItems")) {
        if (a.contains("additionalItems") && b.contains("additionalItems")) {
            r["additionalItems"] = both(a["additionalItems"], b["additionalItems"]);
        } else {
            r["additionalItems"] =
                a.contains("additionalItems") ? a["additionalItems"] : b["additionalItems"];
        }
    }
    // objects: a property must satisfy both sides; a side's additionalProperties governs the
    // properties the other side adds.
    if (a.contains("properties") || b.contains("properties") || a.contains("additionalProperties") ||
        b.contains("additionalProperties") || a.contains("required") || b.contains("required")) {
        const ojson empty = ojson::object();
        const ojson& pa = a.contains("properties") ? a["properties"] : empty;
        const ojson& pb = b.contains("properties") ? b["properties"] : empty;
        ojson props = ojson::object();
        std::vector<std::string> dropped;
        auto add_side = [&](const ojson& mine, const ojson& other, const ojson& other_schema) {
            for (auto it = mine.begin(); it != mine.end(); ++it) {
                if (props.contains(it.key())) continue;
                ojson v = it.value();
                if (other.contains(it.key())) {
                    v = both(v, other[it.key()]);
                } else if (other_schema.contains("additionalProperties")) {
                    const ojson& ap = other_schema["additionalProperties"];
                    if (ap == false) {
                        dropped.push_back(it.key());
                        continue;
                    }
                    if (ap.is_object()) v = both(v, ap);
                }
                props[it.key()] = v;
            }
        };
        add_side(pa, pb, b);
        add_side(pb, pa, a);
        if (!props.empty()) r["properties"] = props;
        ojson req = ojson::array();
        for (const ojson* s : {&a, &b}) {
            if (!s->contains("required")) continue;
            for (const auto& k : (*s)["required"]) {
                if (std::find(dropped.begin(), dropped.end(), k.get<std::string>()) != dropped.end()) {
                    throw SchemaError(ptr, "allOf: property '" + k.get<std::string>() +
                                               "' is required by one schema and forbidden by the other");
                }
                if (std::find(req.begin(), req.end(), k) == req.end()) req.push_back(k);
            }
        }
        if (!req.empty()) r["required"] = req;
        if (a.contains("additionalProperties") && b.contains("additionalProperties")) {
            const ojson &x = a["additionalProperties"], &y = b["additionalProperties"];
            if (x == false || y == false) {
                r["additionalProperties"] = false;
            } else if (x == true) {
                r["additionalProperties"] = y;
            } else if (y == true) {
                r["additionalProperties"] = x;
            } else {
                r["additionalProperties"] = both(x, y);
            }
        } else if (a.contains("additionalProperties") || b.contains("additionalProperties")) {
            // Absent means "anything" in JSON Schema, so the present one decides.
            r["additionalProperties"] =
                a.contains("additionalProperties") ? a["additionalProperties"] : b["additionalProperties"];
        }
    }
    return r;
}

}  // namespace engine::gbnf
