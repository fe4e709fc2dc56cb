#include "engine/grammar/grammar_matcher.h"

#include "engine/grammar/gbnf_parser.h"

namespace engine {

GrammarMatcher::GrammarMatcher(std::string_view gbnf, std::string_view root) {
    auto rules = std::make_shared<const gbnf::Rules>(gbnf::parse_gbnf(gbnf));
    const uint32_t root_id = gbnf::find_root(*rules, root);
    automaton_ = std::make_shared<gbnf::StackAutomaton>(std::move(rules), root_id);
    state_ = automaton_->start();
}

bool GrammarMatcher::accept(std::string_view bytes) {
    const gbnf::MatchState next = automaton_->step_bytes(state_, bytes);
    if (next.dead()) return false;
    state_ = next;
    return true;
}

bool GrammarMatcher::matches(std::string_view text) const {
    return automaton_->complete(automaton_->step_bytes(automaton_->start(), text));
}

bool GrammarMatcher::accepts_prefix(std::string_view text) const {
    return !automaton_->step_bytes(automaton_->start(), text).dead();
}

std::vector<const gbnf::CharSet*> GrammarMatcher::next_char_sets() const {
    std::vector<const gbnf::CharSet*> out;
    for (uint32_t id : automaton_->top_char_sets(state_.set)) out.push_back(&automaton_->rules().sets[id]);
    return out;
}

}  // namespace engine
