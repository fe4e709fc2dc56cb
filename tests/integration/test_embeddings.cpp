// Embeddings against the real binary with synth-bert-f16 (--embeddings): /v1/embeddings float and base64
// agree and match the llama.cpp golden (cosine >= 0.999), the native /embedding forms (pooling none:
// per-token rows), a batch of 32 mixed-length inputs and concurrent requests equal each input alone, a
// decoder started with --embeddings, a decoder that generates and embeds at once
// (--embeddings-with-generation: the same vectors while streams generate beside them, the streams' tokens
// unchanged), the rerank endpoints on a copy of the model with a classification head, and bad input gets
// the right status with an OpenAI-style error body.
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "ggml/gguf.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

std::string bert_model() {
    return shared_path("models/synth/synth-bert-f16.gguf");
}

json bert_golden() {
    std::ifstream f(shared_path("golden/synth-bert-f16.embeddings.json"));
    return json::parse(f);
}

ServerProcess& mean_server() {
    static ServerProcess s({"-m", bert_model(), "--embeddings", "--pooling", "mean", "-np", "4", "-c", "2048",
                            "-ub", "128", "-t", "2"});
    return s;
}

std::vector<int> golden_prefix(size_t n) {
    const auto all = stories_golden()["cases"][0]["completion_tokens"].get<std::vector<int>>();
    return std::vector<int>(all.begin(), all.begin() + (std::ptrdiff_t)std::min(n, all.size()));
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i)
        ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return ab / std::sqrt(aa * bb);
}

std::vector<float> from_base64(const std::string& s) {
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        return c == '+' ? 62 : c == '/' ? 63 : -1;
    };
    std::string bytes;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : s) {
        const int v = val(c);
        if (v < 0) break;  // '=' padding
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) bits -= 8, bytes += (char)(acc >> bits & 0xff);
    }
    REQUIRE(bytes.size() % 4 == 0);
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), bytes.size());  // little-endian hosts only (x86-64, arm64)
    return out;
}

void require_error(const server::http::ClientResponse& r, int status, const std::string& contains = "") {
    INFO(r.body);
    REQUIRE(r.status == status);
    const json j = json::parse(r.body);
    REQUIRE(j["error"]["message"].is_string());
    REQUIRE(j["error"]["type"].is_string());
    REQUIRE(j["error"]["code"] == status);
    if (!contains.empty())
        REQUIRE(j["error"]["message"].get<std::string>().find(contains) != std::string::npos);
}

}  // namespace

TEST_CASE("/v1/embeddings: float and base64 agree and match the golden (mean pooling)",
          "[integration][embeddings]") {
    Client c("127.0.0.1", mean_server().port());
    const json g = bert_golden();
    json prompts = json::array(), tokens = json::array();
    for (const auto& cs : g["cases"]) prompts.push_back(cs["prompt"]), tokens.push_back(cs["tokens"]);
    const auto f = c.post("/v1/embeddings", json{{"input", prompts}, {"model", "x"}}.dump());
    INFO(f.body);
    REQUIRE(f.status == 200);
    const json fj = f.json();
    REQUIRE(fj["object"] == "list");
    REQUIRE(fj["model"] == "x");  // echoed, as llama-server does
    REQUIRE(fj["data"].size() == g["cases"].size());
    int64_t n_tokens = 0;
    for (const auto& t : tokens) n_tokens += (int64_t)t.size();
    REQUIRE(fj["usage"]["prompt_tokens"] == n_tokens);
    REQUIRE(fj["usage"]["total_tokens"] == n_tokens);
    const json bj =
        c.post("/v1/embeddings", json{{"input", tokens}, {"encoding_format", "base64"}}.dump()).json();
    REQUIRE(bj["model"] == "synth-bert-f16.gguf");  // no model asked: the served one
    double min_cs = 1;
    for (size_t i = 0; i < g["cases"].size(); ++i) {
        REQUIRE(bj["data"][i]["encoding_format"] == "base64");
        REQUIRE_FALSE(fj["data"][i].contains("encoding_format"));
        REQUIRE(fj["data"][i]["object"] == "embedding");
        REQUIRE(fj["data"][i]["index"] == i);
        const auto v = fj["data"][i]["embedding"].get<std::vector<float>>();
        REQUIRE(from_base64(bj["data"][i]["embedding"].get<std::string>()) ==
                v);  // text or tokens, float or base64
        min_cs = std::min(min_cs, cosine(v, g["cases"][i]["mean"].get<std::vector<float>>()));
    }
    WARN("min cosine to the golden (mean): " << min_cs);
    REQUIRE(min_cs >= 0.999);
    // a single string equals the same string inside the list
    const json one = c.post("/v1/embeddings", json{{"input", prompts[2]}}.dump()).json();
    REQUIRE(one["data"].size() == 1);
    REQUIRE(one["data"][0]["embedding"] == fj["data"][2]["embedding"]);
}

