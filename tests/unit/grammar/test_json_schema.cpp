// JSON Schema -> GBNF: random strings generated from each converted grammar (a random walk over
// the matcher) must be JSON that an independent validator (Python's jsonschema) accepts; hand-made
// invalid instances must be rejected; unsupported keywords must fail with the right pointer.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/schema_relax.h"
#include "grammar_test_util.h"

using engine::GrammarMatcher;
using engine::SchemaError;
using ojson = nlohmann::ordered_json;

namespace {

struct Case {
    const char* name;
    const char* schema;
    std::vector<const char*> valid;    // must be accepted by the grammar
    std::vector<const char*> invalid;  // must be rejected
};

const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"nested-objects",
         R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150},
             "address":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},
                        "required":["zip"]}},"required":["name","address"]})",
         {R"({"name":"Al","address":{"zip":"12345"}})",
          R"({"name": "Al", "address": {"zip": "00000", "street": "x"}, "age": 150})"},
         {R"({"address":{"zip":"12345"}})", R"({"name":"Al","age":151,"address":{"zip":"12345"}})",
          R"({"name":"Al","address":{"zip":"1234"}})", R"({"name":"Al","age":-1,"address":{"zip":"12345"}})",
          R"({"name":"Al","address":{"zip":"12345"},"extra":1})"}},
        {"bounded-array",
         R"({"type":"array","items":{"type":"integer","minimum":-5,"maximum":5},"minItems":2,"maxItems":4})",
         {"[1,-5]", "[0, 5, 3, -1]"},
         {"[1]", "[1,2,3,4,5]", "[6,1]", "[-6,1]", "[1.5,2]"}},
        {"enum",
         R"({"enum":["red","green",1,null,true,{"a":[1,2]}]})",
         {R"("red")", "1", "null", R"({"a":[1,2]})"},
         {R"("blue")", "2", "false"}},
        {"any-of",
         R"({"anyOf":[{"type":"string","maxLength":3},{"type":"number","minimum":10}]})",
         {R"("abc")", "10", "11.5", "1000"},
         {R"("abcd")", "9", "9.99"}},
        {"ref-recursive",
         R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},
             "children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["value"]}},
             "$ref":"#/$defs/node"})",
         {R"({"value":1,"children":[{"value":2},{"value":3,"children":[{"value":4}]}]})"},
         {R"({"value":1,"children":[{"value":2},{"value":3},{"value":4}]})", R"({"children":[]})"}},
        {"definitions",
         R"({"definitions":{"pos":{"type":"integer","exclusiveMinimum":0}},"type":"array","items":{"$ref":"#/definitions/pos"}})",
         {"[]", "[1, 99]"},
         {"[0]", "[-3]"}},
        {"number-range",
         R"({"type":"number","minimum":-2.5,"exclusiveMaximum":3.75})",
         {"-2.5", "0", "3.749", "-0.001", "3"},
         {"-2.51", "3.75", "4", "-3"}},
        {"integer-range",
         R"({"type":"integer","exclusiveMinimum":-1000,"maximum":123456})",
         {"-999", "0", "123456", "99999"},
         {"-1000", "123457", "1000000", "1.5"}},
        {"string-length",
         R"({"type":"string","minLength":2,"maxLength":5})",
         {R"("ab")", R"("a\"\\c")", R"("\u00e9\u00e9")"},
         {R"("a")", R"("abcdef")"}},
        {"type-array", R"({"type":["string","null","boolean"]})", {R"("x")", "null", "true"}, {"1", "[]"}},
        {"const", R"({"const":{"k":[1,2],"s":"\"q\""}})", {R"({"k":[1,2],"s":"\"q\""})"}, {R"({"k":[1,2]})"}},
        {"tuple",
         R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":{"type":"boolean"},"maxItems":4})",
         {R"(["a",1])", R"(["a",1,true,false])"},
         {R"(["a"])", R"(["a",1,true,false,true])", R"([1,"a"])"}},
        {"additional-schema",
         R"({"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":{"type":"string","maxLength":4}})",
         {R"({})", R"({"id":1,"x":"abcd","y":""})", R"({"x":"a"})"},
         {R"({"id":"1"})", R"({"x":"abcde"})", R"({"x":1})"}},
        {"additional-true",
         R"({"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":true})",
         {R"({"id":1,"other":[1,{"z":null}]})"},
         {R"({"other":1})", R"({"id":1,"id":2})"}},
        {"all-of",
         R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer","minimum":0}},"required":["a"]},
                      {"properties":{"a":{"maximum":10},"b":{"type":"string"}},"required":["b"]}]})",
         {R"({"a":0,"b":""})", R"({"a":10,"b":"x"})"},
         {R"({"a":11,"b":""})", R"({"a":1})", R"({"b":""})"}},
        {"one-of-with-siblings",
         R"({"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"],
             "oneOf":[{"properties":{"kind":{"const":"circle"},"r":{"type":"number","minimum":0}},"required":["r"]},
                      {"properties":{"kind":{"const":"square"},"side":{"type":"integer","minimum":1}},"required":["side"]}]})",
         {R"({"kind":"circle","r":0.5})", R"({"kind":"square","side":2})"},
         {R"({"kind":"circle","side":2})", R"({"kind":"square","side":0})", R"({"kind":"oval","r":1})"}},
        {"formats",
         R"({"type":"object","properties":{"d":{"type":"string","format":"date"},"t":{"type":"string","format":"time"},
             "dt":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uuid"},
             "e":{"type":"string","format":"email"},"ip":{"type":"string","format":"ipv4"}},
             "required":["d","t","dt","u","e","ip"]})",
         {R"({"d":"2024-02-29","t":"23:59:59Z","dt":"2000-02-29T00:00:00.5+01:00","u":"123e4567-e89b-12d3-a456-426614174000","e":"a.b@c.io","ip":"255.0.10.1"})"},
         {R"({"d":"2023-02-29","t":"23:59:59Z","dt":"2000-02-29T00:00:00Z","u":"123e4567-e89b-12d3-a456-426614174000","e":"a@c.io","ip":"1.1.1.1"})",
          R"({"d":"1900-02-29","t":"23:59:59Z","dt":"2000-02-29T00:00:00Z","u":"123e4567-e89b-12d3-a456-426614174000","e":"a@c.io","ip":"1.1.1.1"})",
          R"({"d":"2024-01-01","t":"24:00:00Z","dt":"2000-02-29T00:00:00Z","u":"123e4567-e89b-12d3-a456-426614174000","e":"a@c.io","ip":"1.1.1.1"})",
          R"({"d":"2024-01-01","t":"23:00:00Z","dt":"2000-02-29T00:00:00Z","u":"123e4567-e89b-12d3-a456-426614174000","e":"a@c.io","ip":"256.1.1.1"})"}},
        {"patterns",
         R"({"type":"array","prefixItems":[{"type":"string","pattern":"^[A-Z]{2}-\\d{3}(-[a-z]+)?$"},
             {"type":"string","pattern":"a\"b\\\\c"},{"type":"string","pattern":"^(x|yz?)*$"},
             {"type":"string","pattern":"^\\S\\s\\w+.$"}]})",
         {"[\"AB-123\",\"xa\\\"b\\\\cx\",\"xyzy\",\"a\\tq_0\xC3\xA9\"]"},
         {R"(["AB-12","a\"b\\c","x","a\tq_0\u00e9"])", R"(["AB-123","ab\\c","x","a\tq_0\u00e9"])",
          R"(["AB-123","a\"b\\c","xzz","a\tq_0\u00e9"])"}},
        {"empty-schema", R"({})", {"1", R"({"a":[true,null]})", R"("s")"}, {"tru", "[1,]"}},
        {"open-ranges",
         R"({"type":"array","prefixItems":[{"type":"number","exclusiveMinimum":0.5},{"type":"integer","maximum":-7}],"minItems":2})",
         {"[0.51,-7]", "[100,-100]"},
         {"[0.5,-7]", "[1,-6]"}},
        {"long-string", R"({"type":"string","minLength":1,"maxLength":20000})", {R"("a")"}, {R"("")"}},
    };
    return c;
}

