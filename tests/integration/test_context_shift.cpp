// Context shift against the real binary: a request longer than its slot's context keeps going (keep
// BOS, drop half of the rest, shift positions), and what follows each shift is what a fresh
// evaluation of the kept + remaining tokens gives.
#include <catch2/catch.hpp>

#include "context_util.h"

using namespace ctxtest;
using server::http::Client;

namespace {

struct Shift {
    size_t step;               // index of the generated token evaluated right after the shift
    std::vector<int> context;  // what the cache holds after the shift, that token included
};

// Replays the scheduler's rule for a slot of n_ctx cells (n_keep tokens kept) over a greedy run.
std::vector<Shift> replay_shifts(const std::vector<int>& prompt, const std::vector<int>& gen, int n_ctx,
                                 int n_keep) {
    std::vector<Shift> shifts;
    std::vector<int> cache = prompt;
    for (size_t i = 0; i + 1 < gen.size(); ++i) {
        const bool shifted = (int)cache.size() + 1 >= n_ctx;
        if (shifted) {
            const int n_discard = ((int)cache.size() - n_keep) / 2;
            cache.erase(cache.begin() + n_keep, cache.begin() + n_keep + n_discard);
        }
        cache.push_back(gen[i]);
        if (shifted) shifts.push_back({i, cache});
    }
    return shifts;
}

// The greedy continuation of a fresh evaluation of context must be `want`. The kept tokens' keys and
// values above the first layer were computed while the discarded tokens were still there, so the
// logits differ a little from a fresh evaluation's: tokens are compared up to the first near tie
// (the fresh top-1 leads its top-2 by less than kNearTie), where that difference may pick the other.
// Returns how many tokens were compared.
constexpr double kNearTie = 0.15;
int check_continuation(uint16_t port, const std::vector<int>& context, const std::vector<int>& want) {
    const json fresh = complete(port, context, (int)want.size(),
                                {{"cache_prompt", false}, {"ignore_eos", true}, {"n_probs", 2}});
    const std::vector<int> got = fresh["tokens"];
    int compared = 0;
    for (size_t k = 0; k < want.size(); ++k) {
        const json& top = fresh["completion_probabilities"][k]["top_logprobs"];
        if (top[0]["logprob"].get<double>() - top[1]["logprob"].get<double>() < kNearTie) break;
        INFO("token " << k << " after the shift");
        REQUIRE(got[k] == want[k]);
        ++compared;
    }
    return compared;
}

}  // namespace

TEST_CASE("context shift: -c 256 and 600 tokens complete, and each shift continues like a fresh evaluation",
          "[integration][context]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-np", "1", "-t", "2", "--context-shift"});
    const json g = stories_golden();
    const std::string prompt = g["cases"][0]["prompt"];
    const std::vector<int> prompt_tokens = g["cases"][0]["prompt_tokens"];

    const json r = complete(s.port(), prompt, 600, {{"ignore_eos", true}});
    const std::vector<int> gen = r["tokens"];
    REQUIRE(gen.size() == 600);
    REQUIRE(r["stop_type"] == "limit");
    REQUIRE(r["timings"]["predicted_n"] == 600);
    CHECK(r["truncated"] == true);  // the context was shifted: tokens were dropped

    // The OpenAI flavour reports it as finish_reason "length".
    Client c("127.0.0.1", s.port());
    const json v1 =
        c.post("/v1/completions",
               json{{"prompt", prompt}, {"max_tokens", 600}, {"temperature", 0}, {"ignore_eos", true}}.dump())
            .json();
    REQUIRE(v1["choices"][0]["finish_reason"] == "length");
    REQUIRE(v1["usage"]["completion_tokens"] == 600);

    const auto shifts = replay_shifts(prompt_tokens, gen, 256, 1);
    REQUIRE(shifts.size() >= 3);
    int compared = 0;
    for (const auto& sh : shifts) {
        INFO("shift before generated token " << sh.step << ", " << sh.context.size() << " tokens kept");
        compared += check_continuation(
            s.port(), sh.context,
            std::vector<int>(gen.begin() + (long)sh.step + 1, gen.begin() + (long)sh.step + 9));
    }
    REQUIRE(compared >= 2 * (int)shifts.size());

    // Still healthy, and still the reference output.
    REQUIRE(c.get("/health").status == 200);
    const json again = complete(s.port(), prompt, 96);
    REQUIRE(again["tokens"] == g["cases"][0]["completion_tokens"]);
    CHECK(again["truncated"] == false);
}

