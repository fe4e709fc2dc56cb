// The vocabulary's data, shared by the loader and the tokenizer algorithms (internal to engine_tokenizer).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/vocab.h"

namespace engine::detail {

struct TokenData {
    std::string text;
    float score = 0.0f;
    uint32_t attr = kAttrNormal;
};

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

struct VocabImpl {
    VocabType type = VocabType::SPM;
    std::string model;
    std::string pre = "default";

    std::vector<TokenData> tokens;
    StringMap<Token> token_to_id;
    StringMap<int> bpe_ranks;  // "left right" -> merge rank
    size_t max_token_len = 0;

    Token bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken, sep = kNoToken,
          pad = kNoToken, mask = kNoToken, nl = kNoToken;
    Token fim_pre = kNoToken, fim_suf = kNoToken, fim_mid = kNoToken, fim_pad = kNoToken, fim_rep = kNoToken,
          fim_sep = kNoToken;

    bool add_bos = false, add_eos = false, add_sep = false;
    bool add_space_prefix = false;
    bool remove_extra_whitespaces = false;
    bool clean_spaces = false;
    bool ignore_merges = false;
    bool lowercase = true, strip_accents = true;  // WordPiece normalization

    std::vector<Token> eog;             // sorted
    std::vector<Token> special_tokens;  // control, user-defined and unknown tokens, longest text first
    std::unique_ptr<PreTokenizer> pre_tokenizer;  // BPE only
    std::vector<std::string> pieces;              // token_to_piece(id, special = true), precomputed

    Token find(std::string_view text) const {
        auto it = token_to_id.find(text);
        return it == token_to_id.end() ? kNoToken : it->second;
    }
    // SentencePiece byte-fallback token <0xXX> (or the byte itself as a token); kNoToken if neither.
    Token byte_token(uint8_t byte) const;
    uint32_t attr(Token t) const { return tokens[size_t(t)].attr; }
};

// The tokenizer algorithms; each appends to out. Texts are fragments between special tokens.
void tokenize_spm(const VocabImpl& v, std::string_view text, std::vector<Token>& out);
void tokenize_bpe(const VocabImpl& v, std::string_view text, std::vector<Token>& out);
void tokenize_wpm(const VocabImpl& v, std::string_view text, std::vector<Token>& out);

// A piece of the input: either a special token found in the text, or a stretch of raw text.
struct Fragment {
    Token token = kNoToken;  // kNoToken for text
    size_t offset = 0, length = 0;
};
// Splits text around special tokens (longest first; user-defined ones always, control and unknown
// ones only with parse_special), applying their lstrip/rstrip attributes.
std::vector<Fragment> partition_special(const VocabImpl& v, std::string_view text, bool parse_special);

// token_to_piece without the cache (used to build it).
std::string render_piece(const VocabImpl& v, Token token);

}  // namespace engine::detail
