// Byte-exact prompts for the common model families. The expected strings are written out by hand
// from each family's documented prompt format (and the template text), not produced by the renderer.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>

#include "chat_conversations.h"
#include "chat_test_util.h"
#include "engine/chat/chat_template.h"

using engine::chat::ChatInputs;
using engine::chat::ChatTemplate;
using engine::chat::Json;

namespace {

std::string apply(const std::string& file, const std::string& bos, const std::string& eos,
                  const Json& messages, const Json& tools = Json(), const Json& extra = Json::object(),
                  bool add_generation_prompt = true) {
    const ChatTemplate tmpl(chat_test::read_template(file), bos, eos);
    ChatInputs in;
    in.messages = messages;
    in.tools = tools;
    in.extra_context = extra;
    in.add_generation_prompt = add_generation_prompt;
    return tmpl.apply(in);
}

}  // namespace

TEST_CASE("Llama 3.1: system header with knowledge dates, header/eot turns", "[chat][golden]") {
    const std::string expected =
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"
        "You are a helpful assistant.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nHi there. How can I help?<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n";
    CHECK(apply("meta-llama-Llama-3.1-8B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>",
                chat_test::basic_conversation()) == expected);
    CHECK(apply("meta-llama-Llama-3.3-70B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>",
                chat_test::basic_conversation()) == expected);
}

TEST_CASE("Llama 3.1: tools in the first user turn, JSON calls, ipython results", "[chat][golden][tools]") {
    const std::string expected = R"GOLD(<|begin_of_text|><|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 26 Jul 2024

You are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string",
                    "description": "City name"
                }
            },
            "required": [
                "city"
            ]
        }
    }
}

What's the weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>

"{\"temp\": 21}"<|eot_id|><|start_header_id|>assistant<|end_header_id|>

It is 21 degrees.<|eot_id|><|start_header_id|>user<|end_header_id|>

Thanks!<|eot_id|><|start_header_id|>assistant<|end_header_id|>

)GOLD";
    CHECK(apply("meta-llama-Llama-3.1-8B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>",
                chat_test::tool_conversation(), chat_test::weather_tools()) == expected);
}

