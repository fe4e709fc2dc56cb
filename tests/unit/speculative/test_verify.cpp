// Exactness of speculative verification: the p/q acceptance rule against its analytic result, and the
// emitted tokens' distribution with a draft against plain sampling (chi-square).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>

#include "engine/speculative/draft_controller.h"
#include "engine/speculative/draft_model_cost.h"
#include "engine/speculative/streams_ahead.h"
#include "engine/speculative/verify.h"

using namespace engine;
using namespace engine::spec;

namespace {

SamplingParams plain_params(uint32_t seed) {
    SamplingParams p;
    p.seed = seed;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    return p;
}

std::vector<double> softmax(const std::vector<float>& l) {
    double mx = -1e30, s = 0;
    for (float x : l) mx = std::max(mx, (double)x);
    std::vector<double> p;
    for (float x : l) p.push_back(std::exp(x - mx)), s += p.back();
    for (double& x : p) x /= s;
    return p;
}

}  // namespace

TEST_CASE("p/q rule: accepting with min(1, p/q) and drawing from the residual emits exactly p",
          "[speculative][verify]") {
    const std::vector<std::vector<double>> ps = {
        {0.5, 0.2, 0.1, 0.1, 0.1}, {0.05, 0.05, 0.8, 0.05, 0.05}, {0.2, 0.2, 0.2, 0.2, 0.2}, {1, 0, 0, 0, 0}};
    const std::vector<std::vector<double>> qs = {
        {0.1, 0.6, 0.1, 0.1, 0.1}, {0.2, 0.2, 0.2, 0.2, 0.2}, {0, 0, 0, 0, 1}, {0.5, 0.2, 0.1, 0.1, 0.1}};
    for (const auto& p : ps)
        for (const auto& q : qs) {
            // P(emit t) = q(t) a(t) + (1 - sum_s q(s) a(s)) r(t)
            double accept_mass = 0;
            for (size_t s = 0; s < q.size(); ++s) accept_mass += q[s] * acceptance_probability(p[s], q[s]);
            const std::vector<double> r = residual_distribution(p, q);
            for (size_t t = 0; t < p.size(); ++t) {
                const double emit = q[t] * acceptance_probability(p[t], q[t]) + (1 - accept_mass) * r[t];
                REQUIRE(emit == Approx(p[t]).margin(1e-12));
            }
        }
    REQUIRE(acceptance_probability(0.3, 0.6) == Approx(0.5));
    REQUIRE(acceptance_probability(0.6, 0.3) == 1.0);
    REQUIRE(acceptance_probability(0.0, 0.5) == 0.0);
}

