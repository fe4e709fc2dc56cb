// The embedded request schemas (schemas/*.json) on valid and invalid bodies of every endpoint.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "server/http/errors.h"
#include "server/http/request_schemas.h"

using namespace server::http;
using nlohmann::json;

// "" when valid, else "pointer: message".
static std::string check(std::string_view schema, const std::string& body) {
    auto e = validate_request(schema, json::parse(body));
    return e ? e->to_string() : "";
}

TEST_CASE("every schema file is embedded verbatim and loads", "[http][schemas]") {
    auto names = request_schema_names();
    for (const char* expected :
         {"apply_template.json", "chat_completions.json", "common.json", "completion.json",
          "completions.json", "detokenize.json", "embeddings.json", "rerank.json", "slots_action.json", "tokenize.json"}) {
        CHECK(std::find(names.begin(), names.end(), expected) != names.end());
    }
    for (const auto& name : names) {
        std::ifstream file(std::string(GGSERVE_SOURCE_DIR) + "/schemas/" + name);
        REQUIRE(file);
        std::stringstream text;
        text << file.rdbuf();
        CHECK(request_schema_text(name) == text.str());  // the build embedded the current file
    }
    CHECK(request_schema_text("chat_completions") == request_schema_text("chat_completions.json"));
    CHECK_FALSE(request_schema_text("nope").has_value());
    CHECK_NOTHROW(request_schemas());
    CHECK_THROWS_AS(validate_request("nope", json::object()), std::out_of_range);
}

TEST_CASE("chat_completions accepts OpenAI and llama.cpp bodies", "[http][schemas]") {
    CHECK(check("chat_completions", R"({"messages":[{"role":"user","content":"hi"}]})") == "");
    CHECK(check("chat_completions", R"({
        "model": "gpt-4o", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA", "detail": "low"}}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "42"}],
        "max_tokens": 16, "max_completion_tokens": 16, "n": 1, "stop": ["\n", "###"],
        "stream": true, "stream_options": {"include_usage": true}, "temperature": 0.7, "top_p": 0.9,
        "seed": 42, "logprobs": true, "top_logprobs": 5,
        "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}, "strict": true}},
        "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "f"}}, "parallel_tool_calls": false,
        "logit_bias": {"15043": -100, "hello": false}, "presence_penalty": 0.5, "frequency_penalty": 0.5,
        "user": "u", "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1, "repeat_last_n": -1,
        "dry_multiplier": 0.8, "dry_sequence_breakers": ["\n"], "xtc_probability": 0.1, "mirostat": 2,
        "samplers": ["top_k", "top_p", "temperature"], "n_probs": 3, "cache_prompt": true,
        "return_tokens": true, "grammar": "root ::= \"a\"", "id_slot": -1,
        "lora": [{"id": 0, "scale": 0.5}], "chat_template_kwargs": {"enable_thinking": false},
        "some_future_field": {"anything": 1}})") == "");
    // null means "default" for optional fields, as in OpenAI and llama-server.
    CHECK(check("chat_completions",
                R"({"messages":[{"role":"user","content":"x"}],"max_tokens":null,"stop":null,"tools":null,
                    "tool_choice":null,"seed":null,"response_format":null,"logit_bias":null})") == "");
}

