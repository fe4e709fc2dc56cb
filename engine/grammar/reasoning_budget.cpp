#include "engine/grammar/reasoning_budget.h"

#include <cmath>
#include <stdexcept>
#include <string_view>

namespace engine {

namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

std::string_view ltrim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    return s;
}

}  // namespace

ReasoningBudget::ReasoningBudget(int budget, bool opened, std::shared_ptr<const GrammarVocab> vocab,
                                 std::vector<Token> close, std::unique_ptr<TokenConstraint> inner)
    : budget_(budget),
      opened_(opened),
      vocab_(std::move(vocab)),
      close_(std::move(close)),
      inner_(std::move(inner)),
      state_(opened ? State::Reasoning : State::Before) {
    if (budget_ < 0) throw std::invalid_argument("a reasoning budget must not be negative");
    if (close_.empty())
        throw std::invalid_argument("a reasoning budget needs the tokens that close the block");
    if (state_ == State::Reasoning && budget_ == 0) state_ = State::Closing;
}

void ReasoningBudget::apply(TokenDataArray& cur) {
    if (state_ == State::Closing) {
        const Token want = close_[closing_];
        for (auto& c : cur.data)
            if (c.id != want) c.logit = -INFINITY;
    }
    if (inner_) inner_->apply(cur);
}

bool ReasoningBudget::allows(Token token) {
    if (state_ == State::Closing && token != close_[closing_]) return false;
    return !inner_ || inner_->allows(token);
}

void ReasoningBudget::accept(Token token) {
    if (inner_) inner_->accept(token);
    const std::string& piece = vocab_->text(token);  // <think> may be a control token
    switch (state_) {
        case State::Before: {
            text_ += piece;
            const std::string_view lead = ltrim(text_);
            if (lead.substr(0, kOpen.size()) == kOpen) {
                // The block opened: what follows the tag in this piece is reasoning already.
                text_ = std::string(lead.substr(kOpen.size()));
                state_ = budget_ == 0 ? State::Closing : State::Reasoning;
            } else if (lead.size() >= kOpen.size() || kOpen.substr(0, lead.size()) != lead) {
                state_ = State::Done;  // the reply does not reason
                text_.clear();
            }
            break;
        }
        case State::Reasoning:
            text_ += piece;
            ++spent_;
            if (text_.find(kClose) != std::string::npos) {
                state_ = State::Done;
                text_.clear();
            } else if (spent_ >= budget_) {
                state_ = State::Closing;
            }
            break;
        case State::Closing:
            if (++closing_ == close_.size()) state_ = State::Done;
            break;
        case State::Done:
            break;
    }
}

void ReasoningBudget::reset() {
    if (inner_) inner_->reset();
    state_ = opened_ ? (budget_ == 0 ? State::Closing : State::Reasoning) : State::Before;
    text_.clear();
    spent_ = 0;
    closing_ = 0;
}

std::unique_ptr<TokenConstraint> ReasoningBudget::clone() const {
    auto c = std::make_unique<ReasoningBudget>(budget_, opened_, vocab_, close_,
                                               inner_ ? inner_->clone() : nullptr);
    c->state_ = state_;
    c->text_ = text_;
    c->spent_ = spent_;
    c->closing_ = closing_;
    return c;
}

}  // namespace engine
