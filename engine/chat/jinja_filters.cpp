// The built-in filters, with jinja2's signatures and Python semantics. `tojson` is HF's version
// (json.dumps with ensure_ascii=False), not jinja2's HTML-safe one.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_filters.h"
#include "engine/chat/jinja_json.h"
#include "engine/chat/jinja_ops.h"
#include "engine/chat/jinja_strings.h"

namespace engine::jinja {

namespace {

using FilterFn = Value (*)(const Value& input, const CallArgs& args);

// Parameter position for keyword-only arguments (never matches a positional argument).
constexpr size_t kKeywordOnly = SIZE_MAX;

std::optional<std::string> opt_string(const CallArgs& args, size_t index, std::string_view name) {
    const Value* v = args.find(index, name);
    if (!v || v->is_none() || v->is_undefined()) return std::nullopt;
    return v->str();
}

int64_t opt_int(const CallArgs& args, size_t index, std::string_view name, int64_t fallback) {
    const Value* v = args.find(index, name);
    if (!v || v->is_none()) return fallback;
    if (!v->is_number())
        fail("expected an integer argument '" + std::string(name) + "', got " + v->type_name());
    return v->is_float() ? static_cast<int64_t>(v->as_double()) : v->as_int();
}

bool opt_bool(const CallArgs& args, size_t index, std::string_view name, bool fallback) {
    const Value* v = args.find(index, name);
    return v ? v->truthy() : fallback;
}

// jinja2's attribute getter: "a.b.0" walks items first, then attributes.
Value lookup_path(const Value& item, const std::string& path) {
    Value v = item;
    for (const std::string& part : py_split(path, std::string("."), -1)) {
        const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        });
        v = get_item(v, digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
        if (v.is_undefined()) return v;
    }
    return v;
}

Value attribute_of(const Value& item, const Value& attribute) {
    if (attribute.is_int()) return get_item(item, attribute);
    return lookup_path(item, attribute.str());
}

// Sort key comparison with jinja2's case_sensitive=False default: strings compare lowercased.
bool key_less(const Value& a, const Value& b, bool case_sensitive) {
    if (!case_sensitive && a.is_string() && b.is_string())
        return py_lower(a.as_string()) < py_lower(b.as_string());
    return a.less(b);
}

Value key_for_unique(const Value& v, bool case_sensitive) {
    if (!case_sensitive && v.is_string()) return Value(py_lower(v.as_string()));
    return v;
}

Value f_trim(const Value& v, const CallArgs& a) {
    return Value(py_strip(v.str(), opt_string(a, 0, "chars"), true, true));
}
Value f_upper(const Value& v, const CallArgs&) {
    return Value(py_upper(v.str()));
}
Value f_lower(const Value& v, const CallArgs&) {
    return Value(py_lower(v.str()));
}
Value f_capitalize(const Value& v, const CallArgs&) {
    return Value(py_capitalize(v.str()));
}

// jinja2's title: capitalize each word, words starting after spaces, dashes and opening brackets.
Value f_title(const Value& v, const CallArgs&) {
    const std::string s = v.str();
    std::string out;
    bool word_start = true;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' ||
                         std::isspace(static_cast<unsigned char>(c));
        if (sep) {
            out += c;
            word_start = true;
        } else if (word_start) {
            out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            word_start = false;
        } else {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return Value(std::move(out));
}

Value f_length(const Value& v, const CallArgs&) {
    return Value(py_len(v));
}

Value f_first(const Value& v, const CallArgs&) {
    if (v.is_array()) {
        if (v.as_array().items.empty()) return Value::undefined("No first item, sequence was empty.");
        return v.as_array().items.front();
    }
    auto items = iterate(v);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items.front();
}

Value f_last(const Value& v, const CallArgs&) {
    auto items = iterate(v);
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
}

Value f_join(const Value& v, const CallArgs& a) {
    const std::string sep = opt_string(a, 0, "d").value_or("");
    const Value* attribute = a.find(1, "attribute");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(v)) {
        if (!first) out += sep;
        first = false;
        out += (attribute && !attribute->is_none() ? attribute_of(item, *attribute) : item).str();
    }
    return Value(std::move(out));
}

Value f_replace(const Value& v, const CallArgs& a) {
    const Value* old_v = a.find(0, "old");
    const Value* new_v = a.find(1, "new");
    if (!old_v || !new_v) fail("replace() needs the old and new strings");
    return Value(py_replace(v.str(), old_v->str(), new_v->str(), opt_int(a, 2, "count", -1)));
}

Value f_default(const Value& v, const CallArgs& a) {
    const bool boolean = opt_bool(a, 1, "boolean", false);
    if (v.is_undefined() || (boolean && !v.truthy())) return a.get(0, "default_value", Value(""));
    return v;
}

Value f_tojson(const Value& v, const CallArgs& a) {
    JsonDumpOptions o;
    if (const Value* indent = a.find(0, "indent"); indent && !indent->is_none()) {
        if (indent->is_string()) {
            o.indent = indent->as_string();
        } else if (indent->is_int()) {
            o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent->as_int())), ' ');
        } else {
            fail("tojson indent must be an integer or a string");
        }
        o.item_separator = ",";
    }
    o.ensure_ascii = opt_bool(a, kKeywordOnly, "ensure_ascii", false);
    o.sort_keys = opt_bool(a, kKeywordOnly, "sort_keys", false);
    if (const Value* sep = a.find(kKeywordOnly, "separators"); sep && !sep->is_none()) {
        auto parts = iterate(*sep);
        if (parts.size() != 2) fail("separators must be a pair of strings");
        o.item_separator = parts[0].str();
        o.key_separator = parts[1].str();
    }
    return Value(python_json_dumps(v, o));
}

