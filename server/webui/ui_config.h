// Default settings for the chat UI (llama-server's --ui-config JSON / --ui-config-file FILE): a JSON
// object read once at startup and handed to the page in /props as `ui_settings` (and `webui_settings`,
// the name older llama.cpp UIs read). The page applies the keys it knows as its defaults; what the user
// changed in the browser still wins. The server does not interpret the keys.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace webui {

// Parses `text` (from `source`, e.g. "--ui-config" or the file name, for messages): a JSON object.
// Throws std::runtime_error naming the source and the parse error.
nlohmann::json parse_ui_config(const std::string& text, const std::string& source);

// The UI settings from --ui-config (inline JSON) or --ui-config-file (a file): an empty object when
// neither is given. Throws std::runtime_error for an unreadable file, bad JSON or both given.
nlohmann::json load_ui_config(const std::string& inline_json, const std::string& file);

}  // namespace webui
