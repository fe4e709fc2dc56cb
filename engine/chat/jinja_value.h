// The value model of the Jinja interpreter: a dynamically typed value with Python semantics
// (truthiness, str()/repr(), ==, ordering), the way jinja2 sees Python objects. Lists, dicts and
// namespaces are shared by reference, as in Python, so `ns.items.append(x)` mutates in place.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace engine::jinja {

using Json = nlohmann::ordered_json;

class Value;
struct CallArgs;
using NativeFunction = std::function<Value(const CallArgs&)>;

struct ArrayData;
struct ObjectData;
struct FunctionData;

class Value {
  public:
    // The alternatives of Storage, in the same order.
    enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, Array, Object, Function };

    Value() = default;  // undefined
    Value(std::nullptr_t) : v_(nullptr) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(int64_t{i}) {}
    Value(int64_t i) : v_(i) {}
    Value(double d) : v_(d) {}
    Value(const char* s) : Value(std::string(s)) {}
    Value(std::string_view s) : Value(std::string(s)) {}
    Value(std::string s) : v_(std::make_shared<const std::string>(std::move(s))) {}

    // An undefined value remembers why it is undefined, for the error raised when it is misused.
    static Value undefined(std::string reason);
    static Value array(std::vector<Value> items = {});
    static Value tuple(std::vector<Value> items);
    static Value object();
    static Value make_namespace();
    static Value function(std::string name, NativeFunction fn);

    static Value from_json(const Json& j);
    // Throws TemplateError for values JSON cannot hold (undefined, functions, namespaces).
    Json to_json() const;

    Kind kind() const { return static_cast<Kind>(v_.index()); }
    bool is_undefined() const { return kind() == Kind::Undefined; }
    bool is_none() const { return kind() == Kind::None; }
    bool is_bool() const { return kind() == Kind::Bool; }
    bool is_int() const { return kind() == Kind::Int; }
    bool is_float() const { return kind() == Kind::Float; }
    bool is_number() const { return is_int() || is_float() || is_bool(); }  // bool is an int in Python
    bool is_string() const { return kind() == Kind::String; }
    bool is_array() const { return kind() == Kind::Array; }
    bool is_tuple() const;
    bool is_object() const { return kind() == Kind::Object; }
    bool is_dict() const;  // an object that is not a namespace: a Python dict / jinja2 mapping
    bool is_namespace() const;
    bool is_function() const { return kind() == Kind::Function; }
    bool is_callable() const;

    bool as_bool() const { return std::get<bool>(v_); }
    int64_t as_int() const;    // Int or Bool
    double as_double() const;  // Int, Float or Bool
    const std::string& as_string() const { return *std::get<std::shared_ptr<const std::string>>(v_); }
    ArrayData& as_array() const { return *std::get<std::shared_ptr<ArrayData>>(v_); }
    ObjectData& as_object() const { return *std::get<std::shared_ptr<ObjectData>>(v_); }
    FunctionData& as_function() const { return *std::get<std::shared_ptr<FunctionData>>(v_); }
    const std::string& undefined_reason() const;

    bool truthy() const;
    std::string str() const;        // Python str(); undefined renders as ""
    std::string repr() const;       // Python repr()
    std::string type_name() const;  // Python type name for error messages: "str", "dict", ...

    // Python ==. Numbers compare by value across int/float/bool.
    bool equals(const Value& other) const;
    // Python <. Throws TemplateError for unorderable types.
    bool less(const Value& other) const;
    // Identity (Python `is`) for shared values, value equality for scalars.
    bool same(const Value& other) const;

  private:
    struct UndefinedData {
        std::shared_ptr<const std::string> reason;
    };
    using Storage =
        std::variant<UndefinedData, std::nullptr_t, bool, int64_t, double, std::shared_ptr<const std::string>,
                     std::shared_ptr<ArrayData>, std::shared_ptr<ObjectData>, std::shared_ptr<FunctionData>>;
    Storage v_;
};

struct ArrayData {
    std::vector<Value> items;
    bool is_tuple = false;
};

// A Python dict: insertion-ordered, any hashable key (in practice strings and numbers).
struct ObjectData {
    std::vector<std::pair<Value, Value>> items;
    bool is_namespace = false;
    NativeFunction call;  // set for callable objects, e.g. the `loop` of a recursive for

    const Value* find(const Value& key) const;
    Value* find(const Value& key);
    const Value* find(std::string_view key) const;
    Value* find(std::string_view key);
    void set(const Value& key, Value value);
    bool erase(const Value& key);
};

struct FunctionData {
    std::string name;
    NativeFunction fn;
};

// The lists and dicts made while a render runs, emptied when it ends. A template can make a container
// hold itself ({% set ns.x = ns %}, l.append(l)): a reference cycle that shared ownership never frees,
// so a hostile template would leak on every request. The arena is the thread's while it lives (renders
// run on one thread; an inner arena restores the outer one).
class RenderArena {
  public:
    RenderArena();
    ~RenderArena();  // empties every recorded container that is still alive, which breaks any cycle
    RenderArena(const RenderArena&) = delete;
    RenderArena& operator=(const RenderArena&) = delete;
    // Called by Value's container factories; nothing happens outside a render.
    static void record(const std::shared_ptr<ArrayData>& a);
    static void record(const std::shared_ptr<ObjectData>& o);

  private:
    RenderArena* previous_;
    std::vector<std::weak_ptr<ArrayData>> arrays_;
    std::vector<std::weak_ptr<ObjectData>> objects_;
};

// Arguments of a call: positional values and keyword arguments, in call order.
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> named;

    // Python-style binding of one parameter: the positional argument at `index`, else the keyword
    // `name`, else nullptr.
    const Value* find(size_t index, std::string_view name) const;
    Value get(size_t index, std::string_view name, Value fallback = Value()) const;
    bool has(size_t index, std::string_view name) const { return find(index, name) != nullptr; }
};

// Python repr() of a float: shortest round-trip digits, "1.0", "1e+16", "1e-05", "nan", "inf".
std::string format_python_float(double d);

}  // namespace engine::jinja
