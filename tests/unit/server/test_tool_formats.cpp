// Per tool-call format: a reply in the format's own syntax parses into the right tool calls and
// reasoning whether it arrives at once or streamed in small pieces (and no trigger text leaks into
// the streamed content); the format's grammar accepts exactly such calls, with arguments that follow
// the tool's JSON Schema.
#include <catch2/catch.hpp>

#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema.h"
#include "server/api/chat_stream_parser.h"
#include "server/api/gbnf_prefix.h"
#include "server/api/tool_syntax.h"

using engine::chat::ToolCallFormat;

namespace {

struct Sample {
    ToolCallFormat format;
    std::string text;       // a whole reply
    std::string call_text;  // the part the grammar produces (from the trigger on)
    std::string reasoning;
    std::string content;
};

const std::string kArgs = R"({"city": "Paris", "days": 2})";

std::vector<Sample> samples() {
    return {
        {ToolCallFormat::Hermes,
         "<think>I should look it up.</think>Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " +
             kArgs + "}\n</tool_call>",
         "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}\n</tool_call>", "I should look it up.",
         "Let me check."},
        {ToolCallFormat::Llama3Json, "{\"name\": \"get_weather\", \"parameters\": " + kArgs + "}",
         "{\"name\": \"get_weather\", \"parameters\": " + kArgs + "}", "", ""},
        {ToolCallFormat::Mistral, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]",
         "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]", "", ""},
        {ToolCallFormat::FunctionTag, "Sure. <function=get_weather>" + kArgs + "</function>",
         "<function=get_weather>" + kArgs + "</function>", "", "Sure."},
        {ToolCallFormat::DeepSeek,
         "<think>\nNeed the weather.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
         "get_weather\n```json\n" + kArgs + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
         "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n" + kArgs +
             "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
         "Need the weather.", ""},
        {ToolCallFormat::Generic, "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]}",
         "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]}", "", ""},
    };
}

engine::chat::ParseOptions options(ToolCallFormat f) {
    engine::chat::ParseOptions o;
    o.tool_format = f;
    o.extract_reasoning = true;
    return o;
}

std::vector<api::ToolGrammarTool> grammar_tools() {
    const auto weather = nlohmann::ordered_json::parse(
        R"({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city", "days"], "additionalProperties": false})");
    const auto time = nlohmann::ordered_json::parse(
        R"({"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]})");
    return {{"get_weather", engine::json_schema_to_gbnf(weather)}, {"get_time", engine::json_schema_to_gbnf(time)}};
}

}  // namespace

TEST_CASE("each format's reply parses into tool calls and reasoning, whole and streamed", "[server][tools]") {
    for (const auto& s : samples()) {
        const std::string name(engine::chat::tool_call_format_name(s.format));
        INFO("format " << name);
        const auto whole = engine::chat::parse_output(s.text, options(s.format));
        CHECK(whole.reasoning_content == s.reasoning);
        CHECK(whole.content == s.content);
        REQUIRE(whole.tool_calls.size() == 1);
        CHECK(whole.tool_calls[0].name == "get_weather");
        CHECK(nlohmann::json::parse(whole.tool_calls[0].arguments) == nlohmann::json::parse(kArgs));

        const auto& triggers = api::tool_syntax(s.format).triggers;
        for (size_t piece : {1, 2, 3, 5, 8, 64}) {
            INFO("pieces of " << piece);
            api::ChatStreamParser p(options(s.format), triggers);
            std::string content, reasoning;
            for (size_t i = 0; i < s.text.size(); i += piece) {
                const auto d = p.feed(s.text.substr(i, piece));
                content += d.content;
                reasoning += d.reasoning;
                // Nothing of a call (not even part of a trigger) goes out as content while streaming.
                for (const auto& t : triggers) CHECK(content.find(t.substr(0, 2)) == std::string::npos);
            }
            const auto fin = p.finish();
            content += fin.delta.content;
            reasoning += fin.delta.reasoning;
            CHECK(content == s.content);
            CHECK(reasoning == s.reasoning);
            REQUIRE(fin.parsed.tool_calls.size() == 1);
            CHECK(fin.parsed.tool_calls[0].arguments == whole.tool_calls[0].arguments);
        }
    }
}

