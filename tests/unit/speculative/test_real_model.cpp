// Speculation on real models: the p/q rule with stories260K as the target and its q4_0 copy as the
// draft keeps the distribution of the next two tokens (chi-square over 20,000 seeded draws), and the
// draft model drafts what it would decode greedily.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/speculative/draft_model.h"
#include "engine/speculative/verify.h"

using namespace engine;
using namespace engine::spec;

namespace {

std::string shared_path(const std::string& rel) {
    return std::string(GGSERVE_SHARED_DIR) + "/" + rel;
}

// Logits after `prompt` (+ `next` when >= 0), one row.
std::vector<float> row_after(Context& ctx, const std::vector<Token>& prompt, Token next) {
    ctx.kv().clear();
    Batch b;
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], (Pos)i, {0}, next < 0 && i + 1 == prompt.size());
    if (next >= 0) b.add(next, (Pos)prompt.size(), {0}, true);
    REQUIRE(ctx.decode(b) == Context::Status::Ok);
    const float* l = ctx.logits(b.size() - 1);
    return std::vector<float>(l, l + ctx.n_vocab());
}

// A draft context for two slots, one thread.
ContextParams two_sequences() {
    ContextParams cp;
    cp.n_ctx = 256;
    cp.n_seq_max = 2;
    cp.n_threads = cp.n_threads_batch = 1;
    return cp;
}

std::vector<double> softmax(const std::vector<float>& l) {
    double mx = -1e300, s = 0;
    for (float x : l) mx = std::max(mx, (double)x);
    std::vector<double> p(l.size());
    for (size_t i = 0; i < l.size(); ++i) s += p[i] = std::exp((double)l[i] - mx);
    for (double& x : p) x /= s;
    return p;
}

// Upper 0.001 quantile of the chi-square distribution with k degrees of freedom (Wilson-Hilferty).
double chi2_critical_0001(double k) {
    const double z = 3.090232;  // standard normal upper 0.001 quantile
    const double a = 2.0 / (9.0 * k);
    return k * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

}  // namespace

