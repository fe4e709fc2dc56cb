// Tool calling end to end against the real binary: stories260K with a Hermes-style template
// (--chat-template-file, Qwen 2.5's template). tool_choice "required" / named makes the grammar force
// a call, whose arguments an independent validator (python3-jsonschema) checks against the tool's
// schema, streamed and not; bad tool requests are 400s naming the problem and the server keeps serving.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "completion_util.h"
#include "server/http/client.h"
#include "checker_util.h"
#include "server_process.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using server::http::Client;

namespace {

ServerProcess& tools_server() {
    static ServerProcess s({"-m", stories_model(), "-c", "2048", "-t", "1", "--chat-template-file",
                            shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja")});
    return s;
}

const char* const kSchema = R"({"type": "object", "properties": {
    "city": {"type": "string", "minLength": 1, "maxLength": 12},
    "days": {"type": "integer", "minimum": 1, "maximum": 7},
    "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "days"], "additionalProperties": false})";

json tools() {
    return json::array({{{"type", "function"},
                         {"function", {{"name", "get_weather"}, {"description", "Get the weather."},
                                       {"parameters", json::parse(kSchema)}}}},
                        {{"type", "function"},
                         {"function", {{"name", "get_time"}, {"parameters", {{"type", "object"}, {"properties",
                                       {{"zone", {{"type", "string"}}}}}, {"required", {"zone"}}}}}}}});
}

json request(const json& tool_choice, int seed) {
    return {{"messages", json::array({{{"role", "user"}, {"content", "What is the weather in Paris?"}}})},
            {"tools", tools()},
            {"tool_choice", tool_choice},
            {"parallel_tool_calls", false},
            {"temperature", 1.0},
            {"seed", seed},
            {"max_tokens", 300}};
}

// python3-jsonschema's verdict on each (schema, text) case.
json validate(const json& cases) {
    return run_checker("validate_json_outputs.py", cases);
}

// The reply to a streamed request, reassembled from its deltas: {content, tool_calls, finish_reason}.
json collect_stream(Client& c, const json& body) {
    json msg = {{"content", ""}, {"tool_calls", json::array()}, {"finish_reason", nullptr}};
    const auto r = c.stream("POST", "/v1/chat/completions", body.dump(), {}, [&](const server::http::SseEvent& e) {
        if (e.data == "[DONE]") return true;
        const json j = json::parse(e.data);
        if (j["choices"].empty()) return true;
        const json& ch = j["choices"][0];
        if (!ch["finish_reason"].is_null()) msg["finish_reason"] = ch["finish_reason"];
        const json& d = ch["delta"];
        if (d.contains("content") && d["content"].is_string()) msg["content"] = msg["content"].get<std::string>() + d["content"].get<std::string>();
        if (d.contains("tool_calls"))
            for (const auto& tc : d["tool_calls"]) {
                const size_t k = tc["index"];
                while (msg["tool_calls"].size() <= k)
                    msg["tool_calls"].push_back({{"id", ""}, {"pieces", 0}, {"function", {{"name", ""}, {"arguments", ""}}}});
                json& slot = msg["tool_calls"][k];
                if (tc.contains("id")) slot["id"] = tc["id"];
                if (tc.contains("function")) {
                    const json& f = tc["function"];
                    if (f.contains("name")) slot["function"]["name"] = f["name"];
                    if (f.contains("arguments")) {
                        slot["function"]["arguments"] = slot["function"]["arguments"].get<std::string>() +
                                                        f["arguments"].get<std::string>();
                        // Chunks that carry a piece of the arguments.
                        if (!f["arguments"].get<std::string>().empty()) slot["pieces"] = slot["pieces"].get<int>() + 1;
                    }
                }
            }
        return true;
    });
    REQUIRE(r.status == 200);
    REQUIRE(r.complete);
    return msg;
}

}  // namespace

TEST_CASE("tool_choice required and named force calls whose arguments follow the schema", "[integration][tools]") {
    Client c("127.0.0.1", tools_server().port(), {std::chrono::seconds(120)});
    json cases = json::array();
    const json named = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
    for (int seed = 1; seed <= 3; ++seed) {
        for (const json& choice : {json("required"), named}) {
            INFO("seed " << seed << " tool_choice " << choice.dump());
            const auto r = c.post("/v1/chat/completions", request(choice, seed).dump());
            REQUIRE(r.status == 200);
            const json j = r.json();
            const json& ch = j["choices"][0];
            INFO(j.dump());
            CHECK(ch["finish_reason"] == "tool_calls");
            REQUIRE(ch["message"]["tool_calls"].size() == 1);
            const json& call = ch["message"]["tool_calls"][0];
            CHECK(call["type"] == "function");
            CHECK(call["id"].get<std::string>().rfind("call_", 0) == 0);
            const std::string name = call["function"]["name"];
            if (choice.is_object()) CHECK(name == "get_weather");
            const json schema = name == "get_weather" ? tools()[0]["function"]["parameters"]
                                                       : tools()[1]["function"]["parameters"];
            cases.push_back({{"schema", schema}, {"text", call["function"]["arguments"]}});
        }
        const json streamed = collect_stream(c, [&] {
            json b = request(named, seed);
            b["stream"] = true;
            return b;
        }());
        INFO(streamed.dump());
        CHECK(streamed["finish_reason"] == "tool_calls");
        CHECK(streamed["content"] == "");  // no trigger text leaks into content
        REQUIRE(streamed["tool_calls"].size() == 1);
        CHECK(streamed["tool_calls"][0]["function"]["name"] == "get_weather");
        cases.push_back({{"schema", tools()[0]["function"]["parameters"]},
                         {"text", streamed["tool_calls"][0]["function"]["arguments"]}});
    }
    const json verdicts = validate(cases);
    REQUIRE(verdicts.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].dump() << "\n" << verdicts[i]["why"]);
        CHECK(verdicts[i]["ok"] == true);
    }
}

