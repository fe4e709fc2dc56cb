// ngram-cache: three levels of n-gram statistics, most specific first. The request's own tokens answer
// with the longest n-gram that has a clear favourite; earlier requests (dynamic) and a corpus (static)
// are asked when the request has nothing to say.
#include "engine/speculative/ngram_drafters.h"

namespace engine::spec {

namespace {

// Least count of the favourite, and its least share of the counts, per n-gram length (index n).
constexpr int32_t kMinCountContext[kNgramMax + 1] = {0, 4, 2, 1, 1};
constexpr int32_t kMinCountDynamic[kNgramMax + 1] = {0, 8, 4, 2, 2};
constexpr int32_t kMinCountStatic[kNgramMax + 1] = {0, 16, 8, 4, 4};

class NgramCacheDrafter final : public Drafter {
  public:
    explicit NgramCacheDrafter(std::shared_ptr<NgramCacheStore> store) : store_(std::move(store)) {}
    DrafterType type() const override { return DrafterType::NgramCache; }
    void begin() override {
        context_.clear();
        n_indexed_ = 0;
    }
    std::vector<Token> draft(std::span<const Token> h, int32_t n_max) override {
        context_.update(h, n_indexed_, 1, kNgramMax);
        n_indexed_ = h.size();
        std::vector<Token> seq(h.end() - (long)std::min<size_t>(h.size(), kNgramMax), h.end());
        std::vector<Token> out;
        while ((int32_t)out.size() < n_max) {
            Token t = -1;
            if (!pick(context_, kMinCountContext, seq, t) &&
                !(store_ && pick(store_->dynamic, kMinCountDynamic, seq, t)) &&
                !(store_ && pick(store_->static_cache, kMinCountStatic, seq, t)))
                break;
            out.push_back(t);
            seq.push_back(t);
        }
        return out;
    }
    void end(std::span<const Token> h) override {
        if (!store_) return;
        NgramCache mine;
        mine.update(h, 0, 1, kNgramMax);
        store_->add_request(mine);
    }

  private:
    static bool pick(const NgramCache& cache, const int32_t (&min_count)[kNgramMax + 1],
                     const std::vector<Token>& seq, Token& out) {
        if (cache.size() == 0) return false;
        for (int n = std::min<int>(kNgramMax, (int)seq.size()); n >= 1; --n) {
            Token t;
            int32_t count, total;
            if (!cache.best(Ngram::ending_at(seq, seq.size(), n), t, count, total)) continue;
            if (count >= min_count[n] && 2 * count > total) {
                out = t;
                return true;
            }
        }
        return false;
    }
    std::shared_ptr<NgramCacheStore> store_;
    NgramCache context_;
    size_t n_indexed_ = 0;
};

}  // namespace

std::unique_ptr<Drafter> make_ngram_cache(std::shared_ptr<NgramCacheStore> store) {
    return std::make_unique<NgramCacheDrafter>(std::move(store));
}

}  // namespace engine::spec
