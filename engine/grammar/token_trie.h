// A byte trie over token pieces, stored in preorder so one forward scan visits every token and a
// dead prefix skips its whole subtree: tokens sharing a prefix are advanced together.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::gbnf {

class TokenTrie {
  public:
    struct Node {
        uint32_t end;        // index one past this node's subtree
        uint32_t tok_begin;  // tokens whose piece ends here: tokens()[tok_begin, next node's tok_begin)
        uint16_t depth;      // 1 for the first byte of a piece
        uint8_t byte;
    };

    static constexpr size_t kMaxPiece = 65535;

    TokenTrie() = default;
    // Tokens with include[id] == false, an empty piece or one longer than kMaxPiece bytes are left
    // out. nodes() ends with a sentinel (no byte) so node i's tokens end at nodes()[i + 1].tok_begin.
    TokenTrie(const std::vector<std::string>& pieces, const std::vector<bool>& include);

    const std::vector<Node>& nodes() const { return nodes_; }
    size_t size() const { return nodes_.size() - 1; }  // real nodes, without the sentinel
    const std::vector<int32_t>& tokens() const { return tokens_; }
    uint32_t max_depth() const { return max_depth_; }

  private:
    std::vector<Node> nodes_;
    std::vector<int32_t> tokens_;
    uint32_t max_depth_ = 0;
};

}  // namespace engine::gbnf
