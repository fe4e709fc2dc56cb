// Special tokens: BOS/EOS flags, parsing of control tokens in text, strip attributes, end of generation.
#include <catch2/catch.hpp>

#include "tok_test_util.h"

using engine::Token;
using Ids = std::vector<Token>;

TEST_CASE("special: vocabulary flags and ids from metadata", "[tokenizer][special]") {
    const auto& spm = tok_test::vocab("models/vocab/ggml-vocab-llama-spm.gguf");
    CHECK(spm.type() == engine::VocabType::SPM);
    CHECK(spm.n_tokens() == 32000);
    CHECK(spm.bos() == 1);
    CHECK(spm.eos() == 2);
    CHECK(spm.unk() == 0);
    CHECK(spm.nl() == 13);  // <0x0A>
    CHECK(spm.add_bos());
    CHECK(!spm.add_eos());
    CHECK(spm.add_space_prefix());
    CHECK(spm.token_text(15043) == "\xE2\x96\x81Hello");
    CHECK(spm.token_attr(1) == engine::kAttrControl);
    CHECK(spm.token_attr(13) == engine::kAttrByte);
    CHECK(spm.token_attr(15043) == engine::kAttrNormal);
    CHECK(spm.find_token("\xE2\x96\x81Hello") == 15043);
    CHECK(spm.find_token("no such token") == engine::kNoToken);
    CHECK_THROWS_AS(spm.token_text(32000), std::out_of_range);

    const auto& gpt2 = tok_test::vocab("models/vocab/ggml-vocab-gpt-2.gguf");
    CHECK(gpt2.type() == engine::VocabType::BPE);
    CHECK(gpt2.pre_tokenizer() == "gpt-2");
    CHECK(gpt2.bos() == 50256);
    CHECK(!gpt2.add_bos());
    CHECK(gpt2.nl() == 198);
    CHECK(gpt2.clean_spaces());
    CHECK(gpt2.bpe_rank("\xC4\xA0", "t") == 0);  // the first merge: "Ġ t"
    CHECK(gpt2.bpe_rank("t", "\xC4\xA0") == -1);

    const auto& bert = tok_test::vocab("models/vocab/ggml-vocab-bert-bge.gguf");
    CHECK(bert.type() == engine::VocabType::WPM);
    CHECK(bert.bos() == 101);
    CHECK(bert.sep() == 102);
    CHECK(bert.unk() == 100);

    // A model without a pre-tokenizer key uses the default one.
    CHECK(tok_test::vocab("models/vocab/ggml-vocab-gpt-neox.gguf").pre_tokenizer() == "default");
}

TEST_CASE("special: add_special adds what the vocabulary asks for", "[tokenizer][special]") {
    const auto& spm = tok_test::vocab("models/vocab/ggml-vocab-llama-spm.gguf");
    CHECK(spm.tokenize("Hello", true) == Ids{1, 15043});
    CHECK(spm.tokenize("Hello", false) == Ids{15043});
    CHECK(spm.tokenize("", true) == Ids{1});
    CHECK(spm.tokenize("", false).empty());

    const auto& ds = tok_test::vocab("models/vocab/ggml-vocab-deepseek-llm.gguf");
    const Ids plain = ds.tokenize("Hello", false);
    Ids with = plain;
    with.insert(with.begin(), 100000);
    CHECK(ds.tokenize("Hello", true) == with);

    const auto& gpt2 = tok_test::vocab("models/vocab/ggml-vocab-gpt-2.gguf");
    CHECK(gpt2.tokenize("Hello", true) == gpt2.tokenize("Hello", false));  // no add_bos

    const auto& bert = tok_test::vocab("models/vocab/ggml-vocab-bert-bge.gguf");
    const Ids words = bert.tokenize("hello world", false);
    REQUIRE(words.size() == 2);
    CHECK(bert.tokenize("hello world", true) == Ids{101, words[0], words[1], 102});
}

TEST_CASE("special: llama.cpp's end-of-generation names are control tokens, parsed only on request",
          "[tokenizer][special]") {
    // Phi-3's GGUF marks </s> user-defined; llama.cpp makes it a control token (it is in its list of
    // end-of-generation names), so plain text "</s>" stays text (it was the EOS token here).
    const auto& phi3 = tok_test::vocab("models/vocab/ggml-vocab-phi-3.gguf");
    CHECK(phi3.tokenize("</s>", false, false) == Ids{1533, 29879, 29958});
    CHECK(phi3.tokenize("</s>", false, true) == Ids{2});
    CHECK(phi3.is_eog(2));
}

