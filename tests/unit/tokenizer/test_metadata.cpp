// Loading vocabularies from synthetic GGUF metadata: a small valid one, and hostile ones that must be
// refused with a clear message.
#include <catch2/catch.hpp>

#include "engine/tokenizer/vocab.h"
#include "ggml/gguf.h"

using engine::Token;
using engine::Vocab;
using engine::VocabError;
using ggml::gguf::Value;
using ggml::gguf::ValueType;
using Ids = std::vector<Token>;

namespace {

// A tiny SentencePiece vocabulary: <unk> <s> </s>, 256 byte tokens, then a few pieces.
struct SpmSpec {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int64_t> types;
    SpmSpec() {
        add("<unk>", 0, 2);
        add("<s>", 0, 3);
        add("</s>", 0, 3);
        static const char* hex = "0123456789ABCDEF";
        for (int b = 0; b < 256; ++b) add(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">", 0, 6);
        add("\xE2\x96\x81", -1, 1);  // 259 "▁"
        add("a", -2, 1);             // 260
        add("b", -2, 1);             // 261
        add("\xE2\x96\x81"
            "a",
            -1.5f, 1);        // 262 "▁a"
        add("ab", -0.5f, 1);  // 263
        add("\xE2\x96\x81"
            "ab",
            -3, 1);         // 264 "▁ab": scores lower than "ab"
        add("<x>", 0, 3);   // 265 control
        add("<x>y", 0, 3);  // 266 control, contains 265's text
    }
    void add(std::string t, float s, int64_t type) {
        tokens.push_back(std::move(t));
        scores.push_back(s);
        types.push_back(type);
    }
};

Value strings(const std::vector<std::string>& v) {
    std::vector<Value> items;
    for (const auto& s : v) items.push_back(Value::string(s));
    return Value::array(ValueType::String, std::move(items));
}
Value floats(const std::vector<float>& v) {
    std::vector<Value> items;
    for (float f : v) items.push_back(Value::f32(f));
    return Value::array(ValueType::F32, std::move(items));
}
Value ints(const std::vector<int64_t>& v) {
    std::vector<Value> items;
    for (int64_t i : v) items.push_back(Value::i32(int32_t(i)));
    return Value::array(ValueType::I32, std::move(items));
}

ggml::gguf::Writer spm_writer(const SpmSpec& s = SpmSpec()) {
    ggml::gguf::Writer w;
    w.set("general.architecture", Value::string("llama"));
    w.set("tokenizer.ggml.model", Value::string("llama"));
    w.set("tokenizer.ggml.tokens", strings(s.tokens));
    w.set("tokenizer.ggml.scores", floats(s.scores));
    w.set("tokenizer.ggml.token_type", ints(s.types));
    w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
    return w;
}

Vocab load(const ggml::gguf::Writer& w) {
    const std::vector<uint8_t> bytes = w.to_bytes();
    auto file = ggml::gguf::File::from_memory(bytes.data(), bytes.size());
    return Vocab::from_gguf(*file);
}

}  // namespace

TEST_CASE("metadata: a small synthetic SentencePiece vocabulary", "[tokenizer][metadata]") {
    const Vocab v = load(spm_writer());
    CHECK(v.n_tokens() == 267);
    CHECK(v.nl() == 3 + '\n');
    // Pairs merge by score: "ab" (-0.5) before "▁a" (-1.5); then "▁" + "ab" forms "▁ab".
    CHECK(v.tokenize("ab", false) == Ids{264});
    CHECK(v.tokenize("ba", false) == Ids{259, 261, 260});
    CHECK(v.tokenize("c", false) == Ids{259, 3 + 'c'});  // byte fallback
    CHECK(v.tokenize("a", true) == Ids{1, 262});
    // Longest special token first: "<x>y" wins over the "<x>" it contains.
    CHECK(v.tokenize("<x>y<x>", false, true) == Ids{266, 265});
    CHECK(v.detokenize(v.tokenize("ab c", false)) == "ab c");
    CHECK(v.is_eog(2));
    CHECK(!v.is_eog(1));
}

TEST_CASE("metadata: ids of -1 mean none, sentinel uint32 too", "[tokenizer][metadata]") {
    auto w = spm_writer();
    w.set("tokenizer.ggml.seperator_token_id", Value::u32(0xFFFFFFFFu));
    w.set("tokenizer.ggml.padding_token_id", Value::i32(-1));
    const Vocab v = load(w);
    CHECK(v.sep() == engine::kNoToken);
    CHECK(v.pad() == engine::kNoToken);
}

