// The web UI's static serving against the real binary: / with CSP, gzip, ETag/304 and caching headers,
// no API key needed for the page (but for the API), --no-webui, and --path confined to its directory.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <span>

#include "cli_process.h"
#include "server/http/client.h"
#include "server/webui/static_files.h"
#include "server_process.h"

namespace fs = std::filesystem;
using server::http::Client;
using server::http::Headers;

namespace {

const std::vector<std::string> kModel = {"-m", stories_model(), "-np", "1", "-c", "256", "-t", "1"};

std::vector<std::string> with(std::vector<std::string> extra) {
    std::vector<std::string> args = kModel;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

std::string gunzip(const std::string& body) {
    return webui::gunzip(std::span(reinterpret_cast<const unsigned char*>(body.data()), body.size()));
}

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "ggserve-webui-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

TEST_CASE("the embedded UI at / needs no API key, has a CSP, gzip, ETag and caching headers",
          "[integration][webui]") {
    ServerProcess server(with({"--api-key", "sekrit"}));
    Client c("127.0.0.1", server.port());

    // The page without a key; the API still wants one.
    auto page = c.get("/");
    REQUIRE(page.status == 200);
    REQUIRE(page.headers.value_or("Content-Type").starts_with("text/html"));
    REQUIRE(!page.headers.contains("Content-Encoding"));
    REQUIRE(page.body.find("<div id=\"app\">") != std::string::npos);
    REQUIRE(c.get("/slots").status == 401);
    REQUIRE(c.get("/props").status == 401);
    REQUIRE(c.get("/props", {{"Authorization", "Bearer sekrit"}}).status == 200);
    REQUIRE(c.get("/index.html").body == page.body);

    // No inline script: every <script> has a src on our origin, and the CSP forbids the rest.
    const std::string csp = page.headers.value_or("Content-Security-Policy");
    INFO(csp);
    REQUIRE(csp.find("script-src 'self'") != std::string::npos);
    REQUIRE(csp.find("default-src 'none'") != std::string::npos);
    REQUIRE(csp.find("unsafe-inline") == std::string::npos);
    REQUIRE(csp.find("unsafe-eval") == std::string::npos);
    const std::regex script_re("<script([^>]*)>");
    int scripts = 0;
    for (std::sregex_iterator it(page.body.begin(), page.body.end(), script_re), end; it != end; ++it, ++scripts)
        REQUIRE(std::regex_search((*it)[1].str(), std::regex("src=\"assets/app-[0-9a-f]+\\.js\"")));
    REQUIRE(scripts == 1);
    REQUIRE(page.headers.value_or("X-Content-Type-Options") == "nosniff");

    // gzip when accepted, the same bytes once decoded; never when refused.
    auto gz = c.get("/", {{"Accept-Encoding", "br, gzip;q=0.8"}});
    REQUIRE(gz.status == 200);
    REQUIRE(gz.headers.value_or("Content-Encoding") == "gzip");
    REQUIRE(gz.headers.value_or("Vary").find("Accept-Encoding") != std::string::npos);
    REQUIRE(gz.body.size() >= 2);
    REQUIRE((unsigned char)gz.body[0] == 0x1f);
    REQUIRE((unsigned char)gz.body[1] == 0x8b);
    REQUIRE(gunzip(gz.body) == page.body);
    REQUIRE(!c.get("/", {{"Accept-Encoding", "gzip;q=0, identity"}}).headers.contains("Content-Encoding"));

    // The page revalidates (no-cache + ETag -> 304); the content-hashed assets are immutable.
    REQUIRE(page.headers.value_or("Cache-Control") == "no-cache");
    const std::string etag = page.headers.value_or("ETag");
    REQUIRE(etag.size() > 2);
    auto again = c.get("/", {{"If-None-Match", etag}});
    REQUIRE(again.status == 304);
    REQUIRE(again.body.empty());
    REQUIRE(c.get("/", {{"If-None-Match", "\"something-else\""}}).status == 200);

    std::smatch m;
    // Assets and API calls are relative to the page (it works under --api-prefix).
    REQUIRE(std::regex_search(page.body, m, std::regex("\"assets/app-[0-9a-f]+\\.js\"")));
    auto js = c.get("/" + m.str().substr(1, m.length() - 2), {{"Accept-Encoding", "gzip"}});
    REQUIRE(js.status == 200);
    REQUIRE(js.headers.value_or("Content-Type").starts_with("text/javascript"));
    REQUIRE(js.headers.value_or("Content-Encoding") == "gzip");
    REQUIRE(js.headers.value_or("Cache-Control").find("immutable") != std::string::npos);
    REQUIRE(js.body.size() < 200 * 1024);  // the whole UI stays small
    REQUIRE(std::regex_search(page.body, m, std::regex("\"assets/app-[0-9a-f]+\\.css\"")));
    REQUIRE(c.get("/" + m.str().substr(1, m.length() - 2)).headers.value_or("Content-Type").starts_with("text/css"));

    // HEAD: the headers without the body; unknown files: 404 (not 401); POST goes to the API, keyed.
    auto head = c.request("HEAD", "/");
    REQUIRE(head.status == 200);
    REQUIRE(head.body.empty());
    REQUIRE(c.get("/nope.js").status == 404);
    REQUIRE(c.get("/assets/app-0000.js").status == 404);
    REQUIRE(c.post("/", "{}").status == 404);
    REQUIRE(c.post("/v1/chat/completions", "{}").status == 401);
}

TEST_CASE("under --api-prefix the UI is at PREFIX/, PREFIX redirects there, its assets load", "[integration][webui]") {
    ServerProcess server(with({"--api-prefix", "/llm"}));
    Client c("127.0.0.1", server.port());
    auto bare = c.get("/llm");
    REQUIRE(bare.status == 308);
    REQUIRE(bare.headers.value_or("Location") == "/llm/");
    auto page = c.get("/llm/");
    REQUIRE(page.status == 200);
    std::smatch m;
    REQUIRE(std::regex_search(page.body, m, std::regex("\"assets/app-[0-9a-f]+\\.js\"")));
    REQUIRE(c.get("/llm/" + m.str().substr(1, m.length() - 2)).status == 200);
    REQUIRE(c.get("/llm/health").status == 200);
    REQUIRE(c.get("/").status == 404);
    REQUIRE(c.post("/llm", "{}").status == 404);  // only GET and HEAD are redirected
}

TEST_CASE("no-webui flag: / is 404 and the API is unchanged", "[integration][webui]") {
    ServerProcess server(with({"--no-webui"}));
    Client c("127.0.0.1", server.port());
    REQUIRE(c.get("/").status == 404);
    REQUIRE(c.get("/index.html").status == 404);
    REQUIRE(c.get("/health").status == 200);
}

TEST_CASE("the path flag serves that directory and nothing outside it", "[integration][webui]") {
    TempDir tmp;
    const fs::path root = tmp.path / "site";
    write_file(root / "index.html", "<h1>custom</h1>");
    write_file(root / "sub" / "a.txt", "inside");
    write_file(root / "sub" / "index.html", "sub index");
    write_file(root / ".secret", "hidden");
    write_file(tmp.path / "outside.txt", "OUTSIDE");
    fs::create_symlink(tmp.path / "outside.txt", root / "escape.txt");
    fs::create_directory_symlink(tmp.path, root / "up");
    fs::create_symlink(root / "sub" / "a.txt", root / "alias.txt");  // a link that stays inside is fine

    ServerProcess server(with({"--path", root.string(), "--api-key", "k"}));
    Client c("127.0.0.1", server.port());
    auto index = c.get("/");
    REQUIRE(index.status == 200);
    REQUIRE(index.body == "<h1>custom</h1>");
    REQUIRE(index.headers.value_or("Content-Type").starts_with("text/html"));
    REQUIRE(c.get("/sub/a.txt").body == "inside");
    REQUIRE(c.get("/sub/").body == "sub index");
    REQUIRE(c.get("/alias.txt").body == "inside");
    const std::string etag = index.headers.value_or("ETag");
    REQUIRE(c.get("/", {{"If-None-Match", etag}}).status == 304);

    for (const char* target : {"/../outside.txt", "/sub/../../outside.txt", "/%2e%2e/outside.txt",
                               "/sub/%2E%2E/%2E%2E/outside.txt", "/..%2foutside.txt", "/escape.txt",
                               "/up/outside.txt", "/.secret", "/sub/..%5c..%5coutside.txt", "/missing"}) {
        INFO(target);
        auto r = c.get(target);
        REQUIRE(r.status == 404);
        REQUIRE(r.body.find("OUTSIDE") == std::string::npos);
    }
    REQUIRE(c.get("/props").status == 401);  // the API keeps its key
}

TEST_CASE("the path flag must name a directory", "[integration][webui]") {
    const CliResult r = run_ggserve("serve --port 0 -m " + stories_model() + " --path /nonexistent/dir");
    INFO(r.output);
    REQUIRE(r.code == 2);
    REQUIRE(r.output.find("--path") != std::string::npos);
}
