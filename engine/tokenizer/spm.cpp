// SentencePiece-style tokenization (llama.cpp's "SPM"): start from UTF-8 characters and repeatedly
// merge the adjacent pair whose concatenation is the highest-scoring token; characters no token
// covers fall back to byte tokens <0xXX>.
#include <queue>

#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab_impl.h"

namespace engine::detail {

namespace {

struct Symbol {
    int prev, next;
    size_t offset, n;  // bytes of the text; n == 0 once merged into its left neighbour
};

struct Bigram {
    int left, right;
    float score;
    size_t size;
};

// Highest score first; on ties the leftmost pair.
struct BigramOrder {
    bool operator()(const Bigram& a, const Bigram& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

}  // namespace

void tokenize_spm(const VocabImpl& v, std::string_view text, std::vector<Token>& out) {
    std::vector<Symbol> sym;
    for (size_t off = 0; off < text.size();) {
        const size_t n = std::min(unicode::utf8_len(text[off]), text.size() - off);
        const int i = int(sym.size());
        sym.push_back({i - 1, off + n == text.size() ? -1 : i + 1, off, n});
        off += n;
    }
    if (sym.empty()) return;

    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
    auto try_add = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const std::string_view s =
            text.substr(sym[size_t(left)].offset, sym[size_t(left)].n + sym[size_t(right)].n);
        const Token t = v.find(s);
        if (t == kNoToken) return;
        queue.push({left, right, v.tokens[size_t(t)].score, s.size()});
    };
    for (int i = 1; i < int(sym.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const Bigram b = queue.top();
        queue.pop();
        Symbol& l = sym[size_t(b.left)];
        Symbol& r = sym[size_t(b.right)];
        // Stale: one side was merged away or grew since the pair was queued.
        if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = b.left;
        try_add(l.prev, b.left);
        try_add(b.left, l.next);
    }

    for (int i = 0; i != -1; i = sym[size_t(i)].next) {
        const std::string_view s = text.substr(sym[size_t(i)].offset, sym[size_t(i)].n);
        const Token t = v.find(s);
        if (t != kNoToken) {
            out.push_back(t);
            continue;
        }
        for (char c : s) {
            const Token bt = v.byte_token(uint8_t(c));
            // A vocabulary without byte tokens cannot spell this byte; llama.cpp aborts, we emit UNK.
            if (bt != kNoToken) {
                out.push_back(bt);
            } else if (v.unk != kNoToken) {
                out.push_back(v.unk);
            }
        }
    }
}

}  // namespace engine::detail
