// The chat grammar of a response format, as llama-server 2026 builds it: the template's reasoning block
// (where the prompt left it), then the value, bare or in a "```json" fence, with the schema converter's
// whitespace rule around each part.
#include <catch2/catch.hpp>

#include <string>

#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema.h"
#include "server/api/response_format_grammar.h"

namespace {

const std::string kValue = R"({"a": 1})";

engine::GrammarMatcher matcher(api::ReasoningLead lead) {
    const std::string schema = engine::json_schema_to_gbnf(nlohmann::ordered_json::parse(
        R"({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})"));
    return engine::GrammarMatcher(
        api::response_format_grammar(schema, lead, engine::chat::ReasoningTags{}, api::GbnfLiterals()));
}

}  // namespace

TEST_CASE("response format grammar: the value bare or fenced, whitespace around it as llama-server's",
          "[server][structured]") {
    const auto m = matcher(api::ReasoningLead::None);
    CHECK(m.matches(kValue));
    CHECK(m.matches("\n\n  " + kValue + "\n"));
    CHECK(m.matches("```json\n" + kValue + "\n```"));
    CHECK(m.matches(" ```json " + kValue + " ```"));
    CHECK_FALSE(m.matches("```json " + kValue + "``` "));  // nothing after the fence
    CHECK_FALSE(m.matches("x" + kValue));
    CHECK_FALSE(m.matches(R"({"a": "1"})"));  // the schema holds
    CHECK_FALSE(m.matches("```" + kValue + "```"));
    CHECK_FALSE(m.matches("<think>a</think>" + kValue));
    // Three whitespace rules before the value (two, then the choice's), each "\n"{1,2} [ \t]{0,20}.
    CHECK(m.matches(std::string(6, '\n') + kValue));
    CHECK_FALSE(m.matches(std::string(7, '\n') + kValue));
    CHECK(m.matches(kValue + "\n\n" + std::string(20, ' ')));
    CHECK_FALSE(m.matches(kValue + "\n\n" + std::string(21, ' ')));
}

TEST_CASE("response format grammar: the reasoning block where the prompt left it", "[server][structured]") {
    const auto optional = matcher(api::ReasoningLead::Optional);
    CHECK(optional.matches(kValue));
    CHECK(optional.matches("<think>\nPlan.\n</think>\n\n" + kValue));
    CHECK(optional.matches("<think>a < b</think>```json\n" + kValue + "\n```"));
    CHECK_FALSE(optional.matches("Plan.</think>" + kValue));

    const auto opened = matcher(api::ReasoningLead::Opened);  // the prompt ended in "<think>\n"
    CHECK(opened.matches("Plan.\n</think>\n\n" + kValue));
    CHECK(opened.matches("</think>" + kValue));
    CHECK_FALSE(opened.matches(kValue));  // the block must be closed first
    CHECK_FALSE(opened.matches("<think>x</think>" + kValue + "</think>"));

    const auto closed = matcher(api::ReasoningLead::Closed);  // "<think>\n\n</think>\n\n" was in the prompt
    CHECK(closed.matches(kValue));
    CHECK(closed.matches("\n" + kValue));
    CHECK_FALSE(closed.matches("<think>x</think>" + kValue));
    CHECK_FALSE(closed.matches(std::string(5, '\n') + kValue));  // two whitespace rules left
}

TEST_CASE("response format grammar: tags of any characters", "[server][structured]") {
    const std::string schema = engine::json_schema_to_gbnf(nlohmann::ordered_json::parse(R"({"type": "integer"})"));
    const engine::chat::ReasoningTags tags{"<｜思考｜>", "</｜思考｜>"};
    const engine::GrammarMatcher m(
        api::response_format_grammar(schema, api::ReasoningLead::Optional, tags, api::GbnfLiterals()));
    CHECK(m.matches("<｜思考｜>想一想 [x] - ^</｜思考｜>\n\n42"));
    CHECK(m.matches("42"));
    CHECK_FALSE(m.matches("<｜思考｜>a</｜思考｜>b</｜思考｜>42"));
}

TEST_CASE("response format grammar: where the prompt leaves the reasoning block", "[server][structured]") {
    const engine::chat::ReasoningTags tags;
    using api::ReasoningLead;
    CHECK(api::reasoning_lead("<|im_start|>assistant\n", true, false, tags) == ReasoningLead::Optional);
    CHECK(api::reasoning_lead("<|im_start|>assistant\n<think>\n\n</think>\n\n", true, false, tags) ==
          ReasoningLead::Closed);
    CHECK(api::reasoning_lead("<｜Assistant｜><think>\n", true, true, tags) == ReasoningLead::Opened);
    CHECK(api::reasoning_lead("<|im_start|>assistant\n", false, false, tags) == ReasoningLead::None);
    CHECK(api::reasoning_lead("x", true, false, engine::chat::ReasoningTags{"", ""}) == ReasoningLead::None);
}

// gpt-oss: the value on Harmony's final channel, after an analysis message when the model writes one (the
// reply follows the prompt's <|start|>assistant).
TEST_CASE("response format grammar: gpt-oss answers on its final channel", "[server][structured]") {
    const auto m = matcher(api::ReasoningLead::Harmony);
    CHECK(m.matches("<|channel|>final<|message|>" + kValue));
    CHECK(m.matches("<|channel|>final<|message|>```json\n" + kValue + "\n```"));
    CHECK(m.matches("<|channel|>analysis<|message|>They want JSON. <|ok|> fine.<|end|><|start|>assistant"
                    "<|channel|>final<|message|>" + kValue));
    CHECK_FALSE(m.matches(kValue));  // not outside a message
    CHECK_FALSE(m.matches("<|channel|>analysis<|message|>a<|end|>x<|end|><|start|>assistant<|channel|>final"
                          "<|message|>" + kValue));  // the analysis ends at its first <|end|>
    CHECK_FALSE(m.matches("<|channel|>final<|message|>{\"a\": \"1\"}"));
}