std::string python_validator() {
    return R"PY(
import json, re, sys
import jsonschema
from jsonschema import validators

# JSON Schema patterns are ECMAScript regexes: \d, \w and \s are ASCII classes there.
def pattern(validator, patrn, instance, schema):
    if validator.is_type(instance, "string") and not re.search(patrn, instance, re.ASCII):
        yield jsonschema.ValidationError("%r does not match %r" % (instance, patrn))

Base = jsonschema.Draft202012Validator
Checker = validators.extend(Base, {"pattern": pattern})
failures = []
for case in json.load(open(sys.argv[1], encoding="utf-8")):
    v = Checker(case["schema"], format_checker=Base.FORMAT_CHECKER)
    for text in case["instances"]:
        errors = [e.message for e in v.iter_errors(json.loads(text))]
        if errors:
            failures.append({"case": case["name"], "instance": text, "errors": errors[:2]})
print(json.dumps(failures))
)PY";
}

std::string run_python(const std::filesystem::path& script, const std::filesystem::path& data) {
    // Debian's interpreter: scripts/setup.sh installs python3-jsonschema for it (a python3 earlier on
    // PATH, e.g. from pyenv, may lack the module).
    const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string cmd = python + " '" + script.string() + "' '" + data.string() + "' 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
}

}  // namespace

