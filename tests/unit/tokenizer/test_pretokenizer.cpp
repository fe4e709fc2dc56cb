// Pre-tokenizer splits against the upstream regexes run by a reference engine (Python's `regex`;
// data/pretok_splits.json, made by scripts/gen/gen_pretok_fixtures.py). This covers pre-tokenizers
// whose vocabularies are not shared here.
#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/unicode.h"
#include "tok_test_util.h"

namespace {

std::string byte_encode(const std::string& s) {
    std::string out;
    for (char c : s) out += engine::unicode::byte_to_unicode(uint8_t(c));
    return out;
}

const nlohmann::json& fixture() {
    static const nlohmann::json doc = nlohmann::json::parse(tok_test::read_file(
        std::string(GGSERVE_SOURCE_DIR) + "/tests/unit/tokenizer/data/pretok_splits.json"));
    return doc;
}

}  // namespace

TEST_CASE("pre-tokenizers split like the upstream regexes", "[tokenizer][pretokenizer]") {
    const auto& doc = fixture();
    const auto& strings = doc.at("strings");
    REQUIRE(strings.size() > 40);
    for (const auto& [name, splits] : doc.at("splits").items()) {
        const engine::PreTokenizerSpec* spec = engine::find_pre_tokenizer(name);
        REQUIRE(spec != nullptr);
        const engine::PreTokenizer pre(*spec);
        size_t passed = 0;
        for (size_t i = 0; i < strings.size(); ++i) {
            const std::string text = strings[i];
            std::vector<std::string> expected;
            for (const auto& piece : splits[i]) expected.push_back(byte_encode(piece.get<std::string>()));
            const auto got = pre.split(text);
            if (got == expected) {
                ++passed;
            } else {
                UNSCOPED_INFO(name << ": '" << text << "' splits differently");
            }
        }
        std::printf("pre-tokenizer %-16s %zu/%zu strings split as upstream\n", name.c_str(), passed,
                    strings.size());
        CHECK(passed == strings.size());
    }
}

TEST_CASE("pre-tokenizers: every table entry compiles, unknown names are rejected",
          "[tokenizer][pretokenizer]") {
    for (const char* name :
         {"default",      "llama3",      "llama-bpe",      "dbrx",       "jais-2",    "chatglm-bpe",
          "deepseek-llm", "deepseek-v3", "deepseek-coder", "falcon",     "starcoder", "refact",
          "command-r",    "smollm",      "gpt-2",          "mpt",        "olmo",      "roberta-bpe",
          "trillion",     "stablelm2",   "qwen2",          "qwen35",     "bloom",     "poro-chat",
          "viking",       "tekken",      "chameleon",      "gpt-4o",     "llama4",    "tiny_aya",
          "superbpe",     "bailingmoe",  "seed-coder",     "exaone-moe", "minicpm5",  "ufakzeka",
          "grok-2"}) {
        INFO(name);
        const engine::PreTokenizerSpec* spec = engine::find_pre_tokenizer(name);
        REQUIRE(spec != nullptr);
        const engine::PreTokenizer pre(*spec);
        // Whatever the splits, they cover the text exactly.
        const std::string text = "Hello, World! 12345 東京 ''' \n\n  x";
        std::string joined;
        for (const auto& w : pre.split(text)) joined += w;
        CHECK(joined == byte_encode(text));
    }
    CHECK(engine::find_pre_tokenizer("")->names.front() == "default");
    CHECK(engine::find_pre_tokenizer("no-such-pre-tokenizer") == nullptr);
    // Flags that travel with the family.
    CHECK(engine::find_pre_tokenizer("llama3")->ignore_merges);
    CHECK(engine::find_pre_tokenizer("llama3")->add_bos);
    CHECK(!engine::find_pre_tokenizer("qwen2")->clean_spaces);
    CHECK(engine::find_pre_tokenizer("gpt-2")->clean_spaces);
}