TEST_CASE("verification with a draft keeps the distribution of the next two tokens (chi-square, 20,000 draws)",
          "[speculative][verify]") {
    // Two fixed target rows and a draft distribution that differs from both. Each trial generates two
    // tokens: with speculation, a 1-token draft drawn from q is verified (p/q rule), and a second step
    // follows when the first emitted one token only; without, two plain draws. Both empirical joint
    // distributions are tested against p0(a) p1(b) with a chi-square test over the 25 cells: 24 degrees
    // of freedom, critical value 51.18 at significance 0.001 (a correct sampler fails 1 run in 1000).
    const std::vector<float> row0 = {2.0f, 1.0f, 0.5f, 0.0f, -1.0f};
    const std::vector<float> row1 = {-0.5f, 0.5f, 1.5f, 0.2f, 0.0f};
    const std::vector<double> p0 = softmax(row0), p1 = softmax(row1);
    const std::vector<float> q = {0.1f, 0.4f, 0.3f, 0.1f, 0.1f};
    const std::vector<std::string> pieces(5);
    const int n = 20000;
    std::map<std::pair<int, int>, int> spec_counts, plain_counts;
    std::mt19937 draft_rng(12345);
    std::discrete_distribution<int> qdist(q.begin(), q.end());
    size_t n_accepted = 0;
    for (int i = 0; i < n; ++i) {
        {
            SamplerChain chain(plain_params((uint32_t)i), 5, 64, pieces);
            std::mt19937 rng((uint32_t)i * 7919u + 1);
            const Token d = qdist(draft_rng);
            const float* rows[2] = {row0.data(), row1.data()};
            const std::vector<std::vector<float>> qq = {q};
            Verified v = verify_by_ratio(chain, rows, std::vector<Token>{d}, qq, rng, {});
            n_accepted += v.n_accepted();
            if (v.tokens.size() == 1) {
                const Token d2 = qdist(draft_rng);
                const float* rows2[2] = {row1.data(), row1.data()};
                Verified v2 = verify_by_ratio(chain, rows2, std::vector<Token>{d2}, qq, rng, {});
                v.tokens.push_back(v2.tokens[0]);
            }
            ++spec_counts[{v.tokens[0], v.tokens[1]}];
        }
        {
            SamplerChain chain(plain_params((uint32_t)i), 5, 64, pieces);
            const Token a = chain.sample(row0.data());
            chain.accept(a);
            const Token b = chain.sample(row1.data());
            ++plain_counts[{a, b}];
        }
    }
    const auto chi2 = [&](std::map<std::pair<int, int>, int>& counts) {
        double x = 0;
        for (int a = 0; a < 5; ++a)
            for (int b = 0; b < 5; ++b) {
                const double e = n * p0[(size_t)a] * p1[(size_t)b];
                const double o = counts[{a, b}];
                x += (o - e) * (o - e) / e;
            }
        return x;
    };
    const double x_spec = chi2(spec_counts), x_plain = chi2(plain_counts);
    INFO("chi-square with speculation " << x_spec << ", plain " << x_plain);
    CHECK(x_plain < 51.18);
    REQUIRE(x_spec < 51.18);
    // The draft was really used: a sizable share of draft tokens was accepted.
    REQUIRE(n_accepted > (size_t)n / 5);
}

TEST_CASE("verification by sampling emits the tokens plain decoding emits, whatever the draft",
          "[speculative][verify]") {
    const std::vector<float> row = {0.3f, 1.2f, 0.1f, 0.9f, 0.0f};
    const std::vector<std::string> pieces(5);
    for (uint32_t seed = 1; seed < 200; ++seed) {
        SamplerChain plain(plain_params(seed), 5, 64, pieces);
        std::vector<Token> want;
        for (int i = 0; i < 4; ++i) {
            const Token t = plain.sample(row.data());
            plain.accept(t);
            want.push_back(t);
        }
        SamplerChain chain(plain_params(seed), 5, 64, pieces);
        std::vector<Token> got;
        std::mt19937 g(seed);
        while (got.size() < 4) {
            std::vector<Token> draft;
            for (size_t k = 0; k < 3; ++k) draft.push_back((Token)(g() % 5));
            std::vector<const float*> rows(4, row.data());
            const Verified v = verify_by_sampling(chain, rows, draft, {});
            got.insert(got.end(), v.tokens.begin(), v.tokens.end());
        }
        got.resize(4);
        REQUIRE(got == want);
    }
}

TEST_CASE("p/q verification refuses chains whose pick is not a plain draw", "[speculative][verify]") {
    const std::vector<std::string> pieces(5);
    SamplingParams greedy = plain_params(1);
    greedy.temperature = 0;
    SamplerChain chain(greedy, 5, 64, pieces);
    REQUIRE_FALSE(chain.plain_draw());
    SamplingParams mirostat = plain_params(1);
    mirostat.mirostat = 2;
    REQUIRE_FALSE(SamplerChain(mirostat, 5, 64, pieces).plain_draw());
    REQUIRE(SamplerChain(plain_params(1), 5, 64, pieces).plain_draw());
    const std::vector<float> row(5, 0.0f);
    const float* rows[2] = {row.data(), row.data()};
    std::mt19937 rng(1);
    const std::vector<std::vector<float>> q = {std::vector<float>(5, 0.2f)};
    REQUIRE_THROWS(verify_by_ratio(chain, rows, std::vector<Token>{1}, q, rng, {}));
}

