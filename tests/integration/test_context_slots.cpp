// Slot persistence against the real binary: POST /slots/{id}?action=save|restore|erase with
// --slot-save-path, `ggserve run --prompt-cache`, and hostile state files and file names.
#include <catch2/catch.hpp>
#include <random>

#include "context_util.h"

using namespace ctxtest;
using server::http::Client;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_file(const std::string& p, const std::string& b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << b;
}

server::http::ClientResponse action(uint16_t port, const std::string& target,
                                    const json& body = json::object()) {
    Client c("127.0.0.1", port);
    return c.post(target, body.dump());
}

// Files in dir and its parent, to check that nothing appears outside the save directory.
std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("slot save -> erase -> restore round trip gives identical greedy output",
          "[integration][context][slots]") {
    TempDir root;
    const std::string save_dir = root.file("slots");
    ServerProcess s(
        {"-m", stories_model(), "-c", "1024", "-np", "2", "-t", "2", "--slot-save-path", save_dir});
    const json g = stories_golden();
    const json& c0 = g["cases"][3];
    const int n_prompt = (int)c0["prompt_tokens"].size();

    const json first = complete(s.port(), c0["prompt"], 24, {{"id_slot", 0}});
    REQUIRE(first["timings"]["prompt_n"] == n_prompt);

    auto r = action(s.port(), "/slots/0?action=save", {{"filename", "story.bin"}});
    REQUIRE(r.status == 200);
    json j = r.json();
    REQUIRE(j["id_slot"] == 0);
    REQUIRE(j["filename"] == "story.bin");
    REQUIRE(j["n_saved"] == n_prompt + 23);
    REQUIRE(j["n_written"] == fs::file_size(save_dir + "/story.bin"));
    REQUIRE(j["timings"].contains("save_ms"));

    r = action(s.port(), "/slots/0?action=erase");
    REQUIRE(r.status == 200);
    REQUIRE(r.json()["n_erased"] == n_prompt + 23);
    // Erased: the prompt is evaluated in full again.
    REQUIRE(complete(s.port(), c0["prompt"], 4, {{"id_slot", 0}})["timings"]["prompt_n"] == n_prompt);
    action(s.port(), "/slots/0?action=erase");

    // Restored into the other slot, the same request evaluates one token and says the same.
    r = action(s.port(), "/slots/1?action=restore", {{"filename", "story.bin"}});
    REQUIRE(r.status == 200);
    j = r.json();
    REQUIRE(j["id_slot"] == 1);
    REQUIRE(j["n_restored"] == n_prompt + 23);
    REQUIRE(j["n_read"] == fs::file_size(save_dir + "/story.bin"));
    REQUIRE(j["timings"].contains("restore_ms"));
    const json again = complete(s.port(), c0["prompt"], 24, {{"id_slot", 1}});
    REQUIRE(again["timings"]["prompt_n"] == 1);
    REQUIRE(again["tokens"] == first["tokens"]);
    REQUIRE(again["content"] == first["content"]);
    // The restored generated tokens are reused too.
    std::vector<int> longer = c0["prompt_tokens"];
    for (int t : first["tokens"]) longer.push_back(t);
    const json cont = complete(s.port(), longer, 4, {{"id_slot", 1}});
    REQUIRE(cont["timings"]["prompt_n"] == 1);
    REQUIRE(cont["tokens_cached"] == n_prompt + 23);
}

