#include "engine/chat/jinja_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_strings.h"

namespace engine::jinja {

namespace {

void append_u_escape(std::string& out, unsigned cp) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    out += buf;
}

// The short escapes of JSON; nullptr for a character written some other way.
const char* short_escape(char32_t c) {
    switch (c) {
        case '"':
            return "\\\"";
        case '\\':
            return "\\\\";
        case '\n':
            return "\\n";
        case '\r':
            return "\\r";
        case '\t':
            return "\\t";
        case '\b':
            return "\\b";
        case '\f':
            return "\\f";
        default:
            return nullptr;
    }
}

void dump_string(std::string& out, const std::string& s, bool ensure_ascii) {
    out += '"';
    if (!ensure_ascii) {
        for (unsigned char c : s) {
            if (const char* e = short_escape(c))
                out += e;
            else if (c < 0x20)
                append_u_escape(out, c);
            else
                out += static_cast<char>(c);
        }
    } else {
        for (char32_t cp : utf8_decode(s)) {
            if (const char* e = short_escape(cp)) {
                out += e;
            } else if (cp >= 0x20 && cp < 0x7f) {
                out += static_cast<char>(cp);
            } else if (cp < 0x10000) {
                append_u_escape(out, cp);
            } else {  // UTF-16 surrogate pair, as Python writes it
                const unsigned v = cp - 0x10000;
                append_u_escape(out, 0xD800 + (v >> 10));
                append_u_escape(out, 0xDC00 + (v & 0x3FF));
            }
        }
    }
    out += '"';
}

// Python's json module turns non-string keys into strings: True -> "true", None -> "null".
std::string key_text(const Value& k) {
    if (k.is_string()) return k.as_string();
    if (k.is_bool()) return k.as_bool() ? "true" : "false";
    if (k.is_none()) return "null";
    if (k.is_int() || k.is_float()) return k.str();
    fail("keys must be str, int, float, bool or None, not " + k.type_name());
}

class Dumper {
  public:
    Dumper(const JsonDumpOptions& o) : o_(o) {}

    void dump(std::string& out, const Value& v, int level) {
        switch (v.kind()) {
            case Value::Kind::None:
                out += "null";
                return;
            case Value::Kind::Bool:
                out += v.as_bool() ? "true" : "false";
                return;
            case Value::Kind::Int:
                out += std::to_string(v.as_int());
                return;
            case Value::Kind::Float: {
                const double d = v.as_double();
                if (std::isnan(d)) {
                    out += "NaN";
                } else if (std::isinf(d)) {
                    out += d > 0 ? "Infinity" : "-Infinity";
                } else {
                    out += format_python_float(d);
                }
                return;
            }
            case Value::Kind::String:
                dump_string(out, v.as_string(), o_.ensure_ascii);
                return;
            case Value::Kind::Array: {
                const auto& items = v.as_array().items;
                if (items.empty()) {
                    out += "[]";
                    return;
                }
                out += '[';
                for (size_t i = 0; i < items.size(); ++i) {
                    if (i) out += o_.item_separator;
                    newline(out, level + 1);
                    dump(out, items[i], level + 1);
                }
                newline(out, level);
                out += ']';
                return;
            }
            case Value::Kind::Object: {
                if (v.is_namespace()) break;
                std::vector<std::pair<std::string, const Value*>> entries;
                for (const auto& [k, e] : v.as_object().items) entries.emplace_back(key_text(k), &e);
                if (o_.sort_keys) {
                    std::stable_sort(entries.begin(), entries.end(),
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
                }
                if (entries.empty()) {
                    out += "{}";
                    return;
                }
                out += '{';
                for (size_t i = 0; i < entries.size(); ++i) {
                    if (i) out += o_.item_separator;
                    newline(out, level + 1);
                    dump_string(out, entries[i].first, o_.ensure_ascii);
                    out += o_.key_separator;
                    dump(out, *entries[i].second, level + 1);
                }
                newline(out, level);
                out += '}';
                return;
            }
            default:
                break;
        }
        fail("Object of type " + v.type_name() + " is not JSON serializable");
    }

  private:
    void newline(std::string& out, int level) const {
        if (!o_.indent) return;
        out += '\n';
        for (int i = 0; i < level; ++i) out += *o_.indent;
    }

    const JsonDumpOptions& o_;
};

}  // namespace

std::string python_json_dumps(const Value& value, const JsonDumpOptions& options) {
    std::string out;
    Dumper(options).dump(out, value, 0);
    return out;
}

Value parse_json_value(std::string_view text) {
    Json j = Json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) fail("invalid JSON: " + std::string(text.substr(0, 80)));
    return Value::from_json(j);
}

}  // namespace engine::jinja
