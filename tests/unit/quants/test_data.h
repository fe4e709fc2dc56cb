// Deterministic test data for the quantization tests. Only integer operations and exactly rounded
// float additions/multiplications are used, so every platform generates the same floats (the golden
// hashes in golden_test.cpp depend on it).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace quant_test {

// splitmix64
struct Rng {
    uint64_t state;
    explicit Rng(uint64_t seed) : state(seed) {}
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [-1, 1) with 24 significant bits, exactly representable.
    float uniform() { return float(int32_t(uint32_t(next() >> 32)) >> 8) * (1.0f / 8388608.0f); }
    // Approximately standard normal (sum of four uniforms, variance 1).
    float normal() {
        float sum = uniform();  // one call per statement: the order of calls is then fixed
        sum += uniform();
        sum += uniform();
        sum += uniform();
        return sum * 0.8660254f;
    }
};

// The kinds of rows the tests quantize.
enum class Kind {
    Normal,       // N(0, 1)
    Uniform,      // U(-3, 3)
    Constant,     // 0.7 everywhere
    Zero,         // all zero
    Outlier,      // N(0, 1) with one value of 50 per 256
    Sparse,       // three quarters exact zeros
    Positive,     // 1 + |N(0, 1)|: no value near zero
    SmallNeg,     // -0.01 |N(0, 1)|
    MixedScales,  // N(0, 1) times 10^-2 .. 10^2, changing every 16 values
    Tiny,         // 1e-5 N(0, 1)
    Integers,     // integers in [-8, 8]
    ConstantNeg,  // -2.5 everywhere
    Count,
};

inline float value(Rng& rng, Kind kind, int64_t i) {
    switch (kind) {
        case Kind::Normal:
            return rng.normal();
        case Kind::Uniform:
            return 3.0f * rng.uniform();
        case Kind::Constant:
            return 0.7f;
        case Kind::Zero:
            return 0.0f;
        case Kind::Outlier:
            return i % 256 == 37 ? 50.0f : rng.normal();
        case Kind::Sparse:
            return rng.next() % 4 == 0 ? rng.normal() : 0.0f;
        case Kind::Positive:
            return 1.0f + std::fabs(rng.normal());
        case Kind::SmallNeg:
            return -0.01f * std::fabs(rng.normal());
        case Kind::MixedScales: {
            static const float kScale[5] = {0.01f, 0.1f, 1.0f, 10.0f, 100.0f};
            return rng.normal() * kScale[(i / 16) % 5];
        }
        case Kind::Tiny:
            return 1e-5f * rng.normal();
        case Kind::Integers:
            return float(int(rng.next() % 17) - 8);
        case Kind::ConstantNeg:
            return -2.5f;
        case Kind::Count:
            break;
    }
    return 0.0f;
}

inline std::vector<float> make_row(uint64_t seed, Kind kind, int64_t n) {
    Rng rng(seed);
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = value(rng, kind, i);
    return x;
}

// One chunk of 256 values of each kind, in order: the input of the golden hashes.
inline std::vector<float> golden_input() {
    std::vector<float> x;
    for (int k = 0; k < int(Kind::Count); ++k) {
        const std::vector<float> part = make_row(1000 + uint64_t(k), Kind(k), 256);
        x.insert(x.end(), part.begin(), part.end());
    }
    return x;
}

// FNV-1a, 64 bits.
inline uint64_t fnv1a(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

inline double rms(const float* x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += double(x[i]) * double(x[i]);
    return std::sqrt(s / double(n));
}

inline double rms_diff(const float* x, const float* y, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += (double(x[i]) - double(y[i])) * (double(x[i]) - double(y[i]));
    return std::sqrt(s / double(n));
}

}  // namespace quant_test
