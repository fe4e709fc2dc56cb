// read_file, write_file and edit_file against a temporary directory; paths; the parameter check.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "server/tools/paths.h"
#include "server/tools/toolbox.h"
#include "tools_util.h"

using json = nlohmann::json;

TEST_CASE("tools table: llama-server's names in its order, each an OpenAI function tool", "[tools]") {
    std::vector<std::string> names;
    for (const auto& t : tools::tool_table()) {
        names.push_back(t.name);
        const json entry = t.to_json();
        CHECK(entry["tool"] == t.name);
        CHECK(entry["type"] == "builtin");
        CHECK(entry["permissions"]["write"].is_boolean());
        CHECK(entry["uses_cwd"] == (t.name != "get_datetime"));  // the clock reads no directory
        CHECK(entry["display_name"].is_string());
        CHECK(entry["definition"]["type"] == "function");
        CHECK(entry["definition"]["function"]["name"] == t.name);
        CHECK(entry["definition"]["function"]["parameters"]["type"] == "object");
    }
    CHECK(names == std::vector<std::string>{"read_file", "file_glob_search", "grep_search", "exec_shell_command",
                                            "write_file", "edit_file", "get_datetime", "get_info"});
    CHECK(tool_named("exec_shell_command").write);
    CHECK(tool_named("write_file").write);
    CHECK(tool_named("edit_file").write);
    CHECK_FALSE(tool_named("read_file").write);
    CHECK_FALSE(tool_named("grep_search").write);
}

TEST_CASE("tools toolbox: all, a subset in table order, and unknown names refused", "[tools]") {
    CHECK(tools::Toolbox({"all"}).names().size() == tools::tool_table().size());
    CHECK(tools::Toolbox({"grep_search", "read_file"}).names() == std::vector<std::string>{"read_file", "grep_search"});
    CHECK(tools::Toolbox(tools::Toolbox::split_list(" read_file , ,get_info")).names() ==
          std::vector<std::string>{"read_file", "get_info"});
    CHECK(tools::Toolbox({}).empty());
    CHECK(tools::Toolbox({"read_file"}).find("write_file") == nullptr);
    try {
        tools::Toolbox({"read_file", "rm_rf"});
        FAIL("an unknown tool was accepted");
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("unknown tool \"rm_rf\"") != std::string::npos);
        CHECK(std::string(e.what()).find("exec_shell_command") != std::string::npos);
    }
}

TEST_CASE("tools params: missing and wrong-typed parameters are refused, naming them", "[tools]") {
    auto refused = [](const std::string& tool, const json& params) -> std::string {
        try {
            tools::check_params(tool_named(tool), params);
        } catch (const tools::ParamError& e) {
            return e.what();
        }
        return "";
    };
    CHECK(refused("read_file", json::object()).find("'path'") != std::string::npos);
    CHECK(refused("read_file", {{"path", 1}}).find("'path' must be a string") != std::string::npos);
    CHECK(refused("read_file", {{"path", "a"}, {"start_line", "1"}}).find("'start_line' must be an integer") !=
          std::string::npos);
    CHECK(refused("read_file", {{"path", "a"}, {"start_line", 1.5}}).find("start_line") != std::string::npos);
    CHECK(refused("read_file", {{"path", "a"}, {"append_loc", 1}}).find("append_loc") != std::string::npos);
    CHECK(refused("edit_file", {{"path", "a"}, {"edits", "x"}}).find("'edits' must be an array") != std::string::npos);
    CHECK(refused("edit_file", {{"path", "a"}, {"edits", {{{"old_text", "x"}}}}}).find("edits[0].new_text") !=
          std::string::npos);
    CHECK(refused("edit_file", {{"path", "a"}, {"edits", {{{"old_text", "x"}, {"new_text", 2}}}}})
              .find("edits[0].new_text") != std::string::npos);
    CHECK(refused("exec_shell_command", json::array()).find("object") != std::string::npos);
    CHECK(refused("read_file", {{"path", "a"}, {"unknown", 1}}).empty());  // ignored, as llama-server does
    CHECK(refused("get_info", json::object()).empty());
}

TEST_CASE("tools paths: ~ is HOME, relative paths follow the call's directory, dots fold", "[tools]") {
    const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
    if (!home.empty()) {
        CHECK(tools::expand_home("~") == home);
        CHECK(tools::expand_home("~/x") == home + "/x");
    }
    CHECK(tools::expand_home("~user/x") == "~user/x");
    CHECK(tools::resolve_path("b/c.txt", "/a") == "/a/b/c.txt");
    CHECK(tools::resolve_path("../c.txt", "/a/b") == "/a/c.txt");
    CHECK(tools::resolve_path("/x/./y/..", "/a") == "/x");
    CHECK(tools::resolve_path("/", "/a") == "/");
    CHECK(tools::resolve_path("f", "") == (std::filesystem::current_path() / "f").string());
}

