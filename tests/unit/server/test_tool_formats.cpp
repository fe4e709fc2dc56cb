// Per tool-call format: a reply in the format's own syntax parses into the right tool calls and
// reasoning whether it arrives at once or streamed in small pieces (and no trigger text leaks into
// the streamed content); the format's grammar accepts exactly such calls, with arguments that follow
// the tool's JSON Schema.
#include <catch2/catch.hpp>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema.h"
#include "server/api/chat_stream_parser.h"
#include "server/api/chat_tools.h"
#include "server/api/gbnf_prefix.h"
#include "server/api/tool_syntax.h"
#include "engine/tokenizer/vocab.h"

using engine::chat::ToolCallFormat;

namespace {

struct Sample {
    ToolCallFormat format;
    std::string text;       // a whole reply
    std::string call_text;  // the part the grammar produces (from the trigger on)
    std::string reasoning;
    std::string content;
    // A change to call_text that breaks the tool's schema (days as a string).
    std::pair<std::string, std::string> wrong_type = {"2}", "\"2\"}"};
    engine::chat::ReasoningTags tags = {};
};

const std::string kArgs = R"({"city": "Paris", "days": 2})";

std::vector<Sample> samples() {
    const std::string ds_calls = "<｜tool▁calls▁begin｜>", ds_calls_end = "<｜tool▁calls▁end｜>",
                      ds_call = "<｜tool▁call▁begin｜>", ds_call_end = "<｜tool▁call▁end｜>", ds_sep = "<｜tool▁sep｜>";
    const std::string qwen3_coder = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                                    "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>";
    const std::string seed_oss = "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
                                 "<parameter=days>2</parameter>\n</function>\n</seed:tool_call>";
    const std::string glm45 = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
                              "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>";
    const std::string glm47 = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
                              "<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>";
    const std::string minimax = "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris"
                                "</parameter>\n<parameter name=\"days\">2</parameter>\n</invoke>\n</minimax:tool_call>";
    const std::string kimi = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
                             "<|tool_call_argument_begin|>" + kArgs + "<|tool_call_end|><|tool_calls_section_end|>";
    const std::string r7b = "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", "
                            "\"parameters\": " + kArgs + "}\n]<|END_ACTION|>";
    const std::string r_plus = "Action:\n```json\n[\n{\"tool_name\": \"get_weather\", \"parameters\": " + kArgs +
                               "}\n]\n```";
    return {
        {ToolCallFormat::Hermes,
         "<think>I should look it up.</think>Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " +
             kArgs + "}\n</tool_call>",
         "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}\n</tool_call>", "I should look it up.",
         "Let me check."},
        {ToolCallFormat::Llama3Json, "{\"name\": \"get_weather\", \"parameters\": " + kArgs + "}",
         "{\"name\": \"get_weather\", \"parameters\": " + kArgs + "}", "", ""},
        {ToolCallFormat::Llama3Json, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": " + kArgs + "}",
         "{\"name\": \"get_weather\", \"parameters\": " + kArgs + "}", "", ""},
        {ToolCallFormat::Mistral, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]",
         "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]", "", ""},
        {ToolCallFormat::MistralArgs, "Sure.[TOOL_CALLS]get_weather[ARGS]" + kArgs,
         "[TOOL_CALLS]get_weather[ARGS]" + kArgs, "", "Sure."},
        {ToolCallFormat::FunctionTag, "Sure. <function=get_weather>" + kArgs + "</function>",
         "<function=get_weather>" + kArgs + "</function>", "", "Sure."},
        {ToolCallFormat::DeepSeek,
         "<think>\nNeed the weather.\n</think>\n\n" + ds_calls + ds_call + "function" + ds_sep + "get_weather\n```json\n" +
             kArgs + "\n```" + ds_call_end + ds_calls_end,
         ds_calls + ds_call + "function" + ds_sep + "get_weather\n```json\n" + kArgs + "\n```" + ds_call_end +
             ds_calls_end,
         "Need the weather.", ""},
        {ToolCallFormat::DeepSeekV31,
         "<think>Need the weather.</think>Calling." + ds_calls + ds_call + "get_weather" + ds_sep + kArgs + ds_call_end +
             ds_calls_end,
         ds_calls + ds_call + "get_weather" + ds_sep + kArgs + ds_call_end + ds_calls_end, "Need the weather.",
         "Calling."},
        {ToolCallFormat::Generic, "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]}",
         "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]}", "", ""},
        {ToolCallFormat::Granite, "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]",
         "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]", "", ""},
        {ToolCallFormat::CommandR7B, "<|START_THINKING|>I will check the weather.<|END_THINKING|>" + r7b, r7b,
         "I will check the weather.", "", {"2}", "\"2\"}"}, {"<|START_THINKING|>", "<|END_THINKING|>"}},
        {ToolCallFormat::CommandRPlus, "I will check.\n" + r_plus, r_plus, "", "I will check."},
        {ToolCallFormat::Kimi, "<think>Weather.</think>" + kimi, kimi, "Weather.", ""},
        {ToolCallFormat::Qwen3Coder, "Let me check.\n" + qwen3_coder, qwen3_coder, "", "Let me check.",
         {"\n2\n", "\n\"2\"\n"}},
        {ToolCallFormat::SeedOss, seed_oss, seed_oss, "", "", {">2<", ">\"2\"<"}},
        {ToolCallFormat::Glm45, "<think>Weather.</think>\n" + glm45, glm45, "Weather.", "", {">2<", ">\"2\"<"}},
        {ToolCallFormat::Glm47, glm47, glm47, "", "", {">2<", ">\"2\"<"}},
        {ToolCallFormat::MiniMaxM2, "<think>Weather.</think>\n" + minimax, minimax, "Weather.", "",
         {">2<", ">\"2\"<"}},
        {ToolCallFormat::FireFunction, " functools[{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]",
         " functools[{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]", "", ""},
        // gpt-oss: the reasoning on its analysis channel, then the call (<|call|> ends generation unseen)
        {ToolCallFormat::Harmony,
         "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
         "to=functions.get_weather <|constrain|>json<|message|>" + kArgs,
         "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + kArgs, "Need the weather.",
         ""},
    };
}

