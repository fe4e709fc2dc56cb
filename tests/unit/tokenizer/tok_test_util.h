// Shared helpers for the tokenizer tests: cached vocabularies and the llama.cpp test-vector files.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tokenizer/vocab.h"

namespace tok_test {

inline std::string shared_path(const std::string& rel) {
    return std::string(GGSERVE_SHARED_DIR) + "/" + rel;
}

inline bool file_exists(const std::string& path) {
    return std::ifstream(path).good();
}

inline std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Vocabularies are loaded once per test binary (the large ones take a moment).
inline const engine::Vocab& vocab(const std::string& rel) {
    static std::map<std::string, std::unique_ptr<engine::Vocab>> cache;
    static std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = cache[rel];
    if (!slot) slot = std::make_unique<engine::Vocab>(engine::Vocab::from_file(shared_path(rel)));
    return *slot;
}

struct VectorCase {
    std::string text;
    std::vector<engine::Token> ids;
};

// A .inp file holds strings separated by "\n__ggml_vocab_test__\n"; the .out file one line of ids per
// string (the reference tokenization without BOS/EOS and without special-token parsing).
inline std::vector<VectorCase> read_vectors(const std::string& base) {
    const std::string raw = read_file(base + ".inp");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    for (size_t pos = 0; pos < raw.size();) {
        const size_t next = raw.find(sep, pos);
        if (next == std::string::npos) {
            texts.push_back(raw.substr(pos));
            break;
        }
        texts.push_back(raw.substr(pos, next - pos));
        pos = next + sep.size();
    }
    std::vector<VectorCase> cases;
    std::ifstream out(base + ".out");
    std::string line;
    for (size_t i = 0; std::getline(out, line); ++i) {
        VectorCase c;
        c.text = i < texts.size() ? texts[i] : std::string();
        std::istringstream ls(line);
        for (engine::Token t; ls >> t;) c.ids.push_back(t);
        cases.push_back(std::move(c));
    }
    if (cases.size() != texts.size()) cases.clear();  // malformed pair: the caller fails on empty
    return cases;
}

inline std::string show(const std::vector<engine::Token>& ids) {
    std::string s;
    for (auto t : ids) s += std::to_string(t) + " ";
    return s;
}

}  // namespace tok_test
