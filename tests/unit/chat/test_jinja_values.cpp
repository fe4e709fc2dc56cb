// The Value model: Python truthiness, str/repr, equality, JSON round trips and json.dumps output.
#include <catch2/catch.hpp>
#include <cmath>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_json.h"
#include "engine/chat/jinja_value.h"

using namespace engine::jinja;

TEST_CASE("truthiness follows Python", "[jinja][value]") {
    CHECK_FALSE(Value().truthy());
    CHECK_FALSE(Value(nullptr).truthy());
    CHECK_FALSE(Value(0).truthy());
    CHECK_FALSE(Value(0.0).truthy());
    CHECK_FALSE(Value("").truthy());
    CHECK_FALSE(Value::array().truthy());
    CHECK_FALSE(Value::object().truthy());
    CHECK(Value(-1).truthy());
    CHECK(Value("x").truthy());
    CHECK(Value::array({Value(0)}).truthy());
    CHECK(Value::make_namespace().truthy());
}

TEST_CASE("str and repr match Python", "[jinja][value]") {
    CHECK(Value(true).str() == "True");
    CHECK(Value(nullptr).str() == "None");
    CHECK(Value(2.0).str() == "2.0");
    CHECK(Value("it's").repr() == "\"it's\"");
    CHECK(Value("a\nb").repr() == "'a\\nb'");
    CHECK(Value::tuple({Value(1)}).str() == "(1,)");
    Value obj = Value::object();
    obj.as_object().set(Value("k"), Value::array({Value("v"), Value(nullptr)}));
    CHECK(obj.str() == "{'k': ['v', None]}");
    CHECK(Value().str().empty());
}

TEST_CASE("python float repr", "[jinja][value]") {
    CHECK(format_python_float(1.0) == "1.0");
    CHECK(format_python_float(0.1) == "0.1");
    CHECK(format_python_float(123456.789) == "123456.789");
    CHECK(format_python_float(1e16) == "1e+16");
    CHECK(format_python_float(1.5e-7) == "1.5e-07");
    CHECK(format_python_float(-2.5e300) == "-2.5e+300");
    CHECK(format_python_float(1.0 / 0.0) == "inf");
}

TEST_CASE("equality and ordering", "[jinja][value]") {
    CHECK(Value(1).equals(Value(1.0)));
    CHECK(Value(true).equals(Value(1)));
    CHECK_FALSE(Value("1").equals(Value(1)));
    CHECK_FALSE(Value::array({Value(1)}).equals(Value::tuple({Value(1)})));
    CHECK(Value(1).less(Value(1.5)));
    CHECK(Value("a").less(Value("b")));
    CHECK_THROWS_AS(Value(1).less(Value("a")), TemplateError);
}

TEST_CASE("JSON round trip keeps key order and number kinds", "[jinja][value][json]") {
    const Json j = Json::parse(R"({"z": 1, "a": [1.5, "s", null, true, {"k": 18446744073709551615}]})");
    const Value v = Value::from_json(j);
    CHECK(v.as_object().items[0].first.as_string() == "z");
    CHECK(v.as_object().find(std::string_view("a"))->as_array().items[0].is_float());
    CHECK(v.to_json().dump() == R"({"z":1,"a":[1.5,"s",null,true,{"k":1.8446744073709552e+19}]})");
    CHECK_THROWS_AS(Value().to_json(), TemplateError);
}

TEST_CASE("python_json_dumps mirrors json.dumps", "[jinja][value][json]") {
    const Value v = Value::from_json(Json::parse(R"({"a": [1, 2.0], "b": {}, "c": "é\u0007"})"));
    CHECK(python_json_dumps(v) == "{\"a\": [1, 2.0], \"b\": {}, \"c\": \"\xc3\xa9\\u0007\"}");
    JsonDumpOptions o;
    o.indent = "  ";
    o.item_separator = ",";
    CHECK(python_json_dumps(v, o) ==
          "{\n  \"a\": [\n    1,\n    2.0\n  ],\n  \"b\": {},\n  \"c\": \"\xc3\xa9\\u0007\"\n}");
    o = {};
    o.ensure_ascii = true;
    CHECK(python_json_dumps(Value("é"), o) == "\"\\u00e9\"");
    CHECK(python_json_dumps(Value(std::nan(""))) == "NaN");
}
