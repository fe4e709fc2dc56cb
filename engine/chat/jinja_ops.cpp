#include "engine/chat/jinja_ops.h"

#include <cmath>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_strings.h"

namespace engine::jinja {

namespace {

// Reject undefined operands the way jinja2's Undefined does: with the reason it is undefined.
void check_defined(const Value& a) {
    if (a.is_undefined()) fail(a.undefined_reason());
}

[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
    fail(std::string("unsupported operand type(s) for ") + op + ": '" + a.type_name() + "' and '" +
         b.type_name() + "'");
}

bool both_ints(const Value& a, const Value& b) {
    return (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
}

template <typename Op>
Value checked(Op op, int64_t a, int64_t b) {
    int64_t r = 0;
    if (op(a, b, &r)) fail("integer overflow");
    return Value(r);
}

Value repeat(const Value& seq, int64_t n) {
    if (n < 0) n = 0;
    if (seq.is_string()) {
        if (static_cast<double>(seq.as_string().size()) * static_cast<double>(n) > 64e6)
            fail("string too long");
        std::string out;
        out.reserve(seq.as_string().size() * static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) out += seq.as_string();
        return Value(std::move(out));
    }
    const auto& items = seq.as_array().items;
    if (static_cast<double>(items.size()) * static_cast<double>(n) > 1e6) fail("list too long");
    std::vector<Value> out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
    return seq.is_tuple() ? Value::tuple(std::move(out)) : Value::array(std::move(out));
}

int64_t index_of(const Value& key, int64_t length, bool& ok) {
    int64_t i = key.as_int();
    if (i < 0) i += length;
    ok = i >= 0 && i < length;
    return i;
}

}  // namespace

Value op_add(const Value& a, const Value& b) {
    check_defined(a);
    check_defined(b);
    if (both_ints(a, b)) {
        return checked([](int64_t x, int64_t y, int64_t* r) { return __builtin_add_overflow(x, y, r); },
                       a.as_int(), b.as_int());
    }
    if (a.is_number() && b.is_number()) return Value(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_array() && b.is_array() && a.is_tuple() == b.is_tuple()) {
        std::vector<Value> items = a.as_array().items;
        items.insert(items.end(), b.as_array().items.begin(), b.as_array().items.end());
        return a.is_tuple() ? Value::tuple(std::move(items)) : Value::array(std::move(items));
    }
    if (a.is_string()) fail("can only concatenate str (not \"" + b.type_name() + "\") to str");
    if (a.is_array() && !a.is_tuple())
        fail("can only concatenate list (not \"" + b.type_name() + "\") to list");
    unsupported("+", a, b);
}

Value op_sub(const Value& a, const Value& b) {
    check_defined(a);
    check_defined(b);
    if (both_ints(a, b)) {
        return checked([](int64_t x, int64_t y, int64_t* r) { return __builtin_sub_overflow(x, y, r); },
                       a.as_int(), b.as_int());
    }
    if (a.is_number() && b.is_number()) return Value(a.as_double() - b.as_double());
    unsupported("-", a, b);
}

Value op_mul(const Value& a, const Value& b) {
    check_defined(a);
    check_defined(b);
    if (both_ints(a, b)) {
        return checked([](int64_t x, int64_t y, int64_t* r) { return __builtin_mul_overflow(x, y, r); },
                       a.as_int(), b.as_int());
    }
    if (a.is_number() && b.is_number()) return Value(a.as_double() * b.as_double());
    if ((a.is_string() || a.is_array()) && (b.is_int() || b.is_bool())) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_array()) && (a.is_int() || a.is_bool())) return repeat(b, a.as_int());
    unsupported("*", a, b);
}

Value op_div(const Value& a, const Value& b) {
    check_defined(a);
    check_defined(b);
    if (!a.is_number() || !b.is_number()) unsupported("/", a, b);
    if (b.as_double() == 0) fail("division by zero");
    return Value(a.as_double() / b.as_double());
}

