// LoRA adapters through the server (--lora, --lora-scaled, --lora-init-without-apply, GET/POST
// /lora-adapters, a request's "lora" list), against servers running the base model and models with the
// adapters merged into their weights (tests/lora_files.h). F32 caches keep merged and unmerged runs
// within float rounding, so their greedy tokens agree on stories260K.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <future>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "../lora_files.h"
#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

const std::vector<std::string> kA = {"blk.0.attn_q.weight", "blk.1.ffn_up.weight", "blk.3.attn_v.weight",
                                     "output.weight"};
const std::vector<std::string> kB = {"blk.2.ffn_down.weight", "blk.4.attn_output.weight"};
const std::vector<std::string> kPrompts = {"Once upon a time", "The little dog", "Lily and Tom went to the park",
                                           "One day"};

struct Adapters {
    std::string a = lora_files::write_adapter(stories_model(), kA, 4, 8.0f, 21);
    std::string b = lora_files::write_adapter(stories_model(), kB, 2, 4.0f, 22, 0.1f, "translate");
    std::vector<std::string> merged;
    std::string merge(std::vector<float> scales) {
        merged.push_back(lora_files::write_merged(stories_model(), {a, b}, scales));
        return merged.back();
    }
    ~Adapters() {
        for (const auto& p : merged) std::filesystem::remove(p);
        std::filesystem::remove(a);
        std::filesystem::remove(b);
    }
};

std::vector<std::string> common_args() { return {"-np", "4", "-c", "2048", "-t", "1", "-ctk", "f32", "-ctv", "f32"}; }

std::vector<std::string> with(std::vector<std::string> a, std::initializer_list<std::string> more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

// Also runs on worker threads, where Catch2's macros are not safe (its assertion state is shared): it
// throws instead, and future::get() carries the exception to the test's thread.
json complete(Client& c, const std::string& prompt, const json& lora = nullptr) {
    json body{{"prompt", prompt}, {"n_predict", 24}, {"temperature", 0}, {"return_tokens", true}};
    if (!lora.is_null()) body["lora"] = lora;
    const auto r = c.post("/completion", body.dump());
    if (r.status != 200) throw std::runtime_error("/completion: " + std::to_string(r.status) + " " + r.body);
    return json::parse(r.body)["tokens"];
}

std::vector<json> outputs(Client& c, const json& lora = nullptr) {
    std::vector<json> out;
    for (const auto& p : kPrompts) out.push_back(complete(c, p, lora));
    return out;
}

}  // namespace

