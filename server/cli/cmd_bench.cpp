// `ggserve bench`: llama-bench's interface and table, so the two can be compared line by line.
// pp<N>: one prompt of N random tokens in n_batch chunks; tg<N>: N single-token decodes from an empty
// context; pp<P>+tg<G>: both, timed together. With -d D each test starts after D cached tokens (filled
// untimed before every run, as llama-bench's "@ dD" tests do). Each test runs once to warm up, then -r
// times.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "server/cli/file_lists.h"
#include "server/cli/args.h"
#include "server/cli/commands.h"
#include "server/cli/gpu_options.h"

namespace cli {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> split_ints(const std::string& opt, const std::string& s) {
    std::vector<int> out;
    for (const auto& x : split_list(s)) {
        const int v = ArgParser::to_int(opt, x);
        if (v < 0) throw ArgError(opt + " values must not be negative");
        out.push_back(v);
    }
    return out;
}

struct Test {
    int n_prompt = 0, n_gen = 0, n_depth = 0;
    std::string name() const {
        std::string s;
        if (n_prompt && n_gen)
            s = "pp" + std::to_string(n_prompt) + "+tg" + std::to_string(n_gen);
        else
            s = n_prompt ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
        return n_depth ? s + " @ d" + std::to_string(n_depth) : s;
    }
};

// Evaluates n random tokens at positions [p0, p0 + n) of sequence 0 in n_batch chunks.
void eval_random(engine::Context& ctx, int p0, int n, std::mt19937& rng) {
    const int n_vocab = ctx.n_vocab();
    const int n_batch = (int)ctx.params().n_batch;
    engine::Batch b;
    for (int i = 0; i < n; i += n_batch) {
        b.clear();
        for (int j = i; j < std::min(n, i + n_batch); ++j)
            b.add((engine::Token)(rng() % (uint32_t)n_vocab), p0 + j, {0}, j + 1 == n);
        if (ctx.decode(b) != engine::Context::Status::Ok) throw std::runtime_error("KV cache full");
    }
}

// Evaluates the test once; returns the seconds of the timed part (the depth fill is not timed).
double run_once(engine::Context& ctx, const Test& t, std::mt19937& rng) {
    const int n_vocab = ctx.n_vocab();
    ctx.kv().clear();
    eval_random(ctx, 0, t.n_depth, rng);
    engine::Batch b;
    const auto t0 = Clock::now();
    eval_random(ctx, t.n_depth, t.n_prompt, rng);
    engine::Token tok = (engine::Token)(rng() % (uint32_t)n_vocab);
    for (int i = 0; i < t.n_gen; ++i) {
        b.clear();
        b.add(tok, t.n_depth + t.n_prompt + i, {0}, true);
        if (ctx.decode(b) != engine::Context::Status::Ok) throw std::runtime_error("KV cache full");
        tok = (engine::Token)(rng() % (uint32_t)n_vocab);
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string human_size(uint64_t bytes) {
    char buf[32];
    if (bytes >= (1ull << 30))
        snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
    else
        snprintf(buf, sizeof buf, "%.2f MiB", bytes / 1048576.0);
    return buf;
}

std::string human_params(uint64_t n) {
    char buf[32];
    if (n >= 1000000000ull)
        snprintf(buf, sizeof buf, "%.2f B", n / 1e9);
    else if (n >= 1000000ull)
        snprintf(buf, sizeof buf, "%.2f M", n / 1e6);
    else
        snprintf(buf, sizeof buf, "%.2f K", n / 1e3);
    return buf;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
    std::string models_s, p_s = "512", n_s = "128", pg_s, d_s = "0", t_s, fa_s = "0", ngl_s = "0", ctk = "f16",
                          ctv = "f16", out = "md";
    DeviceOptions dev;
    int reps = 5;
    uint32_t n_batch = 2048, n_ubatch = 512;
    ArgParser ap("bench");
    ap.option("-m,--model", "FILES", "model file(s), comma-separated", &models_s);
    ap.option("-p,--n-prompt", "N,...", "prompt sizes (default 512)", &p_s);
    ap.option("-n,--n-gen", "N,...", "generation sizes (default 128)", &n_s);
    ap.option("-pg", "P,G", "a prompt + generation test", &pg_s);
    ap.option("-d,--n-depth", "N,...", "tokens already in the context before each test (default 0)", &d_s);
    ap.option("-t,--threads", "N,...", "thread counts (default: all cores)", &t_s);
    ap.option("-b,--batch-size", "N", "logical batch size (default 2048)", &n_batch);
    ap.option("-ub,--ubatch-size", "N", "physical micro-batch size (default 512)", &n_ubatch);
    ap.option("-r,--repetitions", "N", "repetitions of each test (default 5)", &reps);
    ap.option("-fa,--flash-attn", "0|1,...", "flash attention (default 0)", &fa_s);
    ap.option("-ngl,--n-gpu-layers", "N,...", "layers offloaded to the GPU (default 0)", &ngl_s);
    add_device_options(ap, dev);
    ap.option("-ctk,--cache-type-k", "TYPE", "K cache type (default f16)", &ctk);
    ap.option("-ctv,--cache-type-v", "TYPE", "V cache type (default f16)", &ctv);
    ap.option("-o,--output", "md|json|csv", "output format (default md)", &out);
    std::vector<std::string> models;
    std::vector<Test> tests;
    std::vector<int> threads, fas, ngls;
    ggml::Type tk, tv;
    try {
        if (!ap.parse(argc, argv)) return 0;
        models = split_list(models_s);
        if (models.empty()) throw ArgError("missing -m MODEL");
        for (int p : split_ints("-p", p_s))
            if (p > 0) tests.push_back({p, 0});
        for (int n : split_ints("-n", n_s))
            if (n > 0) tests.push_back({0, n});
        if (!pg_s.empty()) {
            const auto pg = split_ints("-pg", pg_s);
            if (pg.size() != 2) throw ArgError("-pg takes two values: P,G");
            tests.push_back({pg[0], pg[1]});
        }
        if (tests.empty()) throw ArgError("no tests: give -p and/or -n sizes");
        std::vector<Test> at_depth;
        for (int d : split_ints("-d", d_s))
            for (Test t : tests) {
                t.n_depth = d;
                at_depth.push_back(t);
            }
        if (at_depth.empty()) throw ArgError("-d needs a value");
        tests = std::move(at_depth);
        threads = t_s.empty() ? std::vector<int>{(int)std::max(1u, std::thread::hardware_concurrency())}
                              : split_ints("-t", t_s);
        fas = split_ints("-fa", fa_s);
        ngls = split_ints("-ngl", ngl_s);
        if (ngls.empty()) throw ArgError("-ngl needs a value");
        if (!dev.finish(ap, *std::max_element(ngls.begin(), ngls.end()), /*strict=*/true))
            for (int& n : ngls) n = 0;  // --device none
        if (reps < 1) throw ArgError("-r must be positive");
        if (out != "md" && out != "json" && out != "csv") throw ArgError("-o must be md, json or csv");
        if (!ggml::type_from_name(ctk.c_str(), &tk) || !ggml::type_from_name(ctv.c_str(), &tv))
            throw ArgError("unknown cache type");
        if (n_ubatch > n_batch) n_ubatch = n_batch;
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve bench: %s\n", e.what());
        return 2;
    }

    nlohmann::json results = nlohmann::json::array();
    if (out == "md") {
        std::printf("| %-30s | %10s | %8s | %-7s | %3s | %7s | %2s | %13s | %20s |\n", "model", "size",
                    "params", "backend", "ngl", "threads", "fa", "test", "t/s");
        std::printf("| %s | %s: | %s: | %s | %s: | %s: | %s | %s: | %s: |\n", std::string(30, '-').c_str(),
                    std::string(9, '-').c_str(), std::string(7, '-').c_str(), std::string(7, '-').c_str(),
                    "--", std::string(6, '-').c_str(), "--", std::string(12, '-').c_str(),
                    std::string(19, '-').c_str());
    } else if (out == "csv") {
        std::printf(
            "model,size,params,backend,n_gpu_layers,threads,fa,test,n_prompt,n_gen,n_depth,avg_ts,stddev_ts\n");
    }
    try {
        for (const auto& path : models)
            for (int ngl : ngls) {
                engine::ModelParams mp;
                mp.n_gpu_layers = ngl;
                mp.main_gpu = dev.main_gpu;
                auto model = engine::Model::load(path, mp);
                const std::string backend = ngl > 0 ? "CUDA" : "CPU";
                const uint64_t size = std::filesystem::file_size(path);
                for (int nt : threads)
                    for (int fa : fas) {
                        engine::ContextParams cp;
                        uint32_t need = 0;
                        for (const auto& t : tests)
                            need = std::max<uint32_t>(need, (uint32_t)(t.n_depth + t.n_prompt + t.n_gen));
                        cp.n_ctx = std::max<uint32_t>(need + 1, 256);
                        cp.n_batch = n_batch;
                        cp.n_ubatch = n_ubatch;
                        cp.n_threads = cp.n_threads_batch = nt;
                        cp.flash_attn = fa != 0;
                        cp.type_k = tk;
                        cp.type_v = tv;
                        engine::Context ctx(*model, cp);
                        std::mt19937 rng(1234);
                        for (const auto& t : tests) {
                            run_once(ctx, t, rng);  // warm-up
                            std::vector<double> ts;
                            for (int r = 0; r < reps; ++r)
                                ts.push_back((t.n_prompt + t.n_gen) / run_once(ctx, t, rng));
                            double mean = 0, var = 0;
                            for (double x : ts) mean += x;
                            mean /= ts.size();
                            for (double x : ts) var += (x - mean) * (x - mean);
                            const double sd = ts.size() > 1 ? std::sqrt(var / (ts.size() - 1)) : 0.0;
                            const std::string name = std::filesystem::path(path).filename().string();
                            if (out == "md") {
                                char tsb[64];
                                snprintf(tsb, sizeof tsb, "%.2f ± %.2f", mean, sd);
                                std::printf("| %-30s | %10s | %8s | %-7s | %3d | %7d | %2d | %13s | %20s |\n",
                                            name.c_str(), human_size(size).c_str(),
                                            human_params(model->n_params()).c_str(), backend.c_str(), ngl, nt,
                                            fa, t.name().c_str(), tsb);
                            } else if (out == "csv") {
                                std::printf("%s,%llu,%llu,%s,%d,%d,%d,%s,%d,%d,%d,%.3f,%.3f\n", name.c_str(),
                                            (unsigned long long)size, (unsigned long long)model->n_params(),
                                            backend.c_str(), ngl, nt, fa, t.name().c_str(), t.n_prompt,
                                            t.n_gen, t.n_depth, mean, sd);
                            }
                            results.push_back({{"model", name},
                                               {"model_size", size},
                                               {"model_n_params", model->n_params()},
                                               {"backend", backend},
                                               {"n_gpu_layers", ngl},
                                               {"n_threads", nt},
                                               {"flash_attn", fa != 0},
                                               {"type_k", ctk},
                                               {"type_v", ctv},
                                               {"n_batch", n_batch},
                                               {"n_ubatch", n_ubatch},
                                               {"test", t.name()},
                                               {"n_prompt", t.n_prompt},
                                               {"n_gen", t.n_gen},
                                               {"n_depth", t.n_depth},
                                               {"avg_ts", mean},
                                               {"stddev_ts", sd},
                                               {"samples_ts", ts}});
                            std::fflush(stdout);
                        }
                    }
            }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ggserve bench: %s\n", e.what());
        return 1;
    }
    if (out == "json") std::puts(results.dump(2).c_str());
    return 0;
}

}  // namespace cli
