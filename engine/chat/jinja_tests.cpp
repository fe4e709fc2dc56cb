// The `is` tests. Type tests follow Python: bool is a number, str/list/dict are iterable, and
// jinja2's Undefined counts as iterable and as a sequence (it iterates as empty).
#include <unordered_map>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_filters.h"
#include "engine/chat/jinja_ops.h"
#include "engine/chat/jinja_strings.h"

namespace engine::jinja {

namespace {

using TestFn = bool (*)(const Value& v, const CallArgs& args);

const Value& arg0(const CallArgs& args, const char* test) {
    const Value* v = args.find(0, "other");
    if (!v) v = args.find(0, "value");
    if (!v) fail(std::string("test '") + test + "' needs an argument");
    return *v;
}

int64_t integer(const Value& v, const char* test) {
    if (!v.is_int() && !v.is_bool())
        fail(std::string("test '") + test + "' needs an integer, got " + v.type_name());
    return v.as_int();
}

bool test_in(const Value& v, const CallArgs& a) {
    return op_in(v, arg0(a, "in"));
}
bool test_eq(const Value& v, const CallArgs& a) {
    return v.equals(arg0(a, "eq"));
}
bool test_ne(const Value& v, const CallArgs& a) {
    return !v.equals(arg0(a, "ne"));
}
bool test_lt(const Value& v, const CallArgs& a) {
    return v.less(arg0(a, "lt"));
}
bool test_le(const Value& v, const CallArgs& a) {
    return !arg0(a, "le").less(v);
}
bool test_gt(const Value& v, const CallArgs& a) {
    return arg0(a, "gt").less(v);
}
bool test_ge(const Value& v, const CallArgs& a) {
    return !v.less(arg0(a, "ge"));
}

const std::unordered_map<std::string, TestFn>& tests() {
    static const std::unordered_map<std::string, TestFn> table = {
        {"defined", [](const Value& v, const CallArgs&) { return !v.is_undefined(); }},
        {"undefined", [](const Value& v, const CallArgs&) { return v.is_undefined(); }},
        {"none", [](const Value& v, const CallArgs&) { return v.is_none(); }},
        {"boolean", [](const Value& v, const CallArgs&) { return v.is_bool(); }},
        {"true", [](const Value& v, const CallArgs&) { return v.is_bool() && v.as_bool(); }},
        {"false", [](const Value& v, const CallArgs&) { return v.is_bool() && !v.as_bool(); }},
        {"integer", [](const Value& v, const CallArgs&) { return v.is_int(); }},
        {"float", [](const Value& v, const CallArgs&) { return v.is_float(); }},
        {"number", [](const Value& v, const CallArgs&) { return v.is_number(); }},
        {"string", [](const Value& v, const CallArgs&) { return v.is_string(); }},
        {"mapping", [](const Value& v, const CallArgs&) { return v.is_dict(); }},
        {"iterable",
         [](const Value& v, const CallArgs&) {
             return v.is_undefined() || v.is_string() || v.is_array() || v.is_dict();
         }},
        {"sequence",
         [](const Value& v, const CallArgs&) {
             return v.is_undefined() || v.is_string() || v.is_array() || v.is_dict();
         }},
        {"callable", [](const Value& v, const CallArgs&) { return v.is_callable(); }},
        {"sameas", [](const Value& v, const CallArgs& a) { return v.same(arg0(a, "sameas")); }},
        {"escaped", [](const Value&, const CallArgs&) { return false; }},  // no autoescaping, no Markup
        {"odd",
         [](const Value& v, const CallArgs&) {
             const int64_t i = integer(v, "odd");
             return i % 2 != 0;
         }},
        {"even", [](const Value& v, const CallArgs&) { return integer(v, "even") % 2 == 0; }},
        {"divisibleby",
         [](const Value& v, const CallArgs& a) {
             const int64_t d = integer(arg0(a, "divisibleby"), "divisibleby");
             if (d == 0) fail("integer division or modulo by zero");
             return integer(v, "divisibleby") % d == 0;
         }},
        {"eq", test_eq},
        {"equalto", test_eq},
        {"==", test_eq},
        {"ne", test_ne},
        {"!=", test_ne},
        {"lt", test_lt},
        {"lessthan", test_lt},
        {"<", test_lt},
        {"le", test_le},
        {"<=", test_le},
        {"gt", test_gt},
        {"greaterthan", test_gt},
        {">", test_gt},
        {"ge", test_ge},
        {">=", test_ge},
        {"in", test_in},
        {"lower",
         [](const Value& v, const CallArgs&) {
             const std::string s = v.str();
             return py_lower(s) == s && py_upper(s) != s;
         }},
        {"upper",
         [](const Value& v, const CallArgs&) {
             const std::string s = v.str();
             return py_upper(s) == s && py_lower(s) != s;
         }},
        {"filter",
         [](const Value& v, const CallArgs&) { return v.is_string() && has_filter(v.as_string()); }},
        {"test", [](const Value& v, const CallArgs&) { return v.is_string() && has_test(v.as_string()); }},
    };
    return table;
}

}  // namespace

bool apply_test(const std::string& name, const Value& input, const CallArgs& args) {
    const auto it = tests().find(name);
    if (it == tests().end()) fail("No test named '" + name + "'.");
    return it->second(input, args);
}

bool has_test(const std::string& name) {
    return tests().count(name) > 0;
}

CallArgs drop_positional(const CallArgs& args, size_t n) {
    CallArgs rest;
    if (args.positional.size() > n)
        rest.positional.assign(args.positional.begin() + static_cast<long>(n), args.positional.end());
    rest.named = args.named;
    return rest;
}

}  // namespace engine::jinja
