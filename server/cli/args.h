// A small declarative command-line parser: each option binds its names to a variable.
// Unknown options and bad values raise ArgError (the commands turn it into exit code 2).
// Sources, strongest first: the command line, the environment (llama-server's LLAMA_ARG_* names, see
// env_names.cpp), a --config file, the defaults (the variables' initial values).
#pragma once

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cli {

struct ArgError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ArgParser {
public:
    explicit ArgParser(std::string command) : command_(std::move(command)) {}

    // names: "-m,--model". The setter receives the value (or "" for flags) and throws ArgError if invalid.
    void add(const std::string& names, const std::string& value_name, const std::string& help,
             std::function<void(const std::string&)> set);
    void flag(const std::string& names, const std::string& help, bool* target, bool value = true);
    // A flag that acts when given (in command-line order among the other options, so a later option that
    // sets the same thing wins); from the environment or a config file only when true.
    void flag(const std::string& names, const std::string& help, std::function<void()> act);
    // An option whose value may be followed by a second one on the command line (llama-server's
    // `--lora-scaled FNAME SCALE`): a next argument that is a number is taken too and given to set
    // after a '\n'. The environment and --config give the single value.
    void add_with_number(const std::string& names, const std::string& value_name, const std::string& help,
                         std::function<void(const std::string&)> set);
    void option(const std::string& names, const std::string& value_name, const std::string& help, std::string* target);
    void option(const std::string& names, const std::string& value_name, const std::string& help, int* target);
    void option(const std::string& names, const std::string& value_name, const std::string& help, float* target);
    void option(const std::string& names, const std::string& value_name, const std::string& help, double* target);
    void option(const std::string& names, const std::string& value_name, const std::string& help, uint32_t* target);
    // An option whose value may be left out (llama-server's `-fa [on|off|auto]`, `--log-colors [on|off]`):
    // given bare, at the end of the command line or before another option, it takes `implicit`.
    void optional_value(const std::string& names, const std::string& value_name, const std::string& help,
                        const std::string& implicit, std::function<void(const std::string&)> set);
    // A llama-server option this build cannot honour: giving it (on the command line, in the environment
    // or in a config file) stops startup with `reason`. takes_value: whether it is followed by a value.
    void refuse(const std::string& names, bool takes_value, const std::string& reason);

    // Collects the words that are not options (and negative numbers) into out, in order, instead of
    // rejecting them; `synopsis` ("IN.gguf OUT.gguf TYPE [nthreads]") goes into the usage line.
    void positionals(std::vector<std::string>* out, const std::string& synopsis);
    // For commands that never read the environment (apply_env is not called): usage lists no variables.
    void without_env() { show_env_ = false; }

    // Parses argv[first..argc). Returns false if --help was given (usage printed to stdout).
    bool parse(int argc, char** argv, int first = 2);
    // Applies a JSON object of option values (long names without dashes, e.g. {"ctx-size": 4096});
    // options already given on the command line or by the environment win.
    void apply_config(const nlohmann::json& cfg);
    // Applies the options whose environment variable is set (call it after parse, before apply_config);
    // options given on the command line win. A flag's variable takes a boolean (1/true/enabled/on,
    // 0/false/disabled/off): false sets the flag's variable to the opposite of what the flag sets.
    // An empty value counts as unset. `lookup` returns a variable's value or nullptr (default: getenv).
    using EnvLookup = std::function<const char*(const std::string&)>;
    void apply_env(const EnvLookup& lookup = {});
    bool given(const std::string& long_name) const;
    std::string usage() const;

    // The options given on the command line, in order, each with its canonical name (the first long
    // name without dashes) and the words that gave it ("--ctx-size", "512" or "--ctx-size=512"): what a
    // router passes on to the servers it starts.
    struct GivenArg {
        std::string name;
        std::vector<std::string> words;
    };
    const std::vector<GivenArg>& command_line() const { return command_line_; }
    // The canonical name of the option a preset file's key names (a long or short name without dashes,
    // or its environment variable), or "" if none. Does not look at refused options' reasons.
    std::string canonical_name(const std::string& key) const;
    // Command-line words that give option `key` (as canonical_name takes it) the value `value`, as
    // llama-server's preset files write it: a flag's value is true or false (false gives its opposite,
    // e.g. --no-mmap for mmap = false; nothing when it has none). Throws ArgError for an unknown key or
    // an option this build refuses (with its reason).
    std::vector<std::string> words_for(const std::string& key, const std::string& value) const;
    // The environment variable of the option with canonical name `name` ("" if none).
    std::string env_of(const std::string& name) const;

    static int to_int(const std::string& opt, const std::string& v);
    static double to_double(const std::string& opt, const std::string& v);

private:
    struct Opt {
        std::vector<std::string> names;
        std::string value_name, help;
        std::function<void(const std::string&)> set;
        bool is_flag;
        std::string env;             // environment variable ("" for options with no long name)
        bool* flag_target = nullptr;  // flags: the variable and the value the flag sets
        bool flag_value = true;
        bool has_implicit = false;  // optional_value: the value may be left out
        std::string implicit;
        bool takes_number = false;  // add_with_number
        std::string refused = {};   // refuse(): the reason
        std::vector<std::string> envs = {};  // env and the other names llama-server has used for it
    };
    const Opt* find_key(const std::string& key) const;
    const Opt* find(const std::string& name) const;
    void push(Opt o);
    void apply_env_value(const Opt& o, const std::string& value);
    // Marks an option given; for a flag, also the flags that set the same variable (--slots, --no-slots).
    void mark_given(const Opt& o);
    bool is_given(const Opt& o) const;
    std::string command_;
    std::vector<std::string>* positionals_ = nullptr;
    std::string synopsis_;
    bool show_env_ = true;
    std::vector<Opt> opts_;
    std::map<std::string, bool> given_;  // by canonical (first long) name
    std::vector<GivenArg> command_line_;
};

}  // namespace cli
