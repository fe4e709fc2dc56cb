// `ggserve serve`: the HTTP server. Flags follow llama-server; --config FILE gives the same options as
// JSON (the command line wins).
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/model/pooling.h"
#include "server/api/api.h"
#include "server/cli/args.h"
#include "server/cli/commands.h"
#include "server/cli/common_options.h"
#include "server/http/server.h"
#include "server/scheduler/scheduler.h"

namespace cli {

namespace {

std::vector<std::string> split_keys(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string k;
    while (std::getline(ss, k, ','))
        if (!k.empty()) out.push_back(k);
    return out;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
    ModelOptions mo;
    mo.n_ctx = 4096;
    api::ApiConfig ac;
    server::http::ServerConfig hc;
    sched::SchedulerConfig sc;
    std::string config_file, api_key_file;
    int port = 8080, timeout_s = 600, threads_http = 0;
    bool cont_batching = true, verbose = false, no_slots = false;
    ac.defaults.sampling = engine::SamplingParams{};

    ArgParser ap("serve");
    add_model_options(ap, mo);
    add_sampling_options(ap, ac.defaults.sampling);
    ap.option("--config", "FILE", "JSON file with options (long names without dashes); flags win",
              &config_file);
    ap.option("-a,--alias", "NAME", "model name reported by the API (default: the file name)",
              &ac.model_alias);
    ap.option("-np,--parallel", "N", "number of slots (parallel sequences, default 1)", &sc.n_parallel);
    ap.option("-n,--n-predict", "N", "default tokens to generate (-1 = until end of text or context)",
              &ac.defaults.n_predict);
    ap.option("--host", "HOST", "address to listen on (default 127.0.0.1)", &hc.host);
    ap.option("--port", "PORT", "port to listen on (default 8080)", &port);
    ap.add("--api-key", "KEY", "API key(s) clients must send (comma-separated)", [&hc](const std::string& v) {
        for (auto& k : split_keys(v)) hc.api_keys.push_back(k);
    });
    ap.option("--api-key-file", "FILE", "file with one API key per line", &api_key_file);
    ap.option("--chat-template", "NAME|TEMPLATE",
              "chat format name (chatml, llama3, ...) or Jinja template text", &ac.chat_template);
    ap.flag("--jinja", "render chat with the model's Jinja template", &ac.jinja);
    ap.flag("--metrics", "enable the Prometheus /metrics endpoint", &ac.metrics);
    ap.flag("--props", "allow POST /props to change the default generation settings", &ac.props_writable);
    ap.flag("--no-slots", "disable the /slots endpoint", &no_slots);
    ap.flag("--slots", "enable the /slots endpoint (default)", &no_slots, false);
    ap.option("--slot-save-path", "DIR", "directory for slot save/restore files (created if missing)",
              &ac.slot_save_path);
    ap.option("--keep", "N", "context shift: prompt tokens to keep besides BOS (default 0, -1 = all)",
              &ac.defaults.n_keep);
    ap.flag("--context-shift", "when a slot's context is full, drop half of it and go on (default)",
            &sc.context_shift);
    ap.flag("--no-context-shift", "when a slot's context is full, stop with finish_reason length",
            &sc.context_shift, false);
    ap.option("-to,--timeout", "SECONDS", "read/write timeout of HTTP connections (default 600)", &timeout_s);
    ap.option("--threads-http", "N", "HTTP I/O threads (default: cores, at least 2)", &threads_http);
    ap.option("--max-prefill-tokens", "N",
              "most prompt tokens per iteration while other slots are generating (0 = no cap)",
              &sc.max_prefill_tokens);
    ap.flag("--embedding,--embeddings", "embeddings only: /v1/embeddings serves, generation endpoints answer 501",
            &ac.embeddings);
    ap.add("--pooling", "TYPE", "embedding pooling: none, mean, cls, last (default: the model's pooling_type)",
           [&ac](const std::string& v) {
               auto p = engine::parse_pooling(v);
               if (!p) throw ArgError("--pooling must be none, mean, cls or last, not '" + v + "'");
               if (*p == engine::Pooling::Rank)
                   throw ArgError("--pooling rank: use --reranking (rank scores are served by /v1/rerank)");
               ac.pooling = *p;
           });
    ap.flag("--reranking,--rerank",
            "rerank endpoints (/v1/rerank; the model needs a classification head); implies --embeddings",
            &ac.reranking);
    ap.flag("-cb,--cont-batching", "continuous batching (always on)", &cont_batching);
    ap.flag("-v,--verbose", "verbose logging", &verbose);
    try {
        if (!ap.parse(argc, argv)) return 0;
        if (!config_file.empty()) {
            std::ifstream f(config_file);
            if (!f) throw ArgError("cannot read config file '" + config_file + "'");
            nlohmann::json cfg;
            try {
                cfg = nlohmann::json::parse(f);
            } catch (const nlohmann::json::exception& e) {
                throw ArgError("config file '" + config_file + "' is not valid JSON: " + e.what());
            }
            ap.apply_config(cfg);
        }
        finish_model_options(ap, mo);
        if (ac.reranking) ac.embeddings = true;
        if (port < 0 || port > 65535) throw ArgError("--port must be in [0, 65535]");
        if (sc.n_parallel < 1 || sc.n_parallel > engine::kMaxSeq)
            throw ArgError("--parallel must be in [1, " + std::to_string(engine::kMaxSeq) + "]");
        if (timeout_s <= 0) throw ArgError("--timeout must be positive");
        if (ac.defaults.n_predict < -1) throw ArgError("--n-predict must be >= -1");
        if (ac.defaults.n_keep < -1) throw ArgError("--keep must be >= -1");
        if (!ac.slot_save_path.empty()) {
            std::error_code ec;
            std::filesystem::create_directories(ac.slot_save_path, ec);
            if (!std::filesystem::is_directory(ac.slot_save_path, ec))
                throw ArgError("--slot-save-path '" + ac.slot_save_path +
                               "' is not a directory and cannot be created");
        }
        if (mo.n_ctx != 0 && mo.n_ctx < (uint32_t)sc.n_parallel)
            throw ArgError("--ctx-size must be at least --parallel (each slot needs context)");
        if (auto err = engine::validate(ac.defaults.sampling); !err.empty()) throw ArgError(err);
        if (!api_key_file.empty()) {
            std::ifstream f(api_key_file);
            if (!f) throw ArgError("cannot read --api-key-file '" + api_key_file + "'");
            std::string line;
            while (std::getline(f, line))
                if (!line.empty()) hc.api_keys.push_back(line);
        }
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve serve: %s\n", e.what());
        return 2;
    }
    // Logs go to stderr; stdout stays free for tools that wrap the server.
    spdlog::set_default_logger(spdlog::stderr_color_mt("ggserve"));
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
    ac.slots = !no_slots;
    ac.n_ubatch = mo.n_ubatch;
    ac.n_ctx = mo.n_ctx;
    hc.port = (uint16_t)port;
    hc.n_threads = threads_http;
    hc.read_timeout = hc.write_timeout = std::chrono::seconds(timeout_s);

    // Signals are waited for by this thread only: block them before any other thread starts.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

    try {
        server::http::Server http(hc);
        api::Api api(ac, http);
        api.register_routes();
        http.start();  // /health answers 503 while the model loads
        spdlog::info("listening on http://{}:{}", hc.host, http.port());

        // Signals are taken by their own thread from now on, so that SIGTERM also stops a server that
        // is still loading its model (docker stop, a test harness): loading cannot be interrupted
        // midway, so the process just ends then. Once serving, the signal starts an orderly shutdown.
        struct SignalState {
            std::atomic<bool> serving{false};
            std::promise<int> received;
        };
        auto signals = std::make_shared<SignalState>();
        std::future<int> shutdown_signal = signals->received.get_future();
        std::thread([signals, sigs] {
            int sig = 0;
            sigwait(&sigs, &sig);
            if (!signals->serving.load()) {
                spdlog::info("signal {} while loading the model: exiting", sig);
                std::_Exit(128 + sig);
            }
            signals->received.set_value(sig);
        }).detach();

        auto model = engine::Model::load(mo.model, mo.model_params());
        spdlog::info("model: {} ({}, {} parameters)", mo.model, model->description(), model->n_params());
        for (const std::string& line : engine::describe_model(model->hparams(), model->gguf()))
            spdlog::info("{}", line);
        if (const ggml::Backend* dev = model->offload_backend())
            spdlog::info("offload: {} of {} layers{} on {}", model->n_offloaded_layers(),
                         model->hparams().n_layer, model->output_offloaded() ? " and the output" : "",
                         dev->name());
        engine::ContextParams cp = mo.context_params();
        cp.n_seq_max = (uint32_t)sc.n_parallel;
        cp.embeddings = ac.embeddings;  // a decoder embeds with its final hidden states
        engine::Context ctx(*model, cp);
        sched::Scheduler scheduler(*model, ctx, sc);
        scheduler.start();
        api.attach(*model, scheduler);
        signals->serving.store(true);  // before "ready", which is what clients and tests wait for
        spdlog::info("ready: {} slots, context {} ({} per slot), batch {}, micro-batch {}", sc.n_parallel,
                     ctx.n_ctx(), scheduler.n_ctx_slot(), ctx.params().n_batch, ctx.params().n_ubatch);

        const int sig = shutdown_signal.get();
        spdlog::info("signal {}: shutting down", sig);
        http.stop(std::chrono::seconds(2));
        scheduler.stop();
        api.finish_formatting();
        return 0;
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
}

}  // namespace cli
