#include "engine/speculative/draft_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace engine::spec {

std::string vocab_mismatch(const Vocab& t, const Vocab& d) {
    const int32_t nt = t.n_tokens(), nd = d.n_tokens();
    if (std::abs(nt - nd) > 128)
        return "vocabulary sizes differ (target " + std::to_string(nt) + ", draft " + std::to_string(nd) + ")";
    if (t.bos() != d.bos() || t.eos() != d.eos())
        return "special tokens differ (target bos " + std::to_string(t.bos()) + " eos " + std::to_string(t.eos()) +
               ", draft bos " + std::to_string(d.bos()) + " eos " + std::to_string(d.eos()) + ")";
    if (t.add_bos() != d.add_bos()) return "the models disagree on adding a BOS token";
    for (int32_t i = 0; i < std::min(nt, nd); ++i)
        if (t.token_text(i) != d.token_text(i))
            return "token " + std::to_string(i) + " differs (target '" + t.token_text(i) + "', draft '" +
                   d.token_text(i) + "')";
    return {};
}

DraftModel::DraftModel(const Model& draft, const Model& target, const ContextParams& params)
    : model_(draft), n_vocab_target_(target.vocab().n_tokens()) {
    if (std::string why = vocab_mismatch(target.vocab(), draft.vocab()); !why.empty())
        throw std::runtime_error("the draft model cannot draft for the target: " + why);
    ctx_ = std::make_unique<Context>(draft, params);
    cached_.resize(params.n_seq_max);
}

void DraftModel::forget(int seq) {
    if (seq < 0 || (size_t)seq >= cached_.size()) return;
    ctx_->kv().seq_rm(seq, -1, -1);
    cached_[(size_t)seq].clear();
}

void DraftModel::warmup() {
    ctx_->warmup();
    forget(0);
}

size_t DraftModel::release_memory() {
    for (auto& c : cached_) c.clear();
    ctx_->kv().seq_rm(-1, -1, -1);  // every sequence's cells
    return model_.release_memory() + ctx_->kv().release_pages();
}

size_t DraftModel::held(int seq, std::span<const Token> tokens) const {
    if (seq < 0 || (size_t)seq >= cached_.size()) return 0;
    const auto& have = cached_[(size_t)seq];
    return (size_t)(std::mismatch(have.begin(), have.end(), tokens.begin(), tokens.end()).second - tokens.begin());
}

size_t DraftModel::kept(int seq, std::span<const Token> tokens) const {
    // The last token is evaluated with the draft, not before it.
    return tokens.empty() ? 0 : std::min(held(seq, tokens), tokens.size() - 1);
}

size_t DraftModel::behind(int seq, std::span<const Token> tokens) const {
    return tokens.empty() ? 0 : behind_context(seq, tokens.first(tokens.size() - 1));
}

size_t DraftModel::behind_context(int seq, std::span<const Token> context) const {
    return context.size() - held(seq, context);
}

std::vector<bool> DraftModel::catch_up(std::span<const Request> reqs) {
    std::vector<bool> ok(reqs.size(), true);
    const uint32_t n_batch = ctx_->params().n_batch;
    // Evaluate what changed, from the first position where the cells differ up to (not including) the
    // last token, which draft() evaluates with the others' so that all first logits come from one batch.
    // Long catch-ups (a new prompt) go in n_batch pieces.
    std::vector<size_t> from(reqs.size());
    for (size_t r = 0; r < reqs.size(); ++r) {
        const size_t c = kept(reqs[r].seq, reqs[r].tokens);
        ctx_->kv().seq_rm(reqs[r].seq, (Pos)c, -1);
        cached_[(size_t)reqs[r].seq].resize(c);
        from[r] = c;
    }
    for (;;) {
        Batch b;
        std::vector<size_t> owner;
        for (size_t r = 0; r < reqs.size() && b.size() < n_batch; ++r) {
            if (!ok[r]) continue;
            const size_t end = reqs[r].tokens.size() - 1;
            while (from[r] < end && b.size() < n_batch) {
                b.add(reqs[r].tokens[from[r]], (Pos)from[r], {reqs[r].seq}, false);
                owner.push_back(r);
                ++from[r];
            }
        }
        if (b.empty()) break;
        if (ctx_->decode(b) != Context::Status::Ok) {
            // No room: these sequences start over next time; no draft for them now.
            for (size_t r : owner) {
                ok[r] = false;
                forget(reqs[r].seq);
            }
            continue;
        }
        for (size_t k = 0; k < b.size(); ++k) cached_[(size_t)reqs[owner[k]].seq].push_back(b.tokens[k]);
        timing_.catch_up_tokens += (int32_t)b.size();
    }
    return ok;
}

