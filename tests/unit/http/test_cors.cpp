// The CORS policy of --cors-origins, --cors-methods, --cors-headers and --cors-credentials.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "server/http/cors.h"

using namespace server::http;

namespace {

Headers answer(const CorsPolicy& policy, Headers request) {
    Headers out;
    add_cors_headers(policy, request, out);
    return out;
}

CorsPolicy origins(const char* value, bool credentials = true) {
    return CorsPolicy::from_options(value, "GET, POST, DELETE, OPTIONS", "*", credentials);
}

}  // namespace

TEST_CASE("CORS any origin with credentials reflects the Origin and varies on it", "[http][cors]") {
    const CorsPolicy p = origins("*");
    Headers h = answer(p, {{"Origin", "https://page.example"}});
    CHECK(h.value_or("Access-Control-Allow-Origin") == "https://page.example");
    CHECK(h.value_or("Access-Control-Allow-Credentials") == "true");
    CHECK(h.value_or("Vary") == "Origin");
    // No Origin (not a browser's cross-origin request): "*", nothing about credentials.
    Headers none = answer(p, {});
    CHECK(none.value_or("Access-Control-Allow-Origin") == "*");
    CHECK_FALSE(none.contains("Access-Control-Allow-Credentials"));
}

TEST_CASE("CORS any origin without credentials answers a star and no Vary", "[http][cors]") {
    const CorsPolicy p = origins("*", false);
    Headers h = answer(p, {{"Origin", "https://page.example"}});
    CHECK(h.value_or("Access-Control-Allow-Origin") == "*");
    CHECK_FALSE(h.contains("Access-Control-Allow-Credentials"));
    CHECK_FALSE(h.contains("Vary"));
    Response pre = preflight_response(p, {{"Origin", "https://page.example"}});
    CHECK(pre.headers.value_or("Access-Control-Allow-Origin") == "*");
    CHECK(pre.headers.value_or("Access-Control-Allow-Credentials") == "false");
}

TEST_CASE("CORS localhost allows only pages of this machine", "[http][cors]") {
    const CorsPolicy p = origins("localhost");
    for (const char* o : {"http://localhost", "http://localhost:8080", "https://LOCALHOST:3000", "http://127.0.0.1",
                          "http://127.0.0.1:5173", "http://[::1]", "http://[::1]:3000"}) {
        INFO(o);
        CHECK(answer(p, {{"Origin", o}}).value_or("Access-Control-Allow-Origin") == o);
    }
    for (const char* o : {"http://evil.example", "http://localhost.evil.example", "http://notlocalhost",
                          "http://127.0.0.2", "file://localhost", "http://localhost/path", "http://localhost:99999",
                          "null", ""}) {
        INFO(o);
        Headers h = answer(p, {{"Origin", o}});
        CHECK_FALSE(h.contains("Access-Control-Allow-Origin"));
        CHECK_FALSE(h.contains("Access-Control-Allow-Credentials"));
        CHECK(h.value_or("Vary") == "Origin");
    }
}

TEST_CASE("CORS origin list reflects only listed origins", "[http][cors]") {
    const CorsPolicy p = origins(" https://One.example ,http://two.example:8080");
    CHECK(p.origins == CorsPolicy::Origins::list);
    CHECK(p.origins_text() == "https://one.example, http://two.example:8080");
    CHECK(answer(p, {{"Origin", "https://one.example"}}).value_or("Access-Control-Allow-Origin") ==
          "https://one.example");
    CHECK(answer(p, {{"Origin", "http://two.example:8080"}}).value_or("Access-Control-Allow-Credentials") == "true");
    for (const char* o : {"https://one.example.evil", "http://one.example", "http://two.example",
                          "https://evil.example"}) {
        INFO(o);
        CHECK_FALSE(answer(p, {{"Origin", o}}).contains("Access-Control-Allow-Origin"));
    }
    CHECK_FALSE(answer(p, {}).contains("Access-Control-Allow-Origin"));
    // A refused origin's preflight: no origin, no credentials, the methods all the same.
    Response pre = preflight_response(p, {{"Origin", "https://evil.example"}});
    CHECK(pre.status == 204);
    CHECK_FALSE(pre.headers.contains("Access-Control-Allow-Origin"));
    CHECK(pre.headers.value_or("Access-Control-Allow-Credentials") == "false");
}

TEST_CASE("CORS Vary keeps the handler's fields and lists Origin once", "[http][cors]") {
    const CorsPolicy p;
    Headers out{{"Vary", "Accept-Encoding"}};
    add_cors_headers(p, {{"Origin", "https://a.example"}}, out);
    add_cors_headers(p, {{"Origin", "https://a.example"}}, out);
    CHECK(out.value_or("Vary") == "Accept-Encoding, Origin");
}

TEST_CASE("CORS preflight gives the configured methods and headers", "[http][cors]") {
    const CorsPolicy p = CorsPolicy::from_options("https://app.example", "GET,POST", "Authorization ,Content-Type", false);
    Response pre = preflight_response(p, {{"Origin", "https://app.example"},
                                          {"Access-Control-Request-Method", "POST"},
                                          {"Access-Control-Request-Headers", "x-other"}});
    CHECK(pre.status == 204);
    CHECK(pre.headers.value_or("Access-Control-Allow-Origin") == "https://app.example");
    CHECK(pre.headers.value_or("Access-Control-Allow-Credentials") == "false");
    CHECK(pre.headers.value_or("Access-Control-Allow-Methods") == "GET, POST");
    CHECK(pre.headers.value_or("Access-Control-Allow-Headers") == "Authorization, Content-Type");
    // "*" headers: what the browser asks for is echoed; nothing asked, "*".
    const CorsPolicy star;
    CHECK(preflight_response(star, {{"Origin", "https://a.example"}}).headers.value_or("Access-Control-Allow-Headers") ==
          "*");
}

TEST_CASE("CORS policy disabled adds nothing", "[http][cors]") {
    CorsPolicy p;
    p.enabled = false;
    CHECK(answer(p, {{"Origin", "https://a.example"}}).size() == 0);
}

TEST_CASE("CORS options refuse malformed values", "[http][cors]") {
    auto fails = [](const char* o, const char* m, const char* h, const char* needle) {
        INFO(o << " | " << m << " | " << h);
        try {
            (void)CorsPolicy::from_options(o, m, h, true);
            FAIL("accepted");
        } catch (const std::invalid_argument& e) {
            CHECK_THAT(e.what(), Catch::Contains(needle));
        }
    };
    fails("", "GET", "*", "--cors-origins must not be empty");
    fails("https://a.example,,https://b.example", "GET", "*", "empty item");
    fails("https://a.example/", "GET", "*", "is not an origin");
    fails("a.example", "GET", "*", "is not an origin");
    fails("https://a.example/path", "GET", "*", "is not an origin");
    fails("https://user@a.example", "GET", "*", "is not an origin");
    fails("http://a.example:70000", "GET", "*", "is not an origin");
    fails("*,https://a.example", "GET", "*", "cannot be part of a list");
    fails("localhost,https://a.example", "GET", "*", "cannot be part of a list");
    fails("*", "GET POST", "*", "--cors-methods: 'GET POST' is not a valid method");
    fails("*", "GET,*", "*", "must be alone");
    fails("*", "GET", "X-A;", "--cors-headers: 'X-A;' is not a valid header");
    fails("*", "GET", " ", "--cors-headers must not be empty");
    CHECK_NOTHROW(CorsPolicy::from_options("http://[::1]:8080, chrome-extension://abcdef", "*", "*", false));
}
