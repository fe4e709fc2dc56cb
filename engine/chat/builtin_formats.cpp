// One row per format: its name and a short function that lays out the turns. Adding a format
// means adding a function and a row.
#include "engine/chat/builtin_formats.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace engine::chat {

namespace {

struct Turn {
    std::string role;
    std::string content;
};
using Turns = std::vector<Turn>;
using FormatFn = std::string (*)(const Turns& turns, bool add_generation_prompt);

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::string chatml(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) out += "<|im_start|>" + t.role + "\n" + t.content + "<|im_end|>\n";
    if (gen) out += "<|im_start|>assistant\n";
    return out;
}

// Llama 2: [INST] turns, optional <<SYS>> block, optional BOS before later turns, optional trim.
std::string llama2_common(const Turns& turns, bool system_block, bool bos_inside, bool strip) {
    std::string out = "[INST] ";
    bool inside_turn = true;  // the first [INST] is already open; the BOS is the tokenizer's
    for (const auto& t : turns) {
        const std::string content = strip ? trim(t.content) : t.content;
        if (!inside_turn) {
            inside_turn = true;
            out += bos_inside ? "<s>[INST] " : "[INST] ";
        }
        if (t.role == "system") {
            out += system_block ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
        } else if (t.role == "user") {
            out += content + " [/INST]";
        } else {
            out += content + "</s>";
            inside_turn = false;
        }
    }
    return out;
}

std::string llama2(const Turns& t, bool) {
    return llama2_common(t, false, false, false);
}
std::string llama2_sys(const Turns& t, bool) {
    return llama2_common(t, true, false, false);
}
std::string llama2_sys_bos(const Turns& t, bool) {
    return llama2_common(t, true, true, false);
}
std::string llama2_sys_strip(const Turns& t, bool) {
    return llama2_common(t, true, false, true);
}

// Mistral v1/v3/v3-tekken differ only in the spaces around [INST] and in trimming replies.
std::string mistral_common(const Turns& turns, const std::string& lead, const std::string& trail,
                           bool trim_reply) {
    std::string out;
    bool inside_turn = false;
    for (const auto& t : turns) {
        if (!inside_turn) {
            out += lead + "[INST]" + trail;
            inside_turn = true;
        }
        if (t.role == "system") {
            out += t.content + "\n\n";
        } else if (t.role == "user") {
            out += t.content + lead + "[/INST]";
        } else {
            out += trail + (trim_reply ? trim(t.content) : t.content) + "</s>";
            inside_turn = false;
        }
    }
    return out;
}

std::string mistral_v1(const Turns& t, bool) {
    return mistral_common(t, " ", " ", false);
}
std::string mistral_v3(const Turns& t, bool) {
    return mistral_common(t, "", " ", true);
}
std::string mistral_v3_tekken(const Turns& t, bool) {
    return mistral_common(t, "", "", false);
}

std::string mistral_v7_common(const Turns& turns, const std::string& sp) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += "[SYSTEM_PROMPT]" + sp + t.content + "[/SYSTEM_PROMPT]";
        } else if (t.role == "user") {
            out += "[INST]" + sp + t.content + "[/INST]";
        } else {
            out += sp + t.content + "</s>";
        }
    }
    return out;
}

std::string mistral_v7(const Turns& t, bool) {
    return mistral_v7_common(t, " ");
}
std::string mistral_v7_tekken(const Turns& t, bool) {
    return mistral_v7_common(t, "");
}

std::string phi3(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) out += "<|" + t.role + "|>\n" + t.content + "<|end|>\n";
    if (gen) out += "<|assistant|>\n";
    return out;
}

std::string phi4(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) out += "<|im_start|>" + t.role + "<|im_sep|>" + t.content + "<|im_end|>";
    if (gen) out += "<|im_start|>assistant<|im_sep|>";
    return out;
}

