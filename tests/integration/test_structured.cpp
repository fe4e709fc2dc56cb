// Structured output and sampling end to end against the real binary and stories260K: JSON Schemas and
// the GBNF library at temperature 1.0, checked by independent Python checkers (checkers/); bad
// grammars and schemas; probability shapes; seeds under concurrency; sampling fields reaching the chain.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "server/http/client.h"
#include "checker_util.h"
#include "server_process.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using server::http::Client;

namespace {

constexpr int kSlots = 4;

ServerProcess& shared_server() {
    static ServerProcess s({"-m", stories_model(), "-np", std::to_string(kSlots), "-c", "2048", "-t", "1"});
    return s;
}

const fs::path kHere = fs::path(GGSERVE_SOURCE_DIR) / "tests" / "integration";

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Post {
    std::string path;
    std::string body;
};

// Sends every request, kSlots at a time (one client per thread), and returns the parsed replies in order.
std::vector<json> post_all(const std::vector<Post>& posts) {
    std::vector<json> replies(posts.size());
    std::vector<int> status(posts.size(), 0);
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kSlots; ++w)
        workers.emplace_back([&] {
            Client c("127.0.0.1", shared_server().port(), {std::chrono::seconds(120)});
            for (size_t i; (i = next.fetch_add(1)) < posts.size();) {
                try {
                    const auto r = c.post(posts[i].path, posts[i].body);
                    status[i] = r.status;
                    replies[i] = json::parse(r.body, nullptr, false);
                } catch (const std::exception& e) {
                    replies[i] = e.what();  // status stays 0: reported below
                }
            }
        });
    for (auto& t : workers) t.join();
    for (size_t i = 0; i < posts.size(); ++i) {
        INFO(posts[i].path << " " << posts[i].body << "\n-> " << replies[i].dump());
        REQUIRE(status[i] == 200);
    }
    return replies;
}

// The generated text of a reply and whether generation ended by itself (not at the token limit).
struct Generated {
    std::string text;
    bool stopped = false;
};

Generated generated(const std::string& path, const json& r) {
    if (path == "/completion") return {r["content"].get<std::string>(), r["stop_type"] == "eos"};
    const json& ch = r["choices"][0];
    const bool stopped = ch["finish_reason"] == "stop";
    if (path == "/v1/chat/completions") return {ch["message"]["content"].get<std::string>(), stopped};
    return {ch["text"].get<std::string>(), stopped};
}