Value op_floordiv(const Value& a, const Value& b) {
    check_defined(a);
    check_defined(b);
    if (!a.is_number() || !b.is_number()) unsupported("//", a, b);
    if (b.as_double() == 0) fail("integer division or modulo by zero");
    if (both_ints(a, b)) {
        const int64_t x = a.as_int(), y = b.as_int();
        if (x == INT64_MIN && y == -1) fail("integer overflow");
        int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return Value(q);
    }
    return Value(std::floor(a.as_double() / b.as_double()));
}

Value op_mod(const Value& a, const Value& b) {
    check_defined(a);
    if (a.is_string()) {
        check_defined(b);
        std::vector<Value> args = b.is_tuple() ? b.as_array().items : std::vector<Value>{b};
        return Value(py_percent_format(a.as_string(), args));
    }
    check_defined(b);
    if (!a.is_number() || !b.is_number()) unsupported("%", a, b);
    if (b.as_double() == 0) fail("integer division or modulo by zero");
    if (both_ints(a, b)) {
        const int64_t x = a.as_int(), y = b.as_int();
        if (y == -1) return Value(int64_t{0});
        int64_t r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value(r);
    }
    const double x = a.as_double(), y = b.as_double();
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return Value(r);
}

Value op_pow(const Value& a, const Value& b) {
    check_defined(a);
    check_defined(b);
    if (!a.is_number() || !b.is_number()) unsupported("** or pow()", a, b);
    if (both_ints(a, b) && b.as_int() >= 0) {
        // Exponentiation by squaring; a squared base that overflows would overflow the result too.
        int64_t result = 1, base = a.as_int();
        for (int64_t e = b.as_int(); e > 0;) {
            if ((e & 1) && __builtin_mul_overflow(result, base, &result)) fail("integer overflow");
            e >>= 1;
            if (e > 0 && __builtin_mul_overflow(base, base, &base)) fail("integer overflow");
        }
        return Value(result);
    }
    return Value(std::pow(a.as_double(), b.as_double()));
}

Value op_neg(const Value& a) {
    check_defined(a);
    if (a.is_int() || a.is_bool()) {
        if (a.as_int() == INT64_MIN) fail("integer overflow");
        return Value(-a.as_int());
    }
    if (a.is_float()) return Value(-a.as_double());
    fail("bad operand type for unary -: '" + a.type_name() + "'");
}

Value op_pos(const Value& a) {
    check_defined(a);
    if (a.is_int() || a.is_bool()) return Value(a.as_int());
    if (a.is_float()) return a;
    fail("bad operand type for unary +: '" + a.type_name() + "'");
}

bool op_in(const Value& item, const Value& container) {
    switch (container.kind()) {
        case Value::Kind::String:
            if (!item.is_string()) {
                fail("'in <string>' requires string as left operand, not " + item.type_name());
            }
            return container.as_string().find(item.as_string()) != std::string::npos;
        case Value::Kind::Array:
            for (const auto& e : container.as_array().items) {
                if (e.equals(item)) return true;
            }
            return false;
        case Value::Kind::Object:
            if (container.is_namespace()) fail("argument of type 'Namespace' is not iterable");
            return container.as_object().find(item) != nullptr;
        case Value::Kind::Undefined:
            return false;  // jinja2's Undefined iterates as empty
        default:
            fail("argument of type '" + container.type_name() + "' is not iterable");
    }
}

std::string object_description(const Value& v) {
    if (v.is_none()) return "'None'";
    return "'" + v.type_name() + " object'";
}

Value get_attr(const Value& obj, const std::string& name) {
    if (obj.is_undefined()) fail(obj.undefined_reason());
    if (obj.is_object()) {
        if (!obj.is_namespace() && !obj.as_object().call) {
            if (auto m = bound_method(obj, name)) return *m;
        }
        if (const Value* v = obj.as_object().find(std::string_view(name))) return *v;
    } else if (auto m = bound_method(obj, name)) {
        return *m;
    }
    return Value::undefined(object_description(obj) + " has no attribute '" + name + "'");
}

