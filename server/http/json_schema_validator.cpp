#include "server/http/json_schema_validator.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace server::http {

using nlohmann::json;

namespace {

const std::set<std::string, std::less<>> kKeywords = {"type",
                                                      "enum",
                                                      "const",
                                                      "minimum",
                                                      "maximum",
                                                      "exclusiveMinimum",
                                                      "exclusiveMaximum",
                                                      "minLength",
                                                      "maxLength",
                                                      "items",
                                                      "prefixItems",
                                                      "minItems",
                                                      "maxItems",
                                                      "properties",
                                                      "required",
                                                      "additionalProperties",
                                                      "allOf",
                                                      "anyOf",
                                                      "oneOf",
                                                      "not",
                                                      "$ref",
                                                      "$defs"};
const std::set<std::string, std::less<>> kAnnotations = {"$schema",     "$id",       "$comment", "title",
                                                         "description", "default",   "examples", "deprecated",
                                                         "readOnly",    "writeOnly", "format"};
const std::set<std::string, std::less<>> kTypes = {"null",   "boolean", "object", "array",
                                                   "number", "integer", "string"};

constexpr int kMaxDepth = 256;

// A failed check. `expected` failures (type, const, enum) list what would have been accepted, so that
// the failures of several anyOf branches on the same value can be merged into one message.
struct Failure {
    std::string pointer;
    std::string message;
    std::vector<std::string> expected;  // non-empty for type/const/enum failures

    std::string text() const {
        if (expected.empty()) return message;
        std::string out = "must be ";
        for (std::size_t i = 0; i < expected.size(); ++i) {
            if (i > 0) out += i + 1 == expected.size() ? " or " : ", ";
            out += expected[i];
        }
        return out;
    }
};

std::size_t pointer_depth(const std::string& pointer) {
    return std::count(pointer.begin(), pointer.end(), '/');
}

std::string escape_token(std::string_view token) {
    std::string out;
    for (char c : token) {
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

bool has_type(const json& v, std::string_view type) {
    if (type == "null") return v.is_null();
    if (type == "boolean") return v.is_boolean();
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "number") return v.is_number();
    if (type == "integer") {
        if (v.is_number_integer()) return true;
        if (!v.is_number_float()) return false;
        double d = v.get<double>();
        return std::isfinite(d) && std::trunc(d) == d;
    }
    return false;
}

// "1 item", "2 items".
std::string plural(const json& n, const char* noun) {
    return n.dump() + " " + noun + (n.get<std::size_t>() == 1 ? "" : "s");
}

std::size_t utf8_length(const std::string& s) {
    return static_cast<std::size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// When no alternative matches, report the most specific failure. The deepest failures win (a branch
// whose shape matched failed further in). Among those, the pointer the fewest branches failed at wins:
// the branch that got past a discriminator such as "type": "text" fails elsewhere than all the branches
// that did not. Failures of one value are merged into one "must be a, b or c".
Failure best_failure(std::vector<Failure> failures) {
    std::size_t deepest = 0;
    for (const auto& f : failures) deepest = std::max(deepest, pointer_depth(f.pointer));
    std::vector<std::vector<Failure*>> groups;  // deepest failures by pointer, in branch order
    for (auto& f : failures) {
        if (pointer_depth(f.pointer) != deepest) continue;
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& grp) { return grp.front()->pointer == f.pointer; });
        if (g == groups.end()) {
            groups.push_back({&f});
        } else {
            g->push_back(&f);
        }
    }
    const auto& group = *std::min_element(groups.begin(), groups.end(),
                                          [](const auto& a, const auto& b) { return a.size() < b.size(); });
    for (Failure* f : group) {
        if (f->expected.empty()) return std::move(*f);
    }
    Failure merged{group.front()->pointer, {}, {}};
    for (const Failure* f : group) {
        for (const auto& e : f->expected) {
            if (std::find(merged.expected.begin(), merged.expected.end(), e) == merged.expected.end()) {
                merged.expected.push_back(e);
            }
        }
    }
    return merged;
}

}  // namespace

std::string ValidationError::to_string() const {
    return (pointer.empty() ? "/" : pointer) + ": " + message;
}

struct JsonSchemaValidator::Impl {
    struct Target {
        const std::string* document;
        const json* schema;
    };