// Fifteen schemas covering BRIEF.md's list. Every string and array is bounded, so every output finishes
// well within the token limit. Kept as text: nlohmann::json would sort the properties.
const std::vector<std::string> kSchemas = {
    // 1. flat object, integer range, bounded string
    R"({"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120}}, "required": ["name", "age"]})",
    // 2. nested objects and an array of strings with bounds
    R"({"type": "object", "properties": {"user": {"type": "object", "properties": {
        "id": {"type": "integer", "minimum": 1, "maximum": 9999},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 1, "maxItems": 3}},
        "required": ["id", "tags"]}, "active": {"type": "boolean"}}, "required": ["user", "active"]})",
    // 3. enums, including non-string values
    R"({"type": "object", "properties": {"color": {"enum": ["red", "green", "blue"]},
        "size": {"enum": ["S", "M", "L", 42, null]}}, "required": ["color", "size"]})",
    // 4. anyOf over scalar types
    R"({"type": "object", "properties": {"value": {"anyOf": [{"type": "integer", "minimum": -10, "maximum": 10},
        {"type": "string", "maxLength": 5}, {"type": "null"}]}}, "required": ["value"]})",
    // 5. $ref / $defs
    R"({"$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer", "minimum": -99, "maximum": 99},
        "y": {"type": "integer", "minimum": -99, "maximum": 99}}, "required": ["x", "y"]}},
        "type": "object", "properties": {"start": {"$ref": "#/$defs/point"}, "end": {"$ref": "#/$defs/point"}},
        "required": ["start", "end"]})",
    // 6. a top-level array with min/max items and ranged items
    R"({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 100}, "minItems": 2, "maxItems": 5})",
    // 7. numbers with inclusive and exclusive ranges
    R"({"type": "object", "properties": {"temp": {"type": "number", "minimum": -50, "maximum": 50},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "count": {"type": "integer", "exclusiveMinimum": 0, "maximum": 1000}}, "required": ["temp", "ratio", "count"]})",
    // 8. strings with exact and ranged lengths
    R"({"type": "object", "properties": {"code": {"type": "string", "minLength": 3, "maxLength": 3},
        "word": {"type": "string", "minLength": 2, "maxLength": 6}}, "required": ["code", "word"]})",
    // 9. const and an optional property
    R"({"type": "object", "properties": {"version": {"const": 2}, "kind": {"const": "event"},
        "note": {"type": "string", "maxLength": 10}}, "required": ["version", "kind"]})",
    // 10. oneOf with discriminating consts
    R"({"oneOf": [{"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "integer", "minimum": 1, "maximum": 10}}, "required": ["kind", "r"]},
        {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "integer", "minimum": 1, "maximum": 10}}, "required": ["kind", "side"]}]})",
    // 11. allOf merging two object schemas
    R"({"allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["a"]},
        {"type": "object", "properties": {"b": {"type": "boolean"}}, "required": ["b"]}]})",
    // 12. string formats
    R"({"type": "object", "properties": {"day": {"type": "string", "format": "date"},
        "id": {"type": "string", "format": "uuid"}}, "required": ["day", "id"]})",
    // 13. $defs referring to $defs, arrays of objects
    R"({"$defs": {"leaf": {"type": "object", "properties": {"v": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["v"]},
        "branch": {"type": "object", "properties": {"leaves": {"type": "array", "items": {"$ref": "#/$defs/leaf"}, "maxItems": 3}},
        "required": ["leaves"]}}, "type": "object", "properties": {"root": {"$ref": "#/$defs/branch"}}, "required": ["root"]})",
    // 14. a tuple: prefixItems and no further items
    R"({"type": "array", "prefixItems": [{"type": "string", "maxLength": 4}, {"type": "integer", "minimum": 0, "maximum": 9},
        {"type": "boolean"}], "items": false, "minItems": 3})",
    // 15. type lists, nullable values and a pattern
    R"({"type": "object", "properties": {"v": {"type": ["integer", "boolean"], "minimum": 0, "maximum": 5},
        "w": {"type": ["string", "null"], "maxLength": 4}, "p": {"type": "string", "pattern": "^[A-Z][0-9]{2}$"}},
        "required": ["v", "w", "p"]})",
};

// One request for schema `schema` through one of the three ways to ask for it.
Post schema_request(const ojson& schema, int way, uint32_t seed) {
    const int n = 400;
    if (way == 0) {
        const ojson body{
            {"messages", ojson::array({{{"role", "user"}, {"content", "Tell me about a toy, as JSON."}}})},
            {"response_format",
             {{"type", "json_schema"}, {"json_schema", {{"name", "toy"}, {"schema", schema}}}}},
            {"temperature", 1.0},
            {"seed", seed},
            {"max_tokens", n}};
        return {"/v1/chat/completions", body.dump()};
    }
    if (way == 1) {
        const ojson body{{"prompt", "Once upon a time, the data was:"},
                         {"json_schema", schema},
                         {"temperature", 1.0},
                         {"seed", seed},
                         {"n_predict", n}};
        return {"/completion", body.dump()};
    }
    const ojson body{{"prompt", "The little dog wrote"},
                     {"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", schema}}}}},
                     {"temperature", 1.0},
                     {"seed", seed},
                     {"max_tokens", n}};
    return {"/v1/completions", body.dump()};
}

void require_error_with(const server::http::ClientResponse& r, const std::vector<std::string>& parts) {
    INFO(r.body);
    REQUIRE(r.status == 400);
    const json j = json::parse(r.body);
    REQUIRE(j["error"]["code"] == 400);
    REQUIRE(j["error"]["type"] == "invalid_request_error");
    const std::string msg = j["error"]["message"];
    for (const auto& p : parts) REQUIRE(msg.find(p) != std::string::npos);
}