TEST_CASE("context shift keeps the prompt head given by --keep", "[integration][context]") {
    ServerProcess s({"-m", stories_model(), "-c", "128", "-np", "1", "-t", "2", "--keep", "4", "--context-shift"});
    const json g = stories_golden();
    const std::vector<int> prompt_tokens = g["cases"][1]["prompt_tokens"];
    const json r = complete(s.port(), g["cases"][1]["prompt"], 300, {{"ignore_eos", true}});
    const std::vector<int> gen = r["tokens"];
    REQUIRE(gen.size() == 300);
    const auto shifts = replay_shifts(prompt_tokens, gen, 128, 5);  // BOS + 4
    REQUIRE(shifts.size() >= 2);
    int compared = 0;
    for (const auto& sh : shifts) {
        REQUIRE(std::equal(prompt_tokens.begin(), prompt_tokens.begin() + 5, sh.context.begin()));
        compared += check_continuation(
            s.port(), sh.context,
            std::vector<int>(gen.begin() + (long)sh.step + 1, gen.begin() + (long)sh.step + 5));
    }
    REQUIRE(compared >= (int)shifts.size());
    // n_keep per request overrides --keep: with the whole prompt kept, generation still completes.
    const json all = complete(s.port(), g["cases"][1]["prompt"], 300, {{"ignore_eos", true}, {"n_keep", -1}});
    REQUIRE(all["tokens"].size() == 300);
}

TEST_CASE("context shift off: requests stop at the slot context with finish_reason length",
          "[integration][context]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-np", "2", "-t", "2", "--no-context-shift"});
    const json g = stories_golden();
    const std::vector<int> prompt_tokens = g["cases"][0]["prompt_tokens"];
    const json r = complete(s.port(), g["cases"][0]["prompt"], 600, {{"ignore_eos", true}});
    REQUIRE(r["stop_type"] == "limit");
    // 128 cells per slot: the prompt and the generated tokens fill all but the last.
    REQUIRE(r["tokens"].size() == 128 - prompt_tokens.size());
    Client c("127.0.0.1", s.port());
    const json v1 = c.post("/v1/chat/completions", json{{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                                                        {"max_tokens", 600},
                                                        {"temperature", 0},
                                                        {"ignore_eos", true}}
                                                       .dump())
                        .json();
    REQUIRE(v1["choices"][0]["finish_reason"] == "length");
    REQUIRE(c.get("/health").status == 200);
}

TEST_CASE("requests without a token limit end at the context instead of shifting forever",
          "[integration][context]") {
    ServerProcess s({"-m", stories_model(), "-c", "128", "-np", "1", "-t", "2", "--context-shift"});
    const json g = stories_golden();
    const json r = complete(s.port(), g["cases"][0]["prompt"], -1, {{"ignore_eos", true}});
    REQUIRE(r["stop_type"] == "limit");
    REQUIRE(r["tokens"].size() == 128 - g["cases"][0]["prompt_tokens"].size());
}

TEST_CASE("ggserve run shifts the context when -n exceeds it", "[integration][context][cli]") {
    const json g = stories_golden();
    const std::string prompt = g["cases"][0]["prompt"];
    const auto r = run_cli({"run", "-m", stories_model(), "-p", prompt, "-n", "200", "-c", "64", "--temp",
                            "0", "-t", "2", "--json", "--context-shift"});
    REQUIRE(r.status == 0);
    const json j = json::parse(r.out);
    REQUIRE(j["completion_tokens"].size() == 200);
    REQUIRE(j["stop_type"] == "limit");
    REQUIRE(j["context_shifts"].get<int>() >= 3);
    // The first tokens are the reference's (no shift yet).
    const std::vector<int> want = g["cases"][0]["completion_tokens"];
    const std::vector<int> got = j["completion_tokens"];
    REQUIRE(std::equal(want.begin(), want.begin() + 20, got.begin()));

    const auto stop = run_cli({"run", "-m", stories_model(), "-p", prompt, "-n", "200", "-c", "64", "--temp",
                               "0", "-t", "2", "--json", "--no-context-shift"});
    REQUIRE(stop.status == 0);
    const json js = json::parse(stop.out);
    REQUIRE(js["stop_type"] == "context");
    REQUIRE(js["completion_tokens"].size() < 64);
}
