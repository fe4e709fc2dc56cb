// Router mode (llama-server's `--models-dir` without -m): one `ggserve serve` child per loaded model,
// requests routed by their "model", loading on demand, the --models-max cap, explicit load/unload, a
// preset INI file, API keys at the router, a child that dies, and the startup errors.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using server::http::Client;
using server::http::SseEvent;

// A temporary models directory: stories.gguf and stories-q8.gguf (links to the shared files) and a
// directory `sub` holding the q4_0 copy beside a projector file that the router must pass over.
struct ModelsDir {
    fs::path dir;
    ModelsDir() {
        char tmpl[] = "/tmp/ggserve-router-XXXXXX";
        REQUIRE(mkdtemp(tmpl));
        dir = tmpl;
        fs::create_symlink(fs::absolute(shared_path("models/stories260K.gguf")), dir / "stories.gguf");
        fs::create_symlink(fs::absolute(shared_path("models/stories260K-q8_0.gguf")), dir / "stories-q8.gguf");
        fs::create_directory(dir / "sub");
        fs::create_symlink(fs::absolute(shared_path("models/stories260K-q4_0.gguf")), dir / "sub" / "model-q4_0.gguf");
        fs::create_symlink(fs::absolute(shared_path("models/stories260K-q4_0.gguf")), dir / "sub" / "mmproj-f16.gguf");
        std::ofstream(dir / "notes.txt") << "not a model\n";
    }
    ~ModelsDir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string str() const { return dir.string(); }
};

// Router arguments: the directory, then small servers for every model.
std::vector<std::string> router_args(const ModelsDir& d, std::initializer_list<std::string> more = {}) {
    std::vector<std::string> a = {"--models-dir", d.str(), "-np", "1", "-c", "512", "-t", "1", "--no-warmup"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

json list(Client& c) {
    const auto r = c.get("/models");
    REQUIRE(r.status == 200);
    return r.json();
}

json entry(Client& c, const std::string& id) {
    const json all = list(c);
    for (const auto& m : all["data"])
        if (m["id"] == id) return m;
    FAIL("no model " << id);
    return {};
}

std::string status_of(Client& c, const std::string& id) { return entry(c, id)["status"]["value"]; }

// Waits (at most 20 s) until `id`'s status is `value`; the router changes it on its own threads.
bool wait_status(Client& c, const std::string& id, const std::string& value) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
        if (status_of(c, id) == value) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

json greedy(const std::string& model, const std::string& prompt, int n = 24) {
    return json{{"model", model}, {"prompt", prompt}, {"n_predict", n}, {"temperature", 0}, {"return_tokens", true}};
}

// The processes whose parent is `parent` (the router's model servers).
std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> out;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream f(e.path() / "stat");
        std::string line;
        if (!std::getline(f, line)) continue;
        const auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        char state;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent && state != 'Z') out.push_back((pid_t)std::stoi(name));
    }
    return out;
}

// The command line of process `pid`, its arguments separated by NULs.
std::string cmdline_of(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

// The child serving `alias` (its command line has "--alias NAME").
pid_t child_serving(pid_t router, const std::string& name) {
    for (pid_t pid : children_of(router))
        if (cmdline_of(pid).find(std::string("--alias") + '\0' + name + '\0') != std::string::npos) return pid;
    return -1;
}

bool gone(pid_t pid) { return kill(pid, 0) != 0; }

// The names GET /tools lists.
std::set<std::string> tool_names(Client& c) {
    const auto listed = c.get("/tools");
    REQUIRE(listed.status == 200);
    const json tools = listed.json();
    std::set<std::string> names;
    for (const auto& t : tools) names.insert(t["tool"].get<std::string>());
    return names;
}

bool wait_gone(pid_t pid) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!gone(pid) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return gone(pid);
}

}  // namespace

