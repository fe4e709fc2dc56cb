// What a grammar needs to know about a model's vocabulary: each token's piece (the raw bytes it
// decodes to), which tokens end generation, and a trie of the pieces. Immutable; build it once per
// model and share it between requests' grammars.
//
// Control tokens ([TOOL_CALLS], <|python_tag|>, <｜tool▁calls▁begin｜>, ...) decode to no text, so their
// piece is empty and character matches never allow them. They may still have a `control text`: the
// text that token elements (`<[id]>`, `<text>`), lazy triggers and find_piece know them by, so a
// grammar can require such a token where it names it, and a trigger can fire on it.
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
    // control_texts: empty, or one entry per token (the text of a control token whose piece is empty;
    // ignored for tokens with a piece).
    GrammarVocab(std::vector<std::string> pieces, const std::vector<Token>& eog,
                 std::vector<std::string> control_texts = {});
    GrammarVocab(const GrammarVocab&) = delete;  // by_piece_ points into pieces_
    GrammarVocab& operator=(const GrammarVocab&) = delete;

    size_t size() const { return pieces_.size(); }
    const std::string& piece(Token t) const { return pieces_[size_t(t)]; }
    // The piece, or for a control token its control text: what token elements and triggers see.
    const std::string& text(Token t) const {
        const std::string& p = pieces_[size_t(t)];
        return p.empty() && !control_texts_.empty() ? control_texts_[size_t(t)] : p;
    }
    bool is_eog(Token t) const { return eog_[size_t(t)]; }
    const std::vector<Token>& eog_tokens() const { return eog_list_; }
    const gbnf::TokenTrie& trie() const { return trie_; }
    // The token whose text (above) is exactly `text`, when exactly one token has it (GBNF `<piece>`).
    std::optional<Token> find_piece(std::string_view text) const;

  private:
    std::vector<std::string> pieces_;
    std::vector<std::string> control_texts_;  // empty, or one per token
    std::vector<bool> eog_;
    std::vector<Token> eog_list_;
    gbnf::TokenTrie trie_;
    std::unordered_map<std::string_view, Token> by_piece_;  // -1 marks an ambiguous piece
};

}  // namespace engine
