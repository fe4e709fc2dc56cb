// Built-in formats: hand-written expected prompts, agreement with the model's own Jinja template
// where both exist, and detection of the format from a template's text.
#include <catch2/catch.hpp>

#include <map>

#include "chat_conversations.h"
#include "chat_test_util.h"
#include "engine/chat/builtin_formats.h"

using namespace engine::chat;

namespace {

// system S, user U1, assistant A1, user U2
Json short_conversation() {
    return Json::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
                           {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}])");
}

Json without_system(Json conversation) {
    conversation.erase(0);
    return conversation;
}

}  // namespace

TEST_CASE("the built-in format list has the llama.cpp names", "[chat][builtin]") {
    const auto names = list_builtin_formats();
    CHECK(std::is_sorted(names.begin(), names.end()));
    for (const char* required :
         {"chatml", "llama2", "llama2-sys", "llama3", "mistral-v1", "mistral-v3", "mistral-v3-tekken",
          "mistral-v7", "phi3", "phi4", "gemma", "zephyr", "vicuna", "deepseek", "deepseek2", "deepseek3",
          "command-r", "monarch", "orion", "openchat", "falcon3", "chatglm4", "granite", "megrez", "exaone3",
          // added to llama.cpp after the list above
          "gpt-oss", "granite-4.0", "granite-4.1", "grok-2", "seed_oss", "solar-open", "hunyuan-dense",
          "hunyuan-vl", "exaone-moe", "deepseek-ocr", "bailing-think", "bailing2", "pangu-embedded"}) {
        INFO(required);
        CHECK(std::find(names.begin(), names.end(), required) != names.end());
        CHECK(is_builtin_format(required));
    }
    CHECK_FALSE(is_builtin_format("jinja-only"));
    CHECK_THROWS_AS(format_builtin("no-such-format", short_conversation(), true), std::invalid_argument);
}

