// What the router can serve: the GGUF files of --models-dir and the sections of a --models-preset INI
// file, merged into one list of named models (llama-server's router mode). Pure file reading: no model
// is opened here.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace router {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// An INI file as llama-server's presets write it: `[section]` headers, `key = value` lines, comments
// starting with ';' or '#' (also after a value, following a space), blank lines. Keys before the first
// section go to the section named "" (llama-server reads `version` there).
struct IniSection {
    std::string name;
    KeyValues values;  // in file order; a key given twice keeps its last value
};
// Throws std::runtime_error naming the line for anything else.
std::vector<IniSection> parse_ini(std::string_view text);

struct ModelSpec {
    std::string name;    // what requests put in "model"
    std::string path;    // the GGUF file
    std::string source;  // "models_dir" or "preset"
    std::vector<std::string> aliases;  // other names requests may use (the preset's `alias`)
    std::vector<std::string> tags;     // the preset's `tags`, listed by GET /models
    // The preset's options for this model's server, global ([*]) ones first, without the keys above
    // and the preset-only ones; their keys as written (long or short option names without dashes, or
    // LLAMA_ARG_* variable names).
    KeyValues options;
    bool load_on_startup = false;  // preset-only `load-on-startup`
    int stop_timeout_s = 10;       // preset-only `stop-timeout`: SIGTERM, then SIGKILL after this long
    std::vector<std::string> warnings;  // things ignored while building the entry (an mmproj file...)
};

// The models of `dir`: each `NAME.gguf` file is model NAME; each sub-directory NAME holding a GGUF file
// is model NAME (the first shard "-00001-of-" of a split model; "mmproj" files are projectors, which
// ggserve does not use). Sorted by name. Throws std::runtime_error if `dir` is not a readable directory.
std::vector<ModelSpec> scan_models_dir(const std::string& dir);

// The catalog: the models of `models_dir` (if not empty), merged with the sections of the preset file
// `preset_path` (if not empty). A section named like a directory model adds options to it; any other
// section is a model of its own and needs a `model = PATH` key. `[*]` gives options to every model.
// Throws std::runtime_error for an unreadable or malformed file, a section without a model file,
// a model name or alias used twice, a bad `load-on-startup` / `stop-timeout` value.
std::vector<ModelSpec> build_catalog(const std::string& models_dir, const std::string& preset_path);

}  // namespace router
