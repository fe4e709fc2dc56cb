// A limit on the tokens a reply spends inside its reasoning block (<think> ... </think>): once `budget`
// tokens of reasoning were accepted and the block is still open, only the tokens that close it are
// allowed, one after the other (`close`, e.g. the tokens of "\n</think>\n\n"); afterwards nothing is
// limited. The block is the one the prompt opened (`opened`) or one the reply starts with (after
// whitespace). The request's own constraint (a tool grammar; may be null) sees every token as before and
// may forbid more.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/grammar/grammar_vocab.h"
#include "engine/util/constraint.h"

namespace engine {

class ReasoningBudget final : public TokenConstraint {
  public:
    ReasoningBudget(int budget, bool opened, std::shared_ptr<const GrammarVocab> vocab,
                    std::vector<Token> close, std::unique_ptr<TokenConstraint> inner);

    void apply(TokenDataArray& cur) override;
    bool allows(Token token) override;
    void accept(Token token) override;
    void reset() override;
    std::unique_ptr<TokenConstraint> clone() const override;

    // Reasoning tokens accepted so far (the closing tokens not counted).
    int spent() const { return spent_; }

  private:
    enum class State { Before, Reasoning, Closing, Done };

    int budget_;
    bool opened_;
    std::shared_ptr<const GrammarVocab> vocab_;
    std::vector<Token> close_;
    std::unique_ptr<TokenConstraint> inner_;
    State state_;
    std::string text_;  // Before: the reply so far; Reasoning: the block's text so far
    int spent_ = 0;
    size_t closing_ = 0;  // close_ tokens accepted
};

}  // namespace engine