json complete(Client& c, const json& body) {
    const auto r = c.post("/completion", body.dump());
    INFO(body.dump() << "\n-> " << r.body);
    REQUIRE(r.status == 200);
    return r.json();
}

}  // namespace

TEST_CASE("structured output: 20 samples of each of 15 JSON schemas validate", "[integration][structured]") {
    std::vector<Post> posts;
    std::vector<ojson> schema_of;
    for (size_t s = 0; s < kSchemas.size(); ++s) {
        const ojson schema = ojson::parse(kSchemas[s]);
        for (int k = 0; k < 20; ++k) {
            posts.push_back(schema_request(schema, k % 3, uint32_t(1000 * s + k)));
            schema_of.push_back(schema);
        }
    }
    const std::vector<json> replies = post_all(posts);
    json cases = json::array();
    for (size_t i = 0; i < posts.size(); ++i) {
        const Generated g = generated(posts[i].path, replies[i]);
        INFO(posts[i].body << "\n-> " << replies[i].dump());
        REQUIRE(g.stopped);  // the JSON is complete: the grammar let the model end there
        cases.push_back({{"schema", json::parse(schema_of[i].dump())}, {"text", g.text}});
    }
    const json verdicts = run_checker("validate_json_outputs.py", cases);
    REQUIRE(verdicts.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i]["schema"].dump() << "\n"
                                       << cases[i]["text"].get<std::string>() << "\n"
                                       << verdicts[i]["why"]);
        CHECK(verdicts[i]["ok"] == true);
    }
}

TEST_CASE("structured output keeps the schema's property order", "[integration][structured]") {
    const std::string schema =
        R"({"type": "object", "properties": {"zeta": {"type": "integer", "minimum": 0, "maximum": 9},
        "alpha": {"type": "boolean"}, "mid": {"enum": ["x", "y"]}}, "required": ["zeta", "alpha", "mid"]})";
    std::vector<Post> posts;
    for (int way = 0; way < 3; ++way) posts.push_back(schema_request(ojson::parse(schema), way, 7));
    const std::vector<json> replies = post_all(posts);
    for (size_t i = 0; i < posts.size(); ++i) {
        const Generated g = generated(posts[i].path, replies[i]);
        INFO(g.text);
        const ojson out = ojson::parse(g.text);
        std::vector<std::string> keys;
        for (const auto& [k, v] : out.items()) keys.push_back(k);
        REQUIRE(keys == std::vector<std::string>{"zeta", "alpha", "mid"});
    }
}

TEST_CASE("an empty schema or none with a JSON response format asks for an object, as llama-server",
          "[integration][structured]") {
    Client c("127.0.0.1", shared_server().port(), {std::chrono::seconds(120)});
    const json msgs = json::array({{{"role", "user"}, {"content", "Say something"}}});
    const std::vector<json> formats = {{{"type", "json_object"}, {"schema", json::object()}},
                                       {{"type", "json_schema"}, {"json_schema", {{"name", "any"}}}},
                                       {{"type", "json_schema"}, {"json_schema", {{"schema", json::object()}}}}};
    for (const json& rf : formats) {
        INFO(rf.dump());
        const auto r = c.post("/v1/chat/completions",
                              json{{"messages", msgs}, {"response_format", rf}, {"max_tokens", 64}, {"temperature", 0}}.dump());
        REQUIRE(r.status == 200);
        const std::string content = r.json()["choices"][0]["message"]["content"];
        INFO(content);
        CHECK(content.rfind("{", 0) == 0);
    }
    const auto r = c.post("/completion", json{{"prompt", "Once upon a time"}, {"json_schema", json::object()},
                                              {"n_predict", 24}, {"temperature", 0}}.dump());
    REQUIRE(r.status == 200);
    const std::string content = r.json()["content"];
    INFO(content);
    CHECK(content.rfind("{", 0) == 0);
}

