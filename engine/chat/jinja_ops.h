// Python semantics of operators, attribute/item access, iteration and calls on Values, the way
// jinja2 applies them (e.g. `a.b` prefers a dict method over a key, `a['b']` the reverse).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/chat/jinja_value.h"

namespace engine::jinja {

Value op_add(const Value& a, const Value& b);
Value op_sub(const Value& a, const Value& b);
Value op_mul(const Value& a, const Value& b);
Value op_div(const Value& a, const Value& b);
Value op_floordiv(const Value& a, const Value& b);
Value op_mod(const Value& a, const Value& b);
Value op_pow(const Value& a, const Value& b);
Value op_neg(const Value& a);
Value op_pos(const Value& a);
bool op_in(const Value& item, const Value& container);

Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
Value get_slice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                std::optional<int64_t> step);

// Python iter(): list items, dict keys, string code points; undefined iterates as empty.
std::vector<Value> iterate(const Value& v);
int64_t py_len(const Value& v);
Value call_value(const Value& callee, const CallArgs& args);

// Bound Python methods of str, list and dict (s.strip, l.append, d.items, ...), if `name` is one.
std::optional<Value> bound_method(const Value& obj, const std::string& name);

// "'dict object'" style description used in jinja2's undefined messages.
std::string object_description(const Value& v);

}  // namespace engine::jinja