TEST_CASE("each format's grammar accepts its calls and arguments that follow the schema", "[server][tools]") {
    for (const auto& s : samples()) {
        INFO("format " << engine::chat::tool_call_format_name(s.format));
        const auto& syntax = api::tool_syntax(s.format);
        const std::string gbnf = api::tool_call_grammar(syntax, grammar_tools(), false);
        INFO(gbnf);
        const engine::GrammarMatcher m(gbnf);
        CHECK(m.matches(s.call_text));
        // Arguments outside the schema, and unknown tools, are rejected.
        std::string wrong_type = s.call_text;
        wrong_type.replace(wrong_type.find("2}"), 1, "\"2\"");
        CHECK_FALSE(m.accepts_prefix(wrong_type));
        std::string unknown = s.call_text;
        unknown.replace(unknown.find("get_weather"), 11, "get_stocks!");
        CHECK_FALSE(m.accepts_prefix(unknown));
        // A call starts at one of the format's trigger words (what the lazy grammar waits for).
        bool starts_at_trigger = false;
        for (const auto& t : syntax.triggers) starts_at_trigger = starts_at_trigger || s.call_text.rfind(t, 0) == 0;
        CHECK(starts_at_trigger);
    }
}

TEST_CASE("parallel tool calls: several calls only when allowed", "[server][tools]") {
    const auto& hermes = api::tool_syntax(ToolCallFormat::Hermes);
    const std::string two = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs +
                            "}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}\n"
                            "</tool_call>";
    CHECK(engine::GrammarMatcher(api::tool_call_grammar(hermes, grammar_tools(), true)).matches(two));
    CHECK_FALSE(engine::GrammarMatcher(api::tool_call_grammar(hermes, grammar_tools(), false)).matches(two));
    const auto parsed = engine::chat::parse_output(two, options(ToolCallFormat::Hermes));
    REQUIRE(parsed.tool_calls.size() == 2);
    CHECK(parsed.tool_calls[1].name == "get_time");
    CHECK(parsed.tool_calls[0].id != parsed.tool_calls[1].id);
}

TEST_CASE("plain replies stream unchanged, and reasoning is held until certain", "[server][tools]") {
    api::ChatStreamParser p(options(ToolCallFormat::None), {});
    CHECK(p.feed("<th").empty());  // may become <think>
    const auto d = p.feed("ink>abc</th");
    CHECK(d.reasoning == "abc");
    CHECK(d.content.empty());
    const auto e = p.feed("ink> Answer <tool_call>");  // no tools: a trigger-like text is content
    CHECK(e.content == "Answer <tool_call>");
    CHECK(p.finish().parsed.content == "Answer <tool_call>");

    api::ChatStreamParser plain(options(ToolCallFormat::None), {});
    CHECK(plain.feed("Hello").content == "Hello");
    CHECK(plain.feed(" <b>").content == " <b>");
}

TEST_CASE("GBNF rule prefixing leaves literals and classes alone", "[server][tools]") {
    CHECK(api::prefix_gbnf_rules("root ::= \"root a\" [a-z] item{2,3}\nitem ::= \"x\" # root\n", "t-") ==
          "t-root ::= \"root a\" [a-z] t-item{2,3}\nt-item ::= \"x\" # root\n");
    CHECK(api::gbnf_literal("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
}

TEST_CASE("a reply with invalid UTF-8 still becomes a message, the bad bytes replaced", "[server][tools]") {
    // Found by the chat_parsers fuzz target (tests/fuzz/corpus/chat_parsers/invalid-utf8-reply): a model can
    // write any bytes (byte tokens), and the message JSON threw on them, making the response a 500.
    const std::string text = "<think>why \xE2\x96</think>Sure \xFF.\n<tool_call>\n{\"name\": \"f\", \"arguments\": "
                             "{\"x\": 1}}\n</tool_call>";
    const auto parsed = engine::chat::parse_output(text, options(ToolCallFormat::Hermes));
    nlohmann::json m;
    REQUIRE_NOTHROW(m = api::parsed_message_json(parsed));
    CHECK(m["content"] == "Sure \xEF\xBF\xBD.");
    CHECK(m["reasoning_content"] == "why \xEF\xBF\xBD");
    REQUIRE(m["tool_calls"].size() == 1);
    CHECK(m["tool_calls"][0]["function"]["name"] == "f");
}

TEST_CASE("streamed content is trimmed like the whole reply: form feeds and vertical tabs too", "[server][tools]") {
    // Found by the chat_parsers fuzz target (tests/fuzz/corpus/chat_parsers/form-feed-before-trigger): the
    // stream trimmed only " \n\t\r" before a possible tool call, the whole reply's parser every isspace
    // character, so a streaming client got a trailing \f that the non-streamed reply did not have.
    for (const std::string tail : {"\f", "\v", " \f\n"}) {
        const std::string text = "Hello" + tail;
        const auto format = ToolCallFormat::FunctionTag;
        const auto whole = engine::chat::parse_output(text, options(format));
        api::ChatStreamParser p(options(format), api::tool_syntax(format).triggers);
        std::string content = p.feed(text).content;
        const auto fin = p.finish();
        content += fin.delta.content;
        CHECK(whole.content == "Hello");
        CHECK(content == whole.content);
    }
}
