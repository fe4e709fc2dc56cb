// The built-in filters (`x | name(args)`) and tests (`x is name(args)`), looked up by name.
#pragma once

#include <string>

#include "engine/chat/jinja_value.h"

namespace engine::jinja {

// Throws TemplateError "No filter named 'x'." for unknown names.
Value apply_filter(const std::string& name, const Value& input, const CallArgs& args);
bool has_filter(const std::string& name);

// Throws TemplateError "No test named 'x'." for unknown names.
bool apply_test(const std::string& name, const Value& input, const CallArgs& args);
bool has_test(const std::string& name);

// Args without their first `n` positional arguments (a filter passing the rest on to a test).
CallArgs drop_positional(const CallArgs& args, size_t n);

}  // namespace engine::jinja
