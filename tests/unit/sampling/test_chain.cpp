// SamplerChain: construction order, reproducibility, clone/reset, greedy, bans and grammar interplay.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "engine/sampling/sampler_chain.h"
#include "sampling_test_util.h"

using namespace engine;
using namespace sampling_test;

namespace {

constexpr int32_t kVocab = 32;

// Logits that change from step to step so sequences are not trivially constant.
std::vector<float> step_logits(int step) {
    std::vector<float> out(kVocab);
    for (int i = 0; i < kVocab; ++i) out[static_cast<size_t>(i)] = 3.0f * std::sin(0.7f * i + 1.3f * step);
    return out;
}

std::vector<std::string> pieces() {
    std::vector<std::string> out;
    for (int i = 0; i < kVocab; ++i) out.push_back(i == 5 ? "\n" : "t" + std::to_string(i));
    return out;
}

std::vector<Token> generate(SamplerChain& chain, int steps, int first_step = 0) {
    std::vector<Token> out;
    for (int s = first_step; s < first_step + steps; ++s) {
        const auto logits = step_logits(s);
        const Token t = chain.sample(logits.data());
        chain.accept(t);
        out.push_back(t);
    }
    return out;
}

// Stateful settings everywhere, so clone/reset have something to carry.
SamplingParams busy_params(uint32_t seed) {
    SamplingParams p;
    p.seed = seed;
    p.top_k = 20;
    p.min_p = 0.01f;
    p.temperature = 1.2f;
    p.repeat_penalty = 1.3f;
    p.frequency_penalty = 0.2f;
    p.dry_multiplier = 0.8f;
    p.xtc_probability = 0.5f;
    return p;
}

size_t argmax(const std::vector<float>& v) {
    return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Allows only tokens in `allowed`; counts calls so tests can see which grammar mode ran.
class FakeConstraint : public TokenConstraint {
  public:
    explicit FakeConstraint(std::set<Token> allowed) : allowed_(std::move(allowed)) {}
    void apply(TokenDataArray& cur) override {
        ++apply_calls;
        for (auto& td : cur.data) {
            if (!allowed_.count(td.id)) td.logit = kNegInf;
        }
    }
    bool allows(Token token) override {
        ++allows_calls;
        return allowed_.count(token) > 0;
    }
    void accept(Token token) override { accepted.push_back(token); }
    void reset() override { accepted.clear(); }
    std::unique_ptr<TokenConstraint> clone() const override {
        return std::make_unique<FakeConstraint>(*this);
    }

    int apply_calls = 0;
    int allows_calls = 0;
    std::vector<Token> accepted;

  private:
    std::set<Token> allowed_;
};

std::set<Token> even_tokens() {
    std::set<Token> out;
    for (Token t = 0; t < kVocab; t += 2) out.insert(t);
    return out;
}

}  // namespace

TEST_CASE("chain order follows the params", "[sampling][chain]") {
    SamplingParams p;
    CHECK(SamplerChain(p, kVocab, 128, {}).describe() ==
          "penalties -> dry -> top-n-sigma -> top-k -> typical -> top-p -> min-p -> xtc -> temp -> dist");
    p.logit_bias = {{3, 1.0f}};
    p.samplers = {SamplerType::top_k, SamplerType::temperature};
    p.temperature = 0.0f;
    CHECK(SamplerChain(p, kVocab, 128, {}).describe() == "logit-bias -> top-k -> temp -> greedy");
    p.temperature = 0.7f;
    p.adaptive_target = 0.3f;
    CHECK(SamplerChain(p, kVocab, 128, {}).describe() == "logit-bias -> top-k -> temp -> adaptive-p");
    p.mirostat = 2;
    CHECK(SamplerChain(p, kVocab, 128, {}).describe() == "logit-bias -> temp -> mirostat-v2");
    p.mirostat = 1;
    CHECK(SamplerChain(p, kVocab, 128, {}).describe() == "logit-bias -> temp -> mirostat");
}

TEST_CASE("chain rejects invalid params", "[sampling][chain]") {
    SamplingParams p;
    p.top_p = 2.0f;
    CHECK_THROWS_AS(SamplerChain(p, kVocab, 128, {}), std::invalid_argument);
}

TEST_CASE("same params and seed give the same tokens", "[sampling][chain]") {
    SamplerChain a(busy_params(42), kVocab, 256, pieces());
    SamplerChain b(busy_params(42), kVocab, 256, pieces());
    CHECK(a.seed() == 42u);
    const auto first = generate(a, 60);
    CHECK(first == generate(b, 60));
    SamplerChain c(busy_params(43), kVocab, 256, pieces());
    CHECK(first != generate(c, 60));
}

TEST_CASE("a clone continues exactly like the original", "[sampling][chain]") {
    for (int mirostat : {0, 2}) {
        SamplingParams p = busy_params(7);
        p.mirostat = mirostat;
        SamplerChain chain(p, kVocab, 256, pieces());
        generate(chain, 15);
        SamplerChain copy = chain.clone();
        INFO("mirostat " << mirostat);
        CHECK(generate(chain, 40, 15) == generate(copy, 40, 15));
    }
}

TEST_CASE("reset restores the initial state", "[sampling][chain]") {
    SamplingParams p = busy_params(9);
    p.adaptive_target = 0.3f;
    SamplerChain chain(p, kVocab, 256, pieces());
    const auto first = generate(chain, 40);
    chain.reset();
    CHECK(generate(chain, 40) == first);
}

TEST_CASE("temperature 0 is greedy", "[sampling][chain]") {
    SamplingParams p;
    p.temperature = 0.0f;
    SamplerChain chain(p, kVocab, 256, {});
    for (int s = 0; s < 20; ++s) {
        const auto logits = step_logits(s);
        CHECK(chain.sample(logits.data()) == static_cast<Token>(argmax(logits)));
    }
}

TEST_CASE("logit_bias -inf bans a token", "[sampling][chain]") {
    const auto logits = step_logits(0);
    const auto best = static_cast<Token>(argmax(logits));
    SamplingParams p;
    p.temperature = 0.0f;
    p.logit_bias = {{best, -std::numeric_limits<float>::infinity()}};
    SamplerChain greedy(p, kVocab, 256, {});
    const Token t = greedy.sample(logits.data());
    CHECK(t != best);

    p.temperature = 1.0f;
    p.top_k = 0;
    p.min_p = 0.0f;
    SamplerChain random(p, kVocab, 256, {});
    for (int i = 0; i < 200; ++i) REQUIRE(random.sample(logits.data()) != best);
}

TEST_CASE("a chain with every token banned throws", "[sampling][chain]") {
    SamplingParams p;
    for (Token t = 0; t < kVocab; ++t) p.logit_bias.push_back({t, -std::numeric_limits<float>::infinity()});
    SamplerChain chain(p, kVocab, 256, {});
    const auto logits = step_logits(0);
    CHECK_THROWS_AS(chain.sample(logits.data()), std::runtime_error);
}

TEST_CASE("repeat_last_n -1 is the context size", "[sampling][chain]") {
    // Greedy over 5 > 4 > 3 > 2 > ... with a heavy presence penalty: a token is avoided while it is among
    // the last n_ctx = 3 tokens.
    SamplingParams p;
    p.temperature = 0.0f;
    p.repeat_last_n = -1;
    p.presence_penalty = 100.0f;
    SamplerChain chain(p, 6, 3, {});
    const std::vector<float> logits = {5, 4, 3, 2, 1, 0};
    std::vector<Token> seq;
    for (int i = 0; i < 5; ++i) {
        seq.push_back(chain.sample(logits.data()));
        chain.accept(seq.back());
    }
    CHECK(seq == std::vector<Token>{0, 1, 2, 3, 0});
}

TEST_CASE("dry_penalty_last_n -1 is the context size too", "[sampling][chain]") {
    // History a b c d a b c: d would extend "a b c" and costs 2 with a window of 100, but nothing repeats in
    // the last 4 tokens (d a b c). Greedy prefers d by 1.5 over e.
    SamplingParams p;
    p.temperature = 0.0f;
    p.samplers = {SamplerType::dry};
    p.dry_multiplier = 1.0f;
    p.dry_base = 2.0f;
    p.dry_penalty_last_n = -1;
    const std::vector<std::string> text = {"a", "b", "c", "d", "e"};
    const std::vector<float> logits = {0.0f, 0.0f, 0.0f, 2.0f, 0.5f};
    auto next_after_history = [&](int32_t n_ctx) {
        SamplerChain chain(p, 5, n_ctx, text);
        for (Token t : {0, 1, 2, 3, 0, 1, 2}) chain.accept(t);
        return chain.sample(logits.data());
    };
    CHECK(next_after_history(100) == 4);
    CHECK(next_after_history(4) == 3);
}

TEST_CASE("grammar by rejection samples only allowed tokens", "[sampling][chain][grammar]") {
    auto grammar = std::make_unique<FakeConstraint>(even_tokens());
    auto* fake = grammar.get();
    SamplerChain chain(busy_params(3), kVocab, 256, pieces(), std::move(grammar), false);
    const auto tokens = generate(chain, 50);
    for (Token t : tokens) CHECK(t % 2 == 0);
    CHECK(fake->allows_calls == 50);
    CHECK(fake->apply_calls > 0);   // some first picks were odd and resampled
    CHECK(fake->apply_calls < 50);  // and some were fine as drawn
    CHECK(fake->accepted == tokens);
}

TEST_CASE("grammar by rejection leaves allowed picks alone", "[sampling][chain][grammar]") {
    // Greedy on logits whose best token is even: nothing is ever rejected, so the grammar never filters.
    auto grammar = std::make_unique<FakeConstraint>(even_tokens());
    auto* fake = grammar.get();
    SamplingParams p;
    p.temperature = 0.0f;
    SamplerChain chain(p, 4, 256, {}, std::move(grammar), false);
    const std::vector<float> logits = {1.0f, 0.0f, 3.0f, 2.0f};
    CHECK(chain.sample(logits.data()) == 2);
    CHECK(fake->apply_calls == 0);
    // Best token odd: rejected, then the grammar filters and the best allowed one wins.
    const std::vector<float> odd_best = {1.0f, 0.0f, 0.5f, 2.0f};
    CHECK(chain.sample(odd_best.data()) == 0);
    CHECK(fake->apply_calls == 1);
}

TEST_CASE("grammar-first filters before sampling", "[sampling][chain][grammar]") {
    auto grammar = std::make_unique<FakeConstraint>(even_tokens());
    auto* fake = grammar.get();
    SamplerChain chain(busy_params(3), kVocab, 256, pieces(), std::move(grammar), true);
    for (Token t : generate(chain, 50)) CHECK(t % 2 == 0);
    CHECK(fake->apply_calls == 50);
    CHECK(fake->allows_calls == 0);
    CHECK(chain.describe().rfind("grammar -> ", 0) == 0);
}

TEST_CASE("prompt tokens skip the grammar, clone and reset carry it", "[sampling][chain][grammar]") {
    auto grammar = std::make_unique<FakeConstraint>(even_tokens());
    auto* fake = grammar.get();
    SamplerChain chain(SamplingParams{}, kVocab, 256, {}, std::move(grammar), false);
    chain.accept(7, false);
    CHECK(fake->accepted.empty());
    chain.accept(4);
    CHECK(fake->accepted == std::vector<Token>{4});
    SamplerChain copy = chain.clone();
    copy.accept(6);
    CHECK(fake->accepted == std::vector<Token>{4});  // the copy owns its own grammar
    CHECK(copy.has_grammar());
    chain.reset();
    CHECK(fake->accepted.empty());
}
