// /completion helpers shared by the decoding integration tests (speculative, lookahead): a request with
// its tokens, and a stream with the text and tokens as they arrived. They also run on worker threads,
// where Catch2's macros are not safe (its assertion state is shared): they throw instead, and
// future::get() carries the exception to the test's thread.
#pragma once

#include <functional>
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
