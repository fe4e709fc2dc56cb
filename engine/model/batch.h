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

struct Batch {
    std::vector<Token> tokens;
    std::vector<Pos> pos;
    std::vector<std::vector<SeqId>> seq_ids;  // every token belongs to >= 1 sequence
    std::vector<uint8_t> logits;              // 1: the caller wants this token's logits

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
