// gpt-oss's Harmony replies read back (engine/chat/harmony.h): channels to reasoning and content, calls
// to functions in both header orders, text without a header, replies cut anywhere, and the markers a
// growing reply may end with.
#include <catch2/catch.hpp>

#include "engine/chat/chat_parser.h"
#include "engine/chat/harmony.h"

using namespace engine::chat;

namespace {

ParseOptions harmony_options(bool tools = true, bool reasoning = true) {
    ParseOptions o;
    o.harmony = true;
    o.tool_format = tools ? ToolCallFormat::Harmony : ToolCallFormat::None;
    o.extract_reasoning = reasoning;
    o.id_prefix = "call_";
    return o;
}

}  // namespace

TEST_CASE("harmony: analysis is the reasoning and final the content", "[chat][harmony]") {
    const auto out = parse_output(
        "<|channel|>analysis<|message|>User asks weather. Answer.<|end|><|start|>assistant<|channel|>final"
        "<|message|>It is sunny.",
        harmony_options());
    CHECK(out.reasoning_content == "User asks weather. Answer.");
    CHECK(out.content == "It is sunny.");
    CHECK(out.tool_calls.empty());
    // <|return|> when a reply shows it; final alone; analysis alone (cut before the answer)
    CHECK(parse_output("<|channel|>final<|message|>Hi.<|return|>", harmony_options()).content == "Hi.");
    const auto cut = parse_output("<|channel|>analysis<|message|>Thinking about it", harmony_options());
    CHECK(cut.reasoning_content == "Thinking about it");
    CHECK(cut.content.empty());
}

TEST_CASE("harmony: calls to functions in either header order, with a preamble", "[chat][harmony]") {
    const std::string args = R"({"city":"Paris"})";
    for (const std::string header :
         {"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
          " to=functions.get_weather<|channel|>commentary json<|message|>",
          "<|channel|>commentary to=functions.get_weather<|message|>"}) {
        INFO(header);
        const auto out = parse_output("<|channel|>analysis<|message|>Need a tool.<|end|><|start|>assistant" +
                                          header + args + "<|call|>",
                                      harmony_options());
        CHECK(out.reasoning_content == "Need a tool.");
        CHECK(out.content.empty());
        REQUIRE(out.tool_calls.size() == 1);
        CHECK(out.tool_calls[0].name == "get_weather");
        CHECK(out.tool_calls[0].arguments == args);
        CHECK(out.tool_calls[0].id == "call_0");
        // The reply's first message: the prompt's <|start|>assistant came before it.
        const auto first = parse_output(header + args, harmony_options());
        REQUIRE(first.tool_calls.size() == 1);
        CHECK(first.tool_calls[0].name == "get_weather");
    }
    // A preamble on the commentary channel (no recipient) is content; the call follows it.
    const auto pre = parse_output(
        "<|channel|>commentary<|message|>Checking the weather.<|end|><|start|>assistant<|channel|>commentary "
        "to=functions.get_weather <|constrain|>json<|message|>" +
            args,
        harmony_options());
    CHECK(pre.content == "Checking the weather.");
    REQUIRE(pre.tool_calls.size() == 1);
}

TEST_CASE("harmony: text without a header, reasoning kept as written, no tools", "[chat][harmony]") {
    CHECK(parse_output("Just an answer.", harmony_options()).content == "Just an answer.");
    CHECK(parse_output("I want to go", harmony_options()).content == "I want to go");
    const std::string reply =
        "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final<|message|>Ok.";
    const auto raw = parse_output(reply, harmony_options(false, false));
    CHECK(raw.reasoning_content.empty());
    // reasoning_format none, as llama-server 0.7.0 answers: the analysis as written, the final text after it
    CHECK(raw.content == "<|channel|>analysis<|message|>Hm.<|end|>Ok.");
    const std::string call = "<|start|>assistant<|channel|>commentary to=functions.f<|message|>{}";
    const auto raw_call =
        parse_output("<|channel|>analysis<|message|>Hm.<|end|>" + call, harmony_options(true, false));
    CHECK(raw_call.content == "<|channel|>analysis<|message|>Hm.<|end|>");
    CHECK(raw_call.tool_calls.size() == 1);
    // Without tools (or with tool_choice none) a message to a function is not a call, nor the answer: left
    // out.
    const auto uncalled = parse_output(
        "<|channel|>commentary "
        "to=functions.f<|message|>{}<|call|><|start|>assistant<|channel|>final<|message|>z",
        harmony_options(false));
    CHECK(uncalled.tool_calls.empty());
    CHECK(uncalled.content == "z");
}