engine::chat::ParseOptions options(ToolCallFormat f, const engine::chat::ReasoningTags& tags = {}) {
    engine::chat::ParseOptions o;
    o.tool_format = f;
    o.harmony = f == ToolCallFormat::Harmony;  // as the server sets it for gpt-oss's template
    o.extract_reasoning = true;
    o.reasoning_tags = tags;
    o.string_parameters = {{"get_weather", {"city"}}, {"get_time", {"zone"}}};
    return o;
}

std::vector<api::ToolGrammarTool> grammar_tools() {
    const auto weather = nlohmann::ordered_json::parse(
        R"({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city", "days"], "additionalProperties": false})");
    const auto time = nlohmann::ordered_json::parse(
        R"({"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]})");
    return {{"get_weather", weather}, {"get_time", time}};
}

}  // namespace

TEST_CASE("each format's reply parses into tool calls and reasoning, whole and streamed", "[server][tools]") {
    for (const auto& s : samples()) {
        const std::string name(engine::chat::tool_call_format_name(s.format));
        INFO("format " << name);
        const auto whole = engine::chat::parse_output(s.text, options(s.format, s.tags));
        CHECK(whole.reasoning_content == s.reasoning);
        CHECK(whole.content == s.content);
        REQUIRE(whole.tool_calls.size() == 1);
        CHECK(whole.tool_calls[0].name == "get_weather");
        CHECK(nlohmann::json::parse(whole.tool_calls[0].arguments) == nlohmann::json::parse(kArgs));

        const auto triggers = api::reply_triggers(api::tool_syntax(s.format));
        for (size_t piece : {1, 2, 3, 5, 8, 64}) {
            INFO("pieces of " << piece);
            api::ChatStreamParser p(options(s.format, s.tags), triggers);
            std::string content, reasoning;
            std::vector<api::ChatStreamParser::CallDelta> deltas;
            for (size_t i = 0; i < s.text.size(); i += piece) {
                const auto d = p.feed(s.text.substr(i, piece));
                content += d.content;
                reasoning += d.reasoning;
                deltas.insert(deltas.end(), d.calls.begin(), d.calls.end());
                // Nothing of a call (not even part of a trigger) goes out as content while streaming.
                for (const auto& t : triggers) CHECK(content.find(t.substr(0, 2)) == std::string::npos);
            }
            const size_t while_streaming = deltas.size();
            const auto fin = p.finish();
            content += fin.delta.content;
            reasoning += fin.delta.reasoning;
            deltas.insert(deltas.end(), fin.delta.calls.begin(), fin.delta.calls.end());
            CHECK(content == s.content);
            CHECK(reasoning == s.reasoning);
            REQUIRE(fin.parsed.tool_calls.size() == 1);
            CHECK(fin.parsed.tool_calls[0].arguments == whole.tool_calls[0].arguments);
            // The call's deltas: the first names it, all are for call 0, and their pieces of the arguments
            // joined are the whole arguments; in small pieces, they go out while the reply is generated.
            REQUIRE(!deltas.empty());
            CHECK(deltas[0].first);
            CHECK(deltas[0].name == "get_weather");
            CHECK(deltas[0].id == fin.parsed.tool_calls[0].id);
            std::string joined;
            for (size_t k = 0; k < deltas.size(); ++k) {
                CHECK(deltas[k].index == 0);
                CHECK(deltas[k].first == (k == 0));
                joined += deltas[k].arguments;
            }
            CHECK(joined == whole.tool_calls[0].arguments);
            if (piece <= 3) CHECK(while_streaming >= 2);
        }
    }
}