TEST_CASE("chat_completions rejects wrong types with the offending pointer", "[http][schemas]") {
    const std::string ok = R"("messages":[{"role":"user","content":"hi"}])";
    CHECK(check("chat_completions", "{}") == "/messages: is required");
    CHECK(check("chat_completions", "[]") == "/: must be object");
    CHECK(check("chat_completions", R"({"messages":[]})") == "/messages: must have at least 1 item");
    CHECK(check("chat_completions", R"({"messages":"hi"})") == "/messages: must be array");
    CHECK(check("chat_completions", R"({"messages":[{"content":"hi"}]})") == "/messages/0/role: is required");
    CHECK(check("chat_completions", R"({"messages":[{"role":"user","content":5}]})") ==
          "/messages/0/content: must be string, array or null");
    CHECK(
        check("chat_completions", R"({"messages":[{"role":"user","content":[{"type":"text","text":1}]}]})") ==
        "/messages/0/content/0/text: must be string");
    CHECK(check("chat_completions", R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})") ==
          "/messages/0/content/0/image_url: is required");
    CHECK(check("chat_completions", R"({"messages":[{"role":"user","content":[{"type":"video","x":1}]}]})") ==
          "/messages/0/content/0/type: must be \"text\", \"image_url\", \"input_audio\", \"input_video\", "
          "\"file\" or \"refusal\"");
    CHECK(check("chat_completions", "{" + ok + R"(,"max_tokens":-1})") == "/max_tokens: must be >= 0");
    CHECK(check("chat_completions", "{" + ok + R"(,"max_tokens":"10"})") ==
          "/max_tokens: must be integer or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"max_tokens":1.5})") ==
          "/max_tokens: must be integer or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"max_completion_tokens":-5})") ==
          "/max_completion_tokens: must be >= 0");
    CHECK(check("chat_completions", "{" + ok + R"(,"stop":5})") == "/stop: must be string, array or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"stop":["a",1]})") == "/stop/1: must be string");
    CHECK(check("chat_completions", "{" + ok + R"(,"stream":"yes"})") == "/stream: must be boolean or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"temperature":"hot"})") ==
          "/temperature: must be number or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"seed":1.5})") == "/seed: must be integer or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"n":0})") == "/n: must be >= 1");
    CHECK(check("chat_completions", "{" + ok + R"(,"logprobs":5})") == "/logprobs: must be boolean or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"top_logprobs":-1})") == "/top_logprobs: must be >= 0");
    CHECK(check("chat_completions", "{" + ok + R"(,"logit_bias":{"15":"high"}})") ==
          "/logit_bias/15: must be number or boolean");
    CHECK(check("chat_completions", "{" + ok + R"(,"logit_bias":[[15]]})") ==
          "/logit_bias/0: must have at least 2 items");
    CHECK(check("chat_completions", "{" + ok + R"(,"logit_bias":[[15,"x"]]})") ==
          "/logit_bias/0/1: must be number or boolean");
    CHECK(check("chat_completions", "{" + ok + R"(,"logit_bias":"x"})") ==
          "/logit_bias: must be object, array or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"response_format":{"type":"xml"}})") ==
          "/response_format/type: must be \"text\", \"json_object\" or \"json_schema\"");
    CHECK(check("chat_completions", "{" + ok + R"(,"response_format":{}})") ==
          "/response_format/type: is required");
    CHECK(check("chat_completions", "{" + ok + R"(,"tools":[{"type":"function"}]})") ==
          "/tools/0/function: is required");
    CHECK(check("chat_completions", "{" + ok + R"(,"tools":[{"type":"function","function":{"name":1}}]})") ==
          "/tools/0/function/name: must be string");
    CHECK(check("chat_completions", "{" + ok + R"(,"tool_choice":"sometimes"})") ==
          "/tool_choice: must be \"none\", \"auto\", \"required\", object or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"tool_choice":{"type":"function"}})") ==
          "/tool_choice/function: is required");
    CHECK(check("chat_completions", "{" + ok + R"(,"stream_options":{"include_usage":1}})") ==
          "/stream_options/include_usage: must be boolean or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"mirostat":3})") == "/mirostat: must be 0, 1, 2 or null");
    CHECK(check("chat_completions", "{" + ok + R"(,"repeat_last_n":-2})") == "/repeat_last_n: must be >= -1");
    CHECK(check("chat_completions", "{" + ok + R"(,"dry_sequence_breakers":[]})") ==
          "/dry_sequence_breakers: must have at least 1 item");
    CHECK(check("chat_completions", "{" + ok + R"(,"samplers":[1]})") == "/samplers/0: must be string");
    CHECK(check("chat_completions", "{" + ok + R"(,"lora":[{"scale":1}]})") == "/lora/0/id: is required");
    CHECK(check("chat_completions", "{" + ok + R"(,"lora":[{"id":0}]})") == "");  // scale 0, as llama-server reads it
}

TEST_CASE("completions and completion accept every prompt shape", "[http][schemas]") {
    for (const char* schema : {"completions", "completion"}) {
        INFO(schema);
        CHECK(check(schema, R"({"prompt":"Once upon a time","max_tokens":8})") == "");
        CHECK(check(schema, R"({"prompt":[1,2,3]})") == "");
        CHECK(check(schema, R"({"prompt":[12,34,"string",56]})") == "");
        CHECK(check(schema, R"({"prompt":["a","b"]})") == "");
        CHECK(check(schema, R"({"prompt":[[1,2],"s",{"prompt_string":"x","multimodal_data":["AA=="]}]})") ==
              "");
        CHECK(check(schema, R"({"prompt":{"prompt_string":"x"}})") == "");
        CHECK(check(schema,
                    R"({"prompt":"x","n_predict":-1,"stream":true,"n_probs":5,"samplers":"kfypmt"})") == "");

        CHECK(check(schema, R"({"max_tokens":8})") == "/prompt: is required");
        CHECK(check(schema, R"({"prompt":5})") == "/prompt: must be string, array or object");
        CHECK(check(schema, R"({"prompt":[true]})") == "/prompt/0: must be string, integer, array or object");
        CHECK(check(schema, R"({"prompt":[[1.5]]})") == "/prompt/0/0: must be string or integer");
        CHECK(check(schema, R"({"prompt":{"multimodal_data":[]}})") == "/prompt/prompt_string: is required");
        CHECK(check(schema, R"({"prompt":"x","n_predict":-3})") == "/n_predict: must be >= -2");
        CHECK(check(schema, R"({"prompt":"x","stop":{"a":1}})") == "/stop: must be string, array or null");
        CHECK(check(schema, R"({"prompt":"x","logit_bias":[[15043,1.0],["Hello",false]]})") == "");
        CHECK(check(schema, R"({"prompt":"x","logit_bias":[[1.5,1.0]]})") ==
              "/logit_bias/0/0: must be integer or string");
    }
    CHECK(check("completions", R"({"prompt":"x","logprobs":2,"echo":true,"best_of":1})") == "");
    CHECK(check("completions", R"({"prompt":"x","logprobs":true})") == "/logprobs: must be integer or null");
    CHECK(check("completions", R"({"prompt":"x","max_tokens":-1})") == "/max_tokens: must be >= 0");
}