TEST_CASE("draft controller: drafts when they pay, backs off to rare probes when they do not",
          "[speculative][controller]") {
    DraftController good;
    for (int i = 0; i < 50; ++i) good.observe(4, 4);
    REQUIRE(good.acceptance() > 0.9);
    REQUIRE(good.want(16, 0.02, 0.0) >= 8);
    REQUIRE_FALSE(good.probing());
    // Expensive extra tokens shorten the draft.
    REQUIRE(good.want(16, 0.5, 0.0) < good.want(16, 0.02, 0.0));

    DraftController bad;
    for (int i = 0; i < 50; ++i) bad.observe(2, 0);
    REQUIRE(bad.acceptance() < 0.1);
    int drafted = 0;
    for (int i = 0; i < 1000; ++i) {
        const bool probe = bad.want(16, 0.05, 0.0) > 0;
        REQUIRE(bad.probing() == probe);  // each of its drafts is a probe, and says so
        drafted += probe ? 1 : 0;
    }
    // Probes only: the interval doubles up to 64 steps.
    REQUIRE(drafted > 0);
    REQUIRE(drafted < 30);
    // A draft model as slow as the target never pays, even at full acceptance.
    DraftController costly;
    for (int i = 0; i < 50; ++i) costly.observe(4, 4);
    int costly_drafts = 0;
    for (int i = 0; i < 1000; ++i) costly_drafts += costly.want(16, 0.05, 1.0) > 0 ? 1 : 0;
    REQUIRE(costly_drafts < 30);
    // Each of its probes makes the draft model evaluate all it missed (about a prefill of those tokens), so
    // they come ever more rarely: at steps 256, 768, 1792, ... (then every 4096), 7 in 20,000 steps
    // where a fixed interval of 256 would make 78; once drafting pays, it resumes at once.
    DraftController slow;
    std::vector<int> probe_steps;
    for (int i = 1; i <= 20000; ++i)
        if (slow.want(16, 0.05, 1.0) > 0) probe_steps.push_back(i);
    REQUIRE(probe_steps == std::vector<int>{256, 768, 1792, 3840, 7936, 12032, 16128});
    for (int i = 0; i < 50; ++i) slow.observe(4, 4);
    REQUIRE(slow.want(16, 0.05, 0.1) > 0);
    // ... and, should it stop paying again, the probes start over from every 256 steps.
    int after = 0;
    for (int i = 1; i <= 256; ++i) after += slow.want(16, 0.05, 1.0) > 0;
    REQUIRE(after == 1);
    // An n-gram drafter whose verification costs too much (a loaded machine) keeps probing every 256
    // steps: its probes cost no catch-up.
    DraftController ngram;
    int ngram_probes = 0;
    for (int i = 1; i <= 2048; ++i) ngram_probes += ngram.want(16, 1.0, 0.0) > 0;
    REQUIRE(ngram_probes == 8);
    // With a floor (--draft-min, ngram-mod's n-min) no shorter length is chosen, and the probes that let
    // drafting resume are at least that long; a cap below the floor drafts nothing.
    DraftController floored;
    for (int i = 0; i < 50; ++i) floored.observe(2, 0);
    int probes = 0;
    for (int i = 0; i < 1000; ++i) {
        const int32_t k = floored.want(16, [](int32_t k) { return 0.05 * k; }, 0.0, 5);
        REQUIRE((k == 0 || k >= 5));
        probes += k > 0;
    }
    REQUIRE(probes > 0);
    REQUIRE(good.want(16, [](int32_t k) { return 0.02 * k; }, 0.0, 3) >= 3);
    REQUIRE(good.want(2, [](int32_t k) { return 0.02 * k; }, 0.0, 3) == 0);
}

TEST_CASE("step cost model recovers a fixed and a per-token cost", "[speculative][controller]") {
    StepCostModel m;
    REQUIRE(m.extra_token_ratio() == Approx(0.05));  // the prior
    for (int i = 0; i < 200; ++i) {
        const double n = 1 + i % 5;
        m.observe(n, 0.001 + 0.0001 * n);
    }
    REQUIRE(m.step_seconds(1) == Approx(0.0011).epsilon(1e-6));
    REQUIRE(m.extra_token_ratio() == Approx(0.0001 / 0.0011).epsilon(1e-6));
}

