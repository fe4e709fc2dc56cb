#include "server/cli/args.h"

#include "server/cli/env_names.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cli {

namespace {
std::vector<std::string> split_names(const std::string& names) {
    std::vector<std::string> out;
    std::stringstream ss(names);
    std::string n;
    while (std::getline(ss, n, ',')) out.push_back(n);
    return out;
}
std::string canonical(const std::vector<std::string>& names) {
    for (const auto& n : names)
        if (n.rfind("--", 0) == 0) return n.substr(2);
    return names.front().substr(1);
}
}  // namespace

int ArgParser::to_int(const std::string& opt, const std::string& v) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || errno || x < INT32_MIN || x > INT32_MAX)
        throw ArgError("invalid value '" + v + "' for " + opt + ": expected an integer");
    return (int)x;
}

double ArgParser::to_double(const std::string& opt, const std::string& v) {
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || errno) throw ArgError("invalid value '" + v + "' for " + opt + ": expected a number");
    return x;
}

void ArgParser::push(Opt o) {
    std::vector<std::string> long_names;
    for (const auto& n : o.names)
        if (n.rfind("--", 0) == 0) long_names.push_back(n.substr(2));
    if (!long_names.empty()) {
        o.envs = option_env_names(long_names);
        o.env = o.envs.front();
    }
    opts_.push_back(std::move(o));
}

void ArgParser::add(const std::string& names, const std::string& value_name, const std::string& help,
                    std::function<void(const std::string&)> set) {
    push({split_names(names), value_name, help, std::move(set), false, "", nullptr, true, false, ""});
}

void ArgParser::add_with_number(const std::string& names, const std::string& value_name, const std::string& help,
                                std::function<void(const std::string&)> set) {
    Opt o{split_names(names), value_name, help, std::move(set), false, "", nullptr, true, false, ""};
    o.takes_number = true;
    push(std::move(o));
}

void ArgParser::flag(const std::string& names, const std::string& help, bool* target, bool value) {
    push({split_names(names), "", help, [target, value](const std::string&) { *target = value; }, true, "", target,
          value, false, ""});
}

void ArgParser::flag(const std::string& names, const std::string& help, std::function<void()> act) {
    push({split_names(names), "", help, [act = std::move(act)](const std::string&) { act(); }, true, "", nullptr,
          true, false, ""});
}

void ArgParser::option(const std::string& names, const std::string& vn, const std::string& help, std::string* t) {
    add(names, vn, help, [t](const std::string& v) { *t = v; });
}
void ArgParser::option(const std::string& names, const std::string& vn, const std::string& help, int* t) {
    const std::string n = split_names(names).back();
    add(names, vn, help, [t, n](const std::string& v) { *t = to_int(n, v); });
}
void ArgParser::option(const std::string& names, const std::string& vn, const std::string& help, uint32_t* t) {
    const std::string n = split_names(names).back();
    add(names, vn, help, [t, n](const std::string& v) {
        const int x = to_int(n, v);
        if (x < 0) throw ArgError("invalid value '" + v + "' for " + n + ": must not be negative");
        *t = (uint32_t)x;
    });
}
void ArgParser::option(const std::string& names, const std::string& vn, const std::string& help, float* t) {
    const std::string n = split_names(names).back();
    add(names, vn, help, [t, n](const std::string& v) { *t = (float)to_double(n, v); });
}
void ArgParser::option(const std::string& names, const std::string& vn, const std::string& help, double* t) {
    const std::string n = split_names(names).back();
    add(names, vn, help, [t, n](const std::string& v) { *t = to_double(n, v); });
}

void ArgParser::optional_value(const std::string& names, const std::string& vn, const std::string& help,
                               const std::string& implicit, std::function<void(const std::string&)> set) {
    push({split_names(names), "[" + vn + "]", help, std::move(set), false, "", nullptr, true, true, implicit});
}

void ArgParser::refuse(const std::string& names, bool takes_value, const std::string& reason) {
    const std::string shown = split_names(names).back();
    auto fail = [shown, reason](const std::string&) -> void { throw ArgError(shown + ": " + reason); };
    Opt o{split_names(names), takes_value ? "VALUE" : "", "not supported: " + reason, fail, !takes_value, "", nullptr,
          true, false, ""};
    o.refused = reason;
    push(std::move(o));
}

void ArgParser::mark_given(const Opt& o) {
    given_[canonical(o.names)] = true;
    if (o.flag_target)
        for (const auto& p : opts_)
            if (p.flag_target == o.flag_target) given_[canonical(p.names)] = true;
}

bool ArgParser::is_given(const Opt& o) const { return given_.count(canonical(o.names)) > 0; }

const ArgParser::Opt* ArgParser::find(const std::string& name) const {
    for (const auto& o : opts_)
        for (const auto& n : o.names)
            if (n == name) return &o;
    return nullptr;
}

void ArgParser::positionals(std::vector<std::string>* out, const std::string& synopsis) {
    positionals_ = out;
    synopsis_ = synopsis;
}

