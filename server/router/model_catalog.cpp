#include "server/router/model_catalog.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace router {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
    return std::string(s.substr(b, e - b));
}

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> split_list(const std::string& v) {
    std::vector<std::string> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ','))
        if (auto t = trim(item); !t.empty()) out.push_back(t);
    return out;
}

bool parse_bool(const std::string& key, const std::string& v) {
    std::string l = v;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return (char)std::tolower(c); });
    if (l == "1" || l == "true" || l == "on" || l == "enabled") return true;
    if (l == "0" || l == "false" || l == "off" || l == "disabled") return false;
    throw std::runtime_error("'" + key + "' must be true or false, not '" + v + "'");
}

// The keys the router reads itself, in each spelling llama-server accepts for them.
enum class Key { model, alias, tags, load_on_startup, stop_timeout, other };
Key key_kind(const std::string& k) {
    if (k == "model" || k == "m" || k == "LLAMA_ARG_MODEL") return Key::model;
    if (k == "alias" || k == "a" || k == "LLAMA_ARG_ALIAS") return Key::alias;
    if (k == "tags" || k == "LLAMA_ARG_TAGS") return Key::tags;
    if (k == "load-on-startup") return Key::load_on_startup;
    if (k == "stop-timeout") return Key::stop_timeout;
    return Key::other;
}

void set_value(KeyValues& kv, const std::string& key, const std::string& value) {
    for (auto& [k, v] : kv)
        if (k == key) {
            v = value;
            return;
        }
    kv.emplace_back(key, value);
}

// Applies a preset section's keys to `m` (later sections' keys win).
void apply_section(ModelSpec& m, const KeyValues& values, const std::string& section) {
    for (const auto& [k, v] : values) {
        try {
            switch (key_kind(k)) {
                case Key::model:
                    m.path = v;
                    break;
                case Key::alias:
                    m.aliases = split_list(v);
                    break;
                case Key::tags:
                    m.tags = split_list(v);
                    break;
                case Key::load_on_startup:
                    m.load_on_startup = parse_bool(k, v);
                    break;
                case Key::stop_timeout: {
                    size_t used = 0;
                    int s = -1;
                    try {
                        s = std::stoi(v, &used);
                    } catch (const std::exception&) {
                    }
                    if (used != v.size() || s < 0) throw std::runtime_error("'stop-timeout' must be a number of seconds");
                    m.stop_timeout_s = s;
                    break;
                }
                case Key::other:
                    set_value(m.options, k, v);
                    break;
            }
        } catch (const std::runtime_error& e) {
            throw std::runtime_error("preset [" + section + "]: " + e.what());
        }
    }
}

}  // namespace

std::vector<IniSection> parse_ini(std::string_view text) {
    std::vector<IniSection> out(1);  // the keys before any header
    std::map<std::string, size_t> index{{"", 0}};
    size_t line_no = 0, pos = 0, current = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string line = trim(text.substr(pos, nl - pos));
        pos = nl + 1;
        ++line_no;
        if (line.empty() || line[0] == ';' || line[0] == '#') continue;
        const std::string where = "line " + std::to_string(line_no) + ": ";
        if (line[0] == '[') {
            const size_t close = line.find(']');
            if (close == std::string::npos) throw std::runtime_error(where + "a section header needs its ']'");
            const std::string rest = trim(std::string_view(line).substr(close + 1));
            if (!rest.empty() && rest[0] != ';' && rest[0] != '#')
                throw std::runtime_error(where + "unexpected text after the section header");
            std::string name = trim(std::string_view(line).substr(1, close - 1));
            if (name.empty()) throw std::runtime_error(where + "empty section name");
            auto [it, added] = index.emplace(name, out.size());
            if (added) out.push_back(IniSection{name, {}});
            current = it->second;
            continue;
        }
        const size_t eq = line.find('=');
        if (eq == std::string::npos) throw std::runtime_error(where + "expected 'key = value' or '[section]'");
        const std::string key = trim(std::string_view(line).substr(0, eq));
        if (key.empty() || !(std::isalpha((unsigned char)key[0]) || key[0] == '_'))
            throw std::runtime_error(where + "a key must start with a letter or '_'");
        for (char c : key)
            if (!(std::isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.'))
                throw std::runtime_error(where + "invalid character in key '" + key + "'");
        std::string value = trim(std::string_view(line).substr(eq + 1));
        // A comment after the value starts at a ';' or '#' that follows a space.
        for (size_t i = 1; i < value.size(); ++i)
            if ((value[i] == ';' || value[i] == '#') && (value[i - 1] == ' ' || value[i - 1] == '\t')) {
                value = trim(std::string_view(value).substr(0, i));
                break;
            }
        set_value(out[current].values, key, value);
    }
    return out;
}

std::vector<ModelSpec> scan_models_dir(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw std::runtime_error("--models-dir '" + dir + "' is not a directory");
    std::vector<fs::directory_entry> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(*it);
    if (ec) throw std::runtime_error("cannot read --models-dir '" + dir + "': " + ec.message());
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
    std::vector<ModelSpec> out;
    for (const auto& e : entries) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name[0] == '.') continue;
        if (e.is_directory(ec)) {
            // A model in its own directory: one GGUF file, or the first shard of a split one.
            std::vector<std::string> files;
            for (fs::directory_iterator it(e.path(), ec), end; !ec && it != end; it.increment(ec))
                if (ends_with(it->path().filename().string(), ".gguf") && it->is_regular_file(ec))
                    files.push_back(it->path().filename().string());
            std::sort(files.begin(), files.end());
            ModelSpec m;
            m.name = name;
            m.source = "models_dir";
            std::string single, first_shard;
            for (const auto& f : files) {
                if (f.find("mmproj") != std::string::npos)
                    m.warnings.push_back("model '" + name + "': " + f +
                                         " (a multimodal projector) is not used: ggserve serves text models");
                else if (f.find("-00001-of-") != std::string::npos)
                    first_shard = f;
                else if (single.empty())
                    single = f;
            }
            const std::string chosen = !first_shard.empty() ? first_shard : single;
            if (chosen.empty()) continue;
            m.path = (e.path() / chosen).string();
            out.push_back(std::move(m));
        } else if (ends_with(name, ".gguf") && e.is_regular_file(ec)) {
            ModelSpec m;
            m.name = name.substr(0, name.size() - 5);
            m.path = e.path().string();
            m.source = "models_dir";
            out.push_back(std::move(m));
        }
    }
    return out;
}