TEST_CASE("step cost model: measured per step size, leaning on the fit where few steps were seen",
          "[speculative][controller]") {
    StepCostModel m;
    // Steps cost a fixed part and a tile of 4 rows at a time: 5 tokens cost as much as 8.
    const auto cost = [](int n) { return 0.001 + 0.0004 * ((n + 3) / 4); };
    for (int i = 0; i < 400; ++i) {
        const int n = 1 + i % 8;
        m.observe(n, cost(n));
    }
    for (int n = 1; n <= 8; ++n) CHECK(m.measured_seconds(n) == Approx(cost(n)).epsilon(0.02));
    // One token past a tile costs the tile; one within it costs nothing.
    CHECK(m.extra_cost(4, 1) == Approx(0.0004 / 0.0014).epsilon(0.12));
    CHECK(m.extra_cost(5, 3) < 0.25 * m.extra_cost(4, 1));
    CHECK(m.extra_cost(4, 0) == 0.0);
    // A size never seen: the fit.
    CHECK(m.measured_seconds(40) == Approx(m.step_seconds(40)));
    // Before steps of different sizes were seen (no slope), extra tokens cost the prior, not nothing.
    StepCostModel flat;
    REQUIRE(flat.extra_cost(4, 2) == Approx(0.10));
    for (int i = 0; i < 50; ++i) flat.observe(4, 0.002);
    CHECK(flat.extra_cost(4, 1) == Approx(0.05));
    CHECK(flat.extra_cost(4, 3) == Approx(0.15));
    // One interrupted step does not make its size look expensive: clipped to 3x the fit.
    StepCostModel j;
    for (int i = 0; i < 200; ++i) j.observe(1 + i % 2, 0.001 + 0.0001 * (1 + i % 2));
    const double before = j.measured_seconds(2);
    j.observe(2, 1.0);
    CHECK(j.measured_seconds(2) < 1.5 * before);
}

TEST_CASE("step cost model: steps of the same size are priced per number of streams", "[speculative][controller]") {
    // As measured on a TinyLlama-shaped model with a draft model (2 vCPUs): one stream's token with a
    // draft of n-1 tokens, then four streams decoding plainly (4 tokens, cheaper than one stream's 4).
    StepCostModel m;
    const double one[] = {0, 0.043, 0.055, 0.063, 0.073, 0.078, 0.087};
    for (int i = 0; i < 300; ++i) {
        const int n = 1 + i % 6;
        m.observe(n, one[n], 1);
    }
    for (int i = 0; i < 100; ++i) m.observe(4, 0.060, 4);
    CHECK(m.measured_seconds(4, 4) == Approx(0.060).epsilon(0.03));
    CHECK(m.measured_seconds(4, 1) == Approx(0.073).epsilon(0.03));
    // Four streams' first drafts: the one-stream steps read as four-stream steps made a draft token look
    // nearly free (78 - 73 ms = 7 % of the step); now it costs about a token of the fitted slope (one
    // stream: 7-12 ms a token) on top of the four-stream step.
    CHECK(m.extra_cost(4, 1, 4) > 0.10);
    CHECK(m.extra_cost(4, 1, 4) < 0.25);
    // Once four-stream steps with drafts are measured, they price the drafts.
    for (int i = 0; i < 100; ++i) m.observe(6, 0.091, 4);
    CHECK(m.extra_cost(4, 2, 4) == Approx((0.091 - 0.060) / 0.060).epsilon(0.05));
    // A slow base step does not make a larger one free: half the slope at least.
    StepCostModel noisy;
    for (int i = 0; i < 300; ++i) noisy.observe(1 + i % 6, one[1 + i % 6], 1);
    for (int i = 0; i < 20; ++i) noisy.observe(4, 0.090, 4);
    noisy.observe(5, 0.050, 4);
    CHECK(noisy.extra_cost(4, 1, 4) > 0.0);
    // A plain size not seen while drafts are (every step drafts): larger steps seen bound its price.
    StepCostModel drafting;
    for (int i = 0; i < 300; ++i) drafting.observe(1 + i % 6, one[1 + i % 6], 1);
    drafting.observe(4, 0.159, 4);  // one slow step
    for (int i = 0; i < 50; ++i) drafting.observe(6 + i % 2, 0.046 + 0.004 * (i % 2), 4);
    CHECK(drafting.measured_seconds(4, 4) <= Approx(0.046).epsilon(0.01));
    CHECK(drafting.measured_seconds(7, 4) == Approx(0.050).epsilon(0.02));
}

