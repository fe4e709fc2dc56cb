// What a grammar needs to know about a model's vocabulary: each token's piece (the raw bytes it
// decodes to), which tokens end generation, and a trie of the pieces. Immutable; build it once per
// model and share it between requests' grammars.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/grammar/token_trie.h"
#include "engine/util/token_data.h"

namespace engine {

class GrammarVocab {
  public:
    GrammarVocab(std::vector<std::string> pieces, const std::vector<Token>& eog);
    GrammarVocab(const GrammarVocab&) = delete;  // by_piece_ points into pieces_
    GrammarVocab& operator=(const GrammarVocab&) = delete;

    size_t size() const { return pieces_.size(); }
    const std::string& piece(Token t) const { return pieces_[size_t(t)]; }
    bool is_eog(Token t) const { return eog_[size_t(t)]; }
    const std::vector<Token>& eog_tokens() const { return eog_list_; }
    const gbnf::TokenTrie& trie() const { return trie_; }
    // The token whose piece is exactly `text`, when exactly one token has it (GBNF `<piece>`).
    std::optional<Token> find_piece(std::string_view text) const;

  private:
    std::vector<std::string> pieces_;
    std::vector<bool> eog_;
    std::vector<Token> eog_list_;
    gbnf::TokenTrie trie_;
    std::unordered_map<std::string_view, Token> by_piece_;  // -1 marks an ambiguous piece
};

}  // namespace engine
