// Sampling settings of one request, with llama-server's names and defaults, and their validation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sampling/logit_bias.h"
#include "engine/sampling/rng.h"

namespace engine {

// The configurable middle of the chain. adaptive_p is not a middle stage: listing it makes adaptive-p
// the final pick (llama.cpp puts it last wherever it is listed).
enum class SamplerType {
    penalties,
    dry,
    top_n_sigma,
    top_k,
    typical_p,
    top_p,
    min_p,
    xtc,
    temperature,
    adaptive_p,
};

// penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, temperature.
std::vector<SamplerType> default_sampler_order();

struct SamplingParams {
    uint32_t seed = kRandomSeed;  // 0xFFFFFFFF: a random seed per request

    float temperature = 0.8f;  // <= 0: greedy
    float dynatemp_range = 0.0f;
    float dynatemp_exponent = 1.0f;
    int32_t top_k = 40;  // <= 0: off
    float top_p = 0.95f;
    float min_p = 0.05f;
    float typical_p = 1.0f;
    float top_n_sigma = -1.0f;  // <= 0: off
    float xtc_probability = 0.0f;
    float xtc_threshold = 0.1f;
    int32_t min_keep = 0;  // floor on candidates left by top_p, min_p, typical_p, xtc

    float repeat_penalty = 1.0f;
    int32_t repeat_last_n = 64;  // -1: context size, 0: off
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;

    float dry_multiplier = 0.0f;  // 0: off
    float dry_base = 1.75f;
    int32_t dry_allowed_length = 2;
    int32_t dry_penalty_last_n = 64;  // -1: context size, 0: off (64 as llama.cpp 2026)
    std::vector<std::string> dry_sequence_breakers = {"\n", ":", "\"", "*"};

    int32_t mirostat = 0;  // 0 off, 1 v1, 2 v2
    float mirostat_tau = 5.0f;
    float mirostat_eta = 0.1f;

    float adaptive_target = -1.0f;  // < 0: off
    float adaptive_decay = 0.9f;

    std::vector<LogitBias> logit_bias;  // bias -inf bans the token
    int32_t n_probs = 0;                // top candidates reported with their probabilities
    std::vector<SamplerType> samplers = default_sampler_order();

    // adaptive-p picks the token when a target is set or "adaptive_p" is in `samplers`.
    bool uses_adaptive_p() const;
};

// Canonical name (as llama-server prints it: "top_k", "typ_p", ...) and one-letter code ('k', 'y', ...).
std::string_view sampler_type_name(SamplerType type);
char sampler_type_char(SamplerType type);

// Parses sampler names: canonical names plus llama.cpp's aliases ("top-k", "nucleus", "typical", "temp",
// "min-p", ...). Returns an error message naming the first unknown entry, empty on success.
std::string parse_sampler_names(const std::vector<std::string>& names, std::vector<SamplerType>& out);

// Parses llama.cpp's short form, one letter per sampler ("edskypmxt"; 'a' = adaptive_p). 'f' (tail-free,
// which llama.cpp dropped) is skipped so old strings such as "kfypmxt" still work. Error message or empty.
std::string parse_sampler_chars(std::string_view chars, std::vector<SamplerType>& out);

// Bounds on what a request may list: each breaker is matched against the whole vocabulary and each
// sampler built when a request starts (llama.cpp's chains have at most a dozen).
inline constexpr size_t kMaxDryBreakers = 64;
inline constexpr size_t kMaxSamplers = 64;

// A clear message for the first invalid setting, or empty when all are valid. With n_vocab > 0, logit_bias
// tokens must be in [0, n_vocab).
std::string validate(const SamplingParams& params, int32_t n_vocab = 0);

}  // namespace engine
