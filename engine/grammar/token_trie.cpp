#include "engine/grammar/token_trie.h"

#include <algorithm>

namespace engine::gbnf {

TokenTrie::TokenTrie(const std::vector<std::string>& pieces, const std::vector<bool>& include) {
    std::vector<int32_t> order;
    for (size_t i = 0; i < pieces.size(); ++i) {
        if (include[i] && !pieces[i].empty() && pieces[i].size() <= kMaxPiece) order.push_back(int32_t(i));
    }
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return pieces[a] < pieces[b]; });

    // Sorted pieces share prefixes with their predecessor: keep the path of open nodes, close the
    // ones below the common prefix, open one node per new byte.
    std::vector<uint32_t> path;
    const std::string* prev = nullptr;
    for (int32_t id : order) {
        const std::string& p = pieces[id];
        size_t common = 0;
        if (prev) {
            const size_t n = std::min(prev->size(), p.size());
            while (common < n && (*prev)[common] == p[common]) ++common;
        }
        while (path.size() > common) {
            nodes_[path.back()].end = uint32_t(nodes_.size());
            path.pop_back();
        }
        // Tokens are appended in preorder, so a node's tokens run up to the next node's tok_begin.
        for (size_t d = common; d < p.size(); ++d) {
            path.push_back(uint32_t(nodes_.size()));
            nodes_.push_back({0, uint32_t(tokens_.size()), uint16_t(d + 1), uint8_t(p[d])});
        }
        tokens_.push_back(id);
        max_depth_ = std::max(max_depth_, uint32_t(p.size()));
        prev = &p;
    }
    while (!path.empty()) {
        nodes_[path.back()].end = uint32_t(nodes_.size());
        path.pop_back();
    }
    nodes_.push_back({uint32_t(nodes_.size() + 1), uint32_t(tokens_.size()), 0, 0});  // sentinel
}

}  // namespace engine::gbnf
