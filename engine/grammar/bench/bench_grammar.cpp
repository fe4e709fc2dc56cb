// bench_grammar: replays a JSON generation through a grammar with a real vocabulary and prints the
// per-token cost of apply() over the whole vocabulary (and of accept()) as JSON.
//
//   bench_grammar [--vocab FILE.gguf] [--grammar FILE.gbnf] [--text FILE] [--passes N]
//
// The "generation" is the text tokenized greedily: at each step the longest allowed token that
// continues the text, which is what a model emitting that text under the grammar would do. Pass 1
// starts with cold caches (a fresh grammar); later passes reuse the grammar's caches. Costs are
// reported as wall time and as this thread's CPU time (which a busy machine disturbs less).
#include <time.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "engine/grammar/grammar.h"
#include "engine/tokenizer/vocab.h"

namespace {

const char* kDefaultText = R"({
  "id": "run-2024-07-19-0042",
  "model": "llama-2-7b-chat",
  "created": 1721400000,
  "temperature": 0.7,
  "tags": ["benchmark", "grammar", "json", "sampling"],
  "author": {"name": "Zoë Ångström", "email": "zoe@example.org", "verified": true},
  "results": [
    {"task": "summarize", "score": 0.913, "tokens": 412, "passed": true, "notes": null},
    {"task": "translate", "score": 0.78, "tokens": 388, "passed": true, "notes": "minor \"quote\" issues"},
    {"task": "extract", "score": -1.5e-3, "tokens": 97, "passed": false, "notes": "schema mismatch at /items/3"}
  ],
  "matrix": [[1, 2, 3], [4, 5, 6], [7, 8, 9]],
  "description": "A short paragraph of prose, because real outputs mix structure with free text: the model writes sentences, numbers like 3.14159, and punctuation; it may even use unicode such as 東京 or naïve café.",
  "config": {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "seed": 1234, "stop": ["</s>", "\n\n"], "stream": false}
})";

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

double thread_cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

struct Stats {
    double p50, p99, mean, max;
};

Stats summarize(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (double v : us) sum += v;
    auto pct = [&](double q) { return us[std::min(us.size() - 1, size_t(q * double(us.size())))]; };
    return {pct(0.50), pct(0.99), sum / double(us.size()), us.back()};
}

nlohmann::json to_json(const Stats& s) {
    auto r = [](double v) { return std::round(v * 10) / 10; };
    return {{"p50", r(s.p50)}, {"p99", r(s.p99)}, {"mean", r(s.mean)}, {"max", r(s.max)}};
}

}  // namespace

int main(int argc, char** argv) {
    std::string vocab_path =
        std::string(GGSERVE_SOURCE_DIR) + "/../shared/models/vocab/ggml-vocab-llama-spm.gguf";
    std::string grammar_path = std::string(GGSERVE_SOURCE_DIR) + "/engine/grammars/json.gbnf";
    std::string text = kDefaultText;
    int passes = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--vocab") {
            vocab_path = argv[i + 1];
        } else if (a == "--grammar") {
            grammar_path = argv[i + 1];
        } else if (a == "--text") {
            text = read_file(argv[i + 1]);
        } else if (a == "--passes") {
            passes = std::max(1, std::atoi(argv[i + 1]));
        } else {
            std::cerr << "unknown option " << a << "\n";
            return 2;
        }
    }
    try {
        // Pieces as the sampler sees them: control tokens decode to nothing, so only EOG ends.
        const engine::Vocab tok = engine::Vocab::from_file(vocab_path);
        std::vector<std::string> pieces(size_t(tok.n_tokens()));
        for (engine::Token t = 0; t < tok.n_tokens(); ++t) pieces[size_t(t)] = tok.token_to_piece(t, false);
        const size_t n_vocab = pieces.size();
        auto vocab = std::make_shared<const engine::GrammarVocab>(std::move(pieces), tok.eog_tokens());
        const std::string gbnf = read_file(grammar_path);

        auto t0 = std::chrono::steady_clock::now();
        engine::Grammar grammar(gbnf, "root", vocab);
        const double build_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

        std::mt19937 rng(1);
        std::normal_distribution<float> logit(0, 3);
        engine::TokenDataArray cur;
        nlohmann::json out = {{"vocab_size", n_vocab}, {"grammar", grammar_path}, {"build_ms", build_ms}};
        nlohmann::json pass_results = nlohmann::json::array();
        for (int pass = 0; pass < passes; ++pass) {
            grammar.reset();
            std::vector<double> apply_us, apply_cpu_us, accept_us;
            size_t pos = 0;
            while (pos < text.size()) {
                cur.data.resize(n_vocab);
                for (size_t i = 0; i < n_vocab; ++i) cur.data[i] = {engine::Token(i), logit(rng), 0.0f};
                const double c0 = thread_cpu_us();
                auto a0 = std::chrono::steady_clock::now();
                grammar.apply(cur);
                auto a1 = std::chrono::steady_clock::now();
                apply_cpu_us.push_back(thread_cpu_us() - c0);
                apply_us.push_back(std::chrono::duration<double, std::micro>(a1 - a0).count());
                // The longest allowed token that continues the text.
                engine::Token best = -1;
                size_t best_len = 0;
                for (const auto& c : cur.data) {
                    if (std::isinf(c.logit)) continue;
                    const std::string& p = vocab->piece(c.id);
                    if (p.size() > best_len && text.compare(pos, p.size(), p) == 0) {
                        best = c.id;
                        best_len = p.size();
                    }
                }
                if (best < 0)
                    throw std::runtime_error("the text leaves the grammar at byte " + std::to_string(pos));
                auto b0 = std::chrono::steady_clock::now();
                grammar.accept(best);
                auto b1 = std::chrono::steady_clock::now();
                accept_us.push_back(std::chrono::duration<double, std::micro>(b1 - b0).count());
                pos += best_len;
            }
            pass_results.push_back({{"pass", pass + 1},
                                    {"tokens", apply_us.size()},
                                    {"complete", grammar.complete()},
                                    {"cache_mb", std::round(double(grammar.cache_bytes()) / 1e5) / 10},
                                    {"apply_us", to_json(summarize(apply_us))},
                                    {"apply_cpu_us", to_json(summarize(apply_cpu_us))},
                                    {"accept_us", to_json(summarize(accept_us))}});
        }
        out["passes"] = pass_results;
        std::cout << out.dump(2) << std::endl;
    } catch (const std::exception& e) {
        std::cerr << "bench_grammar: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