TEST_CASE("built-in formats lay out turns as each family expects", "[chat][builtin]") {
    const std::map<std::string, std::string> expected = {
        {"chatml",
         "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|"
         ">\n"
         "<|im_start|>user\nU2<|im_end|>\n<|im_start|>assistant\n"},
        {"llama2", "[INST] S\nU1 [/INST]A1</s>[INST] U2 [/INST]"},
        {"llama2-sys", "[INST] <<SYS>>\nS\n<</SYS>>\n\nU1 [/INST]A1</s>[INST] U2 [/INST]"},
        {"llama2-sys-bos", "[INST] <<SYS>>\nS\n<</SYS>>\n\nU1 [/INST]A1</s><s>[INST] U2 [/INST]"},
        {"mistral-v1", " [INST] S\n\nU1 [/INST] A1</s> [INST] U2 [/INST]"},
        {"mistral-v3", "[INST] S\n\nU1[/INST] A1</s>[INST] U2[/INST]"},
        {"mistral-v3-tekken", "[INST]S\n\nU1[/INST]A1</s>[INST]U2[/INST]"},
        {"mistral-v7", "[SYSTEM_PROMPT] S[/SYSTEM_PROMPT][INST] U1[/INST] A1</s>[INST] U2[/INST]"},
        {"mistral-v7-tekken", "[SYSTEM_PROMPT]S[/SYSTEM_PROMPT][INST]U1[/INST]A1</s>[INST]U2[/INST]"},
        {"llama3",
         "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>"
         "\n\nU1"
         "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nA1<|eot_id|><|start_header_id|>user"
         "<|end_header_id|>\n\nU2<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
        {"phi3",
         "<|system|>\nS<|end|>\n<|user|>\nU1<|end|>\n<|assistant|>\nA1<|end|>\n<|user|>\nU2<|end|>\n<|"
         "assistant|>\n"},
        {"phi4",
         "<|im_start|>system<|im_sep|>S<|im_end|><|im_start|>user<|im_sep|>U1<|im_end|><|im_start|>assistant"
         "<|im_sep|>A1<|im_end|><|im_start|>user<|im_sep|>U2<|im_end|><|im_start|>assistant<|im_sep|>"},
        {"gemma",
         "<start_of_turn>user\nS\n\nU1<end_of_turn>\n<start_of_turn>model\nA1<end_of_turn>\n<start_of_turn>"
         "user\n"
         "U2<end_of_turn>\n<start_of_turn>model\n"},
        {"zephyr",
         "<|system|>\nS<|endoftext|>\n<|user|>\nU1<|endoftext|>\n<|assistant|>\nA1<|endoftext|>\n<|user|>\n"
         "U2<|endoftext|>\n<|assistant|>\n"},
        {"falcon3", "<|system|>\nS\n<|user|>\nU1\n<|assistant|>\nA1\n<|user|>\nU2\n<|assistant|>\n"},
        {"monarch", "system\nS</s>\n<s>user\nU1</s>\n<s>assistant\nA1</s>\n<s>user\nU2</s>\n<s>assistant\n"},
        {"openchat",
         "S<|end_of_turn|>GPT4 Correct User: U1<|end_of_turn|>GPT4 Correct Assistant: A1<|end_of_turn|>"
         "GPT4 Correct User: U2<|end_of_turn|>GPT4 Correct Assistant:"},
        {"orion", "Human: S\n\nU1\n\nAssistant: </s>A1</s>Human: U2\n\nAssistant: </s>"},
        {"vicuna", "S\n\nUSER: U1\nASSISTANT: A1</s>\nUSER: U2\nASSISTANT:"},
        {"vicuna-orca", "SYSTEM: S\nUSER: U1\nASSISTANT: A1</s>\nUSER: U2\nASSISTANT:"},
        {"deepseek",
         "S### Instruction:\nU1\n### Response:\nA1\n<|EOT|>\n### Instruction:\nU2\n### Response:\n"},
        {"deepseek2", "S\n\nUser: U1\n\nAssistant: A1<｜end▁of▁sentence｜>User: U2\n\nAssistant:"},
        {"deepseek3", "S\n\n<｜User｜>U1<｜Assistant｜>A1<｜end▁of▁sentence｜><｜User｜>U2<｜Assistant｜>"},
        {"command-r",
         "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>S<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>"
         "U1"
         "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>A1<|END_OF_TURN_TOKEN|>"
         "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>U2<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|"
         ">"},
        {"chatglm4", "[gMASK]<sop><|system|>\nS<|user|>\nU1<|assistant|>\nA1<|user|>\nU2<|assistant|>\n"},
        {"granite",
         "<|start_of_role|>system<|end_of_role|>S<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>U1"
         "<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>A1<|end_of_text|>\n<|start_of_role|>user"
         "<|end_of_role|>U2<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>"},
        {"megrez",
         "<|role_start|>system<|role_end|>S<|turn_end|><|role_start|>user<|role_end|>U1<|turn_end|><|role_"
         "start|>"
         "assistant<|role_end|>A1<|turn_end|><|role_start|>user<|role_end|>U2<|turn_end|><|role_start|>"
         "assistant"
         "<|role_end|>"},
        {"exaone3",
         "[|system|]S[|endofturn|]\n[|user|]U1\n[|assistant|]A1[|endofturn|]\n[|user|]U2\n[|assistant|]"},
        {"kimi-k2",
         "<|im_system|>system<|im_middle|>S<|im_end|><|im_user|>user<|im_middle|>U1<|im_end|><|im_assistant|>"
         "assistant<|im_middle|>A1<|im_end|><|im_user|>user<|im_middle|>U2<|im_end|><|im_assistant|>assistant"
         "<|im_middle|>"},
        // The rows below are llama-server's --no-jinja output for this conversation.
        {"bailing-think",
         "<role>SYSTEM</role>S<role>HUMAN</role>U1<role>ASSISTANT</role>A1<role>HUMAN</"
         "role>U2<role>ASSISTANT</role><think>"},
        {"bailing2",
         "<role>SYSTEM</role>S<|role_end|><role>HUMAN</role>U1<|role_end|><role>ASSISTANT</"
         "role>A1<|role_end|><role>HUMAN</role>U2<|role_end|><role>ASSISTANT</role>"},
        {"deepseek-ocr", "SU1A1U2"},
        {"exaone-moe",
         "<|system|>\nS<|endofturn|>\n<|user|>\nU1<|endofturn|>\n<|assistant|>\nA1<|endofturn|>\n<|user|>"
         "\nU2<|endofturn|>\n<|assistant|>\n"},
        {"gpt-oss",
         "<|start|>system<|message|>S<|end|><|start|>user<|message|>U1<|end|><|start|>assistant<|message|>A1<"
         "|return|><|start|>user<|message|>U2<|end|><|start|>assistant"},
        {"granite-4.0",
         "<|start_of_role|>system<|end_of_role|>S<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>U1<|"
         "end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>A1<|end_of_text|>\n<|start_of_role|>user<|"
         "end_of_role|>U2<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>"},
        {"granite-4.1",
         "<|start_of_role|>system<|end_of_role|>S<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>U1<|"
         "end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>A1<|end_of_text|>\n<|start_of_role|>user<|"
         "end_of_role|>U2<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>"},
        {"grok-2",
         "System: S<|separator|>\n\nHuman: U1<|separator|>\n\nAssistant: A1<|separator|>\n\nHuman: "
         "U2<|separator|>\n\nAssistant:"},
        {"hunyuan-dense",
         "S<｜hy_place▁holder▁no▁3｜><｜hy_User｜>U1<｜hy_Assistant｜><｜hy_Assistant｜>A1<｜hy_"
         "place▁holder▁no▁2｜><｜hy_User｜>U2<｜hy_Assistant｜>"},
        {"hunyuan-vl",
         "<｜hy_begin▁of▁sentence｜>S<｜hy_place▁holder▁no▁3｜>U1<｜hy_User｜>A1<｜hy_Assistant｜>U2<｜hy_"
         "User｜>"},
        {"pangu-embedded",
         "[unused9]系统：S[unused10][unused9]用户：U1[unused10][unused9]助手：A1[unused10][unused9]用户：U2["
         "unused10][unused9]助手："},
        {"seed_oss",
         "<seed:bos>system\nS<seed:eos><seed:bos>user\nU1<seed:eos><seed:bos>assistant\nA1<seed:eos><seed:"
         "bos>user\nU2<seed:eos><seed:bos>assistant\n"},
        {"solar-open",
         "<|begin|>system<|content|>S<|end|><|begin|>user<|content|>U1<|end|><|begin|>assistant<|content|>A1<"
         "|end|><|begin|>user<|content|>U2<|end|><|begin|>assistant"},
    };
    for (const auto& [name, text] : expected) {
        INFO("format: " << name);
        CHECK(format_builtin(name, short_conversation(), true) == text);
    }
}

TEST_CASE("built-in formats honour add_generation_prompt and trimming", "[chat][builtin]") {
    const Json one = Json::parse(R"([{"role": "user", "content": "  hi  "}])");
    CHECK(format_builtin("chatml", one, false) == "<|im_start|>user\n  hi  <|im_end|>\n");
    CHECK(format_builtin("llama3", one, false) == "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>");
    CHECK(format_builtin("gemma", one, false) == "<start_of_turn>user\nhi<end_of_turn>\n");
    const Json parts = Json::parse(
        R"([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}])");
    // Text parts are joined with a new line, as llama-server joins them.
    CHECK(format_builtin("chatml", parts, false) == "<|im_start|>user\na\nb<|im_end|>\n");
}

// Expected prompts are llama-server's --no-jinja /apply-template output for the same messages.
TEST_CASE("newer built-in formats match llama-server without a system turn or a generation prompt",
          "[chat][builtin]") {
    const std::map<std::string, std::string> no_system = {
        {"bailing-think",
         "<role>HUMAN</role>U1<role>ASSISTANT</role>A1<role>HUMAN</role>U2<role>ASSISTANT</role><think>"},
        {"bailing2",
         "<role>SYSTEM</role>detailed thinking "
         "off<|role_end|><role>HUMAN</role>U1<|role_end|><role>ASSISTANT</role>A1<|role_end|><role>HUMAN</"
         "role>U2<|role_end|><role>ASSISTANT</role>"},
        {"deepseek-ocr", "U1A1U2"},
        {"exaone-moe",
         "<|user|>\nU1<|endofturn|>\n<|assistant|>\nA1<|endofturn|>\n<|user|>\nU2<|endofturn|>\n<|assistant|>"
         "\n"},
        {"gpt-oss",
         "<|start|>user<|message|>U1<|end|><|start|>assistant<|message|>A1<|return|><|start|>user<|message|>"
         "U2<|end|><|start|>assistant"},
        {"granite-4.0",
         "<|start_of_role|>user<|end_of_role|>U1<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>A1<"
         "|end_of_text|>\n<|start_of_role|>user<|end_of_role|>U2<|end_of_text|>\n<|start_of_role|>assistant<|"
         "end_of_role|>"},
        {"granite-4.1",
         "<|start_of_role|>user<|end_of_role|>U1<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>A1<"
         "|end_of_text|>\n<|start_of_role|>user<|end_of_role|>U2<|end_of_text|>\n<|start_of_role|>assistant<|"
         "end_of_role|>"},
        {"grok-2",
         "Human: U1<|separator|>\n\nAssistant: A1<|separator|>\n\nHuman: U2<|separator|>\n\nAssistant:"},
        {"hunyuan-dense",
         "<｜hy_User｜>U1<｜hy_Assistant｜><｜hy_Assistant｜>A1<｜hy_place▁holder▁no▁2｜><｜hy_User｜>U2<"
         "｜hy_Assistant｜>"},
        {"hunyuan-vl", "<｜hy_begin▁of▁sentence｜>U1<｜hy_User｜>A1<｜hy_Assistant｜>U2<｜hy_User｜>"},
        {"pangu-embedded",
         "[unused9]系统：[unused10][unused9]用户：U1[unused10][unused9]助手：A1[unused10][unused9]用户：U2["
         "unused10][unused9]助手："},
        {"seed_oss",
         "<seed:bos>user\nU1<seed:eos><seed:bos>assistant\nA1<seed:eos><seed:bos>user\nU2<seed:eos><seed:bos>"
         "assistant\n"},
        {"solar-open",
         "<|begin|>user<|content|>U1<|end|><|begin|>assistant<|content|>A1<|end|><|begin|>user<|content|>U2<|"
         "end|><|begin|>assistant"},
    };
    for (const auto& [name, text] : no_system) {
        INFO("format: " << name);
        CHECK(format_builtin(name, without_system(short_conversation()), true) == text);
    }
    const std::map<std::string, std::string> no_generation_prompt = {
        {"bailing-think",
         "<role>SYSTEM</role>S<role>HUMAN</role>U1<role>ASSISTANT</role>A1<role>HUMAN</role>U2"},
        {"bailing2",
         "<role>SYSTEM</role>S<|role_end|><role>HUMAN</role>U1<|role_end|><role>ASSISTANT</"
         "role>A1<|role_end|><role>HUMAN</role>U2<|role_end|>"},
        {"deepseek-ocr", "SU1A1U2"},
        {"exaone-moe",
         "<|system|>\nS<|endofturn|>\n<|user|>\nU1<|endofturn|>\n<|assistant|>\nA1<|endofturn|>\n<|user|>"
         "\nU2<|endofturn|>\n"},
        {"gpt-oss",
         "<|start|>system<|message|>S<|end|><|start|>user<|message|>U1<|end|><|start|>assistant<|message|>A1<"
         "|return|><|start|>user<|message|>U2<|end|>"},
        {"granite-4.0",
         "<|start_of_role|>system<|end_of_role|>S<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>U1<|"
         "end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>A1<|end_of_text|>\n<|start_of_role|>user<|"
         "end_of_role|>U2<|end_of_text|>\n"},
        {"granite-4.1",
         "<|start_of_role|>system<|end_of_role|>S<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>U1<|"
         "end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>A1<|end_of_text|>\n<|start_of_role|>user<|"
         "end_of_role|>U2<|end_of_text|>\n"},
        {"grok-2",
         "System: S<|separator|>\n\nHuman: U1<|separator|>\n\nAssistant: A1<|separator|>\n\nHuman: "
         "U2<|separator|>\n\n"},
        {"hunyuan-dense",
         "S<｜hy_place▁holder▁no▁3｜><｜hy_User｜>U1<｜hy_Assistant｜><｜hy_Assistant｜>A1<｜hy_"
         "place▁holder▁no▁2｜><｜hy_User｜>U2<｜hy_Assistant｜>"},
        {"hunyuan-vl",
         "<｜hy_begin▁of▁sentence｜>S<｜hy_place▁holder▁no▁3｜>U1<｜hy_User｜>A1<｜hy_Assistant｜>U2<｜hy_"
         "User｜>"},
        {"pangu-embedded",
         "[unused9]系统：S[unused10][unused9]用户：U1[unused10][unused9]助手：A1[unused10][unused9]用户：U2["
         "unused10]"},
        {"seed_oss",
         "<seed:bos>system\nS<seed:eos><seed:bos>user\nU1<seed:eos><seed:bos>assistant\nA1<seed:eos><seed:"
         "bos>user\nU2<seed:eos>"},
        {"solar-open",
         "<|begin|>system<|content|>S<|end|><|begin|>user<|content|>U1<|end|><|begin|>assistant<|content|>A1<"
         "|end|><|begin|>user<|content|>U2<|end|>"},
    };
    for (const auto& [name, text] : no_generation_prompt) {
        INFO("format: " << name);
        CHECK(format_builtin(name, short_conversation(), false) == text);
    }
}

TEST_CASE("newer built-in formats trim, drop and rename turns as llama-server does", "[chat][builtin]") {
    // Padded text: Grok 2 trims system and user text, Seed-OSS only replies, EXAONE MoE everything.
    const Json padded =
        Json::parse(R"([{"role": "system", "content": " S "}, {"role": "user", "content": " U1 "},
                                        {"role": "assistant", "content": " A1 "}, {"role": "user", "content": " U2 "}])");
    const std::map<std::string, std::string> trimmed = {
        {"exaone-moe",
         "<|system|>\nS<|endofturn|>\n<|user|>\nU1<|endofturn|>\n<|assistant|>\nA1<|endofturn|>\n<|user|>"
         "\nU2<|endofturn|>\n<|assistant|>\n"},
        {"gpt-oss",
         "<|start|>system<|message|> S <|end|><|start|>user<|message|> U1 "
         "<|end|><|start|>assistant<|message|> A1 <|return|><|start|>user<|message|> U2 "
         "<|end|><|start|>assistant"},
        {"grok-2",
         "System: S<|separator|>\n\nHuman: U1<|separator|>\n\nAssistant:  A1 <|separator|>\n\nHuman: "
         "U2<|separator|>\n\nAssistant:"},
        {"seed_oss",
         "<seed:bos>system\n S <seed:eos><seed:bos>user\n U1 "
         "<seed:eos><seed:bos>assistant\nA1<seed:eos><seed:bos>user\n U2 <seed:eos><seed:bos>assistant\n"},
    };
    for (const auto& [name, text] : trimmed) {
        INFO("format: " << name);
        CHECK(format_builtin(name, padded, true) == text);
    }
    // Roles beyond system/user/assistant: kept, renamed or dropped per format.
    const Json roles =
        Json::parse(R"([{"role": "user", "content": "U1"}, {"role": "developer", "content": "D1"},
                                       {"role": "function", "content": "F1"},
                                       {"role": "assistant_tool_call", "content": "C1"},
                                       {"role": "tool", "content": "T1"}, {"role": "user", "content": "U2"}])");
    const std::map<std::string, std::string> by_role = {
        {"bailing2",
         "<role>SYSTEM</role>detailed thinking "
         "off<|role_end|><role>HUMAN</role>U1<|role_end|><role>DEVELOPER</role>D1<|role_end|><role>FUNCTION</"
         "role>F1<|role_end|><role>ASSISTANT_TOOL_CALL</role>C1<|role_end|><role>TOOL</"
         "role>T1<|role_end|><role>HUMAN</role>U2<|role_end|><role>ASSISTANT</role>"},
        {"deepseek-ocr", "U1D1F1C1T1U2"},
        {"exaone-moe",
         "<|user|>\nU1<|endofturn|>\n<|tool|>\nT1<|endofturn|>\n<|user|>\nU2<|endofturn|>\n<|assistant|>\n"},
        {"granite-4.0",
         "<|start_of_role|>user<|end_of_role|>U1<|end_of_text|>\n<|start_of_role|>developer<|end_of_role|>D1<"
         "|end_of_text|>\n<|start_of_role|>function<|end_of_role|>F1<|end_of_text|>\n<|start_of_role|>"
         "assistant<|end_of_role|><|tool_call|>C1<|end_of_text|>\n<|start_of_role|>tool<|end_of_role|>T1<|"
         "end_of_text|>\n<|start_of_role|>user<|end_of_role|>U2<|end_of_text|>\n<|start_of_role|>assistant<|"
         "end_of_role|>"},
        {"grok-2", "Human: U1<|separator|>\n\nHuman: U2<|separator|>\n\nAssistant:"},
        {"hunyuan-vl", "<｜hy_begin▁of▁sentence｜>U1<｜hy_User｜>U2<｜hy_User｜>"},
        {"pangu-embedded",
         "[unused9]系统：[unused10][unused9]用户：U1[unused10][unused9]方法：F1[unused10][unused9]工具：T1["
         "unused10][unused9]用户：U2[unused10][unused9]助手："},
    };
    for (const auto& [name, text] : by_role) {
        INFO("format: " << name);
        CHECK(format_builtin(name, roles, true) == text);
    }
    // A system turn that does not come first: Hunyuan drops it, Ling 2.0 still adds its default.
    const Json late_system =
        Json::parse(R"([{"role": "user", "content": "U1"}, {"role": "system", "content": "S2"},
                                             {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}])");
    const std::map<std::string, std::string> late = {
        {"bailing2",
         "<role>SYSTEM</role>detailed thinking "
         "off<|role_end|><role>HUMAN</role>U1<|role_end|><role>SYSTEM</role>S2<|role_end|><role>ASSISTANT</"
         "role>A1<|role_end|><role>HUMAN</role>U2<|role_end|><role>ASSISTANT</role>"},
        {"hunyuan-dense",
         "<｜hy_User｜>U1<｜hy_Assistant｜><｜hy_Assistant｜>A1<｜hy_place▁holder▁no▁2｜><｜hy_User｜>U2<"
         "｜hy_Assistant｜>"},
        {"hunyuan-vl", "<｜hy_begin▁of▁sentence｜>U1<｜hy_User｜>A1<｜hy_Assistant｜>U2<｜hy_User｜>"},
        {"pangu-embedded",
         "[unused9]系统：[unused10][unused9]用户：U1[unused10][unused9]系统：S2[unused10][unused9]助手：A1["
         "unused10][unused9]用户：U2[unused10][unused9]助手："},
    };
    for (const auto& [name, text] : late) {
        INFO("format: " << name);
        CHECK(format_builtin(name, late_system, true) == text);
    }
}

