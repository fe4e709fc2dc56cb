// /completion helpers shared by the decoding integration tests (speculative, lookahead): a request with
// its tokens, and a stream with the text and tokens as they arrived. They also run on worker threads,
// where Catch2's macros are not safe (its assertion state is shared): they throw instead, and
// future::get() carries the exception to the test's thread.
#pragma once

#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "server/http/client.h"

namespace completion_util {

using json = nlohmann::json;

inline json complete(uint16_t port, json body) {
    server::http::Client c("127.0.0.1", port);
    body["return_tokens"] = true;
    const auto r = c.post("/completion", body.dump());
    if (r.status != 200) throw std::runtime_error("/completion: " + std::to_string(r.status) + " " + r.body);
    return json::parse(r.body);
}

inline std::vector<int> tokens_of(const json& j) {
    return j["tokens"].get<std::vector<int>>();
}

// The synthetic models of ../shared/models/synth with a greedy golden: every architecture and weight type.
inline const std::vector<std::string>& synth_golden_models() {
    static const std::vector<std::string> names = {"synth-tiny-f16",
                                                   "synth-tiny-q4_0",
                                                   "synth-tiny-q4_k",
                                                   "synth-llama-yarn-q8_0",
                                                   "synth-llama-rope-freqs-q8_0",
                                                   "synth-qwen2-q8_0",
                                                   "synth-qwen3-q4_k",
                                                   "synth-phi3-q8_0",
                                                   "synth-gemma2-q8_0",
                                                   "synth-gemma3-q8_0",
                                                   "synth-llama-moe-q8_0",
                                                   "synth-qwen3moe-q8_0"};
    return names;
}

// The bodies' requests all at once, beside a long prompt (a golden file's prompts, twelve times over) being
// prefilled; their answers in order, then the prefill's.
inline std::vector<json> beside_long_prefill(uint16_t port, const std::vector<json>& bodies,
                                             const json& golden) {
    std::string long_prompt;
    for (size_t k = 0; k < 12; ++k)
        long_prompt += golden["cases"][k % golden["cases"].size()]["prompt"].get<std::string>() + " ";
    std::vector<std::future<json>> futs;
    for (const json& b : bodies)
        futs.push_back(std::async(std::launch::async, [port, b] { return complete(port, b); }));
    futs.push_back(std::async(std::launch::async, [port, &long_prompt] {
        return complete(port, {{"prompt", long_prompt}, {"n_predict", 8}, {"temperature", 0}});
    }));
    std::vector<json> out;
    for (auto& f : futs) out.push_back(f.get());
    return out;
}

// on_event(n) runs after the n-th event, on the calling thread.
inline std::pair<std::string, std::vector<int>> stream(uint16_t port, json body,
                                                       const std::function<void(int)>& on_event = [](int) {}) {
    server::http::Client c("127.0.0.1", port);
    body["stream"] = true;
    body["return_tokens"] = true;
    std::string text;
    std::vector<int> toks;
    int events = 0;
    auto res = c.stream("POST", "/completion", body.dump(), {}, [&](const server::http::SseEvent& e) {
        const json j = json::parse(e.data);
        text += j.value("content", "");
        for (int t : j["tokens"]) toks.push_back(t);
        on_event(++events);
        return true;
    });
    if (!res.complete) throw std::runtime_error("the stream ended early: " + text);
    return {text, toks};
}

// A streamed chat completion (body["stream"] is set): the reasoning and content its deltas carried, and whether
// the stream ended properly.
struct StreamedChat {
    std::string reasoning, content;
    bool complete = false;
};
inline StreamedChat stream_chat(server::http::Client& c, json body) {
    body["stream"] = true;
    StreamedChat out;
    const auto sr = c.stream("POST", "/v1/chat/completions", body.dump(), {}, [&](const server::http::SseEvent& e) {
        if (e.data == "[DONE]") return true;
        const json j = json::parse(e.data);
        if (j["choices"].empty()) return true;
        const json& d = j["choices"][0]["delta"];
        if (d.contains("reasoning_content")) out.reasoning += d["reasoning_content"].get<std::string>();
        if (d.contains("content") && d["content"].is_string()) out.content += d["content"].get<std::string>();
        return true;
    });
    out.complete = sr.complete;
    return out;
}

}  // namespace completion_util