TEST_CASE("router: lists the directory's models, routes by model, same tokens as a plain server",
          "[integration][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d));
    Client c("127.0.0.1", r.port());
    CHECK(r.log().find("mmproj-f16.gguf (a multimodal projector) is not used") != std::string::npos);

    // Listing before anything loads: every model, unloaded, public like llama-server's.
    const json l = list(c);
    std::vector<std::string> ids;
    for (const auto& m : l["data"]) {
        ids.push_back(m["id"]);
        CHECK(m["status"]["value"] == "unloaded");
        CHECK(m["object"] == "model");
    }
    CHECK(ids == std::vector<std::string>{"stories", "stories-q8", "sub"});
    CHECK(c.get("/v1/models").json()["data"].size() == 3);
    CHECK(entry(c, "sub")["path"].get<std::string>().find("model-q4_0.gguf") != std::string::npos);
    CHECK(c.get("/health").json()["status"] == "ok");
    const json props = c.get("/props").json();
    CHECK(props["role"] == "router");
    CHECK(props["max_instances"] == 4);
    CHECK(props["models_autoload"] == true);

    // Routed by "model": the greedy reference of stories260K, as a plain server gives it.
    const json g = stories_golden()["cases"][0];
    const auto res = c.post("/completion", json{{"model", "stories"},
                                               {"prompt", g["prompt"]},
                                               {"n_predict", 96},
                                               {"temperature", 0},
                                               {"return_tokens", true}}
                                               .dump());
    REQUIRE(res.status == 200);
    CHECK(res.json()["tokens"] == g["completion_tokens"]);
    CHECK(res.json()["content"] == g["completion_text"]);
    const json loaded = entry(c, "stories");
    CHECK(loaded["status"]["value"] == "loaded");
    CHECK(loaded["meta"]["n_vocab"] == 512);  // the child's own /v1/models entry, merged
    const auto args = loaded["status"]["args"].get<std::vector<std::string>>();
    CHECK(std::find(args.begin(), args.end(), "--alias") != args.end());
    CHECK(std::find(args.begin(), args.end(), "-c") != args.end());
    CHECK(status_of(c, "stories-q8") == "unloaded");

    // GET routes by ?model=; the model's own /props.
    const auto mprops = c.get("/props?model=stories");
    REQUIRE(mprops.status == 200);
    CHECK(mprops.json()["default_generation_settings"]["n_ctx"] == 512);
    CHECK(mprops.json()["model_alias"] == "stories");
    CHECK(c.get("/slots?model=stories").json().size() == 1);
    CHECK(c.post("/tokenize", json{{"model", "stories"}, {"content", "Once upon"}}.dump()).json()["tokens"].size() > 0);

    // Streaming is relayed event by event; the text equals a plain server's for the same request.
    const json chat{{"model", "stories-q8"},
                    {"messages", {{{"role", "user"}, {"content", "Tell me a story"}}}},
                    {"max_tokens", 32},
                    {"temperature", 0}};
    json streamed_chat = chat;
    streamed_chat["stream"] = true;
    std::string text;
    int events = 0;
    bool done = false;
    const auto sr = c.stream("POST", "/v1/chat/completions", streamed_chat.dump(), {}, [&](const SseEvent& e) {
        ++events;
        if (e.data == "[DONE]") {
            done = true;
            return true;
        }
        const json j = json::parse(e.data);
        if (!j["choices"].empty() && j["choices"][0]["delta"].contains("content"))
            text += j["choices"][0]["delta"]["content"].get<std::string>();
        return true;
    });
    CHECK(sr.status == 200);
    CHECK(sr.complete);
    CHECK(done);
    CHECK(events > 5);
    ServerProcess plain({"-m", shared_path("models/stories260K-q8_0.gguf"), "-np", "1", "-c", "512", "-t", "1",
                         "--no-warmup"});
    Client pc("127.0.0.1", plain.port());
    const json expected = pc.post("/v1/chat/completions", chat.dump()).json();
    CHECK(text == expected["choices"][0]["message"]["content"].get<std::string>());
    CHECK(c.post("/v1/chat/completions", chat.dump()).json()["choices"][0]["message"]["content"] ==
          expected["choices"][0]["message"]["content"]);

    // Unknown or missing names: 400 in OpenAI's shape, as llama-server.
    const auto unknown = c.post("/completion", greedy("nope", "Once").dump());
    CHECK(unknown.status == 400);
    CHECK(unknown.json()["error"]["message"] == "model 'nope' not found");
    CHECK(unknown.json()["error"]["type"] == "invalid_request_error");
    const auto missing = c.post("/completion", json{{"prompt", "Once"}}.dump());
    CHECK(missing.status == 400);
    CHECK(missing.json()["error"]["message"] == "model name is missing from the request");
    CHECK(c.get("/props?model=nope").status == 400);

    // SIGTERM: the router stops its model servers and exits 0.
    const auto kids = children_of(r.pid());
    CHECK(kids.size() == 2);
    CHECK(r.stop() == 0);
    for (pid_t k : kids) CHECK(gone(k));
}

