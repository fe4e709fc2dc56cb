// The router's catalog (--models-dir scan, preset INI files) and its choice of the model to unload.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "server/router/model_catalog.h"
#include "server/router/model_manager.h"

namespace {

namespace fs = std::filesystem;

struct TempDir {
    fs::path dir;
    TempDir() {
        char tmpl[] = "/tmp/ggserve-catalog-XXXXXX";
        REQUIRE(mkdtemp(tmpl));
        dir = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    void file(const fs::path& rel, const std::string& text = "x") {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    }
};

}  // namespace

TEST_CASE("parse_ini: sections, keys, comments, and errors naming the line", "[router]") {
    const auto s = router::parse_ini(
        "version = 1\n; comment\n# another\n\n[*]\nc = 8192\n[org/Model:Q8_0]\n  n-gpu-layers = 12 ; trailing\n"
        "chat-template=chatml\npath = a;b#c\nc = 1\nc = 2\r\n[*]\nngl = 3\n");
    REQUIRE(s.size() == 3);
    CHECK(s[0].name.empty());
    CHECK(s[0].values == router::KeyValues{{"version", "1"}});
    CHECK(s[1].name == "*");
    CHECK(s[1].values == router::KeyValues{{"c", "8192"}, {"ngl", "3"}});  // a repeated header adds to its section
    CHECK(s[2].name == "org/Model:Q8_0");
    CHECK(s[2].values ==
          router::KeyValues{{"n-gpu-layers", "12"}, {"chat-template", "chatml"}, {"path", "a;b#c"}, {"c", "2"}});
    CHECK_THROWS_WITH(router::parse_ini("[a]\nno equals sign\n"), Catch::Contains("line 2"));
    CHECK_THROWS_WITH(router::parse_ini("[unclosed\n"), Catch::Contains("line 1"));
    CHECK_THROWS_WITH(router::parse_ini("[]\n"), Catch::Contains("empty section name"));
    CHECK_THROWS_WITH(router::parse_ini("[a]\n-c = 3\n"), Catch::Contains("start with a letter"));
}

TEST_CASE("scan_models_dir: files and model directories, sorted, projectors passed over", "[router]") {
    TempDir t;
    t.file("b.gguf");
    t.file("a.gguf");
    t.file("readme.txt");
    t.file(".hidden.gguf");
    t.file("vision/mmproj-f16.gguf");
    t.file("vision/model-q8_0.gguf");
    t.file("split/big-00002-of-00002.gguf");
    t.file("split/big-00001-of-00002.gguf");
    t.file("nothing/readme.md");
    const auto m = router::scan_models_dir(t.dir.string());
    REQUIRE(m.size() == 4);
    CHECK(m[0].name == "a");
    CHECK(m[1].name == "b");
    CHECK(m[2].name == "split");
    CHECK(fs::path(m[2].path).filename() == "big-00001-of-00002.gguf");
    CHECK(m[3].name == "vision");
    CHECK(fs::path(m[3].path).filename() == "model-q8_0.gguf");
    REQUIRE(m[3].warnings.size() == 1);
    CHECK(m[3].source == "models_dir");
    CHECK_THROWS_WITH(router::scan_models_dir((t.dir / "missing").string()), Catch::Contains("not a directory"));
}

TEST_CASE("build_catalog: presets merge with the directory, [*] first, names and aliases unique", "[router]") {
    TempDir t;
    t.file("models/a.gguf");
    t.file("models/b.gguf");
    t.file("p.ini",
           "version = 1\n[*]\nc = 100\ntemp = 0.5\nstop-timeout = 3\n[a]\nc = 200\nalias = x, y\ntags = t1\n"
           "load-on-startup = true\n[extra]\nmodel = /m/extra.gguf\nLLAMA_ARG_N_PREDICT = 7\nstop-timeout = 9\n");
    const auto cat = router::build_catalog((t.dir / "models").string(), (t.dir / "p.ini").string());
    REQUIRE(cat.size() == 3);
    const auto& a = cat[0];
    CHECK(a.name == "a");
    CHECK(a.source == "preset");
    CHECK(a.options == router::KeyValues{{"c", "200"}, {"temp", "0.5"}});  // the model's value wins, in [*]'s place
    CHECK(a.aliases == std::vector<std::string>{"x", "y"});
    CHECK(a.tags == std::vector<std::string>{"t1"});
    CHECK(a.load_on_startup);
    CHECK(a.stop_timeout_s == 3);
    const auto& b = cat[1];
    CHECK(b.source == "models_dir");
    CHECK(b.options == router::KeyValues{{"c", "100"}, {"temp", "0.5"}});
    CHECK_FALSE(b.load_on_startup);
    const auto& e = cat[2];
    CHECK(e.name == "extra");
    CHECK(e.path == "/m/extra.gguf");
    CHECK(e.stop_timeout_s == 9);
    CHECK(e.options == router::KeyValues{{"c", "100"}, {"temp", "0.5"}, {"LLAMA_ARG_N_PREDICT", "7"}});

    t.file("dup.ini", "[a]\nalias = b\n");
    CHECK_THROWS_WITH(router::build_catalog((t.dir / "models").string(), (t.dir / "dup.ini").string()),
                      Catch::Contains("alias 'b' of model 'a'"));
    t.file("ghost.ini", "[ghost]\nc = 1\n");
    CHECK_THROWS_WITH(router::build_catalog((t.dir / "models").string(), (t.dir / "ghost.ini").string()),
                      Catch::Contains("[ghost] names no model file"));
    t.file("bool.ini", "[a]\nload-on-startup = maybe\n");
    CHECK_THROWS_WITH(router::build_catalog((t.dir / "models").string(), (t.dir / "bool.ini").string()),
                      Catch::Contains("true or false"));
    CHECK_THROWS_WITH(router::build_catalog("", (t.dir / "none.ini").string()), Catch::Contains("cannot read"));
}

TEST_CASE("pick_lru: the least recently used loaded model that has no request in flight", "[router]") {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const auto at = [&](int s) { return t0 + std::chrono::seconds(s); };
    CHECK(router::pick_lru({}) == -1);
    CHECK(router::pick_lru({{true, 0, at(5)}, {true, 0, at(2)}, {true, 0, at(9)}}) == 1);
    CHECK(router::pick_lru({{true, 0, at(5)}, {true, 1, at(2)}, {false, 0, at(1)}}) == 0);  // busy, unloaded skipped
    CHECK(router::pick_lru({{true, 2, at(5)}, {false, 0, at(1)}}) == -1);
}
