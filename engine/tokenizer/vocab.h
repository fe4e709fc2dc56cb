// A tokenizer vocabulary loaded from GGUF metadata: SentencePiece-style (tokenizer.ggml.model =
// "llama"), byte-level BPE ("gpt2", with the pre-tokenizer named by tokenizer.ggml.pre) and WordPiece
// ("bert"). Tokenization, token-to-piece and detokenization follow llama.cpp's llama-vocab so that
// the same GGUF gives the same ids.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/token_data.h"

namespace ggml::gguf {
class File;
}

namespace engine {

constexpr Token kNoToken = -1;

enum class VocabType { SPM, BPE, WPM };

// Token attributes, a bit set (llama.cpp's llama_token_attr values).
enum TokenAttr : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrNormalized = 1u << 6,
    kAttrLstrip = 1u << 7,  // parse_special: whitespace before the token is dropped
    kAttrRstrip = 1u << 8,  // ... and after it
    kAttrSingleWord = 1u << 9,
};

// Bad or missing tokenizer metadata.
struct VocabError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

namespace detail {
struct VocabImpl;
}

class Vocab {
  public:
    // Reads the tokenizer.ggml.* keys; throws VocabError (or ggml::gguf::FormatError for a key of the
    // wrong type) when the metadata is absent, inconsistent or out of range.
    static Vocab from_gguf(const ggml::gguf::File& file);
    static Vocab from_file(const std::string& path);  // opens the GGUF file first

    Vocab(Vocab&&) noexcept;
    Vocab& operator=(Vocab&&) noexcept;
    ~Vocab();

    // add_special: BOS/EOS (WordPiece: CLS/SEP) as the vocabulary's flags say. parse_special: control
    // tokens written in the text become their ids (user-defined tokens always do).
    std::vector<Token> tokenize(std::string_view text, bool add_special, bool parse_special = false) const;

    // The bytes a token stands for: SentencePiece spaces restored, byte tokens as their byte, the BPE
    // byte alphabet undone. Control and unknown tokens give their text only when special is set.
    // lstrip drops up to that many leading spaces.
    std::string token_to_piece(Token token, bool special = true, int lstrip = 0) const;
    // remove_special drops a leading BOS and trailing EOS the vocabulary adds; unparse_special renders
    // control tokens as text. Also undoes the SentencePiece prefix space and, for vocabularies that
    // ask for it, the tokenizer's space clean-up (" ," -> ",").
    std::string detokenize(std::span<const Token> tokens, bool remove_special = false,
                           bool unparse_special = false) const;

    VocabType type() const;
    const std::string& model() const;          // tokenizer.ggml.model
    const std::string& pre_tokenizer() const;  // tokenizer.ggml.pre ("default" if absent)
    int32_t n_tokens() const;

    Token bos() const;
    Token eos() const;
    Token eot() const;
    Token eom() const;
    Token unk() const;
    Token sep() const;
    Token pad() const;
    Token mask() const;
    Token nl() const;  // the newline token
    Token fim_pre() const;
    Token fim_suf() const;
    Token fim_mid() const;
    Token fim_pad() const;
    Token fim_rep() const;  // repository name marker (repo-level infill)
    Token fim_sep() const;  // file separator (repo-level infill)
    bool add_bos() const;
    bool add_eos() const;
    bool add_sep() const;
    bool add_space_prefix() const;
    bool remove_extra_whitespaces() const;
    bool clean_spaces() const;

    // End of generation: EOS, EOT, EOM, and tokens llama.cpp recognizes by text (<|eot_id|>,
    // <|im_end|>, <end_of_turn>, <|endoftext|>, ...).
    bool is_eog(Token token) const;
    const std::vector<Token>& eog_tokens() const;  // sorted

    bool valid(Token token) const { return token >= 0 && token < n_tokens(); }
    // These throw std::out_of_range for an invalid token.
    const std::string& token_text(Token token) const;
    float token_score(Token token) const;
    uint32_t token_attr(Token token) const;  // TokenAttr bits
    bool is_control(Token token) const { return token_attr(token) & kAttrControl; }
    bool is_byte(Token token) const { return token_attr(token) & kAttrByte; }
    bool is_user_defined(Token token) const { return token_attr(token) & kAttrUserDefined; }

    Token find_token(std::string_view text) const;  // exact text lookup; kNoToken if absent
    int bpe_rank(std::string_view left, std::string_view right) const;  // -1 if no such merge

  private:
    explicit Vocab(std::unique_ptr<detail::VocabImpl> impl);
    std::unique_ptr<detail::VocabImpl> impl_;
};

// Turns a token stream into text for streaming responses: feed() returns only complete UTF-8
// characters and holds back the bytes of one that a later token will finish; flush() returns what is
// left (an incomplete sequence as its raw bytes). With special, control tokens show as their text;
// without it, only those in `shown` do (the markers a chat format needs to see, such as
// [TOOL_CALLS]). The vocabulary must outlive the decoder.
class StreamDecoder {
  public:
    explicit StreamDecoder(const Vocab& vocab, bool special = false, std::vector<Token> shown = {});
    std::string feed(Token token);
    std::string flush();
    size_t pending() const { return held_.size(); }

  private:
    const Vocab* vocab_;
    bool special_;
    std::vector<Token> shown_;  // sorted
    std::string held_;
};

}  // namespace engine