Value f_from_json(const Value& v, const CallArgs&) {
    if (!v.is_string()) fail("from_json expects a string, got " + v.type_name());
    return parse_json_value(v.as_string());
}

Value f_string(const Value& v, const CallArgs&) {
    return Value(v.str());
}

// Python int(str, base) accepts surrounding spaces, a sign and underscores between digits.
std::optional<int64_t> parse_int(std::string s, int base) {
    s = py_strip(s, std::nullopt, true, true);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    if (s.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long r = std::strtoll(s.c_str(), &end, base);
    if (errno || *end != 0) return std::nullopt;
    return r;
}

std::optional<double> parse_float(const std::string& str) {
    const std::string s = py_strip(str, std::nullopt, true, true);
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (*end != 0) return std::nullopt;
    return d;
}

Value f_int(const Value& v, const CallArgs& a) {
    const Value fallback = a.get(0, "default", Value(int64_t{0}));
    const int base = static_cast<int>(opt_int(a, 1, "base", 10));
    if (v.is_int() || v.is_bool()) return Value(v.as_int());
    if (v.is_float()) {
        if (!std::isfinite(v.as_double())) return fallback;
        return Value(static_cast<int64_t>(std::trunc(v.as_double())));
    }
    if (v.is_string()) {
        if (auto i = parse_int(v.as_string(), base)) return Value(*i);
        if (auto d = parse_float(v.as_string()); d && std::isfinite(*d))
            return Value(static_cast<int64_t>(std::trunc(*d)));
    }
    return fallback;
}

Value f_float(const Value& v, const CallArgs& a) {
    const Value fallback = a.get(0, "default", Value(0.0));
    if (v.is_number()) return Value(v.as_double());
    if (v.is_string()) {
        if (auto d = parse_float(v.as_string())) return Value(*d);
    }
    return fallback;
}

Value f_list(const Value& v, const CallArgs&) {
    return Value::array(iterate(v));
}

Value f_items(const Value& v, const CallArgs&) {
    if (v.is_undefined()) return Value::array();
    if (!v.is_dict()) fail("Can only get item pairs from a mapping.");
    std::vector<Value> pairs;
    for (const auto& [k, e] : v.as_object().items) pairs.push_back(Value::tuple({k, e}));
    return Value::array(std::move(pairs));
}

Value f_dictsort(const Value& v, const CallArgs& a) {
    if (!v.is_dict()) fail("dictsort expects a mapping, got " + v.type_name());
    const bool case_sensitive = opt_bool(a, 0, "case_sensitive", false);
    const std::string by = opt_string(a, 1, "by").value_or("key");
    const bool reverse = opt_bool(a, 2, "reverse", false);
    if (by != "key" && by != "value") fail("You can only sort by either \"key\" or \"value\"");
    const size_t pos = by == "key" ? 0 : 1;
    std::vector<Value> pairs = f_items(v, {}).as_array().items;
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
        const Value& kx = x.as_array().items[pos];
        const Value& ky = y.as_array().items[pos];
        return reverse ? key_less(ky, kx, case_sensitive) : key_less(kx, ky, case_sensitive);
    });
    return Value::array(std::move(pairs));
}

