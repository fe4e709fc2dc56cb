// Byte-level BPE: pre-tokenize into words (regex chain, GPT-2 byte alphabet), then within each word
// merge adjacent symbols by merge rank, lowest rank first.
#include <queue>

#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab_impl.h"

namespace engine::detail {

namespace {

struct Symbol {
    size_t offset, n;  // n == 0 once merged into its left neighbour
    int prev, next;
};

struct Bigram {
    int left, right;
    int rank;
    size_t size;
};

// Lowest rank first; on ties the leftmost pair.
struct BigramOrder {
    bool operator()(const Bigram& a, const Bigram& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

void merge_word(const VocabImpl& v, const std::string& word, std::vector<Token>& out) {
    std::vector<Symbol> sym;
    for (size_t off = 0; off < word.size();) {
        const size_t n = std::min(unicode::utf8_len(word[off]), word.size() - off);
        const int i = int(sym.size());
        sym.push_back({off, n, i - 1, off + n == word.size() ? -1 : i + 1});
        off += n;
    }
    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
    std::string key;
    auto try_add = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = sym[size_t(left)];
        const Symbol& r = sym[size_t(right)];
        key.assign(word, l.offset, l.n);
        key += ' ';
        key.append(word, r.offset, r.n);
        auto it = v.bpe_ranks.find(key);
        if (it == v.bpe_ranks.end()) return;
        queue.push({left, right, it->second, l.n + r.n});
    };
    for (int i = 1; i < int(sym.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const Bigram b = queue.top();
        queue.pop();
        Symbol& l = sym[size_t(b.left)];
        Symbol& r = sym[size_t(b.right)];
        if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = b.left;
        try_add(l.prev, b.left);
        try_add(b.left, l.next);
    }

    for (const Symbol& s : sym) {
        if (s.n == 0) continue;
        const std::string_view text = std::string_view(word).substr(s.offset, s.n);
        const Token t = v.find(text);
        if (t != kNoToken) {
            out.push_back(t);
            continue;
        }
        // No token for the merged symbol: spell it byte by byte where single bytes are tokens.
        for (char c : text) {
            const Token bt = v.find(std::string_view(&c, 1));
            if (bt != kNoToken) out.push_back(bt);
        }
    }
}

}  // namespace

void tokenize_bpe(const VocabImpl& v, std::string_view text, std::vector<Token>& out) {
    for (const std::string& word : v.pre_tokenizer->split(text)) {
        if (v.ignore_merges) {
            const Token t = v.find(word);
            if (t != kNoToken) {
                out.push_back(t);
                continue;
            }
        }
        merge_word(v, word, out);
    }
}

}  // namespace engine::detail
