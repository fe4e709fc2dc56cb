// A reply in the shape of the OpenAI Responses API. The response object: {id "resp_...", object
// "response", created_at, status (completed, or incomplete with incomplete_details.reason
// "max_output_tokens"), output, usage {input_tokens, input_tokens_details.cached_tokens, output_tokens,
// output_tokens_details.reasoning_tokens, total_tokens}, and the request's settings (echo)}. Output
// items, in order: a reasoning item (content: one reasoning_text part) when the model reasoned, a message
// item (one output_text part) unless the reply is only tool calls, one function_call item per call
// ({id "fc_...", call_id, name, arguments}).
//
// Streamed, every event carries a sequence_number from 0: response.created, response.in_progress; per
// item response.output_item.added, its part's response.content_part.added, the deltas
// (response.reasoning_text.delta / response.output_text.delta / response.function_call_arguments.delta),
// the matching .done events, response.content_part.done, response.output_item.done; last
// response.completed or response.incomplete with the whole response. A failure after the stream began is
// an `error` event and response.failed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "server/api/agent_reply.h"

namespace api {

struct ResponsesReplyInfo {
    std::string id;  // "resp_..."
    int64_t created_at = 0;
    std::string model;
    nlohmann::ordered_json
        echo;  // the request's settings (RestatedResponses::echo, with model, temperature, top_p)
    std::string item_id_suffix;  // random part of the item ids ("msg_" / "rs_" / "fc_" + suffix + index)
};

class ResponsesReply : public AgentReply {
  public:
    explicit ResponsesReply(ResponsesReplyInfo info);
    std::vector<ReplyEvent> start(int64_t cached_tokens) override;
    std::vector<ReplyEvent> delta(const std::string& reasoning, const std::string& content) override;
    std::vector<ReplyEvent> finish(const ReplyEnd& end) override;
    nlohmann::json body(const ReplyEnd& end) override;
    std::vector<ReplyEvent> stream_error(int status, const std::string& message) override;
    server::http::Response error(int status, const std::string& message) const override;

  private:
    nlohmann::json response_object(const char* status, const nlohmann::json& output) const;
    nlohmann::json usage(const ReplyEnd& end) const;
    std::string item_id(const char* prefix);
    void add(std::vector<ReplyEvent>& out, const char* name, nlohmann::json data);
    void open_reasoning(std::vector<ReplyEvent>& out);
    void close_reasoning(std::vector<ReplyEvent>& out);
    void open_message(std::vector<ReplyEvent>& out);
    void close_message(std::vector<ReplyEvent>& out, const char* status);

    ResponsesReplyInfo info_;
    int64_t sequence_ = 0;
    int item_count_ = 0;
    nlohmann::json output_ = nlohmann::json::array();  // the items done so far (streamed)
    enum class Open { None, Reasoning, Message } open_ = Open::None;
    std::string open_id_;
    std::string text_;  // of the open item
    bool message_done_ = false;
};

}  // namespace api