    std::map<std::string, json> documents;
    std::map<std::pair<std::string, std::string>, Target> refs;  // (document, $ref text) -> target

    Target resolve(const std::string& document, const std::string& ref, const std::string& where) {
        std::size_t hash = ref.find('#');
        std::string uri = ref.substr(0, hash);
        std::string fragment = hash == std::string::npos ? std::string() : ref.substr(hash + 1);
        auto doc = documents.find(uri.empty() ? document : uri);
        if (doc == documents.end()) throw SchemaError(where + ": $ref to unknown document '" + uri + "'");
        const json* target = &doc->second;
        if (!fragment.empty()) {
            if (fragment.front() != '/')
                throw SchemaError(where + ": only JSON-pointer $refs are supported: " + ref);
            try {
                target = &doc->second.at(json::json_pointer(fragment));
            } catch (const json::exception&) {
                throw SchemaError(where + ": unresolvable $ref '" + ref + "'");
            }
        }
        if (!target->is_object() && !target->is_boolean()) {
            throw SchemaError(where + ": $ref '" + ref + "' does not point to a schema");
        }
        return Target{&doc->first, target};
    }

    void check_schema(const std::string& document, const json& schema, const std::string& where) {
        if (schema.is_boolean()) return;
        if (!schema.is_object()) throw SchemaError(where + ": a schema must be an object or a boolean");
        auto fail = [&](const std::string& keyword, const std::string& what) {
            throw SchemaError(where + "/" + keyword + ": " + what);
        };
        auto schema_array = [&](const std::string& keyword, const json& value) {
            if (!value.is_array() || value.empty()) fail(keyword, "must be a non-empty array of schemas");
            for (std::size_t i = 0; i < value.size(); ++i) {
                check_schema(document, value[i], where + "/" + keyword + "/" + std::to_string(i));
            }
        };
        auto schema_map = [&](const std::string& keyword, const json& value) {
            if (!value.is_object()) fail(keyword, "must be an object of schemas");
            for (const auto& [name, sub] : value.items()) {
                check_schema(document, sub, where + "/" + keyword + "/" + escape_token(name));
            }
        };
        for (const auto& [keyword, value] : schema.items()) {
            if (kAnnotations.count(keyword)) continue;
            if (!kKeywords.count(keyword))
                throw SchemaError(where + ": unsupported keyword '" + keyword + "'");
            if (keyword == "type") {
                auto valid = [](const json& t) {
                    return t.is_string() && kTypes.count(t.get<std::string>());
                };
                bool ok = valid(value) || (value.is_array() && !value.empty() &&
                                           std::all_of(value.begin(), value.end(), valid));
                if (!ok) fail(keyword, "must be a type name or a non-empty array of type names");
            } else if (keyword == "enum") {
                if (!value.is_array() || value.empty()) fail(keyword, "must be a non-empty array");
            } else if (keyword == "minimum" || keyword == "maximum" || keyword == "exclusiveMinimum" ||
                       keyword == "exclusiveMaximum") {
                if (!value.is_number()) fail(keyword, "must be a number");
            } else if (keyword == "minLength" || keyword == "maxLength" || keyword == "minItems" ||
                       keyword == "maxItems") {
                if (!value.is_number_integer() || value.get<long long>() < 0) {
                    fail(keyword, "must be a non-negative integer");
                }
            } else if (keyword == "items" || keyword == "additionalProperties" || keyword == "not") {
                check_schema(document, value, where + "/" + keyword);
            } else if (keyword == "prefixItems" || keyword == "allOf" || keyword == "anyOf" ||
                       keyword == "oneOf") {
                schema_array(keyword, value);
            } else if (keyword == "properties" || keyword == "$defs") {
                schema_map(keyword, value);
            } else if (keyword == "required") {
                if (!value.is_array() ||
                    !std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); })) {
                    fail(keyword, "must be an array of strings");
                }
            } else if (keyword == "$ref") {
                if (!value.is_string()) fail(keyword, "must be a string");
                const std::string ref = value.get<std::string>();
                refs.emplace(std::make_pair(document, ref), resolve(document, ref, where));
            }
        }
    }

    std::optional<Failure> check(const std::string& document, const json& schema, const json& v,
                                 std::string& pointer, int depth) const {
        if (depth > kMaxDepth) return Failure{pointer, "is nested too deeply to validate", {}};
        if (schema.is_boolean()) {
            if (schema.get<bool>()) return std::nullopt;
            return Failure{pointer, "is not allowed", {}};
        }

        if (auto it = schema.find("$ref"); it != schema.end()) {
            const Target& t = refs.at({document, it->get<std::string>()});
            if (auto f = check(*t.document, *t.schema, v, pointer, depth + 1)) return f;
        }

        if (auto it = schema.find("type"); it != schema.end()) {
            std::vector<std::string> types;
            if (it->is_string()) {
                types.push_back(it->get<std::string>());
            } else {
                for (const auto& t : *it) types.push_back(t.get<std::string>());
            }
            bool ok =
                std::any_of(types.begin(), types.end(), [&](const std::string& t) { return has_type(v, t); });
            if (!ok) return Failure{pointer, {}, types};
        }
        if (auto it = schema.find("const"); it != schema.end() && v != *it) {
            return Failure{pointer, {}, {it->dump()}};
        }
        if (auto it = schema.find("enum"); it != schema.end()) {
            if (std::find(it->begin(), it->end(), v) == it->end()) {
                Failure f{pointer, {}, {}};
                for (const auto& allowed : *it) f.expected.push_back(allowed.dump());
                return f;
            }
        }

        if (v.is_number()) {
            const double x = v.get<double>();
            struct Bound {
                const char* keyword;
                const char* op;
                bool (*ok)(double, double);
            };
            static constexpr Bound kBounds[] = {
                {"minimum", ">=", [](double a, double b) { return a >= b; }},
                {"exclusiveMinimum", ">", [](double a, double b) { return a > b; }},
                {"maximum", "<=", [](double a, double b) { return a <= b; }},
                {"exclusiveMaximum", "<", [](double a, double b) { return a < b; }},
            };
            for (const Bound& b : kBounds) {
                auto it = schema.find(b.keyword);
                if (it != schema.end() && !b.ok(x, it->get<double>())) {
                    return Failure{pointer, std::string("must be ") + b.op + " " + it->dump(), {}};
                }
            }
        }

        if (v.is_string()) {
            std::size_t n = utf8_length(v.get_ref<const std::string&>());
            if (auto it = schema.find("minLength"); it != schema.end() && n < it->get<std::size_t>()) {
                return Failure{pointer, "must be at least " + plural(*it, "character") + " long", {}};
            }
            if (auto it = schema.find("maxLength"); it != schema.end() && n > it->get<std::size_t>()) {
                return Failure{pointer, "must be at most " + plural(*it, "character") + " long", {}};
            }
        }

        if (v.is_array()) {
            if (auto it = schema.find("minItems"); it != schema.end() && v.size() < it->get<std::size_t>()) {
                return Failure{pointer, "must have at least " + plural(*it, "item"), {}};
            }
            if (auto it = schema.find("maxItems"); it != schema.end() && v.size() > it->get<std::size_t>()) {
                return Failure{pointer, "must have at most " + plural(*it, "item"), {}};
            }
            std::size_t first_rest = 0;
            if (auto it = schema.find("prefixItems"); it != schema.end()) {
                first_rest = it->size();
                for (std::size_t i = 0; i < std::min(v.size(), it->size()); ++i) {
                    if (auto f = check_child(document, (*it)[i], v[i], pointer, std::to_string(i), depth))
                        return f;
                }
            }
            if (auto it = schema.find("items"); it != schema.end()) {
                for (std::size_t i = first_rest; i < v.size(); ++i) {
                    if (auto f = check_child(document, *it, v[i], pointer, std::to_string(i), depth))
                        return f;
                }
            }
        }

        if (v.is_object()) {
            // Property values first, then required: a branch of an anyOf whose discriminator ("type":
            // "text") fails points at that property, which lets best_failure pick the right branch.
            auto props = schema.find("properties");
            auto extra = schema.find("additionalProperties");
            for (const auto& [key, value] : v.items()) {
                if (props != schema.end()) {
                    if (auto p = props->find(key); p != props->end()) {
                        if (auto f = check_child(document, *p, value, pointer, escape_token(key), depth))
                            return f;
                        continue;
                    }
                }
                if (extra != schema.end()) {
                    if (extra->is_boolean() && !extra->get<bool>()) {
                        return Failure{pointer + "/" + escape_token(key), "is not an allowed property", {}};
                    }
                    if (auto f = check_child(document, *extra, value, pointer, escape_token(key), depth))
                        return f;
                }
            }
            if (auto it = schema.find("required"); it != schema.end()) {
                for (const auto& name : *it) {
                    // Reported at the pointer where the value is missing: "/messages: is required".
                    if (!v.contains(name.get<std::string>())) {
                        return Failure{
                            pointer + "/" + escape_token(name.get<std::string>()), "is required", {}};
                    }
                }
            }
        }

        if (auto it = schema.find("allOf"); it != schema.end()) {
            for (const auto& sub : *it) {
                if (auto f = check(document, sub, v, pointer, depth + 1)) return f;
            }
        }
        if (auto it = schema.find("anyOf"); it != schema.end()) {
            std::vector<Failure> failures;
            for (const auto& sub : *it) {
                auto f = check(document, sub, v, pointer, depth + 1);
                if (!f) {
                    failures.clear();
                    break;
                }
                failures.push_back(std::move(*f));
            }
            if (!failures.empty()) return best_failure(std::move(failures));
        }
        if (auto it = schema.find("oneOf"); it != schema.end()) {
            std::vector<Failure> failures;
            std::size_t matches = 0;
            for (const auto& sub : *it) {
                if (auto f = check(document, sub, v, pointer, depth + 1)) {
                    failures.push_back(std::move(*f));
                } else {
                    ++matches;
                }
            }
            if (matches == 0) return best_failure(std::move(failures));
            if (matches > 1) {
                return Failure{
                    pointer,
                    "must match exactly one alternative of oneOf, but matches " + std::to_string(matches),
                    {}};
            }
        }
        if (auto it = schema.find("not"); it != schema.end()) {
            if (!check(document, *it, v, pointer, depth + 1)) {
                return Failure{pointer, "must not match the schema in 'not'", {}};
            }
        }
        return std::nullopt;
    }

    std::optional<Failure> check_child(const std::string& document, const json& schema, const json& v,
                                       std::string& pointer, const std::string& token, int depth) const {
        std::size_t size = pointer.size();
        pointer += '/';
        pointer += token;
        auto f = check(document, schema, v, pointer, depth + 1);
        pointer.resize(size);
        return f;
    }
};