TEST_CASE("/v1/embeddings: dimensions gives the first N components normalized again, over the size all of them",
          "[integration][embeddings]") {
    Client c("127.0.0.1", mean_server().port());
    const json full = c.post("/v1/embeddings", json{{"input", "a sentence to embed"}}.dump()).json();
    const auto v = full["data"][0]["embedding"].get<std::vector<float>>();
    REQUIRE(v.size() > 16);
    for (const size_t n : {size_t(16), size_t(1), v.size()}) {
        INFO(n);
        const auto r = c.post("/v1/embeddings", json{{"input", "a sentence to embed"}, {"dimensions", n}}.dump());
        REQUIRE(r.status == 200);
        const auto w = r.json()["data"][0]["embedding"].get<std::vector<float>>();
        REQUIRE(w.size() == n);
        double norm = 0, head = 0;
        for (size_t i = 0; i < n; ++i) norm += double(w[i]) * w[i], head += double(v[i]) * v[i];
        CHECK(norm == Approx(1.0).epsilon(1e-4));  // L2-normalized again (the default)
        for (size_t i = 0; i < n; ++i) CHECK(w[i] == Approx(v[i] / std::sqrt(head)).margin(1e-5));
    }
    // Without normalization the components are the same numbers.
    const auto raw = c.post("/v1/embeddings", json{{"input", "x"}, {"embd_normalize", -1}}.dump()).json();
    const auto cut =
        c.post("/v1/embeddings", json{{"input", "x"}, {"embd_normalize", -1}, {"dimensions", 8}}.dump()).json();
    const auto rv = raw["data"][0]["embedding"].get<std::vector<float>>();
    CHECK(cut["data"][0]["embedding"] == json(std::vector<float>(rv.begin(), rv.begin() + 8)));
    // A size over the model's gives the whole vector (llama-server ignores `dimensions`: a client set up
    // for another model's 1536 works there).
    const auto big = c.post("/v1/embeddings", json{{"input", "a sentence to embed"}, {"dimensions", 1536}}.dump());
    REQUIRE(big.status == 200);
    CHECK(big.json()["data"][0]["embedding"] == full["data"][0]["embedding"]);
    CHECK(c.post("/v1/embeddings", json{{"input", "x"}, {"dimensions", 0}}.dump()).status == 400);
    // embd_normalize 2.5 reads as 2 (llama-server truncates it)
    CHECK(c.post("/v1/embeddings", json{{"input", "a sentence to embed"}, {"embd_normalize", 2.5}}.dump())
              .json()["data"][0]["embedding"] == full["data"][0]["embedding"]);
}

// llama-server bounds an encoder's input by -ub and the model's context, not by -c: ggserve runs encoders
// through the KV cells, so a smaller -c is raised to fit one micro-batch.
TEST_CASE("embeddings: an encoder's input is bounded by -ub and not by a smaller -c", "[integration][embeddings]") {
    ServerProcess small({"-m", bert_model(), "--embeddings", "-c", "128", "-np", "2", "-t", "1"});
    ServerProcess large({"-m", bert_model(), "--embeddings", "-c", "1024", "-np", "2", "-t", "1"});
    std::string text;
    for (int i = 0; i < 150; ++i) text += "word ";
    const auto a = Client("127.0.0.1", small.port()).post("/v1/embeddings", json{{"input", text}}.dump());
    INFO(a.body.substr(0, 300));
    REQUIRE(a.status == 200);
    CHECK(a.json()["usage"]["prompt_tokens"].get<int>() > 128);
    const auto b = Client("127.0.0.1", large.port()).post("/v1/embeddings", json{{"input", text}}.dump());
    CHECK(a.json()["data"] == b.json()["data"]);
    CHECK(small.log().find("encoder model: 512 KV cells instead of -c 128") != std::string::npos);
}

