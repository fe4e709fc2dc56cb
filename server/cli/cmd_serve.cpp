// `ggserve serve`: the HTTP server. Flags follow llama-server; so do its LLAMA_ARG_* variables, and
// --config FILE gives the same options as JSON (command line > environment > file).
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/grammar/json_schema.h"
#include "engine/model/context.h"
#include "engine/model/lora.h"
#include "engine/model/model.h"
#include "engine/model/pooling.h"
#include "engine/speculative/ngram_drafters.h"
#include "server/api/api.h"
#include "server/api/chat_request_options.h"
#include "server/api/tools_api.h"
#include "server/api/vertex_predict.h"
#include "server/cli/args.h"
#include "server/cli/commands.h"
#include "server/cli/common_options.h"
#include "server/cli/compat_options.h"
#include "server/cli/control_vector_options.h"
#include "server/cli/file_lists.h"
#include "server/cli/gpu_options.h"
#include "server/cli/serve_router.h"
#include "server/cli/tool_options.h"
#include "server/http/server.h"
#include "server/router/child_state.h"
#include "server/scheduler/scheduler.h"
#include "server/webui/cors_proxy.h"
#include "server/webui/ui_config.h"
#include "server/webui/webui.h"

namespace cli {

namespace {

// --spec-ngram-size-n/-m/--spec-ngram-min-hits fill in ngram-simple's, ngram-map-k's and ngram-map-k4v's
// own settings where those were not given; every value is checked.
void apply_ngram_sizes(sched::SpecConfig& spec, int32_t n, int32_t m, int32_t min_hits) {
    struct Row {
        const char* name;
        sched::SpecConfig::NgramSizes* s;
    };
    for (const Row r : {Row{"simple", &spec.ngram_simple}, Row{"map-k", &spec.ngram_map_k},
                        Row{"map-k4v", &spec.ngram_map_k4v}}) {
        if (r.s->n == 0) r.s->n = n;
        if (r.s->m == 0) r.s->m = m;
        if (r.s->min_hits == 0) r.s->min_hits = min_hits;
        if (r.s->min_hits < 0 || r.s->min_hits > 1000000)
            throw ArgError(std::string("--spec-ngram-") + r.name + "-min-hits must be in [1, 1000000] (0: 1)");
        if (r.s->n < 0 || r.s->n > 64)
            throw ArgError(std::string("--spec-ngram-") + r.name + "-size-n must be in [1, 64] (0: the default)");
        if (r.s->m < 0 || r.s->m > 1024)
            throw ArgError(std::string("--spec-ngram-") + r.name + "-size-m must be in [1, 1024] (0: --draft-max)");
    }
    if (spec.ngram_mod_n_min < 0 || spec.ngram_mod_n_max < 0 || spec.ngram_mod_n_max > 1024 ||
        (spec.ngram_mod_n_max > 0 && spec.ngram_mod_n_min > spec.ngram_mod_n_max))
        throw ArgError("--spec-ngram-mod-n-min and -n-max must satisfy 0 <= n-min <= n-max <= 1024");
}

// The reasoning options that become template variables: -rea, --reasoning-effort, --reasoning-preserve.
struct ReasoningOptions {
    std::string reasoning = "auto";
    std::string effort = "default";
    bool preserve = true;
};

// --chat-template-file (read here, so a missing file is a startup error), --chat-template-kwargs
// (a JSON object), --reasoning-format, --reasoning-budget, and the reasoning options' template variables
// (under the variables --chat-template-kwargs names).
void finish_chat_options(const std::string& template_file, const std::string& kwargs, const ReasoningOptions& ro,
                         api::ApiConfig& ac) {
    if (!template_file.empty()) {
        if (!ac.chat_template.empty()) throw ArgError("use only one of --chat-template and --chat-template-file");
        std::ifstream f(template_file, std::ios::binary);
        if (!f) throw ArgError("cannot read --chat-template-file '" + template_file + "'");
        std::stringstream ss;
        ss << f.rdbuf();
        ac.chat_template = ss.str();
        if (ac.chat_template.empty()) throw ArgError("--chat-template-file '" + template_file + "' is empty");
        ac.jinja = true;
    }
    if (!kwargs.empty()) {
        ac.chat_template_kwargs = nlohmann::ordered_json::parse(kwargs, nullptr, false);
        if (!ac.chat_template_kwargs.is_object())
            throw ArgError("--chat-template-kwargs must be a JSON object, not '" + kwargs + "'");
    }
    try {
        api::check_reasoning_format(ac.reasoning_format);
        api::apply_reasoning_switch(ro.reasoning, ac.chat_template_kwargs);
        api::apply_reasoning_effort_default(ro.effort, ac.chat_template_kwargs);
        api::apply_reasoning_preserve(ro.preserve, ac.chat_template_kwargs);
    } catch (const std::invalid_argument& e) {
        throw ArgError(e.what());
    }
    if (ac.reasoning_budget < -1)
        throw ArgError("--reasoning-budget must be -1 (unlimited), 0 (end thinking at once) or a token count, not " +
                       std::to_string(ac.reasoning_budget));
}

std::string read_text_file(const std::string& opt, const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ArgError("cannot read " + opt + " '" + path + "'");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// --grammar, --grammar-file, -j/--json-schema, -jf/--json-schema-file: at most one; a schema becomes its
// grammar now, so that a bad one is a startup error.
void finish_grammar_options(const std::string& grammar_file, const std::string& schema, const std::string& schema_file,
                            api::ApiDefaults& d) {
    const int n = !d.grammar.empty() + !grammar_file.empty() + !schema.empty() + !schema_file.empty();
    if (n > 1) throw ArgError("use only one of --grammar, --grammar-file, --json-schema and --json-schema-file");
    if (!grammar_file.empty()) d.grammar = read_text_file("--grammar-file", grammar_file);
    const std::string text = !schema.empty() ? schema : !schema_file.empty() ? read_text_file("--json-schema-file", schema_file) : "";
    if (text.empty()) return;
    const char* opt = !schema.empty() ? "--json-schema" : "--json-schema-file";
    const nlohmann::ordered_json js = nlohmann::ordered_json::parse(text, nullptr, false);
    if (js.is_discarded()) throw ArgError(std::string(opt) + " is not valid JSON");
    try {
        d.grammar = engine::json_schema_to_gbnf(js);
    } catch (const engine::SchemaError& e) {
        throw ArgError(std::string(opt) + ": invalid JSON schema at '#" + e.pointer + "': " + e.reason);
    } catch (const std::exception& e) {
        throw ArgError(std::string(opt) + ": invalid JSON schema: " + e.what());
    }
}

// --api-prefix: a path ("/llm", "/a/b"); llama-server serves its routes at PREFIX + "/health", so a
// trailing '/' or a missing leading one would serve nothing.
void check_api_prefix(const std::string& p) {
    if (p.empty()) return;
    const bool bad = p[0] != '/' || p.back() == '/' || p.find_first_of("?#% \t") != std::string::npos ||
                     p.find("//") != std::string::npos;
    if (bad)
        throw ArgError("--api-prefix '" + p +
                       "' must be a path such as /llm: a leading '/', no trailing '/', no '?', '#', '%' or spaces");
}

}  // namespace

int cmd_serve(int argc, char** argv) {
    ModelOptions mo;
    mo.n_ctx = 4096;
    api::ApiConfig ac;
    server::http::ServerConfig hc;
    sched::SchedulerConfig sc;
    sc.context_shift = false;  // llama-server's default since 2025: a full context ends the request
    sc.n_parallel = -1;  // llama-server's default "auto": 4 slots sharing the context
    std::string config_file, api_key_file, chat_template_file, chat_template_kwargs;
    int port = 8080, timeout_s = 600, threads_http = 0, stall_s = 30, stream_queue_kib = 8192;
    int sse_ping_s = 30;
    bool cont_batching = true, no_slots = false, webui = true, warmup = true, offline = false, swa_full = false,
         kv_unified = false, no_repack = true, perf = true;
    LogOptions lo;
    InfoRequests ir;
    std::string grammar_file, json_schema, json_schema_file;
    float defrag_thold = -1.0f;
    webui::WebUiOptions wo;
    ToolOptions to;
    std::unique_ptr<tools::Toolbox> toolbox;
    std::vector<std::string> tool_warnings;
    std::string ui_config, ui_config_file;
    bool ui_mcp_proxy = false;
    std::string cors_origins = "*", cors_methods = "GET, POST, DELETE, OPTIONS", cors_headers = "*";
    bool cors_origins_explicit = false, cors_credentials = true;
    // Speculative decoding (llama-server's names).
    std::string spec_type, model_draft, device_draft, lookup_static, lookup_dynamic;
    int ngl_draft = 0, threads_draft = 0, threads_batch_draft = 0, ubatch_draft = 0;
    int32_t ngram_size_n = 0, ngram_size_m = 0, ngram_min_hits = 0;  // --spec-ngram-size-n/-m, -min-hits: for all three
    uint32_t ctx_draft = 0;
    std::string cache_type_k_draft, cache_type_v_draft;
    ac.defaults.sampling = engine::SamplingParams{};

    RouterCliOptions ro;
    bool router_mode = false;
    ArgParser ap("serve");
    add_model_options(ap, mo);
    add_router_options(ap, ro);
    add_sampling_options(ap, ac.defaults.sampling);
    ap.option("--config", "FILE", "JSON file with options (long names without dashes); flags win",
              &config_file);
    ap.option("-a,--alias", "NAME", "model name reported by the API (default: the file name)",
              &ac.model_alias);
    ap.option("-np,--parallel", "N",
              "number of slots (parallel sequences; default -1, llama-server's auto: 4 slots sharing the "
              "whole context as with -kvu)",
              &sc.n_parallel);
    ap.option("-n,--predict,--n-predict", "N",
              "tokens to generate: a request's default and its most (-1 = until end of text or context)",
              &ac.defaults.n_predict);
    ap.option("--grammar", "GBNF", "grammar constraining requests that give none", &ac.defaults.grammar);
    ap.option("--grammar-file", "FILE", "as --grammar, read from FILE", &grammar_file);
    ap.option("-j,--json-schema", "SCHEMA", "JSON schema constraining requests that give no grammar", &json_schema);
    ap.option("-jf,--json-schema-file", "FILE", "as --json-schema, read from FILE", &json_schema_file);
    ap.flag("--ignore-eos", "generate past end-of-generation tokens (they are banned from sampling)",
            &ac.defaults.ignore_eos);
    ap.option("--cache-reuse", "N",
              "reuse cached chunks of at least N tokens found later in a new prompt by shifting them into place "
              "(KV shift; default 0 = off)",
              &sc.n_cache_reuse);
    ap.option("-sps,--slot-prompt-similarity", "S",
              "a prompt goes to the slot whose cached prompt it shares more than this fraction with (default 0.1; "
              "0 = least recently used slot)",
              &sc.slot_prompt_similarity);
    ap.option("-dt,--defrag-thold", "N",
              "accepted for llama-server command lines (deprecated there): ggserve's cache needs no "
              "defragmentation (attention reads only the used range of cells and new tokens fill the lowest free "
              "cells)",
              &defrag_thold);
    ap.flag("--warmup", "evaluate a short batch before serving, with the draft model too (default)", &warmup);
    ap.flag("--no-warmup", "skip the warmup batch", &warmup, false);
    ap.flag("-sp,--special", "show special tokens (e.g. <|im_end|>) in the generated text", &sc.special);
    ap.option("--ssl-key-file", "FILE", "PEM private key: serve HTTPS (with --ssl-cert-file)", &hc.ssl_key_file);
    ap.option("--ssl-cert-file", "FILE", "PEM certificate chain: serve HTTPS (with --ssl-key-file)", &hc.ssl_cert_file);
    ap.flag("--offline", "never use the network: always true, ggserve downloads nothing", &offline);
    ap.flag("--swa-full", "full-size cache for sliding-window layers: always so in ggserve (one unified cache)",
            &swa_full);
    ap.flag("-kvu,--kv-unified",
            "slots share the whole context: each may use all -c cells (default: -c / -np each); when the "
            "generating requests need more cells than are free, the newest waits in host memory",
            &kv_unified);
    ap.flag("-no-kvu,--no-kv-unified", "each slot gets -c / -np cells (default)", &kv_unified, false);
    ap.flag("-nr,--no-repack", "weights stay in the file's layout: always so in ggserve", &no_repack);
    ap.flag("--perf", "internal timings: always measured in ggserve", &perf);
    add_log_options(ap, lo);
    add_info_options(ap, ir);
    add_download_options(ap);
    add_unsupported_options(ap);
    add_checkpoint_options(ap);
    ap.add("-cram,--cache-ram", "N",
           "host-memory prompt cache in MiB: a slot's prompt state is kept in RAM before an unrelated prompt "
           "overwrites it, and restored for a later prompt that starts the same way (default 8192, -1 no limit, "
           "0 off)",
           [&sc](const std::string& v) {
               sc.cache_ram_mib = ArgParser::to_int("--cache-ram", v);
               if (sc.cache_ram_mib < -1)
                   throw ArgError("--cache-ram must be a size in MiB, -1 (no limit) or 0 (off), not " + v);
           });
    ap.add("--sleep-idle-seconds", "N",
           "after N seconds without work the server sleeps: cached prompts are dropped and the weights' and the "
           "KV cache's host memory goes back to the OS until the next request (default -1: never; offloaded "
           "weights stay on their device)",
           [&sc](const std::string& v) {
               sc.sleep_idle_seconds = ArgParser::to_int("--sleep-idle-seconds", v);
               if (sc.sleep_idle_seconds < -1 || sc.sleep_idle_seconds == 0)
                   throw ArgError("--sleep-idle-seconds must be -1 (never) or a number of seconds, not " + v);
           });
    ap.flag("--cache-idle-slots,--clear-idle",
            "when a request is seated, the other idle slots' prompts move to the host-memory cache (--cache-ram) "
            "and their KV cells are freed (default off: ggserve takes idle slots' cells back when it needs them)",
            &sc.cache_idle_slots);
    ap.flag("--no-cache-idle-slots,--no-clear-idle", "idle slots keep their prompts in the KV cache (default)",
            &sc.cache_idle_slots, false);
    ap.option("--host", "HOST", "address to listen on (default 127.0.0.1)", &hc.host);
    ap.option("--port", "PORT", "port to listen on (default 8080)", &port);
    ap.flag("--reuse-port", "let several servers listen on the same port (SO_REUSEPORT; the kernel spreads connections)",
            &hc.reuse_port);
    ap.option("--api-prefix", "PREFIX",
              "serve every route under PREFIX, e.g. /llm: /llm/v1/models, /llm/health (no trailing /)",
              &hc.api_prefix);
    ap.add("--cors-origins", "ORIGINS",
           "origins whose pages may read the answers (CORS): * (any; with credentials the request's Origin is "
           "reflected), localhost (pages from localhost, 127.0.0.1 or [::1], any port) or a comma-separated list "
           "of origins such as https://app.example (default: *, or localhost with --tools or --mcp-servers-*)",
           [&](const std::string& v) {
               cors_origins = v;
               cors_origins_explicit = true;
           });
    ap.option("--cors-methods", "METHODS",
              "Access-Control-Allow-Methods of preflights, comma-separated (default: GET, POST, DELETE, OPTIONS)",
              &cors_methods);
    ap.option("--cors-headers", "HEADERS",
              "Access-Control-Allow-Headers of preflights, comma-separated; * echoes the headers asked for "
              "(default: *)",
              &cors_headers);
    ap.flag("--cors-credentials", "allow credentials (cookies, Authorization) in cross-origin requests (default)",
            &cors_credentials);
    ap.flag("--no-cors-credentials", "no credentials: with --cors-origins * the answer is Access-Control-Allow-Origin: *",
            &cors_credentials, false);
    ap.add("--api-key", "KEY", "API key(s) clients must send (comma-separated)", [&hc](const std::string& v) {
        for (auto& k : split_list(v)) hc.api_keys.push_back(k);
    });
    ap.option("--api-key-file", "FILE", "file with one API key per line", &api_key_file);
    ap.option("--chat-template", "NAME|TEMPLATE",
              "chat format name (chatml, llama3, ...) or Jinja template text", &ac.chat_template);
    ap.flag("--jinja", "render chat with the model's Jinja template (default)", &ac.jinja);
    ap.flag("--no-jinja", "render chat with the built-in formats", &ac.jinja, false);
    ap.flag("--cache-prompt", "reuse the cached prefix of earlier requests (default)", &ac.defaults.cache_prompt);
    ap.flag("--no-cache-prompt", "requests reuse no cached prefix unless they set cache_prompt", &ac.defaults.cache_prompt,
            false);
    ap.option("--chat-template-file", "FILE", "Jinja chat template read from FILE (implies --jinja)",
              &chat_template_file);
    ap.option("--chat-template-kwargs", "JSON", "extra template variables, e.g. '{\"enable_thinking\": false}'",
              &chat_template_kwargs);
    ap.option("--reasoning-format", "FORMAT",
              "none: keep <think> in content; deepseek, auto: put it in reasoning_content (default auto)",
              &ac.reasoning_format);
    ReasoningOptions reasoning;
    // Checked as they are read, so that a bad value from the environment names its variable.
    const auto checked = [](std::string* target, void (*apply)(const std::string&, nlohmann::ordered_json&)) {
        return [target, apply](const std::string& v) {
            nlohmann::ordered_json scratch = nlohmann::ordered_json::object();
            try {
                apply(v, scratch);
            } catch (const std::invalid_argument& e) {
                throw ArgError(e.what());
            }
            *target = v;
        };
    };
    ap.add("-rea,--reasoning", "on|off|auto",
           "thinking in chats: on/off set the template's enable_thinking, auto leaves the template's default "
           "(default auto)",
           checked(&reasoning.reasoning, api::apply_reasoning_switch));
    ap.add("--reasoning-effort", "LEVEL",
           "reasoning effort given to the template: default (the template's own), none, minimal, low, medium, "
           "high, xhigh or max (default: default)",
           checked(&reasoning.effort, api::apply_reasoning_effort_default));
    ap.option("--reasoning-budget", "N",
              "thinking tokens a chat reply may spend before its block is closed for it: -1 unlimited (default), "
              "0 end at once (and enable_thinking false), N>0 a budget",
              &ac.reasoning_budget);
    ap.option("--reasoning-budget-message", "MESSAGE",
              "text written before the end-of-thinking tag when the budget runs out (default: none)",
              &ac.reasoning_budget_message);
    ap.flag("--reasoning-preserve",
            "templates keep the reasoning of earlier turns (preserve_thinking; default)", &reasoning.preserve);
    ap.flag("--no-reasoning-preserve",
            "templates drop the reasoning of earlier turns (clear_thinking, truncate_history_thinking)",
            &reasoning.preserve, false);
    ap.flag("--skip-chat-parsing",
            "chat replies are not parsed: reasoning and tool calls stay in content", &ac.skip_chat_parsing);
    ap.flag("--no-skip-chat-parsing", "parse chat replies into reasoning and tool calls (default)",
            &ac.skip_chat_parsing, false);
    ap.flag("--prefill-assistant",
            "a final assistant message is continued by the reply (default)", &ac.prefill_assistant);
    ap.flag("--no-prefill-assistant",
            "a final assistant message is a finished turn; the reply is a new one", &ac.prefill_assistant, false);
    ap.flag("--metrics", "enable the Prometheus /metrics endpoint", &ac.metrics);
    bool lora_without_apply = false;
    ap.add("--lora", "FNAME", "LoRA adapter, scale 1 (repeatable, or a comma-separated list)", [&ac](const std::string& v) {
        for (const std::string& path : split_file_list(v)) {
            ac.lora_paths.push_back(path);
            ac.lora_scales.push_back(1.0f);
        }
    });
    ap.add_with_number("--lora-scaled", "FNAME SCALE",
                       "LoRA adapter with a scale: FNAME SCALE, or FNAME:SCALE[,FNAME:SCALE...] (repeatable)",
                       [&ac](const std::string& v) {
                           for (const auto& [path, scale] : parse_scaled_files("--lora-scaled", v)) {
                               ac.lora_paths.push_back(path);
                               ac.lora_scales.push_back(scale);
                           }
                       });
    ControlVectorOptions cvo;
    add_control_vector_options(ap, cvo);
    ap.add("-r,--reverse-prompt", "PROMPT",
           "stop string of requests that give no 'stop' (repeatable; llama-server's server mode does the same)",
           [&ac](const std::string& v) {
               if (v.empty()) throw ArgError("--reverse-prompt must not be empty");
               ac.defaults.stop.push_back(v);
           });
    ap.flag("--lora-init-without-apply", "load the LoRA adapters with scale 0 (set them with POST /lora-adapters)",
            &lora_without_apply);
    ap.flag("--spm-infill", "/infill: suffix before prefix (SPM order) for models trained so (default PSM)",
            &ac.spm_infill);
    ap.flag("--props", "allow POST /props to change the default generation settings", &ac.props_writable);
    ap.flag("--no-slots", "disable the /slots endpoint", &no_slots);
    ap.flag("--slots", "enable the /slots endpoint (default, as in llama-server since 2025)", &no_slots, false);
    ap.option("--slot-save-path", "DIR", "directory for slot save/restore files (created if missing)",
              &ac.slot_save_path);
    ap.option("--keep", "N", "context shift: prompt tokens to keep besides BOS (default 0, -1 = all)",
              &ac.defaults.n_keep);
    ap.flag("--context-shift", "when a slot's context is full, drop half of it and go on", &sc.context_shift);
    ap.flag("--no-context-shift", "when a slot's context is full, stop with finish_reason length (default)",
            &sc.context_shift, false);
    ap.flag("--webui,--ui", "serve the chat UI at / (default)", &webui);
    ap.flag("--no-webui,--no-ui", "do not serve the chat UI: / answers 404", &webui, false);
    ap.option("--path", "DIR", "serve the static files of DIR at / instead of the embedded chat UI", &wo.path);
    ap.option("--log-prompts-dir", "DIR",
              "write the prompt of every generation request (the chat template applied) to a file of its own in "
              "DIR (an existing directory), named after the milliseconds since the start: for comparing prompts",
              &ac.log_prompts_dir);
    add_tool_options(ap, to);
    ap.option("--ui-config,--webui-config", "JSON",
              "default settings of the chat UI (a JSON object, in /props as ui_settings; see docs/compatibility.md "
              "for the keys the UI applies); the user's own settings in the browser win",
              &ui_config);
    ap.option("--ui-config-file,--webui-config-file", "FILE", "the same, from a JSON file", &ui_config_file);
    ap.flag("--ui-mcp-proxy,--webui-mcp-proxy",
            "experimental: GET/POST /cors-proxy?url=... relays the chat UI's requests to MCP servers (plain http; "
            "upstream waits bounded by --timeout) - do not enable in untrusted environments (default: off, 403)",
            &ui_mcp_proxy);
    ap.flag("--no-ui-mcp-proxy,--no-webui-mcp-proxy", "no CORS proxy: /cors-proxy answers 403 (default)",
            &ui_mcp_proxy, false);
    ap.option("-to,--timeout", "SECONDS", "read/write timeout of HTTP connections (default 600)", &timeout_s);
    ap.option("--stream-stall-timeout", "SECONDS",
              "cancel a stream whose client has not taken any bytes for this long (default 30)", &stall_s);
    ap.option("--sse-ping-interval", "SECONDS",
              "an SSE comment ': ping' into a stream that has sent nothing for this long (default 30; -1: never)",
              &sse_ping_s);
    ap.option("--stream-queue-kib", "KIB",
              "stream output queued for a slow client before its stream is cancelled (default 8192)",
              &stream_queue_kib);
    ap.option("--threads-http", "N", "HTTP I/O threads (default: cores, at least 2)", &threads_http);
    ap.option("--max-prefill-tokens", "N",
              "most prompt tokens per iteration while other slots are generating (0 = no cap)",
              &sc.max_prefill_tokens);
    ap.option("--spec-type", "LIST",
              "speculative drafters in priority order, comma-separated: draft-simple, ngram-simple, ngram-map-k, "
              "ngram-map-k4v, ngram-mod, ngram-cache, lookahead (default: none; draft-simple when -md is given)",
              &spec_type);
    ap.flag("--spec-default",
            "the default speculative decoding, as llama-server: --spec-type ngram-mod (a later --spec-type wins)",
            [&spec_type] { spec_type = "ngram-mod"; });
    ap.option("--lookahead-w", "W", "lookahead: window columns (default 15)", &sc.spec.lookahead.w);
    ap.option("--lookahead-n", "N", "lookahead: n-gram size, window levels + 1 (default 5)", &sc.spec.lookahead.n);
    ap.option("--lookahead-g", "G", "lookahead: most n-grams verified per step (default 15)", &sc.spec.lookahead.g);
    ap.flag("--lookahead-fixed",
            "lookahead: every step the full W, N, G (default: the step shape adapts to what pays on this machine)",
            &sc.spec.lookahead_fixed);
    // Later llama-server releases renamed the draft options --spec-draft-*; both names work.
    ap.option("-md,--model-draft,--spec-draft-model", "FILE", "draft model for speculative decoding (same vocabulary)",
              &model_draft);
    ap.option("--draft-max,--draft,--draft-n,--spec-draft-n-max", "N", "most draft tokens per step (default 16)",
              &sc.spec.n_max);
    ap.option("--draft-min,--draft-n-min,--spec-draft-n-min", "N", "fewest draft tokens worth verifying (default 0)",
              &sc.spec.n_min);
    ap.option("--spec-ngram-mod-n-match", "N",
              "ngram-mod: how many tokens of context must repeat before it drafts (default 24)",
              &sc.spec.ngram_mod_n_match);
    ap.option("--spec-ngram-mod-n-min", "N", "ngram-mod: fewest draft tokens worth verifying (default: --draft-min)",
              &sc.spec.ngram_mod_n_min);
    ap.option("--spec-ngram-mod-n-max", "N", "ngram-mod: most tokens per draft (default: --draft-max)",
              &sc.spec.ngram_mod_n_max);
    // The map drafters' sizes, by llama-server's names: --spec-ngram-{simple,map-k,map-k4v}-{size-n,size-m,min-hits}.
    struct MapDrafter {
        const char* name;
        sched::SpecConfig::NgramSizes* sizes;
        int default_n;
    };
    for (const MapDrafter d : {MapDrafter{"simple", &sc.spec.ngram_simple, engine::spec::kNgramSimpleKey},
                               MapDrafter{"map-k", &sc.spec.ngram_map_k, engine::spec::kNgramMapKKey},
                               MapDrafter{"map-k4v", &sc.spec.ngram_map_k4v, engine::spec::kNgramMapK4vKey}}) {
        const std::string opt = std::string("--spec-ngram-") + d.name, who = std::string("ngram-") + d.name + ": ";
        ap.option(opt + "-size-n", "N", who + "key length in tokens (default " + std::to_string(d.default_n) + ")",
                  &d.sizes->n);
        ap.option(opt + "-size-m", "M", who + "most tokens per draft (default: --draft-max)", &d.sizes->m);
        ap.option(opt + "-min-hits", "H", who + "occurrences a key needs before it drafts (default 1)",
                  &d.sizes->min_hits);
    }
    ap.option("--spec-ngram-min-hits", "H", "min-hits of those three where their own option is not given",
              &ngram_min_hits);
    ap.option("--spec-ngram-size-n", "N", "key length of ngram-simple, ngram-map-k and ngram-map-k4v where their own option is not given",
              &ngram_size_n);
    ap.option("--spec-ngram-size-m", "M", "most tokens per draft of those three where their own option is not given",
              &ngram_size_m);
    ap.option("--draft-p-min,--spec-draft-p-min", "P",
              "stop drafting when the draft model's top probability is below P (default 0.75)", &sc.spec.p_min);
    ap.option("-ngld,--gpu-layers-draft,--n-gpu-layers-draft,--spec-draft-ngl", "N", "draft model layers on the GPU",
              &ngl_draft);
    ap.option("-cd,--ctx-size-draft", "N", "draft model context (default: the target's)", &ctx_draft);
    ap.option("-devd,--device-draft,--spec-draft-device", "DEV",
              "device of the draft model's offloaded layers (none, CUDA<i>)", &device_draft);
    ap.option("-ctkd,--cache-type-k-draft,--spec-draft-type-k", "TYPE", "KV cache type of K for the draft model "
              "(default: as -ctk)", &cache_type_k_draft);
    ap.option("-ctvd,--cache-type-v-draft,--spec-draft-type-v", "TYPE", "KV cache type of V for the draft model "
              "(default: as -ctv)", &cache_type_v_draft);
    ap.option("-td,--threads-draft,--spec-draft-threads", "N", "draft model threads (default: as -t)", &threads_draft);
    ap.option("--spec-draft-n-ubatch", "N", "draft model micro-batch size (default: as -ub)", &ubatch_draft);
    ap.option("-tbd,--threads-batch-draft,--spec-draft-threads-batch", "N",
              "draft model prompt threads (default: as --threads-draft)", &threads_batch_draft);
    ap.option("-lcs,--lookup-cache-static", "FILE", "ngram-cache: static n-gram statistics (read only)",
              &lookup_static);
    ap.option("-lcd,--lookup-cache-dynamic", "FILE",
              "ngram-cache: n-gram statistics of earlier requests, loaded at start and saved at shutdown",
              &lookup_dynamic);
    ap.flag("--embedding,--embeddings",
            "serve /v1/embeddings: an embedding model serves embeddings only, a generation model both (as "
            "--embeddings-with-generation)",
            &ac.embeddings);
    ap.flag("--embeddings-with-generation",
            "a generation model also serves /v1/embeddings from its final hidden states (pooling: --pooling or "
            "the model's), on idle slots between generation steps",
            &ac.embeddings_with_generation);
    ap.add("--pooling", "TYPE",
           "embedding pooling: none, mean, cls, last, or rank (= --reranking) (default: the model's pooling_type)",
           [&ac](const std::string& v) {
               auto p = engine::parse_pooling(v);
               if (!p) throw ArgError("--pooling must be none, mean, cls, last or rank, not '" + v + "'");
               // llama.cpp's reranking recipe is `--embedding --pooling rank`
               if (*p == engine::Pooling::Rank)
                   ac.reranking = true;
               else
                   ac.pooling = *p;
           });
    ap.option("--embd-normalize", "N",
              "embedding normalization when a request names none: -1 none, 0 max-abs, 1 taxicab, 2 euclidean "
              "(default), >2 p-norm",
              &ac.embd_normalize);
    ap.flag("--reranking,--rerank",
            "rerank endpoints (/v1/rerank; the model needs a classification head); implies --embeddings",
            &ac.reranking);
    ap.flag("-cb,--cont-batching", "continuous batching (always on)", &cont_batching);
    try {
        if (!ap.parse(argc, argv)) return 0;
        if (print_info(ir)) return 0;
        to.source = 1;
        ap.apply_env();  // LLAMA_ARG_*: below the command line, above --config
        to.source = 2;
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
        // Router mode, as llama-server: no model given, and models to choose from. With -m, one model is
        // served and the --models-* options are ignored (llama-server does the same).
        router_mode = mo.model.empty() && router_mode_requested(ro);
        if (!router_mode) {
            if (mo.model.empty())
                throw ArgError("missing -m MODEL (or --models-dir DIR / --models-preset FILE to serve several models)");
            finish_model_options(ap, mo);
            finish_chat_options(chat_template_file, chat_template_kwargs, reasoning, ac);
            finish_grammar_options(grammar_file, json_schema, json_schema_file, ac.defaults);
            finish_control_vector_options(cvo);
        }
        check_api_prefix(hc.api_prefix);
        // As llama-server: a server whose model can run tools answers only pages of this machine.
        // As llama-server: built-in tools or MCP servers make pages of this machine the default origins.
        const bool cors_localhost_for_tools =
            (!to.names.empty() || !to.mcp_config.empty() || !to.mcp_json.empty()) && !cors_origins_explicit;
        if (cors_localhost_for_tools) cors_origins = "localhost";
        try {
            hc.cors = server::http::CorsPolicy::from_options(cors_origins, cors_methods, cors_headers, cors_credentials);
        } catch (const std::invalid_argument& e) {
            throw ArgError(e.what());
        }
        if (sc.n_cache_reuse < 0) throw ArgError("--cache-reuse must not be negative");
        if (ac.embd_normalize < -1) throw ArgError("--embd-normalize must be >= -1");
        if (!(sc.slot_prompt_similarity >= 0.0f && sc.slot_prompt_similarity <= 1.0f))
            throw ArgError("--slot-prompt-similarity must be in [0, 1]");
        if (hc.ssl_key_file.empty() != hc.ssl_cert_file.empty())
            throw ArgError("HTTPS needs both --ssl-key-file and --ssl-cert-file");
        if (!hc.ssl_key_file.empty() && !server::http::Server::has_tls())
            throw ArgError("--ssl-key-file/--ssl-cert-file: this build has no TLS support (OpenSSL was not found "
                           "when it was configured); rebuild with libssl-dev installed");
        if (ac.reranking) ac.embeddings = true;
        if (ac.reranking && ac.embeddings_with_generation)
            throw ArgError("--reranking serves rank scores only, --embeddings-with-generation generation too: "
                           "choose one");
        if (port < 0 || port > 65535) throw ArgError("--port must be in [0, 65535]");
        // llama-server also listens on a comma list of addresses: say so instead of failing to resolve it.
        if (hc.host.find(',') != std::string::npos)
            throw ArgError("--host " + hc.host + ": one address only (0.0.0.0 or :: listens on every interface)");
        if (sc.n_parallel == -1) {  // llama-server's "auto": 4 slots sharing the context
            sc.n_parallel = 4;
            if (!ap.given("kv-unified")) kv_unified = true;
        }
        sc.shared_context = kv_unified;
        if (sc.n_parallel < 1 || sc.n_parallel > engine::kMaxSeq)
            throw ArgError("--parallel must be in [1, " + std::to_string(engine::kMaxSeq) + "]");
        if (timeout_s <= 0) throw ArgError("--timeout must be positive");
        if (stall_s <= 0) throw ArgError("--stream-stall-timeout must be positive");
        if (stream_queue_kib <= 0) throw ArgError("--stream-queue-kib must be positive");
        if (sse_ping_s < -1) throw ArgError("--sse-ping-interval must be -1 (no pings) or a number of seconds");
        if (ac.defaults.n_predict == -2) ac.defaults.n_predict = -1;  // llama.cpp's "until the context is full"
        if (ac.defaults.n_predict < -1) throw ArgError("--n-predict must be >= -1 (-1: no limit, -2: the context)");
        if (ac.defaults.n_keep < -1) throw ArgError("--keep must be >= -1");
        if (!ac.slot_save_path.empty()) {
            std::error_code ec;
            std::filesystem::create_directories(ac.slot_save_path, ec);
            if (!std::filesystem::is_directory(ac.slot_save_path, ec))
                throw ArgError("--slot-save-path '" + ac.slot_save_path +
                               "' is not a directory and cannot be created");
        }
        if (!wo.path.empty() && !std::filesystem::is_directory(wo.path))
            throw ArgError("--path '" + wo.path + "' is not a directory");
        if (!ac.log_prompts_dir.empty() && !std::filesystem::is_directory(ac.log_prompts_dir))
            throw ArgError("--log-prompts-dir '" + ac.log_prompts_dir + "' is not a directory");
        try {
            ac.ui_settings = webui::load_ui_config(ui_config, ui_config_file);
        } catch (const std::runtime_error& e) {
            throw ArgError(e.what());
        }
        ac.ui = webui;
        if (to.agent) ui_mcp_proxy = true;  // -ag: every built-in tool and the MCP CORS proxy, as llama-server
        ac.cors_proxy = ui_mcp_proxy;
        if (!router_mode && mo.n_ctx != 0 && mo.n_ctx < (uint32_t)sc.n_parallel)
            throw ArgError("--ctx-size must be at least --parallel (each slot needs context)");
        if (auto err = engine::validate(ac.defaults.sampling); !err.empty()) throw ArgError(err);
        if (sc.spec.n_max <= 0)
            throw ArgError("--draft-max must be positive (got " + std::to_string(sc.spec.n_max) + ")");
        if (sc.spec.n_min < 0 || sc.spec.n_min > sc.spec.n_max)
            throw ArgError("--draft-min must be in [0, --draft-max]");
        if (!(sc.spec.p_min >= 0.0f && sc.spec.p_min <= 1.0f)) throw ArgError("--draft-p-min must be in [0, 1]");
        if (sc.spec.ngram_mod_n_match < 1 || sc.spec.ngram_mod_n_match > 1024)
            throw ArgError("--spec-ngram-mod-n-match must be in [1, 1024]");
        apply_ngram_sizes(sc.spec, ngram_size_n, ngram_size_m, ngram_min_hits);
        if (ngl_draft < 0) throw ArgError("--gpu-layers-draft must not be negative");
        if (ubatch_draft < 0) throw ArgError("--spec-draft-n-ubatch must not be negative");
        if (threads_draft < 0 || threads_batch_draft < 0) throw ArgError("draft thread counts must not be negative");
        for (const std::string* t : {&cache_type_k_draft, &cache_type_v_draft})
            if (!t->empty()) check_cache_type(t == &cache_type_k_draft ? "--cache-type-k-draft" : "--cache-type-v-draft", *t);
        if (!spec_type.empty()) {
            try {
                sc.spec.types = engine::spec::parse_drafter_list(spec_type);
            } catch (const std::invalid_argument& e) {
                throw ArgError(std::string("--spec-type: ") + e.what());
            }
        }
        const auto lists_model = [&] {
            for (auto t : sc.spec.types)
                if (t == engine::spec::DrafterType::DraftModel) return true;
            return false;
        };
        if (!model_draft.empty() && !lists_model()) sc.spec.types.push_back(engine::spec::DrafterType::DraftModel);
        if (lists_model() && model_draft.empty())
            throw ArgError("--spec-type draft-simple needs a draft model (-md FILE)");
        ac.draft_model_path = model_draft;
        if (const std::string err = engine::spec::lookahead_param_error(sc.spec.lookahead); !err.empty())
            throw ArgError("--lookahead-w/-n/-g: " + err);
        if ((!lookup_static.empty() || !lookup_dynamic.empty()) && spec_type.find("ngram-cache") == std::string::npos)
            throw ArgError("--lookup-cache-static/--lookup-cache-dynamic need --spec-type ngram-cache");
        if (!api_key_file.empty()) {
            std::ifstream f(api_key_file);
            if (!f) throw ArgError("cannot read --api-key-file '" + api_key_file + "'");
            std::string line;
            while (std::getline(f, line))  // one key per line; '#' starts a comment line
                if (!line.empty() && line[0] != '#') hc.api_keys.push_back(line);
        }
        toolbox = make_toolbox(to, tool_warnings);
        // Logs go to stderr (and --log-file); stdout stays free for tools that wrap the server.
        setup_logging(lo);
        if (cors_localhost_for_tools)
            spdlog::warn("server tools are enabled, using localhost as default CORS origin (change via --cors-origins)");
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve serve: %s\n", e.what());
        return 2;
    }
    // Before any thread starts: every thread inherits the process's priority.
    if (const std::string err = mo.cpu.apply_priority(); !err.empty()) spdlog::warn("{}", err);
    spdlog::info("{}", version_string());
    spdlog::info("{}", mo.cpu.describe());
    if (ap.given("defrag-thold"))
        spdlog::info("--defrag-thold {}: nothing to do, ggserve's KV cache needs no defragmentation", defrag_thold);
    if (sc.n_cache_reuse > 0) spdlog::info("cache reuse: chunks of at least {} tokens", sc.n_cache_reuse);
    if (sc.cache_ram_mib == 0 && sc.cache_idle_slots) {
        spdlog::warn("--cache-idle-slots: nothing to do with the host-memory prompt cache off (--cache-ram 0)");
        sc.cache_idle_slots = false;
    }
    if (sc.cache_ram_mib != 0)
        spdlog::info("host-memory prompt cache: {}{}",
                     sc.cache_ram_mib < 0 ? "no limit" : std::to_string(sc.cache_ram_mib) + " MiB",
                     sc.cache_idle_slots ? ", idle slots moved there when a request is seated" : "");
    ac.verbose = lo.verbose;
    ac.server_settings = {{"warmup", warmup},
                          {"kv_offload", mo.kv_offload},
                          {"flash_attn", mo.flash_attn},
                          {"cpu_threads", {{"cpus", mo.cpu.threads.cpus},
                                           {"strict", mo.cpu.threads.strict},
                                           {"poll", mo.cpu.threads.poll},
                                           {"prio", mo.cpu.prio},
                                           {"numa", mo.cpu.numa}}},
                          {"tls", !hc.ssl_key_file.empty()},
                          {"embeddings_with_generation", ac.embeddings_with_generation},
                          {"sleep_idle_seconds", sc.sleep_idle_seconds},
                          {"reasoning", {{"reasoning", reasoning.reasoning},
                                         {"effort", reasoning.effort},
                                         {"format", ac.reasoning_format},
                                         {"budget", ac.reasoning_budget},
                                         {"budget_message", ac.reasoning_budget_message},
                                         {"preserve", reasoning.preserve},
                                         {"skip_chat_parsing", ac.skip_chat_parsing},
                                         {"prefill_assistant", ac.prefill_assistant}}},
                          {"verbose", lo.verbose}};
    ac.slots = !no_slots;
    if (lora_without_apply) ac.lora_scales.assign(ac.lora_scales.size(), 0.0f);
    ac.n_ubatch = mo.n_ubatch;
    ac.n_ctx = mo.n_ctx;
    ac.n_batch = mo.n_ctx > 0 ? std::min(mo.n_batch, mo.n_ctx) : mo.n_batch;  // as the context clamps it
    hc.port = (uint16_t)port;
    hc.n_threads = threads_http;
    hc.read_timeout = hc.write_timeout = std::chrono::seconds(timeout_s);
    hc.stream_stall_timeout = std::chrono::seconds(stall_s);
    hc.sse_ping_interval = std::chrono::seconds(std::max(sse_ping_s, 0));
    hc.stream_queue_bytes = (size_t)stream_queue_kib * 1024;
    // Vertex AI (AIP_MODE=PREDICTION): its port, health route and predict route (vertex_predict.h).
    try {
        ro.vertex = api::vertex_config_from_env();
        api::apply_vertex_config(ro.vertex, hc);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "ggserve serve: %s\n", e.what());
        return 2;
    }