TEST_CASE("p/q verification on stories260K with a q4_0 draft keeps the next two tokens' distribution",
          "[speculative][verify][model]") {
    auto target = Model::load(shared_path("models/stories260K.gguf"));
    auto draft = Model::load(shared_path("models/stories260K-q4_0.gguf"));
    ContextParams cp;
    cp.n_ctx = 128;
    cp.n_threads = cp.n_threads_batch = 1;
    Context tctx(*target, cp), dctx(*draft, cp);
    const std::vector<Token> prompt = target->vocab().tokenize("Once upon a time, there was a little", true);
    const int n_vocab = tctx.n_vocab();

    // Target rows and draft distributions (temperature 1) after the prompt and after each first token.
    const std::vector<float> t0 = row_after(tctx, prompt, -1);
    const std::vector<double> p0 = softmax(t0);
    std::vector<float> q0f;
    for (double x : softmax(row_after(dctx, prompt, -1))) q0f.push_back((float)x);
    std::map<Token, std::vector<float>> t1;
    std::map<Token, std::vector<float>> q1;
    const auto rows_for = [&](Token a) {
        if (!t1.count(a)) {
            t1[a] = row_after(tctx, prompt, a);
            std::vector<float> q;
            for (double x : softmax(row_after(dctx, prompt, a))) q.push_back((float)x);
            q1[a] = std::move(q);
        }
    };
    // The draft differs from the target (else the test would show little).
    double tv = 0;
    for (int i = 0; i < n_vocab; ++i) tv += std::abs(p0[(size_t)i] - q0f[(size_t)i]);
    INFO("total variation between target and draft at the first position: " << tv / 2);
    REQUIRE(tv / 2 > 0.01);

    SamplingParams sp;
    sp.temperature = 1.0f;
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.min_p = 0.0f;
    const std::vector<std::string> pieces((size_t)n_vocab);
    const int n = 20000;
    std::map<std::pair<Token, Token>, int> counts;
    std::mt19937 draw(2024);
    size_t accepted = 0;
    for (int i = 0; i < n; ++i) {
        sp.seed = (uint32_t)i;
        SamplerChain chain(sp, n_vocab, 128, pieces);
        std::mt19937 rng((uint32_t)i * 2654435761u + 7);
        std::discrete_distribution<Token> d0(q0f.begin(), q0f.end());
        const Token a_draft = d0(draw);
        rows_for(a_draft);
        // A two-token draft: a from q0, b from q1(a).
        std::discrete_distribution<Token> d1(q1[a_draft].begin(), q1[a_draft].end());
        const Token b_draft = d1(draw);
        const float* rows[3] = {t0.data(), t1[a_draft].data(), t1[a_draft].data()};
        const std::vector<std::vector<float>> qs = {q0f, q1[a_draft]};
        Verified v = verify_by_ratio(chain, rows, std::vector<Token>{a_draft, b_draft}, qs, rng, {});
        accepted += v.n_accepted();
        if (v.tokens.size() == 1) {
            // Rejected at the first token: the next step drafts after the emitted one.
            const Token a = v.tokens[0];
            rows_for(a);
            std::discrete_distribution<Token> d(q1[a].begin(), q1[a].end());
            const Token b2 = d(draw);
            const float* rows2[2] = {t1[a].data(), t1[a].data()};
            const std::vector<std::vector<float>> qq = {q1[a]};
            v.tokens.push_back(verify_by_ratio(chain, rows2, std::vector<Token>{b2}, qq, rng, {}).tokens[0]);
        }
        ++counts[{v.tokens[0], v.tokens[1]}];
    }
    // Expected counts from the target alone: p0(a) * p1(b | a). Cells expecting >= 5 are tested one by one,
    // the rest pooled into one cell.
    double chi2 = 0, pooled_e = 0, pooled_o = 0, covered = 0;
    int cells = 0;
    std::map<std::pair<Token, Token>, bool> seen;
    for (int a = 0; a < n_vocab; ++a) {
        if (n * p0[(size_t)a] < 5) continue;
        rows_for(a);
        const std::vector<double> p1 = softmax(t1[a]);
        for (int b = 0; b < n_vocab; ++b) {
            const double e = n * p0[(size_t)a] * p1[(size_t)b];
            if (e < 5) continue;
            const double o = counts.count({a, b}) ? counts[{a, b}] : 0;
            chi2 += (o - e) * (o - e) / e;
            covered += o;
            pooled_e += e;
            ++cells;
        }
    }
    pooled_e = n - pooled_e;
    pooled_o = n - covered;
    if (pooled_e >= 5) {
        chi2 += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
        ++cells;
    }
    const double crit = chi2_critical_0001(cells - 1);
    INFO("chi-square " << chi2 << " over " << cells << " cells, critical value (p = 0.001) " << crit
                       << "; draft tokens accepted " << accepted);
    REQUIRE(cells > 10);
    REQUIRE(chi2 < crit);
    REQUIRE(accepted > (size_t)n / 4);
}