TEST_CASE("streamed calls: each call's arguments in pieces, a second call after the first", "[server][tools]") {
    const std::string text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs +
                             "}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}"
                             "\n</tool_call>";
    api::ChatStreamParser p(options(ToolCallFormat::Hermes), api::tool_syntax(ToolCallFormat::Hermes).triggers);
    std::vector<std::string> args(2), names(2);
    std::vector<size_t> pieces(2, 0);
    auto take = [&](const std::vector<api::ChatStreamParser::CallDelta>& calls) {
        for (const auto& d : calls) {
            REQUIRE(d.index < 2);
            if (d.first) names[d.index] = d.name;
            args[d.index] += d.arguments;
            ++pieces[d.index];
        }
    };
    for (const char ch : text) {
        const auto d = p.feed(std::string(1, ch));
        CHECK(d.content.empty());
        take(d.calls);
    }
    const auto fin = p.finish();
    take(fin.delta.calls);
    REQUIRE(fin.parsed.tool_calls.size() == 2);
    CHECK(names[0] == "get_weather");
    CHECK(names[1] == "get_time");
    CHECK(args[0] == fin.parsed.tool_calls[0].arguments);
    CHECK(args[1] == fin.parsed.tool_calls[1].arguments);
    CHECK(args[1] == "{\"zone\":\"UTC\"}");
    CHECK(pieces[0] > 5);
    CHECK(pieces[1] > 5);
}

