// file_glob_search, grep_search and the glob patterns they share, on temporary trees.
#include <catch2/catch.hpp>

#include "server/tools/listing.h"
#include "server/tools/subprocess.h"
#include "tools_util.h"

using json = nlohmann::json;

TEST_CASE("tools glob: *, ?, classes, ** and the include rules", "[tools]") {
    using tools::glob_match;
    using tools::path_glob_match;
    CHECK(glob_match("*.cpp", "a.cpp"));
    CHECK_FALSE(glob_match("*.cpp", "d/a.cpp"));
    CHECK(glob_match("?.h", "a.h"));
    CHECK_FALSE(glob_match("?.h", "ab.h"));
    CHECK(glob_match("[ab].txt", "b.txt"));
    CHECK_FALSE(glob_match("[!ab].txt", "b.txt"));
    CHECK(glob_match("[a-c]x", "cx"));
    CHECK(glob_match("**", "a/b/c"));
    CHECK(glob_match("src/**/*.h", "src/x/y/z.h"));
    CHECK(glob_match("src/**/*.h", "src/z.h"));
    CHECK(glob_match("**/z.h", "z.h"));
    CHECK_FALSE(glob_match("src/*.h", "src/x/z.h"));
    CHECK(glob_match("a[b", "a[b"));
    CHECK(path_glob_match("*.cpp", "deep/down/x.cpp"));            // no '/': the file name at any depth
    CHECK(path_glob_match("down/*.cpp", "deep/down/x.cpp"));       // '/': "**/" put in front
    CHECK_FALSE(path_glob_match("/down/*.cpp", "deep/down/x.cpp"));  // a leading '/': anchored at the base
    CHECK(path_glob_match("/deep/down/*.cpp", "deep/down/x.cpp"));
    // A pattern of many stars against a long path stays quick (no backtracking blow-up).
    CHECK_FALSE(glob_match(std::string(40, '*') + "x", std::string(5000, 'a')));
}

namespace {
void make_tree(const TempDir& d) {
    d.write("a.cpp", "int main() { return 0; }\n");
    d.write("b.h", "// header\n#define ANSWER 42\n");
    d.write("src/c.cpp", "void f() {}\nvoid g() { f(); }\n");
    d.write("src/deep/d.cpp", "// TODO: answer\n");
    d.write("node_modules/m.cpp", "junk\n");
    d.write("build/out.cpp", "junk\n");
}
std::vector<std::string> paths_of(const json& r) {
    std::vector<std::string> out;
    for (const auto& e : r["entries"]) out.push_back(e["path"].get<std::string>() + (e["type"] == "dir" ? "/" : ""));
    return out;
}
}  // namespace

TEST_CASE("tools file_glob_search: patterns, types, depth, limits, junk directories not entered", "[tools]") {
    TempDir d;
    make_tree(d);
    json r = call_tool("file_glob_search", {{"path", "."}, {"include", "*.cpp"}}, d.str());
    CHECK(paths_of(r) == std::vector<std::string>{"a.cpp", "src/c.cpp", "src/deep/d.cpp"});
    CHECK(r["base"] == d.str());
    CHECK(r["plain_text_response"].get<std::string>().find("Total matches: 3") != std::string::npos);
    CHECK(paths_of(call_tool("file_glob_search", {{"path", d.str()}, {"include", "src/*.cpp"}}, "/")) ==
          std::vector<std::string>{"src/c.cpp"});
    CHECK(paths_of(call_tool("file_glob_search", {{"path", "."}, {"include", "*.cpp"}, {"exclude", "deep/*"}}, d.str())) ==
          std::vector<std::string>{"a.cpp", "src/c.cpp"});
    CHECK(paths_of(call_tool("file_glob_search", {{"path", "."}, {"max_depth", 1}}, d.str())) ==
          std::vector<std::string>{"a.cpp", "b.h"});
    CHECK(paths_of(call_tool("file_glob_search", {{"path", "."}, {"type", "dir"}}, d.str())) ==
          std::vector<std::string>{"build/", "node_modules/", "src/", "src/deep/"});
    CHECK(paths_of(call_tool("file_glob_search", {{"path", "src"}, {"type", "all"}}, d.str())) ==
          std::vector<std::string>{"c.cpp", "deep/", "deep/d.cpp"});
    r = call_tool("file_glob_search", {{"path", "."}, {"limit", 2}}, d.str());
    CHECK(r["entries"].size() == 2);
    CHECK(r["plain_text_response"].get<std::string>().find("results limit reached (4 total matches)") != std::string::npos);
    CHECK(call_tool("file_glob_search", {{"path", "."}, {"limit", 0}}, d.str())["error"] ==
          "invalid limit: 0 (expected 1 or more)");
    CHECK(call_tool("file_glob_search", {{"path", "."}, {"type", "link"}}, d.str())["error"].get<std::string>().find(
              "invalid type: link") == 0);
    CHECK(call_tool("file_glob_search", {{"path", "a.cpp"}}, d.str())["error"] ==
          "path does not exist or is not a directory: a.cpp");
}