// Token ids of single-character pieces (stories260K has one token per ASCII punctuation character).
std::map<char, int> char_tokens(Client& c, const std::string& chars) {
    const json r = c.post("/tokenize", json{{"content", "a" + chars}, {"with_pieces", true}}.dump()).json();
    REQUIRE(r["tokens"].size() == chars.size() + 1);
    std::map<char, int> ids;
    for (size_t i = 0; i < chars.size(); ++i) {
        REQUIRE(r["tokens"][i + 1]["piece"] == std::string(1, chars[i]));
        ids[chars[i]] = r["tokens"][i + 1]["id"];
    }
    return ids;
}

TEST_CASE("GBNF library grammars at temperature 1 produce text their languages accept",
          "[integration][structured]") {
    Client c("127.0.0.1", shared_server().port());
    const int eos = c.post("/tokenize", json{{"content", "</s>"}}.dump()).json()["tokens"][0];
    const auto tok = char_tokens(c, "\"}],;()\n");
    // stories260K writes stories: left alone it rarely closes a JSON string or ends a C declaration, so
    // "free" samples often stop at the token limit (their text must then be a prefix of the language).
    // "Steered" samples get a logit_bias for the end of text and each language's closing characters
    // (still sampled at temperature 1 under the grammar), so they finish and are checked whole.
    struct Library {
        std::string name;
        double eos;  // an expression may end after any operand: a milder bias keeps it from ending at once
        std::vector<std::pair<char, double>> steer;
    };
    const std::vector<Library> library = {
        {"json", 25, {{'}', 10}, {']', 10}, {',', -6}, {'"', 4}}},
        {"json_arr", 25, {{'}', 10}, {']', 10}, {',', -6}, {'"', 4}}},
        {"arithmetic", 15, {{')', 6}}},
        {"list", 25, {{'\n', 4}}},
        {"c", 25, {{';', 8}, {'(', -8}, {'\n', -4}}},
        {"chess", 25, {}},
    };
    const int per_kind = 6;
    std::vector<Post> posts;
    json cases = json::array();
    for (size_t g = 0; g < library.size(); ++g) {
        const std::string gbnf =
            read_text(kHere / ".." / ".." / "engine" / "grammars" / (library[g].name + ".gbnf"));
        REQUIRE(!gbnf.empty());
        json steer = json::array({json::array({eos, library[g].eos})});
        for (const auto& [ch, bias] : library[g].steer) steer.push_back(json::array({tok.at(ch), bias}));
        for (int k = 0; k < 2 * per_kind; ++k) {
            json body{{"prompt", "Once upon a time"},
                      {"grammar", gbnf},
                      {"temperature", 1.0},
                      {"seed", 500 * g + k},
                      {"n_predict", 300}};
            if (k >= per_kind) body["logit_bias"] = steer;
            posts.push_back({"/completion", body.dump()});
            cases.push_back({{"grammar", library[g].name}, {"steered", k >= per_kind}});
        }
    }
    const std::vector<json> replies = post_all(posts);
    for (size_t i = 0; i < posts.size(); ++i) {
        const Generated g = generated("/completion", replies[i]);
        cases[i]["text"] = g.text;
        cases[i]["complete"] = g.stopped;
    }
    const json verdicts = run_checker("check_grammar_outputs.py", cases);
    REQUIRE(verdicts.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].dump() << "\n" << verdicts[i].dump());
        CHECK(verdicts[i]["ok"] == true);
        if (cases[i]["steered"] == true) CHECK(verdicts[i]["verdict"] == "complete");
    }
}