TEST_CASE("/metrics counts embedding work in llama-server's prompt and decode counters",
          "[integration][embeddings]") {
    ServerProcess s({"-m", bert_model(), "--embeddings", "-np", "2", "-t", "1", "--metrics"});
    Client c("127.0.0.1", s.port());
    const auto counter = [&](const std::string& name) {
        const std::string metrics = c.get("/metrics").body;
        const size_t p = metrics.find("\n" + name + " ");
        REQUIRE(p != std::string::npos);
        return std::stod(metrics.substr(p + name.size() + 2));
    };
    CHECK(counter("llamacpp:prompt_tokens_total") == 0);
    const json r = c.post("/v1/embeddings", json{{"input", {"Once upon a time", "a little girl"}}}.dump()).json();
    const int n_tokens = r["usage"]["prompt_tokens"].get<int>();
    REQUIRE(n_tokens > 4);
    CHECK(counter("llamacpp:prompt_tokens_total") == n_tokens);
    CHECK(counter("llamacpp:n_decode_total") >= 1);
    CHECK(counter("llamacpp:prompt_seconds_total") > 0);
    CHECK(counter("llamacpp:n_tokens_max") >= 6);  // [CLS] once upon a time [SEP]
}

TEST_CASE("/v1/embeddings: a batch of 32 mixed-length inputs equals each input alone",
          "[integration][embeddings]") {
    Client c("127.0.0.1", mean_server().port());
    const json g = bert_golden();
    json inputs = json::array();
    for (int i = 0; i < 32; ++i) {
        auto t = g["cases"][i % g["cases"].size()]["tokens"].get<std::vector<int>>();
        t.resize(std::max<size_t>(2, t.size() > (size_t)(i / 4) ? t.size() - (size_t)(i / 4) : 2));
        inputs.push_back(t);
    }
    const json all = c.post("/v1/embeddings", json{{"input", inputs}}.dump()).json();
    REQUIRE(all["data"].size() == 32);
    for (int i = 0; i < 32; ++i) {
        const json alone = c.post("/v1/embeddings", json{{"input", inputs[i]}}.dump()).json();
        INFO("input " << i);
        REQUIRE(alone["data"][0]["embedding"] == all["data"][i]["embedding"]);
    }
}

TEST_CASE("/embedding (native): pooling none gives every token's hidden state", "[integration][embeddings]") {
    ServerProcess s({"-m", bert_model(), "--embedding", "--pooling", "none", "-np", "2", "-t", "2"});
    Client c("127.0.0.1", s.port());
    const json g = bert_golden();
    for (const char* path : {"/embedding", "/embeddings"}) {
        const auto& cs = g["cases"][1];
        const json r = c.post(path, json{{"content", cs["tokens"]}}.dump()).json();
        REQUIRE(r.is_array());
        REQUIRE(r[0]["index"] == 0);
        const auto& rows = r[0]["embedding"];
        REQUIRE(rows.size() == cs["tokens"].size());
        for (size_t t = 0; t < rows.size(); ++t)
            REQUIRE(cosine(rows[t].get<std::vector<float>>(), cs["hidden"][t].get<std::vector<float>>()) >=
                    0.999);
    }
    // OpenAI's form has no per-token vectors
    require_error(c.post("/v1/embeddings", json{{"input", "hello"}}.dump()), 400, "not OAI compatible");
}

