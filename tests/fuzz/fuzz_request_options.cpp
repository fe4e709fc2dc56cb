// libFuzzer target: a request body -> what the server does with it before anything is queued: the
// depth-limited parse and schema validation (parse_request_body), generation options (sampling fields,
// stop strings, logit_bias by text, grammars and JSON schemas), for chat the tools, tool_choice and the
// tool-call grammar, template kwargs and reasoning options, the grammar compiled for a small vocabulary and
// a few sampling steps through it; for embeddings the inputs. Errors must be HttpError (a 4xx).
// Input: byte 0 picks the endpoint and the chat tool-call format, the rest is the body.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/grammar_vocab.h"
#include "engine/grammar/regex.h"
#include "engine/tokenizer/vocab.h"
#include "fuzz_vocab.h"
#include "server/api/chat_request_options.h"
#include "server/api/chat_tools.h"
#include "server/api/request_params.h"
#include "server/http/errors.h"
#include "server/http/request_schemas.h"

namespace {

struct Fixture {
    engine::Vocab vocab;
    std::shared_ptr<const engine::GrammarVocab> grammar_vocab;
    static engine::Vocab load() {
        const std::vector<uint8_t> bytes = fuzz_vocab::spm().to_bytes();
        auto file = ggml::gguf::File::from_memory(bytes.data(), bytes.size());
        return engine::Vocab::from_gguf(*file);
    }
    Fixture() : vocab(load()) {
        std::vector<std::string> pieces;
        for (int i = 0; i < vocab.n_tokens(); ++i) pieces.push_back(vocab.token_to_piece(i, false));
        grammar_vocab = std::make_shared<engine::GrammarVocab>(std::move(pieces), vocab.eog_tokens());
    }
};

// A few steps of sampling through the grammar: mask every token, take the first allowed one.
void walk(const api::GenerationOptions& opts, const Fixture& fx) {
    if (opts.grammar.empty()) return;
    std::optional<engine::GrammarTriggers> triggers;
    if (opts.grammar_lazy) triggers = opts.triggers;
    engine::Grammar g(opts.grammar, "root", fx.grammar_vocab, triggers);
    for (int step = 0; step < 4; ++step) {
        engine::TokenDataArray cur;
        for (int i = 0; i < fx.vocab.n_tokens(); ++i) cur.data.push_back({i, 0.0f, 0.0f});
        g.apply(cur);
        engine::Token pick = -1;
        for (const auto& td : cur.data)
            if (td.logit != -INFINITY && !fx.vocab.is_eog(td.id)) {
                pick = td.id;
                break;
            }
        if (pick < 0) return;
        g.accept(pick);
    }
}

void run(uint8_t mode, const std::string& body, const Fixture& fx) {
    server::http::Request req;
    req.method = "POST";
    req.body = body;
    api::ApiDefaults defaults;
    switch (mode % 4) {
        case 0:
        case 1: {
            const auto flavor = mode % 4 == 0 ? api::Flavor::Native : api::Flavor::Completions;
            const api::json j = server::http::parse_request_body(
                req, flavor == api::Flavor::Native ? "completion" : "completions");
            const auto opts = api::parse_generation_options(j, defaults, fx.vocab, flavor, req.body);
            walk(opts, fx);
            break;
        }
        case 2: {
            const api::json j = server::http::parse_request_body(req, "chat_completions");
            auto opts = api::parse_generation_options(j, defaults, fx.vocab, api::Flavor::Chat, req.body);
            const nlohmann::ordered_json obody = nlohmann::ordered_json::parse(req.body, nullptr, false);
            if (!obody.is_object()) api::bad_request("the request body must be a JSON object");
            const api::ChatTools tools = api::parse_chat_tools(obody);
            const auto format = static_cast<engine::chat::ToolCallFormat>(
                (mode >> 2) % (int(engine::chat::ToolCallFormat::Harmony) + 1));
            api::apply_tool_grammar(tools, format, fx.vocab, opts);
            (void)api::chat_template_kwargs(obody, nlohmann::ordered_json::object(), (mode & 64) ? 0 : -1);
            (void)api::extract_reasoning(obody, (mode & 128) ? "none" : "deepseek");
            walk(opts, fx);
            break;
        }
        case 3: {
            const api::json j = server::http::parse_request_body(req, "embeddings");
            const api::json* input = api::field(j, "input");
            if (!input) input = api::field(j, "content");
            if (!input) api::bad_request("'input' is required");
            (void)api::parse_embedding_inputs(
                *input, fx.vocab, 64, [](size_t n) { return std::to_string(n) + " tokens are too many"; });
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    static const Fixture fx;
    const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        run(data[0], body, fx);
    } catch (const server::http::HttpError& e) {
        if (e.status() < 400 || e.status() >= 500) {
            std::fprintf(stderr, "HttpError %d: %s\n", e.status(), e.what());
            std::abort();
        }
    } catch (const engine::GrammarError&) {  // the server's compile_grammar turns these into 400s
    } catch (const engine::gbnf::RegexError&) {
    } catch (const engine::GrammarBudgetError&) {  // a 400 from the engine thread
    } catch (const std::invalid_argument&) {       // the route guard answers these with 400
    } catch (const std::runtime_error& e) {
        // A lazy grammar whose triggered text does not match is a 400 too; anything else would be a 500.
        if (std::string(e.what()).find("does not match the grammar") == std::string::npos) {
            std::fprintf(stderr, "unexpected runtime_error: %s\n", e.what());
            std::abort();
        }
    }
    return 0;
}
