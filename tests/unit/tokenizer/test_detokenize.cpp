// token_to_piece, detokenize (round trips, clean-up) and the streaming decoder.
#include <catch2/catch.hpp>

#include "engine/tokenizer/unicode.h"
#include "tok_test_util.h"

using engine::Token;
using Ids = std::vector<Token>;

namespace {

// Extra strings beyond the test vectors: code, scripts, invalid-free but unusual Unicode.
const char* const kExtra[] = {
    "def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)\n",
    "東京は日本の首都です。Ünïcödé — “quotes” and ‘apostrophes’ 🦙🚀 \t "
    "tabs\r\nCRLF",
    "   leading and trailing spaces   ",
    "I'VE DON'T we'Re 1234567 3.14159 ٣٤٥",
};

std::vector<std::string> strings_of(const std::string& name) {
    std::vector<std::string> out;
    for (const auto& c :
         tok_test::read_vectors(tok_test::shared_path("models/vocab/ggml-vocab-" + name + ".gguf")))
        out.push_back(c.text);
    for (const char* s : kExtra) out.push_back(s);
    return out;
}

std::string concat_pieces(const engine::Vocab& v, const Ids& ids) {
    std::string s;
    for (Token t : ids) s += v.token_to_piece(t);
    return s;
}

}  // namespace

TEST_CASE("detokenize: pieces restore spaces, bytes and the byte alphabet", "[tokenizer][detokenize]") {
    const auto& spm = tok_test::vocab("models/vocab/ggml-vocab-llama-spm.gguf");
    CHECK(spm.token_to_piece(15043) == " Hello");
    CHECK(spm.token_to_piece(15043, true, 1) == "Hello");  // lstrip
    CHECK(spm.token_to_piece(13) == "\n");                 // <0x0A>
    CHECK(spm.token_to_piece(243) == "\xF0");              // <0xF0>
    CHECK(spm.token_to_piece(1, true) == "<s>");
    CHECK(spm.token_to_piece(1, false) == "");
    CHECK(spm.token_to_piece(-1) == "");
    CHECK(spm.token_to_piece(32000) == "");

    const auto& gpt2 = tok_test::vocab("models/vocab/ggml-vocab-gpt-2.gguf");
    const Token world = gpt2.find_token("\xC4\xA0world");  // "Ġworld"
    REQUIRE(world != engine::kNoToken);
    CHECK(gpt2.token_to_piece(world) == " world");
    CHECK(gpt2.token_to_piece(gpt2.find_token("\xC4\x8A")) == "\n");  // "Ċ"

    const auto& bert = tok_test::vocab("models/vocab/ggml-vocab-bert-bge.gguf");
    CHECK(bert.token_to_piece(bert.find_token("\xE2\x96\x81to")) == " to");
    CHECK(bert.detokenize(bert.tokenize("Hello World!", false)) == " hello world!");
}

TEST_CASE("detokenize: lossless vocabularies round-trip every string", "[tokenizer][detokenize]") {
    // SentencePiece with byte fallback, and BPE pre-tokenizers without the clean-up step.
    for (const char* name : {"llama-spm", "phi-3", "deepseek-llm", "deepseek-coder"}) {
        const auto& v = tok_test::vocab(std::string("models/vocab/ggml-vocab-") + name + ".gguf");
        for (const auto& s : strings_of(name)) {
            INFO(name << ": '" << s << "'");
            CHECK(v.detokenize(v.tokenize(s, false)) == s);
        }
    }
    // Byte-level BPE pieces are lossless even where detokenize() cleans up spaces.
    for (const char* name : {"gpt-2", "falcon", "mpt", "starcoder", "refact"}) {
        const auto& v = tok_test::vocab(std::string("models/vocab/ggml-vocab-") + name + ".gguf");
        for (const auto& s : strings_of(name)) {
            INFO(name << ": '" << s << "'");
            CHECK(concat_pieces(v, v.tokenize(s, false)) == s);
        }
    }
    // stories260K has only 512 tokens: most characters go through byte tokens.
    const auto& tiny = tok_test::vocab("models/stories260K.gguf");
    for (const char* s : kExtra) CHECK(tiny.detokenize(tiny.tokenize(s, false)) == s);
}

