// A limit on the tokens a reply spends inside its reasoning block (<think> ... </think>, or the tags the
// chat template uses): once `budget` tokens of reasoning were accepted and the block is still open, only
// the `forced` tokens are allowed, one after the other: the budget message, if any, then the tokens that
// close the block (e.g. "Time is up.\n</think>\n\n"); afterwards nothing is limited. A budget that runs
// out inside a UTF-8 character lets the reply finish the character first. The block is the one the
// prompt opened (`opened`) or one the reply starts with (after whitespace); budget 0 closes it at once.
// The request's own constraint (a tool grammar; may be null) sees every token as before and may forbid
// more. An `end` signal, set from another thread (a client's "reasoning_end" control), closes the block
// as a spent budget would, from the next token on (after the UTF-8 character in progress); set before
// the block opens, it closes the block as soon as it opens.
#pragma once

#include <atomic>
#include <climits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar_vocab.h"
#include "engine/util/constraint.h"

namespace engine {

// The tags around a reasoning block.
struct ReasoningBudgetTags {
    std::string open = "<think>";
    std::string close = "</think>";
};

class ReasoningBudget final : public TokenConstraint {
  public:
    using Tags = ReasoningBudgetTags;
    using EndSignal = std::shared_ptr<const std::atomic<bool>>;
    static constexpr int kUnlimited = INT_MAX;  // a block only the end signal closes

    ReasoningBudget(int budget, bool opened, std::shared_ptr<const GrammarVocab> vocab,
                    std::vector<Token> forced, std::unique_ptr<TokenConstraint> inner, Tags tags = {},
                    EndSignal end = nullptr);

    void apply(TokenDataArray& cur) override;
    bool allows(Token token) override;
    void accept(Token token) override;
    void reset() override;
    std::unique_ptr<TokenConstraint> clone() const override;

    // Reasoning tokens accepted so far (the forced tokens not counted).
    int spent() const { return spent_; }

  private:
    enum class State { Before, Reasoning, Closing, Done };

    bool end_asked() const { return end_ && end_->load(std::memory_order_relaxed); }
    // The end signal came while reasoning: close from the next token on, once the character is whole.
    void poll_end();

    int budget_;
    bool opened_;
    std::shared_ptr<const GrammarVocab> vocab_;
    std::vector<Token> forced_;
    std::unique_ptr<TokenConstraint> inner_;
    Tags tags_;
    EndSignal end_;
    State state_;
    std::string text_;  // Before: the reply so far; Reasoning: the block's text so far
    int spent_ = 0;
    size_t forced_at_ = 0;  // forced_ tokens accepted
};

// Whether `text` ends with a whole UTF-8 character (or is empty): no lead byte is still waiting for
// its continuation bytes.
bool utf8_complete(std::string_view text);

}  // namespace engine
