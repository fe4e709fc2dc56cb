// Splitting input text around special tokens before the tokenizer algorithm runs.
#include "engine/tokenizer/vocab_impl.h"

namespace engine::detail {

namespace {
bool is_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}
}  // namespace

std::vector<Fragment> partition_special(const VocabImpl& v, std::string_view text, bool parse_special) {
    std::vector<Fragment> frags;
    if (text.empty()) return frags;
    frags.push_back({kNoToken, 0, text.size()});
    std::vector<Fragment> next;
    // One special token at a time, longest first, over every text fragment left so far: a longer token
    // wins over a shorter one it contains.
    for (Token id : v.special_tokens) {
        const TokenData& td = v.tokens[size_t(id)];
        // Control and unknown tokens are only recognized on request; user-defined ones always are.
        if (!parse_special && (td.attr & (kAttrControl | kAttrUnknown))) continue;
        const std::string_view st = td.text;
        next.clear();
        for (const Fragment& f : frags) {
            if (f.token != kNoToken) {
                next.push_back(f);
                continue;
            }
            size_t off = f.offset, len = f.length;
            while (len > 0) {
                const size_t at = text.substr(0, off + len).find(st, off);
                if (at == std::string_view::npos) {
                    next.push_back({kNoToken, off, len});
                    break;
                }
                size_t left = at - off;
                if (td.attr & kAttrLstrip)
                    while (left > 0 && is_space(text[off + left - 1])) --left;
                if (left > 0) next.push_back({kNoToken, off, left});
                next.push_back({id, 0, 0});
                size_t right_off = at + st.size(), right_len = off + len - right_off;
                if (td.attr & kAttrRstrip)
                    while (right_len > 0 && is_space(text[right_off])) ++right_off, --right_len;
                off = right_off, len = right_len;
            }
        }
        frags.swap(next);
    }
    return frags;
}

}  // namespace engine::detail
