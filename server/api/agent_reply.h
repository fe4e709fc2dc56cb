// How one reply is written in an agent API (OpenAI Responses: responses_reply.*, Anthropic Messages:
// messages_reply.*): streamed as named SSE events ("event: <name>" + JSON data), or collected into one
// body. GenerationResponse drives it on its format thread, in order: start() when the stream opens (or,
// for a reply whose opening event reports the prompt cache, opens_after_prompt(), with the first output),
// delta() with each piece of reasoning and content that ChatStreamParser says is certain, finish() at the
// end (after the parser's last delta); or body() alone for a reply that is not streamed. Pure formatting:
// no I/O, so the event sequences are unit-tested.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/chat/chat_parser.h"
#include "server/http/response.h"
#include "server/scheduler/task.h"

namespace api {

struct ReplyEvent {
    std::string name;  // the SSE event name, also the data's "type"
    nlohmann::json data;
};

// The end of a reply: what it said and why it stopped.
struct ReplyEnd {
    engine::chat::ParsedOutput parsed;  // reasoning, content and tool calls of the whole reply
    sched::FinishReason finish = sched::FinishReason::Stop;
    bool stopped_word = false;
    std::string stopping_word;
    int64_t input_tokens = 0;      // the prompt, cached tokens included
    int64_t cached_tokens = 0;     // prompt tokens reused from the KV cache
    int64_t output_tokens = 0;     // generated tokens
    int64_t reasoning_tokens = 0;  // of those, the ones of the reasoning block
    bool has_tool_calls() const { return !parsed.tool_calls.empty(); }
    // Stopped by itself (end of generation or a stop string), not by a token limit.
    bool stopped() const { return finish == sched::FinishReason::Stop; }
};

class AgentReply {
  public:
    virtual ~AgentReply() = default;
    // cached_tokens: prompt tokens the cache supplied (0 when the opening events go out before the prompt is
    // processed).
    virtual std::vector<ReplyEvent> start(int64_t cached_tokens) = 0;
    // Whether start() waits for the prompt (and so knows the cached tokens) rather than the stream's opening.
    virtual bool opens_after_prompt() const { return false; }
    virtual std::vector<ReplyEvent> delta(const std::string& reasoning, const std::string& content) = 0;
    virtual std::vector<ReplyEvent> finish(const ReplyEnd& end) = 0;
    virtual nlohmann::json body(const ReplyEnd& end) = 0;
    // The request failed: the events that end a stream, or the response of one that is not streamed.
    virtual std::vector<ReplyEvent> stream_error(int status, const std::string& message) = 0;
    virtual server::http::Response error(int status, const std::string& message) const = 0;
};

}  // namespace api