TEST_CASE("a tool whose arguments are too large a grammar still gets forced calls, with any object as arguments",
          "[integration][tools]") {
    // An array of up to 1000 strings of up to 1000 characters: each item position may hold any string
    // length, a million matcher stacks (every request offering the tool was a 400 before). The call is
    // still forced; its arguments are a JSON object.
    const json huge = {{"type", "object"},
                       {"properties",
                        {{"queries",
                          {{"type", "array"}, {"maxItems", 1000}, {"items", {{"type", "string"}, {"maxLength", 1000}}}}}}}};
    const json big = {{"type", "function"}, {"function", {{"name", "search"}, {"parameters", huge}}}};
    ServerProcess s({"-m", stories_model(), "-c", "8192", "-t", "1", "--chat-template-file",
                     shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja")});
    Client c("127.0.0.1", s.port(), {std::chrono::seconds(120)});
    const json body = {{"messages", json::array({{{"role", "user"}, {"content", "Find it"}}})},
                       {"tools", json::array({big})},
                       {"tool_choice", "required"},
                       {"max_tokens", 200},
                       {"temperature", 0}};
    // Streamed: the forced call goes out by name as soon as it is written (this tiny model then fills the
    // free-form object until the token limit, so only the start of its arguments is checked).
    json sbody = body;
    sbody["stream"] = true;
    sbody["max_tokens"] = 60;
    const json streamed = collect_stream(c, sbody);
    INFO(streamed.dump().substr(0, 600));
    CHECK(streamed["content"] == "");
    REQUIRE(streamed["tool_calls"].size() >= 1);
    CHECK(streamed["tool_calls"][0]["function"]["name"] == "search");
    CHECK(streamed["tool_calls"][0]["function"]["arguments"].get<std::string>().rfind("{", 0) == 0);
    // Not streamed, cut by the limit: no markup leaks into the content.
    const auto r = c.post("/v1/chat/completions", body.dump());
    REQUIRE(r.status == 200);
    const json j = r.json();
    CHECK(j["choices"][0]["message"].dump().find("<tool_call>") == std::string::npos);
    CHECK(s.wait_log("calls are constrained to the tool names and JSON objects only"));
    // The same schema as a response format is what the client asked for exactly: still a 400 naming the bound.
    auto format = [](const json& schema) {
        return json{{"messages", json::array({{{"role", "user"}, {"content", "Find it"}}})},
                    {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "s"}, {"schema", schema}}}}},
                    {"max_tokens", 48},
                    {"temperature", 0}};
    };
    const auto bad = c.post("/v1/chat/completions", format(huge).dump());
    CHECK(bad.status == 400);
    CHECK(bad.body.find("matcher stacks") != std::string::npos);
    // Many optional properties are not that: their grammar's stacks grow linearly with the count (90 were a
    // 400 before, the bound counting paths of rule references). The reply is a prefix of such an object.
    json props = json::object();
    for (int i = 0; i < 90; ++i) props["field_" + std::to_string(i)] = {{"type", "string"}};
    const auto ok = c.post("/v1/chat/completions", format({{"type", "object"}, {"properties", props}}).dump());
    REQUIRE(ok.status == 200);
    const std::string content = ok.json()["choices"][0]["message"]["content"];
    INFO(content);
    CHECK(content.rfind("{", 0) == 0);
}