TEST_CASE("embeddings: bad input, generation and rerank get the right errors", "[integration][embeddings]") {
    Client c("127.0.0.1", mean_server().port());
    require_error(c.post("/v1/embeddings", json::object().dump()), 400);                  // no input
    require_error(c.post("/v1/embeddings", json{{"input", json::array()}}.dump()), 400);  // empty input
    require_error(c.post("/v1/embeddings", json{{"input", {json::array()}}}.dump()), 400, "empty");
    require_error(c.post("/v1/embeddings", json{{"input", {101, 999999}}}.dump()), 400,
                  "outside the vocabulary");
    require_error(c.post("/v1/embeddings", json{{"input", {101, -1}}}.dump()), 400, "outside the vocabulary");
    require_error(c.post("/v1/embeddings", json{{"input", {json{101, 102}, 3.5}}}.dump()), 400);
    require_error(c.post("/v1/embeddings", json{{"input", json::array({json{{"content", "x"}}})}}.dump()),
                  400, "multimodal");
    require_error(c.post("/v1/embeddings", json{{"input", std::vector<int>(129, 2051)}}.dump()), 400,
                  "raise -ub");
    std::string long_text;
    for (int i = 0; i < 200; ++i) long_text += "time ";
    require_error(c.post("/v1/embeddings", json{{"input", long_text}}.dump()), 400, "raise -ub");
    require_error(c.post("/v1/embeddings", json{{"input", "x"}, {"encoding_format", "hex"}}.dump()), 400);
    // an embeddings-only server does not generate
    require_error(
        c.post("/v1/chat/completions", json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}}.dump()),
        501);
    require_error(c.post("/v1/completions", json{{"prompt", "hi"}}.dump()), 501);
    require_error(c.post("/completion", json{{"prompt", "hi"}}.dump()), 501);
    // rerank: a missing query or documents is a 400; a valid request a 501 without --reranking
    require_error(c.post("/v1/rerank", json{{"query", "q"}}.dump()), 400);
    require_error(c.post("/rerank", json{{"query", "q"}, {"documents", json::array()}}.dump()), 400);
    require_error(c.post("/reranking", json{{"documents", json::array({"a"})}}.dump()), 400);
    require_error(c.post("/v1/rerank", json{{"query", "q"}, {"documents", json::array({"a", "b"})}}.dump()),
                  501, "--reranking");
    // the server still answers after all that
    REQUIRE(c.post("/v1/embeddings", json{{"input", "Once upon a time"}}.dump()).status == 200);
}

TEST_CASE("embeddings: inputs read as llama-server reads them (lists of forms and mixed lists and empty strings)",
          "[integration][embeddings]") {
    Client c("127.0.0.1", mean_server().port());
    auto vectors = [&](const json& input) {
        const auto r = c.post("/v1/embeddings", json{{"input", input}}.dump());
        INFO(input.dump() << " -> " << r.body.substr(0, 300));
        REQUIRE(r.status == 200);
        const json body = r.json();
        std::vector<json> out;
        for (const auto& d : body["data"]) out.push_back(d["embedding"]);
        return out;
    };
    const json text = vectors("Once upon a time")[0];
    const json ids = vectors(json{101, 2320, 102})[0];
    // a list holding a string and a list of ids: two inputs, each as alone
    const auto two = vectors(json::array({"Once upon a time", json{101, 2320, 102}}));
    REQUIRE(two.size() == 2);
    CHECK(two[0] == text);
    CHECK(two[1] == ids);
    const auto swapped = vectors(json::array({json{101, 2320, 102}, "Once upon a time"}));
    REQUIRE(swapped.size() == 2);
    CHECK(swapped[0] == ids);
    CHECK(swapped[1] == text);
    // a flat list mixing ids and strings: one input, the strings tokenized in place (special tokens only
    // for a string that opens it)
    const auto mixed = vectors(json::array({101, "once upon a time", 102}));
    REQUIRE(mixed.size() == 1);
    const auto tok = c.post("/tokenize", json{{"content", "once upon a time"}}.dump()).json()["tokens"];
    json spelled = json::array({101});
    for (const auto& t : tok) spelled.push_back(t);
    spelled.push_back(102);
    CHECK(mixed[0] == vectors(spelled)[0]);
    // "" is its special tokens alone ([CLS] [SEP]); beside other inputs it does not fail the request
    const json empty = vectors("")[0];
    CHECK(empty == vectors(json{101, 102})[0]);
    const auto with_blank = vectors(json::array({"Once upon a time", ""}));
    REQUIRE(with_blank.size() == 2);
    CHECK(with_blank[0] == text);
    CHECK(with_blank[1] == empty);
}

