#include "server/cli/compat_options.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "ggml/backend.h"
#include "server/api/build_info.h"
#include "server/cli/log_jsonl.h"

namespace cli {

void add_checkpoint_options(ArgParser& ap) {
    // Validated, then nothing to do: see the header.
    const auto count = [](const char* name, int min) {
        return [name, min](const std::string& v) {
            if (ArgParser::to_int(name, v) < min)
                throw ArgError(std::string(name) + " must be at least " + std::to_string(min));
        };
    };
    const std::string why =
        " (accepted; ggserve needs no context checkpoints: sliding-window layers keep every cell, as with "
        "--swa-full, so any cached prefix is reusable)";
    ap.add("-ctxcp,--ctx-checkpoints,--swa-checkpoints", "N", "most context checkpoints per slot" + why,
           count("--ctx-checkpoints", 0));
    ap.add("-cms,--checkpoint-min-step", "N", "fewest tokens between context checkpoints" + why,
           count("--checkpoint-min-step", 0));
    ap.add("-cpent,--checkpoint-every-n-tokens", "N", "a context checkpoint every N prompt tokens, -1 none" + why,
           count("--checkpoint-every-n-tokens", -1));
}

void refuse_server_ui_options(ArgParser& ap) {
    const std::string why = "the chat UI belongs to the server (ggserve serve)";
    ap.refuse("--ui-config,--webui-config,--ui-config-file,--webui-config-file", true, why);
    ap.refuse("--ui-mcp-proxy,--webui-mcp-proxy,--no-ui-mcp-proxy,--no-webui-mcp-proxy", false, why);
    const std::string cors = "CORS belongs to the server (ggserve serve)";
    for (const char* o : {"--cors-origins", "--cors-methods", "--cors-headers"}) ap.refuse(o, true, cors);
    ap.refuse("--cors-credentials", false, cors);
    ap.refuse("--no-cors-credentials", false, cors);
}

void refuse_server_cache_options(ArgParser& ap) {
    ap.refuse("-cram,--cache-ram", true,
              "the host-memory prompt cache belongs to the server (ggserve serve); use --prompt-cache FILE here");
    ap.refuse("--cache-idle-slots,--no-cache-idle-slots", false,
              "the host-memory prompt cache belongs to the server (ggserve serve)");
}

void add_log_options(ArgParser& ap, LogOptions& lo) {
    ap.flag("-v,--verbose,--log-verbose", "log everything (trace level); API responses carry __verbose",
            &lo.verbose);
    ap.option("-lv,--verbosity,--log-verbosity", "N",
              "log threshold: 0 output only, 1 errors, 2 warnings, 3 info (default), 4 debug, 5 trace",
              &lo.verbosity);
    ap.flag("--log-disable", "no log output on the console (a --log-file still gets it)", &lo.disable);
    ap.option("--log-file", "FILE", "also write the log to FILE (appended)", &lo.file);
    ap.optional_value(
        "--log-colors", "on|off|auto", "coloured log levels (default auto: on a terminal)", "on",
        [&lo](const std::string& v) {
            if (v != "on" && v != "off" && v != "auto" && v != "1" && v != "0")
                throw ArgError("invalid value '" + v + "' for --log-colors: expected on, off or auto");
            lo.colors = v == "1" ? "on" : v == "0" ? "off" : v;
        });
    ap.flag("--log-prefix", "the level tag in each log line (default)", &lo.prefix);
    ap.flag("--no-log-prefix", "no level tag in log lines", &lo.prefix, false);
    ap.flag("--log-jsonl",
            "each log line one JSON object: {\"type\":\"log\",\"level\",\"time\" (microseconds since the epoch),\"logger\",\"msg\"}",
            &lo.jsonl);
    ap.flag("--no-log-jsonl", "plain log lines (default)", &lo.jsonl, false);
    ap.flag("--log-timestamps", "a timestamp in each log line (default)", &lo.timestamps);
    ap.flag("--no-log-timestamps", "no timestamps in log lines", &lo.timestamps, false);
}

void setup_logging(const LogOptions& lo, const std::string& name) {
    if (lo.verbosity < -1) throw ArgError("--verbosity must be >= 0");
    std::vector<spdlog::sink_ptr> sinks;
    if (!lo.disable) {
        auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
            lo.colors == "on"    ? spdlog::color_mode::always
            : lo.colors == "off" ? spdlog::color_mode::never
                                 : spdlog::color_mode::automatic);
        sinks.push_back(console);
    }
    if (!lo.file.empty()) {
        try {
            sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(lo.file, false));
        } catch (const spdlog::spdlog_ex& e) {
            throw ArgError("cannot open --log-file '" + lo.file + "': " + e.what());
        }
    }
    auto logger = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
    spdlog::level::level_enum level = spdlog::level::info;
    if (lo.verbosity >= 0) {
        static const spdlog::level::level_enum by_verbosity[] = {
            spdlog::level::critical, spdlog::level::err,   spdlog::level::warn,
            spdlog::level::info,     spdlog::level::debug, spdlog::level::trace};
        level = by_verbosity[std::min(lo.verbosity, 5)];
    }
    if (lo.verbose) level = spdlog::level::trace;
    logger->set_level(level);
    if (lo.jsonl) {
        logger->set_formatter(std::make_unique<JsonlLogFormatter>());  // no colours, prefix or timestamp text
    } else {
        std::string pattern;
        if (lo.timestamps) pattern += "[%Y-%m-%d %H:%M:%S.%e] ";
        if (lo.prefix) pattern += "[%n] [%^%l%$] ";
        pattern += "%v";
        logger->set_pattern(pattern);
    }
    logger->flush_on(spdlog::level::trace);  // a log file is read while the server runs (tests, tail -f)
    spdlog::set_default_logger(logger);
}