TEST_CASE("a malformed call while streaming: its text becomes content at the end", "[server][tools]") {
    const std::string text = "Hi <tool_call>{not json}</tool_call>";
    api::ChatStreamParser p(options(ToolCallFormat::Hermes), api::tool_syntax(ToolCallFormat::Hermes).triggers);
    std::string content;
    for (const char ch : text) {
        const auto d = p.feed(std::string(1, ch));
        CHECK(d.calls.empty());
        content += d.content;
    }
    const auto fin = p.finish();
    CHECK(fin.delta.calls.empty());
    content += fin.delta.content;
    CHECK(content == text);
    CHECK(fin.parsed.tool_calls.empty());
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
        REQUIRE(wrong_type.find(s.wrong_type.first) != std::string::npos);
        wrong_type.replace(wrong_type.find(s.wrong_type.first), s.wrong_type.first.size(), s.wrong_type.second);
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

TEST_CASE("a format's markers that are control tokens: named as tokens, shown in the reply", "[server][tools][control]") {
    // The Llama-2 vocabulary's <s> and </s> are control tokens; "hello" is not one token.
    const auto vocab = engine::Vocab::from_file(std::string(GGSERVE_SHARED_DIR) + "/models/vocab/ggml-vocab-llama-spm.gguf");
    const auto markers = api::control_markers({"<s>", "hello", "</s>"}, vocab);
    REQUIRE(markers.size() == 2);
    CHECK(markers[0].text == "<s>");
    CHECK(vocab.is_control(markers[0].token));
    CHECK(vocab.token_to_piece(markers[0].token, false).empty());
    // The reply shows the markers it is told to, and no other control token.
    engine::StreamDecoder plain(vocab), shown(vocab, false, {markers[0].token});
    CHECK(plain.feed(markers[0].token).empty());
    CHECK(shown.feed(markers[0].token) == "<s>");
    CHECK(shown.feed(markers[1].token).empty());

    const api::GbnfLiterals lit({{"[TOOL_CALLS]", 7}});
    CHECK(lit("a[TOOL_CALLS][") == "\"a\" ( <[7]> | \"[TOOL_CALLS]\" ) \"[\"");
    CHECK(lit("plain") == "\"plain\"");
    CHECK(api::GbnfLiterals()("[TOOL_CALLS]") == "\"[TOOL_CALLS]\"");
}

TEST_CASE("a lazy tool grammar wakes on the format's control token and then forces the call", "[server][tools][control]") {
    // A vocabulary of single characters, EOS (0) and [TOOL_CALLS] (1) as a control token: no piece, its text
    // known to the grammar (as Api::attach builds it from the model's vocabulary).
    std::vector<std::string> pieces = {"", ""}, control = {"", "[TOOL_CALLS]"};
    for (int c = 32; c < 127; ++c) pieces.push_back(std::string(1, char(c)));
    pieces.push_back("\n");
    control.resize(pieces.size());
    auto vocab = std::make_shared<const engine::GrammarVocab>(pieces, std::vector<engine::Token>{0}, control);
    auto id = [&](char c) { return engine::Token(c == '\n' ? pieces.size() - 1 : size_t(c - 32 + 2)); };

    for (const auto format : {ToolCallFormat::Mistral, ToolCallFormat::MistralArgs}) {
        INFO(engine::chat::tool_call_format_name(format));
        const auto& syntax = api::tool_syntax(format);
        const std::string gbnf =
            api::tool_call_grammar(syntax, grammar_tools(), false, api::GbnfLiterals({{"[TOOL_CALLS]", 1}}));
        INFO(gbnf);
        engine::GrammarTriggers triggers{syntax.triggers, {}, {1}};
        engine::Grammar g(gbnf, "root", vocab, triggers);
        for (const char c : std::string("Hi ")) g.accept(id(c));
        CHECK_FALSE(g.active());
        g.accept(1);
        CHECK(g.active());
        const std::string rest = format == ToolCallFormat::Mistral
                                     ? "[{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}]"
                                     : "get_weather[ARGS]" + kArgs;
        CHECK_FALSE(g.allows(id('x')));
        for (const char c : rest) {
            REQUIRE(g.allows(id(c)));
            g.accept(id(c));
        }
        CHECK(g.complete());
    }
}

TEST_CASE("each format's parallel calls: the grammar's list, parsed whole and streamed as two calls", "[server][tools]") {
    for (const auto& s : samples()) {
        INFO("format " << engine::chat::tool_call_format_name(s.format));
        const auto& x = api::tool_syntax(s.format);
        // The sample's call is list_open call_open BODY call_close list_close; two calls repeat the middle.
        const std::string head = x.list_open + x.call_open, tail = x.call_close + x.list_close;
        REQUIRE(s.call_text.rfind(head, 0) == 0);
        REQUIRE(s.call_text.size() >= head.size() + tail.size());
        REQUIRE(s.call_text.substr(s.call_text.size() - tail.size()) == tail);
        const std::string one = s.call_text.substr(x.list_open.size(),
                                                   s.call_text.size() - x.list_open.size() - x.list_close.size());
        const std::string two = x.list_open + one + x.separator + one + x.list_close;
        INFO(two);
        CHECK(engine::GrammarMatcher(api::tool_call_grammar(x, grammar_tools(), true)).matches(two));
        CHECK_FALSE(engine::GrammarMatcher(api::tool_call_grammar(x, grammar_tools(), false)).matches(two));

        const auto whole = engine::chat::parse_output(two, options(s.format, s.tags));
        REQUIRE(whole.tool_calls.size() == 2);
        CHECK(whole.tool_calls[0].id != whole.tool_calls[1].id);
        CHECK(whole.content.empty());
        api::ChatStreamParser p(options(s.format, s.tags), api::reply_triggers(x));
        std::vector<std::string> args(2);
        std::vector<std::string> ids(2);
        std::string content;
        auto take = [&](const api::ChatStreamParser::Delta& d) {
            content += d.content;
            for (const auto& c : d.calls) {
                REQUIRE(c.index < 2);
                if (c.first) ids[c.index] = c.id;
                args[c.index] += c.arguments;
            }
        };
        for (size_t i = 0; i < two.size(); i += 2) take(p.feed(two.substr(i, 2)));
        const auto fin = p.finish();
        take(fin.delta);
        CHECK(content.empty());
        REQUIRE(fin.parsed.tool_calls.size() == 2);
        for (size_t k = 0; k < 2; ++k) {
            CHECK(args[k] == whole.tool_calls[k].arguments);
            CHECK(ids[k] == fin.parsed.tool_calls[k].id);
        }
    }
}

TEST_CASE("a forced call after a prompt that opened reasoning closes the reasoning first", "[server][tools]") {
    const auto vocab = engine::Vocab::from_file(std::string(GGSERVE_SHARED_DIR) + "/models/vocab/ggml-vocab-llama-spm.gguf");
    const auto& hermes = api::tool_syntax(ToolCallFormat::Hermes);
    const std::string call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}\n</tool_call>";
    api::GenerationOptions forced;
    forced.grammar = api::tool_call_grammar(hermes, grammar_tools(), false);
    api::close_reasoning_first("</think>", vocab, forced);
    const engine::GrammarMatcher m(forced.grammar);
    CHECK(m.matches("</think>\n\n" + call));
    CHECK(m.matches("</think>" + call));
    CHECK_FALSE(m.accepts_prefix("Let me think"));
    CHECK_FALSE(m.matches(call));
    // The reply parses as an empty reasoning block and the call.
    auto o = options(ToolCallFormat::Hermes);
    o.reasoning_opened_in_prompt = true;
    const auto parsed = engine::chat::parse_output("</think>\n\n" + call, o);
    CHECK(parsed.reasoning_content.empty());
    CHECK(parsed.content.empty());
    REQUIRE(parsed.tool_calls.size() == 1);

    // A lazy grammar (tool_choice auto) lets the model reason first: unchanged.
    api::GenerationOptions lazy;
    lazy.grammar = forced.grammar;
    lazy.grammar_lazy = true;
    const std::string before = lazy.grammar;
    api::close_reasoning_first("</think>", vocab, lazy);
    CHECK(lazy.grammar == before);
}