std::string falcon3(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) out += "<|" + t.role + "|>\n" + t.content + "\n";
    if (gen) out += "<|assistant|>\n";
    return out;
}

std::string zephyr(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) out += "<|" + t.role + "|>\n" + t.content + "<|endoftext|>\n";
    if (gen) out += "<|assistant|>\n";
    return out;
}

std::string monarch(const Turns& turns, bool gen) {
    std::string out;
    for (size_t i = 0; i < turns.size(); ++i) {
        out += (i == 0 ? "" : "<s>") + turns[i].role + "\n" + turns[i].content + "</s>\n";
    }
    if (gen) out += "<s>assistant\n";
    return out;
}

// Gemma has no system role: the system text opens the next user turn.
std::string gemma(const Turns& turns, bool gen) {
    std::string out, system;
    for (const auto& t : turns) {
        if (t.role == "system") {
            system += trim(t.content);
            continue;
        }
        const std::string role = t.role == "assistant" ? "model" : t.role;
        out += "<start_of_turn>" + role + "\n";
        if (!system.empty() && role != "model") {
            out += system + "\n\n";
            system.clear();
        }
        out += trim(t.content) + "<end_of_turn>\n";
    }
    if (gen) out += "<start_of_turn>model\n";
    return out;
}

std::string orion(const Turns& turns, bool) {
    std::string out, system;
    for (const auto& t : turns) {
        if (t.role == "system") {
            system += t.content;
        } else if (t.role == "user") {
            out += "Human: ";
            if (!system.empty()) {
                out += system + "\n\n";
                system.clear();
            }
            out += t.content + "\n\nAssistant: </s>";
        } else {
            out += t.content + "</s>";
        }
    }
    return out;
}

std::string openchat(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += t.content + "<|end_of_turn|>";
        } else {
            std::string role = t.role;
            if (!role.empty()) role[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
            out += "GPT4 Correct " + role + ": " + t.content + "<|end_of_turn|>";
        }
    }
    if (gen) out += "GPT4 Correct Assistant:";
    return out;
}

std::string vicuna_common(const Turns& turns, bool gen, bool orca) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += orca ? "SYSTEM: " + t.content + "\n" : t.content + "\n\n";
        } else if (t.role == "user") {
            out += "USER: " + t.content + "\n";
        } else if (t.role == "assistant") {
            out += "ASSISTANT: " + t.content + "</s>\n";
        }
    }
    if (gen) out += "ASSISTANT:";
    return out;
}

std::string vicuna(const Turns& t, bool gen) {
    return vicuna_common(t, gen, false);
}
std::string vicuna_orca(const Turns& t, bool gen) {
    return vicuna_common(t, gen, true);
}

std::string deepseek(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += t.content;
        } else if (t.role == "user") {
            out += "### Instruction:\n" + t.content + "\n";
        } else if (t.role == "assistant") {
            out += "### Response:\n" + t.content + "\n<|EOT|>\n";
        }
    }
    if (gen) out += "### Response:\n";
    return out;
}

std::string deepseek2(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += t.content + "\n\n";
        } else if (t.role == "user") {
            out += "User: " + t.content + "\n\n";
        } else if (t.role == "assistant") {
            out += "Assistant: " + t.content + "<｜end▁of▁sentence｜>";
        }
    }
    if (gen) out += "Assistant:";
    return out;
}

std::string deepseek3(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += t.content + "\n\n";
        } else if (t.role == "user") {
            out += "<｜User｜>" + t.content;
        } else if (t.role == "assistant") {
            out += "<｜Assistant｜>" + t.content + "<｜end▁of▁sentence｜>";
        }
    }
    if (gen) out += "<｜Assistant｜>";
    return out;
}

std::string command_r(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        const char* token = t.role == "system"      ? "<|SYSTEM_TOKEN|>"
                            : t.role == "user"      ? "<|USER_TOKEN|>"
                            : t.role == "assistant" ? "<|CHATBOT_TOKEN|>"
                                                    : nullptr;
        if (token)
            out += std::string("<|START_OF_TURN_TOKEN|>") + token + trim(t.content) + "<|END_OF_TURN_TOKEN|>";
    }
    if (gen) out += "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>";
    return out;
}

