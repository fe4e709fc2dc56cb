// ArgParser::apply_env: options from llama-server's environment variables (LLAMA_ARG_*).
#include <cstdlib>

#include "server/cli/args.h"
#include "server/cli/env_names.h"

namespace cli {

void ArgParser::apply_env_value(const Opt& o, const std::string& value) {
    if (!o.is_flag) {
        o.set(value);
        return;
    }
    bool on = false;
    if (!parse_env_bool(value, &on))
        throw ArgError("invalid value '" + value + "' for " + o.names.back() +
                       ": expected 1/true/enabled/on or 0/false/disabled/off");
    if (on)
        o.set("");
    else if (o.flag_target)
        *o.flag_target = !o.flag_value;
}

void ArgParser::apply_env(const EnvLookup& lookup) {
    const EnvLookup get = lookup ? lookup : [](const std::string& n) { return (const char*)std::getenv(n.c_str()); };
    for (const auto& o : opts_) {
        if (o.envs.empty() || is_given(o)) continue;  // the command line wins
        // The first of its names that is set (llama-server's 2026 name before older ones).
        const char* v = nullptr;
        std::string name;
        for (const auto& e : o.envs)
            if (const char* x = get(e); x && *x) {  // empty: as if unset (compose's ${VAR:-})
                v = x;
                name = e;
                break;
            }
        if (!v) continue;
        try {
            apply_env_value(o, v);
        } catch (const ArgError& e) {
            throw ArgError("environment variable " + name + ": " + e.what());
        }
        mark_given(o);
    }
}

}  // namespace cli
