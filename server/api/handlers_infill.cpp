// POST /infill: fill-in-the-middle for code models (llama-server's native endpoint). The prompt is built
// from the model's FIM tokens (infill_prompt.h); the rest is /completion: same options, same response.
#include "server/api/api.h"
#include "server/api/infill_prompt.h"
#include "server/http/errors.h"

namespace api {

using server::http::HttpError;

namespace {

// A string (tokenized as text: no BOS, control tokens written in it stay text) or token ids.
std::vector<engine::Token> infill_text(const engine::Vocab& vocab, const json& body, const char* name) {
    const json* f = field(body, name);
    if (!f) return {};
    if (f->is_string()) return vocab.tokenize(f->get<std::string>(), false, false);
    std::vector<engine::Token> out;
    for (const auto& e : *f) {
        const int64_t id = e.get<int64_t>();
        if (id < 0 || id >= vocab.n_tokens())
            bad_request(std::string("'") + name + "' token id " + std::to_string(id) + " is outside the vocabulary");
        out.push_back((engine::Token)id);
    }
    return out;
}

}  // namespace

Api::Reply Api::infill(Request& req) {
    require_ready();
    require_generation();
    const json body = parse_body(req, "infill.json");
    const auto& vocab = model_->vocab();
    if (!supports_infill(vocab)) {
        const char* missing = vocab.fim_pre() == engine::kNoToken   ? "prefix"
                              : vocab.fim_suf() == engine::kNoToken ? "suffix"
                                                                    : "middle";
        throw HttpError(501, std::string("Infill is not supported by this model: its vocabulary has no FIM ") + missing +
                                 " token",
                        "not_supported_error");
    }
    GenerationOptions opts;
    {
        std::lock_guard<std::mutex> lk(defaults_mu_);
        opts = parse_generation_options(body, config_.defaults, vocab, Flavor::Native, req.body);
    }
    InfillInput in;
    in.prefix = infill_text(vocab, body, "input_prefix");
    in.suffix = infill_text(vocab, body, "input_suffix");
    in.prompt = infill_text(vocab, body, "prompt");
    if (const json* extra = field(body, "input_extra"))
        for (const auto& c : *extra)
            in.extra.push_back({c.value("filename", std::string("tmp")), c["text"].get<std::string>()});
    const std::vector<engine::Token> tokens =
        build_infill_prompt(vocab, in, (int32_t)config_.n_batch, opts.n_predict, scheduler_->n_ctx_slot(),
                            config_.spm_infill);
    return start_generation(req, Flavor::Native, body, opts, {tokens}, {vocab.detokenize(tokens, false, true)});
}

std::vector<engine::Token> Api::suffix_prompt(const json& prompt, const std::string& suffix, int32_t n_predict) const {
    const auto& vocab = model_->vocab();
    if (!supports_infill(vocab))
        bad_request("'suffix' needs a model with fill-in-the-middle tokens; this model's vocabulary has none");
    InfillInput in;
    in.prefix = infill_text(vocab, json{{"prompt", prompt}}, "prompt");
    in.suffix = vocab.tokenize(suffix, false, false);
    return build_infill_prompt(vocab, in, (int32_t)config_.n_batch, n_predict, scheduler_->n_ctx_slot(),
                               config_.spm_infill);
}

}  // namespace api
