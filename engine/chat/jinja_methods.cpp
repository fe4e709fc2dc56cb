// Python methods callable from templates: "a,b".split(","), messages.append(m), d.items(), ...
// Unlike HF's sandbox, mutating list/dict methods are allowed (several shipped templates use them).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_map>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_ops.h"
#include "engine/chat/jinja_strings.h"

namespace engine::jinja {

namespace {

using Method = Value (*)(const Value& self, const CallArgs& args);
using MethodTable = std::unordered_map<std::string, Method>;

// None or missing -> nullopt; otherwise the argument must be a string.
std::optional<std::string> opt_string(const CallArgs& args, size_t index, std::string_view name) {
    const Value* v = args.find(index, name);
    if (!v || v->is_none() || v->is_undefined()) return std::nullopt;
    if (!v->is_string()) fail("expected a string argument, got " + v->type_name());
    return v->as_string();
}

std::string req_string(const CallArgs& args, size_t index, std::string_view name) {
    const Value* v = args.find(index, name);
    if (!v) fail("missing required argument '" + std::string(name) + "'");
    if (!v->is_string()) fail("must be str, not " + v->type_name());
    return v->as_string();
}

int64_t opt_int(const CallArgs& args, size_t index, std::string_view name, int64_t fallback) {
    const Value* v = args.find(index, name);
    if (!v || v->is_none()) return fallback;
    if (!v->is_int() && !v->is_bool())
        fail("'" + v->type_name() + "' object cannot be interpreted as an integer");
    return v->as_int();
}

const Value& req_arg(const CallArgs& args, size_t index, std::string_view name) {
    const Value* v = args.find(index, name);
    if (!v) fail("missing required argument '" + std::string(name) + "'");
    return *v;
}

Value string_list(std::vector<std::string> parts) {
    std::vector<Value> items;
    items.reserve(parts.size());
    for (auto& p : parts) items.emplace_back(std::move(p));
    return Value::array(std::move(items));
}

// Apply a str.format spec: [[fill]align][sign][0][width][,][.precision][type].
std::string format_field(const Value& v, const std::string& spec) {
    if (spec.empty()) return v.str();
    size_t i = 0;
    char fill = ' ', align = 0, sign = 0;
    if (spec.size() >= 2 && std::string_view("<>^=").find(spec[1]) != std::string_view::npos) {
        fill = spec[0];
        align = spec[1];
        i = 2;
    } else if (std::string_view("<>^=").find(spec[0]) != std::string_view::npos) {
        align = spec[0];
        i = 1;
    }
    if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
    if (i < spec.size() && spec[i] == '0') {
        if (!align) {
            fill = '0';
            align = '=';
        }
        ++i;
    }
    size_t width = 0;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])))
        width = width * 10 + (spec[i++] - '0');
    if (i < spec.size() && spec[i] == ',') fail("thousands separators are not supported in format specs");
    int precision = -1;
    if (i < spec.size() && spec[i] == '.') {
        precision = 0;
        ++i;
        while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])))
            precision = precision * 10 + (spec[i++] - '0');
    }
    const char type = i < spec.size() ? spec[i++] : 0;
    if (i != spec.size()) fail("Invalid format specifier '" + spec + "'");

    std::string body;
    const bool numeric = v.is_number() && type != 's';
    if (!numeric) {
        if (type && type != 's')
            fail("Unknown format code '" + std::string(1, type) + "' for object of type '" + v.type_name() +
                 "'");
        body = v.str();
        if (precision >= 0) body = utf8_encode(utf8_decode(body).substr(0, static_cast<size_t>(precision)));
    } else {
        if (type == 'd' || (!type && !v.is_float() && precision < 0)) {
            if (v.is_float()) fail("Unknown format code 'd' for object of type 'float'");
            body = std::to_string(v.as_int());
        } else if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' || type == 'G' ||
                   type == '%') {
            const double d = type == '%' ? v.as_double() * 100 : v.as_double();
            const char t = type == '%' ? 'f' : type;
            body = format_c("%." + std::to_string(precision < 0 ? 6 : precision) + t, d);
            if (type == '%') body += '%';
        } else if (!type) {
            body = precision >= 0 ? format_c("%." + std::to_string(precision) + "g", v.as_double())
                                  : format_python_float(v.as_double());
        } else {
            fail("Unknown format code '" + std::string(1, type) + "' for object of type '" + v.type_name() +
                 "'");
        }
        if (body[0] != '-' && (sign == '+' || sign == ' ')) body.insert(body.begin(), sign);
    }
    const size_t len = utf8_length(body);
    if (len >= width) return body;
    const size_t pad = width - len;
    if (!align) align = numeric ? '>' : '<';
    switch (align) {
        case '<':
            return body + std::string(pad, fill);
        case '>':
            return std::string(pad, fill) + body;
        case '^':
            return std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
        default: {  // '=': padding after the sign
            const bool has_sign = !body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ');
            return has_sign ? body.substr(0, 1) + std::string(pad, fill) + body.substr(1)
                            : std::string(pad, fill) + body;
        }
    }
}