TEST_CASE("tokenize, detokenize, apply_template, embeddings and slots_action", "[http][schemas]") {
    CHECK(check("tokenize", R"({"content":"hello","add_special":true,"with_pieces":true})") == "");
    CHECK(check("tokenize", R"({"content":["a",12]})") == "");
    CHECK(check("tokenize", R"({})") == "/content: is required");
    CHECK(check("tokenize", R"({"content":5})") == "/content: must be string or array");
    CHECK(check("tokenize", R"({"content":"x","parse_special":"no"})") ==
          "/parse_special: must be boolean or null");

    CHECK(check("detokenize", R"({"tokens":[1,2,3]})") == "");
    CHECK(check("detokenize", R"({})") == "");
    CHECK(check("detokenize", R"({"tokens":"1 2"})") == "/tokens: must be array or null");
    CHECK(check("detokenize", R"({"tokens":[1,-2]})") == "/tokens/1: must be >= 0");

    CHECK(check("apply_template", R"({"messages":[{"role":"user","content":"hi"}]})") == "");
    CHECK(check("apply_template", R"({})") == "/messages: is required");
    CHECK(check("apply_template", R"({"messages":[{"role":1}]})") == "/messages/0/role: must be string");

    CHECK(check("embeddings", R"({"input":"hello","model":"m","encoding_format":"float"})") == "");
    CHECK(check("embeddings", R"({"input":["a","b"]})") == "");
    CHECK(check("embeddings", R"({"input":[[1,2],[3]]})") == "");
    CHECK(check("embeddings", R"({"content":"llama.cpp style"})") == "");
    CHECK(check("embeddings", R"({"input":[{"content":[{"type":"text","text":"x"}]}]})") == "");
    CHECK(check("embeddings", R"({})") == "/input: is required");
    CHECK(check("rerank", R"({"query":"q","documents":["a","b"],"top_n":1,"return_documents":true})") == "");
    CHECK(check("rerank", R"({"query":"q","texts":["a"]})") == "");
    CHECK(check("rerank", R"({"query":"q"})") != "");
    CHECK(check("rerank", R"({"query":"q","documents":[]})") != "");
    CHECK(check("rerank", R"({"query":"q","documents":["a",1]})") != "");
    CHECK(check("rerank", R"({"documents":["a"]})") != "");
    CHECK(check("embeddings", R"({"input":5})") == "/input: must be string or array");
    CHECK(check("embeddings", R"({"input":"x","encoding_format":"int8"})") ==
          "/encoding_format: must be \"float\", \"base64\" or null");
    CHECK(check("embeddings", R"({"input":"x","dimensions":0})") == "/dimensions: must be >= 1");

    CHECK(check("slots_action", R"({"filename":"slot0.bin"})") == "");
    CHECK(check("slots_action", R"({})") == "");
    CHECK(check("slots_action", R"({"filename":""})") == "/filename: must be at least 1 character long");
    CHECK(check("slots_action", R"({"filename":7})") == "/filename: must be string");
}

TEST_CASE("parse_request_body answers malformed or invalid bodies with HttpError 400", "[http][schemas]") {
    Request req;
    req.body = R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":4})";
    CHECK(parse_request_body(req, "chat_completions")["max_tokens"] == 4);

    req.body = "";
    CHECK(parse_request_body(req, "slots_action") == json::object());  // an empty body is {}

    req.body = R"({"messages": [)";
    try {
        parse_request_body(req, "chat_completions");
        FAIL("no exception");
    } catch (const HttpError& e) {
        CHECK(e.status() == 400);
        CHECK(std::string(e.what()).rfind("invalid JSON in request body: parse error", 0) == 0);
    }

    req.body = R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":-1})";
    try {
        parse_request_body(req, "chat_completions");
        FAIL("no exception");
    } catch (const HttpError& e) {
        CHECK(e.status() == 400);
        CHECK(std::string(e.what()) == "/max_tokens: must be >= 0");
    }
}
