// The request pipeline without sockets: CORS preflight, API keys, routing errors, handler failures.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/http/auth.h"
#include "server/http/cors.h"
#include "server/http/dispatch.h"
#include "server/http/errors.h"

using namespace server::http;
using nlohmann::json;

static Request make_request(std::string method, std::string path, Headers headers = {}) {
    Request r;
    r.method = std::move(method);
    r.path = path;
    r.target = path;
    r.headers = std::move(headers);
    return r;
}

static Response dispatch(const Router& router, const DispatchPolicy& policy, Request req) {
    Reply reply = dispatch_request(router, policy, req, req.path);
    REQUIRE_FALSE(reply.is_async());
    return reply.response();
}

TEST_CASE("presented_api_key reads Bearer tokens and X-Api-Key", "[http][auth]") {
    CHECK(presented_api_key({{"Authorization", "Bearer sk-1"}}) == "sk-1");
    CHECK(presented_api_key({{"authorization", "bearer sk-2"}}) == "sk-2");
    CHECK(presented_api_key({{"Authorization", "sk-3"}}) == "sk-3");
    CHECK(presented_api_key({{"X-Api-Key", "sk-4"}}) == "sk-4");
    CHECK_FALSE(presented_api_key({}).has_value());
}

TEST_CASE("ApiKeyAuth allows public paths and configured keys only", "[http][auth]") {
    ApiKeyAuth none;
    CHECK(none.allows("/v1/models", {}));

    ApiKeyAuth auth({"k1", "k2"}, {"/health"});
    CHECK(auth.enabled());
    CHECK(auth.allows("/health", {}));
    CHECK(auth.allows("/v1/models", {{"Authorization", "Bearer k2"}}));
    CHECK(auth.allows("/v1/models", {{"X-Api-Key", "k1"}}));
    CHECK_FALSE(auth.allows("/v1/models", {}));
    CHECK_FALSE(auth.allows("/v1/models", {{"Authorization", "Bearer k"}}));
    CHECK_FALSE(auth.allows("/v1/models", {{"Authorization", "Bearer k1x"}}));
    CHECK_FALSE(auth.allows("/health/", {}));
}

TEST_CASE("CORS headers reflect the origin and preflight allows what is asked", "[http][cors]") {
    const CorsPolicy policy;  // llama-server's defaults
    Headers out;
    add_cors_headers(policy, {{"Origin", "http://ui.local"}}, out);
    CHECK(out.value_or("Access-Control-Allow-Origin") == "http://ui.local");
    CHECK(out.value_or("Access-Control-Allow-Credentials") == "true");
    Headers star;
    add_cors_headers(policy, {}, star);
    CHECK(star.value_or("Access-Control-Allow-Origin") == "*");

    Response pre = preflight_response(policy, {{"Origin", "http://ui.local"},
                                                {"Access-Control-Request-Method", "POST"},
                                                {"Access-Control-Request-Headers", "authorization, content-type"}});
    CHECK(pre.status == 204);
    CHECK(pre.headers.value_or("Access-Control-Allow-Headers") == "authorization, content-type");
    CHECK(pre.headers.value_or("Access-Control-Allow-Methods") == "GET, POST, DELETE, OPTIONS");
}

TEST_CASE("dispatch answers preflight before auth, then 401, 404 and 405", "[http][dispatch]") {
    Router router;
    router.add("GET", "/v1/models", [](Request&) { return Response::text("models"); });
    router.add("GET", "/health", [](Request&) { return Response::text("ok"); });
    DispatchPolicy policy{ApiKeyAuth({"secret"}, {"/health"}), CorsPolicy{}, {}, {}, {}};

    CHECK(dispatch(router, policy, make_request("OPTIONS", "/v1/models")).status == 204);
    CHECK(dispatch(router, policy, make_request("GET", "/health")).body == "ok");

    Response unauthorized = dispatch(router, policy, make_request("GET", "/v1/models"));
    CHECK(unauthorized.status == 401);
    auto body = json::parse(unauthorized.body);
    CHECK(body["error"]["type"] == "authentication_error");
    CHECK(body["error"]["message"] == "Invalid API Key");
    CHECK(body["error"]["code"] == 401);

    Headers key{{"Authorization", "Bearer secret"}};
    CHECK(dispatch(router, policy, make_request("GET", "/v1/models", key)).body == "models");

    Response missing = dispatch(router, policy, make_request("GET", "/nope", key));
    CHECK(missing.status == 404);
    CHECK(json::parse(missing.body)["error"]["type"] == "not_found_error");

    Response wrong = dispatch(router, policy, make_request("POST", "/v1/models", key));
    CHECK(wrong.status == 405);
    CHECK(wrong.headers.value_or("Allow") == "GET, HEAD");
    CHECK(json::parse(wrong.body)["error"]["code"] == 405);
}