TEST_CASE("draft controller: probes that lose time stay within their share of it", "[speculative][controller]") {
    // A draft model beside other streams: two draft tokens cost the batch 0.6 plain steps, the draft model
    // 0.3 a position and 0.3 a call, acceptance about 0.6: no length pays, though one always accepted
    // would (so this is not the rare-probe case of a drafter too slow at any acceptance). A 2-token
    // probe loses about half a step; probes accepted in part used to bring the interval back to 4 steps.
    const auto extra = [](int32_t k) { return 0.3 * k; };
    const auto run = [&](double catch_up) {
        DraftController c;
        int probes = 0;
        for (int i = 0; i < 2000; ++i) {
            const int32_t k = c.want(16, extra, 0.3, 1, 0.3, catch_up);
            if (k <= 0) continue;
            REQUIRE(c.probing());
            ++probes;
            c.observe(k, probes % 3 == 0 ? 0 : 1);
        }
        return probes;
    };
    const int probes = run(0.0);
    CHECK(probes > 0);
    // At most 4 % of the time lost: about 0.5 steps per probe.
    CHECK(probes * 0.5 <= 0.04 * 2000 + 1);
    // A probe's own catch-up (2 plain steps here, against 0.3 spread over the reply) counts whole: probes
    // come as much rarer as they cost more.
    DraftController dear;
    int dear_probes = 0;
    for (int i = 0; i < 2000; ++i) {
        const int32_t k = dear.want(16, extra, 0.3, 1, 0.3, 0.0, 2.0);
        if (k <= 0) continue;
        ++dear_probes;
        dear.observe(k, dear_probes % 3 == 0 ? 0 : 1);
    }
    CHECK(dear_probes > 0);
    CHECK(dear_probes * 2.2 <= 0.04 * 2000 + 2.2);
    CHECK(dear_probes < probes);
    // Beside three other streams each probe delays all four: the budget is theirs together.
    DraftController shared;
    int shared_probes = 0;
    for (int i = 0; i < 2000; ++i) {
        const int32_t k = shared.want(16, extra, 0.3, 1, 0.3, 0.0, -1.0, 4);
        if (k <= 0) continue;
        ++shared_probes;
        shared.observe(k, shared_probes % 3 == 0 ? 0 : 1);
    }
    CHECK(shared_probes > 0);
    CHECK(shared_probes * 0.5 <= 0.01 * 2000 + 1);
    // When catching up on the missed tokens alone costs more than that share, no probe at all.
    CHECK(run(0.05) == 0);
    // The price of a draft includes its catch-up: a slot far behind with few tokens left does not draft
    // where one that has kept up does.
    DraftController good;
    for (int i = 0; i < 50; ++i) good.observe(4, 3);
    CHECK(good.want(16, [](int32_t k) { return 0.05 * k; }, 0.1, 1, 0.05) > 0);
    CHECK(good.want(2, [](int32_t k) { return 0.05 * k; }, 0.1, 1, 0.05 + 200 * 0.02 / 2) == 0);
}

TEST_CASE("catch-up cost: the per-token part, not the per-call overhead", "[speculative][controller]") {
    CatchUpCost c;
    REQUIRE(c.per_token() == 0.0);
    // Only short catch-ups so far (1-2 tokens): no slope yet.
    for (int i = 0; i < 20; ++i) c.observe(1 + i % 2, 0.004 + 0.0007 * (1 + i % 2));
    CHECK(c.per_token() == 0.0);
    // A draft model with 4 ms per call and 0.7 ms a token: 10-token catch-ups cost 1.1 ms a token when
    // divided, 0.7 ms fitted.
    for (int i = 0; i < 40; ++i) {
        const int n = i % 4 == 0 ? 10 : 1 + i % 2;
        c.observe(n, 0.004 + 0.0007 * n);
    }
    CHECK(c.per_token() == Approx(0.0007).epsilon(0.01));
    c.observe(0, 1.0);  // a call with nothing to catch up on says nothing
    CHECK(c.per_token() == Approx(0.0007).epsilon(0.01));
}