TEST_CASE("router: autoload off, explicit load and unload, --models-max 1 unloads the least recently used",
          "[integration][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d, {"--models-max", "1", "--no-models-autoload"}));
    Client c("127.0.0.1", r.port());
    CHECK(c.get("/props").json()["models_autoload"] == false);

    const auto off = c.post("/completion", greedy("stories", "Once").dump());
    CHECK(off.status == 400);
    CHECK(off.json()["error"]["message"].get<std::string>().find("is not loaded") != std::string::npos);
    CHECK(status_of(c, "stories") == "unloaded");
    // ?autoload=true loads it for this request.
    const auto on = c.post("/completion?autoload=true", greedy("stories", "Once").dump());
    REQUIRE(on.status == 200);
    const json first = on.json();
    CHECK(status_of(c, "stories") == "loaded");

    // Loading another with the cap at 1 unloads stories first.
    const auto load = c.post("/models/load", json{{"model", "stories-q8"}}.dump());
    REQUIRE(load.status == 200);
    CHECK(load.json()["success"] == true);
    // A request waits while its model loads (autoload only decides whether it may start a load).
    const auto q8 = c.post("/completion", greedy("stories-q8", "Once").dump());
    CHECK(q8.status == 200);
    CHECK(status_of(c, "stories-q8") == "loaded");
    CHECK(status_of(c, "stories") == "unloaded");
    CHECK_FALSE(entry(c, "stories")["status"].contains("failed"));
    CHECK(children_of(r.pid()).size() == 1);
    CHECK(r.wait_log("unloading 'stories', the least recently used model"));

    const auto again = c.post("/models/load", json{{"model", "stories-q8"}}.dump());
    CHECK(again.status == 400);
    CHECK(again.json()["error"]["message"] == "model is already running");
    CHECK(c.post("/models/load", json{{"model", "nope"}}.dump()).status == 404);
    CHECK(c.post("/models/unload", json{{"model", "nope"}}.dump()).status == 400);
    // Without a model name: 400 naming the field, for both (load was a 404 "model is not found").
    for (const char* path : {"/models/load", "/models/unload"}) {
        for (const json& body : {json::object(), json{{"model", 7}}, json{{"model", ""}}}) {
            const auto r = c.post(path, body.dump());
            CHECK(r.status == 400);
            CHECK(r.body.find("'model' is required") != std::string::npos);
        }
    }
    CHECK(c.post("/models/unload", json{{"model", "stories"}}.dump()).json()["error"]["message"] ==
          "model is not running");

    const pid_t q8_pid = child_serving(r.pid(), "stories-q8");
    REQUIRE(q8_pid > 0);
    const auto unload = c.post("/models/unload", json{{"model", "stories-q8"}}.dump());
    CHECK(unload.status == 200);
    CHECK(unload.json()["success"] == true);
    CHECK(c.post("/completion", greedy("stories-q8", "Once").dump()).status == 400);  // not loaded
    CHECK(wait_status(c, "stories-q8", "unloaded"));
    CHECK(wait_gone(q8_pid));
    CHECK_FALSE(entry(c, "stories-q8")["status"].contains("failed"));

    // Loaded again on request, the same tokens as before.
    const auto back = c.post("/completion?autoload=1", greedy("stories", "Once").dump());
    REQUIRE(back.status == 200);
    CHECK(back.json()["tokens"] == first["tokens"]);
}

