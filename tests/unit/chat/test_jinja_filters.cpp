// Every built-in filter, with jinja2's signatures and results.
#include <catch2/catch.hpp>

#include "chat_test_util.h"

using chat_test::render;

TEST_CASE("string filters", "[jinja][filters]") {
    CHECK(render("[{{ '  hi  ' | trim }}][{{ 'xxhixx' | trim('x') }}]") == "[hi][hi]");
    CHECK(render("{{ 'abc' | upper }} {{ 'ABC' | lower }} {{ 'hELLO wORLD' | capitalize }}") ==
          "ABC abc Hello world");
    CHECK(render("{{ 'hello big-world (x)' | title }}") == "Hello Big-World (X)");
    CHECK(render("{{ 'a b a' | replace('a', 'o') }} {{ 'aaa' | replace('a', 'b', 2) }}") == "o b o bba");
    CHECK(render("{{ 1 | string }} {{ none | string }} {{ [1] | string }} {{ none | trim }}") ==
          "1 None [1] None");
    CHECK(render("{{ 'one two  three' | wordcount }}") == "3");
    CHECK(render("[{{ 'abc' | center(7) }}]") == "[  abc  ]");
    CHECK(render("{{ 'hello world foo' | truncate(9) }}|{{ 'hello world foo' | truncate(9, true) }}|{{ "
                 "'short' | truncate(9) }}") == "hello...|hello ...|short");
    CHECK(render("{{ '%s is %d' | format('x', 3) }}") == "x is 3");
    CHECK(render("{{ '<a href=\"x\">&\\'</a>' | e }} {{ '<b>' | escape }} {{ '<i>' | safe }}") ==
          "&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt; &lt;b&gt; <i>");
}

TEST_CASE("indent follows jinja2 (first line and blank lines left alone by default)", "[jinja][filters]") {
    CHECK(render("{{ 'a\nb\n\nc' | indent(2) }}") == "a\n  b\n\n  c");
    CHECK(render("{{ 'a\nb' | indent(2, true) }}") == "  a\n  b");
    CHECK(render("{{ 'a\n\nb' | indent(2, blank=true) }}") == "a\n  \n  b");
    CHECK(render("{{ 'x\ny' | indent('> ', first=true) }}") == "> x\n> y");
}

TEST_CASE("length, count, first, last", "[jinja][filters]") {
    CHECK(render(
              "{{ [1, 2] | length }} {{ 'héllo' | length }} {{ {'a': 1} | count }} {{ missing | length }}") ==
          "2 5 1 0");
    CHECK(render("{{ [1, 2, 3] | first }} {{ [1, 2, 3] | last }} {{ 'abc' | first }} {{ 'abc' | last }}") ==
          "1 3 a c");
    CHECK(render("[{{ [] | first }}]") == "[]");
}

TEST_CASE("join, with separator and attribute", "[jinja][filters]") {
    CHECK(render("{{ [1, 2, 3] | join }} {{ ['a', 'b'] | join(', ') }}") == "123 a, b");
    CHECK(render("{{ users | join('|', attribute='n') }}", R"({"users": [{"n": "x"}, {"n": "y"}]})") ==
          "x|y");
}

TEST_CASE("default / d", "[jinja][filters]") {
    CHECK(render("{{ missing | default('d') }} {{ none | default('d') }} {{ '' | default('d', true) }} {{ 0 "
                 "| d(7) }}") == "d None d 0");
    CHECK(render("{{ missing | d }}|") == "|");
}

TEST_CASE("tojson writes Python json.dumps output", "[jinja][filters][json]") {
    CHECK(render("{{ {'a': [1, 2.5, none, true], 'b': 'é\"\\n'} | tojson }}") ==
          "{\"a\": [1, 2.5, null, true], \"b\": \"\xc3\xa9\\\"\\n\"}");
    CHECK(render("{{ {'a': {'b': []}, 'c': {}} | tojson(indent=2) }}") ==
          "{\n  \"a\": {\n    \"b\": []\n  },\n  \"c\": {}\n}");
    CHECK(render("{{ 'é😀' | tojson(ensure_ascii=True) }}") == "\"\\u00e9\\ud83d\\ude00\"");
    CHECK(render("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}") == "{\"a\": 2, \"b\": 1}");
    CHECK(render("{{ {'a': 1, 'b': 2} | tojson(separators=(',', ':')) }}") == "{\"a\":1,\"b\":2}");
    CHECK(render("{{ tools | tojson }}", R"({"tools": [{"z": 1, "a": {"y": 1e100}}]})") ==
          "[{\"z\": 1, \"a\": {\"y\": 1e+100}}]");
    CHECK(render("{{ '\\u0001\\t' | tojson }}") == "\"\\u0001\\t\"");
}