// select/reject/selectattr/rejectattr share this: keep items whose (attribute's) test result
// equals `keep`. Without a test name an item passes when it is truthy.
Value select_items(const Value& v, const CallArgs& a, bool by_attribute, bool keep) {
    size_t next = 0;
    std::string attribute;
    if (by_attribute) {
        const Value* attr = a.find(0, "attribute");
        if (!attr) fail("selectattr/rejectattr need an attribute name");
        attribute = attr->str();
        next = 1;
    }
    std::optional<std::string> test;
    if (a.positional.size() > next) test = a.positional[next].str();
    const CallArgs test_args = drop_positional(a, next + 1);
    std::vector<Value> out;
    if (!v.truthy()) return Value::array();  // jinja2 yields nothing for falsy input (even None)
    for (const Value& item : iterate(v)) {
        const Value subject = by_attribute ? lookup_path(item, attribute) : item;
        const bool pass = test ? apply_test(*test, subject, test_args) : subject.truthy();
        if (pass == keep) out.push_back(item);
    }
    return Value::array(std::move(out));
}

Value f_select(const Value& v, const CallArgs& a) {
    return select_items(v, a, false, true);
}
Value f_reject(const Value& v, const CallArgs& a) {
    return select_items(v, a, false, false);
}
Value f_selectattr(const Value& v, const CallArgs& a) {
    return select_items(v, a, true, true);
}
Value f_rejectattr(const Value& v, const CallArgs& a) {
    return select_items(v, a, true, false);
}

Value f_map(const Value& v, const CallArgs& a) {
    std::vector<Value> out;
    if (!v.truthy()) return Value::array();  // jinja2 yields nothing for falsy input (even None)
    if (const Value* attribute = a.find(kKeywordOnly, "attribute")) {
        const Value* fallback = a.find(kKeywordOnly, "default");
        for (const Value& item : iterate(v)) {
            Value r = attribute_of(item, *attribute);
            out.push_back(r.is_undefined() && fallback ? *fallback : r);
        }
        return Value::array(std::move(out));
    }
    if (a.positional.empty()) fail("map requires a filter argument");
    const std::string filter = a.positional[0].str();
    const CallArgs rest = drop_positional(a, 1);
    for (const Value& item : iterate(v)) out.push_back(apply_filter(filter, item, rest));
    return Value::array(std::move(out));
}

Value f_unique(const Value& v, const CallArgs& a) {
    const bool case_sensitive = opt_bool(a, 0, "case_sensitive", false);
    const Value* attribute = a.find(1, "attribute");
    std::vector<Value> out, seen;
    for (const Value& item : iterate(v)) {
        const Value key = key_for_unique(
            attribute && !attribute->is_none() ? attribute_of(item, *attribute) : item, case_sensitive);
        if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return s.equals(key); })) continue;
        seen.push_back(key);
        out.push_back(item);
    }
    return Value::array(std::move(out));
}

Value f_reverse(const Value& v, const CallArgs&) {
    if (v.is_string()) {
        std::u32string cps = utf8_decode(v.as_string());
        std::reverse(cps.begin(), cps.end());
        return Value(utf8_encode(cps));
    }
    auto items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::array(std::move(items));
}

