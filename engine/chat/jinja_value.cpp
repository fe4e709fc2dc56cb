#include "engine/chat/jinja_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/chat/jinja_error.h"

namespace engine::jinja {

Value Value::undefined(std::string reason) {
    Value v;
    v.v_ = UndefinedData{std::make_shared<const std::string>(std::move(reason))};
    return v;
}

namespace {
thread_local RenderArena* current_arena = nullptr;
}  // namespace

RenderArena::RenderArena() : previous_(current_arena) { current_arena = this; }

RenderArena::~RenderArena() {
    current_arena = previous_;
    // Emptying one container may free others (their weak references then expire): lock each in turn.
    for (const auto& w : arrays_)
        if (auto a = w.lock()) a->items.clear();
    for (const auto& w : objects_)
        if (auto o = w.lock()) {
            o->items.clear();
            o->call = nullptr;
        }
}

void RenderArena::record(const std::shared_ptr<ArrayData>& a) {
    if (current_arena) current_arena->arrays_.push_back(a);
}

void RenderArena::record(const std::shared_ptr<ObjectData>& o) {
    if (current_arena) current_arena->objects_.push_back(o);
}

Value Value::array(std::vector<Value> items) {
    auto a = std::make_shared<ArrayData>(ArrayData{std::move(items), false});
    RenderArena::record(a);
    Value v;
    v.v_ = std::move(a);
    return v;
}

Value Value::tuple(std::vector<Value> items) {
    auto a = std::make_shared<ArrayData>(ArrayData{std::move(items), true});
    RenderArena::record(a);
    Value v;
    v.v_ = std::move(a);
    return v;
}

Value Value::object() {
    auto o = std::make_shared<ObjectData>();
    RenderArena::record(o);
    Value v;
    v.v_ = std::move(o);
    return v;
}

Value Value::make_namespace() {
    Value v = object();
    v.as_object().is_namespace = true;
    return v;
}

Value Value::function(std::string name, NativeFunction fn) {
    Value v;
    v.v_ = std::make_shared<FunctionData>(FunctionData{std::move(name), std::move(fn)});
    return v;
}

Value Value::from_json(const Json& j) {
    switch (j.type()) {
        case Json::value_t::null:
            return Value(nullptr);
        case Json::value_t::boolean:
            return Value(j.get<bool>());
        case Json::value_t::number_integer:
            return Value(j.get<int64_t>());
        case Json::value_t::number_unsigned: {
            const auto u = j.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
            return Value(static_cast<int64_t>(u));
        }
        case Json::value_t::number_float:
            return Value(j.get<double>());
        case Json::value_t::string:
            return Value(j.get_ref<const std::string&>());
        case Json::value_t::array: {
            std::vector<Value> items;
            items.reserve(j.size());
            for (const auto& e : j) items.push_back(from_json(e));
            return array(std::move(items));
        }
        case Json::value_t::object: {
            Value obj = object();
            auto& data = obj.as_object();
            data.items.reserve(j.size());
            for (const auto& [k, e] : j.items()) data.items.emplace_back(Value(k), from_json(e));
            return obj;
        }
        default:
            return Value();  // binary and discarded values have no Jinja equivalent
    }
}

Json Value::to_json() const {
    switch (kind()) {
        case Kind::None:
            return nullptr;
        case Kind::Bool:
            return as_bool();
        case Kind::Int:
            return std::get<int64_t>(v_);
        case Kind::Float:
            return std::get<double>(v_);
        case Kind::String:
            return as_string();
        case Kind::Array: {
            Json j = Json::array();
            for (const auto& e : as_array().items) j.push_back(e.to_json());
            return j;
        }
        case Kind::Object: {
            if (is_namespace()) fail("Object of type Namespace is not JSON serializable");
            Json j = Json::object();
            for (const auto& [k, e] : as_object().items)
                j[k.is_string() ? k.as_string() : k.str()] = e.to_json();
            return j;
        }
        default:
            fail("Object of type " + type_name() + " is not JSON serializable");
    }
}

bool Value::is_tuple() const {
    return is_array() && as_array().is_tuple;
}
bool Value::is_dict() const {
    return is_object() && !as_object().is_namespace;
}
bool Value::is_namespace() const {
    return is_object() && as_object().is_namespace;
}
bool Value::is_callable() const {
    return is_function() || (is_object() && as_object().call);
}

int64_t Value::as_int() const {
    return is_bool() ? int64_t{as_bool()} : std::get<int64_t>(v_);
}

double Value::as_double() const {
    if (is_float()) return std::get<double>(v_);
    return static_cast<double>(as_int());
}

const std::string& Value::undefined_reason() const {
    static const std::string unknown = "value is undefined";
    const auto& r = std::get<UndefinedData>(v_).reason;
    return r ? *r : unknown;
}

bool Value::truthy() const {
    switch (kind()) {
        case Kind::Undefined:
        case Kind::None:
            return false;
        case Kind::Bool:
            return as_bool();
        case Kind::Int:
            return std::get<int64_t>(v_) != 0;
        case Kind::Float:
            return std::get<double>(v_) != 0.0;
        case Kind::String:
            return !as_string().empty();
        case Kind::Array:
            return !as_array().items.empty();
        case Kind::Object:
            return as_object().is_namespace || !as_object().items.empty();
        case Kind::Function:
            return true;
    }
    return false;
}

std::string format_python_float(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
    // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |d| < 1e16.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    std::string sign;
    if (sci[0] == '-') {
        sign = "-";
        sci.erase(0, 1);
    }
    const size_t e = sci.find('e');
    std::string digits = sci.substr(0, e);
    if (digits.size() > 1) digits.erase(1, 1);  // drop the decimal point
    const int exp = std::stoi(sci.substr(e + 1));
    std::string out = sign;
    if (exp >= -4 && exp < 16) {
        if (exp >= 0) {
            const size_t int_len = static_cast<size_t>(exp) + 1;
            if (digits.size() <= int_len) {
                out += digits + std::string(int_len - digits.size(), '0') + ".0";
            } else {
                out += digits.substr(0, int_len) + "." + digits.substr(int_len);
            }
        } else {
            out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
        }
    } else {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char ebuf[16];
        std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        out += ebuf;
    }
    return out;
}

static std::string repr_string(const std::string& s) {
    const bool use_double = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char quote = use_double ? '"' : '\'';
    std::string out(1, quote);
    for (unsigned char c : s) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == static_cast<unsigned char>(quote)) {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    out += quote;
    return out;
}

std::string Value::str() const {
    switch (kind()) {
        case Kind::Undefined:
            return "";
        case Kind::None:
            return "None";
        case Kind::Bool:
            return as_bool() ? "True" : "False";
        case Kind::Int:
            return std::to_string(std::get<int64_t>(v_));
        case Kind::Float:
            return format_python_float(std::get<double>(v_));
        case Kind::String:
            return as_string();
        case Kind::Array: {
            const auto& a = as_array();
            std::string out = a.is_tuple ? "(" : "[";
            for (size_t i = 0; i < a.items.size(); ++i) {
                if (i) out += ", ";
                out += a.items[i].repr();
            }
            if (a.is_tuple && a.items.size() == 1) out += ",";
            return out + (a.is_tuple ? ")" : "]");
        }
        case Kind::Object: {
            const auto& o = as_object();
            std::string out = "{";
            for (size_t i = 0; i < o.items.size(); ++i) {
                if (i) out += ", ";
                out += o.items[i].first.repr() + ": " + o.items[i].second.repr();
            }
            out += "}";
            return o.is_namespace ? "<Namespace " + out + ">" : out;
        }
        case Kind::Function:
            return "<function " + as_function().name + ">";
    }
    return "";
}

std::string Value::repr() const {
    if (is_string()) return repr_string(as_string());
    if (is_undefined()) return "Undefined";
    return str();
}

std::string Value::type_name() const {
    switch (kind()) {
        case Kind::Undefined:
            return "Undefined";
        case Kind::None:
            return "NoneType";
        case Kind::Bool:
            return "bool";
        case Kind::Int:
            return "int";
        case Kind::Float:
            return "float";
        case Kind::String:
            return "str";
        case Kind::Array:
            return is_tuple() ? "tuple" : "list";
        case Kind::Object:
            return is_namespace() ? "Namespace" : "dict";
        case Kind::Function:
            return "function";
    }
    return "object";
}

bool Value::equals(const Value& other) const {
    if (is_number() && other.is_number()) {
        if (is_float() || other.is_float()) return as_double() == other.as_double();
        return as_int() == other.as_int();
    }
    if (kind() != other.kind()) return false;
    switch (kind()) {
        case Kind::Undefined:
        case Kind::None:
            return true;
        case Kind::String:
            return as_string() == other.as_string();
        case Kind::Array: {
            const auto& a = as_array();
            const auto& b = other.as_array();
            if (a.is_tuple != b.is_tuple || a.items.size() != b.items.size()) return false;
            for (size_t i = 0; i < a.items.size(); ++i) {
                if (!a.items[i].equals(b.items[i])) return false;
            }
            return true;
        }
        case Kind::Object: {
            const auto& a = as_object();
            const auto& b = other.as_object();
            if (a.is_namespace || b.is_namespace) return &a == &b;
            if (a.items.size() != b.items.size()) return false;
            for (const auto& [k, v] : a.items) {
                const Value* w = b.find(k);
                if (!w || !v.equals(*w)) return false;
            }
            return true;
        }
        case Kind::Function:
            return &as_function() == &other.as_function();
        default:
            return false;
    }
}

bool Value::less(const Value& other) const {
    if (is_undefined()) fail(undefined_reason());
    if (other.is_undefined()) fail(other.undefined_reason());
    if (is_number() && other.is_number()) {
        if (is_float() || other.is_float()) return as_double() < other.as_double();
        return as_int() < other.as_int();
    }
    if (is_string() && other.is_string())
        return as_string() < other.as_string();  // UTF-8 keeps code point order
    if (is_array() && other.is_array() && is_tuple() == other.is_tuple()) {
        const auto& a = as_array().items;
        const auto& b = other.as_array().items;
        for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
            if (!a[i].equals(b[i])) return a[i].less(b[i]);
        }
        return a.size() < b.size();
    }
    fail("'<' not supported between instances of '" + type_name() + "' and '" + other.type_name() + "'");
}

