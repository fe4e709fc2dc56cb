// Expressions: literals, operators with Python semantics, access, tests and precedence.
#include <catch2/catch.hpp>

#include "chat_test_util.h"

using chat_test::render;

TEST_CASE("literals render like Python's str()", "[jinja][expr]") {
    CHECK(render("{{ 42 }} {{ -3 }} {{ 1.5 }} {{ 1.0 }} {{ 'str' }}") == "42 -3 1.5 1.0 str");
    CHECK(render("{{ true }} {{ False }} {{ none }} {{ None }}") == "True False None None");
    CHECK(render("{{ [1, 'a', none, true, 2.5] }}") == "[1, 'a', None, True, 2.5]");
    CHECK(render("{{ {'a': 1, 'b': [2]} }}") == "{'a': 1, 'b': [2]}");
    CHECK(render("{{ (1, 2) }} {{ (1,) }} {{ () }}") == "(1, 2) (1,) ()");
    CHECK(render("{{ \"it's\" }} {{ ['it\\'s', 'q\"'] }}") == "it's [\"it's\", 'q\"']");
}

TEST_CASE("floats print with Python's shortest repr", "[jinja][expr]") {
    CHECK(render("{{ 0.1 + 0.2 }}") == "0.30000000000000004");
    CHECK(render("{{ 1e20 }} {{ 1e-5 }} {{ 1e15 }} {{ 1e16 }} {{ 0.0001 }}") ==
          "1e+20 1e-05 1000000000000000.0 1e+16 0.0001");
    CHECK(render("{{ -0.0 }} {{ 3.14159 }}") == "-0.0 3.14159");
}

TEST_CASE("arithmetic follows Python", "[jinja][expr]") {
    CHECK(render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 10 - 2 - 3 }}") == "7 9 5");
    CHECK(render("{{ 7 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7.5 // 2 }}") == "3.5 2.0 3 -4 3.0");
    CHECK(render("{{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 5.5 % 2 }}") == "1 2 -2 1.5");
    CHECK(render("{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 3 ** 2 }} {{ (-2) ** 3 }}") == "1024 0.5 64 -8");
    CHECK(render("{{ -2 ** 2 }} {{ 1 + 1.5 }} {{ true + 1 }}") == "4 2.5 2");
    CHECK(render("{{ 'ab' * 3 }} {{ 2 * 'x' }} {{ [1] * 2 }}") == "ababab xx [1, 1]");
    CHECK(render("{{ 'a' + 'b' }} {{ [1] + [2] }}") == "ab [1, 2]");
}

TEST_CASE("percent formats strings printf-style", "[jinja][expr]") {
    CHECK(render("{{ '%s=%d' % ('x', 3) }} {{ '%.2f' % 3.14159 }} {{ '%r' % 'x' }} {{ '%d%%' % 50 }}") ==
          "x=3 3.14 'x' 50%");
    CHECK(render("{{ '[%5s|%-5s|%.2s]' % ('a', 'b', 'xyz') }} {{ '[%3s]' % 'é' }} {{ '%05.1f|%x' % (2.25, 255) }}") ==
          "[    a|b    |xy] [  \xc3\xa9] 002.2|ff");
    CHECK(render("{{ '[%4096s]' % '' }}").size() == 4098);
}

TEST_CASE("percent format widths and precisions are bounded", "[jinja][expr]") {
    // Found by the jinja fuzz target: "%<17 digits>s" asked for that many bytes (ASan: allocation too big).
    for (const char* t : {"{{ '%99999999999999999s' % 'x' }}", "{{ '%4097d' % 1 }}", "{{ '%.99999999999999999999f' % 1.0 }}",
                          "{{ '%-4097r' % 'x' }}"})
        CHECK_THROWS_WITH(render(t), Catch::Contains("exceeds the limit of 4096"));
}

TEST_CASE("tilde concatenates string forms of any values", "[jinja][expr]") {
    CHECK(render("{{ 'a' ~ 1 ~ none ~ true ~ undefined_thing }}") == "a1NoneTrue");
}

TEST_CASE("comparisons chain and compare numbers across int and float", "[jinja][expr]") {
    CHECK(render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ true == 1 }}") == "True False True True");
    CHECK(render("{{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 2 >= 2 }} {{ 'x' != 'y' }}") ==
          "True True True True");
    CHECK(render("{{ {'a': 1, 'b': 2} == {'b': 2, 'a': 1} }} {{ [1] == [1.0] }} {{ none == none }}") ==
          "True True True");
}

