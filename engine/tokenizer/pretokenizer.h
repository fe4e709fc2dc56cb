// Byte-level BPE pre-tokenizers: the regex chain each `tokenizer.ggml.pre` value selects, and the
// splitting of text into words before merges.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/regex.h"

namespace engine {

// One row per pre-tokenizer family: the `tokenizer.ggml.pre` names that select it, the regexes
// applied in turn (each one splits every piece the previous ones produced), and the vocabulary flags
// that come with it.
struct PreTokenizerSpec {
    std::vector<std::string_view> names;
    std::vector<std::string_view> regexes;
    bool clean_spaces = true;    // detokenize removes the space before , . ? ! and some contractions
    bool ignore_merges = false;  // a word that is itself a token skips the merges
    bool add_bos = false;        // the family adds BOS unless the metadata says otherwise
    bool add_sep = false;        // ditto for SEP (RoBERTa-style encoders)
    bool no_bos = false;         // the family has no BOS token by default
};

// The spec for a `tokenizer.ggml.pre` value ("default" for an absent key); nullptr if unknown.
const PreTokenizerSpec* find_pre_tokenizer(std::string_view name);

class PreTokenizer {
  public:
    explicit PreTokenizer(const PreTokenizerSpec& spec);

    // Splits text into words, each re-encoded in GPT-2's byte alphabet. Invalid UTF-8 bytes become
    // U+FFFD first, as in llama.cpp.
    std::vector<std::string> split(std::string_view text) const;

  private:
    std::vector<Regex> regexes_;
};

}  // namespace engine
