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

}  // namespace

TEST_CASE("the built-in format list has the llama.cpp names", "[chat][builtin]") {
    const auto names = list_builtin_formats();
    CHECK(std::is_sorted(names.begin(), names.end()));
    for (const char* required :
         {"chatml",     "llama2",    "llama2-sys", "llama3",  "mistral-v1", "mistral-v3", "mistral-v3-tekken",
          "mistral-v7", "phi3",      "phi4",       "gemma",   "zephyr",     "vicuna",     "deepseek",
          "deepseek2",  "deepseek3", "command-r",  "monarch", "orion",      "openchat",   "falcon3",
          "chatglm4",   "granite",   "megrez",     "exaone3"}) {
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
        {"ibm-granite-granite-4.1.jinja", "granite", false, true},
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
        {"llama-cpp-rwkv-world.jinja", "rwkv-world"},
        {"moonshotai-Kimi-K2.jinja", "kimi-k2"},
        {"openai-gpt-oss-120b.jinja", "jinja-only"},
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
    CHECK(detect_builtin_format("{{ messages }}") == kJinjaOnly);
}
