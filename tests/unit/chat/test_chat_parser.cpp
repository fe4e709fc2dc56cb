// Parsing generated text: reasoning blocks and the tool-call syntaxes of the common families.
#include <catch2/catch.hpp>

#include "chat_test_util.h"
#include "engine/chat/chat_parser.h"

using namespace engine::chat;

namespace {

ParsedOutput parse(std::string_view text, ToolCallFormat format, bool opened = false) {
    ParseOptions o;
    o.tool_format = format;
    o.reasoning_opened_in_prompt = opened;
    return parse_output(text, o);
}

}  // namespace

TEST_CASE("reasoning in a leading <think> block is split from the content", "[chat][parser][reasoning]") {
    auto r = parse("<think>\nFirst, add.\n</think>\n\nThe answer is 4.", ToolCallFormat::None);
    CHECK(r.reasoning_content == "First, add.");
    CHECK(r.content == "The answer is 4.");

    r = parse("The answer is 4.", ToolCallFormat::None);
    CHECK(r.reasoning_content.empty());
    CHECK(r.content == "The answer is 4.");

    r = parse("<think>still thinking", ToolCallFormat::None);
    CHECK(r.reasoning_content == "still thinking");
    CHECK(r.content.empty());

    r = parse("Text with <think>inside</think> is content", ToolCallFormat::None);
    CHECK(r.content == "Text with <think>inside</think> is content");
}

TEST_CASE("reasoning opened by the prompt runs until </think>", "[chat][parser][reasoning]") {
    auto r = parse("Let me compute.\n</think>\n\n4", ToolCallFormat::None, true);
    CHECK(r.reasoning_content == "Let me compute.");
    CHECK(r.content == "4");
    r = parse("no end yet", ToolCallFormat::None, true);
    CHECK(r.reasoning_content == "no end yet");
    CHECK(r.content.empty());

    CHECK(prompt_opens_reasoning("<｜Assistant｜><think>\n"));
    CHECK_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
    CHECK_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n"));

    ParseOptions keep;
    keep.extract_reasoning = false;
    CHECK(parse_output("<think>x</think>y", keep).content == "<think>x</think>y");
}

TEST_CASE("Hermes / Qwen <tool_call> blocks", "[chat][parser][tools]") {
    const auto r = parse(
        "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
        "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
        ToolCallFormat::Hermes);
    CHECK(r.content == "Let me check.");
    REQUIRE(r.tool_calls.size() == 2);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Paris\"}");
    CHECK(r.tool_calls[0].id == "call_0");
    CHECK(r.tool_calls[1].name == "get_time");
    CHECK(r.tool_calls[1].arguments == "{}");
    CHECK(r.tool_calls[1].id == "call_1");
}

TEST_CASE("Qwen3-Coder XML parameters, and malformed Hermes blocks kept as text", "[chat][parser][tools]") {
    const std::string call =
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
        "</parameter>\n<parameter=zip>\n75001\n</parameter>\n</function>\n</tool_call>";
    auto r = parse(call, ToolCallFormat::Qwen3Coder);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Paris\",\"days\":3,\"zip\":75001}");
    // A parameter whose schema is a string keeps its text as it stands, even when it looks like JSON.
    ParseOptions o;
    o.tool_format = ToolCallFormat::Qwen3Coder;
    o.string_parameters = {{"get_weather", {"zip"}}};
    r = parse_output(call, o);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Paris\",\"days\":3,\"zip\":\"75001\"}");

    r = parse("oops <tool_call>{not json}</tool_call>", ToolCallFormat::Hermes);
    CHECK(r.tool_calls.empty());
    CHECK(r.content == "oops <tool_call>{not json}</tool_call>");
}

