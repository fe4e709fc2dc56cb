// The environment variable that sets each option, as llama-server names them (LLAMA_ARG_*).
#pragma once

#include <string>
#include <vector>

namespace cli {

// long_name: the option's long name without dashes ("ctx-size"). Returns llama-server's name where it
// has one that does not follow the rule, else LLAMA_ARG_<LONG_NAME> (upper case, '-' -> '_').
std::string env_name(const std::string& long_name);
// Every name llama-server has used for it (its 2026 name and older ones), the one env_name gives first.
std::vector<std::string> env_names(const std::string& long_name);
// The variables of an option with these long names (in its order, without dashes): the first name's
// env_names, then the table's names for the others; no duplicates.
std::vector<std::string> option_env_names(const std::vector<std::string>& long_names);

// llama-server's boolean values: 1/true/enabled/on and 0/false/disabled/off (any case). Returns false
// if `value` is neither; `out` receives the value otherwise.
bool parse_env_bool(const std::string& value, bool* out);

}  // namespace cli
