// Embedding and rerank endpoints. POST /v1/embeddings (OpenAI: input string, array of strings, token
// array or array of token arrays; encoding_format float or base64; usage) and llama-server's native
// /embedding and /embeddings (every input's vectors as a list: one pooled vector, or one per token with
// pooling none). Inputs are tokenized and checked here (empty, token ids, the micro-batch limit), then
// one EmbedTask goes to the scheduler's engine thread; the reply is built on the formatting threads.
// /v1/rerank, /rerank, /reranking (--reranking, a model with a classification head): each document is
// paired with the query as llama-server pairs them ([CLS] query [SEP] document for BERT), scored by rank
// pooling, and the results are sorted by relevance_score (top_n, return_documents) as Jina/Cohere
// clients expect.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "engine/model/embeddings.h"
#include "engine/model/pooling.h"
#include "engine/tokenizer/vocab.h"
#include "server/api/api.h"
#include "server/http/errors.h"

namespace api {

using server::http::HttpError;

namespace {

std::string base64(const void* data, size_t n) {
    static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const auto* p = (const unsigned char*)data;
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    for (size_t i = 0; i < n; i += 3) {
        const uint32_t v =
            (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        out += tbl[v >> 18 & 63];
        out += tbl[v >> 12 & 63];
        out += i + 1 < n ? tbl[v >> 6 & 63] : '=';
        out += i + 2 < n ? tbl[v & 63] : '=';
    }
    return out;
}

// The float32 bytes of v, little-endian (OpenAI's base64 encoding_format).
std::string base64_floats(const std::vector<float>& v) {
    static_assert(sizeof(float) == 4);
    std::string bytes(v.size() * 4, '\0');
    for (size_t i = 0; i < v.size(); ++i) {
        uint32_t u;
        std::memcpy(&u, &v[i], 4);
        for (int b = 0; b < 4; ++b) bytes[i * 4 + (size_t)b] = (char)(u >> (8 * b) & 0xff);
    }
    return base64(bytes.data(), bytes.size());
}

}  // namespace

bool Api::embeddings_only() const {
    return config_.embeddings || model_->output == nullptr;
}

void Api::require_generation() const {
    if (embeddings_only())
        throw HttpError(501,
                        config_.embeddings
                            ? "This server does not support completions. Start it without `--embeddings`"
                            : "This server does not support completions: the model is an embedding "
                              "(encoder) model",
                        "not_supported_error");
}

std::vector<std::vector<engine::Token>> Api::embedding_inputs(const json& input) const {
    const size_t limit = engine::max_embed_tokens(*model_, config_.n_ubatch, config_.n_ctx);
    return parse_embedding_inputs(input, model_->vocab(), limit, [this](size_t n) {
        return engine::embed_too_long(n, *model_, config_.n_ubatch, config_.n_ctx);
    });
}

Api::Reply Api::embeddings(Request& req, bool oai) {
    require_ready();
    const json body = parse_body(req, "embeddings.json");
    if (!embeddings_only() && !config_.embeddings_with_generation)
        throw HttpError(501,
                        "This server does not support embeddings: the model (" + model_->hparams().arch +
                            ") is not an embedding model; start it with `--embeddings` (embeddings only) or "
                            "`--embeddings-with-generation` to embed with its hidden states",
                        "not_supported_error");
    const json* input = field(body, "input");
    if (!input) input = field(body, "content");
    auto task = std::make_shared<sched::EmbedTask>();
    task->inputs = embedding_inputs(*input);
    task->pooling = config_.pooling;
    task->normalize = config_.embd_normalize;  // --embd-normalize
    if (const json* n = field(body, "embd_normalize"); n && n->is_number())  // 2.5 reads as 2, as llama-server
        task->normalize = n->is_number_integer() ? n->get<int>() : (int)n->get<double>();
    const engine::Pooling pooling = engine::effective_pooling(*model_, config_.pooling);
    if (pooling == engine::Pooling::Rank)
        bad_request(
            "the pooling is rank (a reranker): use /v1/rerank, or choose another pooling with --pooling");
    if (oai && pooling == engine::Pooling::None)
        bad_request("Pooling type 'none' is not OAI compatible. Please use a different pooling type");
    const bool b64 = body.value("encoding_format", json("float")) == "base64";
    // OpenAI's `dimensions`: the first N components, normalized again as asked (every norm we offer
    // scales the vector by a function of its own components, so truncating the normalized vector and
    // normalizing it again equals normalizing the truncated one). Meaningful for models trained for it
    // (Matryoshka embeddings such as nomic-embed-text-v1.5). A size at or over the model's gives the whole
    // vector: llama-server ignores `dimensions`, so clients configured for another model's size work there.
    size_t dimensions = 0;
    if (const json* d = field(body, "dimensions"); d && !d->is_null()) dimensions = d->get<size_t>();
    const int renormalize = pooling == engine::Pooling::None ? -1 : task->normalize;
    int64_t n_tokens = 0;
    for (const auto& in : task->inputs) n_tokens += (int64_t)in.size();

    auto deferred = req.defer();
    auto serial = format_pool_->serial();
    task->done = [deferred, serial, oai, b64, n_tokens, dimensions, renormalize,
                  name = echoed_model(body)](sched::EmbedResult&& r) {
        serial->post([deferred, oai, b64, n_tokens, dimensions, renormalize, name, r = std::move(r)]() mutable {
            if (r.status != 200) {
                deferred->respond(server::http::error_response(r.status, r.error));
                return;
            }
            if (dimensions > 0) {
                for (auto& rows : r.vectors) {
                    for (auto& v : rows) {
                        if (v.size() <= dimensions) continue;
                        v.resize(dimensions);
                        engine::normalize_embedding(v, renormalize);
                    }
                }
            }
            json data = json::array();
            for (size_t i = 0; i < r.vectors.size(); ++i) {
                if (oai) {
                    const auto& v = r.vectors[i][0];
                    json item{{"object", "embedding"},
                              {"index", i},
                              {"embedding", b64 ? json(base64_floats(v)) : json(v)}};
                    if (b64) item["encoding_format"] = "base64";
                    data.push_back(std::move(item));
                } else {
                    data.push_back({{"index", i}, {"embedding", r.vectors[i]}});
                }
            }
            if (!oai) {
                deferred->respond(server::http::Response::json(data));
                return;
            }
            deferred->respond(server::http::Response::json(
                {{"object", "list"},
                 {"model", name},
                 {"data", data},
                 {"usage", {{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}}}));
        });
    };
    std::weak_ptr<sched::EmbedTask> weak = task;
    deferred->on_cancel([weak] {
        if (auto t = weak.lock()) t->cancelled.store(true);
    });
    scheduler_->submit_embed(std::move(task));
    return deferred;
}

Api::Reply Api::rerank(Request& req) {
    require_ready();
    const json body = parse_body(req, "rerank.json");  // query and documents: a 400 naming what is missing
    if (!config_.reranking)
        throw HttpError(501, "This server does not support reranking. Start it with `--reranking`",
                        "not_supported_error");
    if (!model_->cls_out)
        throw HttpError(501,
                        "the model has no classification head (cls.output): reranking needs a reranker model",
                        "not_supported_error");
    const auto& vocab = model_->vocab();
    const std::string query = body.at("query").get<std::string>();
    // Text Embeddings Inference's request names the documents `texts` and gets a bare list back.
    const bool tei = body.contains("texts");
    const json& docs = tei ? body.at("texts") : body.at("documents");
    // The pair as llama-server builds it, from the vocabulary's flags: [BOS] query [EOS] [SEP] document [EOS]
    // (EOS only where the vocabulary adds one, the separator standing in for a missing EOS; SEP where it
    // adds one): [CLS] query [SEP] document for a BERT vocabulary.
    const engine::Token eos = vocab.eos() >= 0 ? vocab.eos() : vocab.sep();
    const std::vector<engine::Token> q = vocab.tokenize(query, false, true);
    auto task = std::make_shared<sched::EmbedTask>();
    const size_t limit = engine::max_embed_tokens(*model_, config_.n_ubatch, config_.n_ctx);
    std::vector<std::string> texts;
    int64_t n_tokens = 0;
    for (const auto& d : docs) {
        const std::string text = d.get<std::string>();
        const std::vector<engine::Token> t = vocab.tokenize(text, false, true);
        std::vector<engine::Token> pair;
        if (vocab.add_bos() && vocab.bos() >= 0) pair.push_back(vocab.bos());
        pair.insert(pair.end(), q.begin(), q.end());
        if (vocab.add_eos() && eos >= 0) pair.push_back(eos);
        if (vocab.add_sep() && vocab.sep() >= 0) pair.push_back(vocab.sep());
        pair.insert(pair.end(), t.begin(), t.end());
        if (vocab.add_eos() && eos >= 0) pair.push_back(eos);
        if (pair.size() > limit)
            bad_request("document " + std::to_string(texts.size()) + " with the query: " +
                        engine::embed_too_long(pair.size(), *model_, config_.n_ubatch, config_.n_ctx));
        n_tokens += (int64_t)pair.size();
        task->inputs.push_back(std::move(pair));
        texts.push_back(text);
    }
    size_t top_n = texts.size();
    if (const json* n = field(body, "top_n"); n && n->is_number_integer())
        top_n = std::min(top_n, (size_t)n->get<int64_t>());
    const bool return_documents = body.value("return_documents", json(false)) == true;
    const bool return_text = body.value("return_text", json(false)) == true;
    task->pooling = engine::Pooling::Rank;
    task->normalize = -1;

    auto deferred = req.defer();
    auto serial = format_pool_->serial();
    task->done = [deferred, serial, n_tokens, top_n, return_documents, return_text, tei, texts = std::move(texts),
                  name = echoed_model(body)](sched::EmbedResult&& r) {
        serial->post([deferred, n_tokens, top_n, return_documents, return_text, tei, texts, name,
                      r = std::move(r)] {
            if (r.status != 200) {
                deferred->respond(server::http::error_response(r.status, r.error));
                return;
            }
            std::vector<size_t> order(r.vectors.size());
            for (size_t i = 0; i < order.size(); ++i) order[i] = i;
            auto score = [&](size_t i) { return r.vectors[i][0][0]; };
            std::stable_sort(order.begin(), order.end(),
                             [&](size_t a, size_t b) { return score(a) > score(b); });
            json results = json::array();
            for (size_t k = 0; k < top_n && k < order.size(); ++k) {
                const size_t i = order[k];
                if (tei) {
                    json e{{"index", i}, {"score", score(i)}};
                    if (return_text) e["text"] = texts[i];
                    results.push_back(std::move(e));
                    continue;
                }
                json e{{"index", i}, {"relevance_score", score(i)}};
                if (return_documents) e["document"] = {{"text", texts[i]}};
                results.push_back(std::move(e));
            }
            if (tei) {
                deferred->respond(server::http::Response::json(results));
                return;
            }
            deferred->respond(server::http::Response::json(
                {{"model", name},
                 {"object", "list"},
                 {"usage", {{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}},
                 {"results", results}}));
        });
    };
    std::weak_ptr<sched::EmbedTask> weak = task;
    deferred->on_cancel([weak] {
        if (auto t = weak.lock()) t->cancelled.store(true);
    });
    scheduler_->submit_embed(std::move(task));
    return deferred;
}

}  // namespace api
