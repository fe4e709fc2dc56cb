// Route table, readiness, and the endpoints that report on the server.
#include "server/api/api.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>

#include "engine/quantize/file_type.h"
#include "engine/speculative/drafter.h"
#include "server/api/build_info.h"
#include "server/api/chat_request_options.h"
#include "server/api/json_fields.h"
#include "server/api/messages_reply.h"
#include "server/http/errors.h"
#include "server/http/request_schemas.h"

namespace api {

using server::http::HttpError;

namespace {
// A slot's lookahead: null when its request runs none; else its W, N, G, pool, steps and what they cost.
json lookahead_slot_json(const sched::SlotInfo& s) {
    if (s.la.w <= 0) return nullptr;
    const double steps = (double)s.la_steps, accepted = (double)s.la_accepted;
    return json{{"w", s.la.w},
                {"n", s.la.n},
                {"g", s.la.g},
                {"fixed", s.la_fixed},
                {"pool_size", s.la_pool},
                {"steps", s.la_steps},
                {"evaluated", s.la_evaluated},
                {"accepted", s.la_accepted},
                {"accepted_per_step", steps > 0 ? accepted / steps : 0.0},
                {"evaluated_per_accepted", accepted > 0 ? (double)s.la_evaluated / accepted : 0.0}};
}

bool is_valid_utf8(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = (unsigned char)s[i];
        const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + (size_t)n > s.size()) return false;
        for (int k = 1; k < n; ++k)
            if (((unsigned char)s[i + k] >> 6) != 2) return false;
        i += (size_t)n;
    }
    return true;
}
}  // namespace
using server::http::Response;

Api::Api(ApiConfig config, server::http::Server& http)
    : config_(std::move(config)),
      http_(http),
      format_pool_(std::make_unique<FormatPool>(config_.format_threads)),
      work_pool_(std::make_unique<FormatPool>(config_.work_threads)) {
    if (!config_.log_prompts_dir.empty()) prompt_log_ = std::make_unique<PromptLog>(config_.log_prompts_dir);
}
Api::~Api() = default;

void Api::finish_formatting() {
    work_pool_.reset();
    format_pool_.reset();
}

