// The token pipeline shared by `ggserve run` and the server, with stories260K's vocabulary: several
// tokens per step, end of text, stop strings, limits, UTF-8 holdback.
#include <catch2/catch.hpp>

#include "engine/model/model.h"
#include "server/scheduler/token_pipeline.h"

using namespace sched;

namespace {
const engine::Vocab& stories_vocab() {
    static auto model = engine::Model::load(std::string(GGSERVE_SHARED_DIR) + "/models/stories260K.gguf", {});
    return model->vocab();
}
std::vector<engine::Token> tok(const std::string& text) { return stories_vocab().tokenize(text, false, false); }
}  // namespace

TEST_CASE("pipeline: a step of several tokens shows the same text as one token per step", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    const auto toks = tok("Once upon a time there was a cat.");
    TokenPipeline one(v, {}, -1, false), many(v, {}, -1, false);
    std::string a, b;
    for (auto t : toks) a += one.push(std::span(&t, 1)).text;
    const auto step = many.push(toks);
    b = step.text;
    REQUIRE(a == b);
    REQUIRE(step.n_consumed == toks.size());
    REQUIRE(step.n_shown == toks.size());
    REQUIRE_FALSE(step.end);
    REQUIRE(many.tokens() == toks);
    // SentencePiece marks the word boundary: the text starts with a space, as it would mid-generation.
    REQUIRE(a + one.flush() == " Once upon a time there was a cat.");
}

TEST_CASE("pipeline: end of text in the middle of a step drops the rest", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    std::vector<engine::Token> toks = tok("The end");
    toks.push_back(v.eos());
    toks.push_back(toks[0]);  // would follow in the same verified step
    TokenPipeline p(v, {}, -1, false);
    const auto step = p.push(toks);
    REQUIRE(step.end);
    REQUIRE(step.end->eos);
    REQUIRE(step.n_consumed == toks.size() - 1);
    REQUIRE(step.n_shown == toks.size() - 2);
    REQUIRE(p.n_decoded() == (int32_t)toks.size() - 1);  // the EOS counts as decoded, as in llama-server
    REQUIRE(p.tokens().size() == toks.size() - 2);
    // with ignore_eos it is an ordinary token
    TokenPipeline q(v, {}, -1, true);
    REQUIRE_FALSE(q.push(toks).end);
}

TEST_CASE("pipeline: the token limit ends the step at the limit", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    const auto toks = tok("one two three four five six");
    TokenPipeline p(v, {}, 4, false);
    auto step = p.push(std::span(toks).first(3));
    REQUIRE_FALSE(step.end);
    step = p.push(std::span(toks).subspan(3));
    REQUIRE(step.end);
    REQUIRE(step.end->reason == FinishReason::Length);
    REQUIRE(step.n_consumed == 1);
    REQUIRE(p.tokens().size() == 4);
    REQUIRE_THROWS_AS(p.push(toks), std::logic_error);
}

TEST_CASE("pipeline: a stop string inside a step ends it, the stop string is never shown", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    const auto toks = tok("Lily saw a big dog. The dog was happy.");
    TokenPipeline p(v, {"dog."}, -1, false);
    const auto step = p.push(toks);
    REQUIRE(step.end);
    REQUIRE(step.end->word == "dog.");
    REQUIRE(p.content() == " Lily saw a big ");
    REQUIRE(step.n_consumed < toks.size());
}

TEST_CASE("pipeline: an incomplete UTF-8 sequence is held back until it completes", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    // stories260K spells characters outside its vocabulary as byte tokens: "é" is <0xC3><0xA9>.
    const auto toks = tok("café");
    REQUIRE(toks.size() >= 2);
    TokenPipeline p(v, {}, -1, false);
    std::string shown;
    for (size_t i = 0; i + 1 < toks.size(); ++i) shown += p.push(std::span(&toks[i], 1)).text;
    REQUIRE(shown == " caf");  // the lead byte waits
    shown += p.push(std::span(&toks.back(), 1)).text;
    REQUIRE(shown == " café");
}

