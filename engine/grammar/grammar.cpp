#include "engine/grammar/grammar.h"

#include <cmath>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/stack_automaton.h"

namespace engine {

// Shared by a grammar and its clones: the compiled rules, the automaton and the mask cache.
struct GrammarCore {
    std::mutex mu;
    std::shared_ptr<const GrammarVocab> vocab;
    gbnf::StackAutomaton automaton;
    std::unordered_map<uint64_t, std::vector<uint64_t>> masks;  // state key -> allowed-token bits
    size_t mask_bytes = 0;
    std::vector<gbnf::MatchState> walk;  // scratch: state per trie depth

    GrammarCore(std::shared_ptr<const GrammarVocab> v, std::shared_ptr<const gbnf::Rules> rules,
                uint32_t root)
        : vocab(std::move(v)), automaton(std::move(rules), root) {}

    const std::vector<uint64_t>& mask(gbnf::MatchState s);
    void token_tops(gbnf::MatchState s, std::vector<uint64_t>& bits);
};

namespace {

// Beyond this many bytes of cached masks the cache starts over (a long generation through many
// distinct states must not grow memory without bound).
constexpr size_t kMaskCacheBytes = size_t(64) << 20;

std::shared_ptr<const gbnf::Rules> compile(std::string_view gbnf, std::string_view root,
                                           const GrammarVocab& vocab, uint32_t& root_id) {
    auto lookup = [&vocab](std::string_view text) { return vocab.find_piece(text); };
    auto rules = std::make_shared<const gbnf::Rules>(gbnf::parse_gbnf(gbnf, lookup));
    root_id = gbnf::find_root(*rules, root);
    gbnf::check_expansion(*rules, root_id, gbnf);
    for (const gbnf::Elem& e : rules->elems) {
        if ((e.op == gbnf::Op::Token || e.op == gbnf::Op::TokenNot) && e.arg >= vocab.size()) {
            throw GrammarError(1, 1, "token id " + std::to_string(e.arg) + " is outside the vocabulary");
        }
    }
    return rules;
}

}  // namespace

// All tokens allowed from state s, one bit each. The trie walk keeps the state reached after each
// prefix, so tokens sharing a prefix share the work, and a dead prefix skips its whole subtree.
const std::vector<uint64_t>& GrammarCore::mask(gbnf::MatchState s) {
    auto it = masks.find(s.key());
    if (it != masks.end()) return it->second;
    if (mask_bytes > kMaskCacheBytes) {
        masks.clear();
        mask_bytes = 0;
    }
    std::vector<uint64_t> bits((vocab->size() + 63) / 64, 0);
    const auto& trie = vocab->trie();
    const auto& nodes = trie.nodes();
    const auto& toks = trie.tokens();
    walk.resize(trie.max_depth() + 1);
    walk[0] = s;
    const size_t n_nodes = trie.size();
    for (size_t i = 0; i < n_nodes;) {
        const auto& n = nodes[i];
        const gbnf::MatchState next = automaton.step(walk[n.depth - 1], n.byte);
        if (next.dead()) {
            i = n.end;
            continue;
        }
        walk[n.depth] = next;
        for (uint32_t k = n.tok_begin, e = nodes[i + 1].tok_begin; k < e; ++k) {
            bits[size_t(toks[k]) >> 6] |= uint64_t(1) << (toks[k] & 63);
        }
        ++i;
    }
    if (s.partial == 0 && automaton.has_token_tops(s.set)) token_tops(s, bits);
    if (automaton.complete(s)) {
        for (Token t : vocab->eog_tokens()) bits[size_t(t) >> 6] |= uint64_t(1) << (t & 63);
    }
    mask_bytes += bits.size() * sizeof(uint64_t);
    return masks.emplace(s.key(), std::move(bits)).first->second;
}

// Tokens matched by `<[id]>` / `!<[id]>` elements at the stack tops (EOG tokens and tokens without
// any text excluded; control tokens with a control text included).
void GrammarCore::token_tops(gbnf::MatchState s, std::vector<uint64_t>& bits) {
    for (size_t t = 0; t < vocab->size(); ++t) {
        if (vocab->is_eog(Token(t)) || vocab->text(Token(t)).empty()) continue;
        if (automaton.step_token(s.set, Token(t)) != 0) bits[t >> 6] |= uint64_t(1) << (t & 63);
    }
}

Grammar::Grammar(std::string_view gbnf, std::string_view root, std::vector<std::string> pieces,
                 const std::vector<Token>& eog)
    : Grammar(gbnf, root, std::make_shared<const GrammarVocab>(std::move(pieces), eog)) {}

Grammar::Grammar(std::string_view gbnf, std::string_view root, std::shared_ptr<const GrammarVocab> vocab,
                 std::optional<GrammarTriggers> triggers) {
    uint32_t root_id = 0;
    auto rules = compile(gbnf, root, *vocab, root_id);
    core_ = std::make_shared<GrammarCore>(std::move(vocab), std::move(rules), root_id);
    state_ = core_->automaton.start();
    if (triggers) trigger_.emplace(std::move(*triggers));
}

Grammar::~Grammar() = default;

bool Grammar::complete() const {
    if (!active()) return true;  // nothing constrains the text yet
    std::lock_guard lock(core_->mu);
    return core_->automaton.complete(state_);
}

size_t Grammar::cache_bytes() const {
    std::lock_guard lock(core_->mu);
    return core_->automaton.memory_bytes() + core_->mask_bytes;
}

void Grammar::apply(TokenDataArray& cur) {
    if (!active()) return;
    std::lock_guard lock(core_->mu);
    core_->automaton.set_budget(gbnf::kDefaultStepBudget);
    const size_t n_vocab = core_->vocab->size();
    auto masks_it = core_->masks.find(state_.key());
    // Few candidates and no cached mask: checking them one by one beats a walk over the vocabulary.
    if (masks_it == core_->masks.end() && cur.data.size() * 16 < n_vocab) {
        for (auto& c : cur.data) {
            if (!allowed_locked(c.id)) c.logit = -INFINITY;
        }
        return;
    }
    const std::vector<uint64_t>& bits =
        masks_it != core_->masks.end() ? masks_it->second : core_->mask(state_);
    for (auto& c : cur.data) {
        if (c.id < 0 || size_t(c.id) >= n_vocab || !((bits[size_t(c.id) >> 6] >> (c.id & 63)) & 1)) {
            c.logit = -INFINITY;
        }
    }
}

bool Grammar::allowed_locked(Token token) {
    const GrammarVocab& vocab = *core_->vocab;
    if (token < 0 || size_t(token) >= vocab.size()) return false;
    auto& a = core_->automaton;
    if (vocab.is_eog(token)) return a.complete(state_);
    const std::string& piece = vocab.piece(token);
    if (vocab.text(token).empty()) return false;
    auto it = core_->masks.find(state_.key());
    if (it != core_->masks.end()) return (it->second[size_t(token) >> 6] >> (token & 63)) & 1;
    if (!piece.empty() && !a.step_bytes(state_, piece).dead()) return true;
    return state_.partial == 0 && a.has_token_tops(state_.set) && a.step_token(state_.set, token) != 0;
}

bool Grammar::allows(Token token) {
    if (!active()) return true;
    std::lock_guard lock(core_->mu);
    core_->automaton.set_budget(gbnf::kDefaultStepBudget);
    return allowed_locked(token);
}

void Grammar::accept(Token token) {
    std::lock_guard lock(core_->mu);
    core_->automaton.set_budget(gbnf::kDefaultStepBudget);
    const GrammarVocab& vocab = *core_->vocab;
    if (token < 0 || size_t(token) >= vocab.size()) {
        throw std::invalid_argument("grammar: token " + std::to_string(token) + " is outside the vocabulary");
    }
    if (!active()) {
        if (vocab.is_eog(token)) return;  // the end of generation is not text a trigger can be in
        auto fired = trigger_->feed(token, vocab.text(token));
        if (!fired) return;
        if (fired->whole_token && allowed_locked(token)) {
            accept_token_locked(token);
        } else {
            accept_text_locked(fired->text);
        }
        return;
    }
    if (!allowed_locked(token)) {
        throw std::invalid_argument("grammar: token " + std::to_string(token) + " is not allowed here");
    }
    accept_token_locked(token);
}

void Grammar::accept_token_locked(Token token) {
    auto& a = core_->automaton;
    if (core_->vocab->is_eog(token)) return;  // the grammar is complete; nothing to advance
    // A control token has no characters: only a token element can take it.
    const std::string& piece = core_->vocab->piece(token);
    const gbnf::MatchState by_chars = piece.empty() ? gbnf::MatchState{} : a.step_bytes(state_, piece);
    const uint32_t by_token =
        state_.partial == 0 && a.has_token_tops(state_.set) ? a.step_token(state_.set, token) : 0;
    if (by_token == 0) {
        state_ = by_chars;
    } else if (by_chars.dead() || by_chars.partial != 0) {
        // A token element matched; a piece ending mid-character cannot share the state with it.
        state_ = {by_token, 0};
    } else {
        state_ = {a.merge(by_chars.set, by_token), 0};
    }
}

void Grammar::accept_text_locked(std::string_view text) {
    const gbnf::MatchState next = core_->automaton.step_bytes(state_, text);
    if (next.dead()) {
        throw std::runtime_error("grammar: the text from the trigger on does not match the grammar: " +
                                 std::string(text));
    }
    state_ = next;
}

void Grammar::reset() {
    std::lock_guard lock(core_->mu);
    state_ = core_->automaton.start();
    if (trigger_) trigger_->reset();
}

std::unique_ptr<TokenConstraint> Grammar::clone() const {
    std::lock_guard lock(core_->mu);
    return std::unique_ptr<TokenConstraint>(new Grammar(*this));
}

}  // namespace engine