TEST_CASE("a stream and the whole reply agree on where calls start", "[server][tools]") {
    // Found with the chat_parsers fuzz target's prefix check: the whole-reply parser read a DeepSeek call
    // marker outside the calls section as a call, while the stream (which holds back only from the section's
    // marker) had sent it as content; and Llama 3's <|python_tag|> before a call went out as content.
    const std::pair<ToolCallFormat, std::string> cases[] = {
        {ToolCallFormat::DeepSeekV31, "Hi <｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜> there"},
        {ToolCallFormat::DeepSeek, "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜>"},
        {ToolCallFormat::Llama3Json, "<|python_tag|>{\"name\": \"f\", \"parameters\": {}}"},
        {ToolCallFormat::DeepSeekV31, "<｜tool▁calls▁begin｜>oops"},
        {ToolCallFormat::Kimi, "<|tool_calls_section_begin|><|tool_call_begin|>oops"},
    };
    for (const auto& [format, text] : cases) {
        INFO(text);
        const auto whole = engine::chat::parse_output(text, options(format));
        api::ChatStreamParser p(options(format), api::reply_triggers(api::tool_syntax(format)));
        std::string content;
        size_t calls = 0;
        for (const char ch : text) {
            const auto d = p.feed(std::string(1, ch));
            content += d.content;
            calls += d.calls.size();
        }
        const auto fin = p.finish();
        content += fin.delta.content;
        CHECK(content == whole.content);
        CHECK(fin.parsed.tool_calls.size() == whole.tool_calls.size());
        if (format != ToolCallFormat::Llama3Json) {
            CHECK(whole.tool_calls.empty());
            CHECK(calls == 0);
            CHECK(whole.content == text);  // nothing of the malformed text is lost
        }
    }
}