std::vector<ModelSpec> build_catalog(const std::string& models_dir, const std::string& preset_path) {
    std::vector<ModelSpec> models;
    if (!models_dir.empty()) models = scan_models_dir(models_dir);
    if (!preset_path.empty()) {
        std::ifstream f(preset_path, std::ios::binary);
        if (!f) throw std::runtime_error("cannot read --models-preset '" + preset_path + "'");
        std::stringstream ss;
        ss << f.rdbuf();
        std::vector<IniSection> sections;
        try {
            sections = parse_ini(ss.str());
        } catch (const std::runtime_error& e) {
            throw std::runtime_error("--models-preset '" + preset_path + "': " + e.what());
        }
        // Global options: [*], and keys before any section (except `version`).
        KeyValues global;
        for (const auto& s : sections)
            if (s.name.empty() || s.name == "*")
                for (const auto& [k, v] : s.values)
                    if (!(s.name.empty() && k == "version")) set_value(global, k, v);
        for (const auto& s : sections) {
            if (s.name.empty() || s.name == "*") continue;
            auto it = std::find_if(models.begin(), models.end(), [&](const ModelSpec& m) { return m.name == s.name; });
            if (it == models.end()) {
                ModelSpec m;
                m.name = s.name;
                m.source = "preset";
                apply_section(m, s.values, s.name);
                if (m.path.empty())
                    throw std::runtime_error("--models-preset '" + preset_path + "': [" + s.name +
                                             "] names no model file (model = PATH) and --models-dir has no model "
                                             "of that name");
                models.push_back(std::move(m));
            } else {
                it->source = "preset";
                apply_section(*it, s.values, s.name);
            }
        }
        // Global first, so that a model's own keys win.
        for (auto& m : models) {
            ModelSpec g;
            apply_section(g, global, "*");
            KeyValues merged = g.options;
            for (const auto& [k, v] : m.options) set_value(merged, k, v);
            m.options = std::move(merged);
            const bool own_load = std::any_of(sections.begin(), sections.end(), [&](const IniSection& s) {
                return s.name == m.name && std::any_of(s.values.begin(), s.values.end(), [](const auto& kv) {
                           return key_kind(kv.first) == Key::load_on_startup;
                       });
            });
            if (!own_load) m.load_on_startup = m.load_on_startup || g.load_on_startup;
            const bool own_stop = std::any_of(sections.begin(), sections.end(), [&](const IniSection& s) {
                return s.name == m.name && std::any_of(s.values.begin(), s.values.end(), [](const auto& kv) {
                           return key_kind(kv.first) == Key::stop_timeout;
                       });
            });
            if (!own_stop) m.stop_timeout_s = g.stop_timeout_s;
            if (m.tags.empty()) m.tags = g.tags;
        }
    }
    // Names and aliases identify one model each.
    std::map<std::string, std::string> owner;
    for (const auto& m : models) {
        for (const std::string* n : {&m.name}) {
            auto [it, added] = owner.emplace(*n, m.name);
            if (!added) throw std::runtime_error("model name '" + *n + "' is used twice");
        }
    }
    for (const auto& m : models)
        for (const auto& a : m.aliases) {
            auto [it, added] = owner.emplace(a, m.name);
            if (!added && it->second != m.name)
                throw std::runtime_error("alias '" + a + "' of model '" + m.name + "' is already the name or an alias of "
                                         "model '" + it->second + "'");
        }
    std::sort(models.begin(), models.end(), [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
    return models;
}

}  // namespace router