TEST_CASE(
    "router: a model server killed with SIGKILL fails its requests clearly, the others go on, it reloads",
    "[integration][threads][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d));
    Client c("127.0.0.1", r.port());
    REQUIRE(c.post("/completion", greedy("stories", "Once").dump()).status == 200);
    REQUIRE(c.post("/completion", greedy("stories-q8", "Once").dump()).status == 200);
    const pid_t victim = child_serving(r.pid(), "stories");
    REQUIRE(victim > 0);

    // A client that goes away mid-stream: the router closes the child connection, and the child frees
    // its slot (this request would otherwise generate for a long time).
    const json endless{{"model", "stories"}, {"prompt", "Once"}, {"n_predict", 100000}, {"ignore_eos", true},
                       {"stream", true}};
    {
        Client gone_client("127.0.0.1", r.port());
        int seen = 0;
        const auto ab = gone_client.stream("POST", "/completion", endless.dump(), {},
                                           [&](const SseEvent&) { return ++seen < 3; });
        CHECK(ab.aborted);
    }
    bool freed = false;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
         !freed && std::chrono::steady_clock::now() < until;) {
        freed = c.get("/slots?model=stories").json()[0]["is_processing"] == false;
        if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(freed);

    // Kill it in the middle of a stream: the stream ends with an error event, not silently.
    std::string last;
    bool killed = false;
    const auto sr = c.stream("POST", "/completion", endless.dump(), {}, [&](const SseEvent& e) {
                                 last = e.data;
                                 if (!killed) {
                                     killed = true;
                                     kill(victim, SIGKILL);
                                 }
                                 return true;
                             });
    CHECK(sr.status == 200);
    CHECK(killed);
    const json err = json::parse(last);
    CHECK(err["error"]["code"] == 503);
    CHECK(err["error"]["message"].get<std::string>().find("the server of model 'stories' broke off") !=
          std::string::npos);
    REQUIRE(wait_status(c, "stories", "unloaded"));
    const json failed = entry(c, "stories")["status"];
    CHECK(failed["failed"] == true);
    CHECK(failed["exit_code"] == 128 + SIGKILL);
    CHECK(r.wait_log("the server of model 'stories' ended by itself"));

    // The other model never noticed; the dead one comes back on the next request.
    CHECK(c.post("/completion", greedy("stories-q8", "Once").dump()).status == 200);
    const auto reload = c.post("/completion", greedy("stories", "Once").dump());
    CHECK(reload.status == 200);
    CHECK(status_of(c, "stories") == "loaded");
    CHECK_FALSE(entry(c, "stories")["status"].contains("failed"));

    // A router killed outright takes its model servers with it (PR_SET_PDEATHSIG).
    const auto kids = children_of(r.pid());
    CHECK(kids.size() == 2);
    kill(r.pid(), SIGKILL);
    r.wait_exit();
    for (pid_t k : kids) CHECK(wait_gone(k));
}

TEST_CASE("router: concurrent requests to two unloaded models load each once and answer each right",
          "[integration][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d, {"-np", "2"}));
    const json expected_f32 = stories_golden()["cases"][0];
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    std::vector<json> answers(4);
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            Client c("127.0.0.1", r.port());
            const std::string model = i % 2 ? "stories-q8" : "stories";
            const auto res = c.post("/completion", json{{"model", model},
                                                       {"prompt", expected_f32["prompt"]},
                                                       {"n_predict", 32},
                                                       {"temperature", 0},
                                                       {"return_tokens", true}}
                                                       .dump());
            if (res.status == 200) ++ok, answers[(size_t)i] = res.json();
        });
    for (auto& t : threads) t.join();
    CHECK(ok == 4);
    const std::vector<int> golden32(expected_f32["completion_tokens"].begin(),
                                    expected_f32["completion_tokens"].begin() + 32);
    CHECK(answers[0]["tokens"].get<std::vector<int>>() == golden32);
    CHECK(answers[2]["tokens"] == answers[0]["tokens"]);
    CHECK(answers[3]["tokens"] == answers[1]["tokens"]);
    for (const char* m : {"'stories' on port", "'stories-q8' on port"}) CHECK(r.wait_log(m));
    const std::string log = r.log();
    for (const char* m : {"'stories' on port", "'stories-q8' on port"}) {
        INFO(m);
        size_t n = 0;
        for (size_t p = log.find(m); p != std::string::npos; p = log.find(m, p + 1)) ++n;
        CHECK(n == 1);
    }
}