TEST_CASE("special: WordPiece strips and splits the marks and punctuation of Unicode 15.0", "[tokenizer][special]") {
    const auto& bert = tok_test::vocab("models/vocab/ggml-vocab-bert-bge.gguf");
    CHECK(bert.tokenize("x\u0CF3x", false) == bert.tokenize("xx", false));  // a mark: accent-stripped
    const Ids split = bert.tokenize("x\U00011B00x", false);                // punctuation: its own word
    REQUIRE(split.size() == 3);
    CHECK(split[1] == bert.unk());
}

TEST_CASE("special: control tokens are parsed only on request", "[tokenizer][special]") {
    const auto& gpt2 = tok_test::vocab("models/vocab/ggml-vocab-gpt-2.gguf");
    const Ids parsed = gpt2.tokenize("Hi<|endoftext|>there", false, true);
    CHECK(parsed == Ids{17250, 50256, 8117});
    const Ids literal = gpt2.tokenize("Hi<|endoftext|>there", false, false);
    CHECK(literal.size() > 3);
    CHECK(std::find(literal.begin(), literal.end(), 50256) == literal.end());
    CHECK(gpt2.detokenize(literal) == "Hi<|endoftext|>there");

    const auto& spm = tok_test::vocab("models/vocab/ggml-vocab-llama-spm.gguf");
    // After a special token the text gets the SentencePiece prefix space again.
    CHECK(spm.tokenize("<s>Hello</s>", false, true) == Ids{1, 15043, 2});
    CHECK(spm.tokenize("<s>Hello", true, true) == Ids{1, 1, 15043});
}

TEST_CASE("special: phi-3's special tokens strip the whitespace after them",
          "[tokenizer][special]") {
    const auto& phi3 = tok_test::vocab("models/vocab/ggml-vocab-phi-3.gguf");
    CHECK(phi3.eos() == 32000);
    CHECK(phi3.is_user_defined(2));  // "</s>"
    // Chat markup: each special token's rstrip attribute eats the newline after it.
    CHECK(phi3.tokenize("<|user|>\nHello<|end|>\n<|assistant|>", false, true) ==
          Ids{32010, 15043, 32007, 32001});
    // Without parse_special the control tokens are plain text; so is </s> (user-defined in the file, a
    // control token since llama.cpp 0.7.0 lists it among the end-of-generation names).
    const Ids literal = phi3.tokenize("<|user|>", false, false);
    CHECK(std::find(literal.begin(), literal.end(), 32010) == literal.end());
    const Ids plain = phi3.tokenize("Hi</s> there", false, false);
    CHECK(std::find(plain.begin(), plain.end(), 2) == plain.end());
    const Ids with_eos = phi3.tokenize("Hi</s> there", false, true);
    REQUIRE(with_eos.size() >= 2);
    CHECK(std::find(with_eos.begin(), with_eos.end(), 2) != with_eos.end());
    CHECK(with_eos.back() != 29871);  // the space after </s> was stripped, not tokenized
}

TEST_CASE("special: end-of-generation tokens", "[tokenizer][special]") {
    const auto& spm = tok_test::vocab("models/vocab/ggml-vocab-llama-spm.gguf");
    CHECK(spm.is_eog(2));
    CHECK(!spm.is_eog(1));
    CHECK(!spm.is_eog(engine::kNoToken));
    CHECK(spm.eog_tokens() == Ids{2});

    const auto& phi3 = tok_test::vocab("models/vocab/ggml-vocab-phi-3.gguf");
    CHECK(phi3.is_eog(32000));  // <|endoftext|>, the EOS
    CHECK(phi3.is_eog(32007));  // <|end|>, recognized by its text
    CHECK(phi3.eot() != engine::kNoToken);
    CHECK(!phi3.is_eog(32010));  // <|user|>

    const auto& gpt2 = tok_test::vocab("models/vocab/ggml-vocab-gpt-2.gguf");
    CHECK(gpt2.is_eog(50256));
    CHECK(gpt2.eot() == 50256);

    const auto& coder = tok_test::vocab("models/vocab/ggml-vocab-deepseek-coder.gguf");
    CHECK(coder.is_eog(32014));                  // EOS
    CHECK(coder.fim_pre() != engine::kNoToken);  // <｜fim▁begin｜>, recognized by its text
    CHECK(coder.is_control(coder.fim_pre()));
}