TEST_CASE("built-in formats match the model's Jinja template byte for byte", "[chat][builtin][jinja]") {
    struct Pair {
        const char* file;
        const char* format;
        bool with_system;
        bool generation_prompt;
    };
    const Pair pairs[] = {
        {"Qwen-Qwen2.5-7B-Instruct.jinja", "chatml", true, true},
        {"Qwen-Qwen2.5-7B-Instruct.jinja", "chatml", true, false},
        {"Qwen-Qwen3-0.6B.jinja", "chatml", false, true},
        {"microsoft-Phi-3.5-mini-instruct.jinja", "phi3", true, true},
        {"google-gemma-2-2b-it.jinja", "gemma", true, true},
        {"google-gemma-2-2b-it.jinja", "gemma", false, false},
        {"mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-v3-tekken", false, true},
        {"llama-cpp-rwkv-world.jinja", "rwkv-world", true, true},
        {"ibm-granite-granite-4.1.jinja", "granite-4.1", false, true},
        {"ibm-granite-granite-4.0.jinja", "granite-4.0", true, true},
        {"ByteDance-Seed-OSS.jinja", "seed_oss", true, true},
        {"Kimi-K2-Instruct.jinja", "kimi-k2", true, true},
    };
    for (const auto& p : pairs) {
        INFO(p.file << " vs " << p.format << " system=" << p.with_system << " gen=" << p.generation_prompt);
        Json messages = chat_test::basic_conversation();
        if (!p.with_system) messages.erase(0);
        // BOS is the tokenizer's job in the built-in formats, so the template gets an empty one.
        const ChatTemplate tmpl(chat_test::read_template(p.file), "", "</s>");
        ChatInputs in;
        in.messages = messages;
        in.add_generation_prompt = p.generation_prompt;
        CHECK(tmpl.apply(in) == format_builtin(p.format, messages, p.generation_prompt));
    }
}

