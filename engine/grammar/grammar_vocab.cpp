#include "engine/grammar/grammar_vocab.h"

#include <stdexcept>

namespace engine {

GrammarVocab::GrammarVocab(std::vector<std::string> pieces, const std::vector<Token>& eog,
                           std::vector<std::string> control_texts)
    : pieces_(std::move(pieces)), control_texts_(std::move(control_texts)), eog_(pieces_.size(), false) {
    if (!control_texts_.empty() && control_texts_.size() != pieces_.size())
        throw std::invalid_argument("control texts: one per token, or none");
    for (Token t : eog) {
        if (t < 0 || size_t(t) >= pieces_.size()) {
            throw std::invalid_argument("end-of-generation token " + std::to_string(t) +
                                        " is outside the vocabulary");
        }
        if (!eog_[size_t(t)]) eog_list_.push_back(t);
        eog_[size_t(t)] = true;
    }
    std::vector<bool> in_trie(pieces_.size());
    for (size_t i = 0; i < pieces_.size(); ++i) in_trie[i] = !eog_[i];
    trie_ = gbnf::TokenTrie(pieces_, in_trie);
    for (size_t i = 0; i < pieces_.size(); ++i) {
        const std::string& t = text(Token(i));
        if (t.empty()) continue;
        auto [it, inserted] = by_piece_.emplace(t, Token(i));
        if (!inserted) it->second = -1;
    }
}

std::optional<Token> GrammarVocab::find_piece(std::string_view text) const {
    auto it = by_piece_.find(text);
    if (it == by_piece_.end() || it->second < 0) return std::nullopt;
    return it->second;
}

}  // namespace engine