std::string llama3(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns)
        out += "<|start_header_id|>" + t.role + "<|end_header_id|>\n\n" + trim(t.content) + "<|eot_id|>";
    if (gen) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

std::string llama4(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns)
        out += "<|header_start|>" + t.role + "<|header_end|>\n\n" + trim(t.content) + "<|eot|>";
    if (gen) out += "<|header_start|>assistant<|header_end|>\n\n";
    return out;
}

std::string chatglm3(const Turns& turns, bool gen) {
    std::string out = "[gMASK]sop";
    for (const auto& t : turns) out += "<|" + t.role + "|>\n " + t.content;
    if (gen) out += "<|assistant|>";
    return out;
}

std::string chatglm4(const Turns& turns, bool gen) {
    std::string out = "[gMASK]<sop>";
    for (const auto& t : turns) out += "<|" + t.role + "|>\n" + t.content;
    if (gen) out += "<|assistant|>\n";
    return out;
}

std::string glmedge(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) out += "<|" + t.role + "|>\n" + t.content;
    if (gen) out += "<|assistant|>";
    return out;
}

std::string minicpm(const Turns& turns, bool) {
    std::string out;
    for (const auto& t : turns)
        out += t.role == "user" ? "<用户>" + trim(t.content) + "<AI>" : trim(t.content);
    return out;
}

std::string exaone_common(const Turns& turns, bool gen, bool tool_role) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += "[|system|]" + trim(t.content) + "[|endofturn|]\n";
        } else if (t.role == "user") {
            out += "[|user|]" + trim(t.content) + "\n";
        } else if (t.role == "assistant") {
            out += "[|assistant|]" + trim(t.content) + "[|endofturn|]\n";
        } else if (tool_role && t.role == "tool") {
            out += "[|tool|]" + trim(t.content) + "[|endofturn|]\n";
        }
    }
    if (gen) out += "[|assistant|]";
    return out;
}

std::string exaone3(const Turns& t, bool gen) {
    return exaone_common(t, gen, false);
}
std::string exaone4(const Turns& t, bool gen) {
    return exaone_common(t, gen, true);
}

// RWKV World ends turns with "\n\n" (its EOT token).
std::string rwkv_world(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += "System: " + trim(t.content) + "\n\n";
        } else if (t.role == "user") {
            out += "User: " + trim(t.content) + "\n\n";
        } else if (t.role == "assistant") {
            out += "Assistant: " + trim(t.content) + "\n\n";
        }
    }
    if (gen) out += "Assistant:";
    return out;
}

// Granite 3.x keeps the assistant_tool_call role name; Granite 4 writes it as an assistant turn.
std::string granite_common(const Turns& turns, bool gen, bool tool_call_as_assistant) {
    std::string out;
    for (const auto& t : turns) {
        const bool tool_call = t.role == "assistant_tool_call";
        const std::string role = tool_call && tool_call_as_assistant ? "assistant" : t.role;
        out += "<|start_of_role|>" + role + "<|end_of_role|>";
        if (tool_call) out += "<|tool_call|>";
        out += t.content + "<|end_of_text|>\n";
    }
    if (gen) out += "<|start_of_role|>assistant<|end_of_role|>";
    return out;
}

std::string granite(const Turns& t, bool gen) {
    return granite_common(t, gen, false);
}
std::string granite4(const Turns& t, bool gen) {
    return granite_common(t, gen, true);
}