JsonSchemaValidator::JsonSchemaValidator(std::map<std::string, json> documents)
    : impl_(std::make_unique<Impl>()) {
    impl_->documents = std::move(documents);
    for (const auto& [name, schema] : impl_->documents) impl_->check_schema(name, schema, name + "#");
}

JsonSchemaValidator::JsonSchemaValidator(json schema)
    : JsonSchemaValidator(std::map<std::string, json>{{"", std::move(schema)}}) {}

JsonSchemaValidator::~JsonSchemaValidator() = default;
JsonSchemaValidator::JsonSchemaValidator(JsonSchemaValidator&&) noexcept = default;
JsonSchemaValidator& JsonSchemaValidator::operator=(JsonSchemaValidator&&) noexcept = default;

std::optional<ValidationError> JsonSchemaValidator::validate(std::string_view name,
                                                             const json& instance) const {
    auto doc = impl_->documents.find(std::string(name));
    if (doc == impl_->documents.end()) throw std::out_of_range("no schema named '" + std::string(name) + "'");
    std::string pointer;
    auto f = impl_->check(doc->first, doc->second, instance, pointer, 0);
    if (!f) return std::nullopt;
    return ValidationError{f->pointer, f->text()};
}

std::optional<ValidationError> JsonSchemaValidator::validate(const json& instance) const {
    if (impl_->documents.empty()) throw std::out_of_range("no schema loaded");
    return validate(impl_->documents.begin()->first, instance);
}

bool JsonSchemaValidator::has_document(std::string_view name) const {
    return impl_->documents.count(std::string(name)) > 0;
}

std::vector<std::string> JsonSchemaValidator::document_names() const {
    std::vector<std::string> out;
    for (const auto& [name, schema] : impl_->documents) out.push_back(name);
    return out;
}

}  // namespace server::http