// As llama-server 0.7.0 answers the same replies (compared side by side, forced by a grammar).
TEST_CASE("harmony: messages joined as written and the final message last", "[chat][harmony]") {
    const std::string S = "<|end|><|start|>assistant";
    auto out = parse_output("<|channel|>analysis<|message|>x" + S + "<|channel|>commentary<|message|>pre" +
                                S + "<|channel|>analysis<|message|>y" + S + "<|channel|>final<|message|>a",
                            harmony_options());
    CHECK(out.reasoning_content == "xy");
    CHECK(out.content == "prea");
    // Nothing is trimmed, but reasoning of whitespace alone is none.
    out = parse_output("<|channel|>analysis<|message|> why \n" + S + "<|channel|>final<|message|>  done  \n",
                       harmony_options());
    CHECK(out.reasoning_content == " why \n");
    CHECK(out.content == "  done  \n");
    out = parse_output("<|channel|>analysis<|message|>  " + S + "<|channel|>final<|message|>   ",
                       harmony_options());
    CHECK(out.reasoning_content.empty());
    CHECK(out.content == "   ");
    // What follows the final message is not read.
    out = parse_output("<|channel|>analysis<|message|>x" + S + "<|channel|>final<|message|>a" + S +
                           "<|channel|>analysis<|message|>b" + S + "<|channel|>final<|message|>c",
                       harmony_options());
    CHECK(out.reasoning_content == "x");
    CHECK(out.content == "a");
}

TEST_CASE("harmony: messages to built-in tools are not calls", "[chat][harmony]") {
    for (const std::string recipient : {"python", "browser.search", "container.exec"}) {
        INFO(recipient);
        const auto out = parse_output(
            "<|channel|>analysis<|message|>Run it.<|end|><|start|>assistant"
            "<|channel|>commentary to=" +
                recipient + " <|constrain|>json<|message|>print(1)<|call|>",
            harmony_options());
        CHECK(out.tool_calls.empty());
        CHECK(out.content.empty());
        CHECK(out.reasoning_content == "Run it.");
        CHECK(scan_harmony_calls("<|channel|>commentary to=" + recipient + "<|message|>{}", harmony_options())
                  .empty());
    }
}

TEST_CASE("harmony: a growing reply holds back partial markers and unfinished headers", "[chat][harmony]") {
    auto msgs = split_harmony("<|channel|>analysis<|message|>abc<|en");
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0].text == "abc");
    CHECK(!msgs[0].complete);
    msgs = split_harmony("<|channel|>analysis<|message|>abc<|end|><|start|>assistant<|chan");
    REQUIRE(msgs.size() == 2);
    CHECK(msgs[0].complete);
    CHECK(!msgs[1].has_body);
    msgs = split_harmony("Hello <|chan");
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0].text == "Hello ");
    // A call is named once its header is complete, its arguments grow.
    const ParseOptions o = harmony_options();
    CHECK(scan_harmony_calls("<|channel|>commentary to=functions.get_wea", o).empty());
    auto calls = scan_harmony_calls(
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"ci", o);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].named);
    CHECK(calls[0].name == "get_weather");
    CHECK(calls[0].arguments == "{\"ci");
    CHECK(!calls[0].complete);
}

TEST_CASE("harmony: hostile replies parse in bounded time without crashing", "[chat][harmony]") {
    std::string many;
    for (int i = 0; i < 20000; ++i) many += "<|start|><|channel|><|message|><|end|>";
    (void)parse_output(many, harmony_options());
    std::string markers;
    for (int i = 0; i < 20000; ++i) markers += "<|channel|> to=<|constrain|>";
    CHECK(parse_output(markers, harmony_options()).tool_calls.empty());
    CHECK(parse_output("<|message|>", harmony_options()).content.empty());
    CHECK(parse_output("<|start|>", harmony_options()).content.empty());
    CHECK(parse_output("", harmony_options()).content.empty());
}