TEST_CASE("router: GET /models/sse reports every status change, sleeping included, as it happens",
          "[integration][router]") {
    ModelsDir d;
    // The child sleeps after 1 s without work and says so; the router passes that on.
    ServerProcess r(router_args(d, {"--no-models-autoload", "--sleep-idle-seconds", "1"}));
    Client c("127.0.0.1", r.port());
    const size_t n_models = list(c)["data"].size();
    REQUIRE(n_models == 3);

    // Each step acts once the events it waits for are in: the subscription first lists every model's
    // status, then the load, the sleep, a request that wakes the model, and the unload follow.
    server::http::ClientOptions bounded;
    bounded.timeout = std::chrono::seconds(20);  // each wait for the next event
    Client sse("127.0.0.1", r.port(), bounded);
    Client act("127.0.0.1", r.port());
    std::vector<std::string> seen;  // "model status" of each event after the first listing
    std::set<std::string> listed;
    int first_tokens = 0;
    json loaded_info;
    int exit_code = -1;
    const auto res = sse.stream("GET", "/models/sse", {}, {}, [&](const SseEvent& e) {
        const json ev = json::parse(e.data);
        CHECK(ev["event"] == "status_change");
        const std::string model = ev["model"], status = ev["data"]["status"];
        if (listed.size() < n_models) {
            CHECK(status == "unloaded");
            listed.insert(model);
            if (listed.size() == n_models) REQUIRE(act.post("/models/load", json{{"model", "stories"}}.dump()).status == 200);
            return true;
        }
        seen.push_back(model + " " + status);
        if (status == "loaded" && seen.size() == 2) loaded_info = ev["data"]["info"];
        if (status == "sleeping") {
            // A request goes to a sleeping model as to a loaded one, and wakes it.
            const auto out = act.post("/completion", greedy("stories", "Once").dump());
            CHECK(out.status == 200);
            first_tokens = (int)out.json()["tokens"].size();
        }
        if (status == "loaded" && seen.size() == 4)
            REQUIRE(act.post("/models/unload", json{{"model", "stories"}}.dump()).status == 200);
        if (status == "unloaded") {
            exit_code = ev["data"]["exit_code"];
            CHECK_FALSE(ev["data"].contains("failed"));
            return false;
        }
        return true;
    });
    CHECK(res.status == 200);
    CHECK(res.aborted);
    CHECK(listed == std::set<std::string>{"stories", "stories-q8", "sub"});
    // Loaded, asleep, woken by the request, then unloaded; on a slow machine it may doze off again between
    // the request and the unload (more sleeping/loaded pairs before the end).
    REQUIRE(seen.size() >= 6);
    CHECK(std::vector<std::string>(seen.begin(), seen.begin() + 4) ==
          std::vector<std::string>{"stories loading", "stories loaded", "stories sleeping", "stories loaded"});
    CHECK(std::vector<std::string>(seen.end() - 2, seen.end()) ==
          std::vector<std::string>{"stories unloading", "stories unloaded"});
    for (size_t i = 4; i + 2 < seen.size(); ++i)
        CHECK((seen[i] == "stories sleeping" || seen[i] == "stories loaded"));
    CHECK(loaded_info["id"] == "stories");  // the model server's own /v1/models entry
    CHECK(loaded_info.contains("meta"));
    CHECK(first_tokens == 24);
    CHECK(exit_code == 0);
}

TEST_CASE("router: --tools and --tools-runtime are the router's own, not passed to the model servers", "[integration][router]") {
    ModelsDir d;
    // Their runtime too: the router's tools run in a container that does not exist here.
    ServerProcess r(router_args(d, {"--tools", "read_file,get_info", "--tools-runtime", "docker-container:no-such-box"}));
    Client c("127.0.0.1", r.port());
    CHECK(tool_names(c) == std::set<std::string>{"read_file", "get_info"});
    CHECK(c.get("/props").json()["server"]["tools"] == json{"read_file", "get_info"});  // the chat UI reads these
    const auto info = c.post("/tools", json{{"tool", "get_info"}, {"params", json::object()}}.dump());
    CHECK(info.status == 200);
    CHECK(info.json()["cwd"] == "unknown");  // not this host's directory: the call went to the container
    // A model server runs without tools.
    REQUIRE(c.post("/completion", greedy("stories", "Once").dump()).status == 200);
    const pid_t child = child_serving(r.pid(), "stories");
    REQUIRE(child > 0);
    CHECK(cmdline_of(child).find("--tools") == std::string::npos);
}