TEST_CASE("tools read_file: whole files, line ranges, line numbers, limits, base64", "[tools]") {
    TempDir d;
    d.write("a.txt", "one\ntwo\nthree\n");
    CHECK(call_tool("read_file", {{"path", "a.txt"}}, d.str())["plain_text_response"] == "one\ntwo\nthree\n");
    CHECK(call_tool("read_file", {{"path", d.str() + "/a.txt"}}, "/")["plain_text_response"] == "one\ntwo\nthree\n");
    CHECK(call_tool("read_file", {{"path", "a.txt"}, {"start_line", 2}, {"end_line", 2}}, d.str())["plain_text_response"] ==
          "two\n");
    CHECK(call_tool("read_file", {{"path", "a.txt"}, {"start_line", 2}, {"append_loc", true}}, d.str())
              ["plain_text_response"] == "2\u2192two\n3\u2192three\n");
    CHECK(call_tool("read_file", {{"path", "missing.txt"}}, d.str())["error"] == "cannot stat file: missing.txt");
    CHECK(call_tool("read_file", {{"path", "."}}, d.str())["error"] == "cannot stat file: .");

    std::string big;
    for (int i = 0; i < 3000; ++i) big += "line " + std::to_string(i) + "\n";  // > 16 KiB
    d.write("big.txt", big);
    CHECK(call_tool("read_file", {{"path", "big.txt"}}, d.str())["error"].get<std::string>().find("file too large") == 0);
    CHECK(call_tool("read_file", {{"path", "big.txt"}, {"start_line", 1000}, {"end_line", 1001}}, d.str())
              ["plain_text_response"] == "line 999\nline 1000\n");
    const std::string capped =
        call_tool("read_file", {{"path", "big.txt"}, {"end_line", 100000}}, d.str())["plain_text_response"];
    CHECK(capped.size() <= 16 * 1024 + 20);
    CHECK(capped.substr(capped.size() - 18) == "[output truncated]");

    d.write("bin", std::string("\x00\xff\x01", 3));
    const json b = call_tool("read_file", {{"path", "bin"}}, d.str(), true);
    CHECK(b["base64"] == "AP8B");
    CHECK(b["size_bytes"] == 3);
}

TEST_CASE("tools read_file and write_file: a FIFO is refused at once, never waited on", "[tools]") {
    TempDir d;
    REQUIRE(mkfifo((d.path / "fifo").c_str(), 0600) == 0);
    CHECK(call_tool("read_file", {{"path", "fifo"}}, d.str()).contains("error"));
    CHECK(call_tool("write_file", {{"path", "fifo"}, {"content", "x"}}, d.str())["error"] == "failed to write file: fifo");
}

TEST_CASE("tools write_file: creates the file and its directories, overwrites", "[tools]") {
    TempDir d;
    const json r = call_tool("write_file", {{"path", "x/y/z.txt"}, {"content", "hello"}}, d.str());
    CHECK(r["result"] == "file written successfully");
    CHECK(r["path"] == "x/y/z.txt");
    CHECK(r["bytes"] == 5);
    CHECK(d.read("x/y/z.txt") == "hello");
    call_tool("write_file", {{"path", "x/y/z.txt"}, {"content", "hi"}}, d.str());
    CHECK(d.read("x/y/z.txt") == "hi");
    CHECK(call_tool("write_file", {{"path", "x"}, {"content", "no"}}, d.str())["error"] == "failed to write file: x");
}

TEST_CASE("tools edit_file: exact, several at once against the original, and the refusals", "[tools]") {
    TempDir d;
    d.write("f.txt", "alpha\nbeta\ngamma\n");
    json r = call_tool("edit_file",
                       {{"path", "f.txt"},
                        {"edits", {{{"old_text", "gamma"}, {"new_text", "GAMMA"}}, {{"old_text", "alpha"}, {"new_text", "beta"}}}}},
                       d.str());
    CHECK(r["result"] == "file edited successfully");
    CHECK(r["edits_applied"] == 2);
    CHECK(d.read("f.txt") == "beta\nbeta\nGAMMA\n");  // the second edit's "beta" was not seen by the first

    auto error = [&](const json& edits) {
        return call_tool("edit_file", {{"path", "f.txt"}, {"edits", edits}}, d.str()).value("error", "");
    };
    CHECK(error(json::array()) == "\"edits\" must be a non-empty array");
    CHECK(error({{{"old_text", ""}, {"new_text", "x"}}}) == "edits[0].old_text must not be empty");
    CHECK(error({{{"old_text", "delta"}, {"new_text", "x"}}}).find("could not find edits[0].old_text") == 0);
    CHECK(error({{{"old_text", "beta"}, {"new_text", "x"}}}).find("found 2 occurrences of edits[0].old_text") == 0);
    CHECK(error({{{"old_text", "GAMMA"}, {"new_text", "x"}}, {{"old_text", "MMA\n"}, {"new_text", "y"}}})
              .find("overlap") != std::string::npos);
    CHECK(error({{{"old_text", "GAMMA"}, {"new_text", "GAMMA"}}}).find("no changes made") == 0);
    CHECK(d.read("f.txt") == "beta\nbeta\nGAMMA\n");  // no refused edit wrote anything
    CHECK(call_tool("edit_file", {{"path", "nope.txt"}, {"edits", {{{"old_text", "a"}, {"new_text", "b"}}}}}, d.str())
              ["error"] == "failed to open file: nope.txt");
}

TEST_CASE("tools edit_file: typographic quotes and trailing blanks still match, other lines stay as they were",
          "[tools]") {
    TempDir d;
    d.write("g.txt", "keep \u201Cthis\u201D  \nsay \u201Chello\u201D \t\nend\u2014here\n");
    const json r = call_tool("edit_file", {{"path", "g.txt"}, {"edits", {{{"old_text", "say \"hello\""}, {"new_text", "say \"bye\""}}}}},
                             d.str());
    CHECK(r["result"] == "file edited successfully");
    CHECK(d.read("g.txt") == "keep \u201Cthis\u201D  \nsay \"bye\"\nend\u2014here\n");
}