TEST_CASE("tools file_glob_search: in a git work tree, .gitignore decides", "[tools]") {
    TempDir d;
    make_tree(d);
    d.write(".gitignore", "*.h\n");
    const tools::ProcessResult init = [&] {
        tools::ProcessOptions po;
        po.cwd = d.str();
        return tools::run_process({"git", "init", "-q"}, po);
    }();
    if (!init.spawn_error.empty() || init.exit_code != 0) {
        WARN("no git here: " << init.spawn_error << init.output);
        return;
    }
    const json r = call_tool("file_glob_search", {{"path", "."}}, d.str());
    // b.h is ignored; build/ and node_modules/ are listed, since git does not ignore them here.
    CHECK(paths_of(r) == std::vector<std::string>{".gitignore", "a.cpp", "build/out.cpp", "node_modules/m.cpp",
                                                  "src/c.cpp", "src/deep/d.cpp"});
}

TEST_CASE("tools grep_search: regex, literal, case, context, line numbers, single file, errors", "[tools]") {
    TempDir d;
    make_tree(d);
    auto text = [&](const json& params) {
        return call_tool("grep_search", params, d.str())["plain_text_response"].get<std::string>();
    };
    CHECK(text({{"path", "."}, {"pattern", "f\\(\\)"}}) == "src/c.cpp:void f() {}\nsrc/c.cpp:void g() { f(); }\n\n---\nTotal matches: 2\n");
    CHECK(text({{"path", "."}, {"pattern", "f()"}, {"literal", true}, {"return_line_numbers", true}}) ==
          "src/c.cpp:1:void f() {}\nsrc/c.cpp:2:void g() { f(); }\n\n---\nTotal matches: 2\n");
    CHECK(text({{"path", "."}, {"pattern", "answer"}, {"ignore_case", true}, {"include", "*.h"}}) ==
          "b.h:#define ANSWER 42\n\n---\nTotal matches: 1\n");
    CHECK(text({{"path", "."}, {"pattern", "ANSWER"}, {"literal", true}, {"ignore_case", true}}) ==
          "b.h:#define ANSWER 42\nsrc/deep/d.cpp:// TODO: answer\n\n---\nTotal matches: 2\n");
    CHECK(text({{"path", "src/c.cpp"}, {"pattern", "g\\("}, {"context_lines", 1}}) ==
          "src/c.cpp-1-void f() {}\nsrc/c.cpp:2:void g() { f(); }\n--\n\n---\nTotal matches: 1\n");
    CHECK(text({{"path", "."}, {"pattern", "junk"}}) == "\n---\nTotal matches: 0\n");
    CHECK(call_tool("grep_search", {{"path", "."}, {"pattern", "("}}, d.str())["error"].get<std::string>().find(
              "invalid regex") == 0);
    CHECK(call_tool("grep_search", {{"path", "nope"}, {"pattern", "x"}}, d.str())["error"] == "path does not exist: nope");

    std::string many;
    for (int i = 0; i < 150; ++i) many += "hit\n";
    d.write("many.txt", many);
    const std::string capped = text({{"path", "many.txt"}, {"pattern", "hit"}});
    CHECK(capped.find("Total matches: 100") != std::string::npos);
    CHECK(capped.find("100 matches limit reached") != std::string::npos);
}