Value f_sort(const Value& v, const CallArgs& a) {
    const bool reverse = opt_bool(a, 0, "reverse", false);
    const bool case_sensitive = opt_bool(a, 1, "case_sensitive", false);
    const Value* attribute = a.find(2, "attribute");
    auto items = iterate(v);
    auto key = [&](const Value& item) {
        return attribute && !attribute->is_none() ? attribute_of(item, *attribute) : item;
    };
    std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
        return reverse ? key_less(key(y), key(x), case_sensitive) : key_less(key(x), key(y), case_sensitive);
    });
    return Value::array(std::move(items));
}

Value f_safe(const Value& v, const CallArgs&) {
    return v;
}

Value f_escape(const Value& v, const CallArgs&) {
    std::string out;
    for (char c : v.str()) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&#34;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return Value(std::move(out));
}

// jinja2's indent: every line but the first (unless first=True); blank lines only if blank=True.
Value f_indent(const Value& v, const CallArgs& a) {
    const Value width = a.get(0, "width", Value(int64_t{4}));
    const std::string pad = width.is_string()
                                ? width.as_string()
                                : std::string(static_cast<size_t>(std::max<int64_t>(0, width.as_int())), ' ');
    const bool first = opt_bool(a, 1, "first", false);
    const bool blank = opt_bool(a, 2, "blank", false);
    const std::vector<std::string> lines = py_splitlines(v.str() + "\n");
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i) out += "\n";
        if (i == 0 ? first : (blank || !lines[i].empty())) out += pad;
        out += lines[i];
    }
    return Value(std::move(out));
}

Value f_wordcount(const Value& v, const CallArgs&) {
    int64_t n = 0;
    bool in_word = false;
    for (char32_t c : utf8_decode(v.str())) {
        const bool word = c == '_' || (c < 0x80 ? std::isalnum(static_cast<int>(c)) != 0 : !py_isspace(c));
        if (word && !in_word) ++n;
        in_word = word;
    }
    return Value(n);
}

Value f_round(const Value& v, const CallArgs& a) {
    if (!v.is_number()) fail("round expects a number, got " + v.type_name());
    const int64_t precision = opt_int(a, 0, "precision", 0);
    const std::string method = opt_string(a, 1, "method").value_or("common");
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.as_double() * scale;
    double r;
    if (method == "common") {
        r = std::nearbyint(x);  // round-half-even, like Python's round()
    } else if (method == "ceil") {
        r = std::ceil(x);
    } else if (method == "floor") {
        r = std::floor(x);
    } else {
        fail("method must be 'common', 'ceil' or 'floor'");
    }
    return Value(r / scale);
}

