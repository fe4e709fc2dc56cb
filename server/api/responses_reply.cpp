#include "server/api/responses_reply.h"

#include "server/http/errors.h"

namespace api {

using json = nlohmann::json;

namespace {

json reasoning_item(const std::string& id, const std::string& text) {
    return {{"id", id},
            {"type", "reasoning"},
            {"summary", json::array()},
            {"content", json::array({{{"type", "reasoning_text"}, {"text", text}}})}};
}

json output_text(const std::string& text) {
    return {
        {"type", "output_text"}, {"text", text}, {"annotations", json::array()}, {"logprobs", json::array()}};
}

json message_item(const std::string& id, const char* status, json content) {
    return {{"id", id},
            {"type", "message"},
            {"status", status},
            {"role", "assistant"},
            {"content", std::move(content)}};
}

json function_call_item(const std::string& id, const char* status, const engine::chat::ToolCall& call,
                        const std::string& arguments) {
    return {{"id", id},           {"type", "function_call"}, {"status", status},
            {"call_id", call.id}, {"name", call.name},       {"arguments", arguments}};
}

const char* item_status(const ReplyEnd& end) {
    return end.stopped() ? "completed" : "incomplete";
}

}  // namespace

ResponsesReply::ResponsesReply(ResponsesReplyInfo info) : info_(std::move(info)) {}

std::string ResponsesReply::item_id(const char* prefix) {
    return prefix + info_.item_id_suffix + std::to_string(item_count_++);
}

json ResponsesReply::response_object(const char* status, const json& output) const {
    json r = json::parse(info_.echo.dump());
    r["id"] = info_.id;
    r["object"] = "response";
    r["created_at"] = info_.created_at;
    r["status"] = status;
    r["error"] = nullptr;
    r["incomplete_details"] = nullptr;
    r["model"] = info_.model;
    r["output"] = output;
    r["usage"] = nullptr;
    return r;
}

json ResponsesReply::usage(const ReplyEnd& end) const {
    return {{"input_tokens", end.input_tokens},
            {"input_tokens_details", {{"cached_tokens", end.cached_tokens}}},
            {"output_tokens", end.output_tokens},
            {"output_tokens_details", {{"reasoning_tokens", end.reasoning_tokens}}},
            {"total_tokens", end.input_tokens + end.output_tokens}};
}

void ResponsesReply::add(std::vector<ReplyEvent>& out, const char* name, json data) {
    data["type"] = name;
    data["sequence_number"] = sequence_++;
    out.push_back({name, std::move(data)});
}

std::vector<ReplyEvent> ResponsesReply::start(int64_t) {
    std::vector<ReplyEvent> out;
    add(out, "response.created", {{"response", response_object("in_progress", json::array())}});
    add(out, "response.in_progress", {{"response", response_object("in_progress", json::array())}});
    return out;
}

void ResponsesReply::open_reasoning(std::vector<ReplyEvent>& out) {
    open_ = Open::Reasoning;
    open_id_ = item_id("rs_");
    text_.clear();
    json item = reasoning_item(open_id_, "");
    item["content"] = json::array();
    add(out, "response.output_item.added", {{"output_index", output_.size()}, {"item", item}});
    add(out, "response.content_part.added",
        {{"item_id", open_id_},
         {"output_index", output_.size()},
         {"content_index", 0},
         {"part", {{"type", "reasoning_text"}, {"text", ""}}}});
}

void ResponsesReply::close_reasoning(std::vector<ReplyEvent>& out) {
    const size_t index = output_.size();
    add(out, "response.reasoning_text.done",
        {{"item_id", open_id_}, {"output_index", index}, {"content_index", 0}, {"text", text_}});
    add(out, "response.content_part.done",
        {{"item_id", open_id_},
         {"output_index", index},
         {"content_index", 0},
         {"part", {{"type", "reasoning_text"}, {"text", text_}}}});
    const json item = reasoning_item(open_id_, text_);
    add(out, "response.output_item.done", {{"output_index", index}, {"item", item}});
    output_.push_back(item);
    open_ = Open::None;
}

void ResponsesReply::open_message(std::vector<ReplyEvent>& out) {
    open_ = Open::Message;
    open_id_ = item_id("msg_");
    text_.clear();
    add(out, "response.output_item.added",
        {{"output_index", output_.size()}, {"item", message_item(open_id_, "in_progress", json::array())}});
    add(out, "response.content_part.added",
        {{"item_id", open_id_},
         {"output_index", output_.size()},
         {"content_index", 0},
         {"part", output_text("")}});
}

void ResponsesReply::close_message(std::vector<ReplyEvent>& out, const char* status) {
    const size_t index = output_.size();
    add(out, "response.output_text.done",
        {{"item_id", open_id_},
         {"output_index", index},
         {"content_index", 0},
         {"text", text_},
         {"logprobs", json::array()}});
    add(out, "response.content_part.done",
        {{"item_id", open_id_}, {"output_index", index}, {"content_index", 0}, {"part", output_text(text_)}});
    const json item = message_item(open_id_, status, json::array({output_text(text_)}));
    add(out, "response.output_item.done", {{"output_index", index}, {"item", item}});
    output_.push_back(item);
    open_ = Open::None;
    message_done_ = true;
}

std::vector<ReplyEvent> ResponsesReply::delta(const std::string& reasoning, const std::string& content) {
    std::vector<ReplyEvent> out;
    if (!reasoning.empty()) {
        if (open_ != Open::Reasoning) open_reasoning(out);
        text_ += reasoning;
        add(out, "response.reasoning_text.delta",
            {{"item_id", open_id_},
             {"output_index", output_.size()},
             {"content_index", 0},
             {"delta", reasoning}});
    }
    if (!content.empty()) {
        if (open_ == Open::Reasoning) close_reasoning(out);
        if (open_ != Open::Message) open_message(out);
        text_ += content;
        add(out, "response.output_text.delta",
            {{"item_id", open_id_},
             {"output_index", output_.size()},
             {"content_index", 0},
             {"delta", content},
             {"logprobs", json::array()}});
    }
    return out;
}

std::vector<ReplyEvent> ResponsesReply::finish(const ReplyEnd& end) {
    std::vector<ReplyEvent> out;
    if (open_ == Open::Reasoning) close_reasoning(out);
    // A reply without calls has a message, even an empty one.
    if (open_ == Open::None && !message_done_ && !end.has_tool_calls()) open_message(out);
    if (open_ == Open::Message) close_message(out, item_status(end));
    for (const auto& call : end.parsed.tool_calls) {
        const size_t index = output_.size();
        const std::string id = item_id("fc_");
        add(out, "response.output_item.added",
            {{"output_index", index}, {"item", function_call_item(id, "in_progress", call, "")}});
        add(out, "response.function_call_arguments.delta",
            {{"item_id", id}, {"output_index", index}, {"delta", call.arguments}});
        add(out, "response.function_call_arguments.done",
            {{"item_id", id}, {"output_index", index}, {"name", call.name}, {"arguments", call.arguments}});
        const json item = function_call_item(id, item_status(end), call, call.arguments);
        add(out, "response.output_item.done", {{"output_index", index}, {"item", item}});
        output_.push_back(item);
    }
    json r = response_object(end.stopped() ? "completed" : "incomplete", output_);
    r["usage"] = usage(end);
    if (!end.stopped()) r["incomplete_details"] = {{"reason", "max_output_tokens"}};
    add(out, end.stopped() ? "response.completed" : "response.incomplete", {{"response", r}});
    return out;
}

json ResponsesReply::body(const ReplyEnd& end) {
    json output = json::array();
    const auto& p = end.parsed;
    if (!p.reasoning_content.empty()) output.push_back(reasoning_item(item_id("rs_"), p.reasoning_content));
    if (!p.content.empty() || p.tool_calls.empty())
        output.push_back(
            message_item(item_id("msg_"), item_status(end), json::array({output_text(p.content)})));
    for (const auto& call : p.tool_calls)
        output.push_back(function_call_item(item_id("fc_"), item_status(end), call, call.arguments));
    json r = response_object(end.stopped() ? "completed" : "incomplete", output);
    r["usage"] = usage(end);
    if (!end.stopped()) r["incomplete_details"] = {{"reason", "max_output_tokens"}};
    return r;
}

std::vector<ReplyEvent> ResponsesReply::stream_error(int status, const std::string& message) {
    std::vector<ReplyEvent> out;
    const std::string code(server::http::error_type_for_status(status));
    add(out, "error", {{"code", code}, {"message", message}, {"param", nullptr}});
    json r = response_object("failed", output_);
    r["error"] = {{"code", status >= 500 ? "server_error" : code}, {"message", message}};
    add(out, "response.failed", {{"response", r}});
    return out;
}

server::http::Response ResponsesReply::error(int status, const std::string& message) const {
    return server::http::error_response(status, message);
}

}  // namespace api