namespace {

// A call in one of the XML-like formats, parameters written as raw text.
std::string xml_call(ToolCallFormat f, const std::string& name,
                     const std::vector<std::pair<std::string, std::string>>& params) {
    std::string out;
    for (const auto& [k, v] : params) {
        switch (f) {
            case ToolCallFormat::Qwen3Coder: out += "<parameter=" + k + ">\n" + v + "\n</parameter>\n"; break;
            case ToolCallFormat::SeedOss: out += "<parameter=" + k + ">" + v + "</parameter>\n"; break;
            case ToolCallFormat::Glm45: out += "<arg_key>" + k + "</arg_key>\n<arg_value>" + v + "</arg_value>\n"; break;
            case ToolCallFormat::Glm47: out += "<arg_key>" + k + "</arg_key><arg_value>" + v + "</arg_value>"; break;
            default: out += "<parameter name=\"" + k + "\">" + v + "</parameter>\n"; break;  // MiniMax M2
        }
    }
    switch (f) {
        case ToolCallFormat::Qwen3Coder: return "<tool_call>\n<function=" + name + ">\n" + out + "</function>\n</tool_call>";
        case ToolCallFormat::SeedOss:
            return "<seed:tool_call>\n<function=" + name + ">\n" + out + "</function>\n</seed:tool_call>";
        case ToolCallFormat::Glm45: return "<tool_call>" + name + "\n" + out + "</tool_call>";
        case ToolCallFormat::Glm47: return "<tool_call>" + name + out + "</tool_call>";
        default: return "<minimax:tool_call>\n<invoke name=\"" + name + "\">\n" + out + "</invoke>\n</minimax:tool_call>";
    }
}

const ToolCallFormat kXmlFormats[] = {ToolCallFormat::Qwen3Coder, ToolCallFormat::SeedOss, ToolCallFormat::Glm45,
                                      ToolCallFormat::Glm47, ToolCallFormat::MiniMaxM2};

// The text that ends a string parameter's value in an XML-like format.
std::string value_close(ToolCallFormat f) {
    return f == ToolCallFormat::Glm45 || f == ToolCallFormat::Glm47 ? "</arg_value>" : "</parameter>";
}

api::ToolGrammarTool booking_tool() {
    return {"book", nlohmann::ordered_json::parse(R"({"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"},
        "day": {"type": "string", "format": "date"},
        "note": {"type": "string", "pattern": "^a(.|\\n)*z$"}},
        "required": ["code", "day"]})")};
}

}  // namespace

TEST_CASE("XML-like formats: a string parameter's pattern and format hold for its raw text", "[server][tools][xml]") {
    for (ToolCallFormat f : kXmlFormats) {
        INFO("format " << engine::chat::tool_call_format_name(f));
        const std::string gbnf = api::tool_call_grammar(api::tool_syntax(f), {booking_tool()}, false);
        INFO(gbnf);
        const engine::GrammarMatcher m(gbnf);
        auto call = [&](const std::string& code, const std::string& day) {
            return xml_call(f, "book", {{"code", code}, {"day", day}});
        };
        CHECK(m.matches(call("ABC-12", "2024-02-29")));
        CHECK(m.matches(xml_call(f, "book", {{"code", "XYZ-00"}, {"day", "1999-12-31"}, {"note", "a<b>z"}})));
        CHECK_FALSE(m.accepts_prefix(call("AB-12", "2024-02-29")));
        CHECK_FALSE(m.accepts_prefix(call("ABC-123", "2024-02-29")));
        CHECK_FALSE(m.accepts_prefix(call("abc-12", "2024-02-29")));
        CHECK_FALSE(m.accepts_prefix(call("\"ABC-12\"", "2024-02-29")));  // not JSON: the text itself
        CHECK_FALSE(m.accepts_prefix(call("ABC-12", "2023-02-29")));
        CHECK_FALSE(m.accepts_prefix(call("ABC-12", "2024-13-01")));
        CHECK_FALSE(m.accepts_prefix(call("ABC-12", "24-01-01")));
        // A value matching its pattern may hold '<', never its own closing tag (the parser would end it there).
        CHECK_FALSE(m.matches(xml_call(f, "book", {{"code", "XYZ-00"}, {"day", "1999-12-31"},
                                                   {"note", "a" + value_close(f) + "z"}})));
    }
}

