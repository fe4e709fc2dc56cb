#include "server/api/messages_reply.h"

#include "server/api/json_fields.h"

namespace api {

using json = nlohmann::json;

std::string_view anthropic_error_type(int status) {
    switch (status) {
        case 401:
            return "authentication_error";
        case 403:
            return "permission_error";
        case 404:
            return "not_found_error";
        case 413:
            return "request_too_large";
        case 429:
            return "rate_limit_error";
        case 503:
            return "overloaded_error";
        default:
            break;
    }
    return status >= 500 ? "api_error" : "invalid_request_error";
}

json anthropic_error_body(int status, std::string_view message) {
    return {
        {"type", "error"},
        {"error", {{"type", std::string(anthropic_error_type(status))}, {"message", std::string(message)}}}};
}

server::http::Response anthropic_error_response(int status, std::string_view message, std::string_view) {
    return server::http::Response::json(anthropic_error_body(status, message), status);
}

namespace {

const char* stop_reason(const ReplyEnd& end) {
    if (!end.stopped()) return "max_tokens";
    if (end.has_tool_calls()) return "tool_use";
    return end.stopped_word ? "stop_sequence" : "end_turn";
}

json stop_sequence(const ReplyEnd& end) {
    return end.stopped() && end.stopped_word && !end.has_tool_calls() ? json(end.stopping_word) : json();
}

json usage(const ReplyEnd& end) {
    return {{"input_tokens", end.input_tokens - end.cached_tokens},
            {"cache_creation_input_tokens", 0},
            {"cache_read_input_tokens", end.cached_tokens},
            {"output_tokens", end.output_tokens}};
}

// A call's arguments as the tool_use block's input object. The tool grammar makes them a JSON object; a
// reply that is not one is a server error rather than a block with something else in it.
json tool_input(const engine::chat::ToolCall& call) {
    json input = json::parse(call.arguments, nullptr, false);
    if (!input.is_object())
        throw std::runtime_error("the arguments of the model's call to '" + call.name +
                                 "' are not a JSON object");
    return input;
}

}  // namespace

MessagesReply::MessagesReply(MessagesReplyInfo info) : info_(std::move(info)) {}

void MessagesReply::add(std::vector<ReplyEvent>& out, const char* name, json data) const {
    data["type"] = name;
    out.push_back({name, std::move(data)});
}

std::vector<ReplyEvent> MessagesReply::start(int64_t cached_tokens) {
    std::vector<ReplyEvent> out;
    add(out, "message_start",
        {{"message",
          {{"id", info_.id},
           {"type", "message"},
           {"role", "assistant"},
           {"model", info_.model},
           {"content", json::array()},
           {"stop_reason", nullptr},
           {"stop_sequence", nullptr},
           {"usage",
            {{"input_tokens", info_.prompt_tokens - cached_tokens},
             {"cache_creation_input_tokens", 0},
             {"cache_read_input_tokens", cached_tokens},
             {"output_tokens", 0}}}}}});
    add(out, "ping", json::object());
    return out;
}

void MessagesReply::close_block(std::vector<ReplyEvent>& out) {
    if (open_ == Open::None) return;
    const int index = blocks_ - 1;
    if (open_ == Open::Thinking)
        add(out, "content_block_delta",
            {{"index", index}, {"delta", {{"type", "signature_delta"}, {"signature", ""}}}});
    add(out, "content_block_stop", {{"index", index}});
    open_ = Open::None;
}

std::vector<ReplyEvent> MessagesReply::delta(const std::string& reasoning, const std::string& content) {
    std::vector<ReplyEvent> out;
    if (!reasoning.empty()) {
        if (open_ != Open::Thinking) {
            close_block(out);
            add(out, "content_block_start",
                {{"index", blocks_++},
                 {"content_block", {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}}});
            open_ = Open::Thinking;
        }
        add(out, "content_block_delta",
            {{"index", blocks_ - 1}, {"delta", {{"type", "thinking_delta"}, {"thinking", reasoning}}}});
    }
    if (!content.empty()) {
        if (open_ != Open::Text) {
            close_block(out);
            add(out, "content_block_start",
                {{"index", blocks_++}, {"content_block", {{"type", "text"}, {"text", ""}}}});
            open_ = Open::Text;
        }
        add(out, "content_block_delta",
            {{"index", blocks_ - 1}, {"delta", {{"type", "text_delta"}, {"text", content}}}});
    }
    return out;
}

std::vector<ReplyEvent> MessagesReply::finish(const ReplyEnd& end) {
    std::vector<ReplyEvent> out;
    close_block(out);
    for (const auto& call : end.parsed.tool_calls) {
        const json input = tool_input(call);
        const int index = blocks_++;
        add(out, "content_block_start",
            {{"index", index},
             {"content_block",
              {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", json::object()}}}});
        add(out, "content_block_delta",
            {{"index", index}, {"delta", {{"type", "input_json_delta"}, {"partial_json", input.dump()}}}});
        add(out, "content_block_stop", {{"index", index}});
    }
    add(out, "message_delta",
        {{"delta", {{"stop_reason", stop_reason(end)}, {"stop_sequence", stop_sequence(end)}}},
         {"usage", usage(end)}});
    add(out, "message_stop", json::object());
    return out;
}

json MessagesReply::body(const ReplyEnd& end) {
    json content = json::array();
    const auto& p = end.parsed;
    if (!p.reasoning_content.empty())
        content.push_back({{"type", "thinking"}, {"thinking", p.reasoning_content}, {"signature", ""}});
    if (!p.content.empty()) content.push_back({{"type", "text"}, {"text", p.content}});
    for (const auto& call : p.tool_calls)
        content.push_back(
            {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", tool_input(call)}});
    return {{"id", info_.id},
            {"type", "message"},
            {"role", "assistant"},
            {"model", info_.model},
            {"content", content},
            {"stop_reason", stop_reason(end)},
            {"stop_sequence", stop_sequence(end)},
            {"usage", usage(end)}};
}

std::vector<ReplyEvent> MessagesReply::stream_error(int status, const std::string& message) {
    std::vector<ReplyEvent> out;
    add(out, "error", anthropic_error_body(status, message));
    return out;
}

server::http::Response MessagesReply::error(int status, const std::string& message) const {
    return anthropic_error_response(status, message);
}

}  // namespace api
