// Grammar-constrained sampling: a GBNF grammar as an engine::TokenConstraint.
//
//   auto vocab = std::make_shared<GrammarVocab>(pieces, eog_ids);   // once per model
//   Grammar g(gbnf_text, "root", vocab);                            // once per request
//   g.apply(candidates);   // -inf on every token that cannot continue the grammar
//   g.accept(picked);
//
// apply() walks the vocabulary's piece trie from the current state (tokens sharing a prefix are
// advanced together) and caches the resulting token mask per state, so states seen before cost one
// bit test per candidate. Small candidate lists (rejection sampling, after top-k) are checked token
// by token instead. Clones share the compiled grammar and its caches (guarded by a mutex).
//
// Lazy grammars (GrammarTriggers) leave candidates untouched until a trigger appears in the
// generated text; the grammar then matches from the trigger on (see lazy_trigger.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar_vocab.h"
#include "engine/grammar/lazy_trigger.h"
#include "engine/grammar/stack_automaton.h"
#include "engine/util/constraint.h"

namespace engine {

struct GrammarCore;

class Grammar final : public TokenConstraint {
  public:
    // Parses gbnf (throws GrammarError) for a vocabulary given as raw pieces and EOG ids.
    Grammar(std::string_view gbnf, std::string_view root, std::vector<std::string> pieces,
            const std::vector<Token>& eog);
    // Same with a shared vocabulary; with triggers, the grammar is lazy.
    Grammar(std::string_view gbnf, std::string_view root, std::shared_ptr<const GrammarVocab> vocab,
            std::optional<GrammarTriggers> triggers = std::nullopt);
    ~Grammar() override;

    void apply(TokenDataArray& cur) override;
    bool allows(Token token) override;
    // apply, allows and accept each get gbnf::kDefaultStepBudget of matcher work; beyond it they throw
    // GrammarBudgetError (a std::runtime_error).
    // Throws std::invalid_argument if the grammar does not allow token, and std::runtime_error if
    // the text from a lazy grammar's trigger on does not match the grammar.
    void accept(Token token) override;
    void reset() override;
    std::unique_ptr<TokenConstraint> clone() const override;

    // Whether the text may end here (end-of-generation tokens are allowed): the grammar is complete,
    // or a lazy grammar has not been triggered.
    bool complete() const;
    // False while a lazy grammar waits for its trigger.
    bool active() const { return !trigger_ || trigger_->triggered(); }
    // Approximate memory held by the caches shared with clones (stacks, transitions, masks).
    size_t cache_bytes() const;

  private:
    Grammar(const Grammar&) = default;
    bool allowed_locked(Token token);
    void accept_token_locked(Token token);
    void accept_text_locked(std::string_view text);

    std::shared_ptr<GrammarCore> core_;
    gbnf::MatchState state_;
    std::optional<TriggerDetector> trigger_;
};

}  // namespace engine