TEST_CASE("schema grammars accept valid and reject invalid instances", "[grammar][schema]") {
    for (const Case& c : cases()) {
        INFO("case " << c.name);
        const std::string gbnf = engine::json_schema_to_gbnf(ojson::parse(c.schema));
        INFO("grammar:\n" << gbnf);
        GrammarMatcher m(gbnf);
        for (const char* v : c.valid) {
            INFO("valid instance " << v);
            CHECK(m.matches(v));
        }
        for (const char* v : c.invalid) {
            INFO("invalid instance " << v);
            CHECK_FALSE(m.matches(v));
        }
    }
}

TEST_CASE("random strings from schema grammars validate against the schema", "[grammar][schema]") {
    ojson batch = ojson::array();
    size_t total = 0;
    for (const Case& c : cases()) {
        INFO("case " << c.name);
        GrammarMatcher m(engine::json_schema_to_gbnf(ojson::parse(c.schema)));
        std::mt19937 rng(1234);
        ojson instances = ojson::array();
        for (int i = 0; i < 40 && instances.size() < 20; ++i) {
            auto s = grammar_test::random_walk(m, rng, 3000, 0.6);
            if (!s) continue;
            INFO("generated: " << *s);
            CHECK_NOTHROW(ojson::parse(*s));  // well-formed JSON
            instances.push_back(*s);
        }
        CHECK(instances.size() >= 10);
        total += instances.size();
        batch.push_back({{"name", c.name}, {"schema", ojson::parse(c.schema)}, {"instances", instances}});
    }
    // A control case the validator must flag, so a silent validator cannot pass the test.
    batch.push_back(
        {{"name", "control"}, {"schema", {{"type", "integer"}}}, {"instances", {"\"not an integer\""}}});
    const auto dir = std::filesystem::temp_directory_path() / ("ggserve_schema_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "validate.py") << python_validator();
        std::ofstream(dir / "data.json") << batch.dump();
    }
    const std::string out = run_python(dir / "validate.py", dir / "data.json");
    std::filesystem::remove_all(dir);
    INFO("validator output: " << out);
    INFO("instances checked: " << total);
    ojson failures;
    REQUIRE_NOTHROW(failures = ojson::parse(out));
    REQUIRE(failures.size() == 1);
    CHECK(failures[0]["case"] == "control");
}

namespace {

void expect_schema_error(const char* schema, const std::string& pointer, const std::string& what) {
    INFO("schema " << schema);
    try {
        engine::json_schema_to_gbnf(ojson::parse(schema));
        FAIL("no error");
    } catch (const SchemaError& e) {
        INFO("error: " << e.what());
        CHECK(e.pointer == pointer);
        CHECK(e.reason.find(what) != std::string::npos);
    }
}

}  // namespace

