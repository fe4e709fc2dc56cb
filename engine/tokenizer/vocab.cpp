// Vocab accessors and tokenize(): special-token partition, then the vocabulary's algorithm per text
// fragment, with BOS/EOS (CLS/SEP) around it.
#include <algorithm>

#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab_impl.h"

namespace engine {

using detail::VocabImpl;

namespace detail {

Token VocabImpl::byte_token(uint8_t byte) const {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const char buf[6] = {'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>'};
    const Token t = find(std::string_view(buf, 6));
    if (t != kNoToken) return t;
    const char raw = char(byte);
    return find(std::string_view(&raw, 1));
}

}  // namespace detail

namespace {

// SentencePiece marks spaces with U+2581 inside tokens.
std::string escape_spaces(std::string_view s) {
    std::string out;
    out.reserve(s.size() + s.size() / 4);
    for (char c : s) {
        if (c == ' ') {
            out += "\xE2\x96\x81";
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

Vocab::Vocab(std::unique_ptr<VocabImpl> impl) : impl_(std::move(impl)) {}
Vocab::Vocab(Vocab&&) noexcept = default;
Vocab& Vocab::operator=(Vocab&&) noexcept = default;
Vocab::~Vocab() = default;

std::vector<Token> Vocab::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    const VocabImpl& v = *impl_;
    std::vector<Token> out;
    const auto frags = detail::partition_special(v, text, parse_special);
    switch (v.type) {
        case VocabType::SPM: {
            if (add_special && v.add_bos) out.push_back(v.bos);
            bool prev_special = true;  // the text after BOS or a special token gets the prefix space
            for (const auto& f : frags) {
                if (f.token != kNoToken) {
                    out.push_back(f.token);
                    prev_special = true;
                    continue;
                }
                std::string s = v.add_space_prefix && prev_special ? " " : "";
                s += text.substr(f.offset, f.length);
                detail::tokenize_spm(v, escape_spaces(s), out);
                prev_special = false;
            }
            if (add_special && v.add_eos) out.push_back(v.eos);
            break;
        }
        case VocabType::BPE:
            if (add_special && v.add_bos) out.push_back(v.bos);
            for (const auto& f : frags) {
                if (f.token != kNoToken) {
                    out.push_back(f.token);
                } else {
                    detail::tokenize_bpe(v, text.substr(f.offset, f.length), out);
                }
            }
            if (add_special && v.add_eos) out.push_back(v.eos);
            break;
        case VocabType::WPM:
            if (add_special && v.bos != kNoToken) out.push_back(v.bos);
            for (const auto& f : frags) {
                if (f.token != kNoToken) {
                    out.push_back(f.token);
                } else {
                    detail::tokenize_wpm(v, text.substr(f.offset, f.length), out);
                }
            }
            if (add_special && v.sep != kNoToken) out.push_back(v.sep);
            break;
    }
    return out;
}

VocabType Vocab::type() const {
    return impl_->type;
}
const std::string& Vocab::model() const {
    return impl_->model;
}
const std::string& Vocab::pre_tokenizer() const {
    return impl_->pre;
}
int32_t Vocab::n_tokens() const {
    return int32_t(impl_->tokens.size());
}
Token Vocab::bos() const {
    return impl_->bos;
}
Token Vocab::eos() const {
    return impl_->eos;
}
Token Vocab::eot() const {
    return impl_->eot;
}
Token Vocab::eom() const {
    return impl_->eom;
}
Token Vocab::unk() const {
    return impl_->unk;
}
Token Vocab::sep() const {
    return impl_->sep;
}
Token Vocab::pad() const {
    return impl_->pad;
}
Token Vocab::mask() const {
    return impl_->mask;
}
Token Vocab::nl() const {
    return impl_->nl;
}
Token Vocab::fim_pre() const {
    return impl_->fim_pre;
}
Token Vocab::fim_suf() const {
    return impl_->fim_suf;
}
Token Vocab::fim_mid() const {
    return impl_->fim_mid;
}
Token Vocab::fim_pad() const {
    return impl_->fim_pad;
}
Token Vocab::fim_rep() const {
    return impl_->fim_rep;
}
Token Vocab::fim_sep() const {
    return impl_->fim_sep;
}
bool Vocab::add_bos() const {
    return impl_->add_bos;
}
bool Vocab::add_eos() const {
    return impl_->add_eos;
}
bool Vocab::add_sep() const {
    return impl_->add_sep;
}
bool Vocab::add_space_prefix() const {
    return impl_->add_space_prefix;
}
bool Vocab::remove_extra_whitespaces() const {
    return impl_->remove_extra_whitespaces;
}
bool Vocab::clean_spaces() const {
    return impl_->clean_spaces;
}

bool Vocab::is_eog(Token token) const {
    return token != kNoToken && std::binary_search(impl_->eog.begin(), impl_->eog.end(), token);
}
const std::vector<Token>& Vocab::eog_tokens() const {
    return impl_->eog;
}

const std::string& Vocab::token_text(Token token) const {
    return impl_->tokens.at(size_t(token)).text;
}
float Vocab::token_score(Token token) const {
    return impl_->tokens.at(size_t(token)).score;
}
uint32_t Vocab::token_attr(Token token) const {
    return impl_->tokens.at(size_t(token)).attr;
}

Token Vocab::find_token(std::string_view text) const {
    return impl_->find(text);
}

int Vocab::bpe_rank(std::string_view left, std::string_view right) const {
    std::string key(left);
    key += ' ';
    key += right;
    auto it = impl_->bpe_ranks.find(key);
    return it == impl_->bpe_ranks.end() ? -1 : it->second;
}

StreamDecoder::StreamDecoder(const Vocab& vocab, bool special, std::vector<Token> shown)
    : vocab_(&vocab), special_(special), shown_(std::move(shown)) {
    std::sort(shown_.begin(), shown_.end());
}

std::string StreamDecoder::feed(Token token) {
    held_ += vocab_->token_to_piece(token, special_ || std::binary_search(shown_.begin(), shown_.end(), token));
    const size_t keep = unicode::incomplete_utf8_tail(held_);
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    out.swap(held_);
    return out;
}

}  // namespace engine
