// ChatTemplate probes what a template supports and adapts requests to it.
#include <catch2/catch.hpp>

#include "chat_conversations.h"
#include "chat_test_util.h"
#include "engine/chat/chat_template.h"

using namespace engine::chat;

namespace {

ChatTemplate load(const std::string& file) {
    return ChatTemplate(chat_test::read_template(file), "", "</s>");
}

}  // namespace

TEST_CASE("the capabilities llama-server reports beside them: parallel calls, strings, kept reasoning, effort",
          "[chat][caps]") {
    // Qwen2.5 as llama-server 0.7.0 reports it: parallel calls and strings, no kept reasoning, no effort.
    const auto qwen = load("Qwen-Qwen2.5-7B-Instruct.jinja");
    CHECK(qwen.caps().supports_parallel_tool_calls);
    CHECK(qwen.caps().supports_string_content);
    CHECK_FALSE(qwen.caps().supports_preserve_reasoning);
    CHECK_FALSE(qwen.caps().supports_reasoning_effort);
    // gpt-oss reads reasoning_effort and renders only the first call of a turn.
    const auto oss = load("openai-gpt-oss-120b.jinja");
    CHECK(oss.caps().supports_reasoning_effort);
    CHECK_FALSE(oss.caps().supports_parallel_tool_calls);
    // Seed-OSS keeps an earlier turn's reasoning_content; Qwen 3 drops it before the last user turn.
    CHECK(load("ByteDance-Seed-OSS.jinja").caps().supports_preserve_reasoning);
    CHECK_FALSE(load("Qwen-Qwen3-0.6B.jinja").caps().supports_preserve_reasoning);
    // Gemma 2 cannot render tool calls at all, so not several either.
    CHECK_FALSE(load("google-gemma-2-2b-it.jinja").caps().supports_parallel_tool_calls);
}

TEST_CASE("capabilities of well-known templates", "[chat][caps]") {
    const auto qwen = load("Qwen-Qwen2.5-7B-Instruct.jinja");
    CHECK(qwen.caps().supports_system_role);
    CHECK(qwen.caps().supports_tools);
    CHECK(qwen.caps().supports_tool_calls);
    CHECK(qwen.caps().object_arguments);
    CHECK_FALSE(qwen.caps().supports_typed_content);

    const auto gemma = load("google-gemma-2-2b-it.jinja");
    CHECK_FALSE(gemma.caps().supports_system_role);
    CHECK_FALSE(gemma.caps().supports_tools);

    const auto phi = load("microsoft-Phi-3.5-mini-instruct.jinja");
    CHECK_FALSE(phi.caps().supports_tools);
    CHECK_FALSE(phi.caps().supports_tool_calls);

    CHECK_FALSE(load("meetkai-functionary-medium-v3.2.jinja").caps().object_arguments);
    CHECK(load("deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja").caps().null_content_with_tool_calls);
    CHECK(load("Mistral-Small-3.2-24B-Instruct-2506.jinja").caps().supports_typed_content);
}

TEST_CASE("a template that needs unknown variables keeps default capabilities", "[chat][caps]") {
    const ChatTemplate t("{{ required_var.x }}{% for m in messages %}{{ m.content }}{% endfor %}", "", "");
    CHECK(t.caps().supports_system_role);
}

TEST_CASE("a system message is merged into the first user turn when the template has no system role",
          "[chat][caps]") {
    const ChatTemplate t(
        "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}{% endif %}"
        "[{{ m.role }}:{{ m.content }}]{% endfor %}",
        "", "");
    ChatInputs in;
    in.messages = Json::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])");
    CHECK(t.apply(in) == "[user:S\n\nU]");
    in.messages = Json::parse(R"([{"role": "system", "content": "only"}])");
    CHECK(t.apply(in) == "[user:only]");
}

TEST_CASE("tool-call arguments are passed as objects or strings as the template needs", "[chat][caps]") {
    const ChatTemplate wants_object(
        "{% for m in messages %}{% for c in m.tool_calls %}{{ c.function.arguments | tojson }}{% endfor %}{% "
        "endfor %}",
        "", "");
    const ChatTemplate wants_string(
        "{% for m in messages %}{% for c in m.tool_calls %}{{ '<' + c.function.arguments + '>' }}{% endfor "
        "%}{% endfor %}",
        "", "");
    CHECK(wants_object.caps().object_arguments);
    CHECK_FALSE(wants_string.caps().object_arguments);
    ChatInputs in;
    in.messages = Json::parse(R"([{"role": "user", "content": "q"}, {"role": "assistant", "content": null,
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]}])");
    CHECK(wants_object.apply(in) == "{\"a\": 1}");
    CHECK(wants_string.apply(in) == "<{\"a\":1}>");
    in.messages[1]["tool_calls"][0]["function"]["arguments"] = Json{{"b", 2}};
    CHECK(wants_string.apply(in) == "<{\"b\": 2}>");
}

TEST_CASE("null content becomes empty text - content parts are flattened for plain templates",
          "[chat][caps]") {
    const ChatTemplate plain("{% for m in messages %}[{{ m.content + '' }}]{% endfor %}", "", "");
    ChatInputs in;
    in.messages = Json::parse(R"([{"role": "assistant", "content": null},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}, {"type": "text", "text": "b"}]}])");
    CHECK(plain.apply(in) == "[][a\nb]");  // text parts joined with a new line (llama-server)

    const ChatTemplate typed(
        "{% for m in messages %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endfor %}", "", "");
    CHECK(typed.caps().supports_typed_content);
    in.messages = Json::parse(
        R"([{"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}])");
    CHECK(typed.apply(in) == "xy");
}

TEST_CASE("tools are undefined when the request has none", "[chat][caps]") {
    const ChatTemplate t("{{ tools is defined }}", "", "");
    ChatInputs in;
    CHECK(t.apply(in) == "False");
    in.tools = Json::array();
    CHECK(t.apply(in) == "False");
    in.tools = chat_test::weather_tools();
    CHECK(t.apply(in) == "True");
}

TEST_CASE("render() one-shot uses the same adaptations and extra context", "[chat][caps]") {
    const std::string out = render(
        "{{ bos_token }}{% for m in messages %}{{ m.role }}={{ m.content }};{% endfor %}"
        "{% if add_generation_prompt %}>{% endif %}{{ eos_token }}{{ flag }}",
        Json::parse(R"([{"role": "user", "content": "hi"}])"), Json(), true, "<s>", "</s>",
        Json{{"flag", "!"}});
    CHECK(out == "<s>user=hi;></s>!");
}

TEST_CASE("ChatMessage converts to and from OpenAI JSON", "[chat][message]") {
    const Json j =
        Json::parse(R"({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "f", "arguments": "{}"}}], "reasoning_content": "hmm"})");
    const ChatMessage m = ChatMessage::from_json(j);
    CHECK(m.role == "assistant");
    CHECK(m.tool_calls.size() == 1);
    CHECK(m.reasoning_content == "hmm");
    const Json back = m.to_json();
    CHECK(back["content"] == "");
    CHECK(back["tool_calls"][0]["id"] == "c1");
    CHECK_FALSE(back.contains("name"));
    CHECK_THROWS_AS(ChatMessage::from_json(Json::parse(R"({"content": "x"})")), std::invalid_argument);
    CHECK_THROWS_AS(ChatMessage::from_json(Json::parse(R"({"role": "user", "content": 5})")),
                    std::invalid_argument);
    CHECK(content_text(Json::parse(R"([{"type": "text", "text": "a"}, "b"])")) == "a\nb");  // llama-server's join
}