TEST_CASE("embeddings: a generation model refuses them unless --embeddings and then it generates too",
          "[integration][embeddings]") {
    {
        ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1"});
        Client c("127.0.0.1", s.port());
        require_error(c.post("/v1/embeddings", json{{"input", "hello"}}.dump()), 501,
                      "not an embedding model");
    }
    {
        // with --embeddings a decoder embeds with its final hidden states (here last-token pooling)
        ServerProcess s({"-m", stories_model(), "--embeddings", "--pooling", "last", "-c", "256", "-t", "1"});
        Client c("127.0.0.1", s.port());
        const json r =
            c.post("/v1/embeddings", json{{"input", json::array({"Once upon a time", "hi"})}}.dump()).json();
        INFO(r.dump().substr(0, 300));
        REQUIRE(r["data"].size() == 2);
        const auto v = r["data"][0]["embedding"].get<std::vector<float>>();
        REQUIRE(v.size() == 64);  // stories260K's n_embd
        double norm = 0;
        for (float x : v) norm += (double)x * x;
        REQUIRE(norm == Approx(1.0).epsilon(1e-5));
        REQUIRE(r["data"][0]["embedding"] != r["data"][1]["embedding"]);
        // llama-server (2026) keeps generating with --embeddings (b4748 answered 501): one server for
        // chat and embeddings, as --embeddings-with-generation, with the same golden tokens
        CHECK(c.get("/props").json()["server"]["embeddings_with_generation"] == true);
        const json greedy{{"prompt", stories_golden()["cases"][0]["prompt"]},
                          {"n_predict", 16},
                          {"temperature", 0},
                          {"return_tokens", true}};
        const auto gen = c.post("/completion", greedy.dump());
        REQUIRE(gen.status == 200);
        CHECK(gen.json()["tokens"].get<std::vector<int>>() == golden_prefix(16));
        CHECK(c.post("/v1/embeddings", json{{"input", json::array({"Once upon a time", "hi"})}}.dump()).json() ==
              r);
    }
    REQUIRE_THROWS(ServerProcess({"-m", bert_model(), "--pooling", "max"}, std::chrono::seconds(20)));
}

