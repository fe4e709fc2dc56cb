// A fixed-capacity window of the most recent tokens (oldest dropped first), for penalties and DRY.
#pragma once

#include <cassert>
#include <cstddef>
#include <vector>

#include "engine/util/token_data.h"

namespace engine {

class TokenHistory {
  public:
    explicit TokenHistory(size_t capacity = 0) : ring_(capacity) {}

    size_t capacity() const { return ring_.size(); }
    size_t size() const { return size_; }

    // Appends token; when full, the oldest token falls out and is returned through `dropped`.
    bool push(Token token, Token* dropped) {
        if (ring_.empty()) return false;
        bool full = size_ == ring_.size();
        if (full && dropped) *dropped = ring_[head_];
        ring_[(head_ + size_) % ring_.size()] = token;
        if (full) {
            head_ = (head_ + 1) % ring_.size();
        } else {
            ++size_;
        }
        return full;
    }

    // The i-th most recent token (0 = the last one pushed).
    Token recent(size_t i) const {
        assert(i < size_);
        return ring_[(head_ + size_ - 1 - i) % ring_.size()];
    }

    void clear() {
        head_ = 0;
        size_ = 0;
    }

  private:
    std::vector<Token> ring_;
    size_t head_ = 0;  // index of the oldest token
    size_t size_ = 0;
};

}  // namespace engine