bool ArgParser::parse(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
        const int start = i;
        std::string a = argv[i];
        if (a == "-h" || a == "--help" || a == "--usage") {
            std::fputs(usage().c_str(), stdout);
            return false;
        }
        if (positionals_ && (a.empty() || a[0] != '-' || a == "-" || (a.size() > 1 && std::isdigit((unsigned char)a[1])))) {
            positionals_->push_back(a);
            continue;
        }
        std::string value;
        bool has_inline = false;
        if (a.rfind("--", 0) == 0) {
            const auto eq = a.find('=');
            if (eq != std::string::npos) {
                value = a.substr(eq + 1);
                a = a.substr(0, eq);
                has_inline = true;
            }
        }
        const Opt* o = find(a);
        if (!o) throw ArgError("unknown option '" + a + "' for 'ggserve " + command_ + "' (see --help)");
        if (!o->is_flag && !has_inline) {
            // A bare optional-value option: nothing follows, or the next word is another option.
            const bool bare = o->has_implicit && (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] != '\0'));
            if (bare) {
                value = o->implicit;
            } else {
                if (i + 1 >= argc) throw ArgError("option " + a + " needs a value (" + o->value_name + ")");
                value = argv[++i];
                if (o->takes_number && i + 1 < argc) {  // add_with_number: a second value that is a number
                    char* end = nullptr;
                    std::strtod(argv[i + 1], &end);
                    if (end != argv[i + 1] && *end == '\0') value += std::string("\n") + argv[++i];
                }
            }
        }
        o->set(value);
        mark_given(*o);
        command_line_.push_back({canonical(o->names), std::vector<std::string>(argv + start, argv + i + 1)});
    }
    return true;
}

const ArgParser::Opt* ArgParser::find_key(const std::string& key) const {
    if (key.empty()) return nullptr;
    if (const Opt* o = find("--" + key)) return o;
    if (const Opt* o = find("-" + key)) return o;
    for (const auto& o : opts_)
        for (const auto& e : o.envs)
            if (e == key) return &o;
    return nullptr;
}

std::string ArgParser::canonical_name(const std::string& key) const {
    const Opt* o = find_key(key);
    return o ? canonical(o->names) : "";
}

std::string ArgParser::env_of(const std::string& name) const {
    for (const auto& o : opts_)
        if (canonical(o.names) == name) return o.env;
    return "";
}

std::vector<std::string> ArgParser::words_for(const std::string& key, const std::string& value) const {
    const Opt* o = find_key(key);
    if (!o) throw ArgError("unknown option '" + key + "'");
    if (!o->refused.empty()) throw ArgError(o->names.back() + ": " + o->refused);
    const std::string name = o->names.back();
    if (!o->is_flag) return {name, value};
    bool on = false;
    if (!parse_env_bool(value, &on))
        throw ArgError("'" + key + "' is a flag: its value must be true or false, not '" + value + "'");
    if (on) return {name};
    // false: the flag that sets the same variable the other way (--no-mmap for --mmap), if there is one.
    if (o->flag_target)
        for (const auto& p : opts_)
            if (p.flag_target == o->flag_target && p.flag_value != o->flag_value) return {p.names.back()};
    return {};
}

void ArgParser::apply_config(const nlohmann::json& cfg) {
    if (!cfg.is_object()) throw ArgError("config file must hold a JSON object");
    for (const auto& [key, val] : cfg.items()) {
        const Opt* o = find("--" + key);
        if (!o) throw ArgError("unknown option '" + key + "' in config file");
        if (is_given(*o)) continue;  // the command line and the environment win
        std::string v;
        if (o->is_flag) {
            if (!val.is_boolean()) throw ArgError("config option '" + key + "' must be true or false");
            if (!val.get<bool>()) continue;
        } else if (val.is_string()) {
            v = val.get<std::string>();
        } else if (val.is_number() || val.is_boolean()) {
            v = val.dump();
        } else {
            throw ArgError("config option '" + key + "' must be a string, number or boolean");
        }
        o->set(v);
        mark_given(*o);
    }
}

bool ArgParser::given(const std::string& long_name) const { return given_.count(long_name) > 0; }

std::string ArgParser::usage() const {
    std::string out = "usage: ggserve " + command_ + " [options]" + (synopsis_.empty() ? "" : " " + synopsis_) +
                      "\n\noptions:\n";
    for (const auto& o : opts_) {
        std::string names;
        for (const auto& n : o.names) names += (names.empty() ? "" : ", ") + n;
        if (!o.value_name.empty()) names += " " + o.value_name;
        out += "  " + names;
        out += names.size() < 30 ? std::string(30 - names.size(), ' ') : "\n" + std::string(32, ' ');
        out += o.help + "\n";
        if (show_env_ && !o.envs.empty()) {
            std::string envs;
            for (const auto& e : o.envs) envs += (envs.empty() ? "" : ", ") + e;
            out += std::string(32, ' ') + "(env: " + envs + ")\n";
        }
    }
    out += "  -h, --help, --usage           show this help\n";
    return out;
}

}  // namespace cli