std::vector<DraftModel::Result> DraftModel::draft(std::span<const Request> reqs) {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    timing_ = Timing{};
    std::vector<Result> out(reqs.size());
    if (reqs.empty()) return out;
    for (const Request& rq : reqs)
        if (rq.tokens.empty() || rq.seq < 0 || (size_t)rq.seq >= cached_.size())
            throw std::invalid_argument("draft: empty sequence or bad sequence id");
    std::vector<bool> ok = catch_up(reqs);
    const auto t1 = Clock::now();
    timing_.catch_up_seconds = std::chrono::duration<double>(t1 - t0).count();
    {
        // The last token of every request in one batch: their logits start the drafts.
        Batch b;
        std::vector<size_t> idx;
        for (size_t r = 0; r < reqs.size(); ++r) {
            if (!ok[r] || reqs[r].n_max <= 0) continue;
            const size_t last = reqs[r].tokens.size() - 1;
            b.add(reqs[r].tokens[last], (Pos)last, {reqs[r].seq}, true);
            idx.push_back(r);
        }
        const int32_t n_vocab = ctx_->n_vocab();
        const int32_t n_pick = std::min(n_vocab, n_vocab_target_);
        for (int32_t step = 0; !b.empty(); ++step) {
            ++timing_.positions;
            if (ctx_->decode(b) != Context::Status::Ok) {
                for (size_t r : idx) forget(reqs[r].seq);
                break;
            }
            for (size_t k = 0; k < b.size(); ++k) cached_[(size_t)reqs[idx[k]].seq].push_back(b.tokens[k]);
            Batch next;
            std::vector<size_t> next_idx;
            for (size_t k = 0; k < idx.size(); ++k) {
                const size_t r = idx[k];
                const Request& rq = reqs[r];
                const float* logits = ctx_->logits(k);
                // Softmax over the tokens the target knows, at the request's temperature (1 for greedy
                // requests: p_min is about the draft's confidence).
                const float inv_t = rq.temperature > 0.0f ? 1.0f / rq.temperature : 1.0f;
                float mx = -INFINITY;
                Token top = 0;
                for (int32_t i = 0; i < n_pick; ++i)
                    if (logits[i] > mx) {
                        mx = logits[i];
                        top = i;
                    }
                std::vector<float> q((size_t)n_pick);
                double sum = 0.0;
                for (int32_t i = 0; i < n_pick; ++i) {
                    q[(size_t)i] = std::exp((logits[i] - mx) * inv_t);
                    sum += q[(size_t)i];
                }
                for (float& x : q) x = (float)(x / sum);
                if (q[(size_t)top] < rq.p_min) continue;
                Token tok = top;
                if (rq.temperature > 0.0f && rq.rng) {
                    std::uniform_real_distribution<double> u01(0.0, 1.0);
                    const double u = u01(*rq.rng);
                    double acc = 0.0;
                    for (int32_t i = 0; i < n_pick; ++i) {
                        if (q[(size_t)i] <= 0.0f) continue;
                        tok = i;
                        acc += q[(size_t)i];
                        if (u < acc) break;
                    }
                    out[r].q.push_back(std::move(q));
                }
                out[r].tokens.push_back(tok);
                if ((int32_t)out[r].tokens.size() >= rq.n_max) continue;
                const Pos pos = (Pos)(rq.tokens.size() + out[r].tokens.size() - 1);
                next.add(tok, pos, {rq.seq}, true);
                next_idx.push_back(r);
            }
            b = std::move(next);
            idx = std::move(next_idx);
        }
    }
    const auto t2 = Clock::now();
    timing_.draft_seconds = std::chrono::duration<double>(t2 - t1).count();
    seconds_ += std::chrono::duration<double>(t2 - t0).count();
    return out;
}

}  // namespace engine::spec