void Api::register_routes() {
    // Every handler turns HttpError (and bad input found deeper) into an error body: OpenAI's shape, or
    // the route's own (Anthropic's on /v1/messages).
    using server::http::ErrorFormatter;
    const ErrorFormatter openai = [](const HttpError& e) { return server::http::error_response(e); };
    const ErrorFormatter anthropic = [](const HttpError& e) { return anthropic_error_response(e.status(), e.what()); };
    auto guard = [](std::function<Reply(Request&)> fn, ErrorFormatter format) {
        return [fn = std::move(fn), format](Request& req) -> Reply {
            try {
                return fn(req);
            } catch (const HttpError& e) {
                return format(e);
            } catch (const std::invalid_argument& e) {
                return format(HttpError(400, e.what()));
            } catch (const std::exception& e) {
                spdlog::error("{} {}: {}", req.method, req.path, e.what());
                return format(HttpError(500, e.what()));
            }
        };
    };
    auto method = [this](Reply (Api::*fn)(Request&)) {
        return std::function<Reply(Request&)>([this, fn](Request& r) { return (this->*fn)(r); });
    };
    auto bind = [&](Reply (Api::*fn)(Request&), const ErrorFormatter& format) {
        return guard(method(fn), format);
    };
    // Handlers whose work grows with the body run on the work pool: the I/O thread only defers. The
    // request is copied (its body moved), since the connection that owns it may close meanwhile.
    auto offload = [this, &guard, &method](Reply (Api::*fn)(Request&),
                                           ErrorFormatter format) -> server::http::Handler {
        auto run = guard(method(fn), format);
        return [this, run, format](Request& req) -> Reply {
            auto deferred = req.defer();
            std::string body = std::move(req.body);
            auto copy = std::make_shared<Request>(req);
            copy->body = std::move(body);
            work_pool_->serial()->post([run, copy, deferred, format] {
                Reply reply = run(*copy);
                deferred->respond(reply.is_async() ? format(HttpError(500, "an offloaded handler went async"))
                                                   : std::move(reply.response()));
            });
            return deferred;
        };
    };
    // Generation and embedding requests with large bodies (long prompts to tokenize, long conversations to
    // render) are prepared on the work pool too; small ones stay on the I/O thread, so that they never
    // wait behind a large one. The handler's copy of the request answers, streamed or not.
    auto prepare_off_io = [this, &guard](std::function<Reply(Request&)> fn,
                                         ErrorFormatter format) -> server::http::Handler {
        auto run = guard(std::move(fn), format);
        return [this, run](Request& req) -> Reply {
            if (req.body.size() < kInlineBodyBytes) return run(req);
            auto copy = req.hand_off();
            work_pool_->serial()->post([run, copy] {
                Reply reply = run(*copy);
                // A handler that went async answers through its writer; one that started a stream and then
                // failed dropped its writer, which ends the stream.
                if (!reply.is_async() && !copy->is_async()) copy->defer()->respond(std::move(reply.response()));
            });
            return Reply::handed_off();
        };
    };
    auto large = [&](Reply (Api::*fn)(Request&), const ErrorFormatter& format) {
        return prepare_off_io(method(fn), format);
    };
    http_.get("/health", bind(&Api::health, openai));
    http_.get("/v1/health", bind(&Api::health, openai));
    http_.get("/v1/models", bind(&Api::models, openai));
    http_.get("/models", bind(&Api::models, openai));
    http_.get("/props", bind(&Api::props_get, openai));
    http_.post("/props", bind(&Api::props_post, openai));
    http_.get("/slots", bind(&Api::slots, openai));
    http_.post("/slots/{id}", bind(&Api::slot_action, openai));
    http_.get("/metrics", bind(&Api::metrics, openai));
    http_.post("/tokenize", offload(&Api::tokenize, openai));
    http_.post("/detokenize", offload(&Api::detokenize, openai));
    http_.post("/apply-template", offload(&Api::apply_template, openai));
    http_.post("/v1/chat/completions", large(&Api::chat_completions, openai));
    http_.post("/chat/completions", large(&Api::chat_completions, openai));
    http_.post("/v1/chat/completions/control", bind(&Api::chat_control, openai));
    http_.post("/chat/completions/control", bind(&Api::chat_control, openai));
    http_.post("/v1/chat/completions/input_tokens", offload(&Api::chat_input_tokens, openai));
    http_.get("/v1/stream", bind(&Api::stream_get, openai));
    http_.get("/v1/stream/{id}", bind(&Api::stream_get, openai));
    http_.del("/v1/stream", bind(&Api::stream_delete, openai));
    http_.del("/v1/stream/{id}", bind(&Api::stream_delete, openai));
    http_.post("/v1/streams/lookup", bind(&Api::streams_lookup, openai));
    http_.post("/chat/completions/input_tokens", offload(&Api::chat_input_tokens, openai));
    http_.post("/completion", prepare_off_io([this](Request& r) { return completion(r, Flavor::Native); }, openai));
    http_.post("/infill", large(&Api::infill, openai));
    http_.get("/lora-adapters", bind(&Api::lora_adapters_get, openai));
    http_.post("/lora-adapters", bind(&Api::lora_adapters_post, openai));
    // As llama-server: /completions without /v1 is the native endpoint.
    http_.post("/completions", prepare_off_io([this](Request& r) { return completion(r, Flavor::Native); }, openai));
    http_.post("/v1/completions",
               prepare_off_io([this](Request& r) { return completion(r, Flavor::Completions); }, openai));
    http_.post("/v1/embeddings", prepare_off_io([this](Request& r) { return embeddings(r, true); }, openai));
    http_.post("/embedding", prepare_off_io([this](Request& r) { return embeddings(r, false); }, openai));
    http_.post("/embeddings", prepare_off_io([this](Request& r) { return embeddings(r, false); }, openai));
    for (const char* path : {"/v1/rerank", "/rerank", "/reranking", "/v1/reranking"})
        http_.post(path, large(&Api::rerank, openai));
    // OpenAI Responses API: no stored responses, so GET and DELETE of one are 404s that say so.
    for (const char* path : {"/v1/responses", "/responses"}) http_.post(path, large(&Api::responses, openai));
    for (const char* path : {"/v1/responses/input_tokens", "/responses/input_tokens"})
        http_.post(path, offload(&Api::responses_input_tokens, openai));
    http_.get("/v1/responses/{id}", bind(&Api::response_not_stored, openai));
    http_.del("/v1/responses/{id}", bind(&Api::response_not_stored, openai));
    // Anthropic Messages API, with Anthropic's error shape for everything under /v1/messages (routing
    // and API-key errors included).
    http_.error_format("/v1/messages", anthropic);
    http_.post("/v1/messages", large(&Api::messages, anthropic));
    http_.post("/v1/messages/count_tokens", offload(&Api::messages_count_tokens, anthropic));
    // Audio transcription needs an audio model (llama-server's multimodal path); said plainly.
    for (const char* path : {"/v1/audio/transcriptions", "/audio/transcriptions"})
        http_.post(path, [](Request&) -> Reply {
            return server::http::error_response(501,
                                                "audio transcription is not supported: ggserve serves text models "
                                                "(no audio projector, --mmproj)",
                                                "not_supported_error");
        });
}

