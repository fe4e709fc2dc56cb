// POST /infill against the real binary: stories260K has no FIM tokens (501), so the test writes a copy
// whose metadata names three of its tokens as FIM prefix, suffix and middle. /infill must then generate
// exactly what /completion generates for the prompt laid out by hand (PSM, SPM with --spm-infill, extra
// files), streamed and not; bad bodies are 400s.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ggml/gguf.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

constexpr int kPre = 3, kSuf = 4, kMid = 5;  // byte tokens of stories260K's vocabulary, named FIM tokens

// stories260K with fim_pre/suf/mid_token_id set; removed when the test ends (the server maps it).
struct FimModel {
    std::string path;
    FimModel() {
        auto f = ggml::gguf::File::open(stories_model());
        ggml::gguf::Writer w;
        w.set_alignment(f->alignment());
        for (const auto& [k, v] : f->metadata()) w.set(k, v);
        for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
        w.set("tokenizer.ggml.fim_pre_token_id", ggml::gguf::Value::u32(kPre));
        w.set("tokenizer.ggml.fim_suf_token_id", ggml::gguf::Value::u32(kSuf));
        w.set("tokenizer.ggml.fim_mid_token_id", ggml::gguf::Value::u32(kMid));
        path = (std::filesystem::temp_directory_path() / ("ggserve-fim-" + std::to_string(getpid()) + ".gguf")).string();
        w.write(path);
    }
    ~FimModel() { std::filesystem::remove(path); }
};

json tokens_of(Client& c, const std::string& text) {
    return c.post("/tokenize", json{{"content", text}, {"add_special", false}, {"parse_special", false}}.dump())
        .json()["tokens"];
}

json cat(std::initializer_list<json> parts) {
    json out = json::array();
    for (const auto& p : parts)
        for (const auto& t : p) out.push_back(t);
    return out;
}

// /infill's result equals /completion's on the given prompt tokens (greedy, same length).
void check_same(Client& c, json infill_body, const json& prompt) {
    infill_body["n_predict"] = 12;
    infill_body["temperature"] = 0;
    infill_body["return_tokens"] = true;
    const json r = c.post("/infill", infill_body.dump()).json();
    INFO(r.dump());
    json comp = infill_body;
    for (const char* k : {"input_prefix", "input_suffix", "input_extra"}) comp.erase(k);
    comp["prompt"] = prompt;
    const json want = c.post("/completion", comp.dump()).json();
    REQUIRE(r["tokens_evaluated"] == prompt.size());
    REQUIRE(r["tokens"] == want["tokens"]);
    REQUIRE(r["content"] == want["content"]);
    REQUIRE(r["tokens"].size() > 0);
}

}  // namespace