TEST_CASE("Llama 3.2: today's date comes from strftime_now", "[chat][golden]") {
    setenv("TZ", "UTC", 1);
    tzset();
    const ChatTemplate tmpl(chat_test::read_template("meta-llama-Llama-3.2-3B-Instruct.jinja"),
                            "<|begin_of_text|>", "<|eot_id|>");
    ChatInputs in;
    in.messages = Json::parse(R"([{"role": "user", "content": "Hi"}])");
    in.now = std::chrono::system_clock::from_time_t(1736942400);  // 2025-01-15 12:00 UTC
    CHECK(tmpl.apply(in) ==
          "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
          "Cutting Knowledge Date: December 2023\nToday Date: 15 Jan 2025\n\n<|eot_id|>"
          "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST_CASE("Qwen2.5: ChatML turns, default system prompt", "[chat][golden]") {
    CHECK(apply("Qwen-Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>", chat_test::basic_conversation()) ==
          "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
          "<|im_start|>user\nHello!<|im_end|>\n"
          "<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n"
          "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
          "<|im_start|>assistant\n");
    CHECK(
        apply("Qwen-Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>",
              Json::parse(R"([{"role": "user", "content": "Hi"}])"), Json(), Json::object(), false) ==
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n");
}

TEST_CASE("Qwen2.5: Hermes-style tools, <tool_call> and <tool_response>", "[chat][golden][tools]") {
    const std::string expected =
        "<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n\n"
        "You may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Get the "
        "weather.\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\", "
        "\"description\": \"City name\"}}, \"required\": [\"city\"]}}}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags:\n<tool_call>\n"
        "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
        "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
        "\"Paris\"}}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\nIt is 21 degrees.<|im_end|>\n"
        "<|im_start|>user\nThanks!<|im_end|>\n"
        "<|im_start|>assistant\n";
    CHECK(apply("Qwen-Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>", chat_test::tool_conversation(),
                chat_test::weather_tools()) == expected);
}

TEST_CASE("Hermes 2 Pro / 3: function-calling system prompt and tool turns", "[chat][golden][tools]") {
    const std::string expected =
        "<|begin_of_text|><|im_start|>system\n"
        "You are a function calling AI model. You are provided with function signatures within "
        "<tools></tools> XML "
        "tags. You may call one or more functions to assist with the user query. Don't make assumptions "
        "about what "
        "values to plug into functions. Here are the available tools: <tools> "
        "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": "
        "\"get_weather(city: str) "
        "- Get the weather.\n\n    Args:\n        city(str): City name\", \"parameters\": {\"type\": "
        "\"object\", "
        "\"properties\": {\"city\": {\"type\": \"string\", \"description\": \"City name\"}}, \"required\": "
        "[\"city\"]}} </tools>"
        "Use the following pydantic model json schema for each tool call you will make: {\"properties\": "
        "{\"name\": "
        "{\"title\": \"Name\", \"type\": \"string\"}, \"arguments\": {\"title\": \"Arguments\", \"type\": "
        "\"object\"}}, "
        "\"required\": [\"name\", \"arguments\"], \"title\": \"FunctionCall\", \"type\": \"object\"}}\n"
        "For each function call return a json object with function name and arguments within "
        "<tool_call></tool_call> "
        "XML tags as follows:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-dict>}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
        "\"Paris\"}}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>tool\n<tool_response>\n{\"temp\": 21}\n</tool_response>\n<|im_end|>"
        "<|im_start|>assistant\nIt is 21 degrees.<|im_end|>\n"
        "<|im_start|>user\nThanks!<|im_end|>\n"
        "<|im_start|>assistant\n";
    CHECK(apply("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "<|begin_of_text|>", "<|im_end|>",
                chat_test::tool_conversation(), chat_test::weather_tools()) == expected);
    CHECK(apply("NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "<|begin_of_text|>", "<|im_end|>",
                chat_test::tool_conversation(), chat_test::weather_tools()) == expected);
}

TEST_CASE("Mistral Nemo: [INST] turns with the system prompt in the last user turn", "[chat][golden]") {
    CHECK(
        apply("mistralai-Mistral-Nemo-Instruct-2407.jinja", "<s>", "</s>", chat_test::basic_conversation()) ==
        "<s>[INST]Hello![/INST]Hi there. How can I help?</s>"
        "[INST]You are a helpful assistant.\n\nWhat is 2+2?[/INST]");
}

TEST_CASE("Mistral Nemo: [AVAILABLE_TOOLS], [TOOL_CALLS] and [TOOL_RESULTS]", "[chat][golden][tools]") {
    CHECK(
        apply("mistralai-Mistral-Nemo-Instruct-2407.jinja", "<s>", "</s>", chat_test::tool_conversation(),
              chat_test::weather_tools()) ==
        "<s>[INST]What's the weather in Paris?[/INST]"
        "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": "
        "\"abc123xyz\"}]</s>"
        "[TOOL_RESULTS]{\"content\": {\"temp\": 21}, \"call_id\": \"abc123xyz\"}[/TOOL_RESULTS]"
        "It is 21 degrees.</s>"
        "[AVAILABLE_TOOLS][{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
        "\"description\": "
        "\"Get the weather.\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": "
        "\"string\", \"description\": \"City name\"}}, \"required\": [\"city\"]}}}][/AVAILABLE_TOOLS]"
        "[INST]You are a helpful assistant.\n\nThanks![/INST]");
}

TEST_CASE("Gemma 2: user/model turns - the system prompt joins the first user turn", "[chat][golden]") {
    CHECK(apply("google-gemma-2-2b-it.jinja", "<bos>", "<eos>", chat_test::basic_conversation()) ==
          "<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHello!<end_of_turn>\n"
          "<start_of_turn>model\nHi there. How can I help?<end_of_turn>\n"
          "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n"
          "<start_of_turn>model\n");
}

TEST_CASE("Phi-3.5: <|role|> turns ended by <|end|>", "[chat][golden]") {
    const std::string turns =
        "<|system|>\nYou are a helpful assistant.<|end|>\n"
        "<|user|>\nHello!<|end|>\n"
        "<|assistant|>\nHi there. How can I help?<|end|>\n"
        "<|user|>\nWhat is 2+2?<|end|>\n";
    const std::string file = "microsoft-Phi-3.5-mini-instruct.jinja";
    CHECK(apply(file, "<s>", "<|endoftext|>", chat_test::basic_conversation()) == turns + "<|assistant|>\n");
    CHECK(apply(file, "<s>", "<|endoftext|>", chat_test::basic_conversation(), Json(), Json::object(),
                false) == turns + "<|endoftext|>");
}

TEST_CASE("DeepSeek-R1 distill: reasoning dropped from history, <think> opened", "[chat][golden]") {
    Json messages = chat_test::basic_conversation();
    messages[2]["content"] = "<think>\nLet me greet.\n</think>\n\nHi there. How can I help?";
    const std::string history =
        "<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>Hello!"
        "<｜Assistant｜>\n\nHi there. How can I help?<｜end▁of▁sentence｜>"
        "<｜User｜>What is 2+2?<｜Assistant｜><think>\n";
    const std::string file = "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja";
    CHECK(apply(file, "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", messages, Json(),
                Json{{"enable_thinking", true}}) == history);
    CHECK(apply(file, "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", messages) == history + "</think>");
}

TEST_CASE("DeepSeek V3.1: <think></think> per assistant turn unless thinking", "[chat][golden]") {
    const std::string file = "deepseek-ai-DeepSeek-V3.1.jinja";
    const std::string prefix =
        "<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>Hello!<｜Assistant｜><think></think>"
        "Hi there. How can I help?<｜end▁of▁sentence｜><｜User｜>What is 2+2?<｜Assistant｜>";
    CHECK(apply(file, "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", chat_test::basic_conversation()) ==
          prefix + "<think></think>");
    CHECK(apply(file, "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", chat_test::basic_conversation(),
                Json(), Json{{"thinking", true}}) == prefix + "<think>");
}

TEST_CASE("developer messages are system messages, unless the template names the role", "[chat][golden]") {
    const Json msgs = Json::array({{{"role", "developer"}, {"content", "Always answer in JSON."}},
                                   {{"role", "user"}, {"content", "List two colors."}}});
    // Qwen3 knows no developer role: the instruction was dropped.
    CHECK(apply("Qwen-Qwen3-0.6B.jinja", "", "<|im_end|>", msgs) ==
          "<|im_start|>system\nAlways answer in JSON.<|im_end|>\n<|im_start|>user\nList two colors.<|im_end|>\n"
          "<|im_start|>assistant\n");
    // Mistral Small 3.2 raised "Only user, system and assistant roles are supported".
    const std::string mistral = apply("Mistral-Small-3.2-24B-Instruct-2506.jinja", "<s>", "</s>", msgs);
    CHECK(mistral.find("[SYSTEM_PROMPT]Always answer in JSON.[/SYSTEM_PROMPT]") != std::string::npos);
    // gpt-oss (Harmony) has the role: its developer message holds the instructions.
    const std::string harmony = apply("openai-gpt-oss-120b.jinja", "", "", msgs);
    CHECK(harmony.find("<|start|>developer<|message|># Instructions\n\nAlways answer in JSON.") != std::string::npos);
}

TEST_CASE("an earlier turn's reasoning_content reaches templates that read message.thinking", "[chat][golden]") {
    const Json msgs = Json::array(
        {{{"role", "user"}, {"content", "Weather in Paris?"}},
         {{"role", "assistant"},
          {"content", ""},
          {"reasoning_content", "I should call get_weather."},
          {"tool_calls",
           Json::array({{{"id", "call_1"},
                         {"type", "function"},
                         {"function", {{"name", "get_weather"}, {"arguments", R"({"location": "Paris"})"}}}}})}},
         {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}}});
    const std::string harmony = apply("openai-gpt-oss-120b.jinja", "", "", msgs, chat_test::weather_tools());
    INFO(harmony);
    CHECK(harmony.find("<|start|>assistant<|channel|>analysis<|message|>I should call get_weather.<|end|>") !=
          std::string::npos);
}

TEST_CASE("Gemma 4 interleaved: tool results become the calling turn's tool_responses, the reply continues it",
          "[chat][golden][tools]") {
    const Json call = {{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", R"({"location": "Paris"})"}}}};
    const Json msgs = Json::array({{{"role", "user"}, {"content", "What's the weather in Paris?"}},
                                   {{"role", "assistant"}, {"content", ""}, {"tool_calls", Json::array({call})}},
                                   {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", R"({"temperature": 22, "sky": "sunny"})"}},
                                   {{"role", "assistant"}, {"content", "It is 22 °C and sunny in Paris."}},
                                   {{"role", "user"}, {"content", "Thanks!"}}});
    const std::string p =
        apply("google-gemma-4-31B-it-interleaved.jinja", "<bos>", "<eos>", msgs, chat_test::weather_tools());
    INFO(p);
    // As llama-server 0.7.0 renders it (the template defines no tool turn: it rendered "<|turn>tool").
    CHECK(p.find("<|turn>model\n<|tool_call>call:get_weather{location:<|\"|>Paris<|\"|>}<tool_call|>"
                 "<|tool_response>response:get_weather{sky:<|\"|>sunny<|\"|>,temperature:22}<tool_response|>"
                 "It is 22 °C and sunny in Paris.<turn|>\n<|turn>user\nThanks!<turn|>\n") != std::string::npos);
    CHECK(p.find("<|turn>tool") == std::string::npos);
    // A result that is not JSON is a value; the generation prompt right after results stays in the turn.
    Json pending = Json::array({msgs[0], msgs[1], {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}}});
    const std::string q =
        apply("google-gemma-4-31B-it-interleaved.jinja", "<bos>", "<eos>", pending, chat_test::weather_tools());
    INFO(q);
    CHECK(q.find("<|tool_response>response:get_weather{value:<|\"|>sunny<|\"|>}<tool_response|>") != std::string::npos);
    CHECK(q.find("<|turn>model", q.find("<|tool_response>")) == std::string::npos);
    // The other Gemma 4 template handles tool messages itself: left as they are.
    const std::string plain = apply("google-gemma-4-31B-it.jinja", "<bos>", "<eos>", msgs, chat_test::weather_tools());
    CHECK(plain.find("response:get_weather") != std::string::npos);
}