TEST_CASE("a tool using keywords the grammar cannot enforce is offered and called, as with llama-server",
          "[integration][tools]") {
    // uniqueItems, not, multipleOf, minProperties, patternProperties, a pattern with lookahead: every
    // request offering such a tool was a 400. The grammar leaves them to the model (which reads the whole
    // schema); the arguments still follow the rest: validated by python3-jsonschema against the schema
    // without those keywords.
    const json relaxed = json::parse(R"({"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 2},
        "count": {"type": "integer", "minimum": 0, "maximum": 99},
        "code": {"enum": ["AB1", "CD2"]},
        "extra": {"type": "object", "properties": {"k": {"type": "boolean"}}, "additionalProperties": false}},
        "required": ["tags", "count", "code"], "additionalProperties": false})");
    json full = relaxed;
    full["properties"]["tags"]["uniqueItems"] = true;
    full["properties"]["count"]["multipleOf"] = 3;
    full["properties"]["count"]["not"] = {{"const", 6}};
    full["properties"]["tags"]["items"]["pattern"] = "^(?=[a-z])[a-z]+$";
    full["properties"]["extra"]["minProperties"] = 1;
    full["properties"]["extra"]["patternProperties"] = {{"^x_", {{"type", "string"}}}};
    const json tool = {{"type", "function"}, {"function", {{"name", "tag_items"}, {"parameters", full}}}};
    Client c("127.0.0.1", tools_server().port(), {std::chrono::seconds(120)});
    const json body = {{"messages", json::array({{{"role", "user"}, {"content", "Tag it"}}})},
                       {"tools", json::array({tool})},
                       {"tool_choice", "required"},
                       {"max_tokens", 400},
                       {"temperature", 0}};
    const auto r = c.post("/v1/chat/completions", body.dump());
    INFO(r.body.substr(0, 600));
    REQUIRE(r.status == 200);
    const json msg = r.json()["choices"][0]["message"];
    REQUIRE(msg.contains("tool_calls"));
    REQUIRE(msg["tool_calls"].size() >= 1);
    CHECK(msg["tool_calls"][0]["function"]["name"] == "tag_items");
    const json verdict = validate(json::array({{{"schema", relaxed}, {"text", msg["tool_calls"][0]["function"]["arguments"]}}}));
    INFO(verdict.dump());
    CHECK(verdict[0]["ok"] == true);
    CHECK(tools_server().wait_log("does not enforce '#/properties/tags/uniqueItems'"));
    // As a response format the client asked for exactly that schema: a 400 naming the keyword.
    const json format = {{"messages", json::array({{{"role", "user"}, {"content", "Tag it"}}})},
                         {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "t"}, {"schema", full}}}}},
                         {"max_tokens", 16}};
    const auto bad = c.post("/v1/chat/completions", format.dump());
    CHECK(bad.status == 400);
    CHECK(bad.body.find("unsupported keyword") != std::string::npos);
}