void Api::attach(const engine::Model& model, sched::Scheduler& scheduler) {
    model_ = &model;
    scheduler_ = &scheduler;
    model_ftype_ = engine::quant::file_type_report_name(engine::quant::model_file_type(model.gguf()));
    chat_ = std::make_unique<ChatFormatter>(model, config_.chat_template, config_.jinja);
    const auto& vocab = model.vocab();
    // Grammars match text: control tokens have none (special=false), so characters never allow them and
    // only EOG tokens end a grammar. Their text still names them for token elements and lazy triggers
    // (a tool grammar's [TOOL_CALLS] or <｜tool▁calls▁begin｜>).
    std::vector<std::string> pieces((size_t)vocab.n_tokens()), control((size_t)vocab.n_tokens());
    for (int i = 0; i < vocab.n_tokens(); ++i) {
        pieces[(size_t)i] = vocab.token_to_piece(i, false);
        if (vocab.is_control(i)) control[(size_t)i] = vocab.token_to_piece(i, true);
    }
    grammar_vocab_ =
        std::make_shared<engine::GrammarVocab>(std::move(pieces), vocab.eog_tokens(), std::move(control));
    spdlog::info("chat format: {}", chat_->name());
    if (!config_.defaults.grammar.empty()) {  // --grammar/--json-schema: a bad one stops the start
        GenerationOptions g;
        g.grammar = config_.defaults.grammar;
        try {
            compile_grammar(g);
        } catch (const std::exception& e) {
            throw std::runtime_error(std::string("the server's grammar (--grammar, --json-schema): ") + e.what());
        }
    }
    ready_.store(true);
}

void Api::require_ready() const {
    if (!ready_.load()) throw HttpError(503, "Loading model", "unavailable_error");
}

json Api::parse_body(const Request& req, const char* schema) const { return server::http::parse_request_body(req, schema); }

std::string Api::model_name() const {
    if (!config_.model_alias.empty()) return config_.model_alias;
    return model_ ? std::filesystem::path(model_->path()).filename().string() : "";
}

std::string Api::echoed_model(const json& body) const {
    const json* m = field(body, "model");
    return m && m->is_string() && !m->get_ref<const std::string&>().empty() ? m->get<std::string>() : model_name();
}

Api::Reply Api::health(Request&) {
    require_ready();
    return Response::json({{"status", "ok"}});
}

Api::Reply Api::models(Request&) {
    require_ready();
    const auto& hp = model_->hparams();
    const auto created =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    // llama.cpp's vocabulary type numbers: 1 SentencePiece, 2 byte-level BPE, 3 WordPiece.
    const std::string tm = model_->gguf().get_string("tokenizer.ggml.model", "");
    const int vocab_type = tm == "llama" ? 1 : tm == "gpt2" ? 2 : tm == "bert" ? 3 : tm == "t5" ? 4 : 0;
    json m{{"id", model_name()},
           {"aliases", config_.model_aliases},
           {"tags", config_.model_tags},
           {"object", "model"},
           {"architecture", {{"input_modalities", {"text"}}, {"output_modalities", {"text"}}}},
           {"created", created},
           {"owned_by", "llamacpp"},
           {"meta",
            {{"vocab_type", vocab_type},
             {"n_vocab", hp.n_vocab},
             {"n_ctx", config_.n_ctx ? config_.n_ctx : hp.n_ctx_train},
             {"n_ctx_train", hp.n_ctx_train},
             {"n_embd", hp.n_embd},
             {"n_params", model_->n_params()},
             {"size", model_->n_bytes()},
             {"ftype", model_ftype_}}}};
    json models = json::array({{{"name", model_name()},
                                {"model", model_name()},
                                {"modified_at", ""},
                                {"size", ""},
                                {"digest", ""},
                                {"type", "model"},
                                {"description", ""},
                                {"tags", json::array({""})},
                                {"capabilities", embeddings_only() ? json::array({"embedding"})
                                                      : config_.embeddings_with_generation
                                                          ? json::array({"completion", "embedding"})
                                                          : json::array({"completion"})},
                                {"parameters", ""},
                                {"details", {{"parent_model", ""},
                                             {"format", "gguf"},
                                             {"family", ""},
                                             {"families", json::array({""})},
                                             {"parameter_size", ""},
                                             {"quantization_level", ""}}}}});
    return Response::json({{"object", "list"}, {"models", models}, {"data", json::array({m})}});
}

