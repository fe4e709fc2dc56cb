// JSON text the way Python's json.dumps writes it (HF's `tojson` filter calls json.dumps): ", " and
// ": " separators, floats as Python repr, non-ASCII kept unless ensure_ascii, insertion key order.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/chat/jinja_value.h"

namespace engine::jinja {

struct JsonDumpOptions {
    std::optional<std::string> indent;  // none: one line; else the unit added per nesting level
    bool ensure_ascii = false;
    std::string item_separator = ", ";
    std::string key_separator = ": ";
    bool sort_keys = false;
};

// Throws TemplateError for values JSON cannot hold (undefined, functions, namespaces).
std::string python_json_dumps(const Value& value, const JsonDumpOptions& options = {});

// Parse JSON text into a Value (objects keep their key order). Throws TemplateError.
Value parse_json_value(std::string_view text);

}  // namespace engine::jinja