TEST_CASE("draft model cost: the first call is not timed, later ones are averaged", "[speculative][controller]") {
    DraftModelCost c;
    REQUIRE(c.position_seconds() == 0.0);
    c.observe(1, 5, 0.019, 3, 3 * 0.025);  // weights paged in: 25 ms a position
    CHECK(c.position_seconds() == 0.0);
    CHECK(c.call_seconds() == 0.0);
    for (int i = 0; i < 50; ++i) c.observe(1, 1, 0.0015, 4, 4 * 0.004);
    CHECK(c.position_seconds() == Approx(0.004));
    CHECK(c.call_seconds() == Approx(0.0015).epsilon(0.01));
    c.observe(1, 1, 0.0015, 0, 0.0);  // nothing drafted: says nothing
    CHECK(c.position_seconds() == Approx(0.004));
    // After sleeping, the first call pages the weights in again: not timed either.
    const double call = c.call_seconds();
    c.skip_next_call();
    c.observe(1, 1, 0.019, 3, 3 * 0.025);
    CHECK(c.position_seconds() == Approx(0.004));
    CHECK(c.call_seconds() == call);
    c.observe(1, 1, 0.0015, 4, 4 * 0.004);
    CHECK(c.position_seconds() == Approx(0.004));
}

TEST_CASE("draft model cost: short catch-ups are priced per call, a new prompt's per token and once",
          "[speculative][controller]") {
    // A draft model with 1 ms per call and 1 ms per token caught up: calls catch up 1-8 tokens a slot
    // (the last accepted draft token, steps decoded plainly), now and then a 40-token prompt.
    DraftModelCost c;
    c.observe(1, 40, 0.041, 4, 0.016);  // the first call: not timed
    for (int i = 0; i < 200; ++i) {
        const int n = i % 10 == 9 ? 40 : 1 + i % 8;
        c.observe(1, n, 0.001 + 0.001 * n, 4, 0.016);
    }
    // Per call: what calls of at most 8 tokens took (5.5 ms on average here), not the prompts' 41 ms.
    CHECK(c.call_seconds() > 0.002);
    CHECK(c.call_seconds() < 0.009);
    CHECK(c.per_token_seconds() == Approx(0.001).epsilon(0.05));
    const double call = c.call_seconds();
    // Beyond 8 tokens, what drafting from now on pays once, spread over the tokens still to come.
    CHECK(c.fixed_seconds(0, 10) == Approx(call));
    CHECK(c.fixed_seconds(8, 10) == Approx(call));
    CHECK(c.fixed_seconds(28, 10) == Approx(call + 20 * c.per_token_seconds() / 10));
    CHECK(c.fixed_seconds(28, 0) == Approx(call + 20 * c.per_token_seconds()));
    // A probe's catch-up is its own: not spread.
    CHECK(c.probe_seconds(28) == Approx(call + 20 * c.per_token_seconds()));
    CHECK(c.probe_seconds(4) == Approx(call));
    // Four slots in one call: up to 32 tokens are the per-call kind.
    c.observe(4, 32, 0.5, 4, 0.016);
    CHECK(c.call_seconds() > call);
    const double after = c.call_seconds();
    c.observe(1, 9, 0.5, 4, 0.016);
    CHECK(c.call_seconds() == after);
}

TEST_CASE("draft model cost: before catch-ups are timed, a probe's catch-up is priced as drafted positions",
          "[speculative][controller]") {
    DraftModelCost c;
    c.observe(1, 30, 0.03, 4, 0.016);  // the first call: not timed
    c.observe(1, 2, 0.002, 4, 0.016);  // a position 4 ms; too few calls to fit the catch-up
    REQUIRE(c.per_token_seconds() == 0.0);
    CHECK(c.fixed_seconds(48, 40) == Approx(c.call_seconds()));  // drafts: not known, not charged
    CHECK(c.probe_seconds(48) == Approx(c.call_seconds() + 40 * c.position_seconds()));
}