std::string gigachat(const Turns& turns, bool gen) {
    const bool has_system = !turns.empty() && turns[0].role == "system";
    std::string out = has_system ? "<s>" + turns[0].content + "<|message_sep|>" : "<s>";
    for (size_t i = has_system ? 1 : 0; i < turns.size(); ++i) {
        if (turns[i].role == "user") {
            out += "user<|role_sep|>" + turns[i].content +
                   "<|message_sep|>available functions<|role_sep|>[]<|message_sep|>";
        } else if (turns[i].role == "assistant") {
            out += "assistant<|role_sep|>" + turns[i].content + "<|message_sep|>";
        }
    }
    if (gen) out += "assistant<|role_sep|>";
    return out;
}

std::string megrez(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns)
        out += "<|role_start|>" + t.role + "<|role_end|>" + t.content + "<|turn_end|>";
    if (gen) out += "<|role_start|>assistant<|role_end|>";
    return out;
}

std::string yandex(const Turns& turns, bool gen) {
    std::string out = "<s>";
    for (const auto& t : turns) {
        if (t.role == "user") {
            out += " Пользователь: " + t.content + "\n\n";
        } else if (t.role == "assistant") {
            out += " Ассистент: " + t.content + "\n\n";
        }
    }
    if (gen) out += " Ассистент:[SEP]";
    return out;
}

// Ling/Ring (Bailing) name the user HUMAN and write every role in capitals.
std::string bailing_role(const std::string& role) {
    std::string out = role == "user" ? "HUMAN" : role;
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
    return out;
}

std::string bailing_common(const Turns& turns, bool gen, const char* reply_opening) {
    std::string out;
    for (const auto& t : turns) out += "<role>" + bailing_role(t.role) + "</role>" + t.content;
    if (gen) out += std::string("<role>ASSISTANT</role>") + reply_opening;
    return out;
}

std::string bailing(const Turns& t, bool gen) {
    return bailing_common(t, gen, "");
}
std::string bailing_think(const Turns& t, bool gen) {
    return bailing_common(t, gen, "<think>");
}

// Ling 2.0 closes every turn, and a chat that does not open with a system turn gets one that
// switches thinking off.
std::string bailing2(const Turns& turns, bool gen) {
    const bool has_system = !turns.empty() && turns[0].role == "system";
    std::string out = has_system ? "" : "<role>SYSTEM</role>detailed thinking off<|role_end|>";
    for (const auto& t : turns) {
        out += "<role>" + bailing_role(t.role) + "</role>" + t.content + "<|role_end|>";
    }
    if (gen) out += "<role>ASSISTANT</role>";
    return out;
}

std::string smolvlm(const Turns& turns, bool gen) {
    std::string out = "<|im_start|>";  // SmolVLM's BOS; the turns themselves are not ChatML
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += t.content + "\n\n";
        } else if (t.role == "user") {
            out += "User: " + t.content + "<end_of_utterance>\n";
        } else {
            out += "Assistant: " + t.content + "<end_of_utterance>\n";
        }
    }
    if (gen) out += "Assistant:";
    return out;
}

std::string dots1(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += "<|system|>" + t.content + "<|endofsystem|>";
        } else if (t.role == "user") {
            out += "<|userprompt|>" + t.content + "<|endofuserprompt|>";
        } else {
            out += "<|response|>" + t.content + "<|endofresponse|>";
        }
    }
    if (gen) out += "<|response|>";
    return out;
}

std::string hunyuan_moe(const Turns& turns, bool) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += "<|startoftext|>" + t.content + "<|extra_4|>";
        } else if (t.role == "assistant") {
            out += t.content + "<|eos|>";
        } else {
            out += "<|startoftext|>" + t.content + "<|extra_0|>";
        }
    }
    return out;
}

std::string kimi_k2(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += "<|im_system|>system<|im_middle|>";
        } else if (t.role == "user") {
            out += "<|im_user|>user<|im_middle|>";
        } else if (t.role == "assistant") {
            out += "<|im_assistant|>assistant<|im_middle|>";
        } else if (t.role == "tool") {
            out += "<|im_system|>tool<|im_middle|>";
        }
        out += t.content + "<|im_end|>";
    }
    if (gen) out += "<|im_assistant|>assistant<|im_middle|>";
    return out;
}