json Api::generation_settings(const GenerationOptions& o) const {
    const auto& s = o.sampling;
    json samplers = json::array();
    for (auto t : s.samplers) samplers.push_back(std::string(engine::sampler_type_name(t)));
    json logit_bias = json::array();
    for (const auto& b : s.logit_bias)
        logit_bias.push_back({{"bias", std::isfinite(b.bias) ? json(b.bias) : json(b.bias < 0 ? -1e30 : 1e30)},
                              {"token", b.token}});
    const sched::SpecConfig& spec = scheduler_->spec();
    // llama-server names its default reasoning format ("auto") by what it does: deepseek.
    const std::string reasoning_format = config_.reasoning_format == "auto" ? "deepseek" : config_.reasoning_format;
    return json{{"n_predict", o.n_predict},
                {"seed", s.seed},
                {"temperature", s.temperature},
                {"dynatemp_range", s.dynatemp_range},
                {"dynatemp_exponent", s.dynatemp_exponent},
                {"top_k", s.top_k},
                {"top_p", s.top_p},
                {"min_p", s.min_p},
                {"top_n_sigma", s.top_n_sigma},
                {"xtc_probability", s.xtc_probability},
                {"xtc_threshold", s.xtc_threshold},
                {"typical_p", s.typical_p},
                {"repeat_last_n", s.repeat_last_n},
                {"repeat_penalty", s.repeat_penalty},
                {"presence_penalty", s.presence_penalty},
                {"frequency_penalty", s.frequency_penalty},
                {"dry_multiplier", s.dry_multiplier},
                {"dry_base", s.dry_base},
                {"dry_allowed_length", s.dry_allowed_length},
                {"dry_penalty_last_n", s.dry_penalty_last_n},
                {"dry_sequence_breakers", s.dry_sequence_breakers},
                {"mirostat", s.mirostat},
                {"mirostat_tau", s.mirostat_tau},
                {"mirostat_eta", s.mirostat_eta},
                {"adaptive_target", s.adaptive_target},
                {"adaptive_decay", s.adaptive_decay},
                {"stop", o.stop},
                {"max_tokens", o.n_predict},
                {"n_keep", o.n_keep},
                {"n_discard", o.n_discard},
                {"ignore_eos", o.ignore_eos},
                {"stream", o.stream},
                {"logit_bias", logit_bias},
                {"n_probs", s.n_probs},
                {"min_keep", s.min_keep},
                {"grammar", o.grammar},
                {"grammar_lazy", o.grammar_lazy},
                {"samplers", samplers},
                {"speculative.n_max", o.spec_n_max >= 0 ? o.spec_n_max : spec.n_max},
                {"speculative.n_min", o.spec_n_min >= 0 ? o.spec_n_min : spec.n_min},
                {"speculative.p_min", o.spec_p_min >= 0 ? o.spec_p_min : spec.p_min},
                {"timings_per_token", o.timings_per_token},
                {"post_sampling_probs", o.post_sampling_probs},
                {"n_indent", o.n_indent},
                {"t_max_predict_ms", o.t_max_predict_ms},
                {"n_cache_reuse", o.n_cache_reuse >= 0 ? o.n_cache_reuse : scheduler_->config().n_cache_reuse},
                {"lora", json::array()},
                // llama-server 2026's fields for the native path (a prompt given as text: no chat format).
                {"backend_sampling", false},
                {"chat_format", "Content-only"},
                {"generation_prompt", ""},
                {"grammar_triggers", o.trigger_list},
                {"preserved_tokens", json::array()},
                {"reasoning_format", reasoning_format},
                {"reasoning_in_content", false},
                {"speculative.types", spec.types.empty() ? "none" : engine::spec::drafter_list_string(spec.types)}};
}

