// Matching text (not tokens) against a GBNF grammar: for validating strings, testing grammars and
// walking them. Bytes may arrive in any split, including mid-character. Not thread-safe (the const
// queries fill shared caches too).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/grammar/char_set.h"
#include "engine/grammar/stack_automaton.h"

namespace engine {

class GrammarMatcher {
  public:
    // Throws GrammarError. Token references (<[id]>) parse but never match text.
    explicit GrammarMatcher(std::string_view gbnf, std::string_view root = "root");

    // Advances by bytes; returns false (and leaves the state unchanged) if the grammar rejects them.
    bool accept(std::string_view bytes);
    // Whether the text accepted so far is a complete match of the root rule.
    bool complete() const { return automaton_->complete(state_); }
    // Whether `text`, from the initial state, is a complete match (does not change this matcher).
    bool matches(std::string_view text) const;
    // Whether `text` is a prefix of some match.
    bool accepts_prefix(std::string_view text) const;
    void reset() { state_ = automaton_->start(); }

    // The character sets that may come next (one per distinct stack top); empty when only the end
    // of the text (or nothing at all) may follow. Not meaningful while a UTF-8 sequence is pending.
    std::vector<const gbnf::CharSet*> next_char_sets() const;

  private:
    std::shared_ptr<gbnf::StackAutomaton> automaton_;
    gbnf::MatchState state_;
};

}  // namespace engine
