// Statements: if, for (loop variables, else, filters, recursion, loop controls), set (names,
// tuples, blocks, namespaces), macros and call blocks, filter blocks, with, generation.
#include <catch2/catch.hpp>

#include "chat_test_util.h"

using chat_test::render;

TEST_CASE("if / elif / else pick the first true branch", "[jinja][stmt]") {
    const char* t = "{% if a %}A{% elif b %}B{% elif c %}C{% else %}D{% endif %}";
    CHECK(render(t, R"({"a": 1})") == "A");
    CHECK(render(t, R"({"b": 1, "c": 1})") == "B");
    CHECK(render(t, R"({"c": 1})") == "C");
    CHECK(render(t) == "D");
}

TEST_CASE("for exposes the loop variables", "[jinja][stmt][for]") {
    CHECK(render("{% for x in [10, 20, 30] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                 "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}") ==
          "1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;");
    CHECK(render("{% for x in [1, 2, 3] %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %}") ==
          "[|2][1|3][2|]");
    CHECK(render("{% for x in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{% endfor %}") == "aba");
    CHECK(render("{% for x in [1, 1, 2] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}") == "12");
}

TEST_CASE("for iterates dicts, strings and unpacks pairs", "[jinja][stmt][for]") {
    CHECK(render("{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}") == "ab");
    CHECK(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}") == "a=1;b=2;");
    CHECK(render("{% for k, v in {'a': 1} | items %}{{ k }}{{ v }}{% endfor %}") == "a1");
    CHECK(render("{% for (a, b) in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}") == "37");
    CHECK(render("{% for c in 'hé' %}[{{ c }}]{% endfor %}") == "[h][\xc3\xa9]");
}

TEST_CASE("for else runs when nothing was iterated - inline filters shape the loop", "[jinja][stmt][for]") {
    CHECK(render("{% for x in [] %}a{% else %}empty{% endfor %}") == "empty");
    CHECK(render("{% for x in missing %}a{% else %}none{% endfor %}") == "none");
    CHECK(render("{% for x in [1, 2, 3, 4] if x is even %}{{ x }}/{{ loop.length }} {% endfor %}") ==
          "2/2 4/2 ");
}

TEST_CASE("break and continue", "[jinja][stmt][for]") {
    CHECK(render("{% for x in [1, 2, 3, 4, 5] %}{% if x == 2 %}{% continue %}{% endif %}"
                 "{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}") == "13");
    CHECK(render("{% for x in [1, 2] %}{% for y in [1, 2] %}{% if y == 2 %}{% break %}{% endif %}"
                 "{{ x }}{{ y }} {% endfor %}{% endfor %}") == "11 21 ");
}

TEST_CASE("recursive loops call loop() on children", "[jinja][stmt][for]") {
    const char* ctx = R"({"tree": [{"name": "a", "children": [{"name": "b", "children": []}, {"name": "c"}]},
                                   {"name": "d"}]})";
    CHECK(
        render(
            "{% for item in tree recursive %}<{{ item.name }}{% if item.children %}:{{ loop(item.children) }}"
            "{% endif %}>{{ loop.depth }}{% endfor %}",
            ctx) == "<a:<b>2<c>2>1<d>1");
}

TEST_CASE("loop scopes keep assignments inside - namespaces carry state out", "[jinja][stmt][scope]") {
    CHECK(render("{% set c = 0 %}{% for i in [1, 2, 3] %}{% set c = c + i %}{{ c }}{% endfor %}|{{ c }}") ==
          "123|0");
    CHECK(render("{% set ns = namespace(total=0) %}{% for i in [1, 2, 3] %}{% set ns.total = ns.total + i %}"
                 "{% endfor %}{{ ns.total }}") == "6");
    CHECK(render("{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}") == "2");
    CHECK(render("{% set ns = namespace() %}{% set ns.a = 'v' %}{{ ns.a }}") == "v");
}

TEST_CASE("set assigns names, tuples and blocks", "[jinja][stmt][set]") {
    CHECK(render("{% set a, b = 1, 2 %}{{ a }}{{ b }}") == "12");
    CHECK(render("{% set t = 1, 2 %}{{ t }}") == "(1, 2)");
    CHECK(render("{% set x %}  block {{ 1 + 1 }}  {% endset %}[{{ x }}]") == "[  block 2  ]");
    CHECK(render("{% set y | upper | trim %} abc {% endset %}[{{ y }}]") == "[ABC]");
    CHECK(render("{% set messages = messages[1:] %}{{ messages }}", R"({"messages": [1, 2]})") == "[2]");
}

TEST_CASE("macros take positional, keyword and default arguments", "[jinja][stmt][macro]") {
    const char* m = "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}";
    CHECK(render(std::string(m) +
                 "{{ greet('Bob') }} {{ greet('Al', greeting='Hi') }} {{ greet(name='X') }}") ==
          "Hello, Bob! Hi, Al! Hello, X!");
    CHECK(render("{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, a=3) }}") ==
          "(1, 2){'a': 3}");
    CHECK(render("{% macro m(a, b=a * 2) %}{{ a }}{{ b }}{% endmacro %}{{ m(3) }}") == "36");
    CHECK(render("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}") ==
          "321");
}

TEST_CASE("macros see the variables of their defining scope at call time", "[jinja][stmt][macro]") {
    CHECK(render("{% macro m() %}{{ x }}{% endmacro %}{% set x = 5 %}{{ m() }}") == "5");
}

TEST_CASE("call blocks pass a caller to the macro", "[jinja][stmt][macro]") {
    CHECK(render("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                 "{% call wrap('b') %}inner{% endcall %}") == "<b>inner</b>");
    CHECK(render("{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}"
                 "{% call(item) each([1, 2]) %}[{{ item }}]{% endcall %}") == "[1][2]");
}

TEST_CASE("filter blocks, with blocks, generation blocks", "[jinja][stmt]") {
    CHECK(render("{% filter upper %}hello {{ 'x' }}{% endfilter %}") == "HELLO X");
    CHECK(render("{% filter replace('a', 'o') | upper %}banana{% endfilter %}") == "BONONO");
    CHECK(render("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]") == "3[]");
    CHECK(render("{% generation %}assistant text{% endgeneration %}") == "assistant text");
}

TEST_CASE("globals: range, dict, namespace, joiner", "[jinja][stmt][globals]") {
    CHECK(render("{{ range(4) | list }} {{ range(1, 10, 3) | list }} {{ range(5, 0, -2) | list }}") ==
          "[0, 1, 2, 3] [1, 4, 7] [5, 3, 1]");
    CHECK(render("{{ dict(a=1, b='x') }} {{ dict([('k', 2)]) }}") == "{'a': 1, 'b': 'x'} {'k': 2}");
    CHECK(render("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}") == "12");
    CHECK(render("{% set j = joiner('|') %}{% for x in [1, 2, 3] %}{{ j() }}{{ x }}{% endfor %}") == "1|2|3");
}

TEST_CASE("strftime_now formats the render clock", "[jinja][stmt][globals]") {
    engine::jinja::RenderOptions options;
    options.now = std::chrono::system_clock::from_time_t(1721995200);  // 2024-07-26 12:00 UTC
    const engine::jinja::Template t("{{ strftime_now('%Y-%m') }}");
    CHECK(t.render(chat_test::Json::object(), options) == "2024-07");
}