json Api::task_settings(const sched::Task& t) const {
    GenerationOptions o;
    o.n_predict = t.n_predict;
    o.sampling = t.sampling;
    o.stop = t.stop;
    o.ignore_eos = t.ignore_eos;
    o.n_keep = t.n_keep;
    o.n_discard = t.n_discard;
    o.post_sampling_probs = t.post_sampling_probs;
    o.timings_per_token = t.timings_per_token;
    o.n_indent = t.n_indent;
    o.t_max_predict_ms = t.t_max_predict_ms;
    o.n_cache_reuse = t.n_cache_reuse;
    o.spec_n_max = t.spec.n_max;
    o.spec_n_min = t.spec.n_min;
    o.spec_p_min = t.spec.p_min;
    o.stream = t.stream;
    o.grammar = t.grammar_text;
    json settings = generation_settings(o);
    settings["lora"] = lora_json(t.lora);
    return settings;
}

namespace {
json ngram_sizes_json(const sched::SpecConfig::NgramSizes& z) {
    return json{{"size_n", z.n}, {"size_m", z.m}, {"min_hits", z.min_hits}};
}
}  // namespace

json Api::speculative_json() const {
    const sched::SpecConfig& sc = scheduler_->spec();
    return json{{"enabled", sc.enabled()},
                {"types", engine::spec::drafter_list_string(sc.types)},
                {"n_max", sc.n_max},
                {"n_min", sc.n_min},
                {"p_min", sc.p_min},
                {"ngram_mod_n_match", sc.ngram_mod_n_match},
                {"ngram_mod_n_min", sc.ngram_mod_n_min},
                {"ngram_mod_n_max", sc.ngram_mod_n_max},
                {"ngram_sizes",
                 {{"ngram-simple", ngram_sizes_json(sc.ngram_simple)},
                  {"ngram-map-k", ngram_sizes_json(sc.ngram_map_k)},
                  {"ngram-map-k4v", ngram_sizes_json(sc.ngram_map_k4v)}}},
                {"draft_model", config_.draft_model_path},
                {"lookahead", {{"w", sc.lookahead.w}, {"n", sc.lookahead.n}, {"g", sc.lookahead.g},
                               {"fixed", sc.lookahead_fixed}}}};
}

// llama-server's chat_template_caps keys. A built-in format renders system turns and strings, and tools only
// through the generic polyfill, which llama-server would not count.
static json template_caps_json(const engine::chat::TemplateCaps* caps) {
    const engine::chat::TemplateCaps builtin;
    const engine::chat::TemplateCaps& c = caps ? *caps : builtin;
    return {{"supports_tools", c.supports_tools},
            {"supports_tool_calls", c.supports_tool_calls},
            {"supports_tool_responses", c.supports_tool_responses},
            {"supports_system_role", c.supports_system_role},
            {"supports_parallel_tool_calls", c.supports_parallel_tool_calls},
            {"supports_string_content", c.supports_string_content},
            {"supports_typed_content", c.supports_typed_content},
            {"supports_object_arguments", c.object_arguments},
            {"supports_preserve_reasoning", c.supports_preserve_reasoning},
            {"supports_reasoning_effort", c.supports_reasoning_effort}};
}

