#include "engine/speculative/ngram_cache.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "engine/speculative/ngram_hash.h"

namespace engine::spec {

Ngram Ngram::ending_at(std::span<const Token> seq, size_t end, int n) {
    Ngram g;
    for (int i = 0; i < n; ++i) g.tok[(size_t)i] = seq[end - (size_t)n + (size_t)i];
    return g;
}

size_t NgramHash::operator()(const Ngram& g) const {
    uint64_t h = kNgramHashBasis;
    for (Token t : g.tok) h = ngram_hash_step(h, t);
    return (size_t)h;
}

void NgramCache::update(std::span<const Token> seq, size_t from, int n_min, int n_max) {
    n_min = std::max(n_min, 1);
    n_max = std::min(n_max, kNgramMax);
    // The token at position i follows the n-grams ending at i.
    for (size_t i = std::max<size_t>(from, 1); i < seq.size(); ++i)
        for (int n = n_min; n <= n_max && (size_t)n <= i; ++n) ++map_[Ngram::ending_at(seq, i, n)][seq[i]];
}

void NgramCache::merge(const NgramCache& other) {
    for (const auto& [g, counts] : other.map_) {
        NextCounts& mine = map_[g];
        for (const auto& [tok, c] : counts) mine[tok] += c;
    }
}

void NgramCache::age(size_t max_ngrams) {
    while (map_.size() > max_ngrams) {
        for (auto it = map_.begin(); it != map_.end();) {
            NextCounts& counts = it->second;
            for (auto c = counts.begin(); c != counts.end();) {
                c->second /= 2;
                c = c->second == 0 ? counts.erase(c) : std::next(c);
            }
            it = counts.empty() ? map_.erase(it) : std::next(it);
        }
    }
}

const NextCounts* NgramCache::find(const Ngram& g) const {
    auto it = map_.find(g);
    return it == map_.end() ? nullptr : &it->second;
}

bool NgramCache::best(const Ngram& g, Token& tok, int32_t& count, int32_t& total) const {
    const NextCounts* c = find(g);
    if (!c || c->empty()) return false;
    count = total = 0;
    tok = -1;
    for (const auto& [t, n] : *c) {
        total += n;
        // Ties go to the smaller id, so the choice does not depend on the hash map's order.
        if (n > count || (n == count && t < tok)) {
            count = n;
            tok = t;
        }
    }
    return true;
}

void NgramCache::load(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open n-gram cache '" + path + "'");
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) throw std::runtime_error("cannot read n-gram cache '" + path + "': " + ec.message());
    uintmax_t pos = 0;
    const auto read_i32 = [&](int32_t& v) {
        if (pos + 4 > size || !f.read(reinterpret_cast<char*>(&v), 4))
            throw std::runtime_error("n-gram cache '" + path + "' is truncated at byte " + std::to_string(pos));
        pos += 4;
    };
    while (pos < size) {
        Ngram g;
        for (Token& t : g.tok) read_i32(t);
        int32_t n = 0;
        read_i32(n);
        // Each entry is 8 bytes: a count that the rest of the file cannot hold is corrupt.
        if (n < 0 || (uintmax_t)n * 8 > size - pos)
            throw std::runtime_error("n-gram cache '" + path + "' has a bad entry count " + std::to_string(n));
        NextCounts& counts = map_[g];
        for (int32_t i = 0; i < n; ++i) {
            int32_t tok = 0, c = 0;
            read_i32(tok);
            read_i32(c);
            if (tok < 0 || c < 0)
                throw std::runtime_error("n-gram cache '" + path + "' has a negative token or count");
            counts[tok] += c;
        }
    }
}

void NgramCache::save(const std::string& path) const {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) throw std::runtime_error("cannot write n-gram cache '" + tmp + "'");
        for (const auto& [g, counts] : map_) {
            f.write(reinterpret_cast<const char*>(g.tok.data()), sizeof(Token) * kNgramMax);
            const int32_t n = (int32_t)counts.size();
            f.write(reinterpret_cast<const char*>(&n), 4);
            for (const auto& [tok, c] : counts) {
                f.write(reinterpret_cast<const char*>(&tok), 4);
                f.write(reinterpret_cast<const char*>(&c), 4);
            }
        }
        if (!f) throw std::runtime_error("cannot write n-gram cache '" + tmp + "'");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw std::runtime_error("cannot write n-gram cache '" + path + "': " + ec.message());
}

void NgramCacheStore::load_dynamic(const std::string& path) {
    dynamic_path = path;
    if (!path.empty() && std::filesystem::exists(path)) dynamic.load(path);
    dynamic_limit = std::max(kDynamicNgrams, dynamic.size());
}

void NgramCacheStore::add_request(const NgramCache& request) {
    dynamic.merge(request);
    if (dynamic.size() > dynamic_limit) dynamic.age(dynamic_limit / 4 * 3);
}

void NgramCacheStore::save_dynamic() const {
    if (!dynamic_path.empty()) dynamic.save(dynamic_path);
}

}  // namespace engine::spec
