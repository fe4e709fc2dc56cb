// Python methods on strings, lists and dicts as templates call them.
#include <catch2/catch.hpp>

#include "chat_test_util.h"

using chat_test::render;

TEST_CASE("str.strip / lstrip / rstrip with and without characters", "[jinja][methods]") {
    CHECK(render("[{{ '  x \n'.strip() }}][{{ 'xxyxx'.lstrip('x') }}][{{ 'xxyxx'.rstrip('x') }}]") ==
          "[x][yxx][xxy]");
    CHECK(render("[{{ '\n\nthink'.lstrip('\n') }}]") == "[think]");
}

TEST_CASE("str.split / rsplit / splitlines", "[jinja][methods]") {
    CHECK(render("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }}") ==
          "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c']");
    CHECK(render("{{ 'a,b,c'.rsplit(',', 1) }} {{ 'x</think>y'.split('</think>')[-1] }}") ==
          "['a,b', 'c'] y");
    CHECK(render("{{ 'a\nb\r\nc'.splitlines() }}") == "['a', 'b', 'c']");
}

TEST_CASE("str predicates and search", "[jinja][methods]") {
    CHECK(
        render("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'abc'.startswith('b') }}") ==
        "True True False");
    CHECK(render("{{ 'abcabc'.find('c') }} {{ 'abcabc'.rfind('c') }} {{ 'abc'.find('z') }} {{ "
                 "'abcabc'.count('b') }}") == "2 5 -1 2");
    CHECK(render("{{ '123'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }} {{ 'ab'.islower() }} {{ "
                 "'AB'.isupper() }}") == "True True True True True");
}

TEST_CASE("str case, replace, join, format, partition, padding", "[jinja][methods]") {
    CHECK(
        render(
            "{{ 'abc'.upper() }} {{ 'ABC'.lower() }} {{ 'hello wORLD'.title() }} {{ 'hEY'.capitalize() }}") ==
        "ABC abc Hello World Hey");
    CHECK(
        render("{{ 'aaa'.replace('a', 'b') }} {{ 'aaa'.replace('a', 'b', 1) }} {{ '-'.join(['x', 'y']) }}") ==
        "bbb baa x-y");
    CHECK(render("{{ 'Hi {}, {name}! {0}'.format('Bob', name='Al') }} {{ '{:>5}|{:.2f}'.format('x', 3.14159) "
                 "}}") == "Hi Bob, Al! Bob     x|3.14");
    CHECK(render("{{ 'k=v=w'.partition('=') }} {{ 'k=v=w'.rpartition('=') }}") ==
          "('k', '=', 'v=w') ('k=v', '=', 'w')");
    CHECK(render("{{ 'ab'.center(6, '*') }} {{ '5'.zfill(3) }} {{ 'a'.ljust(3, '.') }} {{ 'a'.rjust(3) }}") ==
          "**ab** 005 a..   a");
}

TEST_CASE("list methods mutate in place", "[jinja][methods]") {
    CHECK(render("{% set l = [1] %}{{ l.append(2) }}{{ l }} {{ l.pop(0) }}{{ l }} {{ l.pop() }}{{ l }}") ==
          "None[1, 2] 1[2] 2[]");
    CHECK(render("{% set l = [3, 1] %}{% set _ = l.extend([2]) %}{% set _ = l.insert(0, 9) %}{{ l }} {{ "
                 "l.index(1) }} {{ l.count(9) }}") == "[9, 3, 1, 2] 2 1");
    CHECK(render("{% set ns = namespace(ids=[]) %}{% for i in [1, 2] %}{% set _ = ns.ids.append(i) %}{% "
                 "endfor %}{{ ns.ids }}") == "[1, 2]");
}

TEST_CASE("dict methods", "[jinja][methods]") {
    const char* ctx = R"({"d": {"a": 1, "b": 2}})";
    CHECK(render("{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 'dflt') }}", ctx) == "1 None dflt");
    CHECK(render("{{ d.items() | list }} {{ d.keys() | list }} {{ d.values() | list }}", ctx) ==
          "[('a', 1), ('b', 2)] ['a', 'b'] [1, 2]");
    CHECK(render("{% set _ = d.update({'c': 3}) %}{{ d.pop('a') }}{{ d }} {{ d.setdefault('e', 5) }}", ctx) ==
          "1{'b': 2, 'c': 3} 5");
}