TEST_CASE("router: MCP servers are the router's own /tools, not passed to the model servers",
          "[integration][router][mcp]") {
    ModelsDir d;
    const json mcp = {{"mcpServers",
                       {{"fake", {{"command", "python3"},
                                  {"args", {std::string(GGSERVE_SOURCE_DIR) + "/tests/fixtures/fake_mcp_server.py"}}}}}}};
    ServerProcess r(router_args(d, {"--mcp-servers-json", mcp.dump()}));
    Client c("127.0.0.1", r.port());
    CHECK(tool_names(c).count("fake_echo"));
    const auto echo = c.post("/tools", json{{"tool", "fake_echo"}, {"params", {{"text", "router"}}}}.dump());
    CHECK(echo.status == 200);
    CHECK(echo.json() == json{{"plain_text_response", "router"}});
    REQUIRE(c.post("/completion", greedy("stories", "Once").dump()).status == 200);
    const pid_t child = child_serving(r.pid(), "stories");
    REQUIRE(child > 0);
    CHECK(cmdline_of(child).find("--mcp-servers") == std::string::npos);
}

TEST_CASE("router: GET /models?reload=1 reads the directory again: new models, gone ones unloaded",
          "[integration][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d));
    Client c("127.0.0.1", r.port());
    REQUIRE(c.post("/completion", greedy("stories-q8", "Once").dump()).status == 200);
    const pid_t q8 = child_serving(r.pid(), "stories-q8");
    REQUIRE(q8 > 0);

    fs::create_symlink(fs::absolute(shared_path("models/stories260K.gguf")), d.dir / "again.gguf");
    fs::remove(d.dir / "stories-q8.gguf");
    CHECK(list(c)["data"].size() == 3);  // read at startup; nothing changes without reload
    const auto reloaded = c.get("/models?reload=1");
    REQUIRE(reloaded.status == 200);
    const json now = reloaded.json();
    std::vector<std::string> ids;
    for (const auto& m : now["data"]) ids.push_back(m["id"]);
    CHECK(ids == std::vector<std::string>{"again", "stories", "sub"});
    CHECK(wait_gone(q8));  // its file is gone: its server was stopped
    CHECK(c.post("/completion", greedy("stories-q8", "Once").dump()).status == 400);
    const auto added = c.post("/completion", greedy("again", "Once").dump());
    CHECK(added.status == 200);
    CHECK(added.json()["tokens"] == c.post("/completion", greedy("stories", "Once").dump()).json()["tokens"]);

    // A catalog that cannot be read keeps the old one.
    const fs::path moved = d.dir.string() + "-moved";
    fs::rename(d.dir, moved);
    const auto failed = c.get("/models?reload=1");
    CHECK(failed.status == 500);
    CHECK(failed.json()["error"]["message"].get<std::string>().find("the old one stays") != std::string::npos);
    fs::rename(moved, d.dir);
    CHECK(list(c)["data"].size() == 3);
}

TEST_CASE("router: resumable streams are looked up, replayed and stopped through the router",
          "[integration][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d));
    Client c("127.0.0.1", r.port());
    json body{{"model", "stories"},
              {"messages", json::array({{{"role", "user"}, {"content", "Once"}}})},
              {"max_tokens", 200},
              {"temperature", 0},
              {"stream", true}};
    // A named stream whose client reads one event and goes away.
    Client a("127.0.0.1", r.port());
    std::string first;
    a.stream("POST", "/v1/chat/completions", body.dump(), {{"X-Conversation-Id", "rconv"}},
             [&](const SseEvent& e) {
                 first = e.data;
                 return false;
             });
    REQUIRE_FALSE(first.empty());
    // Followed through the router to its end: the whole answer.
    std::string content;
    bool done = false;
    const auto res = c.stream("GET", "/v1/stream?conv_id=rconv", {}, {}, [&](const SseEvent& e) {
        if (e.data == "[DONE]") {
            done = true;
            return true;
        }
        const json j = json::parse(e.data);
        if (!j["choices"].empty() && j["choices"][0]["delta"].contains("content") &&
            j["choices"][0]["delta"]["content"].is_string())
            content += j["choices"][0]["delta"]["content"].get<std::string>();
        return true;
    });
    CHECK(res.status == 200);
    CHECK(done);
    body["stream"] = false;
    const auto plain = c.post("/v1/chat/completions", body.dump());
    CHECK(content == plain.json()["choices"][0]["message"]["content"]);
    const auto found = c.post("/v1/streams/lookup", json{{"conversation_ids", {"rconv", "other"}}}.dump());
    REQUIRE(found.status == 200);
    const json sessions = found.json();
    REQUIRE(sessions.size() == 1);
    CHECK(sessions[0]["conversation_id"] == "rconv");
    CHECK(c.request("DELETE", "/v1/stream?conv_id=rconv").status == 204);
    CHECK(c.get("/v1/stream?conv_id=rconv").status == 404);
}