Value get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) fail(obj.undefined_reason());
    // jinja2 looks an undefined key up like any other, finds nothing and gives undefined (Command R+'s
    // template indexes a type map with a property's type, which a schema may leave out).
    if (key.is_undefined()) return Value::undefined(object_description(obj) + " has no item for an undefined key");
    if (obj.is_object()) {
        if (const Value* v = obj.as_object().find(key)) return *v;
    } else if ((obj.is_array() || obj.is_string()) && (key.is_int() || key.is_bool())) {
        bool ok = false;
        if (obj.is_array()) {
            const auto& items = obj.as_array().items;
            const int64_t i = index_of(key, static_cast<int64_t>(items.size()), ok);
            if (ok) return items[static_cast<size_t>(i)];
        } else {
            const std::u32string cps = utf8_decode(obj.as_string());
            const int64_t i = index_of(key, static_cast<int64_t>(cps.size()), ok);
            if (ok) return Value(utf8_encode(cps.substr(static_cast<size_t>(i), 1)));
        }
    }
    if (key.is_string() && !obj.is_namespace()) {
        if (auto m = bound_method(obj, key.as_string())) return *m;
    }
    return Value::undefined(object_description(obj) + " has no attribute " + key.repr());
}

Value get_slice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                std::optional<int64_t> step) {
    if (obj.is_undefined()) fail(obj.undefined_reason());
    if (obj.is_array()) {
        const auto& items = obj.as_array().items;
        std::vector<Value> out;
        for (int64_t i : py_slice_indices(static_cast<int64_t>(items.size()), start, stop, step)) {
            out.push_back(items[static_cast<size_t>(i)]);
        }
        return obj.is_tuple() ? Value::tuple(std::move(out)) : Value::array(std::move(out));
    }
    if (obj.is_string()) {
        const std::u32string cps = utf8_decode(obj.as_string());
        std::u32string out;
        for (int64_t i : py_slice_indices(static_cast<int64_t>(cps.size()), start, stop, step)) {
            out.push_back(cps[static_cast<size_t>(i)]);
        }
        return Value(utf8_encode(out));
    }
    return Value::undefined(object_description(obj) + " is not subscriptable");
}

std::vector<Value> iterate(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined:
            return {};
        case Value::Kind::Array:
            return v.as_array().items;
        case Value::Kind::Object: {
            if (v.is_namespace()) break;
            std::vector<Value> keys;
            keys.reserve(v.as_object().items.size());
            for (const auto& [k, e] : v.as_object().items) keys.push_back(k);
            return keys;
        }
        case Value::Kind::String: {
            std::vector<Value> chars;
            for (char32_t c : utf8_decode(v.as_string()))
                chars.emplace_back(utf8_encode(std::u32string(1, c)));
            return chars;
        }
        default:
            break;
    }
    fail("'" + v.type_name() + "' object is not iterable");
}

int64_t py_len(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined:
            return 0;
        case Value::Kind::String:
            return static_cast<int64_t>(utf8_length(v.as_string()));
        case Value::Kind::Array:
            return static_cast<int64_t>(v.as_array().items.size());
        case Value::Kind::Object:
            if (!v.is_namespace()) return static_cast<int64_t>(v.as_object().items.size());
            break;
        default:
            break;
    }
    fail("object of type '" + v.type_name() + "' has no len()");
}

Value call_value(const Value& callee, const CallArgs& args) {
    if (callee.is_function()) return callee.as_function().fn(args);
    if (callee.is_object() && callee.as_object().call) return callee.as_object().call(args);
    if (callee.is_undefined()) fail(callee.undefined_reason());
    fail("'" + callee.type_name() + "' object is not callable");
}

}  // namespace engine::jinja
