// Errors: syntax and runtime failures carry line and column; raise_exception propagates its
// message; undefined values fail only where jinja2's default Undefined fails.
#include <catch2/catch.hpp>

#include "chat_test_util.h"
#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_value.h"

using chat_test::render;
using engine::jinja::TemplateError;

namespace {

TemplateError error_of(const std::string& source, const std::string& context = "{}") {
    try {
        render(source, context);
    } catch (const TemplateError& e) {
        return e;
    }
    FAIL("expected a TemplateError from: " << source);
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("syntax errors point at the offending token", "[jinja][errors]") {
    auto e = error_of("line one\n{% if x %}\n  {% endfor %}");
    CHECK(e.kind() == TemplateError::Kind::Syntax);
    CHECK(e.line() == 3);
    CHECK(e.column() == 6);
    CHECK(e.message() ==
          "Encountered unknown tag 'endfor'. Jinja was looking for the following tags: "
          "'elif' or 'else' or 'endif'.");

    e = error_of("{% for x in y %}");
    CHECK(e.message() ==
          "Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. "
          "The innermost block that needs to be closed is 'for'.");

    e = error_of("{{ 1 + }}");
    CHECK(e.line() == 1);
    CHECK(e.column() == 8);
    CHECK(e.message() == "unexpected end of print statement");

    e = error_of("{% foo %}");
    CHECK(e.message() == "Encountered unknown tag 'foo'.");
    CHECK(e.column() == 4);

    CHECK(error_of("{{ f(a=1, 2) }}").message() == "positional argument follows keyword argument");
    CHECK(error_of("{{ x is defined is none }}").message() == "You cannot chain multiple tests with is");
}

TEST_CASE("runtime errors carry the position of the failing expression", "[jinja][errors]") {
    auto e = error_of("ok\n{{ 'a' + 1 }}");
    CHECK(e.kind() == TemplateError::Kind::Runtime);
    CHECK(e.line() == 2);
    CHECK(e.column() == 8);
    CHECK(e.message() == "can only concatenate str (not \"int\") to str");
    CHECK(std::string(e.what()) == "line 2, column 8: can only concatenate str (not \"int\") to str");

    CHECK(error_of("{{ 1 / 0 }}").message() == "division by zero");
    CHECK(error_of("{{ 1 < 'a' }}").message() == "'<' not supported between instances of 'int' and 'str'");
    CHECK(error_of("{% for x in 5 %}{% endfor %}").message() == "'int' object is not iterable");
    CHECK(error_of("{{ x | nosuchfilter }}").message() == "No filter named 'nosuchfilter'.");
    CHECK(error_of("{{ x is nosuchtest }}").message() == "No test named 'nosuchtest'.");
    CHECK(error_of("{{ 5() }}").message() == "'int' object is not callable");
    CHECK(error_of("{% set a, b = [1] %}").message() == "not enough values to unpack (expected 2, got 1)");
    CHECK(error_of("{% set x = 1 %}{% set x.y = 2 %}").message() ==
          "cannot assign attribute on non-namespace object");
    CHECK(error_of("{{ {'a': 1} | tojson }}{{ x | tojson }}").message() ==
          "Object of type Undefined is not JSON serializable");
}

TEST_CASE("raise_exception propagates its message as a Raised error", "[jinja][errors]") {
    const auto e = error_of(
        "{% if messages[0].role == 'system' %}\n  {{ raise_exception('System role not supported') }}\n{% "
        "endif %}",
        R"({"messages": [{"role": "system"}]})");
    CHECK(e.kind() == TemplateError::Kind::Raised);
    CHECK(e.message() == "System role not supported");
    CHECK(e.line() == 2);
}

TEST_CASE("undefined values are falsy and empty, but fail when used strictly", "[jinja][errors][undefined]") {
    CHECK(render("[{{ missing }}][{{ missing | length }}][{% for x in missing %}x{% endfor %}]"
                 "[{{ 'y' if missing else 'n' }}][{{ missing ~ 'a' }}]") == "[][0][][n][a]");
    CHECK(render("{{ d.missing is defined }} {{ d['missing'] is defined }}", R"({"d": {}})") ==
          "False False");
    CHECK(error_of("{{ missing.attr }}").message() == "'missing' is undefined");
    CHECK(error_of("{{ missing + 1 }}").message() == "'missing' is undefined");
    CHECK(error_of("{{ missing() }}").message() == "'missing' is undefined");
    CHECK(error_of("{{ d.a.b }}", R"({"d": {}})").message() == "'dict object' has no attribute 'a'");
    CHECK(error_of("{{ d[0][1] }}", R"({"d": []})").message() == "'list object' has no attribute 0");
    // An undefined key finds nothing, as in jinja2: undefined, which fails only when used strictly.
    CHECK(render("[{{ m[spec.type] }}][{{ m[spec.type] is defined }}][{{ m[spec.type] or 'any' }}]",
                 R"({"m": {"string": "str"}, "spec": {}})") == "[][False][any]");
    CHECK(error_of("{{ m[spec.type].x }}", R"({"m": {}, "spec": {}})").message() ==
          "'dict object' has no item for an undefined key");
}

TEST_CASE("runaway recursion and deep nesting fail instead of crashing", "[jinja][errors]") {
    CHECK(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").message() ==
          "maximum recursion depth exceeded (the limit is 200 nested macro calls or recursive loops)");
    const std::string deep = "{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}";
    CHECK(error_of(deep).message() == "template nested too deeply (the limit is 256 levels)");
    CHECK(render("{{ " + std::string(50, '(') + "1" + std::string(50, ')') + " }}") == "1");
}

TEST_CASE("a container a template makes hold itself is emptied when the render ends, not leaked",
          "[jinja][errors]") {
    // Self-references a hostile template can make: rendered, then the arena breaks the cycles (ASan's
    // leak check, fuzz_jinja, sees the rest).
    CHECK(render("{% set ns = namespace(x=0) %}{% set ns.x = ns %}ok") == "ok");
    CHECK(render("{% set l = [] %}{% set _ = l.append(l) %}{{ l | length }}") == "1");

    using engine::jinja::RenderArena;
    using engine::jinja::Value;
    Value outside = Value::array();
    Value inner;
    {
        RenderArena arena;
        Value ns = Value::make_namespace();
        ns.as_object().set(Value("self"), ns);
        ns.as_object().set(Value("kept"), outside);  // a container made outside the render
        inner = ns;
        outside.as_array().items.push_back(Value(1));
        CHECK(inner.as_object().items.size() == 2);
    }
    CHECK(inner.as_object().items.empty());           // the cycle is broken
    CHECK(outside.as_array().items.size() == 1);      // what the render did not make is left alone
}
