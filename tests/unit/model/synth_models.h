// Where the architecture tests find a synthetic model and its golden: ../shared/models/synth and
// ../shared/golden, or, for the models the tests write themselves (tests/fixtures/synth_arch.h: qwen2moe,
// gemma), a file written once per test process into the temporary directory (checked to be the bytes
// llama.cpp made the golden from) and the golden committed in tests/fixtures/golden.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "golden_util.h"
#include "synth_arch.h"

inline bool is_fixture_model(const std::string& name) {
    const auto names = synth::model_names();
    return std::find(names.begin(), names.end(), name) != names.end();
}

inline nlohmann::json load_arch_golden(const std::string& name) {
    if (!is_fixture_model(name)) return load_golden(name + ".greedy.json");
    std::ifstream f(std::string(GGSERVE_SOURCE_DIR) + "/tests/fixtures/golden/" + name + ".greedy.json");
    return nlohmann::json::parse(f);
}

namespace synth_models_detail {
// The files this process wrote, removed at exit.
struct Written {
    std::mutex mu;
    std::map<std::string, std::string> paths;
    ~Written() {
        for (const auto& [name, path] : paths) std::filesystem::remove(path);
    }
};
inline Written& written() {
    static Written w;
    return w;
}
}  // namespace synth_models_detail

inline std::string arch_model_path(const std::string& name) {
    if (!is_fixture_model(name)) return shared_path("models/synth/" + name + ".gguf");
    auto& w = synth_models_detail::written();
    std::lock_guard<std::mutex> lock(w.mu);
    auto it = w.paths.find(name);
    if (it != w.paths.end()) return it->second;
    const std::string path =
        (std::filesystem::temp_directory_path() / ("ggserve-" + name + "-" + std::to_string(getpid()) + ".gguf"))
            .string();
    synth::write_model(name, shared_path("models/vocab"), path);
    w.paths[name] = path;
    INFO("the generator must write the file the golden was made from");
    REQUIRE(synth::fnv1a64_file(path) == load_arch_golden(name)["model_fnv1a64"].get<std::string>());
    return path;
}