TEST_CASE("hostile slot files and names give clear errors, nothing outside the save directory is touched",
          "[integration][context][slots]") {
    TempDir root;
    const std::string save_dir = root.file("slots");
    const std::string outside = root.file("outside.bin");
    write_file(outside, "precious");
    ServerProcess s(
        {"-m", stories_model(), "-c", "512", "-np", "1", "-t", "2", "--slot-save-path", save_dir});
    const json g = stories_golden();
    complete(s.port(), g["cases"][0]["prompt"], 8);
    REQUIRE(action(s.port(), "/slots/0?action=save", {{"filename", "good.bin"}}).status == 200);
    const std::string good = read_file(save_dir + "/good.bin");

    auto error_of = [&](const std::string& target, const json& body, int status, const std::string& text) {
        INFO(target << " " << body.dump());
        const auto r = action(s.port(), target, body);
        REQUIRE(r.status == status);
        const json e = r.json();
        REQUIRE(e["error"]["code"] == status);
        REQUIRE(e["error"]["message"].get<std::string>().find(text) != std::string::npos);
    };

    SECTION("file names that leave the directory") {
        const auto before = listing(root.path);
        for (const char* name :
             {"../outside.bin", "../x.bin", "/etc/passwd", "sub/x.bin", "..", ".", ".hidden", "a\\b", "x\ny"})
            for (const char* act : {"save", "restore"})
                error_of(std::string("/slots/0?action=") + act, {{"filename", name}}, 400,
                         "invalid filename");
        // A NUL or other control byte is spelled out in the message (the message ended at a NUL).
        error_of("/slots/0?action=save", {{"filename", std::string("a\0b.bin", 7)}}, 400,
                 "invalid filename 'a\\x00b.bin': ");
        REQUIRE(listing(root.path) == before);
        REQUIRE(read_file(outside) == "precious");
        // A link planted in the directory is not followed, for reading or writing.
        fs::create_symlink(outside, save_dir + "/link.bin");
        error_of("/slots/0?action=restore", {{"filename", "link.bin"}}, 400, "symbolic link");
        REQUIRE(action(s.port(), "/slots/0?action=save", {{"filename", "link.bin"}}).status == 200);
        REQUIRE(read_file(outside) == "precious");
        REQUIRE(!fs::is_symlink(save_dir + "/link.bin"));
    }
    SECTION("damaged, foreign and random state files") {
        write_file(save_dir + "/trunc.bin", good.substr(0, good.size() / 2));
        error_of("/slots/0?action=restore", {{"filename", "trunc.bin"}}, 400, "truncated");
        write_file(save_dir + "/empty.bin", "");
        error_of("/slots/0?action=restore", {{"filename", "empty.bin"}}, 400, "truncated");
        std::string v = good;
        v[8] = 9;
        write_file(save_dir + "/version.bin", v);
        error_of("/slots/0?action=restore", {{"filename", "version.bin"}}, 400, "version 9");
        std::mt19937 rng(3);
        std::string noise(good.size(), '\0');
        for (char& ch : noise) ch = (char)rng();
        write_file(save_dir + "/noise.bin", noise);
        error_of("/slots/0?action=restore", {{"filename", "noise.bin"}}, 400, "not a ggserve state file");
        // A state saved with another model (by `ggserve run --prompt-cache`).
        const auto cli =
            run_cli({"run", "-m", shared_path("models/synth/synth-tiny-f16.gguf"), "-p", "Hello", "-n", "1",
                     "-c", "64", "--prompt-cache", save_dir + "/synth.bin", "--json"});
        REQUIRE(cli.status == 0);
        error_of("/slots/0?action=restore", {{"filename", "synth.bin"}}, 400, "different model");
        error_of("/slots/0?action=restore", {{"filename", "missing.bin"}}, 404, "no saved slot file");
    }
    SECTION("bad ids, actions and bodies") {
        error_of("/slots/1?action=save", {{"filename", "a.bin"}}, 400, "invalid slot id");
        error_of("/slots/abc?action=save", {{"filename", "a.bin"}}, 400, "invalid slot id");
        error_of("/slots/0?action=explode", {{"filename", "a.bin"}}, 400, "unknown action");
        error_of("/slots/0", {{"filename", "a.bin"}}, 400, "missing query parameter 'action'");
        error_of("/slots/0?action=save", json::object(), 400, "'filename' is required");
        error_of("/slots/0?action=save", {{"filename", 5}}, 400, "filename");
    }
    // The slot still serves the reference output.
    REQUIRE(complete(s.port(), g["cases"][0]["prompt"], 96)["tokens"] == g["cases"][0]["completion_tokens"]);
}

TEST_CASE("without --slot-save-path, save and restore are not supported", "[integration][context][slots]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-np", "1", "-t", "2"});
    const auto r = action(s.port(), "/slots/0?action=save", {{"filename", "a.bin"}});
    REQUIRE(r.status == 501);
    REQUIRE(r.json()["error"]["message"].get<std::string>().find("--slot-save-path") != std::string::npos);
    REQUIRE(action(s.port(), "/slots/0?action=erase").status == 200);
}

TEST_CASE("ggserve run --prompt-cache saves the prompt's state and reuses it",
          "[integration][context][cli]") {
    TempDir dir;
    const std::string file = dir.file("prompt.cache");
    const json g = stories_golden();
    const std::string prompt = g["cases"][2]["prompt"];
    const int n_prompt = (int)g["cases"][2]["prompt_tokens"].size();
    const std::vector<std::string> base = {"run", "-m",     stories_model(),  "-n", "32", "--temp", "0", "-t",
                                           "2",   "--json", "--prompt-cache", file};
    auto with_prompt = [&](const std::string& p) {
        auto args = base;
        args.insert(args.end(), {"-p", p});
        return run_cli(args);
    };

    const auto first = with_prompt(prompt);
    REQUIRE(first.status == 0);
    const json j1 = json::parse(first.out);
    REQUIRE(j1["timings"]["prompt_n"] == n_prompt);
    REQUIRE(j1["tokens_cached"] == 0);
    REQUIRE(fs::exists(file));

    const auto second = with_prompt(prompt);
    REQUIRE(second.status == 0);
    const json j2 = json::parse(second.out);
    REQUIRE(j2["timings"]["prompt_n"] == 1);
    REQUIRE(j2["tokens_cached"] == n_prompt - 1);
    REQUIRE(j2["completion_tokens"] == j1["completion_tokens"]);

    // A longer prompt with the same start evaluates only its new part.
    const auto third = with_prompt(prompt + " The sun was warm.");
    REQUIRE(third.status == 0);
    const json j3 = json::parse(third.out);
    REQUIRE(j3["tokens_cached"] == n_prompt);
    REQUIRE(j3["timings"]["prompt_n"].get<int>() + n_prompt == (int)j3["prompt_tokens"].size());

    // Damaged or foreign files: a clear error, exit code 1.
    write_file(file, "garbage");
    auto bad = with_prompt(prompt);
    REQUIRE(bad.status == 1);
    REQUIRE(bad.err.find("truncated") != std::string::npos);
    REQUIRE(bad.out.empty());
    const auto synth = run_cli({"run", "-m", shared_path("models/synth/synth-tiny-f16.gguf"), "-p", "Hello",
                                "-n", "1", "-c", "64", "--prompt-cache", file + ".synth", "--json"});
    REQUIRE(synth.status == 0);
    fs::rename(file + ".synth", file);
    bad = with_prompt(prompt);
    REQUIRE(bad.status == 1);
    REQUIRE(bad.err.find("different model") != std::string::npos);
}