TEST_CASE("/infill without FIM tokens is 501, with them it is /completion on the FIM layout", "[integration][infill]") {
    {
        ServerProcess plain({"-m", stories_model(), "-np", "1", "-t", "1"});
        Client c("127.0.0.1", plain.port());
        const auto r = c.post("/infill", json{{"input_prefix", "Once"}, {"input_suffix", "end."}}.dump());
        INFO(r.body);
        REQUIRE(r.status == 501);
        REQUIRE(json::parse(r.body)["error"]["type"] == "not_supported_error");
        // OpenAI's suffix needs the FIM tokens too: a 400 saying so.
        const auto s = c.post("/v1/completions", json{{"prompt", "Once"}, {"suffix", "end."}, {"max_tokens", 2}}.dump());
        INFO(s.body);
        REQUIRE(s.status == 400);
        REQUIRE(s.body.find("fill-in-the-middle") != std::string::npos);
    }
    FimModel model;
    ServerProcess s({"-m", model.path, "-np", "2", "-c", "2048", "-b", "256", "-ub", "256", "-t", "1"});
    Client c("127.0.0.1", s.port());
    const json bos = json::array({1});
    const json prefix = tokens_of(c, "Once upon a time, there was a little");
    const json suffix = tokens_of(c, " She was very happy.");
    const json body{{"input_prefix", "Once upon a time, there was a little"}, {"input_suffix", " She was very happy."}};

    SECTION("PSM: BOS, prefix, suffix, middle") {
        check_same(c, body, cat({bos, {kPre}, prefix, {kSuf}, suffix, {kMid}}));
    }
    SECTION("a prompt continues the prefix") {
        json b = body;
        b["prompt"] = " girl";
        check_same(c, b, cat({bos, {kPre}, prefix, tokens_of(c, " girl"), {kSuf}, suffix, {kMid}}));
    }
    SECTION("extra files come first, each after a snippet separator (no FIM file separator here)") {
        json b = body;
        b["input_extra"] = json::array({{{"filename", "a.txt"}, {"text", "Tom had a dog."}}, {{"text", "The sun."}}});
        const json sep = tokens_of(c, "\n\n--- snippet ---\n\n");
        check_same(c, b,
                   cat({sep, tokens_of(c, "Tom had a dog."), sep, tokens_of(c, "The sun."), bos, {kPre}, prefix, {kSuf},
                        suffix, {kMid}}));
    }
    SECTION("token ids are accepted for the prefix and suffix") {
        check_same(c, json{{"input_prefix", prefix}, {"input_suffix", suffix}},
                   cat({bos, {kPre}, prefix, {kSuf}, suffix, {kMid}}));
    }
    SECTION("streamed text equals the whole") {
        json b = body;
        b["n_predict"] = 12;
        b["temperature"] = 0;
        const std::string whole = c.post("/infill", b.dump()).json()["content"];
        b["stream"] = true;
        std::string text;
        bool stopped = false;
        const auto res = c.stream("POST", "/infill", b.dump(), {}, [&](const server::http::SseEvent& e) {
            const json j = json::parse(e.data);
            text += j["content"].get<std::string>();
            stopped = j["stop"].get<bool>();
            return true;
        });
        REQUIRE(res.status == 200);
        REQUIRE(stopped);
        REQUIRE(text == whole);
    }
    SECTION("OpenAI's suffix on /v1/completions is the same fill-in-the-middle") {
        json b = body;
        b["n_predict"] = 12;
        b["temperature"] = 0;
        const json infilled = c.post("/infill", b.dump()).json();
        const json oai{{"prompt", "Once upon a time, there was a little"}, {"suffix", " She was very happy."},
                       {"max_tokens", 12}, {"temperature", 0}};
        const auto r = c.post("/v1/completions", oai.dump());
        INFO(r.body);
        REQUIRE(r.status == 200);
        CHECK(r.json()["choices"][0]["text"] == infilled["content"]);
        CHECK(r.json()["usage"]["prompt_tokens"] == infilled["tokens_evaluated"]);
        // An empty suffix is a plain completion; several prompts with a suffix are a 400.
        json plain = oai;
        plain["suffix"] = "";
        CHECK(c.post("/v1/completions", plain.dump()).json()["choices"][0]["text"] ==
              c.post("/v1/completions", json{{"prompt", oai["prompt"]}, {"max_tokens", 12}, {"temperature", 0}}.dump())
                  .json()["choices"][0]["text"]);
        json two = oai;
        two["prompt"] = json::array({"a", "b"});
        CHECK(c.post("/v1/completions", two.dump()).status == 400);
    }
    SECTION("bad bodies are 400s") {
        for (const json& bad : {json{{"input_prefix", 5}}, json{{"input_extra", "x"}},
                                json{{"input_extra", json::array({{{"filename", "a"}}})}},
                                json{{"input_suffix", json::array({1, 99999})}}, json{{"n_predict", "x"}}}) {
            const auto r = c.post("/infill", bad.dump());
            INFO(bad.dump() << " -> " << r.body);
            REQUIRE(r.status == 400);
        }
        REQUIRE(c.get("/health").status == 200);
    }
}

TEST_CASE("/infill with --spm-infill puts the suffix first", "[integration][infill]") {
    FimModel model;
    ServerProcess s({"-m", model.path, "-np", "1", "-t", "1", "--spm-infill"});
    Client c("127.0.0.1", s.port());
    const json prefix = tokens_of(c, "Lily went to the"), suffix = tokens_of(c, " and played.");
    check_same(c, json{{"input_prefix", "Lily went to the"}, {"input_suffix", " and played."}},
               cat({json::array({1}), {kSuf}, suffix, {kPre}, prefix, {kMid}}));
}