Value f_abs(const Value& v, const CallArgs&) {
    if (v.is_int() || v.is_bool()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    if (v.is_float()) return Value(std::fabs(v.as_double()));
    fail("bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_batch(const Value& v, const CallArgs& a) {
    const int64_t size = opt_int(a, 0, "linecount", 0);
    if (size <= 0) fail("batch size must be positive");
    const Value* fill = a.find(1, "fill_with");
    std::vector<Value> out, row;
    for (const Value& item : iterate(v)) {
        row.push_back(item);
        if (static_cast<int64_t>(row.size()) == size) {
            out.push_back(Value::array(std::move(row)));
            row.clear();
        }
    }
    if (!row.empty()) {
        while (fill && !fill->is_none() && static_cast<int64_t>(row.size()) < size) row.push_back(*fill);
        out.push_back(Value::array(std::move(row)));
    }
    return Value::array(std::move(out));
}

Value aggregate(const Value& v, const CallArgs& a, bool want_max) {
    const bool case_sensitive = opt_bool(a, 0, "case_sensitive", false);
    const Value* attribute = a.find(1, "attribute");
    auto items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    auto key = [&](const Value& item) {
        return attribute && !attribute->is_none() ? attribute_of(item, *attribute) : item;
    };
    Value best = items[0];
    for (size_t i = 1; i < items.size(); ++i) {
        const bool better = want_max ? key_less(key(best), key(items[i]), case_sensitive)
                                     : key_less(key(items[i]), key(best), case_sensitive);
        if (better) best = items[i];
    }
    return best;
}

Value f_min(const Value& v, const CallArgs& a) {
    return aggregate(v, a, false);
}
Value f_max(const Value& v, const CallArgs& a) {
    return aggregate(v, a, true);
}

Value f_sum(const Value& v, const CallArgs& a) {
    const Value* attribute = a.find(0, "attribute");
    Value total = a.get(1, "start", Value(int64_t{0}));
    for (const Value& item : iterate(v)) {
        total = op_add(total, attribute && !attribute->is_none() ? attribute_of(item, *attribute) : item);
    }
    return total;
}

Value f_center(const Value& v, const CallArgs& a) {
    const std::string s = v.str();
    const int64_t width = opt_int(a, 0, "width", 80);
    const int64_t len = static_cast<int64_t>(utf8_length(s));
    if (width <= len) return Value(s);
    const int64_t pad = width - len;
    const int64_t left = pad / 2 + (pad & width & 1);
    return Value(std::string(static_cast<size_t>(left), ' ') + s +
                 std::string(static_cast<size_t>(pad - left), ' '));
}

Value f_truncate(const Value& v, const CallArgs& a) {
    const std::u32string s = utf8_decode(v.str());
    const int64_t length = opt_int(a, 0, "length", 255);
    const bool killwords = opt_bool(a, 1, "killwords", false);
    const std::u32string end = utf8_decode(opt_string(a, 2, "end").value_or("..."));
    const int64_t leeway = opt_int(a, 3, "leeway", 5);
    if (length < static_cast<int64_t>(end.size())) fail("expected length >= " + std::to_string(end.size()));
    if (static_cast<int64_t>(s.size()) <= length + leeway) return Value(utf8_encode(s));
    std::u32string head = s.substr(0, static_cast<size_t>(length) - end.size());
    if (!killwords) {
        const size_t space = head.rfind(U' ');
        if (space != std::u32string::npos) head.resize(space);
    }
    return Value(utf8_encode(head + end));
}

Value f_format(const Value& v, const CallArgs& a) {
    if (!a.positional.empty() && !a.named.empty())
        fail("can't handle positional and keyword arguments at the same time");
    if (!a.named.empty()) fail("format with keyword arguments is not supported");
    return Value(py_percent_format(v.str(), a.positional));
}

Value f_attr(const Value& v, const CallArgs& a) {
    const Value* name = a.find(0, "name");
    if (!name) fail("attr needs an attribute name");
    return get_attr(v, name->str());
}

const std::unordered_map<std::string, FilterFn>& filters() {
    static const std::unordered_map<std::string, FilterFn> table = {
        {"trim", f_trim},
        {"upper", f_upper},
        {"lower", f_lower},
        {"capitalize", f_capitalize},
        {"title", f_title},
        {"length", f_length},
        {"count", f_length},
        {"first", f_first},
        {"last", f_last},
        {"join", f_join},
        {"replace", f_replace},
        {"default", f_default},
        {"d", f_default},
        {"tojson", f_tojson},
        {"from_json", f_from_json},
        {"string", f_string},
        {"int", f_int},
        {"float", f_float},
        {"list", f_list},
        {"items", f_items},
        {"dictsort", f_dictsort},
        {"select", f_select},
        {"reject", f_reject},
        {"selectattr", f_selectattr},
        {"rejectattr", f_rejectattr},
        {"map", f_map},
        {"unique", f_unique},
        {"reverse", f_reverse},
        {"sort", f_sort},
        {"safe", f_safe},
        {"e", f_escape},
        {"escape", f_escape},
        {"forceescape", f_escape},
        {"indent", f_indent},
        {"wordcount", f_wordcount},
        {"round", f_round},
        {"abs", f_abs},
        {"batch", f_batch},
        {"min", f_min},
        {"max", f_max},
        {"sum", f_sum},
        {"center", f_center},
        {"truncate", f_truncate},
        {"format", f_format},
        {"attr", f_attr},
    };
    return table;
}

}  // namespace

Value apply_filter(const std::string& name, const Value& input, const CallArgs& args) {
    const auto it = filters().find(name);
    if (it == filters().end()) fail("No filter named '" + name + "'.");
    return it->second(input, args);
}

bool has_filter(const std::string& name) {
    return filters().count(name) > 0;
}

}  // namespace engine::jinja
