// POST /v1/messages (Anthropic Messages API) and /v1/messages/count_tokens. Path of a request: parse +
// validate (schemas/messages.json) -> restated as a chat request (messages_request.cpp) -> the chat path
// (prepare_chat: template, tools, grammar, the prefill) -> the scheduler -> GenerationResponse writes the
// reply through MessagesReply (messages_reply.cpp). Errors on these paths are Anthropic's shape
// (register_routes installs anthropic_error_response for /v1/messages).
#include "server/api/api.h"
#include "server/api/ids.h"
#include "server/api/messages_reply.h"
#include "server/api/messages_request.h"

namespace api {

namespace {

nlohmann::ordered_json ordered_body(const server::http::Request& req) {
    nlohmann::ordered_json obody = nlohmann::ordered_json::parse(req.body, nullptr, false);
    if (!obody.is_object()) bad_request("the request body must be a JSON object");
    return obody;
}

}  // namespace

Api::Reply Api::messages(Request& req) {
    require_ready();
    require_generation();
    const json body = parse_body(req, "messages.json");
    const RestatedChat r = restate_messages_request(ordered_body(req));
    PreparedChat chat = prepare_chat(json(r.body), r.body, r.body.dump(), r.prefill, "toolu_");
    // The API's own budget (thinking.budget_tokens) over the server's, unless replies are not parsed.
    if (r.reasoning_budget >= 0 && !config_.skip_chat_parsing) chat.opts.reasoning_budget = r.reasoning_budget;

    MessagesReplyInfo info;
    info.id = random_id("msg_");
    info.model = model_name();
    info.prompt_tokens = (int64_t)chat.tokens.size();
    auto agent = std::make_shared<MessagesReply>(std::move(info));
    return start_generation(req, Flavor::Chat, body, chat.opts, {chat.tokens}, {chat.prompt}, &chat.parse,
                            agent);
}

Api::Reply Api::messages_count_tokens(Request& req) {
    require_ready();
    require_generation();
    parse_body(req, "messages_count_tokens.json");
    const RestatedChat r = restate_messages_request(ordered_body(req));
    const PreparedChat chat = prepare_chat(json(r.body), r.body, r.body.dump(), r.prefill, "toolu_");
    return server::http::Response::json({{"input_tokens", chat.tokens.size()}});
}

}  // namespace api
