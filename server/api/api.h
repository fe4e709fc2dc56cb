// The API layer: OpenAI-compatible and llama.cpp-native endpoints over the scheduler.
// Handlers parse and validate on the HTTP threads, then hand tasks to the engine thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_vocab.h"
#include "engine/model/model.h"
#include "engine/model/pooling.h"
#include "server/api/agent_reply.h"
#include "server/api/chat_formatter.h"
#include "server/api/format_pool.h"
#include "server/api/prompt_log.h"
#include "server/api/reasoning_control.h"
#include "server/api/stream_sessions.h"
#include "server/api/request_params.h"
#include "server/http/server.h"
#include "server/scheduler/scheduler.h"

namespace api {

struct ApiConfig {
    std::string model_alias;  // name reported as "model"; default: the model file name
    std::vector<std::string> model_aliases;  // -a A,B: every name (A is model_alias), listed in /v1/models
    std::vector<std::string> model_tags;     // --tags: listed in /v1/models
    std::string log_prompts_dir;  // --log-prompts-dir (prompt_log.h); "" off
    ApiDefaults defaults;
    std::string chat_template;  // --chat-template
    bool jinja = true;          // --jinja (llama-server's default since 2025), --no-jinja
    nlohmann::ordered_json chat_template_kwargs = nlohmann::ordered_json::object();  // --chat-template-kwargs
    std::string reasoning_format = "auto";  // --reasoning-format: none, deepseek, auto
    // --reasoning-budget: reasoning tokens a chat reply may spend before its block is closed for it
    // (-1 unlimited; 0 closes it at once, and the template gets enable_thinking false unless told);
    // requests' reasoning_budget_tokens / thinking_budget_tokens override it.
    int reasoning_budget = -1;
    // --reasoning-budget-message: written before the closing tag when the budget runs out (requests'
    // reasoning_budget_message overrides it).
    std::string reasoning_budget_message;
    // --skip-chat-parsing: chat replies are not parsed (reasoning and tool calls stay in content, no tool
    // grammar, no reasoning budget).
    bool skip_chat_parsing = false;
    // --prefill-assistant (default) / --no-prefill-assistant: a final assistant message (text, no tool
    // calls) is continued by the reply instead of rendered as a finished turn.
    bool prefill_assistant = true;
    bool metrics = false;       // --metrics
    bool props_writable = false;  // --props: POST /props may change the defaults
    bool ui = true;                                         // --ui / --no-ui, shown in /props
    nlohmann::json ui_settings = nlohmann::json::object();  // --ui-config: /props ui_settings
    bool cors_proxy = false;                                // --ui-mcp-proxy: /props cors_proxy_enabled
    bool slots = true;            // --no-slots disables /slots
    std::string slot_save_path;
    std::string draft_model_path;  // -md, shown in /props
    int format_threads = 2;  // threads formatting response chunks (FormatPool)
    int work_threads = 2;    // threads running /tokenize, /detokenize, /apply-template off the I/O threads
    bool embeddings = false;  // --embeddings: embeddings only, generation endpoints answer 501
    // --embeddings-with-generation: a generation model also serves the embedding endpoints (its final
    // hidden states, pooled), sharing the slots with generation.
    bool embeddings_with_generation = false;
    bool reranking = false;   // --reranking: the rerank endpoints serve (a model with cls.output)
    engine::Pooling pooling = engine::Pooling::Unspecified;  // --pooling; Unspecified: the model's
    int embd_normalize = 2;  // --embd-normalize: -1 none, 0 max-abs int16, 1 taxicab, 2 euclidean, >2 p-norm
    uint32_t n_ubatch = 512;  // -ub and -c (0: the model's): bound the longest embedding input
    uint32_t n_ctx = 0;
    uint32_t n_batch = 2048;  // -b: /infill fits prefix, suffix and prompt into one batch
    bool spm_infill = false;  // --spm-infill: suffix before prefix in /infill prompts
    // --lora / --lora-scaled: the adapters' files (ids are their order) and initial scales
    // (--lora-init-without-apply: 0).
    std::vector<std::string> lora_paths;
    std::vector<float> lora_scales;
    bool verbose = false;  // -v: OpenAI responses carry the native result as __verbose
    // Server settings /props reports beside llama-server's fields (ggserve's "server" object).
    nlohmann::json server_settings = nlohmann::json::object();
};

// How a chat reply is parsed (tool calls, reasoning) when its response is formatted.
struct ChatParse {
    engine::chat::ParseOptions options;
    std::vector<std::string> tool_triggers;
    // Control tokens the reply shows as text: the format's markers (with tools) and reasoning tags.
    std::vector<engine::Token> shown_tokens;
};

class Api {
public:
    Api(ApiConfig config, server::http::Server& http);
    ~Api();
    // Registers every route; call before the HTTP server starts. Until attach(), they answer 503.
    void register_routes();
    // The model is loaded and the scheduler runs: start serving.
    void attach(const engine::Model& model, sched::Scheduler& scheduler);
    // Adds a key to /props' "server" object (what only loading the model tells, e.g. control vectors);
    // before attach().
    void set_server_setting(const std::string& key, nlohmann::json value) {
        config_.server_settings[key] = std::move(value);
    }
    // --embeddings given for a generation model: it generates too (llama-server 2026); before attach().
    void set_embeddings_with_generation() {
        config_.embeddings = false;
        config_.embeddings_with_generation = true;
        config_.server_settings["embeddings_with_generation"] = true;
    }
    // What the adapters' files say of themselves (adapter.lora.task_name, adapter.lora.prompt_prefix), by
    // id, for GET /lora-adapters; before attach().
    struct LoraMetadata {
        std::string task_name, prompt_prefix;
    };
    void set_lora_metadata(std::vector<LoraMetadata> m) { lora_metadata_ = std::move(m); }
    // The context's size when it differs from -c (an encoder's is raised to fit -ub); before attach().
    void set_context_size(uint32_t n_ctx) { config_.n_ctx = n_ctx; }
    bool ready() const { return ready_.load(); }
    // After the scheduler has stopped: formats and sends what the engine queued, then stops the
    // formatting and work threads (before the model they read goes away).
    void finish_formatting();

private:
    using Request = server::http::Request;
    using Reply = server::http::Reply;