TEST_CASE("unsupported schema keywords fail with their JSON pointer", "[grammar][schema]") {
    expect_schema_error(R"({"properties":{"a":{"not":{"type":"string"}}}})", "/properties/a/not",
                        "unsupported keyword 'not'");
    expect_schema_error(R"({"type":"integer","multipleOf":3})", "/multipleOf", "unsupported keyword");
    expect_schema_error(R"({"type":"array","uniqueItems":true})", "/uniqueItems", "unsupported keyword");
    expect_schema_error(R"({"if":{"type":"string"},"then":{"minLength":1}})", "/if", "unsupported keyword");
    expect_schema_error(R"({"type":"object","dependentSchemas":{"a":{}}})", "/dependentSchemas",
                        "unsupported");
    expect_schema_error(R"({"type":"object","patternProperties":{"^x":{}}})", "/patternProperties",
                        "unsupported");
    expect_schema_error(R"({"items":{"minProperties":1}})", "/items/minProperties", "unsupported");
    expect_schema_error(R"({"anyOf":[{"type":"string"},{"contains":{"type":"integer"}}]})",
                        "/anyOf/1/contains", "unsupported");
    expect_schema_error(R"({"$ref":"https://example.com/s.json"})", "/$ref", "only local references");
    expect_schema_error(R"({"$ref":"#/$defs/missing"})", "/$ref", "does not resolve");
    expect_schema_error(R"({"type":"integer","minimum":5,"maximum":4})", "/minimum",
                        "leave no valid integer");
    expect_schema_error(R"({"type":"number","exclusiveMinimum":1,"maximum":1})", "/minimum",
                        "leave no valid number");
    expect_schema_error(R"({"type":"string","pattern":"(?=a)b"})", "/pattern", "lookahead");
    expect_schema_error(R"({"type":"string","pattern":"a^b"})", "/pattern", "anchors");
    expect_schema_error(R"({"type":"string","pattern":"^a+$","maxLength":3})", "/maxLength", "not supported");
    expect_schema_error(R"({"type":"string","minLength":4,"maxLength":3})", "/maxLength",
                        "below 'minLength'");
    expect_schema_error(R"({"type":"strin"})", "/type", "unknown type");
    expect_schema_error(R"({"properties":{"a":false},"required":["a"]})", "/properties/a", "schema false");
    expect_schema_error(R"({"type":"array","prefixItems":[{},{}],"maxItems":1,"minItems":2})", "/minItems",
                        "cannot be met");
    expect_schema_error(R"({"allOf":[{"type":"string"},{"type":"integer"}]})", "", "types do not overlap");
    expect_schema_error(R"({"allOf":[{"pattern":"^a"},{"pattern":"^b"}]})", "", "two different 'pattern'");
    expect_schema_error(R"({"enum":[1,2],"type":"string"})", "/enum", "no 'enum' value");
    expect_schema_error(R"({"$ref":"#"})", "/$ref", "refers only to itself");
    expect_schema_error(
        R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"})",
        "", "without consuming input");
    expect_schema_error("false", "", "matches nothing");
}

TEST_CASE("schema grammars follow llama.cpp's layout", "[grammar][schema]") {
    const std::string g = engine::json_schema_to_gbnf(ojson::parse(
        R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"},"c":{"type":"boolean"}},"required":["c"]})"));
    // required first, then the optional ones in schema order (not alphabetical)
    CHECK(g.find("root ::= \"{\" space c-kv ( \",\" space b-kv )? ( \",\" space a-kv )? space \"}\"\n") == 0);
    CHECK(g.find("space ::= ( \" \" | \"\\n\"{1,2} [ \\t]{0,20} )?\n") != std::string::npos);
    // nlohmann::json sorts keys, so the same schema through it orders a before b
    const std::string sorted = engine::json_schema_to_gbnf(nlohmann::json::parse(
        R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["a","b"]})"));
    CHECK(sorted.find("root ::= \"{\" space a-kv \",\" space b-kv space \"}\"") == 0);
    // llama.cpp's 2026 whitespace layout: after "{", "[", ":" and ",", before "}" and "]" (and between a
    // named key and its ":"), never after a value: not before a comma, not after the root value.
    GrammarMatcher layout(g);
    CHECK(layout.matches(R"({"c":true,"b":"x","a":1})"));
    CHECK(layout.matches("{\n  \"c\" : true,\n  \"a\": 1\n}"));
    CHECK_FALSE(layout.matches(R"({"c": true , "a": 1})"));
    CHECK_FALSE(layout.matches(R"({"c": true} )"));
    GrammarMatcher list(engine::json_schema_to_gbnf(ojson::parse(R"({"type":"array","items":{"enum":["x",1]}})")));
    CHECK(list.matches(R"([ "x", 1 ])"));
    CHECK(list.matches("[ ]"));
    CHECK_FALSE(list.matches(R"(["x" ,1])"));
    CHECK_FALSE(list.matches(R"(["x"] )"));
    GrammarMatcher closed(engine::json_schema_to_gbnf(ojson::parse(R"({"type":"object","additionalProperties":false})")));
    CHECK(closed.matches("{ }"));
    CHECK_FALSE(closed.matches("{} "));
    // json_object mode: any object, nothing else
    GrammarMatcher obj(engine::json_object_gbnf());
    CHECK(obj.matches(R"({"a": [1, {"b": null}], "c": "d"})"));
    CHECK(obj.matches("{}"));
    CHECK(obj.matches(R"({"a":1 })"));
    CHECK_FALSE(obj.matches(R"({"a" :1})"));  // llama.cpp: no whitespace before ":" of free keys
    CHECK_FALSE(obj.matches("[]"));
    CHECK_FALSE(obj.matches("\"s\""));
    // whitespace is bounded: a third newline is not allowed
    CHECK(obj.matches("{\n\n  \"a\": 1}"));
    CHECK_FALSE(obj.matches("{\n\n\n\"a\": 1}"));
    CHECK_FALSE(obj.matches(std::string("{") + std::string(22, ' ') + "}"));
}

TEST_CASE("draft-04 style exclusive bounds and additionalItems", "[grammar][schema]") {
    GrammarMatcher m(engine::json_schema_to_gbnf(ojson::parse(
        R"({"type":"array","items":[{"type":"integer","minimum":0,"exclusiveMinimum":true},{"type":"number","maximum":1,"exclusiveMaximum":true}],
            "additionalItems":{"type":"null"}})")));
    CHECK(m.matches("[1,0.99]"));
    CHECK(m.matches("[1,-5,null,null]"));
    CHECK_FALSE(m.matches("[0,0.5]"));
    CHECK_FALSE(m.matches("[1,1]"));
    CHECK_FALSE(m.matches("[1,0.5,1]"));
}

// llama.cpp's own converter tests give "prefixItems" a single schema and expect it read as "items".
TEST_CASE("a single schema as prefixItems is read as items", "[grammar][schema]") {
    GrammarMatcher m(engine::json_schema_to_gbnf(ojson::parse(R"({"prefixItems":{"type":"string"},"maxItems":2})")));
    CHECK(m.matches("[]"));
    CHECK(m.matches(R"(["a", "b"])"));
    CHECK_FALSE(m.matches(R"(["a", "b", "c"])"));
    CHECK_FALSE(m.matches("[1]"));
    // beside "items" it stays an error, pointing at the keyword
    expect_schema_error(R"({"prefixItems":{"type":"string"},"items":{}})", "/prefixItems", "must be an array");
    expect_schema_error(R"({"prefixItems":{"type":"strin"}})", "/prefixItems/type", "unknown type");
}

// Found by tests/fuzz/fuzz_json_schema.cpp: an array schema without "items" read s["items"] from a const
// object that has no such key (an assertion in debug builds, undefined behaviour in release).
TEST_CASE("an array schema without items converts", "[grammar][schema]") {
    const std::string gbnf = engine::json_schema_to_gbnf(ojson::parse(R"({"type":"array","maxItems":3})"));
    GrammarMatcher m(gbnf);
    CHECK(m.matches("[]"));
    CHECK_FALSE(m.matches("[1,2,3,4]"));
}

TEST_CASE("counts written as floats too large for an integer are refused, not converted", "[grammar][schema]") {
    // Found by the json_schema fuzz target: converting 2.2e108 to an integer was undefined behaviour.
    for (const char* s : {R"({"type":"array","maxItems":2.2e108})", R"({"type":"string","minLength":1e300})",
                          R"({"type":"array","minItems":-1.0})"})
        REQUIRE_THROWS_WITH(engine::json_schema_to_gbnf(ojson::parse(s)), Catch::Contains("non-negative integer"));
    // Integral floats that fit are counts like any other.
    const std::string gbnf = engine::json_schema_to_gbnf(ojson::parse(R"({"type":"array","maxItems":2.0})"));
    GrammarMatcher m(gbnf);
    CHECK(m.matches("[1,2]"));
    CHECK_FALSE(m.matches("[1,2,3]"));
}

TEST_CASE("relax_schema drops the refinements the converter refuses and keeps structural errors",
          "[grammar][json_schema]") {
    const auto convert = [](const nlohmann::ordered_json& s) { (void)engine::json_schema_to_gbnf(s); };
    std::vector<std::string> dropped;
    const auto s = nlohmann::ordered_json::parse(R"({"type":"object","properties":{
        "not":{"type":"array","items":{"type":"integer","multipleOf":3},"uniqueItems":true},
        "b":{"type":"string","pattern":"^(?=a)a+$","not":{"const":"aa"}}},"minProperties":1})");
    const auto relaxed = engine::relax_schema(s, dropped, convert);
    CHECK(dropped.size() == 5);
    // A property named like a keyword is a property, never dropped.
    REQUIRE(relaxed["properties"].contains("not"));
    CHECK_FALSE(relaxed["properties"]["not"].contains("uniqueItems"));
    CHECK_FALSE(relaxed["properties"]["not"]["items"].contains("multipleOf"));
    CHECK_FALSE(relaxed["properties"]["b"].contains("pattern"));
    CHECK_FALSE(relaxed["properties"]["b"].contains("not"));
    CHECK_FALSE(relaxed.contains("minProperties"));
    CHECK(relaxed["properties"]["b"]["type"] == "string");
    // A schema the converter accepts comes back unchanged.
    dropped.clear();
    const auto fine = nlohmann::ordered_json::parse(R"({"type":"object","properties":{"a":{"type":"string"}}})");
    CHECK(engine::relax_schema(fine, dropped, convert) == fine);
    CHECK(dropped.empty());
    // Structure stays an error.
    CHECK_THROWS_AS(engine::relax_schema(nlohmann::ordered_json::parse(R"({"type":"strng"})"), dropped, convert),
                    engine::SchemaError);
    CHECK_THROWS_AS(engine::relax_schema(nlohmann::ordered_json::parse(R"({"$ref":"#/$defs/none"})"), dropped, convert),
                    engine::SchemaError);
}

TEST_CASE("relax_schema keeps a length limit and drops the pattern beside it", "[grammar][json_schema]") {
    const auto convert = [](const nlohmann::ordered_json& s) { (void)engine::json_schema_to_gbnf(s); };
    std::vector<std::string> dropped;
    const auto s = nlohmann::ordered_json::parse(R"({"type":"string","maxLength":4,"pattern":"^[a-z]+$"})");
    bool refused = false;
    try {
        convert(s);
    } catch (const engine::SchemaError&) {
        refused = true;
    }
    REQUIRE(refused);  // the pair is what the converter refuses
    const auto relaxed = engine::relax_schema(s, dropped, convert);
    CHECK(relaxed["maxLength"] == 4);
    CHECK_FALSE(relaxed.contains("pattern"));
    CHECK(dropped == std::vector<std::string>{"/pattern"});
}

TEST_CASE("a property named by the empty string beside additionalProperties keeps keys quoted",
          "[grammar][json_schema]") {
    GrammarMatcher m(engine::json_schema_to_gbnf(
        nlohmann::ordered_json::parse(R"({"properties":{"":{}},"additionalProperties":true})")));
    CHECK(m.matches(R"({"x": 1})"));
    CHECK(m.matches(R"({"": 1, "ab": 2})"));
    CHECK_FALSE(m.matches(R"({x: 1})"));
    CHECK_FALSE(m.matches(R"({"ab: 1})"));
}