TEST_CASE("/v1/rerank: documents scored by a classification head, sorted, top_n and return_documents",
          "[integration][embeddings][rerank]") {
    // synth-bert with a random classification head (cls + cls.output, one score) written into a copy
    auto f = ggml::gguf::File::open(bert_model());
    const int64_t E = 128, n_out = 1;
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    std::vector<float> cls(E * E), cls_b(E), out(E * n_out), out_b(n_out);
    for (auto* v : {&cls, &cls_b, &out, &out_b})
        for (float& x : *v) x = nd(rng);
    ggml::gguf::Writer w;
    w.set_alignment(f->alignment());
    for (const auto& [k, v] : f->metadata()) w.set(k, v);
    for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
    const int64_t ne_cls[2] = {E, E}, ne_out[2] = {E, n_out};
    w.add_tensor("cls.weight", ggml::Type::F32, 2, ne_cls, cls.data(), cls.size() * 4);
    w.add_tensor("cls.bias", ggml::Type::F32, 1, &E, cls_b.data(), cls_b.size() * 4);
    w.add_tensor("cls.output.weight", ggml::Type::F32, 2, ne_out, out.data(), out.size() * 4);
    w.add_tensor("cls.output.bias", ggml::Type::F32, 1, &n_out, out_b.data(), out_b.size() * 4);
    const std::string path =
        (std::filesystem::temp_directory_path() / ("ggserve-rerank-it-" + std::to_string(getpid()) + ".gguf"))
            .string();
    w.write(path);
    ServerProcess s({"-m", path, "--reranking", "-np", "4", "-t", "2"});
    // llama.cpp's README starts a reranker with `--embedding --pooling rank`: the same server
    ServerProcess pooling_rank({"-m", path, "--embedding", "--pooling", "rank", "-np", "1", "-t", "1"});
    std::filesystem::remove(path);  // the servers have it mapped
    Client c("127.0.0.1", s.port());
    const json docs =
        json::array({"a little girl", "once upon a time there was a dog", "time", "the forest"});
    const json all =
        c.post("/v1/rerank", json{{"query", "once upon a time"}, {"documents", docs}}.dump()).json();
    INFO(all.dump());
    REQUIRE(all["results"].size() == 4);
    REQUIRE(all["usage"]["prompt_tokens"].get<int>() > 0);
    std::vector<bool> seen(4, false);
    for (size_t k = 0; k < 4; ++k) {
        const auto& r = all["results"][k];
        seen.at(r["index"].get<size_t>()) = true;
        REQUIRE(r["relevance_score"].is_number());
        REQUIRE_FALSE(r.contains("document"));
        if (k > 0)
            REQUIRE(r["relevance_score"].get<double>() <=
                    all["results"][k - 1]["relevance_score"].get<double>());
    }
    REQUIRE(std::count(seen.begin(), seen.end(), true) == 4);
    REQUIRE(all["results"][0]["relevance_score"] != all["results"][3]["relevance_score"]);
    // top_n and return_documents (Jina/Cohere), /rerank and /reranking the same, a single document scored
    // alike
    const json top = c.post("/rerank", json{{"query", "once upon a time"},
                                            {"documents", docs},
                                            {"top_n", 2},
                                            {"return_documents", true}}
                                           .dump())
                         .json();
    REQUIRE(top["results"].size() == 2);
    for (size_t k = 0; k < 2; ++k) {
        REQUIRE(top["results"][k]["index"] == all["results"][k]["index"]);
        REQUIRE(top["results"][k]["relevance_score"] == all["results"][k]["relevance_score"]);
        REQUIRE(top["results"][k]["document"]["text"] == docs[top["results"][k]["index"].get<size_t>()]);
    }
    const size_t best = all["results"][0]["index"].get<size_t>();
    const json one =
        c.post("/reranking", json{{"query", "once upon a time"}, {"documents", json::array({docs[best]})}}.dump())
            .json();
    REQUIRE(one["results"][0]["relevance_score"] == all["results"][0]["relevance_score"]);
    // Text Embeddings Inference's form (`texts`): a bare list of {index, score}, best first, `text` with
    // return_text, as llama-server answers it
    const json tei = c.post("/rerank", json{{"query", "once upon a time"}, {"texts", docs}, {"return_text", true}}.dump())
                         .json();
    INFO(tei.dump());
    REQUIRE(tei.is_array());
    REQUIRE(tei.size() == 4);
    for (size_t k = 0; k < 4; ++k) {
        CHECK(tei[k]["index"] == all["results"][k]["index"]);
        CHECK(tei[k]["score"] == all["results"][k]["relevance_score"]);
        CHECK(tei[k]["text"] == docs[tei[k]["index"].get<size_t>()]);
    }
    CHECK_FALSE(c.post("/v1/rerank", json{{"query", "once upon a time"}, {"texts", docs}}.dump())
                    .json()[0]
                    .contains("text"));
    // the request's model is echoed
    CHECK(c.post("/v1/rerank", json{{"query", "q"}, {"documents", docs}, {"model", "my-reranker"}}.dump())
              .json()["model"] == "my-reranker");
    // --embedding --pooling rank scores alike
    Client pr("127.0.0.1", pooling_rank.port());
    const json again =
        pr.post("/v1/rerank", json{{"query", "once upon a time"}, {"documents", docs}}.dump()).json();
    CHECK(again["results"] == all["results"]);
    // Paired as llama-server pairs them for a BERT vocabulary: [CLS] query [SEP] document, 1 + 4 + 1 + 1 tokens
    // here (with this pairing llama.cpp 0.7.0's scores of a random head agree within 0.011: docs/performance.md).
    const json pair = c.post("/v1/rerank", json{{"query", "once upon a time"}, {"documents", {"time"}}}.dump()).json();
    REQUIRE(pair["usage"]["prompt_tokens"] == 7);
    // an empty query or document is scored like any other (llama-server scores them), not refused
    CHECK(c.post("/v1/rerank", json{{"query", ""}, {"documents", docs}}.dump()).json()["results"].size() == 4);
    CHECK(c.post("/v1/rerank", json{{"query", "q"}, {"documents", json::array({"a", ""})}}.dump())
              .json()["results"]
              .size() == 2);
}

TEST_CASE("/v1/rerank with --reranking on a model without a classification head: 501",
          "[integration][embeddings][rerank]") {
    ServerProcess s({"-m", bert_model(), "--reranking", "-t", "1"});
    Client c("127.0.0.1", s.port());
    require_error(c.post("/v1/rerank", json{{"query", "q"}, {"documents", json::array({"a"})}}.dump()), 501,
                  "classification head");
}