TEST_CASE("dispatch turns handler exceptions into error responses", "[http][dispatch]") {
    Router router;
    router.add("POST", "/bad", [](Request&) -> Reply { throw HttpError(400, "bad field"); });
    router.add("POST", "/boom", [](Request&) -> Reply { throw std::runtime_error("engine exploded"); });
    router.add("POST", "/weird", [](Request&) -> Reply { throw 42; });
    router.add("GET", "/slots/{id}", [](Request& r) { return Response::text(r.path_param("id")); });
    DispatchPolicy policy;

    Response bad = dispatch(router, policy, make_request("POST", "/bad"));
    CHECK(bad.status == 400);
    CHECK(json::parse(bad.body)["error"]["message"] == "bad field");
    CHECK(json::parse(bad.body)["error"]["type"] == "invalid_request_error");

    Response boom = dispatch(router, policy, make_request("POST", "/boom"));
    CHECK(boom.status == 500);
    CHECK(json::parse(boom.body)["error"]["message"] == "engine exploded");
    CHECK(json::parse(boom.body)["error"]["type"] == "server_error");

    CHECK(dispatch(router, policy, make_request("POST", "/weird")).status == 500);
    CHECK(dispatch(router, policy, make_request("GET", "/slots/7")).body == "7");
}

TEST_CASE("a request not attached to a connection cannot go async", "[http][dispatch]") {
    Request r;
    CHECK_THROWS_AS(r.stream(), std::logic_error);
    CHECK_THROWS_AS(r.defer(), std::logic_error);
}

TEST_CASE("the static fallback answers unrouted GET/HEAD without a key, the API keeps its key",
          "[http][auth][fallback]") {
    Router router;
    router.add("GET", "/v1/models", [](Request&) { return Response::text("models"); });
    DispatchPolicy policy;
    policy.auth = ApiKeyAuth({"key"}, {});
    policy.fallback = [](Request& r) { return Response::text("static " + r.method + " " + r.path); };

    CHECK(dispatch(router, policy, make_request("GET", "/")).body == "static GET /");
    CHECK(dispatch(router, policy, make_request("HEAD", "/app.js")).body == "static HEAD /app.js");
    CHECK(dispatch(router, policy, make_request("GET", "/v1/models")).status == 401);
    CHECK(dispatch(router, policy, make_request("GET", "/v1/models", {{"X-Api-Key", "key"}})).body == "models");
    // Other methods never reach it: they are the API's, and need the key.
    CHECK(dispatch(router, policy, make_request("POST", "/")).status == 401);
    CHECK(dispatch(router, policy, make_request("DELETE", "/x", {{"X-Api-Key", "key"}})).status == 404);

    policy.fallback = nullptr;  // --no-webui
    CHECK(dispatch(router, policy, make_request("GET", "/", {{"X-Api-Key", "key"}})).status == 404);
    CHECK(dispatch(router, policy, make_request("GET", "/")).status == 401);
}

TEST_CASE("CORS keeps the Vary of the response and adds Origin", "[http][cors]") {
    Headers out{{"Vary", "Accept-Encoding"}};
    add_cors_headers(CorsPolicy{}, {{"Origin", "http://ui.local"}}, out);
    CHECK(out.value_or("Vary") == "Accept-Encoding, Origin");
}

