#include "engine/grammar/lazy_trigger.h"

#include <algorithm>

namespace engine {

TriggerDetector::TriggerDetector(GrammarTriggers triggers) : triggers_(std::move(triggers)) {
    for (const std::string& p : triggers_.patterns) {
        searches_.emplace_back(gbnf::RegexProgram::compile(gbnf::parse_regex(p)));
    }
}

void TriggerDetector::reset() {
    text_.clear();
    triggered_ = false;
    for (auto& s : searches_) s.reset();
}

std::optional<TriggerDetector::Fired> TriggerDetector::feed(Token token, std::string_view piece) {
    if (triggered_) return std::nullopt;
    const size_t old_size = text_.size();
    text_.append(piece);
    size_t start = std::string::npos;
    // A trigger token starts the grammar at its own piece.
    const bool is_trigger_token =
        std::find(triggers_.tokens.begin(), triggers_.tokens.end(), token) != triggers_.tokens.end();
    if (is_trigger_token) start = old_size;
    for (const std::string& w : triggers_.words) {
        if (w.empty()) continue;
        // Only occurrences that end in the new piece are new; older ones would have fired before.
        const size_t from = old_size >= w.size() ? old_size - w.size() + 1 : 0;
        const size_t at = text_.find(w, from);
        if (at != std::string::npos) start = std::min(start, at);
    }
    for (auto& s : searches_) {
        s.feed(piece);
        if (auto m = s.match()) {
            size_t at = m->begin;
            for (size_t g = 2; g + 1 < m->groups.size(); g += 2) {
                if (m->groups[g] >= 0 && m->groups[g + 1] > m->groups[g]) {
                    at = size_t(m->groups[g]);
                    break;
                }
            }
            start = std::min(start, at);
        }
    }
    if (start == std::string::npos) return std::nullopt;
    triggered_ = true;
    Fired fired{text_.substr(start), is_trigger_token && start == old_size};
    text_.clear();
    return fired;
}

}  // namespace engine