TEST_CASE("Llama 3.1 JSON calls", "[chat][parser][tools]") {
    auto r = parse("{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
                   ToolCallFormat::Llama3Json);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Paris\"}");
    CHECK(r.content.empty());

    r = parse(
        "<|python_tag|>{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\", \"parameters\": {\"x\": 1}}",
        ToolCallFormat::Llama3Json);
    REQUIRE(r.tool_calls.size() == 2);
    CHECK(r.tool_calls[1].name == "g");

    r = parse("The weather is {\"nice\": true}", ToolCallFormat::Llama3Json);
    CHECK(r.tool_calls.empty());
    CHECK(r.content == "The weather is {\"nice\": true}");
    r = parse("{\"answer\": 4}", ToolCallFormat::Llama3Json);  // JSON, but not a call
    CHECK(r.tool_calls.empty());
}

TEST_CASE("Mistral [TOOL_CALLS] in array and [ARGS] layouts", "[chat][parser][tools]") {
    auto r = parse(
        "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": "
        "\"abc123xyz\"}, "
        "{\"name\": \"f\", \"arguments\": {}}]",
        ToolCallFormat::Mistral);
    REQUIRE(r.tool_calls.size() == 2);
    CHECK(r.tool_calls[0].id == "abc123xyz");
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Paris\"}");
    CHECK(r.tool_calls[1].id == "call_1");
    CHECK(r.content.empty());

    r = parse("Sure.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]f[CALL_ID]x1[ARGS]{}",
              ToolCallFormat::Mistral);
    CHECK(r.content == "Sure.");
    REQUIRE(r.tool_calls.size() == 2);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(r.tool_calls[1].name == "f");
    CHECK(r.tool_calls[1].id == "x1");

    r = parse("plain answer", ToolCallFormat::Mistral);
    CHECK(r.content == "plain answer");
    CHECK(r.tool_calls.empty());
}

TEST_CASE("<function=name> tags (Functionary v3.1)", "[chat][parser][tools]") {
    const auto r =
        parse("Checking <function=get_weather>{\"city\": \"Paris\"}</function>", ToolCallFormat::FunctionTag);
    CHECK(r.content == "Checking");
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Paris\"}");
}

TEST_CASE("DeepSeek R1 and V3.1 tool call layouts", "[chat][parser][tools]") {
    auto r = parse(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        ToolCallFormat::DeepSeek);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Paris\"}");

    r = parse(
        "Calling.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Rome\"}"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        ToolCallFormat::DeepSeek);
    CHECK(r.content == "Calling.");
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].arguments == "{\"city\":\"Rome\"}");
}

TEST_CASE("generic JSON replies: tool_calls, tool_call or response", "[chat][parser][tools]") {
    auto r = parse("{\"tool_calls\": [{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"q\"}]}",
                   ToolCallFormat::Generic);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].id == "q");
    r = parse("{\"tool_call\": {\"name\": \"g\", \"arguments\": \"{\\\"b\\\": 2}\"}}",
              ToolCallFormat::Generic);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].arguments == "{\"b\": 2}");  // already a JSON string: kept as is
    r = parse("{\"response\": \"Hello\"}", ToolCallFormat::Generic);
    CHECK(r.content == "Hello");
    CHECK(r.tool_calls.empty());
    r = parse("just text", ToolCallFormat::Generic);
    CHECK(r.content == "just text");
}

TEST_CASE("reasoning and tool calls together, as an OpenAI message", "[chat][parser]") {
    const auto r = parse(
        "<think>Need weather.</think>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
        "{\"city\": \"Paris\"}}\n</tool_call>",
        ToolCallFormat::Hermes);
    const Json m = r.to_message_json();
    CHECK(m["role"] == "assistant");
    CHECK(m["content"].is_null());
    CHECK(m["reasoning_content"] == "Need weather.");
    CHECK(m["tool_calls"][0]["type"] == "function");
    CHECK(m["tool_calls"][0]["id"] == "call_0");
    CHECK(m["tool_calls"][0]["function"]["name"] == "get_weather");
    CHECK(m["tool_calls"][0]["function"]["arguments"] == "{\"city\":\"Paris\"}");
    CHECK(parse("hi", ToolCallFormat::None).to_message_json().dump() ==
          R"({"role":"assistant","content":"hi"})");
}