TEST_CASE("bad grammars and schemas are a 400 with the position and the reason",
          "[integration][structured][errors]") {
    Client c("127.0.0.1", shared_server().port());
    auto post_completion = [&](const json& extra) {
        json body{{"prompt", "Once"}, {"n_predict", 4}};
        body.update(extra);
        return c.post("/completion", body.dump());
    };
    // GBNF: syntax error, undefined rule, left recursion, a bad repetition, no root.
    require_error_with(post_completion({{"grammar", "root ::= \"a\" ( \"b\""}}),
                       {"line 1, column", "invalid grammar"});
    require_error_with(post_completion({{"grammar", "root ::= item\nitem ::= \"x\" missing\n"}}),
                       {"line 2, column 14", "missing"});
    require_error_with(post_completion({{"grammar", "root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"\n"}}),
                       {"line 2, column 1", "left recursion"});
    require_error_with(post_completion({{"grammar", "root ::= [a-z]{3,1}"}}), {"line 1, column"});
    require_error_with(post_completion({{"grammar", "start ::= \"a\""}}), {"root"});
    // JSON Schema: unsupported keywords, a dangling $ref, a bad count, through each way to pass a schema.
    require_error_with(post_completion({{"json_schema", json::parse(R"({"type": "object", "properties":
                           {"a": {"type": "string", "not": {"const": "x"}}}})")}}),
                       {"'json_schema'", "#/properties/a/not", "unsupported keyword 'not'"});
    require_error_with(post_completion({{"json_schema", json::parse(R"({"$ref": "#/$defs/missing"})")}}),
                       {"#", "does not resolve"});
    require_error_with(
        c.post(
            "/v1/chat/completions",
            json::parse(
                R"({"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema",
                   "json_schema": {"name": "x", "schema": {"type": "array", "uniqueItems": true}}}})")
                .dump()),
        {"response_format.json_schema.schema", "#/uniqueItems", "uniqueItems"});
    require_error_with(
        c.post("/v1/completions", json::parse(R"({"prompt": "x", "response_format": {"type": "json_schema",
                           "json_schema": {"schema": {"type": "string", "minLength": -2}}}})")
                                      .dump()),
        {"#/minLength", "non-negative"});
    require_error_with(post_completion({{"json_schema", false}}), {"matches nothing"});
    // Lazy grammars: triggers are required and must be valid.
    require_error_with(post_completion({{"grammar", "root ::= \"a\""}, {"grammar_lazy", true}}),
                       {"grammar_triggers"});
    require_error_with(
        post_completion({{"grammar", "root ::= \"a\""},
                         {"grammar_lazy", true},
                         {"grammar_triggers", {{{"type", "pattern"}, {"value", "(unclosed"}}}}}),
        {"trigger pattern"});
    require_error_with(post_completion({{"grammar", "root ::= \"a\""},
                                        {"grammar_lazy", true},
                                        {"grammar_triggers", {{{"type", 0}, {"token", 99999}}}}}),
                       {"99999"});
    require_error_with(
        post_completion({{"grammar", "root ::= \"a\""}, {"json_schema", {{"type", "object"}}}}),
        {"only one"});
    // The server keeps serving, grammars included.
    REQUIRE(c.get("/health").status == 200);
    const json r =
        complete(c, {{"prompt", "Once"}, {"n_predict", 16}, {"grammar", "root ::= \"yes\" | \"no\""}});
    REQUIRE((r["content"] == "yes" || r["content"] == "no"));
    REQUIRE(r["stop_type"] == "eos");
}

TEST_CASE("lazy grammars constrain from the trigger on", "[integration][structured]") {
    Client c("127.0.0.1", shared_server().port());
    // Greedy: ", there was a little girl named Lily. She loved ..." - the grammar takes over at "Lily".
    const json r = complete(c, {{"prompt", "Once upon a time"},
                                {"n_predict", 96},
                                {"temperature", 0},
                                {"grammar", "root ::= \"Lily\" [ a-z]{1,30} \"!\""},
                                {"grammar_lazy", true},
                                {"grammar_triggers", {{{"type", "word"}, {"value", "Lily"}}}}});
    const std::string text = r["content"];
    INFO(text);
    REQUIRE(std::regex_match(text, std::regex(", there was a little girl named Lily[ a-z]{1,30}!")));
    REQUIRE(r["stop_type"] == "eos");
    // A trigger that never shows up leaves the text as it would be without a grammar.
    const json free = complete(c, {{"prompt", "Once upon a time"}, {"n_predict", 24}, {"temperature", 0}});
    const json lazy = complete(c, {{"prompt", "Once upon a time"},
                                   {"n_predict", 24},
                                   {"temperature", 0},
                                   {"grammar", "root ::= \"x\""},
                                   {"grammar_lazy", true},
                                   {"grammar_triggers", {{{"type", 2}, {"value", "[0-9]{3}"}}}}});
    REQUIRE(lazy["content"] == free["content"]);
}

TEST_CASE("probabilities: n_probs, post_sampling_probs, logprobs and top_logprobs shapes",
          "[integration][structured][probs]") {
    Client c("127.0.0.1", shared_server().port());
    const json base{{"prompt", "Once upon a time"}, {"n_predict", 6}, {"temperature", 1.0}, {"seed", 3}};

    json body = base;
    body["n_probs"] = 3;
    const json raw = complete(c, body);
    REQUIRE(raw["completion_probabilities"].size() == 6);
    for (const auto& e : raw["completion_probabilities"]) {
        REQUIRE(e["id"].is_number_integer());
        REQUIRE(e["token"].is_string());
        REQUIRE(e["bytes"].is_array());
        REQUIRE(e["logprob"].get<double>() <= 0.0);
        REQUIRE(e["top_logprobs"].size() == 3);
        double prev = 0.0;
        for (const auto& t : e["top_logprobs"]) {
            REQUIRE(t["logprob"].get<double>() <= prev);  // most likely first
            prev = t["logprob"].get<double>();
        }
    }

    body["post_sampling_probs"] = true;
    const json post = complete(c, body);
    REQUIRE(post["content"] == raw["content"]);  // reporting does not change sampling
    REQUIRE(post["completion_probabilities"].size() == 6);
    for (const auto& e : post["completion_probabilities"]) {
        REQUIRE(e.contains("prob"));
        REQUIRE(!e.contains("logprob"));
        REQUIRE(e["top_probs"].size() <= 3);  // at most the candidates that survived the chain
        double sum = 0.0;
        for (const auto& t : e["top_probs"]) {
            REQUIRE(t["prob"].get<double>() >= 0.0);
            sum += t["prob"].get<double>();
        }
        REQUIRE(sum <= 1.0 + 1e-5);
        REQUIRE(e["prob"].get<double>() > 0.0);  // the sampled token survived
    }

    // Legacy completions: logprobs is the number of alternatives.
    const json legacy =
        c.post("/v1/completions",
               json{{"prompt", "Once upon a time"}, {"max_tokens", 5}, {"logprobs", 2}, {"temperature", 0}}
                   .dump())
            .json();
    const json& lp = legacy["choices"][0]["logprobs"];
    REQUIRE(lp["tokens"].size() == 5);
    REQUIRE(lp["token_logprobs"].size() == 5);
    REQUIRE(lp["top_logprobs"].size() == 5);
    REQUIRE(lp["text_offset"].size() == 5);
    for (const auto& m : lp["top_logprobs"]) REQUIRE(m.size() <= 2);

    // Chat, streamed: every chunk with a token carries its logprobs.
    int with_logprobs = 0;
    const json chat{{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})},
                    {"max_tokens", 5},
                    {"logprobs", true},
                    {"top_logprobs", 2},
                    {"stream", true}};
    auto res =
        c.stream("POST", "/v1/chat/completions", chat.dump(), {}, [&](const server::http::SseEvent& e) {
            if (e.data == "[DONE]") return true;
            const json j = json::parse(e.data);
            const json& ch = j["choices"][0];
            if (ch.contains("logprobs") && ch["logprobs"].is_object()) {
                for (const auto& t : ch["logprobs"]["content"]) {
                    if (t["top_logprobs"].size() != 2) return false;
                    ++with_logprobs;
                }
            }
            return true;
        });
    REQUIRE(res.complete);
    REQUIRE(with_logprobs == 5);

    // top_logprobs without logprobs, and out-of-range values, are rejected.
    REQUIRE(c.post("/v1/chat/completions", json{{"messages", chat["messages"]}, {"top_logprobs", 2}}.dump())
                .status == 400);
    REQUIRE(c.post("/v1/completions", json{{"prompt", "x"}, {"logprobs", 21}}.dump()).status == 400);
    REQUIRE(c.post("/completion", json{{"prompt", "x"}, {"n_probs", -1}}.dump()).status == 400);
}

TEST_CASE("a seed reproduces the text while other requests run", "[integration][structured][seed]") {
    const json body{
        {"prompt", "Lily and Tom went to the park. They saw"},
        {"n_predict", 48},
        {"temperature", 1.0},
        {"seed", 1234},
        {"json_schema",
         json::parse(R"({"type": "array", "items": {"type": "string", "maxLength": 6}, "maxItems": 3})")}};
    Client c("127.0.0.1", shared_server().port());
    const json alone = complete(c, body);
    json plain = body;
    plain.erase("json_schema");
    const json plain_alone = complete(c, plain);

    // A long stream runs; once its first token is out, the same requests go again, two at a time.
    std::promise<void> first_token, others_done;
    auto others_done_f = others_done.get_future().share();
    std::thread stream([&] {
        bool signalled = false;
        try {
            Client s("127.0.0.1", shared_server().port());
            const json long_body{{"prompt", "One day, a big red ball"},
                                 {"n_predict", 400},
                                 {"ignore_eos", true},
                                 {"stream", true},
                                 {"temperature", 1.0}};
            s.stream("POST", "/completion", long_body.dump(), {}, [&](const server::http::SseEvent&) {
                if (!signalled) {
                    signalled = true;
                    first_token.set_value();
                    others_done_f.wait();
                }
                return true;
            });
        } catch (const std::exception&) {
            // Seen below: the stream is then not running.
        }
        if (!signalled) first_token.set_value();
    });
    first_token.get_future().wait();
    auto again = [&](const json& b) {
        return std::async(std::launch::async, [b] {
            Client k("127.0.0.1", shared_server().port());
            return k.post("/completion", b.dump()).json();
        });
    };
    json r1, r2, rp, slots;
    std::string error;
    try {
        auto a1 = again(body), a2 = again(body), p1 = again(plain);
        r1 = a1.get(), r2 = a2.get(), rp = p1.get();
        slots = c.get("/slots").json();
    } catch (const std::exception& e) {
        error = e.what();
    }
    others_done.set_value();
    stream.join();
    REQUIRE(error.empty());
    // The long stream was generating all along: it is still at it after the others finished.
    int generating = 0;
    for (const auto& slot : slots) generating += slot["state"] == "generating" ? 1 : 0;
    REQUIRE(generating == 1);
    REQUIRE(r1["content"] == alone["content"]);
    REQUIRE(r2["content"] == alone["content"]);
    REQUIRE(rp["content"] == plain_alone["content"]);
    REQUIRE(alone["content"] != plain_alone["content"]);
}

TEST_CASE("sampling fields reach the sampler chain", "[integration][structured][sampling]") {
    Client c("127.0.0.1", shared_server().port());
    const std::string prompt = "One day, a big red ball";  // greedy repeats "The ball was very happy."
    auto text = [&](json extra) {
        json body{{"prompt", prompt}, {"n_predict", 48}};
        body.update(extra);
        return complete(c, body)["content"].get<std::string>();
    };
    auto first_token = [&](json extra) {
        json body{{"prompt", prompt}, {"n_predict", 1}, {"return_tokens", true}};
        body.update(extra);
        return complete(c, body)["tokens"][0].get<int>();
    };
    const std::string greedy = text({{"temperature", 0}});
    const json loose{{"temperature", 1.0}, {"seed", 11}, {"top_k", 0}, {"top_p", 1.0}, {"min_p", 0.0}};
    json with = loose;

    SECTION("logit_bias banning the greedy token changes it, in both forms") {
        const int t0 = first_token({{"temperature", 0}});
        CHECK(first_token({{"temperature", 0}, {"logit_bias", {{t0, false}}}}) != t0);
        CHECK(first_token({{"temperature", 0}, {"logit_bias", {{std::to_string(t0), -100}}}}) != t0);
        CHECK(first_token({{"temperature", 0}, {"logit_bias", {{t0, 0.0}}}}) == t0);
        // Text instead of ids bans the tokens of the text (greedy writes "... a little girl named Lily.").
        for (const json& ban : {json{{"Lily", false}}, json::array({json::array({"Lily", false})})}) {
            const json r = complete(
                c,
                {{"prompt", "Once upon a time"}, {"n_predict", 12}, {"temperature", 0}, {"logit_bias", ban}});
            CHECK(r["content"].get<std::string>().find("Lily") == std::string::npos);
            CHECK(r["content"].get<std::string>().find("named") != std::string::npos);
        }
    }
    SECTION("top_k 1 at temperature 1 is greedy; top_k 0 is not") {
        CHECK(text({{"temperature", 1.0}, {"seed", 5}, {"top_k", 1}}) == greedy);
        CHECK(text(loose) != greedy);
    }
    SECTION("samplers: leaving top_k out of the chain disables it") {
        CHECK(
            text(
                {{"temperature", 1.0}, {"seed", 11}, {"top_k", 1}, {"samplers", {"top_k", "temperature"}}}) ==
            greedy);
        CHECK(text({{"temperature", 1.0}, {"seed", 11}, {"top_k", 1}, {"samplers", {"temperature"}}}) ==
              text({{"temperature", 1.0}, {"seed", 11}, {"top_k", 0}, {"samplers", "t"}}));
        CHECK(text({{"temperature", 1.0}, {"seed", 11}, {"top_k", 1}, {"samplers", {"temperature"}}}) !=
              greedy);
    }
    SECTION("top_n_sigma near 0 keeps only the top token") {
        with["top_n_sigma"] = 0.01;
        CHECK(text(with) == greedy);
    }
    SECTION(
        "mirostat replaces the middle of the chain (top_k 1 no longer forces greedy); tau sets its target") {
        CHECK(text({{"temperature", 1.0}, {"seed", 11}, {"top_k", 1}, {"mirostat", 1}}) != greedy);
        CHECK(text({{"temperature", 1.0}, {"seed", 11}, {"top_k", 1}, {"mirostat", 2}}) != greedy);
        // A target surprise near 0 bits keeps only the most likely token.
        CHECK(text({{"temperature", 1.0}, {"seed", 11}, {"mirostat", 2}, {"mirostat_tau", 0.01}}) == greedy);
    }
    SECTION("penalties and DRY break greedy repetition") {
        CHECK(text({{"temperature", 0}, {"repeat_penalty", 1.5}}) != greedy);
        CHECK(text({{"temperature", 0}, {"presence_penalty", 1.5}}) != greedy);
        CHECK(text({{"temperature", 0}, {"frequency_penalty", 1.5}}) != greedy);
        CHECK(text({{"temperature", 0}, {"dry_multiplier", 1.0}, {"dry_allowed_length", 2}}) != greedy);
    }
    SECTION("XTC and adaptive-p change seeded sampling; adaptive_target < 0 is off") {
        const std::string seeded = text(loose);
        with["xtc_probability"] = 1.0;
        with["xtc_threshold"] = 0.05;
        CHECK(text(with) != seeded);
        json adaptive = loose;
        adaptive["adaptive_target"] = 0.05;
        adaptive["adaptive_decay"] = 0.5;
        CHECK(text(adaptive) != seeded);
        adaptive["adaptive_target"] = -1.0;
        CHECK(text(adaptive) == seeded);
    }
    SECTION("invalid sampling values are a 400") {
        for (const json& bad :
             {json{{"top_p", 1.5}}, json{{"samplers", {"top_k", "bogus"}}}, json{{"mirostat", 3}},
              json{{"logit_bias", {{"12", true}}}}, json{{"logit_bias", {{99999, false}}}},
              json{{"dry_sequence_breakers", json::array()}}, json{{"xtc_probability", 2}}}) {
            json body{{"prompt", "x"}, {"n_predict", 1}};
            body.update(bad);
            INFO(body.dump());
            CHECK(c.post("/completion", body.dump()).status == 400);
        }
    }
}