TEST_CASE("detokenize: BOS, EOS and the SentencePiece prefix space", "[tokenizer][detokenize]") {
    const auto& spm = tok_test::vocab("models/vocab/ggml-vocab-llama-spm.gguf");
    CHECK(spm.detokenize(Ids{15043, 3186}) == "Hello world");
    CHECK(spm.detokenize(Ids{1, 15043}, false, true) == "<s> Hello");
    // As in llama.cpp, dropping BOS keeps the prefix space of the first word.
    CHECK(spm.detokenize(Ids{1, 15043}, true) == " Hello");
    CHECK(spm.detokenize(Ids{15043, 2}, true, true) == "Hello</s>");  // no add_eos: EOS stays
    CHECK(spm.detokenize(Ids{}) == "");
}

TEST_CASE("detokenize: clean-up of spaces for vocabularies that ask for it", "[tokenizer][detokenize]") {
    const auto& gpt2 = tok_test::vocab("models/vocab/ggml-vocab-gpt-2.gguf");
    CHECK(gpt2.detokenize(gpt2.tokenize("Hello , world ! Right ?", false)) == "Hello, world! Right?");
    CHECK(gpt2.detokenize(gpt2.tokenize("I 'm sure you 're right , it 's fine", false)) ==
          "I'm sure you're right, it's fine");
    CHECK(gpt2.detokenize(gpt2.tokenize("rock ' n ' roll", false)) == "rock'n'roll");
    // The space after a lone apostrophe is consumed, so it cannot open the next " ' ".
    CHECK(gpt2.detokenize(gpt2.tokenize("a ' ' b", false)) == "a'' b");
    CHECK(gpt2.detokenize(gpt2.tokenize("don 't", false)) == "don 't");  // 't is left alone
    const auto& ds = tok_test::vocab("models/vocab/ggml-vocab-deepseek-llm.gguf");
    CHECK(ds.detokenize(ds.tokenize("Hello , world !", false)) == "Hello , world !");
}

TEST_CASE("stream decoder: holds back a character split over byte tokens", "[tokenizer][stream]") {
    const auto& spm = tok_test::vocab("models/vocab/ggml-vocab-llama-spm.gguf");
    const Ids ids = spm.tokenize("a🦙b", false);  // the llama emoji has no token: four byte tokens
    REQUIRE(ids == Ids{263, 243, 162, 169, 156, 29890});
    engine::StreamDecoder dec(spm);
    std::vector<std::string> outs;
    for (Token t : ids) outs.push_back(dec.feed(t));
    CHECK(outs == std::vector<std::string>{" a", "", "", "", "🦙", "b"});
    CHECK(dec.pending() == 0);
    CHECK(dec.flush() == "");

    // A sequence cut short comes out, as raw bytes, only at flush().
    engine::StreamDecoder cut(spm);
    CHECK(cut.feed(243) == "");
    CHECK(cut.feed(162) == "");
    CHECK(cut.pending() == 2);
    CHECK(cut.flush() == "\xF0\x9F");
    CHECK(cut.pending() == 0);

    // Byte-level BPE tokens split characters too.
    const auto& gpt2 = tok_test::vocab("models/vocab/ggml-vocab-gpt-2.gguf");
    const std::string text = "東京は日本の首都です 🦙";
    engine::StreamDecoder bpe(gpt2);
    std::string streamed;
    for (Token t : gpt2.tokenize(text, false)) {
        const std::string part = bpe.feed(t);
        CHECK(engine::unicode::incomplete_utf8_tail(part) == 0);
        streamed += part;
    }
    streamed += bpe.flush();
    CHECK(streamed == text);

    // Control tokens stream as text only when asked.
    engine::StreamDecoder quiet(spm), loud(spm, true);
    CHECK(quiet.feed(2) == "");
    CHECK(loud.feed(2) == "</s>");
}
