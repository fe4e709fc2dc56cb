// The JSON Schema validator: each supported keyword, error pointers and messages, references, and
// rejection of schemas it cannot honour.
#include <catch2/catch.hpp>

#include "server/http/json_schema_validator.h"

using namespace server::http;
using nlohmann::json;

// "" when valid, else "pointer: message".
static std::string check(const json& schema, const json& instance) {
    JsonSchemaValidator v(schema);
    auto e = v.validate(instance);
    return e ? e->to_string() : "";
}

TEST_CASE("type accepts one type or a list, and integer means integral", "[http][schema]") {
    CHECK(check({{"type", "string"}}, "x") == "");
    CHECK(check({{"type", "string"}}, 1) == "/: must be string");
    CHECK(check({{"type", {"integer", "null"}}}, nullptr) == "");
    CHECK(check({{"type", {"integer", "null"}}}, "1") == "/: must be integer or null");
    CHECK(check({{"type", {"string", "array", "null"}}}, 1.5) == "/: must be string, array or null");
    CHECK(check({{"type", "integer"}}, 3.0) == "");
    CHECK(check({{"type", "integer"}}, 3.5) == "/: must be integer");
    CHECK(check({{"type", "number"}}, 3) == "");
    CHECK(check({{"type", "boolean"}}, 0) == "/: must be boolean");
    CHECK(check({{"type", "object"}}, json::array()) == "/: must be object");
}

TEST_CASE("const and enum compare JSON values", "[http][schema]") {
    CHECK(check({{"const", "text"}}, "text") == "");
    CHECK(check({{"const", "text"}}, "image") == "/: must be \"text\"");
    CHECK(check({{"enum", {0, 1, 2}}}, 1.0) == "");
    CHECK(check({{"enum", {0, 1, 2}}}, 3) == "/: must be 0, 1 or 2");
    CHECK(check({{"enum", {"a", nullptr}}}, nullptr) == "");
}

TEST_CASE("numeric bounds", "[http][schema]") {
    json s = {{"minimum", 0}, {"maximum", 2}};
    CHECK(check(s, 0) == "");
    CHECK(check(s, 2) == "");
    CHECK(check(s, -1) == "/: must be >= 0");
    CHECK(check(s, 2.5) == "/: must be <= 2");
    json x = {{"exclusiveMinimum", 0}, {"exclusiveMaximum", 1.5}};
    CHECK(check(x, 0) == "/: must be > 0");
    CHECK(check(x, 1.5) == "/: must be < 1.5");
    CHECK(check(x, 1) == "");
    CHECK(check(s, "not a number") == "");  // bounds only apply to numbers
}

TEST_CASE("string lengths count characters, not bytes", "[http][schema]") {
    json s = {{"minLength", 2}, {"maxLength", 3}};
    CHECK(check(s, "ab") == "");
    CHECK(check(s, "\xc3\xa9\xc3\xa9\xc3\xa9") == "");  // three 2-byte characters
    CHECK(check(s, "a") == "/: must be at least 2 characters long");
    CHECK(check(s, "abcd") == "/: must be at most 3 characters long");
}

TEST_CASE("arrays: items, prefixItems, minItems, maxItems", "[http][schema]") {
    json pair = {{"type", "array"},
                 {"prefixItems", {{{"type", "integer"}}, {{"type", "number"}}}},
                 {"items", {{"type", "string"}}},
                 {"minItems", 2},
                 {"maxItems", 3}};
    CHECK(check(pair, {1, 0.5}) == "");
    CHECK(check(pair, {1, 0.5, "x"}) == "");
    CHECK(check(pair, {1}) == "/: must have at least 2 items");
    CHECK(check(pair, {1, 2, "a", "b"}) == "/: must have at most 3 items");
    CHECK(check(pair, {"1", 2}) == "/0: must be integer");
    CHECK(check(pair, {1, 2, 3}) == "/2: must be string");
}

TEST_CASE("objects: required, properties, additionalProperties, escaped pointers", "[http][schema]") {
    json s = {{"type", "object"},
              {"required", {"messages"}},
              {"properties", {{"messages", {{"type", "array"}}}, {"a/b", {{"type", "string"}}}}},
              {"additionalProperties", {{"type", "number"}}}};
    CHECK(check(s, {{"messages", json::array()}}) == "");
    CHECK(check(s, json::object()) == "/messages: is required");
    CHECK(check(s, {{"messages", 1}}) == "/messages: must be array");
    CHECK(check(s, {{"messages", json::array()}, {"a/b", 1}}) == "/a~1b: must be string");
    CHECK(check(s, {{"messages", json::array()}, {"x~y", "1"}}) == "/x~0y: must be number");
    json closed = {{"properties", {{"a", true}}}, {"additionalProperties", false}};
    CHECK(check(closed, {{"a", 1}}) == "");
    CHECK(check(closed, {{"a", 1}, {"b", 2}}) == "/b: is not an allowed property");
    CHECK(check(false, 1) == "/: is not allowed");
    CHECK(check(true, 1) == "");
}