TEST_CASE("the draft model drafts its own greedy continuation and stops under p_min",
          "[speculative][model]") {
    auto target = Model::load(shared_path("models/stories260K.gguf"));
    auto draft = Model::load(shared_path("models/stories260K-q8_0.gguf"));
    const ContextParams cp = two_sequences();
    DraftModel dm(*draft, *target, cp);
    const std::vector<Token> prompt = target->vocab().tokenize("Once upon a time", true);
    // Greedy continuation of the draft model by plain decoding.
    Context ctx(*draft, cp);
    std::vector<Token> seq = prompt, want;
    for (int i = 0; i < 6; ++i) {
        const std::vector<float> l = row_after(ctx, seq, -1);
        const Token t = (Token)(std::max_element(l.begin(), l.end()) - l.begin());
        want.push_back(t);
        seq.push_back(t);
    }
    DraftModel::Request r;
    r.seq = 1;
    r.tokens = prompt;
    r.n_max = 6;
    r.p_min = 0.0f;
    // Nothing evaluated yet: a draft would first catch up all of the prompt but its last token.
    REQUIRE(dm.behind(1, prompt) == prompt.size() - 1);
    auto res = dm.draft(std::span<const DraftModel::Request>(&r, 1));
    REQUIRE(res[0].tokens == want);
    // Its time in two parts: the prompt caught up (all but its last token, which starts the draft), then
    // one decode per drafted position. The scheduler prices a draft by the second part only.
    CHECK(dm.last_timing().catch_up_tokens == (int32_t)prompt.size() - 1);
    CHECK(dm.last_timing().positions == 6);
    CHECK(dm.last_timing().catch_up_seconds > 0.0);
    CHECK(dm.last_timing().draft_seconds > 0.0);
    // Again after the sequence grew by two tokens: only what changed is evaluated, same result.
    std::vector<Token> longer = prompt;
    longer.insert(longer.end(), want.begin(), want.begin() + 2);
    REQUIRE(dm.behind(1, longer) == 0);  // its drafted tokens were evaluated while drafting
    std::vector<Token> other = prompt;
    other.push_back((want[0] + 1) % target->vocab().n_tokens());  // not the draft's own next token
    other.push_back(want[0]);
    REQUIRE(dm.behind(1, other) == 1);
    REQUIRE(dm.behind(0, prompt) == prompt.size() - 1);  // the other sequence holds nothing
    r.tokens = longer;
    r.n_max = 4;
    res = dm.draft(std::span<const DraftModel::Request>(&r, 1));
    REQUIRE(res[0].tokens == std::vector<Token>(want.begin() + 2, want.end()));
    CHECK(dm.last_timing().catch_up_tokens == 0);  // the accepted tokens were drafted, so already evaluated
    CHECK(dm.last_timing().positions == 4);
    // p_min 1: no draft token is ever that sure.
    r.p_min = 1.0f;
    REQUIRE(dm.draft(std::span<const DraftModel::Request>(&r, 1))[0].tokens.empty());
}

TEST_CASE("the draft model's warmup leaves nothing behind: drafts after it are those without it",
          "[speculative][model]") {
    auto target = Model::load(shared_path("models/stories260K.gguf"));
    auto draft = Model::load(shared_path("models/stories260K-q8_0.gguf"));
    const ContextParams cp = two_sequences();
    const std::vector<Token> prompt = target->vocab().tokenize("Once upon a time", true);
    DraftModel::Request r;
    r.seq = 0;  // the sequence the warmup batch uses
    r.tokens = prompt;
    r.n_max = 5;
    r.p_min = 0.0f;
    DraftModel cold(*draft, *target, cp), warm(*draft, *target, cp);
    warm.warmup();
    REQUIRE(warm.behind(0, prompt) == prompt.size() - 1);
    const auto want = cold.draft(std::span<const DraftModel::Request>(&r, 1));
    const auto got = warm.draft(std::span<const DraftModel::Request>(&r, 1));
    REQUIRE(want[0].tokens.size() == 5);
    CHECK(got[0].tokens == want[0].tokens);
    CHECK(warm.last_timing().catch_up_tokens == (int32_t)prompt.size() - 1);
}

TEST_CASE("a draft model with another vocabulary is refused, naming the difference", "[speculative][model]") {
    auto target = Model::load(shared_path("models/stories260K.gguf"));
    auto other = Model::load(shared_path("models/synth/synth-tiny-q8_0.gguf"));
    ContextParams cp;
    cp.n_ctx = 64;
    REQUIRE_THROWS_WITH(DraftModel(*other, *target, cp), Catch::Contains("vocabulary sizes differ"));
    REQUIRE(vocab_mismatch(target->vocab(), target->vocab()).empty());
}