void add_info_options(ArgParser& ap, InfoRequests& ir) {
    ap.flag("--version", "print the version and build information and exit", &ir.version);
    ap.flag("--list-devices", "list the devices layers can be offloaded to and exit", &ir.list_devices);
}

std::string version_string() {
    return std::string("ggserve ") + api::build_version() + " (" + api::build_commit() + ")";
}

bool print_info(const InfoRequests& ir) {
    if (ir.version) {
        // Then llama-server's "version:" line, which scripts grep for.
        std::printf("%s\nversion: %s (commit %s)\nbuilt with %s for %s\n", version_string().c_str(),
                    api::build_version(), api::build_commit(), api::build_compiler(), api::build_target());
    }
    if (ir.list_devices) {
        std::printf("Available devices:\n");
        const int n = ggml::cuda_device_count();
        if (n == 0) {
            std::printf("  (none: %s)\n", ggml::cuda_status().c_str());
        } else {
            // cuda_status() lists "CUDA0: name, memory, sm_XY; CUDA1: ...".
            const std::string s = ggml::cuda_status();
            size_t i = 0;
            while (i < s.size()) {
                size_t j = s.find("; ", i);
                if (j == std::string::npos) j = s.size();
                std::printf("  %s\n", s.substr(i, j - i).c_str());
                i = j + 2;
            }
        }
    }
    std::fflush(stdout);
    return ir.version || ir.list_devices;
}

void add_download_options(ArgParser& ap) {
    const std::string why =
        "cannot download: this build fetches nothing over the network; download the file and pass -m FILE";
    ap.refuse("-mu,--model-url", true, why);
    ap.refuse("-hf,-hfr,--hf-repo", true, why);
    ap.refuse("-hff,--hf-file", true, why);
    ap.refuse("-hft,--hf-token", true, why);
    ap.refuse("-hfd,-hfrd,--hf-repo-draft,--spec-draft-hf", true, why);
    ap.refuse("-hffd,--hf-file-draft", true, why);
    ap.refuse("-hfv,-hfrv,--hf-repo-v", true, why);
    ap.refuse("-hffv,--hf-file-v", true, why);
    ap.refuse("-dr,--docker-repo", true, why);
    ap.refuse("-mmu,--mmproj-url", true, why);
}