TEST_CASE("tool_choice none and no tools leave the reply as plain content", "[integration][tools]") {
    Client c("127.0.0.1", tools_server().port(), {std::chrono::seconds(120)});
    json body = request("none", 1);
    body["max_tokens"] = 8;
    const auto r = c.post("/v1/chat/completions", body.dump());
    REQUIRE(r.status == 200);
    const json ch = r.json()["choices"][0];
    CHECK_FALSE(ch["message"].contains("tool_calls"));
    CHECK(ch["message"]["content"].is_string());
    CHECK(ch["finish_reason"] == "length");
}

TEST_CASE("bad tool requests are 400s naming the problem, and the server keeps serving", "[integration][tools]") {
    Client c("127.0.0.1", tools_server().port(), {std::chrono::seconds(60)});
    struct Bad {
        json body;
        const char* says;
    };
    json unknown = request({{"type", "function"}, {"function", {{"name", "get_stock"}}}}, 1);
    json bad_schema = request("auto", 1);
    bad_schema["tools"][0]["function"]["parameters"]["properties"]["days"]["type"] = "integr";
    json orphan = request("auto", 1);
    orphan["messages"].push_back({{"role", "tool"}, {"tool_call_id", "call_nope"}, {"content", "42"}});
    json with_grammar = request("required", 1);
    with_grammar["grammar"] = "root ::= \"x\"";
    json bad_choice = request("sometimes", 1);
    const std::vector<Bad> bad = {
        {unknown, "get_stock"},
        {bad_schema, "tools[0].function.parameters"},
        {orphan, "call_nope"},
        {with_grammar, "'tools' cannot be combined with 'grammar'"},
        {bad_choice, "tool_choice"},
    };
    for (const auto& b : bad) {
        const auto r = c.post("/v1/chat/completions", b.body.dump());
        INFO(r.body);
        CHECK(r.status == 400);
        CHECK(r.body.find(b.says) != std::string::npos);
    }
    json ok = request("auto", 1);
    ok["max_tokens"] = 4;
    const auto after = c.post("/v1/chat/completions", ok.dump());
    INFO(after.body);
    CHECK(after.status == 200);
}

TEST_CASE("a template that fails to render is a 400 naming the template's error", "[integration][tools]") {
    char path[] = "/tmp/ggserve_tools_tmpl_XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const std::string tmpl =
        "{% if messages[-1].content == 'boom' %}{{ raise_exception('the template refuses boom') }}{% endif %}"
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}";
    REQUIRE(write(fd, tmpl.data(), tmpl.size()) == (ssize_t)tmpl.size());
    close(fd);
    ServerProcess s({"-m", stories_model(), "-c", "2048", "-t", "1", "--chat-template-file", path});
    std::remove(path);
    Client c("127.0.0.1", s.port(), {std::chrono::seconds(60)});
    json body = request("auto", 1);
    body["messages"] = json::array({{{"role", "user"}, {"content", "boom"}}});
    const auto r = c.post("/v1/chat/completions", body.dump());
    INFO(r.body);
    CHECK(r.status == 400);
    CHECK(r.body.find("the template refuses boom") != std::string::npos);
    json ok = request("auto", 1);
    ok["max_tokens"] = 4;
    const auto after = c.post("/v1/chat/completions", ok.dump());
    INFO(after.body);
    CHECK(after.status == 200);
}

