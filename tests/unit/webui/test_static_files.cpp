// Static file helpers of the web UI: gzip negotiation, If-None-Match, gunzip, content types and the
// confinement of --path to its directory.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "server/webui/embedded_assets.h"
#include "server/webui/static_files.h"

namespace fs = std::filesystem;
using server::http::Headers;
using namespace webui;

TEST_CASE("Accept-Encoding: gzip unless refused", "[webui]") {
    CHECK(accepts_gzip(Headers{{"Accept-Encoding", "gzip, deflate, br"}}));
    CHECK(accepts_gzip(Headers{{"accept-encoding", "br;q=1.0, GZIP;q=0.5"}}));
    CHECK(accepts_gzip(Headers{{"Accept-Encoding", "*"}}));
    CHECK(accepts_gzip(Headers{{"Accept-Encoding", "x-gzip"}}));
    CHECK_FALSE(accepts_gzip(Headers{}));
    CHECK_FALSE(accepts_gzip(Headers{{"Accept-Encoding", "identity"}}));
    CHECK_FALSE(accepts_gzip(Headers{{"Accept-Encoding", "gzip;q=0"}}));
    CHECK_FALSE(accepts_gzip(Headers{{"Accept-Encoding", "*, gzip;q=0.000"}}));
    CHECK(accepts_gzip(Headers{{"Accept-Encoding", "gzip;q=0.001"}}));
    CHECK(accepts_gzip(Headers{{"Accept-Encoding", "br"}, {"Accept-Encoding", "gzip"}}));
}

TEST_CASE("If-None-Match: lists, weak tags and *", "[webui]") {
    CHECK(etag_matches(Headers{{"If-None-Match", "\"abc\""}}, "\"abc\""));
    CHECK(etag_matches(Headers{{"If-None-Match", "\"x\", W/\"abc\""}}, "\"abc\""));
    CHECK(etag_matches(Headers{{"If-None-Match", "*"}}, "\"abc\""));
    CHECK_FALSE(etag_matches(Headers{{"If-None-Match", "\"abcd\""}}, "\"abc\""));
    CHECK_FALSE(etag_matches(Headers{}, "\"abc\""));
}

TEST_CASE("gunzip decodes the embedded bundle and refuses damaged data", "[webui]") {
    auto assets = embedded_assets();
    if (assets.empty()) return;  // a build without the UI (-DGGSERVE_WEBUI=OFF)
    bool saw_index = false;
    for (const auto& a : assets) {
        const std::string plain = gunzip(a.gzip);
        CHECK(!plain.empty());
        if (a.path == "/index.html") {
            saw_index = true;
            CHECK(plain.find("<!doctype html>") == 0);
        }
        std::vector<unsigned char> bad(a.gzip.begin(), a.gzip.end());
        bad[bad.size() - 6] ^= 0x40;  // the length in the trailer
        CHECK_THROWS(gunzip(bad));
        bad.assign(a.gzip.begin(), a.gzip.begin() + a.gzip.size() / 2);
        CHECK_THROWS(gunzip(bad));
    }
    CHECK(saw_index);
    const unsigned char not_gzip[20] = {'h', 'e', 'l', 'l', 'o'};
    CHECK_THROWS(gunzip(not_gzip));
}

TEST_CASE("content types by extension", "[webui]") {
    CHECK(content_type_for("index.html") == "text/html; charset=utf-8");
    CHECK(content_type_for("/assets/app-1.JS") == "text/javascript; charset=utf-8");
    CHECK(content_type_for("a.css") == "text/css; charset=utf-8");
    CHECK(content_type_for("favicon.svg") == "image/svg+xml");
    CHECK(content_type_for("README") == "application/octet-stream");
    CHECK(content_type_for("dir.d/file") == "application/octet-stream");
}

TEST_CASE("resolve_under stays inside the directory", "[webui]") {
    std::string tmpl = (fs::temp_directory_path() / "ggserve-static-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()));
    const fs::path tmp = fs::canonical(tmpl), root = tmp / "root";
    fs::create_directories(root / "sub");
    std::ofstream(root / "index.html") << "i";
    std::ofstream(root / "sub" / "f.txt") << "f";
    std::ofstream(root / ".env") << "secret";
    std::ofstream(tmp / "out.txt") << "o";
    fs::create_symlink(tmp / "out.txt", root / "link-out");
    fs::create_symlink(root / "sub" / "f.txt", root / "link-in");
    fs::create_directory_symlink(tmp, root / "dir-out");

    CHECK(resolve_under(root, "/") == root / "index.html");
    CHECK(resolve_under(root, "/index.html") == root / "index.html");
    CHECK(resolve_under(root, "/sub/f.txt") == root / "sub" / "f.txt");
    CHECK(resolve_under(root, "//sub//f.txt") == root / "sub" / "f.txt");
    CHECK(resolve_under(root, "/link-in") == root / "sub" / "f.txt");
    for (const char* bad : {"", "sub/f.txt", "/../out.txt", "/sub/../../out.txt", "/sub/../index.html", "/.env",
                            "/./index.html", "/link-out", "/dir-out/out.txt", "/sub", "/missing", "/sub\\..\\..\\out.txt"}) {
        INFO(bad);
        CHECK_FALSE(resolve_under(root, bad));
    }
    CHECK_FALSE(resolve_under(root, std::string_view("/index.html\0x", 13)));
    fs::remove_all(tmp);
}