void add_unsupported_options(ArgParser& ap) {
    ap.refuse(
        "-gan,--grp-attn-n", true,
        "group-attention self-extend is not supported (it divides cached positions in place, which the "
        "shared prompt cache cannot do; later llama-server releases dropped it too): use --rope-scaling yarn "
        "to extend the context");
    ap.refuse("-gaw,--grp-attn-w", true, "group-attention self-extend is not supported (see --grp-attn-n)");
    ap.refuse("--rpc", true, "there is no RPC backend in ggserve");
    ap.add("-sm,--split-mode", "none|layer",
           "with one GPU both mean: offloaded layers on that GPU (row: not supported)",
           [](const std::string& v) {
               if (v != "none" && v != "layer")
                   throw ArgError("--split-mode " + v +
                                  ": ggserve offloads to one GPU (-dev/-mg), so only none and layer (the "
                                  "same there) apply");
           });
    ap.refuse("-ts,--tensor-split", true,
              "ggserve offloads to one GPU (-dev/-mg); layers are not split across GPUs");
    ap.refuse("-ot,--override-tensor", true,
              "tensor placement follows -ngl only; per-tensor buffer types are not supported");
    ap.refuse("-cmoe,--cpu-moe", false, "expert weights follow -ngl like the other weights of their layer");
    ap.refuse("-ncmoe,--n-cpu-moe", true, "expert weights follow -ngl like the other weights of their layer");
    ap.refuse("-mm,--mmproj", true, "multimodal projectors are not supported: ggserve serves text models");
    // Switches about a projector that is never loaded: nothing to do, as asked.
    static bool no_projector = false;
    ap.flag("--no-mmproj,--no-mmproj-offload,--mmproj-offload,--no-mmproj-auto,--mmproj-auto",
            "accepted: ggserve never loads a multimodal projector", &no_projector);
    ap.refuse("-nocb,--no-cont-batching", false, "ggserve always batches continuously");
    ap.refuse("-cl,--cache-list", false, "there is no model download cache (ggserve downloads nothing)");
    ap.refuse("--completion-bash", false, "no shell completion script is generated");
    ap.refuse(
        "-e,--escape,--no-escape", false,
        "escape sequences apply to prompts given on a command line; the server reads prompts from requests");
    ap.refuse("--no-perf", false, "timings are always measured and reported");
    ap.refuse("--repack", false,
              "weights are used in the file's layout (the kernels read it directly); there is no repacking");
    ap.refuse("--no-host", false, "there are no extra buffer types to bypass the host buffer for");
    ap.refuse("-lzm,--lazy-mode", true,
              "tensors are always resident (mapped or read); there is no lazy reading");
    ap.refuse("--moe-cache-mib", true, "expert weights follow -ngl like the other weights of their layer");
    ap.refuse("-ncffn,--n-cpu-ffn", true,
              "feed-forward weights follow -ngl like the other weights of their layer");
    ap.refuse("-fit,--fit", true, "settings are not fitted to device memory: set -c and -ngl yourself");
    ap.refuse("-fitt,--fit-target", true,
              "settings are not fitted to device memory: set -c and -ngl yourself");
    ap.refuse("-fitc,--fit-ctx", true, "settings are not fitted to device memory: set -c and -ngl yourself");
    ap.refuse("--op-offload,--no-op-offload", false,
              "host operations are never offloaded; only -ngl layers run on the GPU");
    ap.refuse("-bs,--backend-sampling", false, "sampling runs on the host");
    ap.refuse("--kv-unified-per-slot", true,
              "the slots share one KV cache: all of its cells with -kvu (and -np -1), -c / -np each otherwise");
    ap.refuse("-mmdev,--mmproj-device", true, "multimodal projectors are not supported");
    for (const char* o : {"--image-min-tokens", "--image-max-tokens", "--mtmd-batch-max-tokens",
                          "--video-fps", "--video-timestamp-interval", "--video-ffmpeg-dir", "--media-path"})
        ap.refuse(o, true, "multimodal input is not supported: ggserve serves text models");
    for (const char* o :
         {"--spec-draft-p-split,--draft-p-split", "--spec-draft-sampling", "--spec-synth-len",
          "--spec-synth-rates", "-Cd,--cpu-mask-draft,--spec-draft-cpu-mask",
          "-Crd,--cpu-range-draft,--spec-draft-cpu-range", "--cpu-strict-draft,--spec-draft-cpu-strict",
          "--prio-draft,--spec-draft-prio", "--poll-draft,--spec-draft-poll",
          "-Cbd,--cpu-mask-batch-draft,--spec-draft-cpu-mask-batch",
          "--cpu-strict-batch-draft,--spec-draft-cpu-strict-batch",
          "--prio-batch-draft,--spec-draft-prio-batch", "--poll-batch-draft,--spec-draft-poll-batch",
          "-otd,--override-tensor-draft,--spec-draft-override-tensor",
          "-ncmoed,--n-cpu-moe-draft,--spec-draft-n-cpu-moe,--spec-draft-ncmoe"})
        ap.refuse(o, true, "the draft model runs on the target's CPU threads with the target's settings");
    ap.refuse("-cmoed,--cpu-moe-draft,--spec-draft-cpu-moe", false, "expert weights follow -ngld");
    ap.refuse("--spec-draft-backend-sampling,--no-spec-draft-backend-sampling", false,
              "sampling runs on the host");
    for (const char* o :
         {"--embd-gemma-default", "--fim-qwen-1.5b-default", "--fim-qwen-3b-default", "--fim-qwen-7b-default",
          "--fim-qwen-7b-spec", "--fim-qwen-14b-spec", "--fim-qwen-30b-default", "--gpt-oss-20b-default",
          "--gpt-oss-120b-default", "--vision-gemma-4b-default", "--vision-gemma-12b-default"})
        ap.refuse(o, false,
                  "cannot download: this build fetches nothing over the network; download the file and pass "
                  "-m FILE");
}

void refuse_tool_options(ArgParser& ap) {
    const std::string why = "the built-in agent tools belong to the server (ggserve serve --tools LIST)";
    ap.refuse("--tools", true, why);
    ap.refuse("-ag,--agent,-no-ag,--no-agent", false, why);
    ap.refuse("--mcp-servers-config,--mcp-servers-json", true,
              "MCP servers' tools are served by the server (ggserve serve --mcp-servers-config FILE)");
}

void refuse_router_options(ArgParser& ap) {
    const std::string why = "router mode (several models) is `ggserve serve --models-dir DIR`";
    for (const char* o : {"--models-dir", "--models-preset", "--models-max", "--tags"}) ap.refuse(o, true, why);
    ap.refuse("--models-autoload,--no-models-autoload", false, why);
}

}  // namespace cli