TEST_CASE("draft model cost: a token caught up never costs more than a drafted position", "[speculative][controller]") {
    DraftModelCost c;
    c.observe(1, 0, 0.0, 1, 0.001);
    for (int i = 0; i < 40; ++i) {
        const int n = 1 + (i % 4) * 4;
        c.observe(1, n, 0.003 * n, 1, 0.001);  // catch-up 3 ms a token, a position 1 ms
    }
    CHECK(c.per_token_seconds() == Approx(0.001));
}

TEST_CASE("draft controller: a measured step cost that jumps keeps drafts short", "[speculative][controller]") {
    DraftController good;
    for (int i = 0; i < 50; ++i) good.observe(8, 8);
    // Tokens past the first three cost a step each: a draft of three.
    CHECK(good.want(16, [](int32_t k) { return k <= 3 ? 0.05 * k : 0.15 + (k - 3); }, 0.0) == 3);
    CHECK(good.want(16, [](int32_t k) { return 0.02 * k; }, 0.0) >= 8);
}

TEST_CASE("draft controller: a draft model's cost per call makes one-token drafts unattractive, not long ones",
          "[speculative][controller]") {
    // Acceptance about 2/3, each position 0.1 of a plain step, extra target tokens 0.05 each. Without a
    // cost per call a one-token draft pays (1.67 tokens for 1.15 steps); with the catch-up decode a draft
    // call needs (0.5 here) it does not, while longer drafts share that cost and still pay.
    DraftController c;
    for (int i = 0; i < 100; ++i) c.observe(4, 2);
    REQUIRE(c.acceptance() > 0.6);
    REQUIRE(c.acceptance() < 0.75);
    const auto extra = [](int32_t k) { return 0.05 * k; };
    REQUIRE(c.want(1, extra, 0.1, 1, 0.0) == 1);
    REQUIRE(c.want(1, extra, 0.1, 1, 0.5) == 0);
    REQUIRE_FALSE(c.probing());
    const int32_t k = c.want(16, extra, 0.1, 1, 0.5);
    REQUIRE(k >= 2);
    // As long as without the cost per call, or longer: it is spread over more positions.
    REQUIRE(k >= c.want(16, extra, 0.1, 1, 0.0));
}

TEST_CASE("draft controller: a stream ahead of the others drafts only what pays well, and never probes",
          "[speculative][controller]") {
    // Half the draft tokens accepted, an extra token at a tenth of a step: a 2-token draft promises
    // 1.75 / 1.2 = 1.46x, which pays by the usual measure (1.1x) and not for a stream ahead (1.5x).
    const auto extra = [](int32_t k) { return 0.1 * k; };
    DraftController fair, ahead;
    for (int i = 0; i < 50; ++i) {
        fair.observe(2, 1);
        ahead.observe(2, 1);
    }
    CHECK(fair.want(16, extra, 0.0) == 2);
    int drafted = 0;
    for (int i = 0; i < 2000; ++i)
        if (!ahead.skip(4, DraftController::kMinGainAhead))
            drafted += ahead.want(16, extra, 0.0, 1, 0.0, 0.0, -1.0, 4, DraftController::kMinGainAhead) > 0;
    CHECK(drafted == 0);
    // Behind again: asked at once, and drafts.
    CHECK_FALSE(ahead.skip(4, DraftController::kMinGain));
    CHECK(ahead.want(16, extra, 0.0, 1, 0.0, 0.0, -1.0, 4) == 2);
    // Drafts that pay well are still made ahead of the others (nine in ten accepted: 5x and more).
    DraftController good;
    for (int i = 0; i < 50; ++i) good.observe(10, 9);
    CHECK(good.want(16, extra, 0.0, 1, 0.0, 0.0, -1.0, 4, DraftController::kMinGainAhead) >= 8);
}