TEST_CASE("in and not in work on strings, lists and dict keys", "[jinja][expr]") {
    CHECK(render("{{ 'at' in 'cat' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }}") ==
          "True True True True");
    CHECK(render("{{ 'x' in missing }}") == "False");
}

TEST_CASE("and/or return operands, not just booleans", "[jinja][expr]") {
    CHECK(render("{{ 1 and 2 }} {{ 0 or 'z' }} {{ none and 1 }} {{ '' or [] }}") == "2 z None []");
    CHECK(render("{{ not true or true }} {{ not (true or true) }}") == "True False");
}

TEST_CASE("ternary expressions, with and without else", "[jinja][expr]") {
    CHECK(render("{{ 'y' if 1 else 'n' }} {{ 'y' if 0 else 'n' }} [{{ 'y' if false }}]") == "y n []");
    CHECK(render("{{ 1 if 0 else 2 if 0 else 3 }}") == "3");
}

TEST_CASE("attribute, item and slice access", "[jinja][expr]") {
    const char* ctx = R"({"m": {"role": "user", "content": "hello", "list": [1, 2, 3]}})";
    CHECK(render("{{ m.role }} {{ m['content'] }} {{ m.list[0] }} {{ m.list[-1] }}", ctx) ==
          "user hello 1 3");
    CHECK(render("{{ m.list[1:] }} {{ m.list[::-1] }} {{ m.list[:-1] }} {{ m.list[0:3:2] }}", ctx) ==
          "[2, 3] [3, 2, 1] [1, 2] [1, 3]");
    CHECK(render("{{ m.content[1:3] }} {{ m.content[-1] }} {{ m.content[::-1] }}", ctx) == "el o olleh");
    CHECK(render("{{ 'héllo'[1] }} {{ 'héllo'[1:3] }}") == "\xc3\xa9 \xc3\xa9l");  // code points
    CHECK(render("[{{ m.missing }}][{{ m.list[10] }}][{{ none.x }}]", ctx) == "[][][]");
}

TEST_CASE("attribute access prefers dict methods, item access prefers keys", "[jinja][expr]") {
    const char* ctx = R"({"d": {"items": "key wins", "x": 1}})";
    CHECK(render("{{ d['items'] }}", ctx) == "key wins");
    CHECK(render("{{ d.items() | list }}", ctx) == "[('items', 'key wins'), ('x', 1)]");
}

TEST_CASE("filters bind tighter than binary operators", "[jinja][expr]") {
    CHECK(render("{{ 'a' + 'b' | upper }}") == "aB");
    CHECK(render("{{ -3 | abs }} {{ (1 + 2) | string }}") == "3 3");
    CHECK(render("{{ [1, 2] | length + 1 }}") == "3");
}

TEST_CASE("tests check types and values", "[jinja][expr][tests]") {
    CHECK(render("{{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 1 is not none }}") ==
          "False True True True");
    CHECK(render("{{ 'a' is string }} {{ {} is mapping }} {{ [] is mapping }} {{ [] is sequence }}") ==
          "True True False True");
    CHECK(render("{{ 'a' is iterable }} {{ 1 is iterable }} {{ x is iterable }}") == "True False True");
    CHECK(render("{{ 1 is number }} {{ true is number }} {{ 1 is integer }} {{ true is integer }} {{ 1.0 is "
                 "float }}") == "True True True False True");
    CHECK(render("{{ true is boolean }} {{ true is true }} {{ 1 is true }} {{ false is false }}") ==
          "True True False True");
    CHECK(render("{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }}") ==
          "True True True False");
    CHECK(render("{{ 2 is equalto 2 }} {{ 2 is eq 3 }} {{ 2 is ne 3 }} {{ 3 is gt 2 }} {{ 3 is le 2 }}") ==
          "True False True True False");
    CHECK(render("{{ 1 is in [1, 2] }} {{ 'a' is lower }} {{ 'A' is upper }} {{ range is callable }}") ==
          "True True True True");
    CHECK(render("{{ [] is sameas [] }} {{ none is sameas none }}") == "False True");
}

TEST_CASE("a test binds to the operand on its left only", "[jinja][expr][tests]") {
    CHECK(render("{{ 'x' ~ 1 is odd }}") == "xTrue");
    CHECK(render("{{ 'a' if x is none else 'b' }}", R"({"x": null})") == "a");
}
