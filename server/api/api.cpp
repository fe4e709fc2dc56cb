// Route table, readiness, and the endpoints that report on the server.
#include "server/api/api.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "server/api/chat_request_options.h"
#include "server/http/errors.h"
#include "server/http/request_schemas.h"

namespace api {

using server::http::HttpError;

namespace {
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
      work_pool_(std::make_unique<FormatPool>(config_.work_threads)) {}
Api::~Api() = default;

void Api::finish_formatting() {
    work_pool_.reset();
    format_pool_.reset();
}

void Api::register_routes() {
    // Every handler turns HttpError (and bad input found deeper) into an OpenAI-style error body.
    auto guard = [](std::function<Reply(Request&)> fn) {
        return [fn = std::move(fn)](Request& req) -> Reply {
            try {
                return fn(req);
            } catch (const HttpError& e) {
                return server::http::error_response(e.status(), e.what(), e.type());
            } catch (const std::invalid_argument& e) {
                return server::http::error_response(400, e.what());
            } catch (const std::exception& e) {
                spdlog::error("{} {}: {}", req.method, req.path, e.what());
                return server::http::error_response(500, e.what());
            }
        };
    };
    auto bind = [this, &guard](Reply (Api::*fn)(Request&)) { return guard([this, fn](Request& r) { return (this->*fn)(r); }); };
    // Handlers whose work grows with the body run on the work pool: the I/O thread only defers. The
    // request is copied (its body moved), since the connection that owns it may close meanwhile.
    auto offload = [this, &guard](Reply (Api::*fn)(Request&)) -> server::http::Handler {
        auto run = guard([this, fn](Request& r) { return (this->*fn)(r); });
        return [this, run](Request& req) -> Reply {
            auto deferred = req.defer();
            std::string body = std::move(req.body);
            auto copy = std::make_shared<Request>(req);
            copy->body = std::move(body);
            work_pool_->serial()->post([run, copy, deferred] {
                Reply reply = run(*copy);
                deferred->respond(reply.is_async()
                                      ? server::http::error_response(500, "an offloaded handler went async")
                                      : std::move(reply.response()));
            });
            return deferred;
        };
    };
    // Generation and embedding requests with large bodies (long prompts to tokenize, long conversations to
    // render) are prepared on the work pool too; small ones stay on the I/O thread, so that they never
    // wait behind a large one. The handler's copy of the request answers, streamed or not.
    auto prepare_off_io = [this, &guard](std::function<Reply(Request&)> fn) -> server::http::Handler {
        auto run = guard(std::move(fn));
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
    http_.get("/health", bind(&Api::health));
    http_.get("/v1/health", bind(&Api::health));
    http_.get("/v1/models", bind(&Api::models));
    http_.get("/models", bind(&Api::models));
    http_.get("/props", bind(&Api::props_get));
    http_.post("/props", bind(&Api::props_post));
    http_.get("/slots", bind(&Api::slots));
    http_.post("/slots/{id}", bind(&Api::slot_action));
    http_.get("/metrics", bind(&Api::metrics));
    http_.post("/tokenize", offload(&Api::tokenize));
    http_.post("/detokenize", offload(&Api::detokenize));
    http_.post("/apply-template", offload(&Api::apply_template));
    auto chat = [this](Request& r) { return chat_completions(r); };
    http_.post("/v1/chat/completions", prepare_off_io(chat));
    http_.post("/chat/completions", prepare_off_io(chat));
    http_.post("/completion", prepare_off_io([this](Request& r) { return completion(r, Flavor::Native); }));
    http_.post("/completions", prepare_off_io([this](Request& r) { return completion(r, Flavor::Completions); }));
    http_.post("/v1/completions", prepare_off_io([this](Request& r) { return completion(r, Flavor::Completions); }));
    http_.post("/v1/embeddings", prepare_off_io([this](Request& r) { return embeddings(r, true); }));
    http_.post("/embedding", prepare_off_io([this](Request& r) { return embeddings(r, false); }));
    http_.post("/embeddings", prepare_off_io([this](Request& r) { return embeddings(r, false); }));
    for (const char* path : {"/v1/rerank", "/rerank", "/reranking", "/v1/reranking"})
        http_.post(path, prepare_off_io([this](Request& r) { return rerank(r); }));
}

void Api::attach(const engine::Model& model, sched::Scheduler& scheduler) {
    model_ = &model;
    scheduler_ = &scheduler;
    chat_ = std::make_unique<ChatFormatter>(model, config_.chat_template, config_.jinja);
    const auto& vocab = model.vocab();
    // Grammars match text: control tokens have none (special=false), so only EOG tokens end a grammar.
    std::vector<std::string> pieces((size_t)vocab.n_tokens());
    for (int i = 0; i < vocab.n_tokens(); ++i) pieces[(size_t)i] = vocab.token_to_piece(i, false);
    grammar_vocab_ = std::make_shared<engine::GrammarVocab>(std::move(pieces), vocab.eog_tokens());
    spdlog::info("chat format: {}", chat_->name());
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

Api::Reply Api::health(Request&) {
    require_ready();
    return Response::json({{"status", "ok"}});
}

Api::Reply Api::models(Request&) {
    require_ready();
    const auto& hp = model_->hparams();
    const auto created =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    json m{{"id", model_name()},
           {"object", "model"},
           {"created", created},
           {"owned_by", "ggserve"},
           {"meta",
            {{"n_vocab", hp.n_vocab},
             {"n_ctx_train", hp.n_ctx_train},
             {"n_embd", hp.n_embd},
             {"n_params", model_->n_params()},
             {"size", model_->n_bytes()}}}};
    return Response::json({{"object", "list"}, {"data", json::array({m})}});
}

json Api::generation_settings(const GenerationOptions& o) const {
    const auto& s = o.sampling;
    json samplers = json::array();
    for (auto t : s.samplers) samplers.push_back(std::string(engine::sampler_type_name(t)));
    return json{{"n_predict", o.n_predict},
                {"seed", s.seed},
                {"temperature", s.temperature},
                {"dynatemp_range", s.dynatemp_range},
                {"dynatemp_exponent", s.dynatemp_exponent},
                {"top_k", s.top_k},
                {"top_p", s.top_p},
                {"min_p", s.min_p},
                {"typical_p", s.typical_p},
                {"top_n_sigma", s.top_n_sigma},
                {"xtc_probability", s.xtc_probability},
                {"xtc_threshold", s.xtc_threshold},
                {"repeat_last_n", s.repeat_last_n},
                {"repeat_penalty", s.repeat_penalty},
                {"presence_penalty", s.presence_penalty},
                {"frequency_penalty", s.frequency_penalty},
                {"dry_multiplier", s.dry_multiplier},
                {"dry_base", s.dry_base},
                {"dry_allowed_length", s.dry_allowed_length},
                {"dry_penalty_last_n", s.dry_penalty_last_n},
                {"mirostat", s.mirostat},
                {"mirostat_tau", s.mirostat_tau},
                {"mirostat_eta", s.mirostat_eta},
                {"adaptive_target", s.adaptive_target},
                {"adaptive_decay", s.adaptive_decay},
                {"n_probs", s.n_probs},
                {"stop", o.stop},
                {"ignore_eos", o.ignore_eos},
                {"stream", o.stream},
                {"samplers", samplers},
                {"grammar", o.grammar}};
}

json Api::speculative_json() const {
    const sched::SpecConfig& sc = scheduler_->spec();
    return json{{"enabled", sc.enabled()},
                {"types", engine::spec::drafter_list_string(sc.types)},
                {"n_max", sc.n_max},
                {"n_min", sc.n_min},
                {"p_min", sc.p_min},
                {"draft_model", config_.draft_model_path}};
}

Api::Reply Api::props_get(Request&) {
    require_ready();
    GenerationOptions d;
    {
        std::lock_guard<std::mutex> lk(defaults_mu_);
        d.n_predict = config_.defaults.n_predict;
        d.sampling = config_.defaults.sampling;
    }
    json settings = generation_settings(d);
    settings["n_ctx"] = scheduler_->n_ctx_slot();
    const sched::SpecConfig& spec = scheduler_->spec();
    settings["speculative.n_max"] = spec.n_max;
    settings["speculative.n_min"] = spec.n_min;
    settings["speculative.p_min"] = spec.p_min;
    return Response::json({{"default_generation_settings", settings},
                           {"total_slots", scheduler_->n_parallel()},
                           {"model_path", model_->path()},
                           {"model_alias", model_name()},
                           {"chat_template", chat_->template_source()},
                           {"chat_format", chat_->name()},
                           {"bos_token", model_->vocab().bos() >= 0 ? model_->vocab().token_to_piece(model_->vocab().bos()) : ""},
                           {"eos_token", model_->vocab().eos() >= 0 ? model_->vocab().token_to_piece(model_->vocab().eos()) : ""},
                           {"speculative", speculative_json()},
                           {"build_info", "ggserve"}});
}

Api::Reply Api::props_post(Request& req) {
    require_ready();
    if (!config_.props_writable)
        throw HttpError(403, "this server does not allow changing properties; start it with --props", "permission_error");
    const json body = parse_body(req, "props.json");
    const json* dgs = field(body, "default_generation_settings");
    const json& src = dgs ? *dgs : body;
    std::lock_guard<std::mutex> lk(defaults_mu_);
    GenerationOptions o = parse_generation_options(src, config_.defaults, model_->vocab(), Flavor::Native);
    config_.defaults.n_predict = o.n_predict;
    config_.defaults.sampling = o.sampling;
    return Response::json({{"success", true}});
}

Api::Reply Api::slots(Request&) {
    require_ready();
    if (!config_.slots) throw HttpError(501, "this server does not support the slots endpoint; it was started with --no-slots");
    json arr = json::array();
    for (const auto& s : scheduler_->slots_snapshot()) {
        const bool processing = s.state != sched::SlotState::Idle;
        arr.push_back({{"id", s.id},
                       {"id_task", processing ? (int64_t)s.task_id : -1},
                       {"n_ctx", s.n_ctx},
                       {"speculative", s.speculative},
                       {"draft_n", s.draft_n},
                       {"draft_n_accepted", s.draft_n_accepted},
                       {"speculative_settings", speculative_json()},
                       {"is_processing", processing},
                       {"state", sched::slot_state_name(s.state)},
                       {"n_past", s.n_past},
                       {"n_prompt_tokens", s.n_prompt_tokens},
                       {"n_prompt_tokens_processed", s.n_prompt_tokens_processed},
                       {"prompt_chunks", s.prompt_chunks},
                       {"next_token",
                        {{"has_next_token", processing},
                         {"n_remain", s.n_predict < 0 ? -1 : s.n_predict - s.n_decoded},
                         {"n_decoded", s.n_decoded}}}});
    }
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
    const std::string content = body.value("content", "");
    const bool add_special = body.value("add_special", false);
    const bool parse_special = body.value("parse_special", true);
    const bool with_pieces = body.value("with_pieces", false);
    const auto ids = vocab.tokenize(content, add_special, parse_special);
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
    return Response::json({{"content", vocab.detokenize(ids)}});
}

Api::Reply Api::apply_template(Request& req) {
    require_ready();
    const json body = parse_body(req, "apply_template.json");
    // In the client's key order (the sorted `body` would reorder tool definitions).
    const nlohmann::ordered_json obody = nlohmann::ordered_json::parse(req.body, nullptr, false);
    if (!obody.is_object()) bad_request("the request body must be a JSON object");
    const nlohmann::ordered_json tools = obody.value("tools", nlohmann::ordered_json());
    const auto kwargs = chat_template_kwargs(obody, config_.chat_template_kwargs, config_.reasoning_budget);
    try {
        return Response::json({{"prompt", chat_->apply(obody["messages"], tools, true, kwargs)}});
    } catch (const server::http::HttpError&) {
        throw;
    } catch (const std::exception& e) {
        bad_request(std::string("cannot apply the chat template: ") + e.what());
    }
}

}  // namespace api
