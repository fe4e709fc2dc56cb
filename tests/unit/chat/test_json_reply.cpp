// The content of a reply written under a response format: the JSON value without the whitespace and the
// "```json" fence llama-server's chat grammar allows around it (engine/chat/json_reply.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/chat/chat_parser.h"
#include "engine/chat/json_reply.h"

using engine::chat::json_reply_content;

TEST_CASE("json reply: the value without the whitespace and fence around it", "[chat][json_reply]") {
    CHECK(json_reply_content("  {\"a\": 1}  \n", false) == "{\"a\": 1}");
    CHECK(json_reply_content("\n\n```json\n{\"a\": [1, {\"b\": \"}\"}]}\n```\n", false) ==
          "{\"a\": [1, {\"b\": \"}\"}]}");
    CHECK(json_reply_content("```json [\"x`y\", \"``` \\\"\"] ```", false) == "[\"x`y\", \"``` \\\"\"]");
    CHECK(json_reply_content(" \"red\"  ", false) == "\"red\"");
    CHECK(json_reply_content("\"a\\\"b\" \n", false) == "\"a\\\"b\"");
    CHECK(json_reply_content("\n\n30 \n", false) == "30");
    CHECK(json_reply_content("-3.5e+2```", false) == "-3.5e+2");
    CHECK(json_reply_content("true", false) == "true");
    CHECK(json_reply_content("", false).empty());
    // Cut before any value: the text as written, as llama-server answers.
    CHECK(json_reply_content(" \n \n   ", false) == " \n \n   ");
    CHECK(json_reply_content("\n``", false) == "\n``");
    // An unfinished value (the token limit cut it) is content as far as it goes, its whitespace included.
    CHECK(json_reply_content("{ \n   ", false) == "{ \n   ");
    CHECK(json_reply_content("```json\n{\"a\": \"x ", false) == "{\"a\": \"x ");
}

TEST_CASE("json reply: a growing text only ever extends what was sent", "[chat][json_reply]") {
    const std::vector<std::string> replies = {
        "\n ```json\n  {\"k\": [1, 2, {\"s\": \"a\\\\\\\" ``` }\"}]}\n  ```\n \n",
        "  42 \n\n",
        "[\n  \"x\",\n  \"y\"\n]   ",
        "{\"open\": \"never closed",
        " \n ```json\n",
    };
    for (const std::string& text : replies) {
        INFO(text);
        std::string sent;
        engine::chat::JsonReplyReader reader;  // reads only what each longer text adds
        for (size_t n = 0; n <= text.size(); ++n) {
            const std::string now = json_reply_content(text.substr(0, n), true);
            INFO(n << ": " << now);
            REQUIRE(now.compare(0, sent.size(), sent) == 0);  // extends what went out
            REQUIRE(reader.content(text.substr(0, n), true) == now);
            sent = now;
        }
        REQUIRE(reader.content(text, false) == json_reply_content(text, false));
        const std::string final_content = json_reply_content(text, false);
        REQUIRE(final_content.compare(0, sent.size(), sent) == 0);
        if (!sent.empty()) CHECK(final_content == sent);  // nothing held back once a value began
    }
    // A fence still being written is held back; a value is not.
    CHECK(json_reply_content("  ``", true).empty());
    CHECK(json_reply_content("```jso", true).empty());
    CHECK(json_reply_content("{", true) == "{");
}

TEST_CASE("json reply: the parsed reply's content is the value and its reasoning stays apart",
          "[chat][json_reply]") {
    engine::chat::ParseOptions o;
    o.json_reply = true;
    const auto parsed = engine::chat::parse_output("<think>\nPlan it.\n</think>\n\n```json\n{\"a\": 1}\n```\n", o);
    CHECK(parsed.reasoning_content == "Plan it.");
    CHECK(parsed.content == "{\"a\": 1}");
}
