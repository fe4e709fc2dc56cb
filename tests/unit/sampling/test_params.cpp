// SamplingParams defaults, sampler-order parsing and validation messages.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "engine/sampling/sampling_params.h"

using namespace engine;
using T = SamplerType;

TEST_CASE("sampling params have llama-server's defaults", "[sampling][params]") {
    const SamplingParams p;
    CHECK(p.temperature == 0.8f);
    CHECK(p.top_k == 40);
    CHECK(p.top_p == 0.95f);
    CHECK(p.min_p == 0.05f);
    CHECK(p.typical_p == 1.0f);
    CHECK(p.top_n_sigma == -1.0f);
    CHECK(p.xtc_probability == 0.0f);
    CHECK(p.xtc_threshold == 0.1f);
    CHECK(p.repeat_penalty == 1.0f);
    CHECK(p.repeat_last_n == 64);
    CHECK(p.dry_base == 1.75f);
    CHECK(p.dry_allowed_length == 2);
    CHECK(p.dry_penalty_last_n == 64);
    CHECK(p.dry_sequence_breakers == std::vector<std::string>{"\n", ":", "\"", "*"});
    CHECK(p.mirostat == 0);
    CHECK(p.mirostat_tau == 5.0f);
    CHECK(p.mirostat_eta == 0.1f);
    CHECK(p.adaptive_target == -1.0f);
    CHECK(p.adaptive_decay == 0.9f);
    CHECK(p.seed == 0xFFFFFFFFu);
    CHECK(p.samplers == std::vector<T>{T::penalties, T::dry, T::top_n_sigma, T::top_k, T::typical_p, T::top_p,
                                       T::min_p, T::xtc, T::temperature});
    CHECK_FALSE(p.uses_adaptive_p());
    CHECK(validate(p).empty());
}

TEST_CASE("sampler names: canonical names and aliases", "[sampling][params]") {
    std::vector<T> out;
    CHECK(parse_sampler_names({"top_k", "typ_p", "top_p", "min_p", "temperature"}, out).empty());
    CHECK(out == std::vector<T>{T::top_k, T::typical_p, T::top_p, T::min_p, T::temperature});
    CHECK(parse_sampler_names({"top-k", "nucleus", "typical", "min-p", "temp", "adaptive-p", "top-n-sigma"},
                              out)
              .empty());
    CHECK(out == std::vector<T>{T::top_k, T::top_p, T::typical_p, T::min_p, T::temperature, T::adaptive_p,
                                T::top_n_sigma});
    for (T t : out) {
        std::vector<T> round;
        CHECK(parse_sampler_names({std::string(sampler_type_name(t))}, round).empty());
        CHECK(round == std::vector<T>{t});
    }
}

TEST_CASE("unknown sampler names are rejected with the name", "[sampling][params]") {
    std::vector<T> out = {T::top_k};
    const std::string err = parse_sampler_names({"top_k", "top_q"}, out);
    CHECK(err.find("top_q") != std::string::npos);
    CHECK(out == std::vector<T>{T::top_k});  // untouched on error
}

TEST_CASE("sampler short strings", "[sampling][params]") {
    std::vector<T> out;
    CHECK(parse_sampler_chars("kfypmxt", out).empty());  // 'f' (removed tail-free) is skipped
    CHECK(out == std::vector<T>{T::top_k, T::typical_p, T::top_p, T::min_p, T::xtc, T::temperature});
    CHECK(parse_sampler_chars("edskypmxta", out).empty());
    CHECK(out.size() == 10);
    CHECK(out.front() == T::penalties);
    CHECK(out.back() == T::adaptive_p);
    CHECK(sampler_type_char(T::dry) == 'd');
    CHECK(parse_sampler_chars("kq", out).find("'q'") != std::string::npos);
}

TEST_CASE("validation names the invalid setting", "[sampling][params]") {
    auto error_for = [](auto change) {
        SamplingParams p;
        change(p);
        return validate(p, 100);
    };
    CHECK(error_for([](SamplingParams& p) { p.top_p = 1.5f; }).find("top_p") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.top_p = -0.1f; }).find("top_p") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.min_p = 2.0f; }).find("min_p") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.n_probs = -1; }).find("n_probs") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.temperature = -1.0f; }).find("temperature") !=
          std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.temperature = std::nanf(""); }).find("temperature") !=
          std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.mirostat = 3; }).find("mirostat") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.repeat_last_n = -2; }).find("repeat_last_n") !=
          std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.repeat_penalty = 0.0f; }).find("repeat_penalty") !=
          std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.dry_base = 0.5f; }).find("dry_base") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) {
              p.dry_sequence_breakers = {""};
          }).find("dry_sequence_breakers") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.xtc_probability = 1.1f; }).find("xtc_probability") !=
          std::string::npos);
    CHECK(error_for([](SamplingParams& p) { p.adaptive_target = 1.5f; }).find("adaptive_target") !=
          std::string::npos);
    CHECK(error_for([](SamplingParams& p) {
              p.logit_bias = {{100, 1.0f}};
          }).find("logit_bias") != std::string::npos);
    CHECK(error_for([](SamplingParams& p) {
              p.logit_bias = {{1, std::numeric_limits<float>::infinity()}};
          }).find("logit_bias") != std::string::npos);
    // Valid edges.
    CHECK(error_for([](SamplingParams& p) {
              p.top_p = 0.0f;
              p.min_p = 1.0f;
              p.temperature = 0.0f;
              p.logit_bias = {{99, -std::numeric_limits<float>::infinity()}};
              p.adaptive_target = 0.5f;
              p.adaptive_decay = 2.0f;  // clamped by the sampler
          }).empty());
}

TEST_CASE("adaptive-p is on with a target or when listed", "[sampling][params]") {
    SamplingParams p;
    p.adaptive_target = 0.4f;
    CHECK(p.uses_adaptive_p());
    SamplingParams q;
    q.samplers.push_back(T::adaptive_p);
    CHECK(q.uses_adaptive_p());
}