TEST_CASE("chat_template_kwargs and --chat-template-kwargs reach the template, tools keep the client's key order",
          "[integration][tools]") {
    ServerProcess s({"-m", stories_model(), "-c", "1024", "-t", "1", "--chat-template-file",
                     shared_path("templates/Qwen-Qwen3-0.6B.jinja"), "--chat-template-kwargs",
                     R"({"enable_thinking": false})"});
    Client c("127.0.0.1", s.port(), {std::chrono::seconds(60)});
    // Raw text: the property order (zeta before alpha) must survive into the prompt.
    const std::string body =
        R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function":
        {"name": "pick", "parameters": {"type": "object", "properties": {"zeta": {"type": "string"},
        "alpha": {"type": "string"}}}}}]})";
    auto r = c.post("/apply-template", body);
    REQUIRE(r.status == 200);
    std::string prompt = r.json()["prompt"];
    INFO(prompt);
    CHECK(prompt.find("<think>\n\n</think>") != std::string::npos);  // the server's enable_thinking: false
    REQUIRE(prompt.find("\"zeta\"") != std::string::npos);
    CHECK(prompt.find("\"zeta\"") < prompt.find("\"alpha\""));
    json with_kwargs = json::parse(body);
    with_kwargs["chat_template_kwargs"] = {{"enable_thinking", true}};  // the request wins
    r = c.post("/apply-template", with_kwargs.dump());
    REQUIRE(r.status == 200);
    prompt = r.json()["prompt"];
    CHECK(prompt.find("<think>\n\n</think>") == std::string::npos);
    with_kwargs["chat_template_kwargs"] = "yes";
    CHECK(c.post("/apply-template", with_kwargs.dump()).status == 400);
    json bad_format = json::parse(body);
    bad_format["reasoning_format"] = "sometimes";
    r = c.post("/v1/chat/completions", bad_format.dump());
    CHECK(r.status == 400);
    CHECK(r.body.find("reasoning_format") != std::string::npos);
}

TEST_CASE("a prompt that opens <think> makes the reply reasoning_content, unless reasoning_format is none",
          "[integration][tools]") {
    char path[] = "/tmp/ggserve_think_tmpl_XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const std::string tmpl = "{% for m in messages %}{{ m.content }}\n{% endfor %}<think>\n";
    REQUIRE(write(fd, tmpl.data(), tmpl.size()) == (ssize_t)tmpl.size());
    close(fd);
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", path});
    std::remove(path);
    Client c("127.0.0.1", s.port(), {std::chrono::seconds(60)});
    json body = {{"messages", json::array({{{"role", "user"}, {"content", "Once upon a time"}}})},
                 {"max_tokens", 12},
                 {"temperature", 0}};
    auto r = c.post("/v1/chat/completions", body.dump());
    REQUIRE(r.status == 200);
    const json thinking = r.json()["choices"][0]["message"];
    INFO(thinking.dump());
    REQUIRE(thinking.contains("reasoning_content"));
    CHECK_FALSE(thinking["reasoning_content"].get<std::string>().empty());
    CHECK(thinking["content"] == "");

    const completion_util::StreamedChat sr = completion_util::stream_chat(c, body);
    REQUIRE(sr.complete);
    CHECK(sr.reasoning == thinking["reasoning_content"]);
    CHECK(sr.content == "");

    body["stream"] = false;
    body["reasoning_format"] = "none";
    r = c.post("/v1/chat/completions", body.dump());
    REQUIRE(r.status == 200);
    const json plain = r.json()["choices"][0]["message"];
    CHECK_FALSE(plain.contains("reasoning_content"));
    CHECK_FALSE(plain["content"].get<std::string>().empty());
}

TEST_CASE("a built-in chat format gets the tools polyfilled and calls in the generic JSON syntax",
          "[integration][tools]") {
    ServerProcess s({"-m", stories_model(), "-c", "2048", "-t", "1", "--chat-template", "chatml"});
    Client c("127.0.0.1", s.port(), {std::chrono::seconds(60)});
    json body = request("required", 5);
    auto r = c.post("/apply-template", body.dump());
    REQUIRE(r.status == 200);
    const std::string prompt = r.json()["prompt"];
    CHECK(prompt.find("You can call these tools:") != std::string::npos);
    CHECK(prompt.find("get_weather") != std::string::npos);
    r = c.post("/v1/chat/completions", body.dump());
    REQUIRE(r.status == 200);
    const json ch = r.json()["choices"][0];
    INFO(ch.dump());
    CHECK(ch["finish_reason"] == "tool_calls");
    REQUIRE(ch["message"]["tool_calls"].size() == 1);
    const json cases = json::array({{{"schema", tools()[0]["function"]["parameters"]},
                                     {"text", ch["message"]["tool_calls"][0]["function"]["arguments"]}},
                                    {{"schema", tools()[1]["function"]["parameters"]},
                                     {"text", ch["message"]["tool_calls"][0]["function"]["arguments"]}}});
    const json verdicts = validate(cases);
    // The call is to one of the two tools, and its arguments follow that tool's schema.
    const bool weather = ch["message"]["tool_calls"][0]["function"]["name"] == "get_weather";
    CHECK(verdicts[weather ? 0 : 1]["ok"] == true);
}

