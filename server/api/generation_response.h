// One HTTP generation request (possibly several choices/prompts = several scheduler tasks) and how its
// output is written: OpenAI chat/completions or llama.cpp's native /completion, streamed as SSE or
// collected into one JSON response. The engine thread calls the task sinks, which only queue the plain
// outputs (sched::TokenOutput / FinalOutput / errors) on the response's FormatPool::Serial; everything
// below on_tokens/on_done/on_error (JSON, SSE, the final body) runs there, in order, one at a time,
// never on the engine thread. The HTTP thread only installs the writer and the cancel callback.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/chat/chat_parser.h"
#include "engine/tokenizer/vocab.h"
#include "server/api/agent_reply.h"
#include "server/api/chat_stream_parser.h"
#include "server/api/format_pool.h"
#include "server/api/json_fields.h"
#include "server/api/request_params.h"
#include "server/api/stream_sessions.h"
#include "server/http/stream_writer.h"
#include "server/scheduler/task.h"

namespace api {

struct ResponseContext {
    Flavor flavor = Flavor::Native;
    std::string model_name;
    std::string id;       // "chatcmpl-..." / "cmpl-..."
    int64_t created = 0;  // unix seconds
    GenerationOptions options;
    std::vector<std::string> prompt_texts;  // per choice: the prompt as given (OpenAI echo)
    // Per choice: the prompt's tokens written out, control tokens included ("<s> Once upon a time"): the
    // native "prompt" field, as llama-server fills it.
    std::vector<std::string> prompt_pieces;
    size_t choices_per_prompt = 1;          // OpenAI n: choices sharing a prompt count it once in usage
    json generation_settings;               // the native final object's generation_settings
    // Chat: parse the reply into reasoning_content / tool_calls (parse.tool_format None: no tools).
    bool parse_chat = false;
    engine::chat::ParseOptions parse;
    std::vector<std::string> tool_triggers;  // text that starts a call (streaming holds it back)
    bool verbose = false;  // --verbose: OpenAI responses also carry the native result as __verbose
    // An agent API's reply (Responses, Messages; one choice): it writes the events and the body, from the
    // chat parse of the reply, instead of the flavor's chunks.
    std::shared_ptr<AgentReply> agent;
};

class GenerationResponse : public std::enable_shared_from_this<GenerationResponse> {
public:
    // serial: where formatting runs (nullptr: on the calling thread, for tests without a pool).
    GenerationResponse(ResponseContext rc, const engine::Vocab& vocab, size_t n_choices,
                       std::shared_ptr<FormatPool::Serial> serial);

    // Exactly one of these is installed before the tasks are submitted.
    void set_stream(std::shared_ptr<server::http::StreamWriter> w);
    // A resumable stream (X-Conversation-Id): every event also goes to the session, which outlives the
    // client's connection; set with set_stream, before begin().
    void set_session(std::shared_ptr<StreamSession> s) { session_ = std::move(s); }
    void set_deferred(std::shared_ptr<server::http::DeferredResponse> d);

    // After set_stream, before the tasks run: an agent reply's opening events (response.created) go out at
    // once; those that report the prompt cache (message_start) with the first output.
    void begin();

    // A resumable stream stopped from outside (DELETE /v1/stream, a newer request of its conversation):
    // the stream ends where it is, for its client and the session's followers.
    void stop();

    // Called once when a choice fails, to cancel the others.
    void set_on_failure(std::function<void()> f) { on_failure_ = std::move(f); }

    // The sink for choice i (a scheduler task).
    std::shared_ptr<sched::TaskSink> sink(size_t index);

private:
    friend class ChoiceSink;
    // Runs fn where this response formats; a formatting failure fails the response (500).
    void post(std::function<void()> fn);
    void on_tokens(size_t i, const sched::TokenOutput& out);
    void on_done(size_t i, const sched::FinalOutput& out);
    void on_error(size_t i, int status, const std::string& message);

    json chunk_base(const char* object) const;
    json probs_json(std::span<const engine::TokenProbs> probs) const;
    json usage_json() const;
    json native_final(size_t i, const sched::FinalOutput& f) const;
    // A native stream chunk of prompt progress, or an OpenAI chunk carrying it.
    void send_progress(size_t i, const sched::TokenOutput& out);
    json timings_json(const sched::Timings& t) const;
    void send(const json& j);
    // One event to the client (and the session); the end of the stream.
    void emit(std::string_view data, std::string_view event = {});
    void end_stream();
    void send_chat_delta(size_t i, json delta, const json& probs, const json& timings = json());
    void send_parsed_delta(size_t i, const ChatStreamParser::Delta& d, const json& timings);
    json chat_message(const sched::FinalOutput& f, const char*& finish) const;
    void finish_stream();
    // The agent reply's side of on_tokens / on_done.
    void agent_tokens(size_t i, const sched::TokenOutput& out);
    // The agent reply's opening events, once.
    void agent_start(int64_t cached_tokens);
    void agent_done(size_t i, const sched::FinalOutput& f);
    void send_events(const std::vector<ReplyEvent>& events);
    void respond_collected();

    ResponseContext rc_;
    const engine::Vocab& vocab_;
    std::shared_ptr<FormatPool::Serial> serial_;
    std::shared_ptr<server::http::StreamWriter> stream_;
    std::shared_ptr<StreamSession> session_;
    std::shared_ptr<server::http::DeferredResponse> deferred_;

    struct Choice {
        bool started = false;  // chat: the role chunk was sent
        bool done = false;
        sched::FinalOutput final;
        json logprobs = json::array();  // collected (non-stream)
        std::unique_ptr<ChatStreamParser> parser;  // streamed chat with parse_chat
        // Streamed chat: log-probabilities of tokens whose text is still held back; they go out with the
        // chunk that carries that text.
        json pending_probs = json::array();
    };
    std::vector<Choice> choices_;
    size_t n_done_ = 0;
    std::function<void()> on_failure_;
    bool failed_ = false;
    bool agent_started_ = false;  // the agent reply's opening events went out (format thread)
};

}  // namespace api