TEST_CASE("/v1/embeddings: concurrent requests (the engine thread may batch them together) equal each alone",
          "[integration][embeddings]") {
    const json g = bert_golden();
    const uint16_t port = mean_server().port();
    const size_t n = g["cases"].size();
    std::vector<json> alone(n), together(n);
    {
        Client c("127.0.0.1", port);
        for (size_t i = 0; i < n; ++i)
            alone[i] = c.post("/v1/embeddings", json{{"input", g["cases"][i]["prompt"]}}.dump()).json();
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            Client c("127.0.0.1", port);
            together[i] = c.post("/v1/embeddings", json{{"input", g["cases"][i]["prompt"]}}.dump()).json();
        });
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < n; ++i) {
        INFO("case " << i << ": " << together[i].dump().substr(0, 200));
        REQUIRE(together[i]["data"][0]["embedding"] == alone[i]["data"][0]["embedding"]);
    }
}

namespace {

// A greedy stream of the stories golden's first case on its own thread: the tokens it received, whether it
// has its first token (for the test thread to start embedding while it runs), and a stop switch.
struct GoldenStream {
    std::vector<int> tokens;
    std::mutex mu;
    std::condition_variable cv;
    bool started = false, ended = false;
    std::atomic<bool> stop{false};
    std::thread thread;

    GoldenStream(uint16_t port, int n_predict) {
        const json body{{"prompt", stories_golden()["cases"][0]["prompt"]}, {"n_predict", n_predict},
                        {"temperature", 0},  {"ignore_eos", true},
                        {"stream", true},    {"cache_prompt", false}};
        thread = std::thread([this, port, body] {
            Client c("127.0.0.1", port);
            c.stream("POST", "/completion", body.dump(), {}, [&](const server::http::SseEvent& e) {
                const json j = json::parse(e.data, nullptr, false);
                std::lock_guard<std::mutex> lk(mu);
                if (j.is_object() && j.contains("tokens"))
                    for (const auto& t : j["tokens"]) tokens.push_back(t.get<int>());
                started = true;
                cv.notify_all();
                return !stop.load();
            });
            std::lock_guard<std::mutex> lk(mu);
            started = ended = true;
            cv.notify_all();
        });
    }
    void wait_started() {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return started; });
    }
    bool running() {
        std::lock_guard<std::mutex> lk(mu);
        return !ended;
    }
    std::vector<int> finish() {
        stop = true;
        thread.join();
        return tokens;
    }
};

}  // namespace

