// Every shared model template renders a plain conversation, and every template that knows about
// tools renders tool definitions plus a tool call and its result, without error.
#include <catch2/catch.hpp>

#include "chat_conversations.h"
#include "chat_test_util.h"
#include "engine/chat/chat_template.h"

using engine::chat::ChatInputs;
using engine::chat::ChatTemplate;
using engine::chat::Json;

namespace {

// Variables a template needs beyond the standard ones (firefunction-v2 takes its tools this way).
Json extra_context_for(const std::string& name) {
    Json extra = Json::object();
    if (name == "fireworks-ai-llama-3-firefunction-v2.jinja") {
        extra["functions"] = chat_test::weather_tools()[0]["function"].dump(2);
        extra["datetime"] = "2024-07-26";
    }
    return extra;
}

bool mentions(const std::string& text, const char* word) {
    return text.find(word) != std::string::npos;
}

size_t count(const std::string& text, const std::string& word) {
    size_t n = 0;
    for (size_t p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("the shared template set is present", "[chat][templates]") {
    CHECK(chat_test::all_template_names().size() >= 57);
}

TEST_CASE("every shared template renders system, user, assistant, user", "[chat][templates]") {
    for (const auto& name : chat_test::all_template_names()) {
        INFO("template: " << name);
        try {
            const ChatTemplate tmpl(chat_test::read_template(name), "<s>", "</s>");
            ChatInputs in;
            in.messages = chat_test::basic_conversation();
            in.extra_context = extra_context_for(name);
            const std::string out = tmpl.apply(in);
            CHECK(mentions(out, "Hello!"));
            CHECK(mentions(out, "What is 2+2?"));
            CHECK(mentions(out, "Hi there. How can I help?"));
            CHECK(mentions(out, "You are a helpful assistant."));
        } catch (const std::exception& e) {
            FAIL_CHECK(e.what());
        }
    }
}

TEST_CASE("every shared template renders tools, a call, its result and a follow-up", "[chat][templates][tools]") {
    for (const auto& name : chat_test::all_template_names()) {
        INFO("template: " << name);
        try {
            const ChatTemplate tmpl(chat_test::read_template(name), "<s>", "</s>");
            ChatInputs in;
            in.messages = chat_test::tool_conversation();
            in.tools = chat_test::weather_tools();
            in.extra_context = extra_context_for(name);
            const std::string out = tmpl.apply(in);
            INFO(out);
            CHECK(mentions(out, "What's the weather in Paris?"));
            CHECK(mentions(out, "Thanks!"));
            CHECK(mentions(out, "get_weather"));          // the tool's definition or its call
            CHECK(count(out, "Paris") >= 2);              // question and call argument
            CHECK(mentions(out, "21"));                   // the tool's result
            CHECK(mentions(out, "It is 21 degrees."));    // the answer after the result
        } catch (const std::exception& e) {
            FAIL_CHECK(e.what());
        }
    }
}

TEST_CASE("templates without tool support get the tools declared in a system message", "[chat][templates][tools]") {
    const ChatTemplate tmpl(
        "{% for m in messages %}{% if m.role != 'tool' %}<{{ m.role }}>{{ m.content }}\n{% endif %}{% endfor %}", "",
        "");
    CHECK_FALSE(tmpl.caps().supports_tools);
    CHECK_FALSE(tmpl.caps().supports_tool_calls);
    CHECK_FALSE(tmpl.caps().supports_tool_responses);
    ChatInputs in;
    in.messages = chat_test::tool_conversation();
    in.tools = chat_test::weather_tools();
    const std::string out = tmpl.apply(in);
    CHECK(mentions(out, "<system>You are a helpful assistant.\n\nYou can call these tools:"));
    CHECK(mentions(out, R"({"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"},"id":"abc123xyz"}]})"));
    CHECK(mentions(out, "<user>Tool result of get_weather (call abc123xyz):\n{\"temp\": 21}"));
    // The client's key order is kept in the declaration (name before description before parameters).
    const size_t n = out.find("\"name\":\"get_weather\""), d = out.find("\"description\"");
    CHECK(n < d);
}

TEST_CASE("tool-aware templates render the client's tool JSON key order", "[chat][templates][tools]") {
    const ChatTemplate tmpl(chat_test::read_template("Qwen-Qwen2.5-7B-Instruct.jinja"), "", "");
    REQUIRE(tmpl.caps().supports_tools);
    ChatInputs in;
    in.messages = chat_test::basic_conversation();
    in.tools = chat_test::weather_tools();
    const std::string out = tmpl.apply(in);
    const size_t t = out.find("\"type\": \"function\""), f = out.find("\"function\": {\"name\"");
    REQUIRE(t != std::string::npos);
    CHECK(f != std::string::npos);
    CHECK(t < f);
}