// str.format: {} {0} {name} {name!r} {0:>8.2f}, with {{ and }} as literal braces.
std::string str_format(const std::string& fmt, const CallArgs& args) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
                out += '}';
                ++i;
                continue;
            }
            fail("Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) fail("Single '{' encountered in format string");
        std::string field = fmt.substr(i + 1, close - i - 1);
        i = close;
        std::string spec, conv;
        if (const size_t colon = field.find(':'); colon != std::string::npos) {
            spec = field.substr(colon + 1);
            field.resize(colon);
        }
        if (const size_t bang = field.find('!'); bang != std::string::npos) {
            conv = field.substr(bang + 1);
            field.resize(bang);
        }
        Value v;
        if (field.empty()) {
            if (auto_index >= args.positional.size())
                fail("Replacement index " + std::to_string(auto_index) + " out of range");
            v = args.positional[auto_index++];
        } else if (std::all_of(field.begin(), field.end(),
                               [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
            const size_t idx = std::stoul(field);
            if (idx >= args.positional.size()) fail("Replacement index " + field + " out of range");
            v = args.positional[idx];
        } else {
            const Value* named = nullptr;
            for (const auto& [n, val] : args.named) {
                if (n == field) named = &val;
            }
            if (!named) fail("KeyError: '" + field + "'");
            v = *named;
        }
        if (conv == "r") {
            v = Value(v.repr());
        } else if (conv == "s") {
            v = Value(v.str());
        } else if (!conv.empty()) {
            fail("Unknown conversion specifier " + conv);
        }
        out += format_field(v, spec);
    }
    return out;
}

bool affix_match(const Value& self, const CallArgs& args, bool suffix) {
    const Value& arg = req_arg(args, 0, suffix ? "suffix" : "prefix");
    const std::string& s = self.as_string();
    auto one = [&](const Value& a) {
        if (!a.is_string())
            fail("startswith/endswith arg must be str or a tuple of str, not " + a.type_name());
        const std::string& p = a.as_string();
        if (p.size() > s.size()) return false;
        return suffix ? s.compare(s.size() - p.size(), p.size(), p) == 0 : s.compare(0, p.size(), p) == 0;
    };
    if (arg.is_array()) {
        return std::any_of(arg.as_array().items.begin(), arg.as_array().items.end(), one);
    }
    return one(arg);
}

template <typename Pred>
Value all_chars(const Value& self, Pred pred) {
    const std::u32string cps = utf8_decode(self.as_string());
    return Value(!cps.empty() && std::all_of(cps.begin(), cps.end(), pred));
}

Value pad_string(const Value& self, const CallArgs& args, char align) {
    const int64_t width = opt_int(args, 0, "width", 0);
    const std::string fill = opt_string(args, 1, "fillchar").value_or(" ");
    const std::string& s = self.as_string();
    const int64_t len = static_cast<int64_t>(utf8_length(s));
    if (width <= len) return self;
    const int64_t pad = width - len;
    auto rep = [&](int64_t n) {
        std::string r;
        for (int64_t i = 0; i < n; ++i) r += fill;
        return r;
    };
    if (align == '<') return Value(s + rep(pad));
    if (align == '>') return Value(rep(pad) + s);
    // Python's center puts the odd pad character on the left when the width is odd.
    const int64_t left = pad / 2 + (pad & width & 1);
    return Value(rep(left) + s + rep(pad - left));
}

Value partition(const Value& self, const CallArgs& args, bool reverse) {
    const std::string sep = req_string(args, 0, "sep");
    if (sep.empty()) fail("empty separator");
    const std::string& s = self.as_string();
    const size_t hit = reverse ? s.rfind(sep) : s.find(sep);
    if (hit == std::string::npos) {
        return reverse ? Value::tuple({Value(""), Value(""), self})
                       : Value::tuple({self, Value(""), Value("")});
    }
    return Value::tuple({Value(s.substr(0, hit)), Value(sep), Value(s.substr(hit + sep.size()))});
}

const MethodTable& string_methods() {
    static const MethodTable table = {
        {"strip",
         [](const Value& s, const CallArgs& a) {
             return Value(py_strip(s.as_string(), opt_string(a, 0, "chars"), true, true));
         }},
        {"lstrip",
         [](const Value& s, const CallArgs& a) {
             return Value(py_strip(s.as_string(), opt_string(a, 0, "chars"), true, false));
         }},
        {"rstrip",
         [](const Value& s, const CallArgs& a) {
             return Value(py_strip(s.as_string(), opt_string(a, 0, "chars"), false, true));
         }},
        {"split",
         [](const Value& s, const CallArgs& a) {
             return string_list(
                 py_split(s.as_string(), opt_string(a, 0, "sep"), opt_int(a, 1, "maxsplit", -1)));
         }},
        {"rsplit",
         [](const Value& s, const CallArgs& a) {
             return string_list(
                 py_rsplit(s.as_string(), opt_string(a, 0, "sep"), opt_int(a, 1, "maxsplit", -1)));
         }},
        {"splitlines",
         [](const Value& s, const CallArgs& a) {
             return string_list(py_splitlines(s.as_string(), a.get(0, "keepends", Value(false)).truthy()));
         }},
        {"startswith", [](const Value& s, const CallArgs& a) { return Value(affix_match(s, a, false)); }},
        {"endswith", [](const Value& s, const CallArgs& a) { return Value(affix_match(s, a, true)); }},
        {"replace",
         [](const Value& s, const CallArgs& a) {
             return Value(py_replace(s.as_string(), req_string(a, 0, "old"), req_string(a, 1, "new"),
                                     opt_int(a, 2, "count", -1)));
         }},
        {"upper", [](const Value& s, const CallArgs&) { return Value(py_upper(s.as_string())); }},
        {"lower", [](const Value& s, const CallArgs&) { return Value(py_lower(s.as_string())); }},
        {"title", [](const Value& s, const CallArgs&) { return Value(py_title(s.as_string())); }},
        {"capitalize", [](const Value& s, const CallArgs&) { return Value(py_capitalize(s.as_string())); }},
        {"format", [](const Value& s, const CallArgs& a) { return Value(str_format(s.as_string(), a)); }},
        {"find",
         [](const Value& s, const CallArgs& a) {
             return Value(py_find(s.as_string(), req_string(a, 0, "sub"), false));
         }},
        {"rfind",
         [](const Value& s, const CallArgs& a) {
             return Value(py_find(s.as_string(), req_string(a, 0, "sub"), true));
         }},
        {"index",
         [](const Value& s, const CallArgs& a) {
             const int64_t i = py_find(s.as_string(), req_string(a, 0, "sub"), false);
             if (i < 0) fail("substring not found");
             return Value(i);
         }},
        {"rindex",
         [](const Value& s, const CallArgs& a) {
             const int64_t i = py_find(s.as_string(), req_string(a, 0, "sub"), true);
             if (i < 0) fail("substring not found");
             return Value(i);
         }},
        {"count",
         [](const Value& s, const CallArgs& a) {
             return Value(static_cast<int64_t>(py_count(s.as_string(), req_string(a, 0, "sub"))));
         }},
        {"join",
         [](const Value& s, const CallArgs& a) {
             std::string out;
             size_t i = 0;
             for (const Value& item : iterate(req_arg(a, 0, "iterable"))) {
                 if (!item.is_string()) {
                     fail("sequence item " + std::to_string(i) + ": expected str instance, " +
                          item.type_name() + " found");
                 }
                 if (i++) out += s.as_string();
                 out += item.as_string();
             }
             return Value(std::move(out));
         }},
        {"isdigit",
         [](const Value& s, const CallArgs&) {
             return all_chars(s, [](char32_t c) { return c >= '0' && c <= '9'; });
         }},
        {"isnumeric",
         [](const Value& s, const CallArgs&) {
             return all_chars(s, [](char32_t c) { return c >= '0' && c <= '9'; });
         }},
        {"isalpha",
         [](const Value& s, const CallArgs&) {
             return all_chars(s, [](char32_t c) {
                 return c < 0x80 ? std::isalpha(static_cast<int>(c)) != 0 : !py_isspace(c);
             });
         }},
        {"isalnum",
         [](const Value& s, const CallArgs&) {
             return all_chars(s, [](char32_t c) {
                 return c < 0x80 ? std::isalnum(static_cast<int>(c)) != 0 : !py_isspace(c);
             });
         }},
        {"isspace", [](const Value& s, const CallArgs&) { return all_chars(s, py_isspace); }},
        {"islower",
         [](const Value& s, const CallArgs&) {
             const std::string& str = s.as_string();
             return Value(py_lower(str) == str && py_upper(str) != str);
         }},
        {"isupper",
         [](const Value& s, const CallArgs&) {
             const std::string& str = s.as_string();
             return Value(py_upper(str) == str && py_lower(str) != str);
         }},
        {"partition", [](const Value& s, const CallArgs& a) { return partition(s, a, false); }},
        {"rpartition", [](const Value& s, const CallArgs& a) { return partition(s, a, true); }},
        {"center", [](const Value& s, const CallArgs& a) { return pad_string(s, a, '^'); }},
        {"ljust", [](const Value& s, const CallArgs& a) { return pad_string(s, a, '<'); }},
        {"rjust", [](const Value& s, const CallArgs& a) { return pad_string(s, a, '>'); }},
        {"zfill",
         [](const Value& s, const CallArgs& a) {
             const std::string& str = s.as_string();
             const int64_t width = opt_int(a, 0, "width", 0);
             const int64_t len = static_cast<int64_t>(utf8_length(str));
             if (width <= len) return s;
             const bool sign = !str.empty() && (str[0] == '-' || str[0] == '+');
             return Value((sign ? str.substr(0, 1) : "") +
                          std::string(static_cast<size_t>(width - len), '0') + str.substr(sign ? 1 : 0));
         }},
        {"removeprefix",
         [](const Value& s, const CallArgs& a) {
             const std::string p = req_string(a, 0, "prefix");
             const std::string& str = s.as_string();
             return str.compare(0, p.size(), p) == 0 ? Value(str.substr(p.size())) : s;
         }},
        {"removesuffix",
         [](const Value& s, const CallArgs& a) {
             const std::string p = req_string(a, 0, "suffix");
             const std::string& str = s.as_string();
             if (p.empty() || p.size() > str.size() || str.compare(str.size() - p.size(), p.size(), p) != 0)
                 return s;
             return Value(str.substr(0, str.size() - p.size()));
         }},
    };
    return table;
}

int64_t list_index(const std::vector<Value>& items, int64_t i, const char* what) {
    const auto n = static_cast<int64_t>(items.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) fail(std::string(what) + " index out of range");
    return i;
}

const MethodTable& list_methods() {
    static const MethodTable table = {
        {"append",
         [](const Value& l, const CallArgs& a) {
             l.as_array().items.push_back(req_arg(a, 0, "object"));
             return Value(nullptr);
         }},
        {"extend",
         [](const Value& l, const CallArgs& a) {
             auto more = iterate(req_arg(a, 0, "iterable"));
             l.as_array().items.insert(l.as_array().items.end(), more.begin(), more.end());
             return Value(nullptr);
         }},
        {"insert",
         [](const Value& l, const CallArgs& a) {
             auto& items = l.as_array().items;
             int64_t i = opt_int(a, 0, "index", 0);
             const auto n = static_cast<int64_t>(items.size());
             if (i < 0) i = std::max<int64_t>(0, i + n);
             i = std::min(i, n);
             items.insert(items.begin() + i, req_arg(a, 1, "object"));
             return Value(nullptr);
         }},
        {"pop",
         [](const Value& l, const CallArgs& a) {
             auto& items = l.as_array().items;
             if (items.empty()) fail("pop from empty list");
             const int64_t i = list_index(items, opt_int(a, 0, "index", -1), "pop");
             Value v = items[static_cast<size_t>(i)];
             items.erase(items.begin() + i);
             return v;
         }},
        {"remove",
         [](const Value& l, const CallArgs& a) {
             auto& items = l.as_array().items;
             const Value& x = req_arg(a, 0, "value");
             auto it = std::find_if(items.begin(), items.end(), [&](const Value& v) { return v.equals(x); });
             if (it == items.end()) fail("list.remove(x): x not in list");
             items.erase(it);
             return Value(nullptr);
         }},
        {"index",
         [](const Value& l, const CallArgs& a) {
             const auto& items = l.as_array().items;
             const Value& x = req_arg(a, 0, "value");
             for (size_t i = 0; i < items.size(); ++i) {
                 if (items[i].equals(x)) return Value(static_cast<int64_t>(i));
             }
             fail(x.repr() + " is not in list");
         }},
        {"count",
         [](const Value& l, const CallArgs& a) {
             const Value& x = req_arg(a, 0, "value");
             const auto& items = l.as_array().items;
             return Value(static_cast<int64_t>(
                 std::count_if(items.begin(), items.end(), [&](const Value& v) { return v.equals(x); })));
         }},
        {"reverse",
         [](const Value& l, const CallArgs&) {
             std::reverse(l.as_array().items.begin(), l.as_array().items.end());
             return Value(nullptr);
         }},
        {"copy", [](const Value& l, const CallArgs&) { return Value::array(l.as_array().items); }},
        {"clear",
         [](const Value& l, const CallArgs&) {
             l.as_array().items.clear();
             return Value(nullptr);
         }},
    };
    return table;
}

const MethodTable& dict_methods() {
    static const MethodTable table = {
        {"items",
         [](const Value& d, const CallArgs&) {
             std::vector<Value> pairs;
             for (const auto& [k, v] : d.as_object().items) pairs.push_back(Value::tuple({k, v}));
             return Value::array(std::move(pairs));
         }},
        {"keys", [](const Value& d, const CallArgs&) { return Value::array(iterate(d)); }},
        {"values",
         [](const Value& d, const CallArgs&) {
             std::vector<Value> values;
             for (const auto& [k, v] : d.as_object().items) values.push_back(v);
             return Value::array(std::move(values));
         }},
        {"get",
         [](const Value& d, const CallArgs& a) {
             const Value* v = d.as_object().find(req_arg(a, 0, "key"));
             return v ? *v : a.get(1, "default", Value(nullptr));
         }},
        {"pop",
         [](const Value& d, const CallArgs& a) {
             const Value& key = req_arg(a, 0, "key");
             if (const Value* v = d.as_object().find(key)) {
                 Value out = *v;
                 d.as_object().erase(key);
                 return out;
             }
             if (const Value* fallback = a.find(1, "default")) return *fallback;
             fail("KeyError: " + key.repr());
         }},
        {"setdefault",
         [](const Value& d, const CallArgs& a) {
             const Value& key = req_arg(a, 0, "key");
             if (const Value* v = d.as_object().find(key)) return *v;
             Value fallback = a.get(1, "default", Value(nullptr));
             d.as_object().set(key, fallback);
             return fallback;
         }},
        {"update",
         [](const Value& d, const CallArgs& a) {
             if (!a.positional.empty()) {
                 const Value& other = a.positional[0];
                 if (other.is_dict()) {
                     for (const auto& [k, v] : other.as_object().items) d.as_object().set(k, v);
                 } else {
                     for (const Value& pair : iterate(other)) {
                         auto kv = iterate(pair);
                         if (kv.size() != 2) fail("dictionary update sequence element has wrong length");
                         d.as_object().set(kv[0], kv[1]);
                     }
                 }
             }
             for (const auto& [k, v] : a.named) d.as_object().set(Value(k), v);
             return Value(nullptr);
         }},
        {"copy",
         [](const Value& d, const CallArgs&) {
             Value copy = Value::object();
             copy.as_object().items = d.as_object().items;
             return copy;
         }},
        {"clear",
         [](const Value& d, const CallArgs&) {
             d.as_object().items.clear();
             return Value(nullptr);
         }},
    };
    return table;
}

}  // namespace

std::optional<Value> bound_method(const Value& obj, const std::string& name) {
    const MethodTable* table = nullptr;
    if (obj.is_string()) {
        table = &string_methods();
    } else if (obj.is_array() && !obj.is_tuple()) {
        table = &list_methods();
    } else if (obj.is_dict()) {
        table = &dict_methods();
    } else if (obj.is_tuple() && (name == "index" || name == "count")) {
        table = &list_methods();
    }
    if (!table) return std::nullopt;
    const auto it = table->find(name);
    if (it == table->end()) return std::nullopt;
    const Method m = it->second;
    return Value::function(name, [self = obj, m](const CallArgs& args) { return m(self, args); });
}

}  // namespace engine::jinja
