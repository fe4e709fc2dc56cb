#include "engine/grammar/reasoning_budget.h"

#include "engine/util/utf8_tail.h"

#include <cmath>
#include <stdexcept>
#include <string_view>

namespace engine {

namespace {

std::string_view ltrim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    return s;
}

}  // namespace

bool utf8_complete(std::string_view text) { return incomplete_utf8_tail(text) == 0; }

ReasoningBudget::ReasoningBudget(int budget, bool opened, std::shared_ptr<const GrammarVocab> vocab,
                                 std::vector<Token> forced, std::unique_ptr<TokenConstraint> inner, Tags tags,
                                 EndSignal end)
    : budget_(budget),
      opened_(opened),
      vocab_(std::move(vocab)),
      forced_(std::move(forced)),
      inner_(std::move(inner)),
      tags_(std::move(tags)),
      end_(std::move(end)),
      state_(opened ? State::Reasoning : State::Before) {
    if (budget_ < 0) throw std::invalid_argument("a reasoning budget must not be negative");
    if (forced_.empty())
        throw std::invalid_argument("a reasoning budget needs the tokens that close the block");
    if (tags_.open.empty() || tags_.close.empty())
        throw std::invalid_argument("a reasoning budget needs the block's opening and closing tags");
    if (state_ == State::Reasoning && budget_ == 0) state_ = State::Closing;
}

void ReasoningBudget::poll_end() {
    if (state_ == State::Reasoning && end_asked() && utf8_complete(text_)) state_ = State::Closing;
}

void ReasoningBudget::apply(TokenDataArray& cur) {
    poll_end();
    if (state_ == State::Closing) {
        const Token want = forced_[forced_at_];
        for (auto& c : cur.data)
            if (c.id != want) c.logit = -INFINITY;
    }
    if (inner_) inner_->apply(cur);
}

bool ReasoningBudget::allows(Token token) {
    poll_end();
    if (state_ == State::Closing && token != forced_[forced_at_]) return false;
    return !inner_ || inner_->allows(token);
}

void ReasoningBudget::accept(Token token) {
    if (inner_) inner_->accept(token);
    const std::string& piece = vocab_->text(token);  // <think> may be a control token
    const std::string_view open = tags_.open;
    switch (state_) {
        case State::Before: {
            text_ += piece;
            const std::string_view lead = ltrim(text_);
            if (lead.substr(0, open.size()) == open) {
                // The block opened: what follows the tag in this piece is reasoning already.
                text_ = std::string(lead.substr(open.size()));
                state_ = budget_ == 0 || end_asked() ? State::Closing : State::Reasoning;
            } else if (lead.size() >= open.size() || open.substr(0, lead.size()) != lead) {
                state_ = State::Done;  // the reply does not reason
                text_.clear();
            }
            break;
        }
        case State::Reasoning:
            text_ += piece;
            // Tokens after the budget that only finish a UTF-8 character are not counted.
            if (spent_ < budget_) ++spent_;
            if (text_.find(tags_.close) != std::string::npos) {
                state_ = State::Done;
                text_.clear();
            } else if ((spent_ >= budget_ || end_asked()) && utf8_complete(text_)) {
                state_ = State::Closing;
            }
            break;
        case State::Closing:
            if (++forced_at_ == forced_.size()) state_ = State::Done;
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
    forced_at_ = 0;
}

std::unique_ptr<TokenConstraint> ReasoningBudget::clone() const {
    auto c = std::make_unique<ReasoningBudget>(budget_, opened_, vocab_, forced_,
                                               inner_ ? inner_->clone() : nullptr, tags_, end_);
    c->state_ = state_;
    c->text_ = text_;
    c->spent_ = spent_;
    c->forced_at_ = forced_at_;
    return c;
}

}  // namespace engine
