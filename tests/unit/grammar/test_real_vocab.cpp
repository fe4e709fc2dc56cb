// The JSON grammar with the real Llama-2 vocabulary (32000 SentencePiece tokens, with byte tokens
// that split UTF-8 characters): replaying a text token by token, apply(), allows() and a byte-level
// reference agree, and the text's own tokens are always allowed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/tokenizer/vocab.h"

using namespace engine;

TEST_CASE("json grammar over the Llama-2 vocabulary", "[grammar][vocab]") {
    const Vocab tok =
        Vocab::from_file(std::string(GGSERVE_SHARED_DIR) + "/models/vocab/ggml-vocab-llama-spm.gguf");
    std::vector<std::string> pieces(size_t(tok.n_tokens()));
    for (Token t = 0; t < tok.n_tokens(); ++t) pieces[size_t(t)] = tok.token_to_piece(t, false);
    auto vocab = std::make_shared<const GrammarVocab>(pieces, tok.eog_tokens());
    std::ifstream f(std::string(GGSERVE_SOURCE_DIR) + "/engine/grammars/json.gbnf");
    std::stringstream ss;
    ss << f.rdbuf();
    Grammar g(ss.str(), "root", vocab);
    GrammarMatcher ref(ss.str());

    // Byte tokens (<0xE6> ...) carry the CJK characters, which this vocabulary lacks as pieces. The
    // replay takes, at each step, the longest allowed token that continues the text.
    const std::string text = "{\"city\": \"\xE6\x9D\xB1\xE4\xBA\xAC\", \"n\": [1, -2.5e3], \"ok\": true}";
    std::mt19937 rng(5);
    std::string so_far;
    TokenDataArray cur;
    int byte_tokens = 0;
    while (so_far.size() < text.size()) {
        INFO("text so far: " << so_far);
        cur.data.clear();
        for (Token t = 0; t < tok.n_tokens(); ++t) cur.data.push_back({t, 0.0f, 0.0f});
        g.apply(cur);
        Token next = -1;
        for (Token t = 0; t < tok.n_tokens(); ++t) {
            const std::string& p = pieces[size_t(t)];
            if (std::isinf(cur.data[size_t(t)].logit) || p.empty() ||
                text.compare(so_far.size(), p.size(), p) != 0)
                continue;
            if (next < 0 || p.size() > pieces[size_t(next)].size()) next = t;
        }
        REQUIRE(next >= 0);
        for (int k = 0; k < 200; ++k) {
            const Token t = Token(rng() % uint32_t(tok.n_tokens()));
            const bool masked = std::isinf(cur.data[size_t(t)].logit);
            CHECK(g.allows(t) == !masked);
            if (k < 40 && !tok.is_eog(t) && !pieces[size_t(t)].empty()) {
                CHECK(ref.accepts_prefix(so_far + pieces[size_t(t)]) == !masked);
            }
        }
        byte_tokens += tok.is_byte(next);
        g.accept(next);
        so_far += pieces[size_t(next)];
    }
    CHECK(byte_tokens >= 6);
    CHECK(g.complete());
    CHECK(g.allows(tok.eos()));
}