TEST_CASE("from_json parses JSON text", "[jinja][filters][json]") {
    CHECK(render("{% set o = s | from_json %}{{ o.a[1] }}", R"({"s": "{\"a\": [1, 2]}"})") == "2");
}

TEST_CASE("numeric filters", "[jinja][filters]") {
    CHECK(render("{{ 3.7 | int }} {{ '42' | int }} {{ ' 7 ' | int }} {{ 'x' | int }} {{ 'x' | int(9) }} {{ "
                 "'3.9' | int }}") == "3 42 7 0 9 3");
    CHECK(render("{{ 'ff' | int(base=16) }} {{ '3.5' | float }} {{ 3 | float }} {{ 'no' | float }}") ==
          "255 3.5 3.0 0.0");
    CHECK(render("{{ 2.5 | round }} {{ 3.5 | round }} {{ 3.14159 | round(2) }} {{ 3.1 | round(0, 'ceil') }} "
                 "{{ 3.9 | round(method='floor') }}") == "2.0 4.0 3.14 4.0 3.0");
    CHECK(render("{{ -3 | abs }} {{ -2.5 | abs }}") == "3 2.5");
    CHECK(
        render("{{ [3, 1, 2] | min }} {{ [3, 1, 2] | max }} {{ [1, 2, 3] | sum }} {{ ['b', 'A'] | min }}") ==
        "1 3 6 A");
    CHECK(render("{{ items | sum(attribute='n') }}", R"({"items": [{"n": 1}, {"n": 2}]})") == "3");
}

TEST_CASE("list, items, dictsort", "[jinja][filters]") {
    CHECK(render("{{ 'abc' | list }} {{ {'a': 1} | list }} {{ (1, 2) | list }}") ==
          "['a', 'b', 'c'] ['a'] [1, 2]");
    CHECK(render("{{ {'b': 1, 'a': 2} | items | list }}") == "[('b', 1), ('a', 2)]");
    CHECK(render("{{ {'b': 1, 'A': 2} | dictsort }} {{ {'b': 1, 'a': 2} | dictsort(by='value') }}") ==
          "[('A', 2), ('b', 1)] [('b', 1), ('a', 2)]");
    CHECK(render("{{ {'b': 1, 'a': 2} | dictsort(reverse=true) }}") == "[('b', 1), ('a', 2)]");
}

TEST_CASE("select, reject, selectattr, rejectattr, map", "[jinja][filters]") {
    const char* users =
        R"({"users": [{"name": "a", "active": true, "age": 3}, {"name": "b", "active": false}]})";
    CHECK(render("{{ users | selectattr('active') | map(attribute='name') | join(',') }}", users) == "a");
    CHECK(render("{{ users | rejectattr('active') | map(attribute='name') | list }}", users) == "['b']");
    CHECK(render("{{ users | selectattr('name', 'equalto', 'b') | list | length }}", users) == "1");
    CHECK(render("{{ users | selectattr('age', 'defined') | map(attribute='name') | first }}", users) == "a");
    CHECK(render("{{ users | map(attribute='age', default=0) | list }}", users) == "[3, 0]");
    CHECK(render("{{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2, 3] | reject('gt', 1) | list }}") ==
          "[1, 3] [1]");
    CHECK(render("{{ [0, 1, '', 'x'] | select | list }}") == "[1, 'x']");
    CHECK(render("{{ ['a', 'b'] | map('upper') | list }} {{ [' a '] | map('trim') | list }}") ==
          "['A', 'B'] ['a']");
    CHECK(render("{{ none | selectattr('x') | list }} {{ none | map('upper') | list }}") == "[] []");
    CHECK(render("{{ rows | map(attribute='p.q') | list }}", R"({"rows": [{"p": {"q": 1}}]})") == "[1]");
}

TEST_CASE("unique, reverse, sort, batch", "[jinja][filters]") {
    CHECK(render("{{ [1, 2, 2, 3, 1] | unique | list }} {{ ['a', 'A', 'b'] | unique | list }}") ==
          "[1, 2, 3] ['a', 'b']");
    CHECK(render("{{ [1, 2, 3] | reverse | list }} {{ 'abc' | reverse }}") == "[3, 2, 1] cba");
    CHECK(
        render("{{ [3, 1, 2] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ ['b', 'A', 'c'] | sort }}") ==
        "[1, 2, 3] [3, 2, 1] ['A', 'b', 'c']");
    CHECK(render("{{ ['b', 'A'] | sort(case_sensitive=true) }}") == "['A', 'b']");
    CHECK(render("{{ items | sort(attribute='k') | map(attribute='v') | join }}",
                 R"({"items": [{"k": 2, "v": "b"}, {"k": 1, "v": "a"}]})") == "ab");
    CHECK(render("{{ [1, 2, 3] | batch(2) | list }} {{ [1, 2, 3] | batch(2, 0) | list }}") ==
          "[[1, 2], [3]] [[1, 2], [3, 0]]");
}

TEST_CASE("attr filter reads an attribute by name", "[jinja][filters]") {
    CHECK(render("{{ d | attr('k') }}", R"({"d": {"k": "v"}})") == "v");
}