// Hunyuan dense: only a leading system turn is kept; each user turn already opens the reply.
std::string hunyuan_dense(const Turns& turns, bool) {
    std::string out;
    for (size_t i = 0; i < turns.size(); ++i) {
        const Turn& t = turns[i];
        if (i == 0 && t.role == "system") {
            out += t.content + "<｜hy_place▁holder▁no▁3｜>";
        } else if (t.role == "user") {
            out += "<｜hy_User｜>" + t.content + "<｜hy_Assistant｜>";
        } else if (t.role == "assistant") {
            out += "<｜hy_Assistant｜>" + t.content + "<｜hy_place▁holder▁no▁2｜>";
        }
    }
    return out;
}

// Hunyuan VL writes its BOS text and closes each turn with the token of the role that wrote it.
std::string hunyuan_vl(const Turns& turns, bool) {
    std::string out = "<｜hy_begin▁of▁sentence｜>";
    for (size_t i = 0; i < turns.size(); ++i) {
        const Turn& t = turns[i];
        if (i == 0 && t.role == "system") {
            out += t.content + "<｜hy_place▁holder▁no▁3｜>";
        } else if (t.role == "user") {
            out += t.content + "<｜hy_User｜>";
        } else if (t.role == "assistant") {
            out += t.content + "<｜hy_Assistant｜>";
        }
    }
    return out;
}

// gpt-oss (Harmony): a finished reply ends with <|return|>, every other turn with <|end|>.
std::string gpt_oss(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        out += "<|start|>" + t.role + "<|message|>" + t.content;
        out += t.role == "assistant" ? "<|return|>" : "<|end|>";
    }
    if (gen) out += "<|start|>assistant";
    return out;
}

// Seed-OSS trims only the replies.
std::string seed_oss(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        const std::string content = t.role == "assistant" ? trim(t.content) : t.content;
        out += "<seed:bos>" + t.role + "\n" + content + "<seed:eos>";
    }
    if (gen) out += "<seed:bos>assistant\n";
    return out;
}

// Grok 2 trims system and user text but keeps replies as written; other roles are dropped.
std::string grok2(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system") {
            out += "System: " + trim(t.content) + "<|separator|>\n\n";
        } else if (t.role == "user") {
            out += "Human: " + trim(t.content) + "<|separator|>\n\n";
        } else if (t.role == "assistant") {
            out += "Assistant: " + t.content + "<|separator|>\n\n";
        }
    }
    if (gen) out += "Assistant:";
    return out;
}

// Pangu Embedded always opens with a system turn, an empty one when the chat has none.
std::string pangu_embedded(const Turns& turns, bool gen) {
    static const std::pair<const char*, const char*> kLabels[] = {
        {"system", "系统"}, {"user", "用户"}, {"assistant", "助手"}, {"tool", "工具"}, {"function", "方法"}};
    std::string out;
    if (!turns.empty() && turns[0].role != "system") out += "[unused9]系统：[unused10]";
    for (const auto& t : turns) {
        for (const auto& [role, label] : kLabels) {
            if (t.role == role) out += std::string("[unused9]") + label + "：" + t.content + "[unused10]";
        }
    }
    if (gen) out += "[unused9]助手：";
    return out;
}

std::string solar_open(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) out += "<|begin|>" + t.role + "<|content|>" + t.content + "<|end|>";
    if (gen) out += "<|begin|>assistant";
    return out;
}

// EXAONE MoE trims every turn and keeps only the four roles it has tokens for.
std::string exaone_moe(const Turns& turns, bool gen) {
    std::string out;
    for (const auto& t : turns) {
        if (t.role == "system" || t.role == "user" || t.role == "assistant" || t.role == "tool")
            out += "<|" + t.role + "|>\n" + trim(t.content) + "<|endofturn|>\n";
    }
    if (gen) out += "<|assistant|>\n";
    return out;
}

