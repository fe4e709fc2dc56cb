// Lexer: tokens, literals and the whitespace control HF applies (trim_blocks, lstrip_blocks).
#include <catch2/catch.hpp>

#include "chat_test_util.h"
#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_lexer.h"

using chat_test::render;
using engine::jinja::TemplateError;
using engine::jinja::Token;
using engine::jinja::tokenize;
using engine::jinja::TokenType;

TEST_CASE("lexer splits text and tags into tokens with positions", "[jinja][lexer]") {
    const auto toks = tokenize("ab {{ x.y + 2 }}\n{% if a %}");
    REQUIRE(toks.size() == 14);
    CHECK(toks[0].type == TokenType::Text);
    CHECK(toks[0].text == "ab ");
    CHECK(toks[1].type == TokenType::VarBegin);
    CHECK(toks[2].type == TokenType::Name);
    CHECK(toks[2].text == "x");
    CHECK(toks[2].column == 7);
    CHECK(toks[3].text == ".");
    CHECK(toks[5].text == "+");
    CHECK(toks[6].type == TokenType::Integer);
    CHECK(toks[6].int_value == 2);
    CHECK(toks[7].type == TokenType::VarEnd);
    CHECK(toks[8].text == "\n");
    CHECK(toks[9].type == TokenType::BlockBegin);
    CHECK(toks[9].line == 2);
    CHECK(toks[9].column == 1);
    CHECK(toks[10].text == "if");
    CHECK(toks[12].type == TokenType::BlockEnd);
    CHECK(toks[13].type == TokenType::End);
}

TEST_CASE("lexer reads numbers and strings like Python", "[jinja][lexer]") {
    const auto toks = tokenize(R"({{ 1_000 0x1F 1.5e3 2e-2 'a\'b' "\n\t\u00e9" 'x\q' }})");
    CHECK(toks[1].int_value == 1000);
    CHECK(toks[2].int_value == 31);
    CHECK(toks[3].type == TokenType::Float);
    CHECK(toks[3].float_value == 1500.0);
    CHECK(toks[4].float_value == Approx(0.02));
    CHECK(toks[5].text == "a'b");
    CHECK(toks[6].text == "\n\t\xc3\xa9");
    CHECK(toks[7].text == "x\\q");  // unknown escapes keep the backslash
    CHECK(render("{{ 'a' \"b\" }}") == "ab");
}

TEST_CASE("an integer after a dot stays an integer (item access)", "[jinja][lexer]") {
    CHECK(render("{{ x.0 }}", R"({"x": ["first"]})") == "first");
}

TEST_CASE("trim_blocks removes the newline after block and comment tags", "[jinja][lexer]") {
    CHECK(render("{% if true %}\nyes\n{% endif %}\nafter") == "yes\nafter");
    CHECK(render("a{# note #}\nb") == "ab");
    CHECK(render("{{ 'v' }}\nx") == "v\nx");  // not after variables
}

TEST_CASE("lstrip_blocks strips indentation before block tags only", "[jinja][lexer]") {
    CHECK(render("  {% if true %}x{% endif %}\n  {{ 'v' }}") == "x  v");  // endif also eats its newline
    CHECK(render("a\n    {% if true %}\n    b\n    {% endif %}\nc") == "a\n    b\nc");
    CHECK(render("<{% set x = 1 %}\n>") == "<>");
    CHECK(render("text  {% if true %}x{% endif %}") == "text  x");  // not at line start
}

TEST_CASE("minus modifiers strip all whitespace on their side", "[jinja][lexer]") {
    CHECK(render("a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}\n  c") == "abc");
    CHECK(render("{{- '  a  ' -}}  {{ 'b' }}\n{#- c -#}\n  d") == "  a  bd");
    CHECK(render("x {{- 1 }} {{ 2 -}} y") == "x1 2y");
}

TEST_CASE("plus modifiers disable lstrip_blocks and trim_blocks", "[jinja][lexer]") {
    CHECK(render("  {%+ if true %}x{% endif %}") == "  x");
    CHECK(render("{% if true +%}\nx{% endif %}") == "\nx");
}

TEST_CASE("one trailing newline of the template is dropped", "[jinja][lexer]") {
    CHECK(render("a\n") == "a");
    CHECK(render("a\n\n") == "a\n");
    CHECK(render("line1\r\nline2\r\n") == "line1\nline2");
}

TEST_CASE("raw blocks keep template syntax as text", "[jinja][lexer]") {
    CHECK(render("{% raw %}{{ x }}{% if %}{% endraw %}") == "{{ x }}{% if %}");
    CHECK(render("{% raw -%}  {{ a }}  {%- endraw %}|") == "{{ a }}|");
}

TEST_CASE("closing braces inside a print tag belong to dict literals", "[jinja][lexer]") {
    CHECK(render("{{ {'a': {'b': 1}} }}") == "{'a': {'b': 1}}");
    CHECK(render("{{ {'k': 'v'}['k']}}") == "v");
}

TEST_CASE("lexer errors carry the position of the offending character", "[jinja][lexer][errors]") {
    try {
        tokenize("ok\n  {{ 'unterminated }}");
        FAIL("expected a syntax error");
    } catch (const TemplateError& e) {
        CHECK(e.kind() == TemplateError::Kind::Syntax);
        CHECK(e.line() == 2);
        CHECK(e.column() == 6);
        CHECK(e.message() == "unterminated string");
    }
    CHECK_THROWS_WITH(tokenize("{{ a ? b }}"), "line 1, column 6: unexpected char '?'");
    CHECK_THROWS_WITH(tokenize("{# open comment"), "line 1, column 1: missing end of comment tag");
    CHECK_THROWS_WITH(tokenize("{{ a )}}"), "line 1, column 6: unexpected ')'");
    CHECK_THROWS_WITH(tokenize("{% if x"), "line 1, column 8: unexpected end of template, expected '%}'");
}
