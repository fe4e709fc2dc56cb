// The reasoning options without a model: -rea, --reasoning-effort and --reasoning-preserve as template
// variables (under the ones --chat-template-kwargs names), the requests' budget fields over the server's,
// and the final assistant message --prefill-assistant continues.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "server/api/chat_request_options.h"
#include "server/http/errors.h"

using ojson = nlohmann::ordered_json;

TEST_CASE("the reasoning switch sets enable_thinking for on and off, nothing for auto, and refuses other words", "[server][reasoning]") {
    for (const char* on : {"on", "enabled", "true", "1"}) {
        ojson kw = ojson::object();
        api::apply_reasoning_switch(on, kw);
        CHECK(kw == ojson{{"enable_thinking", true}});
    }
    for (const char* off : {"off", "disabled", "false", "0"}) {
        ojson kw = ojson::object();
        api::apply_reasoning_switch(off, kw);
        CHECK(kw == ojson{{"enable_thinking", false}});
    }
    for (const char* automatic : {"auto", "-1"}) {
        ojson kw = ojson::object();
        api::apply_reasoning_switch(automatic, kw);
        CHECK(kw.empty());
    }
    ojson given = {{"enable_thinking", true}};  // --chat-template-kwargs wins
    api::apply_reasoning_switch("off", given);
    CHECK(given["enable_thinking"] == true);
    ojson kw = ojson::object();
    CHECK_THROWS_AS(api::apply_reasoning_switch("Off", kw), std::invalid_argument);
    CHECK_THROWS_AS(api::apply_reasoning_switch("", kw), std::invalid_argument);
}

TEST_CASE("the server reasoning effort gives the template its level, none turns thinking off", "[server][reasoning]") {
    const auto level = [](const char* effort) {
        ojson kw = ojson::object();
        api::apply_reasoning_effort_default(effort, kw);
        return kw;
    };
    CHECK(level("default").empty());
    CHECK(level("minimal") == ojson{{"reasoning_effort", "low"}});
    CHECK(level("medium") == ojson{{"reasoning_effort", "medium"}});
    CHECK(level("max") == ojson{{"reasoning_effort", "high"}});
    CHECK(level("none") == ojson{{"enable_thinking", false}});
    ojson given = {{"reasoning_effort", "medium"}};
    api::apply_reasoning_effort_default("high", given);
    CHECK(given["reasoning_effort"] == "medium");
    CHECK_THROWS_AS(level("extreme"), std::invalid_argument);
}

TEST_CASE("reasoning preserve sets the variables templates read to keep or drop earlier reasoning",
          "[server][reasoning]") {
    ojson kw = ojson::object();
    api::apply_reasoning_preserve(true, kw);
    CHECK(kw == ojson{{"preserve_thinking", true}, {"clear_thinking", false}, {"truncate_history_thinking", false}});
    ojson off = {{"clear_thinking", false}};
    api::apply_reasoning_preserve(false, off);
    CHECK(off == ojson{{"clear_thinking", false}, {"preserve_thinking", false}, {"truncate_history_thinking", true}});
}

TEST_CASE("a request's budget fields override the server's, -1 means the server's", "[server][reasoning]") {
    CHECK(api::request_reasoning_budget(ojson::object(), 7) == 7);
    CHECK(api::request_reasoning_budget(ojson{{"reasoning_budget_tokens", 3}}, 7) == 3);
    CHECK(api::request_reasoning_budget(ojson{{"thinking_budget_tokens", 0}}, -1) == 0);
    CHECK(api::request_reasoning_budget(ojson{{"reasoning_budget_tokens", -1}, {"thinking_budget_tokens", 5}}, 7) == 5);
    CHECK(api::request_reasoning_budget(ojson{{"reasoning_budget_tokens", 2}, {"thinking_budget_tokens", 5}}, 7) == 2);
    CHECK(api::request_reasoning_budget(ojson{{"reasoning_budget_tokens", nullptr}}, 7) == 7);
    CHECK_THROWS_AS(api::request_reasoning_budget(ojson{{"reasoning_budget_tokens", -2}}, 7), server::http::HttpError);
    CHECK_THROWS_AS(api::request_reasoning_budget(ojson{{"thinking_budget_tokens", 1.5}}, 7), server::http::HttpError);
    CHECK(api::request_budget_message(ojson::object(), "Stop.") == "Stop.");
    CHECK(api::request_budget_message(ojson{{"reasoning_budget_message", ""}}, "Stop.") == "");
    CHECK_THROWS_AS(api::request_budget_message(ojson{{"reasoning_budget_message", 1}}, ""), server::http::HttpError);
}

TEST_CASE("a final assistant message with text and no tool calls is taken as the prefill", "[server][reasoning]") {
    const ojson user = {{"role", "user"}, {"content", "hi"}};
    ojson messages = ojson::array({user, {{"role", "assistant"}, {"content", "Once"}}});
    CHECK(api::take_assistant_prefill(messages) == "Once");
    CHECK(messages == ojson::array({user}));

    messages = ojson::array({user, {{"role", "assistant"},
                                    {"content", ojson::array({{{"type", "text"}, {"text", "Once "}},
                                                              {{"type", "text"}, {"text", "upon"}}})}}});
    CHECK(api::take_assistant_prefill(messages) == "Once upon");
    CHECK(messages.size() == 1);

    for (const ojson& last : {ojson{{"role", "user"}, {"content", "go on"}},
                              ojson{{"role", "assistant"}, {"content", ""}},
                              ojson{{"role", "assistant"},
                                    {"content", "calling"},
                                    {"tool_calls", ojson::array({{{"id", "1"}, {"type", "function"}}})}}}) {
        ojson kept = ojson::array({user, last});
        CHECK(api::take_assistant_prefill(kept).empty());
        CHECK(kept.size() == 2);
    }
    ojson empty = ojson::array();
    CHECK(api::take_assistant_prefill(empty).empty());
}