TEST_CASE("XML-like formats: a pattern's and a format's raw text parses back unchanged", "[server][tools][xml]") {
    for (ToolCallFormat f : kXmlFormats) {
        INFO("format " << engine::chat::tool_call_format_name(f));
        const std::string note = "a<b></b>\n<parameter z";
        const std::string text = xml_call(f, "book", {{"code", "ABC-12"}, {"day", "2024-02-29"}, {"note", note}});
        INFO(text);
        REQUIRE(engine::GrammarMatcher(api::tool_call_grammar(api::tool_syntax(f), {booking_tool()}, false)).matches(text));
        engine::chat::ParseOptions o;
        o.tool_format = f;
        o.string_parameters = {{"book", {"code", "day", "note"}}};
        const auto parsed = engine::chat::parse_output(text, o);
        REQUIRE(parsed.tool_calls.size() == 1);
        CHECK(parsed.tool_calls[0].name == "book");
        CHECK(nlohmann::json::parse(parsed.tool_calls[0].arguments) ==
              nlohmann::json{{"code", "ABC-12"}, {"day", "2024-02-29"}, {"note", note}});
    }
}

TEST_CASE("XML-like formats: a pattern no raw text can match is refused naming the parameter", "[server][tools][xml]") {
    const api::ToolGrammarTool tool{"f", nlohmann::ordered_json::parse(
                                             R"({"type": "object", "properties": {"x": {"type": "string",
                                             "pattern": "^<b></parameter>$"}}, "required": ["x"]})")};
    try {
        (void)api::tool_call_grammar(api::tool_syntax(ToolCallFormat::Qwen3Coder), {tool}, false);
        FAIL("no error");
    } catch (const engine::SchemaError& e) {
        CHECK(e.pointer == "/properties/x/pattern");
        CHECK(e.reason.find("no text matches") != std::string::npos);
    }
    // Glm's closing tag is another: the same pattern is fine there.
    CHECK_NOTHROW(api::tool_call_grammar(api::tool_syntax(ToolCallFormat::Glm47), {tool}, false));
}

TEST_CASE("a reply cut by the token limit inside a call: the unfinished markup is not content", "[server][tools]") {
    const std::string text = "Let me check. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs +
                             "}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"argu";
    const auto triggers = api::tool_syntax(ToolCallFormat::Hermes).triggers;
    // Whole: one call, the text before it, none of the second call's start.
    const auto whole = api::parse_reply(text, options(ToolCallFormat::Hermes), triggers, true);
    CHECK(whole.tool_calls.size() == 1);
    CHECK(whole.content == "Let me check.");
    // Streamed: the same content and nothing of the markup at the end.
    api::ChatStreamParser p(options(ToolCallFormat::Hermes), triggers);
    std::string content;
    for (const char ch : text) content += p.feed(std::string(1, ch)).content;
    const auto fin = p.finish(true);
    content += fin.delta.content;
    CHECK(content == "Let me check.");
    CHECK(fin.parsed.content == "Let me check.");
    CHECK(fin.parsed.tool_calls.size() == 1);
    // Not cut by the limit (a stop): what does not parse stays content, as before.
    const auto stopped = api::parse_reply(text, options(ToolCallFormat::Hermes), triggers, false);
    CHECK(stopped.content.find("<tool_call>") != std::string::npos);
    // A trigger that starts with a space (Firefunction's " functools[") is found in the trimmed content too.
    const auto ff = api::tool_syntax(ToolCallFormat::FireFunction).triggers;
    const auto cut = api::parse_reply(" functools[{\"name\": \"get_weather\", \"argu",
                                      options(ToolCallFormat::FireFunction), ff, true);
    CHECK(cut.content.empty());
    CHECK(cut.tool_calls.empty());
}

