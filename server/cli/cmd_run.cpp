// `ggserve run`: generate text from a prompt on the command line. With --prompt-cache FILE the state
// of the prompt is saved, and a later run whose prompt starts the same way evaluates only the rest;
// when -n goes past the context, the context is shifted (keep --keep tokens, drop half the rest).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/model/context.h"
#include "engine/model/kv_shift.h"
#include "engine/model/kv_state.h"
#include "engine/model/model.h"
#include "engine/sampling/sampler_chain.h"
#include "engine/speculative/verify.h"
#include "engine/tokenizer/vocab.h"
#include "server/cli/args.h"
#include "server/cli/commands.h"
#include "server/cli/common_options.h"
#include "server/cli/compat_options.h"
#include "server/scheduler/token_pipeline.h"

namespace cli {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}
}  // namespace

int cmd_run(int argc, char** argv) {
    ModelOptions mo;
    engine::SamplingParams sp;
    std::string prompt;
    int n_predict = 128;
    bool json = false;
    std::string prompt_cache;
    int n_keep = 0;
    bool context_shift = false;  // llama.cpp's default since 2025
    ArgParser ap("run");
    add_model_options(ap, mo);
    add_sampling_options(ap, sp);
    ap.option("-p,--prompt", "TEXT", "prompt", &prompt);
    ap.option("-n,--n-predict", "N", "tokens to generate (default 128; -1 = until end of text or context)",
              &n_predict);
    ap.flag("--json", "print one JSON object (tokens, text, timings) and nothing else on stdout", &json);
    ap.option(
        "--prompt-cache", "FILE",
        "prompt state file: loaded if it exists (its matching prefix is not evaluated again), saved after "
        "the prompt",
        &prompt_cache);
    ap.option("--keep", "N", "context shift: prompt tokens to keep besides BOS (default 0, -1 = all)",
              &n_keep);
    ap.flag("--context-shift", "when the context is full, drop half of it and go on", &context_shift);
    ap.flag("--no-context-shift", "stop when the context is full (default)", &context_shift, false);
    InfoRequests ir;
    add_info_options(ap, ir);
    add_download_options(ap);
    add_unsupported_options(ap);
    refuse_server_ui_options(ap);
    add_checkpoint_options(ap);
    refuse_server_cache_options(ap);
    refuse_tool_options(ap);
    refuse_router_options(ap);
    try {
        if (!ap.parse(argc, argv)) return 0;
        if (print_info(ir)) return 0;
        ap.apply_env();  // LLAMA_ARG_*, as llama-cli reads them; the command line wins
        finish_model_options(ap, mo);
        if (!ap.given("prompt")) throw ArgError("missing -p PROMPT");
        if (n_predict < -1) throw ArgError("-n must be >= -1");
        if (n_keep < -1) throw ArgError("--keep must be >= -1");
        if (auto err = engine::validate(sp); !err.empty()) throw ArgError(err);
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve run: %s\n", e.what());
        return 2;
    }
    if (const std::string err = mo.cpu.apply_priority(); !err.empty()) std::fprintf(stderr, "warning: %s\n", err.c_str());

    try {
        auto model = engine::Model::load(mo.model, mo.model_params());
        const engine::Vocab& vocab = model->vocab();
        engine::Context ctx(*model, mo.context_params());
        const int n_vocab = ctx.n_vocab();
        std::vector<std::string> pieces((size_t)n_vocab);
        for (int i = 0; i < n_vocab; ++i) pieces[i] = vocab.token_to_piece(i);
        engine::SamplerChain chain(sp, n_vocab, (int32_t)ctx.n_ctx(), pieces);

        const std::vector<engine::Token> prompt_tokens = vocab.tokenize(prompt, true, true);
        if (prompt_tokens.empty()) throw std::runtime_error("the prompt is empty after tokenization");
        if (prompt_tokens.size() >= ctx.n_ctx())
            throw std::runtime_error("the prompt has " + std::to_string(prompt_tokens.size()) +
                                     " tokens but the context holds " + std::to_string(ctx.n_ctx()));
        for (engine::Token t : prompt_tokens) chain.accept(t, false);

        // cached[i] is the token the cache holds at position i.
        const auto t0 = Clock::now();
        std::vector<engine::Token> cached;
        bool cache_current = false;  // the file already holds exactly this prompt
        if (!prompt_cache.empty() && std::filesystem::exists(prompt_cache)) {
            cached = engine::load_seq_state(ctx, 0, prompt_cache, ctx.n_ctx() - 1).tokens;
            cache_current = cached == prompt_tokens;
            size_t keep = 0;
            while (keep < cached.size() && keep < prompt_tokens.size() && cached[keep] == prompt_tokens[keep])
                ++keep;
            keep = std::min(keep, prompt_tokens.size() - 1);  // the last prompt token gives the first logits
            ctx.kv().seq_rm(0, (engine::Pos)keep, -1);
            cached.resize(keep);
        }
        const size_t n_reused = cached.size();

        // Prefill the rest in n_batch chunks; only the last token needs logits.
        engine::Batch batch;
        const size_t n_batch = ctx.params().n_batch;
        for (size_t i = n_reused; i < prompt_tokens.size(); i += n_batch) {
            batch.clear();
            for (size_t j = i; j < std::min(prompt_tokens.size(), i + n_batch); ++j)
                batch.add(prompt_tokens[j], (engine::Pos)j, {0}, j + 1 == prompt_tokens.size());
            if (ctx.decode(batch) != engine::Context::Status::Ok)
                throw std::runtime_error("the KV cache is full");
        }
        cached = prompt_tokens;
        if (!prompt_cache.empty() && !cache_current) engine::save_seq_state(ctx, 0, cached, prompt_cache);
        const double prompt_ms = ms_since(t0);
        const size_t n_evaluated = prompt_tokens.size() - n_reused;

        // Generation: every step's tokens go through the same pipeline as the server's (UTF-8 holdback,
        // end of text, the token limit).
        sched::TokenPipeline pipe(vocab, {}, n_predict, false);
        std::string stop_type = "limit";
        const auto t1 = Clock::now();
        const bool has_bos = vocab.bos() >= 0 && prompt_tokens[0] == vocab.bos();
        const int32_t n_keep_eff = n_keep < 0 ? (int32_t)prompt_tokens.size() : n_keep + (has_bos ? 1 : 0);
        int n_shifts = 0;
        std::vector<const float*> rows{ctx.logits(batch.size() - 1)};
        while (n_predict != 0) {
            const engine::spec::Verified v = engine::spec::verify_by_sampling(chain, rows, {}, {});
            const sched::TokenPipeline::Step step = pipe.push(v.tokens);
            if (!json) {
                std::fputs(step.text.c_str(), stdout);
                std::fflush(stdout);
            }
            if (step.end) {
                stop_type = step.end->eos ? "eos" : "limit";
                break;
            }
            const engine::Token tok = v.tokens.back();
            // tok needs a cell; a full context is shifted when a limit is set, else generation ends.
            if ((uint32_t)cached.size() + 1 >= ctx.n_ctx()) {
                if (!context_shift || n_predict < 0 ||
                    engine::shift_context(ctx.kv(), 0, cached, n_keep_eff) == 0) {
                    stop_type = "context";
                    break;
                }
                ++n_shifts;
            }
            batch.clear();
            batch.add(tok, (engine::Pos)cached.size(), {0}, true);
            if (ctx.decode(batch) != engine::Context::Status::Ok)
                throw std::runtime_error("the KV cache is full");
            cached.push_back(tok);
            rows.assign(1, ctx.logits(0));
        }
        const double gen_ms = ms_since(t1);
        const std::string rest = pipe.flush();
        const std::vector<engine::Token>& out = pipe.tokens();
        const std::string& text = pipe.content();

        const double pp_tps = n_evaluated / (prompt_ms / 1000.0);
        const double tg_tps = out.empty() ? 0.0 : out.size() / (gen_ms / 1000.0);
        if (json) {
            nlohmann::json j;
            j["prompt_tokens"] = prompt_tokens;
            j["completion_tokens"] = out;
            j["text"] = text;
            j["stop_type"] = stop_type;
            j["seed"] = chain.seed();
            j["tokens_cached"] = n_reused;
            j["context_shifts"] = n_shifts;
            j["timings"] = {{"prompt_n", n_evaluated},     {"prompt_ms", prompt_ms},
                            {"prompt_per_second", pp_tps}, {"predicted_n", out.size()},
                            {"predicted_ms", gen_ms},      {"predicted_per_second", tg_tps}};
            std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        } else {
            std::fputs(rest.c_str(), stdout);
            std::fputs("\n", stdout);
            std::fprintf(stderr,
                         "\nprompt: %zu tokens (%zu from the prompt cache) in %.1f ms (%.1f t/s); "
                         "generation: %zu tokens "
                         "in %.1f ms (%.1f t/s), %d context shift(s)\n",
                         prompt_tokens.size(), n_reused, prompt_ms, pp_tps, out.size(), gen_ms, tg_tps,
                         n_shifts);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ggserve run: %s\n", e.what());
        return 1;
    }
}

}  // namespace cli
