// What the encoder tests share: the cosine similarity of two vectors, and the encoder fixture models
// (nomic-bert, jina-bert-v2: tests/fixtures/synth_arch.h) written once per process into the temporary
// directory (the bytes their goldens, tests/fixtures/golden/<name>.embeddings.json, were made from).
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "golden_util.h"
#include "synth_arch.h"

namespace encoder_test {

inline double cosine(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i)
        ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return ab / std::sqrt(aa * bb);
}

struct EncoderFixture {
    std::string path;
    nlohmann::json golden;
    explicit EncoderFixture(const std::string& name) {
        std::ifstream f(std::string(GGSERVE_SOURCE_DIR) + "/tests/fixtures/golden/" + name +
                        ".embeddings.json");
        golden = nlohmann::json::parse(f);
        path = (std::filesystem::temp_directory_path() /
                ("ggserve-" + name + "-" + std::to_string(getpid()) + ".gguf"))
                   .string();
        synth::write_model(name, shared_path("models/vocab"), path);
    }
    ~EncoderFixture() { std::filesystem::remove(path); }
};

// One fixture per name and process (the file is removed at exit).
inline const EncoderFixture& encoder_fixture(const std::string& name) {
    static std::map<std::string, std::unique_ptr<EncoderFixture>> fixtures;
    auto& f = fixtures[name];
    if (!f) f = std::make_unique<EncoderFixture>(name);
    return *f;
}

}  // namespace encoder_test
