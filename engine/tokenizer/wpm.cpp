// WordPiece (BERT): normalize (lowercase, strip accents), split on whitespace and around punctuation
// and CJK characters, then cover each word greedily with the longest vocabulary pieces. Word-initial
// pieces carry a U+2581 prefix in GGUF vocabularies (HF's "##" continuation pieces carry nothing).
#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab_impl.h"

namespace engine::detail {

namespace {

bool is_chinese(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) ||
           (cp >= 0x2B920 && cp <= 0x2CEAF) ||  // HF's tokenizers start this block at 0x2B920
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::vector<std::string> split_words(const VocabImpl& v, std::string_view text) {
    std::vector<uint32_t> cps = unicode::decode_utf8(text);
    if (v.strip_accents)
        for (auto& cp : cps) cp = unicode::nfd_first(cp);
    std::vector<std::string> words(1);
    for (uint32_t cp : cps) {
        if (unicode::is_whitespace(cp)) {
            if (!words.back().empty()) words.emplace_back();
            continue;
        }
        if (cp == 0 || cp == unicode::kReplacement || unicode::in(unicode::kControl, cp)) continue;
        if (v.strip_accents && unicode::in(unicode::kMark, cp)) continue;
        const uint32_t c = v.lowercase ? unicode::to_lower(cp) : cp;
        const bool alone = unicode::in(unicode::kPunctuation, cp) ||
                           (cp < 0x7F && unicode::in(unicode::kSymbol, cp)) || is_chinese(cp);
        if (alone) {
            if (!words.back().empty()) words.emplace_back();
            unicode::append_utf8(words.back(), c);
            words.emplace_back();
        } else {
            unicode::append_utf8(words.back(), c);
        }
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

}  // namespace

void tokenize_wpm(const VocabImpl& v, std::string_view text, std::vector<Token>& out) {
    for (const std::string& word : split_words(v, text)) {
        const std::string w = "\xE2\x96\x81" + word;
        const size_t n = w.size();
        const size_t start = out.size();
        for (size_t i = 0; i < n; ++i) {
            bool matched = false;
            for (size_t j = std::min(n, i + v.max_token_len + 1); j > i; --j) {
                const Token t = v.find(std::string_view(w).substr(i, j - i));
                if (t != kNoToken) {
                    out.push_back(t);
                    matched = true;
                    i = j - 1;
                    break;
                }
            }
            if (!matched) {  // the word cannot be covered: it becomes one UNK
                out.resize(start);
                break;
            }
        }
        if (out.size() == start && v.unk != kNoToken) out.push_back(v.unk);
    }
}

}  // namespace engine::detail
