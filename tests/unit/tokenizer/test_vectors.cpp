// Conformance with llama.cpp's tokenizer test vectors (shared/models/vocab/*.gguf.{inp,out}).
#include <catch2/catch.hpp>
#include <cstdio>

#include "tok_test_util.h"

namespace {

void check_vectors(const std::string& name) {
    const std::string base = tok_test::shared_path("models/vocab/ggml-vocab-" + name + ".gguf");
    if (!tok_test::file_exists(base)) {
        WARN("vocabulary " << name << " is not present; skipped");
        return;
    }
    const auto& vocab = tok_test::vocab("models/vocab/ggml-vocab-" + name + ".gguf");
    const auto cases = tok_test::read_vectors(base);
    REQUIRE(!cases.empty());
    size_t passed = 0;
    for (const auto& c : cases) {
        const auto got = vocab.tokenize(c.text, /*add_special=*/false, /*parse_special=*/false);
        if (got == c.ids) {
            ++passed;
        } else {
            UNSCOPED_INFO("text '" << c.text << "'\n  expected " << tok_test::show(c.ids) << "\n  got      "
                                   << tok_test::show(got));
        }
    }
    std::printf("tokenizer vectors %-16s %zu/%zu strings pass\n", name.c_str(), passed, cases.size());
    CHECK(passed == cases.size());
}

}  // namespace

TEST_CASE("vectors: llama-spm (SentencePiece)", "[tokenizer][vectors]") {
    check_vectors("llama-spm");
}
TEST_CASE("vectors: phi-3 (SentencePiece)", "[tokenizer][vectors]") {
    check_vectors("phi-3");
}
TEST_CASE("vectors: bert-bge (WordPiece)", "[tokenizer][vectors]") {
    check_vectors("bert-bge");
}
TEST_CASE("vectors: gpt-2", "[tokenizer][vectors]") {
    check_vectors("gpt-2");
}
TEST_CASE("vectors: falcon", "[tokenizer][vectors]") {
    check_vectors("falcon");
}
TEST_CASE("vectors: mpt", "[tokenizer][vectors]") {
    check_vectors("mpt");
}
TEST_CASE("vectors: starcoder", "[tokenizer][vectors]") {
    check_vectors("starcoder");
}
TEST_CASE("vectors: refact", "[tokenizer][vectors]") {
    check_vectors("refact");
}
TEST_CASE("vectors: deepseek-llm", "[tokenizer][vectors]") {
    check_vectors("deepseek-llm");
}
TEST_CASE("vectors: deepseek-coder", "[tokenizer][vectors]") {
    check_vectors("deepseek-coder");
}
// Only the vectors of these are shared; they run if their vocabulary appears.
TEST_CASE("vectors: llama-bpe", "[tokenizer][vectors]") {
    check_vectors("llama-bpe");
}
TEST_CASE("vectors: qwen2", "[tokenizer][vectors]") {
    check_vectors("qwen2");
}
TEST_CASE("vectors: command-r", "[tokenizer][vectors]") {
    check_vectors("command-r");
}
