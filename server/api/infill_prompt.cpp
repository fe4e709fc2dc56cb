#include "server/api/infill_prompt.h"

#include <algorithm>

namespace api {

namespace {

void append(std::vector<engine::Token>& out, const std::vector<engine::Token>& more) {
    out.insert(out.end(), more.begin(), more.end());
}

// Text tokens (no BOS, control tokens written in the text stay text).
std::vector<engine::Token> plain(const engine::Vocab& vocab, const std::string& text) {
    return vocab.tokenize(text, false, false);
}

}  // namespace

bool supports_infill(const engine::Vocab& vocab) {
    return vocab.fim_pre() != engine::kNoToken && vocab.fim_suf() != engine::kNoToken &&
           vocab.fim_mid() != engine::kNoToken;
}

std::vector<engine::Token> build_infill_prompt(const engine::Vocab& vocab, const InfillInput& in, int32_t n_batch,
                                               int32_t n_predict, int32_t n_ctx, bool spm) {
    std::vector<engine::Token> extra;
    if (vocab.fim_rep() != engine::kNoToken) {
        extra.push_back(vocab.fim_rep());
        append(extra, plain(vocab, "myproject\n"));
    }
    for (const InfillChunk& c : in.extra) {
        if (vocab.fim_sep() != engine::kNoToken) {
            extra.push_back(vocab.fim_sep());
            append(extra, plain(vocab, c.filename + "\n"));
        } else {
            append(extra, plain(vocab, "\n\n--- snippet ---\n\n"));
        }
        append(extra, plain(vocab, c.text));
    }
    if (vocab.fim_sep() != engine::kNoToken) {
        extra.push_back(vocab.fim_sep());
        append(extra, plain(vocab, "filename\n"));
    }

    // Prefix (its tail) and suffix (its head) share one batch, 3:1, the prompt counted on the suffix's side.
    const int64_t n_prefix = std::min<int64_t>((int64_t)in.prefix.size(), 3 * (n_batch / 4));
    const int64_t n_suffix = std::min<int64_t>(
        (int64_t)in.suffix.size(), std::max<int64_t>(0, n_batch / 4 - (2 + (int64_t)in.prompt.size())));
    const int64_t n_extra =
        std::min<int64_t>(std::max<int64_t>(0, (int64_t)n_ctx - n_batch - 2 * std::max(n_predict, 0)),
                          (int64_t)extra.size());

    std::vector<engine::Token> pre{vocab.fim_pre()};
    pre.insert(pre.end(), in.prefix.end() - n_prefix, in.prefix.end());
    append(pre, in.prompt);
    std::vector<engine::Token> suf{vocab.fim_suf()};
    suf.insert(suf.end(), in.suffix.begin(), in.suffix.begin() + n_suffix);

    std::vector<engine::Token> out(extra.end() - n_extra, extra.end());
    if (vocab.add_bos() && vocab.bos() != engine::kNoToken) out.push_back(vocab.bos());
    append(out, spm ? suf : pre);
    append(out, spm ? pre : suf);
    out.push_back(vocab.fim_mid());
    return out;
}

}  // namespace api