bool Value::same(const Value& other) const {
    if (kind() != other.kind()) return false;
    switch (kind()) {
        case Kind::Array:
            return &as_array() == &other.as_array();
        case Kind::Object:
            return &as_object() == &other.as_object();
        case Kind::Function:
            return &as_function() == &other.as_function();
        default:
            return equals(other);
    }
}

const Value* ObjectData::find(const Value& key) const {
    if (key.is_string()) return find(std::string_view(key.as_string()));
    for (const auto& [k, v] : items) {
        if (k.equals(key)) return &v;
    }
    return nullptr;
}

Value* ObjectData::find(const Value& key) {
    return const_cast<Value*>(std::as_const(*this).find(key));
}

const Value* ObjectData::find(std::string_view key) const {
    for (const auto& [k, v] : items) {
        if (k.is_string() && k.as_string() == key) return &v;
    }
    return nullptr;
}

Value* ObjectData::find(std::string_view key) {
    return const_cast<Value*>(std::as_const(*this).find(key));
}

void ObjectData::set(const Value& key, Value value) {
    if (Value* existing = find(key)) {
        *existing = std::move(value);
    } else {
        items.emplace_back(key, std::move(value));
    }
}

bool ObjectData::erase(const Value& key) {
    for (auto it = items.begin(); it != items.end(); ++it) {
        if (it->first.equals(key)) {
            items.erase(it);
            return true;
        }
    }
    return false;
}

const Value* CallArgs::find(size_t index, std::string_view name) const {
    if (index < positional.size()) return &positional[index];
    for (const auto& [n, v] : named) {
        if (n == name) return &v;
    }
    return nullptr;
}

Value CallArgs::get(size_t index, std::string_view name, Value fallback) const {
    const Value* v = find(index, name);
    return v ? *v : fallback;
}

}  // namespace engine::jinja