TEST_CASE("streams ahead: those sure to finish before another stream of the step",
          "[speculative][controller]") {
    using engine::spec::streams_ahead;
    using P = engine::spec::StreamProgress;
    using V = std::vector<P>;
    using B = std::vector<bool>;
    CHECK(streams_ahead(V{}).empty());
    CHECK(streams_ahead(V{{100, 1.0}}) == B{false});  // alone
    CHECK(streams_ahead(V{{256, 1.0}, {256, 1.0}, {256, 1.0}, {256, 1.0}}) == B{false, false, false, false});
    // A lead of more than the square root of the steps the longest other takes (16 of 256) ...
    CHECK(streams_ahead(V{{239, 1.0}, {256, 1.0}, {250, 1.0}}) == B{true, false, false});
    // ... and not of fewer: 241 + 16 > 256.
    CHECK(streams_ahead(V{{241, 1.0}, {256, 1.0}}) == B{false, false});
    // Near the end a few tokens count: 3 + 3 < 9, where 7 + 3 is not.
    CHECK(streams_ahead(V{{3, 1.0}, {9, 1.0}, {7, 1.0}}) == B{true, false, false});
    // The pace a stream drafts at: 256 tokens at 2 a step take 128 steps, 200 at 1 take 200; below a
    // token a step counts as one.
    CHECK(streams_ahead(V{{256, 2.0}, {200, 1.0}}) == B{true, false});
    CHECK(streams_ahead(V{{256, 0.5}, {200, 1.0}}) == B{false, true});
    // Streams that all draft well, a few tokens apart: none is ahead.
    CHECK(streams_ahead(V{{256, 3.0}, {250, 3.1}, {240, 2.9}}) == B{false, false, false});
    // Two streams tied for longest: neither is ahead of the other.
    CHECK(streams_ahead(V{{100, 1.0}, {256, 1.0}, {256, 1.0}}) == B{true, false, false});
    // No max_tokens: it may go on longest; every stream with a bound is ahead of it, it of none.
    CHECK(streams_ahead(V{{-1, 1.0}, {100, 1.0}, {4000, 1.0}}) == B{false, true, true});
    CHECK(streams_ahead(V{{-1, 1.0}, {-1, 1.0}}) == B{false, false});
}

TEST_CASE("draft controller: skipping the question after a no changes no answer and no probe",
          "[speculative][controller]") {
    // The same evidence, asked at every step or only when skip() says the last answer may have changed:
    // the same drafts and probes at the same steps, with want() asked for at most one step in four while
    // drafting does not pay.
    const auto extra = [](int32_t k) { return 0.3 * k; };
    DraftController every, skipping;
    for (int i = 0; i < 50; ++i) {
        every.observe(2, 0);
        skipping.observe(2, 0);
    }
    std::vector<int> probes_every, probes_skipping;
    int asked = 0;
    for (int i = 1; i <= 4000; ++i) {
        if (every.want(16, extra, 0.0) > 0) {
            probes_every.push_back(i);
            every.observe(2, 0);
        }
        if (skipping.skip(4)) {
            REQUIRE_FALSE(skipping.probing());
            continue;
        }
        ++asked;
        if (skipping.want(16, extra, 0.0) > 0) {
            probes_skipping.push_back(i);
            skipping.observe(2, 0);
        }
    }
    REQUIRE(probes_every.size() >= 40);
    CHECK(probes_skipping == probes_every);
    CHECK(asked <= 4000 / 4 + (int)probes_every.size() + 1);
    // New evidence or another number of streams: asked again at once.
    REQUIRE(skipping.want(16, extra, 0.0) == 0);
    REQUIRE(skipping.skip(4));
    for (int i = 0; i < 30; ++i) skipping.observe(8, 8);
    CHECK_FALSE(skipping.skip(4));
    CHECK(skipping.want(16, extra, 0.0) > 0);
    DraftController streams;
    for (int i = 0; i < 50; ++i) streams.observe(2, 0);
    REQUIRE_FALSE(streams.skip(4));
    REQUIRE(streams.want(16, extra, 0.0) == 0);
    CHECK(streams.skip(4));
    CHECK_FALSE(streams.skip(1));
}
