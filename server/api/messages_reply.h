// A reply in the shape of the Anthropic Messages API: {id "msg_...", type "message", role "assistant",
// model, content [thinking block (signature ""), text block, tool_use blocks {id, name, input}],
// stop_reason (end_turn, max_tokens, stop_sequence, tool_use), stop_sequence, usage {input_tokens (not
// read from the cache), cache_read_input_tokens, cache_creation_input_tokens (0), output_tokens}}. Blocks
// appear only when they hold something.
//
// Streamed: message_start (usage.input_tokens: the whole prompt), ping, then per block
// content_block_start, content_block_delta (thinking_delta / text_delta / input_json_delta; a thinking
// block ends with a signature_delta), content_block_stop; then message_delta (stop_reason, stop_sequence,
// final usage) and message_stop. A failure after the stream began is an `error` event. Errors are
// {"type": "error", "error": {"type", "message"}} (anthropic_error_response), with Anthropic's error types.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/api/agent_reply.h"

namespace api {

// invalid_request_error (400 and other 4xx), authentication_error (401), permission_error (403),
// not_found_error (404), request_too_large (413), rate_limit_error (429), overloaded_error (503),
// api_error (other 5xx).
std::string_view anthropic_error_type(int status);
nlohmann::json anthropic_error_body(int status, std::string_view message);
// A server::http::ErrorFormatter: `type` (OpenAI's error type) is replaced by Anthropic's for `status`.
server::http::Response anthropic_error_response(int status, std::string_view message,
                                                std::string_view type = {});

struct MessagesReplyInfo {
    std::string id;  // "msg_..."
    std::string model;
    int64_t prompt_tokens = 0;  // for message_start
};

class MessagesReply : public AgentReply {
  public:
    explicit MessagesReply(MessagesReplyInfo info);
    // message_start reports the prompt's cache split, as llama-server's: sent with the first output.
    std::vector<ReplyEvent> start(int64_t cached_tokens) override;
    bool opens_after_prompt() const override { return true; }
    std::vector<ReplyEvent> delta(const std::string& reasoning, const std::string& content) override;
    std::vector<ReplyEvent> finish(const ReplyEnd& end) override;
    nlohmann::json body(const ReplyEnd& end) override;
    std::vector<ReplyEvent> stream_error(int status, const std::string& message) override;
    server::http::Response error(int status, const std::string& message) const override;

  private:
    void add(std::vector<ReplyEvent>& out, const char* name, nlohmann::json data) const;
    void close_block(std::vector<ReplyEvent>& out);

    MessagesReplyInfo info_;
    int blocks_ = 0;  // blocks started
    enum class Open { None, Thinking, Text } open_ = Open::None;
};

}  // namespace api
