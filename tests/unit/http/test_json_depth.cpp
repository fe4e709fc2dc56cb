// The nesting-depth pre-scan that runs before a request body is parsed (issue 13): linear, iterative,
// blind to brackets inside strings.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/http/json_depth.h"
#include "server/http/errors.h"
#include "server/http/request_schemas.h"

using server::http::json_depth_exceeded;
using server::http::kMaxJsonDepth;

TEST_CASE("json_depth_exceeded finds the first bracket past the limit", "[http][json_depth]") {
    CHECK_FALSE(json_depth_exceeded("{}", 1));
    CHECK_FALSE(json_depth_exceeded("[[1],[2],{\"a\":[3]}]", 3));
    CHECK(json_depth_exceeded("[[1],[2],{\"a\":[3]}]", 2) == size_t(14));
    CHECK(json_depth_exceeded("[[[]]]", 2) == size_t(2));
    // Brackets and escaped quotes inside strings do not count.
    CHECK_FALSE(json_depth_exceeded(R"(["[[[[", "\"[[[", "\\", {"k[": "]]]{{"}])", 2));
    CHECK(json_depth_exceeded(R"(["\\", [[0]]])", 2) == size_t(8));
    // 100,000 levels: answered without recursion.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    CHECK(json_depth_exceeded(deep) == size_t(kMaxJsonDepth));
    CHECK_FALSE(json_depth_exceeded(deep, 100000));
}

TEST_CASE("a request body nested past the limit is a 400 naming it", "[http][json_depth]") {
    server::http::Request req;
    req.body = R"({"prompt":"x","extra":)" + std::string(300, '[') + std::string(300, ']') + "}";
    try {
        server::http::parse_request_body(req, "completion");
        FAIL("no error");
    } catch (const server::http::HttpError& e) {
        CHECK(e.status() == 400);
        CHECK(std::string(e.what()).find("limit of " + std::to_string(kMaxJsonDepth) + " levels") !=
              std::string::npos);
    }
    req.body = R"({"prompt":"x","extra":)" + std::string(200, '[') + std::string(200, ']') + "}";
    CHECK(server::http::parse_request_body(req, "completion")["prompt"] == "x");
}