    // Generation and embedding requests with bodies this large or larger are prepared on the work pool.
    static constexpr size_t kInlineBodyBytes = 64 * 1024;

    Reply completion(Request& req, Flavor flavor);
    Reply infill(Request& req);  // handlers_infill.cpp
    // OpenAI's `suffix` on /v1/completions: the prompt is the text before the insertion point and the
    // model's FIM tokens lay the two out as /infill does (a 400 naming why for a model without them).
    std::vector<engine::Token> suffix_prompt(const json& prompt, const std::string& suffix, int32_t n_predict) const;
    Reply lora_adapters_get(Request& req);  // handlers_lora.cpp
    Reply lora_adapters_post(Request& req);
    // A request's adapter scales: its "lora" list ([{id, scale}], adapters not named get 0), else the
    // server's current scales.
    std::vector<float> request_lora(const json& body) const;
    // Scales as llama-server lists them in generation settings: [{id, scale}] for every adapter.
    static json lora_json(const std::vector<float>& scales);
    Reply chat_completions(Request& req);
    Reply responses(Request& req);               // handlers_responses.cpp
    Reply responses_input_tokens(Request& req);  // handlers_responses.cpp
    Reply response_not_stored(Request& req);     // handlers_responses.cpp
    Reply messages(Request& req);                // handlers_messages.cpp
    Reply messages_count_tokens(Request& req);   // handlers_messages.cpp
    Reply models(Request& req);
    Reply health(Request& req);
    Reply props_get(Request& req);
    Reply props_post(Request& req);
    Reply slots(Request& req);
    Reply slot_action(Request& req);  // handlers_slots.cpp
    Reply metrics(Request& req);
    Reply tokenize(Request& req);
    Reply detokenize(Request& req);
    Reply apply_template(Request& req);
    Reply chat_control(Request& req);       // POST /v1/chat/completions/control
    Reply chat_input_tokens(Request& req);  // POST /v1/chat/completions/input_tokens
    // Resumable streams (stream_sessions.h): GET and DELETE /v1/stream, POST /v1/streams/lookup.
    Reply stream_get(Request& req);
    Reply stream_delete(Request& req);
    Reply streams_lookup(Request& req);
    Reply embeddings(Request& req, bool oai);  // handlers_embeddings.cpp
    Reply rerank(Request& req);
    // --embeddings, or an encoder model (it cannot generate).
    bool embeddings_only() const;
    // Generation endpoints on an embeddings-only server: 501.
    void require_generation() const;
    // The inputs of an embeddings request, tokenized and checked (400 for bad ones).
    std::vector<std::vector<engine::Token>> embedding_inputs(const json& input) const;