TEST_CASE("allOf, not and oneOf", "[http][schema]") {
    json all = {{"allOf", {{{"type", "integer"}}, {{"minimum", 1}}}}};
    CHECK(check(all, 2) == "");
    CHECK(check(all, 0) == "/: must be >= 1");
    json no = {{"not", {{"type", "string"}}}};
    CHECK(check(no, 1) == "");
    CHECK(check(no, "s") == "/: must not match the schema in 'not'");
    json one = {{"oneOf", {{{"type", "integer"}}, {{"minimum", 0}}}}};
    CHECK(check(one, -1) == "");
    CHECK(check(one, 1.5) == "");
    CHECK(check(one, 1) == "/: must match exactly one alternative of oneOf, but matches 2");
    CHECK(check(one, "x") == "");  // minimum does not apply to strings: exactly one matches
}

TEST_CASE("anyOf reports the most specific failure", "[http][schema]") {
    // Failures on the same value merge.
    json choice = {{"anyOf", {{{"enum", {"none", "auto"}}}, {{"type", "object"}}, {{"type", "null"}}}}};
    CHECK(check(choice, "auto") == "");
    CHECK(check(choice, "sometimes") == "/: must be \"none\", \"auto\", object or null");

    // The branch whose shape matched failed deeper: that failure wins.
    json bias = {{"properties",
                  {{"logit_bias",
                    {{"anyOf",
                      {{{"type", "object"}, {"additionalProperties", {{"type", {"number", "boolean"}}}}},
                       {{"type", "array"}, {"items", {{"type", "array"}, {"minItems", 2}}}}}}}}}}};
    CHECK(check(bias, {{"logit_bias", {{"15", "x"}}}}) == "/logit_bias/15: must be number or boolean");
    CHECK(check(bias, {{"logit_bias", {{15}}}}) == "/logit_bias/0: must have at least 2 items");
    CHECK(check(bias, {{"logit_bias", 5}}) == "/logit_bias: must be object or array");

    // Discriminated parts: the branch whose "type" matched is the one reported.
    json part = {{"anyOf",
                  {{{"properties", {{"type", {{"const", "text"}}}, {"text", {{"type", "string"}}}}},
                    {"required", {"text"}}},
                   {{"properties", {{"type", {{"const", "image_url"}}}, {"image_url", {{"type", "object"}}}}},
                    {"required", {"image_url"}}},
                   {{"properties", {{"type", {{"const", "refusal"}}}, {"refusal", {{"type", "string"}}}}},
                    {"required", {"refusal"}}}}}};
    CHECK(check(part, {{"type", "text"}, {"text", "hi"}}) == "");
    CHECK(check(part, {{"type", "text"}}) == "/text: is required");
    CHECK(check(part, {{"type", "refusal"}, {"refusal", 1}}) == "/refusal: must be string");
    CHECK(check(part, {{"type", "video"}}) == "/type: must be \"text\", \"image_url\" or \"refusal\"");
}

TEST_CASE("$ref resolves local definitions and other documents", "[http][schema]") {
    std::map<std::string, json> docs;
    docs["common.json"] = {{"$defs",
                            {{"stop", {{"type", {"string", "array"}}, {"items", {{"$ref", "#/$defs/word"}}}}},
                             {"word", {{"type", "string"}, {"minLength", 1}}}}}};
    docs["request.json"] = {
        {"type", "object"},
        {"properties", {{"stop", {{"$ref", "common.json#/$defs/stop"}}}, {"self", {{"$ref", "#"}}}}}};
    JsonSchemaValidator v(docs);
    CHECK_FALSE(v.validate("request.json", {{"stop", {"a", "b"}}}));
    CHECK(v.validate("request.json", {{"stop", {"a", ""}}})->to_string() ==
          "/stop/1: must be at least 1 character long");
    CHECK(v.validate("request.json", {{"self", {{"self", {{"stop", 3}}}}}})->to_string() ==
          "/self/self/stop: must be string or array");
    CHECK(v.has_document("common.json"));
    CHECK(v.document_names() == std::vector<std::string>{"common.json", "request.json"});
    CHECK_THROWS_AS(v.validate("missing.json", json::object()), std::out_of_range);
}

TEST_CASE("schemas the validator cannot honour are rejected when loaded", "[http][schema]") {
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"pattern", "^a"}}), SchemaError);
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"propertys", json::object()}}), SchemaError);
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"type", "strin"}}), SchemaError);
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"minItems", -1}}), SchemaError);
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"anyOf", json::array()}}), SchemaError);
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"$ref", "#/$defs/nothing"}}), SchemaError);
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"$ref", "other.json"}}), SchemaError);
    CHECK_THROWS_AS(JsonSchemaValidator(json{{"properties", {{"a", 5}}}}), SchemaError);
    CHECK_NOTHROW(
        JsonSchemaValidator(json{{"title", "t"}, {"description", "d"}, {"default", 1}, {"format", "uri"}}));
}

TEST_CASE("recursive schemas stop at a depth limit instead of overflowing the stack", "[http][schema]") {
    JsonSchemaValidator loop(json{{"$defs", {{"a", {{"$ref", "#/$defs/a"}}}}}, {"$ref", "#/$defs/a"}});
    auto e = loop.validate(1);
    REQUIRE(e);
    CHECK(e->message == "is nested too deeply to validate");

    json nested = json::array();
    for (int i = 0; i < 1000; ++i) nested = json::array({nested});
    JsonSchemaValidator arrays(json{
        {"$defs", {{"n", {{"type", "array"}, {"items", {{"$ref", "#/$defs/n"}}}}}}}, {"$ref", "#/$defs/n"}});
    auto deep = arrays.validate(nested);
    REQUIRE(deep);
    CHECK(deep->message == "is nested too deeply to validate");
}
