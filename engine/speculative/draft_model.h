// The draft-model drafter (--spec-type draft-simple, -md): a small model with the target's vocabulary
// proposes tokens one at a time. It has its own context with one sequence per slot, which mirrors the
// slot's tokens (only what changed since the last draft is evaluated); drafts of all slots run as one
// batch per drafted position.
#pragma once

#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/tokenizer/vocab.h"

namespace engine::spec {

// Empty when a draft model's tokens mean the same as the target's: the same special tokens, token texts
// equal over the common range, sizes within 128 of each other (padding). Otherwise the reason.
std::string vocab_mismatch(const Vocab& target, const Vocab& draft);

class DraftModel {
  public:
    // Throws std::runtime_error naming the problem when the vocabularies disagree.
    DraftModel(const Model& draft, const Model& target, const ContextParams& params);

    struct Request {
        int seq = 0;                       // the slot
        std::span<const Token> tokens;     // the slot's sequence; the draft continues after the last one
        int32_t n_max = 16;
        float p_min = 0.75f;               // stop when the draft's top probability falls under it
        float temperature = 0.0f;          // <= 0: greedy; else drawn from q = softmax(logits / T)
        std::mt19937* rng = nullptr;       // for temperature > 0
    };
    struct Result {
        std::vector<Token> tokens;
        std::vector<std::vector<float>> q;  // temperature > 0: the distribution each token was drawn from
    };
    std::vector<Result> draft(std::span<const Request> requests);
    // The slot's sequence is no longer what the draft context holds (e.g. it was erased).
    void forget(int seq);
    // Context::warmup on the draft context, so that the first draft does not pay for weights paged in
    // from disk (one such call priced drafted positions at 25 ms where they cost 4, and drafting never
    // started for that server).
    void warmup();
    // How many tokens of `tokens` a draft for sequence `seq` would first have to evaluate (catch up).
    size_t behind(int seq, std::span<const Token> tokens) const;
    // The same for a draft from `context` followed by one more token (a slot's cache and its pending
    // token), without building that sequence: the tokens of `context` the draft context does not hold.
    size_t behind_context(int seq, std::span<const Token> context) const;
    double seconds_total() const { return seconds_; }  // time spent drafting
    // The last draft() call's time, in two parts: bringing the sequences up to date (the tokens accepted
    // since the last draft, or a whole prompt after a pause: a one-off prefill), and the drafted positions
    // (one decode of every drafting sequence each). A draft's cost per position is the second part only.
    struct Timing {
        double catch_up_seconds = 0.0;
        int32_t catch_up_tokens = 0;
        double draft_seconds = 0.0;
        int32_t positions = 0;
    };
    const Timing& last_timing() const { return timing_; }
    // A sleeping server: every sequence is forgotten and the draft model's weights and KV cache give their
    // host pages back (Model::release_memory); restore_memory brings the weights back. Returns bytes given back.
    size_t release_memory();
    void restore_memory() { model_.restore_memory(); }

  private:
    // How many leading tokens of `tokens` the sequence's cells hold.
    size_t held(int seq, std::span<const Token> tokens) const;
    // Of those, the ones a draft keeps (never the last one, which a draft evaluates with the others').
    size_t kept(int seq, std::span<const Token> tokens) const;
    // Brings each request's sequence up to date; false for a request whose catch-up failed.
    std::vector<bool> catch_up(std::span<const Request> requests);
    const Model& model_;
    int32_t n_vocab_target_;
    std::unique_ptr<Context> ctx_;
    std::vector<std::vector<Token>> cached_;  // per sequence: the tokens its cells hold, by position
    double seconds_ = 0.0;
    Timing timing_;
};

}  // namespace engine::spec