TEST_CASE("embeddings beside generation: the same vectors while streams generate, the streams unchanged",
          "[integration][embeddings]") {
    // The reference: the same decoder as an embeddings-only server (llama-server's --embeddings).
    ServerProcess ref({"-m", stories_model(), "--embeddings", "--pooling", "mean", "-np", "2", "-c", "1024",
                       "-t", "1"});
    ServerProcess s({"-m", stories_model(), "--embeddings-with-generation", "--pooling", "mean", "-np", "4", "-c",
                     "8192", "-t", "2", "--metrics"});
    Client rc("127.0.0.1", ref.port()), c("127.0.0.1", s.port());
    const json caps = c.get("/v1/models").json()["models"][0]["capabilities"];
    CHECK(caps == json::array({"completion", "embedding"}));
    CHECK(c.get("/props").json()["server"]["embeddings_with_generation"] == true);

    const std::vector<std::string> words = {"Once", "upon", "a", "time", "there", "was", "a", "little", "girl",
                                            "named", "Lily", "who", "loved", "to", "play", "outside"};
    json inputs = json::array();
    for (size_t i = 0; i < 32; ++i) {
        std::string text;
        for (size_t w = 0; w <= (i * 7) % words.size(); ++w) text += (w ? " " : "") + words[(i + w) % words.size()];
        inputs.push_back(text);
    }
    std::vector<json> alone(32);
    for (size_t i = 0; i < 32; ++i) {
        const json r = rc.post("/v1/embeddings", json{{"input", inputs[i]}}.dump()).json();
        REQUIRE(r["data"].size() == 1);
        alone[i] = r["data"][0]["embedding"];
    }

    // Two greedy streams generate while the batch and single inputs are embedded on the other slots.
    GoldenStream a(s.port(), 100000), b(s.port(), 100000);
    a.wait_started();
    b.wait_started();
    const json batch = c.post("/v1/embeddings", json{{"input", inputs}}.dump()).json();
    std::vector<json> singles(32);
    for (size_t i = 0; i < 32; i += 5)
        singles[i] = c.post("/v1/embeddings", json{{"input", inputs[i]}}.dump()).json()["data"][0]["embedding"];
    CHECK(a.running());  // the streams ran all along (they end only when told to)
    CHECK(b.running());
    const std::vector<int> ta = a.finish(), tb = b.finish();

    INFO(batch.dump().substr(0, 300));
    REQUIRE(batch["data"].size() == 32);
    CHECK(batch["usage"]["prompt_tokens"].get<int>() > 32);
    for (size_t i = 0; i < 32; ++i) {
        INFO("input " << i << ": " << inputs[i]);
        CHECK(batch["data"][i]["embedding"] == alone[i]);
        if (i % 5 == 0) CHECK(singles[i] == alone[i]);
    }
    // The single inputs rode along the streams' decode calls (two idle slots); the batch of 32 did not fit
    // beside them and ran in calls of its own.
    const std::string metrics = c.get("/metrics").body;
    const auto counter = [&](const std::string& name) {
        const size_t p = metrics.find("\n" + name + " ");
        return p == std::string::npos ? -1.0 : std::stod(metrics.substr(p + name.size() + 2));
    };
    CHECK(counter("ggserve:embedding_inputs_in_generation_steps_total") >= 7);
    CHECK(counter("ggserve:embedding_inputs_alone_total") >= 32);
    // The streams' tokens: the golden continuation for as far as it goes.
    REQUIRE(ta.size() >= 2);
    REQUIRE(tb.size() >= 2);
    const size_t na = std::min(ta.size(), golden_prefix(1000).size()), nb = std::min(tb.size(), na);
    CHECK(std::vector<int>(ta.begin(), ta.begin() + (std::ptrdiff_t)na) == golden_prefix(na));
    CHECK(std::vector<int>(tb.begin(), tb.begin() + (std::ptrdiff_t)nb) == golden_prefix(nb));
}

TEST_CASE("embeddings beside generation: a busy slot makes them wait, an idle slot gives up its prompt",
          "[integration][threads][embeddings]") {
    ServerProcess ref({"-m", stories_model(), "--embeddings", "--pooling", "last", "-np", "1", "-c", "512", "-t",
                       "1"});
    ServerProcess s({"-m", stories_model(), "--embeddings-with-generation", "--pooling", "last", "-np", "1", "-c",
                     "4096", "-t", "1"});
    Client rc("127.0.0.1", ref.port()), c("127.0.0.1", s.port());
    const json in = json{{"input", "The little dog ran to the park"}};
    const json expected = rc.post("/v1/embeddings", in.dump()).json()["data"][0]["embedding"];
    REQUIRE(expected.size() == 64);

    // The only slot generates 2000 tokens and ends by itself: the embedding waits for it, then is served
    // (the engine thread must wake for it although no slot is busy any more).
    {
        GoldenStream g(s.port(), 2000);
        g.wait_started();
        const auto r = c.post("/v1/embeddings", in.dump());
        REQUIRE(r.status == 200);
        CHECK(r.json()["data"][0]["embedding"] == expected);
        g.finish();
    }
    // The slot holds a cached prompt now; the embedding takes the slot (the cache goes), and generation
    // afterwards gives the golden tokens again.
    const json greedy{{"prompt", stories_golden()["cases"][0]["prompt"]},
                      {"n_predict", 32},
                      {"temperature", 0},
                      {"return_tokens", true}};
    REQUIRE(c.post("/completion", greedy.dump()).status == 200);
    CHECK(c.post("/v1/embeddings", in.dump()).json()["data"][0]["embedding"] == expected);
    const json again = c.post("/completion", greedy.dump()).json();
    CHECK(again["tokens"].get<std::vector<int>>() == golden_prefix(32));
    CHECK(again["tokens_cached"].get<int>() == 0);  // evaluated again: the embedding took the slot's cache

    // --reranking and --embeddings-with-generation contradict each other.
    REQUIRE_THROWS(ServerProcess({"-m", stories_model(), "--reranking", "--embeddings-with-generation"},
                                 std::chrono::seconds(20)));
}