TEST_CASE("tool-call syntax is detected from the template", "[chat][parser][detect]") {
    CHECK(detect_tool_call_format(chat_test::read_template("Qwen-Qwen2.5-7B-Instruct.jinja")) ==
          ToolCallFormat::Hermes);
    CHECK(detect_tool_call_format(chat_test::read_template(
              "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja")) == ToolCallFormat::Hermes);
    CHECK(detect_tool_call_format(chat_test::read_template("meta-llama-Llama-3.1-8B-Instruct.jinja")) ==
          ToolCallFormat::Llama3Json);
    CHECK(detect_tool_call_format(chat_test::read_template("mistralai-Mistral-Nemo-Instruct-2407.jinja")) ==
          ToolCallFormat::Mistral);
    CHECK(detect_tool_call_format(chat_test::read_template("meetkai-functionary-medium-v3.1.jinja")) ==
          ToolCallFormat::FunctionTag);
    CHECK(detect_tool_call_format(chat_test::read_template(
              "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja")) == ToolCallFormat::DeepSeek);
    CHECK(detect_tool_call_format(chat_test::read_template("microsoft-Phi-3.5-mini-instruct.jinja")) ==
          ToolCallFormat::None);
    const std::pair<const char*, ToolCallFormat> more[] = {
        {"meta-llama-Llama-3.2-3B-Instruct.jinja", ToolCallFormat::Llama3Json},
        {"meta-llama-Llama-3.3-70B-Instruct.jinja", ToolCallFormat::Llama3Json},
        {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", ToolCallFormat::Hermes},
        {"Qwen-Qwen3-0.6B.jinja", ToolCallFormat::Hermes},
        {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", ToolCallFormat::DeepSeek},
        {"ibm-granite-granite-4.1.jinja", ToolCallFormat::Hermes},
        {"Mistral-Small-3.2-24B-Instruct-2506.jinja", ToolCallFormat::MistralArgs},
        {"unsloth-mistral-Devstral-Small-2507.jinja", ToolCallFormat::MistralArgs},
        {"mistralai-Ministral-3-14B-Reasoning-2512.jinja", ToolCallFormat::MistralArgs},
        {"deepseek-ai-DeepSeek-V3.1.jinja", ToolCallFormat::DeepSeekV31},
        {"ibm-granite-granite-3.3-2B-Instruct.jinja", ToolCallFormat::Granite},
        {"ibm-granite-granite-4.0.jinja", ToolCallFormat::Hermes},
        {"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", ToolCallFormat::CommandR7B},
        {"CohereForAI-c4ai-command-r-plus-tool_use.jinja", ToolCallFormat::CommandRPlus},
        {"Kimi-K2-Instruct.jinja", ToolCallFormat::Kimi},
        {"moonshotai-Kimi-K2.jinja", ToolCallFormat::Kimi},
        {"Kimi-K2-Thinking.jinja", ToolCallFormat::Kimi},
        {"GLM-4.6.jinja", ToolCallFormat::Glm45},
        {"GLM-4.7-Flash.jinja", ToolCallFormat::Glm47},
        {"MiniMax-M2.jinja", ToolCallFormat::MiniMaxM2},
        {"fireworks-ai-llama-3-firefunction-v2.jinja", ToolCallFormat::FireFunction},
        {"Qwen3-Coder.jinja", ToolCallFormat::Qwen3Coder},
        {"ByteDance-Seed-OSS.jinja", ToolCallFormat::SeedOss},
        {"openai-gpt-oss-120b.jinja", ToolCallFormat::Harmony},
    };
    for (const auto& [file, format] : more) {
        INFO(file);
        CHECK(tool_call_format_name(detect_tool_call_format(chat_test::read_template(file))) ==
              tool_call_format_name(format));
    }
    CHECK(detect_reasoning_tags(chat_test::read_template("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja")).open ==
          "<|START_THINKING|>");
    CHECK(detect_reasoning_tags(chat_test::read_template("Qwen-Qwen3-0.6B.jinja")).open == "<think>");
    CHECK(tool_call_format_name(ToolCallFormat::Llama3Json) == "llama3-json");
}