TEST_CASE("LoRA adapters: startup scales, per-request lists, POST /lora-adapters, concurrency",
          "[integration][threads][lora]") {
    Adapters files;
    std::vector<json> base_out, merged_a1_b05, merged_b1;
    {
        ServerProcess base({"-m", stories_model(), "-np", "1", "-t", "1", "-ctk", "f32", "-ctv", "f32"});
        Client c("127.0.0.1", base.port());
        base_out = outputs(c);
    }
    {
        ServerProcess m({"-m", files.merge({1.0f, 0.5f}), "-np", "1", "-t", "1", "-ctk", "f32", "-ctv", "f32"});
        Client c("127.0.0.1", m.port());
        merged_a1_b05 = outputs(c);
    }
    {
        ServerProcess m({"-m", files.merge({0.0f, 1.0f}), "-np", "1", "-t", "1", "-ctk", "f32", "-ctv", "f32"});
        Client c("127.0.0.1", m.port());
        merged_b1 = outputs(c);
    }
    REQUIRE(merged_a1_b05 != base_out);  // the adapters change what the model writes
    REQUIRE(merged_b1 != merged_a1_b05);

    // Both forms of --lora-scaled: "FNAME SCALE" and "FNAME:SCALE".
    for (const bool colon_form : {false, true}) {
        INFO("colon form " << colon_form);
        auto args = with(common_args(), {"-m", stories_model(), "--lora", files.a});
        if (colon_form)
            args = with(args, {"--lora-scaled", files.b + ":0.5"});
        else
            args = with(args, {"--lora-scaled", files.b, "0.5"});
        ServerProcess s(args);
        Client c("127.0.0.1", s.port());
        const json list = c.get("/lora-adapters").json();
        REQUIRE(list.size() == 2);
        REQUIRE(list[0]["id"] == 0);
        REQUIRE(list[0]["path"] == files.a);
        REQUIRE(list[0]["scale"] == 1.0);
        REQUIRE(list[1]["scale"] == 0.5);
        REQUIRE(outputs(c) == merged_a1_b05);  // the server's scales
        const json gs = c.post("/completion", json{{"prompt", "Hi"}, {"n_predict", 1}}.dump()).json()["generation_settings"];
        REQUIRE(gs["lora"] == json::array({{{"id", 0}, {"scale", 1.0}}, {{"id", 1}, {"scale", 0.5}}}));
        if (colon_form) continue;

        REQUIRE(list[0]["task_name"] == "");  // what the files say of themselves
        REQUIRE(list[1]["task_name"] == "translate");
        REQUIRE(list[1]["prompt_prefix"] == "translate: ");

        // A request's list: adapters it does not name get 0; an entry without a scale gives 0; an empty
        // list sets nothing (the server's scales), as in llama-server.
        const json none = json::array({{{"id", 0}, {"scale", 0.0}}});
        REQUIRE(outputs(c, none) == base_out);
        REQUIRE(outputs(c, json::array({{{"id", 1}}})) == base_out);
        REQUIRE(outputs(c, json::array()) == merged_a1_b05);
        REQUIRE(outputs(c, json::array({{{"id", 1}, {"scale", 1.0}}})) == merged_b1);
        REQUIRE(outputs(c, json::array({{{"id", 0}, {"scale", 1.0}}, {{"id", 1}, {"scale", 0.5}}})) == merged_a1_b05);

        // The same prompts at once, each with other scales, in shared batches: each as alone.
        std::vector<std::future<json>> futs;
        const json settings[] = {none, json::array({{{"id", 1}, {"scale", 1.0}}}), json(nullptr)};
        for (int round = 0; round < 2; ++round)
            for (size_t k = 0; k < 3; ++k)
                for (size_t p = 0; p < kPrompts.size(); ++p)
                    futs.push_back(std::async(std::launch::async, [&, k, p] {
                        Client cc("127.0.0.1", s.port());
                        return complete(cc, kPrompts[p], settings[k]);
                    }));
        size_t i = 0;
        for (int round = 0; round < 2; ++round)
            for (size_t k = 0; k < 3; ++k)
                for (size_t p = 0; p < kPrompts.size(); ++p) {
                    const json got = futs[i++].get();
                    REQUIRE(got == (k == 0 ? base_out : k == 1 ? merged_b1 : merged_a1_b05)[p]);
                }

        // POST /lora-adapters: unnamed adapters get 0; later requests without a list use the new scales.
        const auto r = c.post("/lora-adapters", json::array({{{"id", 1}, {"scale", 1.0}}}).dump());
        REQUIRE(r.status == 200);
        REQUIRE(json::parse(r.body)["success"] == true);
        const json now = c.get("/lora-adapters").json();
        REQUIRE(now[0]["scale"] == 0.0);
        REQUIRE(now[1]["scale"] == 1.0);
        REQUIRE(outputs(c) == merged_b1);

        // Bad requests.
        for (const json& bad : {json::array({{{"id", 2}, {"scale", 1.0}}}), json::array({{{"scale", 1.0}}}),
                                json::array({{{"id", 0}, {"scale", "1"}}}), json("x")}) {
            const auto rr = c.post("/completion", json{{"prompt", "Hi"}, {"n_predict", 2}, {"lora", bad}}.dump());
            INFO(bad.dump() << " -> " << rr.body);
            REQUIRE(rr.status == 400);
            REQUIRE(c.post("/lora-adapters", bad.dump()).status == 400);
        }
        REQUIRE(c.get("/health").status == 200);
    }
}

TEST_CASE("LoRA adapters: --lora-init-without-apply starts at scale 0, bad adapter files stop startup", "[integration][lora]") {
    Adapters files;
    std::vector<json> base_out;
    {
        ServerProcess base(with(common_args(), {"-m", stories_model()}));
        Client c("127.0.0.1", base.port());
        base_out = outputs(c);
    }
    {
        ServerProcess s(with(common_args(), {"-m", stories_model(), "--lora", files.a + "," + files.b,
                                             "--lora-init-without-apply"}));
        Client c("127.0.0.1", s.port());
        const json list = c.get("/lora-adapters").json();
        REQUIRE(list.size() == 2);
        REQUIRE(list[0]["scale"] == 0.0);
        REQUIRE(list[1]["scale"] == 0.0);
        REQUIRE(outputs(c) == base_out);  // scale 0 is the base model, bit for bit
    }
    {
        // A slot's cache computed with an adapter cannot be saved: slot files do not record adapters.
        const auto dir = std::filesystem::temp_directory_path() / ("ggserve-lora-slots-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        ServerProcess s(with(common_args(), {"-m", stories_model(), "--lora", files.a, "-np", "1", "--slot-save-path",
                                             dir.string()}));
        Client c("127.0.0.1", s.port());
        complete(c, "Once upon a time");
        auto r = c.post("/slots/0?action=save", json{{"filename", "a.bin"}}.dump());
        INFO(r.body);
        REQUIRE(r.status == 400);
        REQUIRE(r.body.find("LoRA") != std::string::npos);
        complete(c, "Once upon a time", json::array({{{"id", 0}, {"scale", 0.0}}}));  // without the adapter: saved
        r = c.post("/slots/0?action=save", json{{"filename", "b.bin"}}.dump());
        INFO(r.body);
        REQUIRE(r.status == 200);
        std::filesystem::remove_all(dir);
    }
    const CliResult bad = run_ggserve("serve --port 0 -m " + stories_model() + " --lora " + stories_model());
    INFO(bad.output);
    REQUIRE(bad.code != 0);
    REQUIRE(bad.output.find("not an adapter file") != std::string::npos);
    const CliResult scale = run_ggserve("serve --port 0 -m " + stories_model() + " --lora-scaled " + files.a + ":x");
    INFO(scale.output);
    REQUIRE(scale.code == 2);
    REQUIRE(scale.output.find("bad scale") != std::string::npos);
}
