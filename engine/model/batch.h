// A batch of tokens for one decode call: several sequences may share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "engine/util/token_data.h"

namespace engine {

using Pos = int32_t;
using SeqId = int32_t;
constexpr int kMaxSeq = 256;

// What decode keeps of a token (Batch::logits): nothing, its logits, or its final hidden state (the state
// the output matrix reads: a decoder's embedding of that token, beside other tokens' logits in one call).
constexpr uint8_t kOutNone = 0, kOutLogits = 1, kOutHidden = 2;

struct Batch {
    std::vector<Token> tokens;
    std::vector<Pos> pos;
    std::vector<std::vector<SeqId>> seq_ids;  // every token belongs to >= 1 sequence
    std::vector<uint8_t> logits;              // kOutNone, kOutLogits or kOutHidden

    void add(Token t, Pos p, std::initializer_list<SeqId> seqs, bool want_logits) {
        tokens.push_back(t);
        pos.push_back(p);
        seq_ids.emplace_back(seqs);
        logits.push_back(want_logits ? 1 : 0);
    }
    void add(Token t, Pos p, const std::vector<SeqId>& seqs, bool want_logits) {
        tokens.push_back(t);
        pos.push_back(p);
        seq_ids.push_back(seqs);
        logits.push_back(want_logits ? 1 : 0);
    }
    // A token whose final hidden state the caller wants (Context::hidden).
    void add_hidden(Token t, Pos p, SeqId seq) {
        tokens.push_back(t);
        pos.push_back(p);
        seq_ids.push_back({seq});
        logits.push_back(kOutHidden);
    }
    void clear() {
        tokens.clear();
        pos.clear();
        seq_ids.clear();
        logits.clear();
    }
    size_t size() const { return tokens.size(); }
    bool empty() const { return tokens.empty(); }
};

}  // namespace engine