Api::Reply Api::props_get(Request&) {
    require_ready();
    GenerationOptions d;
    {
        std::lock_guard<std::mutex> lk(defaults_mu_);
        d.n_predict = config_.defaults.n_predict;
        d.n_keep = config_.defaults.n_keep;
        d.sampling = config_.defaults.sampling;
        d.grammar = config_.defaults.grammar;
        d.ignore_eos = config_.defaults.ignore_eos;
        d.stop = config_.defaults.stop;
    }
    d.stream = false;  // as llama-server (2026) reports its defaults
    // llama-server's shape: an idle slot's description, the sampling settings in `params`.
    const json settings{{"id", 0},
                        {"id_task", -1},
                        {"n_ctx", scheduler_->n_ctx_slot()},
                        {"speculative", scheduler_->spec().enabled()},
                        {"is_processing", false},
                        {"params", generation_settings(d)},
                        {"prompt", ""},
                        {"next_token",
                         {{"has_next_token", true},
                          {"has_new_line", false},
                          {"n_remain", -1},
                          {"n_decoded", 0},
                          {"stopping_word", ""}}}};
    const auto& vocab = model_->vocab();
    json server = config_.server_settings;
    server["cache_reuse"] = scheduler_->config().n_cache_reuse;
    server["slot_prompt_similarity"] = scheduler_->config().slot_prompt_similarity;
    server["special"] = scheduler_->config().special;
    server["context_shift"] = scheduler_->config().context_shift;
    const sched::HostCacheStats hc = scheduler_->metrics().snapshot().host_cache;
    server["cache_ram_mib"] = scheduler_->config().cache_ram_mib;
    server["cache_idle_slots"] = scheduler_->config().cache_idle_slots;
    server["prompt_cache_ram"] = {{"min_tokens", sched::kHostCacheMinTokens},
                                  {"entries", hc.entries},
                                  {"bytes", hc.bytes},
                                  {"saves", hc.saves},
                                  {"hits", hc.hits},
                                  {"tokens_restored", hc.tokens_restored},
                                  {"evictions", hc.evictions}};
    server["mmap"] = model_->mapped();
    server["mlocked_bytes"] = model_->locked_bytes();
    const auto& hp = model_->hparams();
    server["rope"] = {{"scaling", engine::rope_scaling_name(hp.rope_scaling)},
                      {"freq_base", hp.rope_freq_base},
                      {"freq_scale", hp.rope_freq_scale},
                      {"n_ctx_orig", hp.n_ctx_orig},
                      {"yarn_ext_factor", hp.yarn_ext_factor},
                      {"yarn_attn_factor", hp.yarn_attn_factor},
                      {"yarn_beta_fast", hp.yarn_beta_fast},
                      {"yarn_beta_slow", hp.yarn_beta_slow}};
    return Response::json({{"default_generation_settings", settings},
                           {"total_slots", scheduler_->n_parallel()},
                           {"model_path", model_->path()},
                           {"model_alias", model_name()},
                           {"model_ftype", model_ftype_},
                           {"chat_template", chat_->template_source()},
                           {"chat_template_caps", template_caps_json(chat_->caps())},
                           {"chat_format", chat_->name()},
                           {"modalities", {{"vision", false}, {"video", false}, {"audio", false}}},
                           {"endpoint_slots", config_.slots},
                           {"endpoint_props", config_.props_writable},
                           {"endpoint_metrics", config_.metrics},
                           {"bos_token", vocab.bos() >= 0 ? vocab.token_to_piece(vocab.bos()) : ""},
                           {"eos_token", vocab.eos() >= 0 ? vocab.token_to_piece(vocab.eos()) : ""},
                           {"speculative", speculative_json()},
                           {"build_info", build_info()},
                           {"is_sleeping", scheduler_->sleeping()},
                           {"ui", config_.ui},
                           {"ui_settings", config_.ui_settings},
                           {"webui", config_.ui},  // the names of llama-server before its --ui rename
                           {"webui_settings", config_.ui_settings},
                           {"cors_proxy_enabled", config_.cors_proxy},
                           {"server", server}});
}

Api::Reply Api::props_post(Request& req) {
    require_ready();
    if (!config_.props_writable)
        throw HttpError(501, "this server does not support changing global properties; start it with --props",
                        "not_supported_error");
    const json body = parse_body(req, "props.json");
    const json* dgs = field(body, "default_generation_settings");
    const json& src = dgs ? *dgs : body;
    std::lock_guard<std::mutex> lk(defaults_mu_);
    // n_predict is read as a new default, not capped by the old one.
    ApiDefaults base = config_.defaults;
    base.n_predict = -1;
    GenerationOptions o = parse_generation_options(src, base, model_->vocab(), Flavor::Native);
    config_.defaults.n_predict = field(src, "n_predict") ? o.n_predict : config_.defaults.n_predict;
    config_.defaults.sampling = o.sampling;
    config_.defaults.ignore_eos = o.ignore_eos;
    return Response::json({{"success", true}});
}

