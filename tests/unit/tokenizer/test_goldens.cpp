// The reference tokenizations recorded with the golden generations (shared/golden/*.greedy.json).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/tokenizer/unicode.h"
#include "tok_test_util.h"

namespace {

void check_golden(const std::string& golden, const std::string& model) {
    const auto doc = nlohmann::json::parse(tok_test::read_file(tok_test::shared_path("golden/" + golden)));
    const auto& vocab = tok_test::vocab("models/" + model);
    REQUIRE(doc.at("cases").size() > 0);
    for (const auto& c : doc.at("cases")) {
        const std::string prompt = c.at("prompt");
        const auto expected = c.at("prompt_tokens").get<std::vector<engine::Token>>();
        INFO(golden << ": '" << prompt << "'");
        // The server tokenizes prompts with BOS and without special-token parsing.
        CHECK(vocab.tokenize(prompt, true, false) == expected);
        // Without BOS the prefix space tokenize() added comes off again (with BOS llama.cpp keeps it).
        CHECK(vocab.detokenize(std::vector<engine::Token>(expected.begin() + 1, expected.end())) == prompt);
        // The completion text is the concatenation of the generated tokens' pieces (the JSON carries a
        // lone byte token's invalid UTF-8 as U+FFFD).
        std::string raw, text;
        for (engine::Token t : c.at("completion_tokens").get<std::vector<engine::Token>>())
            raw += vocab.token_to_piece(t, false);
        for (uint32_t cp : engine::unicode::decode_utf8(raw)) engine::unicode::append_utf8(text, cp);
        CHECK(text == c.at("completion_text").get<std::string>());
    }
}

}  // namespace

TEST_CASE("goldens: stories260K prompts", "[tokenizer][golden]") {
    const auto& vocab = tok_test::vocab("models/stories260K.gguf");
    CHECK(vocab.tokenize("Once upon a time", true) == std::vector<engine::Token>{1, 403, 407, 261, 378});
    check_golden("stories260K.greedy.json", "stories260K.gguf");
}

TEST_CASE("goldens: synth-tiny prompts (llama 32k vocabulary)", "[tokenizer][golden]") {
    for (const char* type : {"f16", "q8_0", "q4_0", "q4_k"})
        check_golden(std::string("synth-tiny-") + type + ".greedy.json",
                     std::string("synth/synth-tiny-") + type + ".gguf");
}