    // A chat request made ready to generate: its options, its prompt (the template's text, then the
    // prefill) and how the reply is parsed.
    struct PreparedChat {
        GenerationOptions opts;
        std::vector<engine::Token> tokens;
        std::string prompt;
        ChatParse parse;
    };
    // `body` (validated) and `obody` (the same, in the client's key order; raw_body its text) are a chat
    // completions request; tool calls get ids call_id_prefix + random + "_" + index. 400s for bad input.
    // A chat completions request's body checked (into `body`) and prepared, as both /v1/chat/completions
    // and its input_tokens take it.
    PreparedChat prepare_chat_request(const Request& req, json& body);
    PreparedChat prepare_chat(const json& body, const nlohmann::ordered_json& obody,
                              std::string_view raw_body, const std::string& prefill,
                              const char* call_id_prefix) const;

    // Submits one task per prompt x choice and wires the response; returns the async reply. With
    // `agent`, the reply is written in that API's shape (one prompt, one choice).
    Reply start_generation(Request& req, Flavor flavor, const json& body, const GenerationOptions& opts,
                           const std::vector<std::vector<engine::Token>>& prompts,
                           const std::vector<std::string>& prompt_texts,
                           const ChatParse* chat_parse = nullptr,
                           std::shared_ptr<AgentReply> agent = nullptr);
    json parse_body(const Request& req, const char* schema) const;
    void require_ready() const;
    std::string model_name() const;
    std::string model_ftype_;  // llama.cpp's name of the model's file type (/props, /v1/models), set by attach()
    // The request's `model` when it names one (llama-server echoes it), else model_name().
    std::string echoed_model(const json& body) const;
    // llama-server's `params` object of a slot: the generation settings of a request (or the defaults).
    json generation_settings(const GenerationOptions& o) const;
    json task_settings(const sched::Task& t) const;  // the same for a request seated in a slot
    json speculative_json() const;  // the server's speculative settings
    std::vector<engine::Token> tokenize_prompt(const json& prompt) const;
    // The request's grammar (nullptr: none); a bad grammar or trigger pattern is a 400.
    std::unique_ptr<engine::Grammar> compile_grammar(const GenerationOptions& opts) const;

    ApiConfig config_;
    server::http::Server& http_;
    std::atomic<bool> ready_{false};
    const engine::Model* model_ = nullptr;
    sched::Scheduler* scheduler_ = nullptr;
    std::unique_ptr<ChatFormatter> chat_;
    std::shared_ptr<const engine::GrammarVocab> grammar_vocab_;
    std::atomic<uint64_t> next_task_id_{1};
    ReasoningControls reasoning_controls_;
    std::unique_ptr<PromptLog> prompt_log_;  // --log-prompts-dir
    StreamSessions stream_sessions_;
    std::vector<LoraMetadata> lora_metadata_;
    mutable std::mutex defaults_mu_;  // guards config_.defaults (POST /props) and config_.lora_scales
    std::unique_ptr<FormatPool> format_pool_;
    // Blocking work (large tokenizations, templating) runs here, answered through a DeferredResponse, so
    // that a few huge requests cannot occupy every HTTP I/O thread (/health and small requests stay fast).
    std::unique_ptr<FormatPool> work_pool_;
};

}  // namespace api