TEST_CASE("router: downloads and deletes are refused with the reason", "[integration][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d));
    Client c("127.0.0.1", r.port());
    const auto dl = c.post("/models", json{{"model", "ggml-org/gemma-3-1b-it-GGUF"}}.dump());
    CHECK(dl.status == 501);
    CHECK(dl.json()["error"]["message"].get<std::string>().find("fetches nothing over the network") !=
          std::string::npos);
    CHECK(c.post("/models", json{{"model", ""}}.dump()).status == 400);
    CHECK(c.post("/models", "{").status == 400);
    const auto del = c.request("DELETE", "/models?model=stories");
    CHECK(del.status == 400);
    CHECK(del.json()["error"]["message"].get<std::string>().find("not removable") != std::string::npos);
    CHECK(c.request("DELETE", "/models?model=nope").status == 404);
    CHECK(c.request("DELETE", "/models").status == 400);
    CHECK(list(c)["data"].size() == 3);  // nothing changed
}

TEST_CASE("router: the API key is checked by the router", "[integration][router]") {
    ModelsDir d;
    ServerProcess r(router_args(d, {"--api-key", "sekret"}));
    Client c("127.0.0.1", r.port());
    CHECK(c.get("/v1/models").status == 200);  // public, as llama-server
    CHECK(c.get("/health").status == 200);
    const auto no_key = c.post("/completion", greedy("stories", "Once").dump());
    CHECK(no_key.status == 401);
    CHECK(status_of(c, "stories") == "unloaded");  // refused before anything loads
    CHECK(c.post("/models/load", json{{"model", "stories"}}.dump()).status == 401);
    CHECK(c.get("/models/sse").status == 401);
    const auto with_key =
        c.post("/completion", greedy("stories", "Once").dump(), {{"Authorization", "Bearer sekret"}});
    CHECK(with_key.status == 200);
    CHECK(c.get("/props?model=stories", {{"Authorization", "Bearer sekret"}}).status == 200);
    CHECK(c.get("/props?model=stories").status == 401);
}

