// Request-target parsing and the routing table, without sockets.
#include <catch2/catch.hpp>

#include "server/http/router.h"
#include "server/http/url.h"

using namespace server::http;

TEST_CASE("percent_decode handles escapes, plus signs and malformed input", "[http][url]") {
    CHECK(percent_decode("a%20b%2Fc") == "a b/c");
    CHECK(percent_decode("a+b") == "a+b");
    CHECK(percent_decode("a+b", true) == "a b");
    CHECK(percent_decode("%e2%82%ac") == "\xe2\x82\xac");
    CHECK_FALSE(percent_decode("%2").has_value());
    CHECK_FALSE(percent_decode("abc%").has_value());
    CHECK_FALSE(percent_decode("%zz").has_value());
    CHECK(percent_encode("a b/c~") == "a%20b%2Fc~");
}

TEST_CASE("split_target separates path and query and rejects what is not a target", "[http][url]") {
    auto t = split_target("/slots/0?action=save&x=1");
    REQUIRE(t);
    CHECK(t->path == "/slots/0");
    CHECK(t->query_string == "action=save&x=1");

    auto encoded = split_target("/a%20b/c%2Fd");
    REQUIRE(encoded);
    CHECK(encoded->path == "/a b/c/d");
    CHECK(encoded->raw_path == "/a%20b/c%2Fd");

    auto absolute = split_target("http://example.com:8080/health?x=1");
    REQUIRE(absolute);
    CHECK(absolute->path == "/health");
    CHECK(absolute->query_string == "x=1");
    CHECK(split_target("http://example.com")->path == "/");

    CHECK(split_target("*")->path == "*");
    CHECK_FALSE(split_target("health"));
    CHECK_FALSE(split_target(""));
    CHECK_FALSE(split_target("/a%zz"));
    CHECK_FALSE(split_target("/a%00b"));
    CHECK_FALSE(split_target("/a#frag"));
}

TEST_CASE("parse_query decodes pairs in order and tolerates odd input", "[http][url]") {
    auto q = parse_query("action=save&name=a%20b+c&flag&=v&&x=%zz");
    REQUIRE(q.size() == 5);
    CHECK(q[0] == std::pair<std::string, std::string>{"action", "save"});
    CHECK(q[1] == std::pair<std::string, std::string>{"name", "a b c"});
    CHECK(q[2] == std::pair<std::string, std::string>{"flag", ""});
    CHECK(q[3] == std::pair<std::string, std::string>{"", "v"});
    CHECK(q[4] == std::pair<std::string, std::string>{"x", "%zz"});
    CHECK(parse_query("").empty());
}

static Handler tagged(std::string tag) {
    return [tag](Request&) { return Response::text(tag); };
}

static std::string run(const Router::Match& m) {
    REQUIRE(m.kind == Router::Match::Kind::found);
    Request req;
    return (*m.handler)(req).response().body;
}

TEST_CASE("router matches literal paths and parameters", "[http][router]") {
    Router r;
    r.add("GET", "/health", tagged("health"));
    r.add("POST", "/slots/{id}", tagged("slot"));
    r.add("GET", "/slots/stats", tagged("stats"));
    r.add("GET", "/slots/{id}", tagged("get-slot"));
    r.add("GET", "/", tagged("root"));

    CHECK(run(r.match("GET", "/health")) == "health");
    CHECK(run(r.match("GET", "/")) == "root");

    auto m = r.match("POST", "/slots/12");
    CHECK(run(m) == "slot");
    CHECK(m.params.at("id") == "12");

    // A literal segment wins over a parameter; an encoded '/' stays inside its segment.
    CHECK(run(r.match("GET", "/slots/stats")) == "stats");
    auto enc = r.match("GET", "/slots/a%2Fb");
    CHECK(run(enc) == "get-slot");
    CHECK(enc.params.at("id") == "a/b");

    CHECK(r.match("GET", "/slots").kind == Router::Match::Kind::not_found);
    CHECK(r.match("GET", "/slots/").kind == Router::Match::Kind::not_found);  // empty parameter
    CHECK(r.match("GET", "/health/").kind == Router::Match::Kind::not_found);
    CHECK(r.match("GET", "/nope").kind == Router::Match::Kind::not_found);
}

TEST_CASE("router reports allowed methods for a known path with the wrong method", "[http][router]") {
    Router r;
    r.add("GET", "/props", tagged("get"));
    r.add("POST", "/props", tagged("post"));
    r.add("POST", "/completion", tagged("completion"));

    auto m = r.match("DELETE", "/props");
    REQUIRE(m.kind == Router::Match::Kind::method_not_allowed);
    CHECK(m.allowed == std::vector<std::string>{"GET", "HEAD", "POST"});

    auto c = r.match("GET", "/completion");
    REQUIRE(c.kind == Router::Match::Kind::method_not_allowed);
    CHECK(c.allowed == std::vector<std::string>{"POST"});

    // HEAD falls back to the GET route.
    CHECK(run(r.match("HEAD", "/props")) == "get");
}

TEST_CASE("router rejects malformed patterns and duplicates", "[http][router]") {
    Router r;
    CHECK_THROWS_AS(r.add("GET", "health", tagged("x")), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/slots/x{id}", tagged("x")), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/slots/{}", tagged("x")), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/slots/{a{b}", tagged("x")), std::invalid_argument);
    r.add("GET", "/a/{id}", tagged("x"));
    CHECK_THROWS_AS(r.add("GET", "/a/{id}", tagged("y")), std::invalid_argument);
    CHECK_NOTHROW(r.add("POST", "/a/{id}", tagged("y")));
}
