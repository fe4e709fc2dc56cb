#include "engine/sampling/sampling_params.h"

#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace engine {

namespace {

struct TypeInfo {
    SamplerType type;
    std::string_view name;
    char code;
};

constexpr std::array<TypeInfo, 10> kTypes = {{
    {SamplerType::penalties, "penalties", 'e'},
    {SamplerType::dry, "dry", 'd'},
    {SamplerType::top_n_sigma, "top_n_sigma", 's'},
    {SamplerType::top_k, "top_k", 'k'},
    {SamplerType::typical_p, "typ_p", 'y'},
    {SamplerType::top_p, "top_p", 'p'},
    {SamplerType::min_p, "min_p", 'm'},
    {SamplerType::xtc, "xtc", 'x'},
    {SamplerType::temperature, "temperature", 't'},
    {SamplerType::adaptive_p, "adaptive_p", 'a'},
}};

// The alternative spellings llama.cpp accepts.
constexpr std::array<std::pair<std::string_view, SamplerType>, 11> kAliases = {{
    {"top-k", SamplerType::top_k},
    {"top-p", SamplerType::top_p},
    {"nucleus", SamplerType::top_p},
    {"top-n-sigma", SamplerType::top_n_sigma},
    {"typical-p", SamplerType::typical_p},
    {"typical", SamplerType::typical_p},
    {"typ-p", SamplerType::typical_p},
    {"typ", SamplerType::typical_p},
    {"min-p", SamplerType::min_p},
    {"temp", SamplerType::temperature},
    {"adaptive-p", SamplerType::adaptive_p},
}};

const TypeInfo& info(SamplerType type) {
    for (const TypeInfo& ti : kTypes) {
        if (ti.type == type) return ti;
    }
    return kTypes[0];  // unreachable: every enumerator has a row
}

std::string fmt(float v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

bool finite(float v) {
    return std::isfinite(v);
}

std::string require_unit(const char* name, float v) {
    if (!(v >= 0.0f && v <= 1.0f)) return std::string(name) + " must be between 0 and 1, got " + fmt(v);
    return {};
}

std::string require_finite(const char* name, float v) {
    if (!finite(v)) return std::string(name) + " must be a finite number, got " + fmt(v);
    return {};
}

std::string require_min(const char* name, int32_t v, int32_t min) {
    if (v < min)
        return std::string(name) + " must be >= " + std::to_string(min) + ", got " + std::to_string(v);
    return {};
}

}  // namespace

std::vector<SamplerType> default_sampler_order() {
    return {SamplerType::penalties, SamplerType::dry,       SamplerType::top_n_sigma,
            SamplerType::top_k,     SamplerType::typical_p, SamplerType::top_p,
            SamplerType::min_p,     SamplerType::xtc,       SamplerType::temperature};
}

bool SamplingParams::uses_adaptive_p() const {
    if (adaptive_target >= 0.0f) return true;
    for (SamplerType t : samplers) {
        if (t == SamplerType::adaptive_p) return true;
    }
    return false;
}

std::string_view sampler_type_name(SamplerType type) {
    return info(type).name;
}

char sampler_type_char(SamplerType type) {
    return info(type).code;
}

std::string parse_sampler_names(const std::vector<std::string>& names, std::vector<SamplerType>& out) {
    std::vector<SamplerType> parsed;
    for (const std::string& name : names) {
        bool found = false;
        for (const TypeInfo& ti : kTypes) {
            if (ti.name == name) {
                parsed.push_back(ti.type);
                found = true;
                break;
            }
        }
        for (size_t i = 0; !found && i < kAliases.size(); ++i) {
            if (kAliases[i].first == name) {
                parsed.push_back(kAliases[i].second);
                found = true;
            }
        }
        if (!found) return "unknown sampler name '" + name + "'";
    }
    out = std::move(parsed);
    return {};
}

std::string parse_sampler_chars(std::string_view chars, std::vector<SamplerType>& out) {
    std::vector<SamplerType> parsed;
    for (char c : chars) {
        if (c == 'f') continue;  // tail-free sampling, removed from llama.cpp
        bool found = false;
        for (const TypeInfo& ti : kTypes) {
            if (ti.code == c) {
                parsed.push_back(ti.type);
                found = true;
                break;
            }
        }
        if (!found) return std::string("unknown sampler code '") + c + "' in samplers string";
    }
    out = std::move(parsed);
    return {};
}

std::string validate(const SamplingParams& p, int32_t n_vocab) {
    std::string err;
    auto fail = [&err](std::string e) {
        if (err.empty() && !e.empty()) err = std::move(e);
    };
    if (!(p.temperature >= 0.0f) || !finite(p.temperature)) {
        fail("temperature must be a finite number >= 0, got " + fmt(p.temperature));
    }
    if (!(p.dynatemp_range >= 0.0f) || !finite(p.dynatemp_range)) {
        fail("dynatemp_range must be a finite number >= 0, got " + fmt(p.dynatemp_range));
    }
    fail(require_finite("dynatemp_exponent", p.dynatemp_exponent));
    fail(require_unit("top_p", p.top_p));
    fail(require_unit("min_p", p.min_p));
    fail(require_unit("typical_p", p.typical_p));
    fail(require_finite("top_n_sigma", p.top_n_sigma));
    fail(require_unit("xtc_probability", p.xtc_probability));
    fail(require_unit("xtc_threshold", p.xtc_threshold));
    fail(require_min("min_keep", p.min_keep, 0));

    if (!(p.repeat_penalty > 0.0f) || !finite(p.repeat_penalty)) {
        fail("repeat_penalty must be a finite number > 0, got " + fmt(p.repeat_penalty));
    }
    fail(require_min("repeat_last_n", p.repeat_last_n, -1));
    fail(require_finite("presence_penalty", p.presence_penalty));
    fail(require_finite("frequency_penalty", p.frequency_penalty));

    if (!(p.dry_multiplier >= 0.0f) || !finite(p.dry_multiplier)) {
        fail("dry_multiplier must be a finite number >= 0, got " + fmt(p.dry_multiplier));
    }
    if (!(p.dry_base >= 1.0f) || !finite(p.dry_base)) {
        fail("dry_base must be a finite number >= 1, got " + fmt(p.dry_base));
    }
    fail(require_min("dry_allowed_length", p.dry_allowed_length, 0));
    fail(require_min("dry_penalty_last_n", p.dry_penalty_last_n, -1));
    for (const std::string& breaker : p.dry_sequence_breakers) {
        if (breaker.empty()) fail("dry_sequence_breakers must not contain empty strings");
    }
    // Each breaker is matched against the whole vocabulary when a request starts, on the engine thread.
    if (p.dry_sequence_breakers.size() > kMaxDryBreakers)
        fail("dry_sequence_breakers may hold at most " + std::to_string(kMaxDryBreakers) + " strings, got " +
             std::to_string(p.dry_sequence_breakers.size()));
    if (p.samplers.size() > kMaxSamplers)
        fail("samplers may list at most " + std::to_string(kMaxSamplers) + " samplers, got " +
             std::to_string(p.samplers.size()));

    if (p.mirostat < 0 || p.mirostat > 2) {
        fail("mirostat must be 0 (off), 1 or 2, got " + std::to_string(p.mirostat));
    }
    if (!(p.mirostat_tau >= 0.0f) || !finite(p.mirostat_tau)) {
        fail("mirostat_tau must be a finite number >= 0, got " + fmt(p.mirostat_tau));
    }
    if (!(p.mirostat_eta >= 0.0f) || !finite(p.mirostat_eta)) {
        fail("mirostat_eta must be a finite number >= 0, got " + fmt(p.mirostat_eta));
    }

    if (!(p.adaptive_target <= 1.0f) || !finite(p.adaptive_target)) {
        fail("adaptive_target must be at most 1 (negative disables it), got " + fmt(p.adaptive_target));
    }
    fail(require_finite("adaptive_decay", p.adaptive_decay));

    for (const LogitBias& lb : p.logit_bias) {
        if (lb.token < 0 || (n_vocab > 0 && lb.token >= n_vocab)) {
            fail("logit_bias token " + std::to_string(lb.token) + " is outside the vocabulary");
        }
        if (std::isnan(lb.bias) || lb.bias == std::numeric_limits<float>::infinity()) {
            fail("logit_bias for token " + std::to_string(lb.token) + " must be a number or -inf, got " +
                 fmt(lb.bias));
        }
    }
    fail(require_min("n_probs", p.n_probs, 0));
    return err;
}

}  // namespace engine
