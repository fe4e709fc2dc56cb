// Small synthetic tokenizer vocabularies written with our GGUF writer, for the fuzz targets that need a
// Vocab (request options) and as GGUF seed inputs (make_seeds.cpp). Nothing here comes from a real model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ggml/gguf.h"

namespace fuzz_vocab {

using ggml::gguf::Value;
using ggml::gguf::ValueType;

inline Value strings(const std::vector<std::string>& v) {
    std::vector<Value> items;
    for (const auto& s : v) items.push_back(Value::string(s));
    return Value::array(ValueType::String, std::move(items));
}

inline Value floats(const std::vector<float>& v) {
    std::vector<Value> items;
    for (float f : v) items.push_back(Value::f32(f));
    return Value::array(ValueType::F32, std::move(items));
}

inline Value ints(const std::vector<int64_t>& v) {
    std::vector<Value> items;
    for (int64_t i : v) items.push_back(Value::i32(int32_t(i)));
    return Value::array(ValueType::I32, std::move(items));
}

// SentencePiece ("llama"): <unk> <s> </s>, 256 byte tokens, a few pieces and two control tokens.
inline ggml::gguf::Writer spm() {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int64_t> types;
    auto add = [&](std::string t, float s, int64_t type) {
        tokens.push_back(std::move(t));
        scores.push_back(s);
        types.push_back(type);
    };
    add("<unk>", 0, 2);
    add("<s>", 0, 3);
    add("</s>", 0, 3);
    static const char* hex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) add(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">", 0, 6);
    const std::string sp = "\xE2\x96\x81";  // "▁"
    for (const char* piece : {"a", "b", "c", "e", "o", "t", "h", "n", "{", "}", "\"", ":", ",", " "}) {
        add(piece, -2, 1);
        add(sp + piece, -1.5f, 1);
    }
    add(sp, -1, 1);
    add("the", -0.5f, 1);
    add(sp + "the", -0.4f, 1);
    add("<|im_start|>", 0, 3);
    add("<|im_end|>", 0, 3);
    ggml::gguf::Writer w;
    w.set("general.architecture", Value::string("llama"));
    w.set("tokenizer.ggml.model", Value::string("llama"));
    w.set("tokenizer.ggml.tokens", strings(tokens));
    w.set("tokenizer.ggml.scores", floats(scores));
    w.set("tokenizer.ggml.token_type", ints(types));
    w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
    w.set("tokenizer.ggml.unknown_token_id", Value::u32(0));
    return w;
}

// The byte-level BPE alphabet: printable bytes stand for themselves, the others for U+0100 onwards.
inline std::string bpe_byte(int b) {
    int cp = b;
    if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))) {
        int n = 0;
        for (int x = 0; x < b; ++x)
            if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF))) ++n;
        cp = 256 + n;
    }
    std::string out;
    if (cp < 0x80) {
        out += char(cp);
    } else {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    }
    return out;
}

// Byte-level BPE ("gpt2", pre-tokenizer `pre`): the 256 byte tokens, a few merges, two special tokens.
inline ggml::gguf::Writer bpe(const std::string& pre = "default") {
    std::vector<std::string> tokens;
    std::vector<int64_t> types;
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(bpe_byte(b));
        types.push_back(1);
    }
    const std::string G = bpe_byte(' ');  // "Ġ"
    std::vector<std::string> merges = {"t h", "th e", G + " t", G + "t h", G + "th e",
                                       "o n", "c e",  "on ce",  "{ \"",    "\" :"};
    for (const auto& m : merges) {
        const size_t sp = m.find(' ');
        tokens.push_back(m.substr(0, sp) + m.substr(sp + 1));
        types.push_back(1);
    }
    tokens.push_back("<|endoftext|>");
    types.push_back(3);
    tokens.push_back("<tool_call>");
    types.push_back(4);
    ggml::gguf::Writer w;
    w.set("general.architecture", Value::string("qwen2"));
    w.set("tokenizer.ggml.model", Value::string("gpt2"));
    w.set("tokenizer.ggml.pre", Value::string(pre));
    w.set("tokenizer.ggml.tokens", strings(tokens));
    w.set("tokenizer.ggml.token_type", ints(types));
    w.set("tokenizer.ggml.merges", strings(merges));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(uint32_t(tokens.size() - 2)));
    return w;
}

}  // namespace fuzz_vocab