// DeepSeek-OCR takes the bare text: the turns are joined with no markers at all.
std::string deepseek_ocr(const Turns& turns, bool) {
    std::string out;
    for (const auto& t : turns) out += t.content;
    return out;
}

struct Format {
    const char* name;
    FormatFn fn;
};

// Sorted by name.
constexpr Format kFormats[] = {
    {"bailing", bailing},
    {"bailing-think", bailing_think},
    {"bailing2", bailing2},
    {"chatglm3", chatglm3},
    {"chatglm4", chatglm4},
    {"chatml", chatml},
    {"command-r", command_r},
    {"deepseek", deepseek},
    {"deepseek-ocr", deepseek_ocr},
    {"deepseek2", deepseek2},
    {"deepseek3", deepseek3},
    {"dots1", dots1},
    {"exaone-moe", exaone_moe},
    {"exaone3", exaone3},
    {"exaone4", exaone4},
    {"falcon3", falcon3},
    {"gemma", gemma},
    {"gigachat", gigachat},
    {"glmedge", glmedge},
    {"gpt-oss", gpt_oss},
    {"granite", granite},
    {"granite-4.0", granite4},
    {"granite-4.1", granite4},
    {"grok-2", grok2},
    {"hunyuan-dense", hunyuan_dense},
    {"hunyuan-moe", hunyuan_moe},
    {"hunyuan-vl", hunyuan_vl},
    {"kimi-k2", kimi_k2},
    {"llama2", llama2},
    {"llama2-sys", llama2_sys},
    {"llama2-sys-bos", llama2_sys_bos},
    {"llama2-sys-strip", llama2_sys_strip},
    {"llama3", llama3},
    {"llama4", llama4},
    {"megrez", megrez},
    {"minicpm", minicpm},
    {"mistral-v1", mistral_v1},
    {"mistral-v3", mistral_v3},
    {"mistral-v3-tekken", mistral_v3_tekken},
    {"mistral-v7", mistral_v7},
    {"mistral-v7-tekken", mistral_v7_tekken},
    {"monarch", monarch},
    {"openchat", openchat},
    {"orion", orion},
    {"pangu-embedded", pangu_embedded},
    {"phi3", phi3},
    {"phi4", phi4},
    {"rwkv-world", rwkv_world},
    {"seed_oss", seed_oss},
    {"smolvlm", smolvlm},
    {"solar-open", solar_open},
    {"vicuna", vicuna},
    {"vicuna-orca", vicuna_orca},
    {"yandex", yandex},
    {"zephyr", zephyr},
};

const Format* find_format(std::string_view name) {
    for (const auto& f : kFormats) {
        if (name == f.name) return &f;
    }
    return nullptr;
}

}  // namespace

std::vector<std::string> list_builtin_formats() {
    std::vector<std::string> names;
    for (const auto& f : kFormats) names.emplace_back(f.name);
    return names;
}

bool is_builtin_format(std::string_view name) {
    return find_format(name) != nullptr;
}

std::string format_builtin(const std::string& name, const std::vector<ChatMessage>& messages,
                           bool add_generation_prompt) {
    const Format* f = find_format(name);
    if (!f) throw std::invalid_argument("unknown built-in chat format '" + name + "'");
    Turns turns;
    turns.reserve(messages.size());
    for (const auto& m : messages) turns.push_back({m.role, content_text(m.content)});
    return f->fn(turns, add_generation_prompt);
}

std::string format_builtin(const std::string& name, const Json& messages, bool add_generation_prompt) {
    if (!messages.is_array()) throw std::invalid_argument("messages must be a JSON array");
    std::vector<ChatMessage> parsed;
    for (const auto& m : messages) parsed.push_back(ChatMessage::from_json(m));
    return format_builtin(name, parsed, add_generation_prompt);
}

}  // namespace engine::chat