    // Signals are waited for by this thread only: block them before any other thread starts.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

    for (const auto& w : tool_warnings) spdlog::warn("{}", w);
    // MCP servers start before the HTTP server (each bounded by 10 s), so /tools lists their tools from
    // the first request; in router mode the router runs them.
    try {
        start_tools_runtime(to, toolbox.get());
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
    if (toolbox) toolbox->start_mcp();

    if (router_mode) {
        ro.webui = webui;
        ro.webui_path = wo.path;
        ro.timeout = std::chrono::seconds(timeout_s);
        ro.ui_settings = ac.ui_settings;
        ro.ui_mcp_proxy = ui_mcp_proxy;
        return run_router(ap, ro, hc, std::move(toolbox));
    }
    // -a A,B as llama-server: A names the model, B is another name for it; --tags label it.
    ac.model_aliases = split_list(ac.model_alias);
    ac.model_alias = ac.model_aliases.empty() ? "" : ac.model_aliases.front();
    ac.model_tags = split_list(ro.tags);
    if (router_mode_requested(ro) || ap.given("models-max") || ap.given("no-models-autoload"))
        spdlog::warn("--models-dir/--models-preset/--models-*: ignored, -m serves one model (router mode is "
                     "without -m)");

    try {
        // Declared before the server, so destroyed after it: relays in flight end when the server stops.
        webui::CorsProxy cors_proxy({ui_mcp_proxy, std::chrono::seconds(timeout_s)});
        server::http::Server http(hc);
        api::Api api(ac, http);
        api.register_routes();
        // Built-in tools: /tools exists only when some are enabled, as in llama-server.
        if (toolbox && !toolbox->empty()) api.set_server_setting("tools", toolbox->names());
        const auto tools_api = serve_tools(std::move(toolbox), http);
        cors_proxy.register_routes(http);
        if (ro.vertex.enabled) api::register_vertex_routes(http, ro.vertex, [&http] { return http.port(); }, hc.api_prefix);
        if (webui || !wo.path.empty()) {
            auto ui = std::make_shared<const webui::WebUi>(wo);
            http.fallback([ui](server::http::Request& req) { return ui->handle(req); });
            if (!ui->embedded())
                spdlog::info("web UI: serving the files of {} at /", wo.path);
            else if (ui->embedded_gzip_bytes() > 0)
                spdlog::info("web UI: embedded chat UI at / ({} KiB gzip)", (ui->embedded_gzip_bytes() + 1023) / 1024);
            else
                spdlog::info("web UI: this build has none (-DGGSERVE_WEBUI=OFF)");
        }
        http.start();  // /health answers 503 while the model loads
        spdlog::info("listening on {}", server::http::listen_url(hc, http.port()));

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
        if (!mo.use_mmap) spdlog::info("model read into memory (--no-mmap)");
        if (mo.check_tensors)
            spdlog::info("--check-tensors: the {} tensors hold no NaN or infinite value", model->gguf().tensors().size());
        if (mo.use_mlock) {
            if (model->locked_bytes() > 0)
                spdlog::info("model locked in RAM: {} bytes (--mlock)", model->locked_bytes());
            else
                spdlog::warn("--mlock: cannot lock the model in RAM: {}", model->lock_error());
        }
        for (const auto& [key, value] : mo.kv_overrides)
            spdlog::info("metadata override: {} = {}", key, value.to_display());
        // llama-server (2026) keeps generating when --embeddings is given for a generation model (b4748
        // answered 501): one server for chat and embeddings, as --embeddings-with-generation.
        if (ac.embeddings && !ac.reranking && model->output) {
            spdlog::info("--embeddings with a generation model: it serves generation and embeddings "
                         "(--embeddings-with-generation)");
            ac.embeddings = false;  // the context keeps its logits
            api.set_embeddings_with_generation();
        }
        for (const std::string& line : engine::describe_model(model->hparams(), model->gguf()))
            spdlog::info("{}", line);
        if (const ggml::Backend* dev = model->offload_backend())
            spdlog::info("offload: {} of {} layers{} on {}", model->n_offloaded_layers(),
                         model->hparams().n_layer, model->output_offloaded() ? " and the output" : "",
                         dev->name());
        std::vector<std::unique_ptr<engine::LoraAdapter>> adapters;
        engine::ContextParams cp = mo.context_params();
        std::vector<api::Api::LoraMetadata> lora_metadata;
        for (const std::string& path : ac.lora_paths) {
            adapters.push_back(engine::LoraAdapter::load(path, *model));
            cp.lora.push_back(adapters.back().get());
            lora_metadata.push_back({adapters.back()->task_name(), adapters.back()->prompt_prefix()});
            spdlog::info("LoRA adapter {}: {} ({} weights, alpha {}), scale {}", adapters.size() - 1, path,
                         adapters.back()->n_pairs(), adapters.back()->alpha(), ac.lora_scales[adapters.size() - 1]);
        }
        api.set_lora_metadata(std::move(lora_metadata));
        std::unique_ptr<engine::ControlVector> cvec;
        try {
            cvec = make_control_vector(cvo, *model);
        } catch (const std::exception& e) {
            spdlog::error("{}", e.what());
            return 2;
        }
        if (cvec) {
            cp.cvec = cvec.get();
            api.set_server_setting("control_vectors", describe_control_vector(cvo, *cvec));
            spdlog::info("control vectors: {} file(s), layers {}..{}: {} layer outputs steered", cvo.files.size(),
                         cvec->layer_start(), cvec->layer_end(), cvec->n_steered());
            if (cvec->n_ignored() > 0)
                spdlog::warn("control vectors: {} direction(s) for layers beyond the model's {} are ignored",
                             cvec->n_ignored(), model->hparams().n_layer);
        }
        cp.n_seq_max = (uint32_t)sc.n_parallel;
        cp.kv_unified = sc.shared_context;
        // Lookahead lanes (one sequence id per window column and branch while a step runs) come after the
        // slots' ids: enough for every slot's full step, as far as the cache's sequence ids go.
        if (sc.spec.has(engine::spec::DrafterType::Lookahead)) {
            const int64_t lanes = (int64_t)sc.n_parallel * engine::spec::lookahead_step_lanes(sc.spec.lookahead);
            cp.n_seq_max = (uint32_t)std::min<int64_t>(engine::kMaxSeq, sc.n_parallel + lanes);
            // LongRoPE picks its factors from a sequence's share of the context (n_ctx / n_seq_max): the
            // lanes must not change that choice.
            const uint32_t n_ctx = cp.n_ctx ? cp.n_ctx : model->hparams().n_ctx_train;
            const uint32_t orig = model->hparams().n_ctx_orig;
            if (!model->layers.empty() && model->layers[0].rope_long && !cp.kv_unified &&
                (n_ctx / (uint32_t)sc.n_parallel > orig) != (n_ctx / cp.n_seq_max > orig)) {
                spdlog::error("--spec-type lookahead: this LongRoPE model would switch RoPE factors with the {} extra "
                              "sequence ids lookahead needs; use another --spec-type or --ctx-size", cp.n_seq_max - (uint32_t)sc.n_parallel);
                return 2;
            }
        }
        // An encoder reads each input whole, in one micro-batch, through the KV cells: -c must not bound
        // it below -ub (llama-server bounds encoder inputs by -ub and the model's context only).
        if (!model->hparams().causal && cp.n_ctx != 0) {
            const uint32_t need = std::min(cp.n_ubatch, model->hparams().n_ctx_train);
            if (cp.n_ctx < need) {
                spdlog::info("encoder model: {} KV cells instead of -c {}, so that an input of -ub tokens fits",
                             need, cp.n_ctx);
                cp.n_ctx = need;
                api.set_context_size(need);
            }
        }
        cp.embeddings = ac.embeddings;  // a decoder embeds with its final hidden states
        engine::Context ctx(*model, cp);

        std::unique_ptr<engine::Model> draft;
        std::unique_ptr<engine::spec::DraftModel> drafter;
        if (!model_draft.empty()) {
            DeviceOptions dd;
            dd.device = device_draft;
            engine::ModelParams dp;
            dp.n_gpu_layers = dd.finish(ap, ngl_draft) ? ngl_draft : 0;
            dp.use_mmap = mo.use_mmap;
            dp.use_mlock = mo.use_mlock;
            dp.check_tensors = mo.check_tensors;
            dp.main_gpu = dd.main_gpu;
            try {
                draft = engine::Model::load(model_draft, dp);
            } catch (const std::exception& e) {
                throw std::runtime_error("cannot load the draft model '" + model_draft + "': " + e.what());
            }
            engine::ContextParams dcp = cp;
            dcp.lora.clear();  // adapters and control vectors belong to the target model
            dcp.cvec = nullptr;
            dcp.n_ctx = ctx_draft ? ctx_draft : ctx.n_ctx();
            if (!cache_type_k_draft.empty()) ggml::type_from_name(cache_type_k_draft.c_str(), &dcp.type_k);
            if (!cache_type_v_draft.empty()) ggml::type_from_name(cache_type_v_draft.c_str(), &dcp.type_v);
            if (threads_draft > 0) dcp.n_threads = dcp.n_threads_batch = threads_draft;
            if (threads_batch_draft > 0) dcp.n_threads_batch = threads_batch_draft;
            if (ubatch_draft > 0) dcp.n_ubatch = std::min<uint32_t>((uint32_t)ubatch_draft, dcp.n_batch);
            drafter = std::make_unique<engine::spec::DraftModel>(*draft, *model, dcp);
            sc.draft_model = drafter.get();
            spdlog::info("draft model: {} ({}, {} parameters)", model_draft, draft->description(), draft->n_params());
        }
        for (auto t : sc.spec.types)
            if (t == engine::spec::DrafterType::NgramCache) {
                sc.ngram_store = std::make_shared<engine::spec::NgramCacheStore>();
                if (!lookup_static.empty()) sc.ngram_store->static_cache.load(lookup_static);
                sc.ngram_store->load_dynamic(lookup_dynamic);
            }
        if (sc.spec.enabled())
            spdlog::info("speculative decoding: {} (draft max {}, min {}, p_min {})",
                         engine::spec::drafter_list_string(sc.spec.types), sc.spec.n_max, sc.spec.n_min,
                         sc.spec.p_min);
        if (sc.spec.has(engine::spec::DrafterType::Lookahead)) {
            const int32_t n_ctx_slot =
                sc.shared_context ? (int32_t)ctx.n_ctx() : (int32_t)(ctx.n_ctx() / (uint32_t)sc.n_parallel);
            const int32_t n_lanes = (int32_t)ctx.params().n_seq_max - sc.n_parallel;
            // The default window is sized for the default batch: with a smaller -b (or context share) it
            // shrinks to fit rather than refusing to start; a W, N or G the user chose is kept (or refused).
            if (sc.spec.lookahead == engine::spec::LookaheadParams{}) {
                const auto fit = engine::spec::lookahead_shrink_to_fit(
                    sc.spec.lookahead, ctx.params().n_batch, n_ctx_slot, n_lanes);
                if (fit != sc.spec.lookahead)
                    spdlog::info(
                        "lookahead: the default W {}, G {} lowered to W {}, G {} to fit n_batch {}, a "
                        "slot's context of {} and {} spare sequence ids",
                        sc.spec.lookahead.w, sc.spec.lookahead.g, fit.w, fit.g, ctx.params().n_batch,
                        n_ctx_slot, n_lanes);
                sc.spec.lookahead = fit;
            }
            const std::string err = engine::spec::lookahead_fit_error(sc.spec.lookahead, ctx.params().n_batch,
                                                                      n_ctx_slot, n_lanes);
            if (!err.empty()) {
                spdlog::error("--spec-type lookahead: {}", err);
                return 2;
            }
            spdlog::info("lookahead: W {}, N {}, G {}{} ({} sequence ids for lanes)", sc.spec.lookahead.w,
                         sc.spec.lookahead.n, sc.spec.lookahead.g, sc.spec.lookahead_fixed ? ", fixed" : ", adaptive",
                         ctx.params().n_seq_max - (uint32_t)sc.n_parallel);
        }
        // A server the router started tells it when it sleeps and wakes (child_state.h).
        if (std::getenv(router::kChildEnv))
            sc.on_sleep_change = [](bool asleep) {
                const std::string line = std::string(asleep ? router::kChildSleeping : router::kChildAwake) + "\n";
                std::fwrite(line.data(), 1, line.size(), stdout);
                std::fflush(stdout);
            };
        sched::Scheduler scheduler(*model, ctx, sc);
        scheduler.start(warmup);
        api.attach(*model, scheduler);
        signals->serving.store(true);  // before "ready", which is what clients and tests wait for
        spdlog::info("ready: {} slots, context {} ({} per slot), batch {}, micro-batch {}", sc.n_parallel,
                     ctx.n_ctx(), scheduler.n_ctx_slot(), ctx.params().n_batch, ctx.params().n_ubatch);

        const int sig = shutdown_signal.get();
        spdlog::info("signal {}: shutting down", sig);
        http.stop(std::chrono::seconds(2));
        scheduler.stop();
        api.finish_formatting();
        if (sc.ngram_store && !sc.ngram_store->dynamic_path.empty()) {
            try {
                sc.ngram_store->save_dynamic();
            } catch (const std::exception& e) {
                spdlog::error("{}", e.what());
            }
        }
        return 0;
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
}

}  // namespace cli