TEST_CASE("detection maps shared templates to their built-in format", "[chat][builtin][detect]") {
    const std::map<std::string, std::string> expected = {
        {"Qwen-Qwen2.5-7B-Instruct.jinja", "chatml"},
        {"Qwen-Qwen3-0.6B.jinja", "chatml"},
        {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "chatml"},
        {"meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3"},
        {"meta-llama-Llama-3.3-70B-Instruct.jinja", "llama3"},
        {"mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-v3-tekken"},
        {"Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistral-v7"},
        {"google-gemma-2-2b-it.jinja", "gemma"},
        {"microsoft-Phi-3.5-mini-instruct.jinja", "phi3"},
        {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek3"},
        {"deepseek-ai-DeepSeek-V3.1.jinja", "deepseek3"},
        {"CohereForAI-c4ai-command-r-plus-tool_use.jinja", "command-r"},
        {"GLM-4.6.jinja", "chatglm4"},
        {"ibm-granite-granite-3.3-2B-Instruct.jinja", "granite"},
        {"ibm-granite-granite-4.0.jinja", "granite-4.0"},
        {"ibm-granite-granite-4.1.jinja", "granite-4.1"},
        {"ByteDance-Seed-OSS.jinja", "seed_oss"},
        {"upstage-Solar-Open-100B.jinja", "solar-open"},
        {"llama-cpp-rwkv-world.jinja", "rwkv-world"},
        {"moonshotai-Kimi-K2.jinja", "kimi-k2"},
        {"openai-gpt-oss-120b.jinja", "gpt-oss"},
        {"google-gemma-4-31B-it.jinja", "jinja-only"},
    };
    for (const auto& [file, format] : expected) {
        INFO(file);
        CHECK(detect_builtin_format(chat_test::read_template(file)) == format);
    }
}

TEST_CASE("detection of families by their markers", "[chat][builtin][detect]") {
    CHECK(detect_builtin_format("") == "chatml");
    CHECK(detect_builtin_format("vicuna") == "vicuna");  // a format name is taken as is
    CHECK(detect_builtin_format("{{ '<|im_start|>' + m + '<|im_sep|>' }}") == "phi4");
    CHECK(detect_builtin_format("{{ '[INST] ' + content + ' [/INST]' }}") == "llama2");
    CHECK(detect_builtin_format("[INST] <<SYS>>\n{{ content.strip() }}") == "llama2-sys-strip");
    CHECK(detect_builtin_format("{{ bos_token + '[INST]' }}<<SYS>>") == "llama2-sys-bos");
    CHECK(detect_builtin_format("{{ ' [INST] ' + system_message }}") == "mistral-v1");
    CHECK(detect_builtin_format("[AVAILABLE_TOOLS]{{ \"[INST]\" }}") == "mistral-v3-tekken");
    CHECK(detect_builtin_format("[AVAILABLE_TOOLS][INST]") == "mistral-v3");
    CHECK(detect_builtin_format("<|user|>{{ x }}<|endoftext|>") == "zephyr");
    CHECK(detect_builtin_format("<|user|><|assistant|></s>") == "falcon3");
    CHECK(detect_builtin_format("{{ bos_token + message['role'] }}") == "monarch");
    CHECK(detect_builtin_format("USER: {{ a }} ASSISTANT: ") == "vicuna");
    CHECK(detect_builtin_format("SYSTEM: USER: ASSISTANT: ") == "vicuna-orca");
    CHECK(detect_builtin_format("### Instruction:\n<|EOT|>") == "deepseek");
    CHECK(detect_builtin_format("{{ 'Assistant: ' + message['content'] + eos_token }}") == "deepseek2");
    CHECK(detect_builtin_format("GPT4 Correct User") == "openchat");
    CHECK(detect_builtin_format("[|system|][|assistant|][|endofturn|]") == "exaone3");
    CHECK(detect_builtin_format("<|role_start|>") == "megrez");
    CHECK(detect_builtin_format("<role>ASSISTANT</role>{{ \"HUMAN\" }}<think>") == "bailing-think");
    CHECK(detect_builtin_format("<role>ASSISTANT</role><role>HUMAN</role><|role_end|>") == "bailing2");
    CHECK(detect_builtin_format("<|start|>{{ role }}<|channel|>") == "gpt-oss");
    CHECK(detect_builtin_format("<｜hy_begin▁of▁sentence｜><｜hy_Assistant｜>") == "hunyuan-vl");
    CHECK(detect_builtin_format("<｜hy_Assistant｜><｜hy_place▁holder▁no▁3｜>") == "hunyuan-dense");
    CHECK(detect_builtin_format("{{ 'Assistant: '  + message['content'] + '<|separator|>' }}") == "grok-2");
    CHECK(detect_builtin_format("[unused9]系统：[unused10]") == "pangu-embedded");
    CHECK(detect_builtin_format("<|begin|>{{ role }}<|content|>{{ content }}<|end|>") == "solar-open");
    CHECK(detect_builtin_format("{{ '<|start_of_role|>' }}<tools>") == "granite-4.1");
    CHECK(detect_builtin_format("{{ messages }}") == kJinjaOnly);
}