Api::Reply Api::slots(Request& req) {
    require_ready();
    if (!config_.slots) throw HttpError(501, "this server does not support the slots endpoint; it was started with --no-slots");
    json arr = json::array();
    bool any_idle = false;
    GenerationOptions idle_settings;
    {
        std::lock_guard<std::mutex> lk(defaults_mu_);
        idle_settings.n_predict = config_.defaults.n_predict;
        idle_settings.n_keep = config_.defaults.n_keep;
        idle_settings.sampling = config_.defaults.sampling;
    }
    const auto& vocab = model_->vocab();
    for (const auto& s : scheduler_->slots_snapshot()) {
        const bool processing = s.state != sched::SlotState::Idle;
        any_idle = any_idle || !processing;
        arr.push_back({{"id", s.id},
                       {"id_task", processing ? (int64_t)s.task_id : -1},
                       {"n_ctx", s.n_ctx},
                       {"speculative", s.speculative},
                       {"is_processing", processing},
                       {"params", s.task ? task_settings(*s.task) : generation_settings(idle_settings)},
                       {"prompt", s.task ? vocab.detokenize(s.task->prompt) : std::string()},
                       {"next_token",
                        {{"has_next_token", processing},
                         {"has_new_line", s.has_new_line},
                         {"n_remain", s.n_predict < 0 ? -1 : s.n_predict - s.n_decoded},
                         {"n_decoded", s.n_decoded},
                         {"stopping_word", s.stopping_word}}},
                       // ggserve's additions
                       {"draft_n", s.draft_n},
                       {"draft_n_accepted", s.draft_n_accepted},
                       {"lookahead", lookahead_slot_json(s)},
                       {"speculative_settings", speculative_json()},
                       {"state", sched::slot_state_name(s.state)},
                       {"n_past", s.n_past},
                       {"n_prompt_tokens", s.n_prompt_tokens},
                       {"n_prompt_tokens_processed", s.n_prompt_tokens_processed},
                       {"prompt_chunks", s.prompt_chunks}});
    }
    // ?fail_on_no_slot=1: 503 when every slot is busy (a load balancer's health check).
    if (req.query_param("fail_on_no_slot") == std::optional<std::string>("1") && !any_idle)
        throw HttpError(503, "no slot available", "unavailable_error");
    return Response::json(arr);
}

Api::Reply Api::metrics(Request&) {
    require_ready();
    if (!config_.metrics) throw HttpError(501, "this server does not support the metrics endpoint; start it with --metrics");
    return Response::text(scheduler_->metrics().render_prometheus(), 200, "text/plain; version=0.0.4");
}

Api::Reply Api::tokenize(Request& req) {
    require_ready();
    const json body = parse_body(req, "tokenize.json");
    const auto& vocab = model_->vocab();
    // A flag given as null keeps its default.
    const auto flag = [&body](const char* name, bool fallback) {
        const json* v = field(body, name);
        return v && v->is_boolean() ? v->get<bool>() : fallback;
    };
    const bool add_special = flag("add_special", false);
    const bool parse_special = flag("parse_special", true);
    const bool with_pieces = flag("with_pieces", false);
    // content (required by the schema): a string, or llama-server's mixed array of strings and token ids.
    const auto ids = tokenize_mixed(body.at("content"), vocab, add_special, parse_special, "content");
    json tokens = json::array();
    for (engine::Token t : ids) {
        if (!with_pieces) {
            tokens.push_back(t);
            continue;
        }
        const std::string piece = vocab.token_to_piece(t);
        // A piece that is not valid UTF-8 on its own (part of a character) is given as its bytes.
        json p = piece;
        if (!is_valid_utf8(piece)) {
            p = json::array();
            for (unsigned char c : piece) p.push_back((int)c);
        }
        tokens.push_back({{"id", t}, {"piece", p}});
    }
    return Response::json({{"tokens", tokens}});
}

Api::Reply Api::detokenize(Request& req) {
    require_ready();
    const json body = parse_body(req, "detokenize.json");
    std::vector<engine::Token> ids;
    const auto& vocab = model_->vocab();
    if (const json* t = field(body, "tokens"))
        for (const auto& e : *t) {
            const int64_t id = e.get<int64_t>();
            if (id < 0 || id >= vocab.n_tokens()) bad_request("token id " + std::to_string(id) + " is outside the vocabulary");
            ids.push_back((engine::Token)id);
        }
    // Control tokens as their text ("<s>"), as llama-server renders them.
    return Response::json({{"content", vocab.detokenize(ids, false, true)}});
}

namespace {
// The conversation of a /v1/stream request: the path's {id}, else ?conv_id=.
std::string stream_id_of(const server::http::Request& req) {
    if (auto it = req.path_params.find("id"); it != req.path_params.end()) return it->second;
    return req.query_param("conv_id").value_or("");
}
}  // namespace

