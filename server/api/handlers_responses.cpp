// POST /v1/responses (OpenAI Responses API) and /v1/responses/input_tokens. Path of a request: parse +
// validate (schemas/responses.json) -> restated as a chat request (responses_request.cpp) -> the chat
// path (prepare_chat: template, tools, grammar) -> the scheduler -> GenerationResponse writes the reply
// through ResponsesReply (responses_reply.cpp).
#include <charconv>
#include <cstdlib>

#include "server/api/api.h"
#include "server/api/ids.h"
#include "server/api/responses_reply.h"
#include "server/api/responses_request.h"
#include "server/http/errors.h"

namespace api {

namespace {

// A float setting as the JSON number that prints like it (0.95, not 0.949999988079071).
double shortest(float f) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

nlohmann::ordered_json ordered_body(const server::http::Request& req) {
    nlohmann::ordered_json obody = nlohmann::ordered_json::parse(req.body, nullptr, false);
    if (!obody.is_object()) bad_request("the request body must be a JSON object");
    return obody;
}

}  // namespace

Api::Reply Api::responses(Request& req) {
    require_ready();
    require_generation();
    const json body = parse_body(req, "responses.json");
    RestatedResponses r = restate_responses_request(ordered_body(req));
    const nlohmann::ordered_json& chat_body = r.chat.body;
    PreparedChat chat = prepare_chat(json(chat_body), chat_body, chat_body.dump(), r.chat.prefill, "call_");
    // The API's own budget (thinking.budget_tokens) over the server's, unless replies are not parsed.
    if (r.chat.reasoning_budget >= 0 && !config_.skip_chat_parsing) chat.opts.reasoning_budget = r.chat.reasoning_budget;

    ResponsesReplyInfo info;
    info.id = random_id("resp_");
    info.created_at = unix_now();
    info.model = model_name();
    info.echo = std::move(r.echo);
    info.echo["temperature"] = shortest(chat.opts.sampling.temperature);
    info.echo["top_p"] = shortest(chat.opts.sampling.top_p);
    info.item_id_suffix = random_id("") + "_";
    auto agent = std::make_shared<ResponsesReply>(std::move(info));
    return start_generation(req, Flavor::Chat, body, chat.opts, {chat.tokens}, {chat.prompt}, &chat.parse,
                            agent);
}

Api::Reply Api::responses_input_tokens(Request& req) {
    require_ready();
    require_generation();
    parse_body(req, "responses_input_tokens.json");
    RestatedResponses r = restate_responses_request(ordered_body(req));
    const nlohmann::ordered_json& chat_body = r.chat.body;
    const PreparedChat chat =
        prepare_chat(json(chat_body), chat_body, chat_body.dump(), r.chat.prefill, "call_");
    return server::http::Response::json(
        {{"object", "response.input_tokens"}, {"input_tokens", chat.tokens.size()}});
}

Api::Reply Api::response_not_stored(Request& req) {
    const auto id = req.path_params.find("id");
    throw server::http::HttpError(404, "No response with id '" +
                                           (id == req.path_params.end() ? std::string() : id->second) +
                                           "': this server keeps no responses (store is not supported)");
}

}  // namespace api