TEST_CASE("every format's template: forced calls parse, and stream their arguments in pieces", "[integration][tools][formats]") {
    // One template per tool-call format (the format is detected from the template). With tool_choice naming
    // get_weather, the grammar writes the call in the format's syntax; the reply's parser reads it back. The
    // same request streamed (same seed, so the same tokens) sends the name once and the arguments in several
    // pieces that join to the non-streamed arguments, with nothing in content. With tool_choice "required"
    // the grammar lets the model choose the tool; the arguments must follow the chosen tool's schema.
    const std::pair<const char*, const char*> templates[] = {
        {"Qwen-Qwen2.5-7B-Instruct.jinja", "hermes"},
        {"meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3-json"},
        {"mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral"},
        {"Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistral-args"},
        {"meetkai-functionary-medium-v3.1.jinja", "function-tag"},
        {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek"},
        {"deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-v3.1"},
        {"ibm-granite-granite-3.3-2B-Instruct.jinja", "granite"},
        {"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "command-r7b"},
        {"CohereForAI-c4ai-command-r-plus-tool_use.jinja", "command-r-plus"},
        {"Kimi-K2-Instruct.jinja", "kimi-k2"},
        {"Qwen3-Coder.jinja", "qwen3-coder"},
        {"ByteDance-Seed-OSS.jinja", "seed-oss"},
        {"GLM-4.6.jinja", "glm-4.5"},
        {"GLM-4.7-Flash.jinja", "glm-4.7"},
        {"MiniMax-M2.jinja", "minimax-m2"},
    };
    const json named = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
    // Functionary's template reads every tool's description, Command R+'s every property's description
    // (and its type, through a type map: the enum-only `unit` has none, which renders as undefined).
    const auto described = [&](json body) {
        body["tools"][1]["function"]["description"] = "Get the time.";
        // Strings are bounded (the grammar enforces maxLength in every format): a free string in the XML-like
        // formats ends only at its closing tag, which a small model may not write before max_tokens.
        for (auto& t : body["tools"])
            for (auto& [key, prop] : t["function"]["parameters"]["properties"].items()) {
                prop["description"] = "The " + key + ".";
                if (prop.value("type", "") == "string" && !prop.contains("enum") && !prop.contains("maxLength"))
                    prop["maxLength"] = 24;
            }
        return body;
    };
    json cases = json::array();
    std::vector<std::string> labels;
    for (const auto& [file, format] : templates) {
        INFO(file << " (" << format << ")");
        ServerProcess s({"-m", stories_model(), "-c", "16384", "-t", "1", "--chat-template-file",
                         shared_path(std::string("templates/") + file)});
        Client c("127.0.0.1", s.port(), {std::chrono::seconds(120)});
        const int seed = 7;
        const auto r = c.post("/v1/chat/completions", described(request(named, seed)).dump());
        INFO(r.body);
        REQUIRE(r.status == 200);
        const json ch = r.json()["choices"][0];
        INFO(ch.dump());
        CHECK(ch["finish_reason"] == "tool_calls");
        REQUIRE(ch["message"].contains("tool_calls"));  // (a const json's operator[] asserts on a missing key)
        REQUIRE(ch["message"]["tool_calls"].size() == 1);
        const json& call = ch["message"]["tool_calls"][0];
        CHECK(call["function"]["name"] == "get_weather");
        cases.push_back({{"schema", tools()[0]["function"]["parameters"]}, {"text", call["function"]["arguments"]}});

        json body = described(request(named, seed));
        body["stream"] = true;
        const json streamed = collect_stream(c, body);
        INFO(streamed.dump());
        CHECK(streamed["finish_reason"] == "tool_calls");
        CHECK(streamed["content"] == "");
        REQUIRE(streamed["tool_calls"].size() == 1);
        CHECK(streamed["tool_calls"][0]["function"]["name"] == "get_weather");
        CHECK(streamed["tool_calls"][0]["function"]["arguments"] == call["function"]["arguments"]);
        CHECK(streamed["tool_calls"][0]["pieces"].get<int>() >= 2);
        labels.push_back(std::string(file) + ", named");

        // tool_choice "required": the model picks the tool; the call follows that tool's schema.
        const auto rq = c.post("/v1/chat/completions", described(request("required", seed)).dump());
        INFO(rq.body);
        REQUIRE(rq.status == 200);
        const json chq = rq.json()["choices"][0];
        CHECK(chq["finish_reason"] == "tool_calls");
        REQUIRE(chq["message"].contains("tool_calls"));
        REQUIRE(chq["message"]["tool_calls"].size() >= 1);
        for (const json& q : chq["message"]["tool_calls"]) {
            const std::string name = q["function"]["name"];
            REQUIRE((name == "get_weather" || name == "get_time"));
            cases.push_back({{"schema", tools()[name == "get_weather" ? 0 : 1]["function"]["parameters"]},
                             {"text", q["function"]["arguments"]}});
            labels.push_back(std::string(file) + ", required: " + name);
        }
    }
    const json verdicts = validate(cases);
    REQUIRE(verdicts.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(labels[i] << "\n" << cases[i].dump() << "\n" << verdicts[i]["why"]);
        CHECK(verdicts[i]["ok"] == true);
    }
}

TEST_CASE("XML-like templates: forced calls write string parameters that keep their pattern and format", "[integration][tools][formats]") {
    // These formats write a string parameter as raw text between tags; the grammar still forces the
    // schema's pattern and format onto it, and the parser returns the text unchanged.
    const char* const templates[] = {"Qwen3-Coder.jinja", "ByteDance-Seed-OSS.jinja", "GLM-4.6.jinja",
                                     "GLM-4.7-Flash.jinja", "MiniMax-M2.jinja"};
    const json params = json::parse(R"({"type": "object", "properties": {
        "code": {"type": "string", "description": "The flight code.", "pattern": "^[A-Z]{3}-\\d{2}$"},
        "day": {"type": "string", "description": "The day.", "format": "date"}},
        "required": ["code", "day"], "additionalProperties": false})");
    const json tool = {{"type", "function"},
                       {"function", {{"name", "book"}, {"description", "Book a flight."}, {"parameters", params}}}};
    json cases = json::array();
    std::vector<std::string> labels;
    for (const char* file : templates) {
        INFO(file);
        ServerProcess s({"-m", stories_model(), "-c", "4096", "-t", "1", "--chat-template-file",
                         shared_path(std::string("templates/") + file)});
        Client c("127.0.0.1", s.port(), {std::chrono::seconds(120)});
        for (int seed : {1, 2}) {
            json body = request("required", seed);
            body["tools"] = json::array({tool});
            const auto r = c.post("/v1/chat/completions", body.dump());
            INFO(r.body);
            REQUIRE(r.status == 200);
            const json ch = r.json()["choices"][0];
            CHECK(ch["finish_reason"] == "tool_calls");
            REQUIRE(ch["message"].contains("tool_calls"));
            REQUIRE(ch["message"]["tool_calls"].size() == 1);
            const json& call = ch["message"]["tool_calls"][0];
            CHECK(call["function"]["name"] == "book");
            cases.push_back({{"schema", params}, {"text", call["function"]["arguments"]}});
            labels.push_back(std::string(file) + ", seed " + std::to_string(seed));
        }
    }
    const json verdicts = validate(cases);  // python3-jsonschema: pattern, and format with its format checker
    REQUIRE(verdicts.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(labels[i] << "\n" << cases[i].dump() << "\n" << verdicts[i]["why"]);
        CHECK(verdicts[i]["ok"] == true);
    }
}