Api::Reply Api::stream_get(Request& req) {
    const std::string id = stream_id_of(req);
    if (id.empty()) bad_request("Missing conversation id (conv_id)");
    size_t from = 0;
    if (const auto f = req.query_param("from"); f && !f->empty()) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long v = std::strtoull(f->c_str(), &end, 10);
        if (*end != '\0' || errno != 0 || (*f)[0] == '-') bad_request("'from' must be a byte offset, not '" + *f + "'");
        from = (size_t)v;
    }
    auto session = stream_sessions_.find(id);
    if (!session) throw server::http::HttpError(404, "Stream not found or expired", "not_found_error");
    const size_t total = session->info()["total_bytes"];
    if (from > total)
        bad_request("'from' (" + std::to_string(from) + ") is beyond the stream's " + std::to_string(total) + " bytes");
    auto out = req.stream();
    switch (session->follow(out, from)) {
        case StreamSession::Follow::ok:
            break;
        case StreamSession::Follow::beyond_end:  // raced with nothing: `from` was checked above
        case StreamSession::Follow::too_long:
            out->send(server::http::error_body(410, "the stream outgrew the replay buffer (" +
                                                        std::to_string(StreamSession::kMaxBytes >> 20) + " MiB)")
                          .dump());
            out->close();
            break;
    }
    return out;
}

Api::Reply Api::stream_delete(Request& req) {
    const std::string id = stream_id_of(req);
    if (id.empty()) bad_request("Missing conversation id (conv_id)");
    stream_sessions_.remove(id);  // the generation stops; an unknown id is nothing to do
    server::http::Response r;
    r.status = 204;
    return r;
}

Api::Reply Api::streams_lookup(Request& req) {
    // Only the sessions asked for, never a list of others'; a body that is not as expected finds none.
    json out = json::array();
    const json body = json::parse(req.body, nullptr, false);
    if (body.is_object())
        if (auto it = body.find("conversation_ids"); it != body.end() && it->is_array())
            for (const auto& v : *it)
                if (v.is_string())
                    if (auto s = stream_sessions_.find(v.get<std::string>())) out.push_back(s->info());
    return Response::json(out);
}

Api::Reply Api::chat_control(Request& req) {
    const json body = parse_body(req, "chat_control.json");
    const std::string id = body["id"], action = body["action"];
    if (action != "reasoning_end") bad_request("unknown control action '" + action + "' (known: reasoning_end)");
    // A finished request, or one that did not set reasoning_control, is left alone: applied false.
    return Response::json({{"id", id}, {"action", action}, {"applied", reasoning_controls_.end(id)}});
}

Api::Reply Api::apply_template(Request& req) {
    require_ready();
    const json body = parse_body(req, "apply_template.json");
    // In the client's key order (the sorted `body` would reorder tool definitions).
    const nlohmann::ordered_json obody = nlohmann::ordered_json::parse(req.body, nullptr, false);
    if (!obody.is_object()) bad_request("the request body must be a JSON object");
    const nlohmann::ordered_json tools = obody.value("tools", nlohmann::ordered_json());
    const auto kwargs = chat_template_kwargs(obody, config_.chat_template_kwargs, config_.reasoning_budget);
    nlohmann::ordered_json messages = obody["messages"];
    require_text_content(messages);
    // add_generation_prompt false (llama-server honours it): the conversation as it stands, no reply opened.
    bool generation_prompt = true;
    if (const auto it = obody.find("add_generation_prompt"); it != obody.end() && !it->is_null()) {
        if (!it->is_boolean()) bad_request("'add_generation_prompt' must be a boolean");
        generation_prompt = it->get<bool>();
    }
    // A final assistant message is continued whether or not a generation prompt was asked for (a prefill
    // opens no new turn), as llama-server does.
    nlohmann::ordered_json turn;
    const std::string continued = config_.prefill_assistant ? take_assistant_prefill(messages, &turn) : "";
    try {
        std::string prompt = continued.empty()
                                 ? chat_->apply(messages, tools, generation_prompt, kwargs)
                                 : chat_->apply_continuing(messages, tools, continued, kwargs, turn);
        // As llama-server: the BOS text a template writes is left out where the vocabulary adds BOS itself,
        // so that this prompt sent to /completion does not start with two.
        const auto& vocab = model_->vocab();
        if (vocab.add_bos() && vocab.bos() >= 0) {
            const std::string bos = vocab.token_to_piece(vocab.bos(), true);
            if (!bos.empty() && prompt.starts_with(bos)) prompt.erase(0, bos.size());
        }
        return Response::json({{"prompt", prompt}});
    } catch (const server::http::HttpError&) {
        throw;
    } catch (const std::exception& e) {
        bad_request(std::string("cannot apply the chat template: ") + e.what());
    }
}

}  // namespace api