TEST_CASE("a path prefix with its own error format gets it for routing, key and handler errors",
          "[http][dispatch][errors]") {
    Router router;
    router.add("POST", "/v1/messages", [](Request&) -> Reply { throw HttpError(400, "bad block"); });
    router.add("POST", "/v1/messages/count", [](Request&) -> Reply { throw std::runtime_error("boom"); });
    router.add("POST", "/v1/messagesx", [](Request&) -> Reply { throw HttpError(400, "other api"); });
    DispatchPolicy policy;
    policy.auth = ApiKeyAuth({"key"}, {});
    policy.error_formats.emplace_back(
        "/v1/messages", [](const HttpError& e) {
            return Response::json(
                json{{"type", "error"}, {"error", {{"status", e.status()}, {"message", std::string(e.what())}}}},
                e.status());
        });
    const Headers key{{"X-Api-Key", "key"}};
    auto shaped = [](const Response& r, int status, const std::string& message) {
        INFO(r.body);
        CHECK(r.status == status);
        const json j = json::parse(r.body);
        CHECK(j["type"] == "error");
        CHECK(j["error"]["status"] == status);
        CHECK(j["error"]["message"] == message);
    };
    shaped(dispatch(router, policy, make_request("POST", "/v1/messages")), 401, "Invalid API Key");
    shaped(dispatch(router, policy, make_request("POST", "/v1/messages", key)), 400, "bad block");
    shaped(dispatch(router, policy, make_request("POST", "/v1/messages/count", key)), 500, "boom");
    shaped(dispatch(router, policy, make_request("POST", "/v1/messages/nope", key)), 404, "File Not Found");
    CHECK(dispatch(router, policy, make_request("GET", "/v1/messages", key)).status == 405);
    // Only the prefix and the paths below it: a longer name is another API's.
    const Response other = dispatch(router, policy, make_request("POST", "/v1/messagesx", key));
    CHECK(json::parse(other.body)["error"]["message"] == "other api");
    CHECK_FALSE(json::parse(other.body).contains("type"));
}

TEST_CASE("strip_path_prefix keeps the paths under --api-prefix, without it", "[http][prefix]") {
    struct Row {
        const char *path, *prefix;
        std::optional<std::string> want;
    };
    const Row rows[] = {
        {"/health", "", "/health"},          {"/llm/health", "/llm", "/health"}, {"/llm", "/llm", "/"},
        {"/llm/", "/llm", "/"},              {"/llm/v1/models", "/llm", "/v1/models"},
        {"/health", "/llm", std::nullopt},   {"/llmx/health", "/llm", std::nullopt},
        {"/ll", "/llm", std::nullopt},       {"/a/b/c", "/a/b", "/c"}};
    for (const Row& r : rows) {
        INFO(r.path << " under '" << r.prefix << "'");
        CHECK(strip_path_prefix(r.path, r.prefix) == r.want);
    }
}

TEST_CASE("with a path prefix, routes answer under it and nothing answers outside it", "[http][prefix]") {
    Router router;
    router.add("GET", "/health", [](Request&) -> Reply { return Response::text("ok"); });
    router.add("GET", "/slots/{id}", [](Request& req) -> Reply { return Response::text("slot " + req.path_param("id")); });
    DispatchPolicy policy;
    policy.path_prefix = "/llm";
    policy.fallback = [](Request& req) -> Reply { return Response::text("page " + req.path); };
    policy.auth = ApiKeyAuth({"k"}, {"/health"});
    CHECK(dispatch(router, policy, make_request("GET", "/llm/health")).body == "ok");  // public under the prefix
    CHECK(dispatch(router, policy, make_request("GET", "/llm/slots/2", {{"Authorization", "Bearer k"}})).body ==
          "slot 2");
    CHECK(dispatch(router, policy, make_request("GET", "/llm/slots/2")).status == 401);
    CHECK(dispatch(router, policy, make_request("GET", "/llm/")).body == "page /");
    CHECK(dispatch(router, policy, make_request("GET", "/llm/favicon.svg")).body == "page /favicon.svg");
    for (const char* outside : {"/health", "/", "/llmhealth", "/slots/2"}) {
        INFO(outside);
        CHECK(dispatch(router, policy, make_request("GET", outside)).status == 404);
    }
}

TEST_CASE("an error's details go into OpenAI's error object beside its type", "[http][dispatch]") {
    Router router;
    router.add("POST", "/v1/chat/completions", [](Request&) -> Reply {
        throw HttpError(400, "too long", "exceed_context_size_error", {{"n_prompt_tokens", 9000}, {"n_ctx", 1024}});
    });
    DispatchPolicy policy;
    const Response r = dispatch(router, policy, make_request("POST", "/v1/chat/completions"));
    CHECK(r.status == 400);
    const json e = json::parse(r.body)["error"];
    CHECK(e["type"] == "exceed_context_size_error");
    CHECK(e["message"] == "too long");
    CHECK(e["code"] == 400);
    CHECK(e["n_prompt_tokens"] == 9000);
    CHECK(e["n_ctx"] == 1024);
}