TEST_CASE("pipeline: n_indent ends generation at a line indented less, keeping its indentation",
          "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    const auto toks = tok("if x:\n    a\n    b\n  c d\n    e");
    for (const bool one_by_one : {true, false}) {
        INFO("one by one: " << one_by_one);
        TokenPipeline p(v, {}, -1, false, false, 4);
        std::string shown;
        std::optional<PipelineEnd> end;
        if (one_by_one) {
            for (auto t : toks) {
                const auto step = p.push(std::span(&t, 1));
                shown += step.text;
                if (step.end) {
                    end = step.end;
                    break;
                }
            }
        } else {
            const auto step = p.push(toks);
            shown = step.text;
            end = step.end;
        }
        REQUIRE(end);
        CHECK(end->reason == FinishReason::Length);
        CHECK_FALSE(end->eos);
        // The first line is exempt; "  c" is indented by 2 < 4: cut before "c".
        CHECK(p.content() == " if x:\n    a\n    b\n  ");
        CHECK(shown == p.content());
        CHECK(p.flush().empty());
    }
    // Without n_indent nothing is cut.
    TokenPipeline q(v, {}, -1, false);
    q.push(toks);
    CHECK(q.content() + q.flush() == " if x:\n    a\n    b\n  c d\n    e");
}

TEST_CASE("pipeline: special tokens are shown as text only with special", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    const std::vector<engine::Token> toks = {tok("hi")[0], v.bos()};  // BOS is a control token
    TokenPipeline plain(v, {}, -1, true), special(v, {}, -1, true, true);
    std::string a = plain.push(toks).text;
    a += plain.flush();
    std::string b = special.push(toks).text;
    b += special.flush();
    CHECK(a == v.token_to_piece(toks[0]));
    CHECK(b == a + v.token_to_piece(v.bos(), true));
    CHECK(b.size() > a.size());
}

TEST_CASE("pipeline: tokens are released with their text and a stop string's tokens never are", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    const auto toks = tok("Lily saw a big dog. The dog was happy.");
    // One token per step: " do" could start " dog." and waits with its text; "." completes the stop string.
    TokenPipeline p(v, {" dog."}, -1, false);
    bool held_dog = false;
    size_t i = 0;
    for (; i < toks.size(); ++i) {
        const auto step = p.push(std::span(&toks[i], 1));
        if (step.end) break;
        // Every released token's text has been shown; the held-back one has not.
        REQUIRE(p.n_released() <= p.tokens().size());
        if (v.token_to_piece(toks[i]) == " do") {  // " do" "g" "."
            held_dog = true;
            CHECK(p.n_released() == p.tokens().size() - 1);
        }
    }
    REQUIRE(i < toks.size());
    CHECK(held_dog);
    CHECK(p.content() == " Lily saw a big");
    // The released tokens spell exactly the shown text.
    std::string released;
    for (size_t k = 0; k < p.n_released(); ++k) released += v.token_to_piece(p.tokens()[k]);
    CHECK(released == " Lily saw a big");
    CHECK(p.n_released() < p.tokens().size());

    // A partial match that fails releases the held tokens with their text.
    TokenPipeline q(v, {" dog!"}, -1, false);
    size_t shown_tokens = 0;
    std::string text;
    for (auto t : toks) {
        const auto step = q.push(std::span(&t, 1));
        text += step.text;
        CHECK(q.n_released() >= shown_tokens);
        shown_tokens = q.n_released();
    }
    text += q.flush();
    CHECK(text == " Lily saw a big dog. The dog was happy.");
    CHECK(q.n_released() == toks.size());
}

TEST_CASE("pipeline: past a time limit a step ends at its first token after a new line", "[scheduler][pipeline]") {
    const auto& v = stories_vocab();
    const auto toks = tok("one two\nthree four\nfive");
    // One step holding both new lines (as a verified draft would): it ends right after the first.
    TokenPipeline p(v, {}, -1, false);
    const auto step = p.push(toks, true);
    REQUIRE(step.end);
    CHECK(step.end->reason == FinishReason::Length);
    CHECK(p.content() == " one two\n");
    // One token per step gives the same cut.
    TokenPipeline q(v, {}, -1, false);
    for (auto t : toks)
        if (q.push(std::span(&t, 1), true).end) break;
    CHECK(q.content() == p.content());
    // A new line already shown: the next token ends it.
    TokenPipeline r(v, {}, -1, false);
    size_t first_line = 0;  // the tokens up to and including the first new line
    while (v.token_to_piece(toks[first_line]).find('\n') == std::string::npos) ++first_line;
    ++first_line;
    REQUIRE_FALSE(r.push(std::span(toks).first(first_line)).end);
    REQUIRE(r.has_new_line());
    const auto next = r.push(std::span(toks).subspan(first_line), true);
    REQUIRE(next.end);
    CHECK(next.n_consumed == 1);
}
