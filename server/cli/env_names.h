// The environment variable that sets each option, as llama-server names them (LLAMA_ARG_*).
#pragma once

#include <string>

namespace cli {

// long_name: the option's long name without dashes ("ctx-size"). Returns llama-server's name where it
// has one that does not follow the rule, else LLAMA_ARG_<LONG_NAME> (upper case, '-' -> '_').
std::string env_name(const std::string& long_name);

// llama-server's boolean values: 1/true/enabled/on and 0/false/disabled/off (any case). Returns false
// if `value` is neither; `out` receives the value otherwise.
bool parse_env_bool(const std::string& value, bool* out);

}  // namespace cli