TEST_CASE("metadata: hostile or incomplete metadata is refused clearly", "[tokenizer][metadata]") {
    using Catch::Contains;
    {
        ggml::gguf::Writer w;
        w.set("general.architecture", Value::string("llama"));
        CHECK_THROWS_WITH(load(w), Contains("tokenizer.ggml.model is missing"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.tokens", Value::array(ValueType::String, {}));
        CHECK_THROWS_WITH(load(w), Contains("tokens is empty"));
    }
    {
        SpmSpec s;
        s.scores.pop_back();
        CHECK_THROWS_WITH(load(spm_writer(s)), Contains("scores has 266 entries for 267 tokens"));
    }
    {
        SpmSpec s;
        s.types.push_back(1);
        CHECK_THROWS_WITH(load(spm_writer(s)), Contains("token_type has 268 entries for 267 tokens"));
    }
    {
        SpmSpec s;
        s.types[5] = 9;
        CHECK_THROWS_WITH(load(spm_writer(s)), Contains("token_type[5] = 9"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.eos_token_id", Value::u32(267));
        CHECK_THROWS_WITH(load(w), Contains("eos_token_id = 267 is out of range") && Contains("267 tokens"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.unknown_token_id", Value::i32(-5));
        CHECK_THROWS_WITH(load(w), Contains("unknown_token_id = -5 is out of range"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.bos_token_id", Value::i32(-1));
        w.set("tokenizer.ggml.add_bos_token", Value::boolean(true));
        CHECK_THROWS_WITH(load(w), Contains("add_bos_token is true but there is no BOS"));
    }
    {
        SpmSpec s;
        s.tokens[263] = "a";
        CHECK_THROWS_WITH(load(spm_writer(s)), Contains("duplicate token 'a' at ids 260 and 263"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.model", Value::string("t5"));
        CHECK_THROWS_WITH(load(w), Contains("unsupported tokenizer model 't5'"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.model", Value::string("none"));
        CHECK_THROWS_WITH(load(w), Contains("no vocabulary"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.model", Value::string("gpt2"));
        w.set("tokenizer.ggml.pre", Value::string("no-such-pre"));
        CHECK_THROWS_WITH(load(w), Contains("unknown pre-tokenizer 'no-such-pre'"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.model", Value::string("gpt2"));
        w.set("tokenizer.ggml.pre", Value::string("gpt-2"));
        CHECK_THROWS_WITH(load(w), Contains("merges is missing"));
    }
    {
        auto w = spm_writer();
        w.set("tokenizer.ggml.tokens", ints({1, 2, 3}));
        CHECK_THROWS_AS(load(w), ggml::gguf::FormatError);  // wrong element type
    }
    CHECK_THROWS_AS(Vocab::from_file("/nonexistent/model.gguf"), std::exception);
}

// gpt-oss's vocabulary (o200k with Harmony's tokens): <|return|> and <|call|> end a reply, <|end|> only a
// message (generation goes on after it), and the framing tokens show in generated text without --special,
// as llama.cpp treats them, since the reply is parsed from them.
TEST_CASE("metadata: Harmony's tokens end generation and render as llama.cpp's", "[tokenizer][metadata]") {
    const std::vector<std::string> tokens = {
        "h",       "i",          "<|start|>", "<|channel|>",   "<|message|>",
        "<|end|>", "<|return|>", "<|call|>",  "<|constrain|>", "<|endoftext|>"};
    ggml::gguf::Writer w;
    w.set("tokenizer.ggml.model", Value::string("gpt2"));
    w.set("tokenizer.ggml.pre", Value::string("gpt-4o"));
    w.set("tokenizer.ggml.tokens", strings(tokens));
    w.set("tokenizer.ggml.token_type", ints({1, 1, 3, 3, 3, 3, 3, 3, 3, 3}));
    w.set("tokenizer.ggml.merges", strings({"h x"}));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(6));
    const Vocab v = load(w);
    CHECK(v.is_eog(6));   // <|return|>
    CHECK(v.is_eog(7));   // <|call|>
    CHECK(v.is_eog(9));   // <|endoftext|>
    CHECK(!v.is_eog(5));  // <|end|>: the reasoning message ends, the final one follows
    for (Token t : {2, 3, 4, 5, 8}) {
        INFO("token " << t);
        CHECK(!v.is_control(t));
        CHECK(v.token_to_piece(t, false) == tokens[size_t(t)]);
    }
    CHECK(v.token_to_piece(6, false).empty());  // <|return|> stays a control token
    CHECK(v.detokenize(Ids{3, 0, 1, 4, 0, 5}) == "<|channel|>hi<|message|>h<|end|>");
    CHECK(v.tokenize("<|start|>hi<|channel|>", false, true) == Ids{2, 0, 1, 3});
}

TEST_CASE("metadata: a synthetic byte-level BPE vocabulary", "[tokenizer][metadata]") {
    // Tokens in GPT-2's byte alphabet: "Ġ" is the space.
    const std::vector<std::string> tokens = {"h",  "e",    "l",     "o",         "\xC4\xA0",     "he",
                                             "ll", "hell", "hello", "\xC4\xA0h", "<|endoftext|>"};
    ggml::gguf::Writer w;
    w.set("tokenizer.ggml.model", Value::string("gpt2"));
    w.set("tokenizer.ggml.pre", Value::string("gpt-2"));
    w.set("tokenizer.ggml.tokens", strings(tokens));
    w.set("tokenizer.ggml.token_type", ints({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3}));
    w.set("tokenizer.ggml.merges", strings({"h e", "l l", "he ll", "hell o", "\xC4\xA0 h"}));
    w.set("tokenizer.ggml.bos_token_id", Value::u32(10));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(10));
    const Vocab v = load(w);
    CHECK(v.tokenize("hello", false) == Ids{8});
    // By rank: "h e", "l l", "he ll", "hell o" come before "Ġ h", which is stale by then.
    CHECK(v.tokenize("hello hello", false) == Ids{8, 4, 8});
    CHECK(v.tokenize(" h", false) == Ids{9});
    CHECK(v.tokenize("hello<|endoftext|>", false, true) == Ids{8, 10});
    CHECK(v.detokenize(Ids{8, 9, 1, 6, 3}) == "hello hello");
    CHECK(v.is_eog(10));
    CHECK(v.nl() == engine::kNoToken);  // no newline token and no pad
}