// gpt-oss without a call: the analysis channel streams as reasoning, the final channel as content, and no
// Harmony marker (nor part of one) reaches either while the reply grows, in pieces of any size; with
// reasoning_format none the reply streams as written.
TEST_CASE("gpt-oss replies stream their channels without markup", "[server][tools]") {
    struct Case {
        std::string reply, reasoning, content, raw;
    };
    const std::string S = "<|end|><|start|>assistant";
    const std::vector<Case> cases = {
        {"<|channel|>analysis<|message|>The user greets. Reply briefly." + S +
             "<|channel|>final<|message|>Hello! How can I help?",
         "The user greets. Reply briefly.", "Hello! How can I help?",
         "<|channel|>analysis<|message|>The user greets. Reply briefly.<|end|>Hello! How can I help?"},
        // Several messages joined as written, spaces kept, nothing after the final message.
        {"<|channel|>analysis<|message|>  " + S + "<|channel|>analysis<|message|> x \n" + S +
             "<|channel|>commentary<|message|>pre " + S + "<|channel|>final<|message|> a  " + S +
             "<|channel|>final<|message|>b",
         "   x \n", "pre  a  ",
         "<|channel|>analysis<|message|>  <|end|><|channel|>analysis<|message|> x \n<|end|>pre  a  b"},
    };
    for (const auto& c : cases) {
        for (bool reasoning : {true, false}) {
            engine::chat::ParseOptions o = options(ToolCallFormat::None);
            o.harmony = true;
            o.extract_reasoning = reasoning;
            const auto whole = engine::chat::parse_output(c.reply, o);
            CHECK(whole.reasoning_content == (reasoning ? c.reasoning : ""));
            CHECK(whole.content == (reasoning ? c.content : c.raw));
            for (size_t piece : {1, 2, 3, 7, 64}) {
                INFO(c.reply << ": reasoning " << reasoning << ", pieces of " << piece);
                api::ChatStreamParser p(o, {});
                std::string content, thought;
                for (size_t i = 0; i < c.reply.size(); i += piece) {
                    const auto d = p.feed(c.reply.substr(i, piece));
                    content += d.content;
                    thought += d.reasoning;
                    if (reasoning) {
                        CHECK(content.find("<|") == std::string::npos);
                        CHECK(thought.find("<|") == std::string::npos);
                    }
                }
                if (piece <= 3) CHECK(!content.empty());  // streamed before the end
                const auto fin = p.finish();
                content += fin.delta.content;
                thought += fin.delta.reasoning;
                CHECK(content == whole.content);
                CHECK(thought == whole.reasoning_content);
            }
        }
    }
}

// The generic syntax's reply without a call, {"response": "..."}, is content once unwrapped: a stream holds
// it back and sends the unwrapped text, as the whole reply's parse has it (it streamed the JSON itself, which
// the chat-parsers fuzz target found), also with space after the brace, as a pretty-printed object has it (it
// streamed those as JSON: the fuzz target again, with 70 carriage returns).
TEST_CASE("a generic reply's {\"response\": ...} streams as the text it wraps", "[server][tools]") {
    const auto o = options(ToolCallFormat::Generic);
    for (const std::string reply :
         {R"({"response": "just text"})", R"({ "response": "just text"})",
          "{\n  \"response\": \"just text\"\n}", "{\r\r\r\r\"response\": \"just text\"}"}) {
        INFO(reply);
        CHECK(engine::chat::parse_output(reply, o).content == "just text");
        for (size_t piece : {1, 3, 11, 64}) {
            INFO("pieces of " << piece);
            api::ChatStreamParser p(o, api::reply_triggers(api::tool_syntax(ToolCallFormat::Generic)));
            std::string content;
            for (size_t i = 0; i < reply.size(); i += piece)
                content += p.feed(reply.substr(i, piece)).content;
            CHECK(content.empty());
            content += p.finish().delta.content;
            CHECK(content == "just text");
        }
    }
    // A brace that opens no such object is content, streamed before the end.
    api::ChatStreamParser p(o, api::reply_triggers(api::tool_syntax(ToolCallFormat::Generic)));
    CHECK(p.feed("a set { of things } and more").content == "a set { of things } and more");
}
