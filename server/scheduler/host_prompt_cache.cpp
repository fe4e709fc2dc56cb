#include "server/scheduler/host_prompt_cache.h"

#include <algorithm>

#include "server/scheduler/prompt_cache.h"

namespace sched {

namespace {

bool starts_with(const std::vector<engine::Token>& whole, const std::vector<engine::Token>& part) {
    return part.size() <= whole.size() && std::equal(part.begin(), part.end(), whole.begin());
}

}  // namespace

bool HostPromptCache::worth_saving(const std::vector<engine::Token>& tokens, const std::vector<float>& lora,
                                   size_t state_bytes) const {
    if (!enabled() || tokens.size() < kHostCacheMinTokens) return false;
    if (limit_ > 0 && footprint(state_bytes, tokens.size(), lora.size()) > (size_t)limit_) return false;
    for (const Entry& e : entries_)
        if (e.lora == lora && starts_with(e.tokens, tokens)) return false;
    return true;
}

bool HostPromptCache::insert(std::vector<engine::Token> tokens, std::vector<float> lora, std::vector<uint8_t> state) {
    if (!enabled()) return false;
    Entry fresh{std::move(tokens), std::move(lora), std::move(state), ++clock_};
    if (limit_ > 0 && fresh.bytes() > (size_t)limit_) return false;
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->lora == fresh.lora && starts_with(fresh.tokens, it->tokens)) {
            stats_.bytes -= it->bytes();
            ++stats_.evictions;
            it = entries_.erase(it);
        } else {
            ++it;
        }
    }
    stats_.bytes += fresh.bytes();
    entries_.push_back(std::move(fresh));
    ++stats_.saves;
    evict_until_fits();
    stats_.entries = entries_.size();
    return true;
}

size_t HostPromptCache::clear() {
    const size_t n = stats_.bytes;
    entries_.clear();
    stats_.bytes = 0;
    stats_.entries = 0;
    return n;
}

void HostPromptCache::evict_until_fits() {
    while (limit_ > 0 && stats_.bytes > (size_t)limit_ && !entries_.empty()) {
        auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                       [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; });
        stats_.bytes -= oldest->bytes();
        ++stats_.evictions;
        entries_.erase(oldest);
    }
}

HostPromptCache::Match HostPromptCache::find(const std::vector<engine::Token>& prompt,
                                             const std::vector<float>& lora) const {
    Match best;
    if (prompt.empty()) return best;
    const size_t cap = prompt.size() - 1;
    for (const Entry& e : entries_) {
        if (e.lora != lora) continue;
        const size_t n = std::min(common_prefix(e.tokens, prompt), cap);
        if (n == 0) continue;
        if (n > best.n_prefix || (n == best.n_prefix && best.entry && e.last_used > best.entry->last_used))
            best = {&e, n};
    }
    return best;
}

void HostPromptCache::record_hit(const Match& m) {
    for (Entry& e : entries_)
        if (&e == m.entry) e.last_used = ++clock_;
    ++stats_.hits;
    stats_.tokens_restored += m.n_prefix;
}

}  // namespace sched