TEST_CASE("router: a preset file's sections set each model's options, aliases and startup loads",
          "[integration][router]") {
    ModelsDir d;
    const fs::path ini = d.dir / "presets.ini";
    std::ofstream(ini) << "version = 1\n"
                          "; every model\n"
                          "[*]\n"
                          "c = 256\n"
                          "[stories]\n"
                          "ctx-size = 384   ; this model's own\n"
                          "alias = tiny-story, ts\n"
                          "tags = small,f32\n"
                          "[custom]\n"
                          "model = "
                       << fs::absolute(shared_path("models/stories260K-q4_0.gguf")).string()
                       << "\n"
                          "LLAMA_ARG_N_PREDICT = 3\n"
                          "load-on-startup = true\n"
                          "no-context-shift = true\n";
    ServerProcess r({"--models-dir", d.str(), "--models-preset", ini.string(), "-np", "1", "-t", "1", "--no-warmup"});
    Client c("127.0.0.1", r.port());
    const json stories = entry(c, "stories");
    CHECK(stories["aliases"] == json::array({"tiny-story", "ts"}));
    CHECK(stories["tags"] == json::array({"small", "f32"}));
    CHECK(stories["source"] == "preset");
    CHECK(entry(c, "custom")["source"] == "preset");
    CHECK(entry(c, "stories-q8")["source"] == "models_dir");

    // custom loads at startup: a request that may not load waits for that load.
    const auto cprops = c.get("/props?model=custom&autoload=false");
    REQUIRE(cprops.status == 200);
    CHECK(cprops.json()["default_generation_settings"]["n_ctx"] == 256);   // [*]
    CHECK(cprops.json()["default_generation_settings"]["params"]["n_predict"] == 3);
    CHECK(c.get("/props?model=stories").json()["default_generation_settings"]["n_ctx"] == 384);
    CHECK(c.get("/props?model=stories-q8").json()["default_generation_settings"]["n_ctx"] == 256);
    // An alias reaches its model.
    const auto via_alias = c.post("/completion", greedy("ts", "Once").dump());
    CHECK(via_alias.status == 200);
    CHECK(via_alias.json()["tokens"] == c.post("/completion", greedy("stories", "Once").dump()).json()["tokens"]);
    const auto custom_args = entry(c, "custom")["status"]["args"].get<std::vector<std::string>>();
    CHECK(std::find(custom_args.begin(), custom_args.end(), "--no-context-shift") != custom_args.end());

    // The router's command line wins over the preset; a preset alone (no directory) is a catalog too.
    const fs::path ini2 = d.dir / "custom.ini";
    std::ofstream(ini2) << "[*]\nc = 256\n[custom]\nmodel = "
                        << fs::absolute(shared_path("models/stories260K-q4_0.gguf")).string() << "\n";
    ServerProcess r2({"--models-preset", ini2.string(), "-np", "1", "-t", "1", "-c", "128", "--no-warmup"});
    Client c2("127.0.0.1", r2.port());
    CHECK(c2.get("/v1/models").json()["data"].size() == 1);  // only the preset's own model without the dir
    CHECK(c2.get("/props?model=custom").json()["default_generation_settings"]["n_ctx"] == 128);

    // A key that is no option of ours stops the start.
    std::ofstream(d.dir / "bad.ini") << "[stories]\nctx-sise = 3\n";
    const CliResult bad = run_ggserve("serve --port 0 --models-dir " + d.str() + " --models-preset " +
                                      (d.dir / "bad.ini").string());
    CHECK(bad.code == 2);
    CHECK(bad.output.find("option 'ctx-sise' not recognized in [stories]") != std::string::npos);
    std::ofstream(d.dir / "nomodel.ini") << "[ghost]\nc = 3\n";
    const CliResult ghost = run_ggserve("serve --port 0 --models-preset " + (d.dir / "nomodel.ini").string());
    CHECK(ghost.code == 2);
    CHECK(ghost.output.find("[ghost] names no model file") != std::string::npos);
}

TEST_CASE("router: startup errors and -m beside --models-dir", "[integration][router]") {
    ModelsDir d;
    const CliResult missing = run_ggserve("serve --port 0 --models-dir " + d.str() + "/nothing-here");
    CHECK(missing.code == 2);
    CHECK(missing.output.find("is not a directory") != std::string::npos);
    fs::create_directory(d.dir / "empty");
    const CliResult empty = run_ggserve("serve --port 0 --models-dir " + (d.dir / "empty").string());
    CHECK(empty.code == 2);
    CHECK(empty.output.find("no models to serve") != std::string::npos);
    const CliResult nothing = run_ggserve("serve --port 0");
    CHECK(nothing.code == 2);
    CHECK(nothing.output.find("--models-dir DIR") != std::string::npos);
    const CliResult cap = run_ggserve("serve --port 0 --models-dir " + d.str() + " --models-max -1");
    CHECK(cap.code == 2);
    // The environment variable chooses router mode as well.
    {
        ServerProcess r({"-np", "1", "-t", "1"}, std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                        {"LLAMA_ARG_MODELS_DIR=" + d.str(), "LLAMA_ARG_MODELS_MAX=2"});
        Client c("127.0.0.1", r.port());
        CHECK(c.get("/props").json()["max_instances"] == 2);
        CHECK(c.get("/v1/models").json()["data"].size() == 3);
    }
    // With -m, llama-server serves that one model and ignores the directory: so do we, saying so.
    ServerProcess single(small_stories_args({"--models-dir", d.str()}));
    Client c("127.0.0.1", single.port());
    CHECK(c.get("/v1/models").json()["data"].size() == 1);
    CHECK(single.log().find("ignored, -m serves one model") != std::string::npos);
}
