#include "engine/grammar/regex_vm.h"

namespace engine::gbnf {

namespace {

constexpr size_t kMaxProgram = 200000;

class Compiler {
  public:
    explicit Compiler(RegexProgram& p) : p_(p) {}

    void emit(const RegexNode& n) {
        using K = RegexNode::Kind;
        using Op = RegexProgram::Op;
        if (p_.code.size() > kMaxProgram) throw RegexError(0, "pattern is too large");
        switch (n.kind) {
            case K::Empty:
                break;
            case K::Chars: {
                p_.sets.push_back(n.chars);
                push({Op::Char, uint32_t(p_.sets.size() - 1)});
                break;
            }
            case K::Concat:
                for (const auto& k : n.kids) emit(k);
                break;
            case K::Alt: {
                // split L1, next; L1: a; jmp end; next: split L2, ... ; last alternative plain
                std::vector<size_t> jumps;
                for (size_t i = 0; i + 1 < n.kids.size(); ++i) {
                    const size_t split = push({Op::Split});
                    p_.code[split].x = uint32_t(p_.code.size());
                    emit(n.kids[i]);
                    jumps.push_back(push({Op::Jmp}));
                    p_.code[split].y = uint32_t(p_.code.size());
                }
                emit(n.kids.back());
                for (size_t j : jumps) p_.code[j].x = uint32_t(p_.code.size());
                break;
            }
            case K::Group:
                if (n.capture > 0) push({Op::Save, uint32_t(2 * n.capture)});
                emit(n.kids[0]);
                if (n.capture > 0) push({Op::Save, uint32_t(2 * n.capture + 1)});
                break;
            case K::Begin:
                push({Op::Begin});
                break;
            case K::End:
                push({Op::End});
                break;
            case K::Repeat:
                emit_repeat(n);
                break;
        }
    }

  private:
    size_t push(RegexProgram::Inst i) {
        p_.code.push_back(i);
        return p_.code.size() - 1;
    }

    // A split that prefers entering the loop body when greedy, skipping it when lazy.
    void set_split(size_t split, uint32_t body, uint32_t skip, bool greedy) {
        p_.code[split].x = greedy ? body : skip;
        p_.code[split].y = greedy ? skip : body;
    }

    void emit_repeat(const RegexNode& n) {
        using Op = RegexProgram::Op;
        const RegexNode& body = n.kids[0];
        for (uint32_t i = 0; i < n.min; ++i) emit(body);
        if (n.max == kRegexUnbounded) {
            const size_t split = push({Op::Split});
            emit(body);
            push({Op::Jmp, uint32_t(split)});
            set_split(split, uint32_t(split + 1), uint32_t(p_.code.size()), n.greedy);
            return;
        }
        std::vector<size_t> splits;
        for (uint32_t i = n.min; i < n.max; ++i) {
            splits.push_back(push({Op::Split}));
            emit(body);
        }
        for (size_t s : splits) set_split(s, uint32_t(s + 1), uint32_t(p_.code.size()), n.greedy);
    }

    RegexProgram& p_;
};

}  // namespace

std::shared_ptr<const RegexProgram> RegexProgram::compile(const Regex& re) {
    auto p = std::make_shared<RegexProgram>();
    p->slots = 2 * (re.captures + 1);
    Compiler c(*p);
    p->code.push_back({Op::Save, 0});
    c.emit(re.root);
    p->code.push_back({Op::Save, 1});
    p->code.push_back({Op::Match});
    return p;
}

RegexSearch::RegexSearch(std::shared_ptr<const RegexProgram> prog) : prog_(std::move(prog)) {
    reset();
}

void RegexSearch::reset() {
    threads_.clear();
    best_.reset();
    pos_ = 0;
    pending_ = {};
    std::vector<uint32_t> seen(prog_->code.size(), 0);
    add_thread(threads_, seen, 0, std::vector<int64_t>(size_t(prog_->slots), -1), 0, false);
}

// Follows epsilon edges from pc in priority order, adding each reachable Char/Match/End
// instruction once. With at_end, End assertions hold (the current position ends the input).
void RegexSearch::add_thread(std::vector<Thread>& list, std::vector<uint32_t>& seen, uint32_t pc,
                             std::vector<int64_t> caps, int64_t pos, bool at_end) const {
    using Op = RegexProgram::Op;
    struct Item {
        uint32_t pc;
        std::vector<int64_t> caps;
    };
    std::vector<Item> todo{{pc, std::move(caps)}};
    while (!todo.empty()) {
        Item it = std::move(todo.back());
        todo.pop_back();
        if (seen[it.pc]) continue;
        seen[it.pc] = 1;
        const auto& in = prog_->code[it.pc];
        switch (in.op) {
            case Op::Jmp:
                todo.push_back({in.x, std::move(it.caps)});
                break;
            case Op::Split:
                todo.push_back({in.y, it.caps});  // lower priority, explored after x
                todo.push_back({in.x, std::move(it.caps)});
                break;
            case Op::Save:
                it.caps[in.x] = pos;
                todo.push_back({it.pc + 1, std::move(it.caps)});
                break;
            case Op::Begin:
                if (pos == 0) todo.push_back({it.pc + 1, std::move(it.caps)});
                break;
            case Op::End:
                if (at_end) {
                    todo.push_back({it.pc + 1, std::move(it.caps)});
                } else {
                    list.push_back({it.pc, std::move(it.caps)});  // may hold once the input ends here
                }
                break;
            case Op::Char:
            case Op::Match:
                list.push_back({it.pc, std::move(it.caps)});
                break;
        }
    }
}

void RegexSearch::step(uint32_t cp, int64_t pos, int64_t next_pos) {
    using Op = RegexProgram::Op;
    std::vector<Thread> next;
    std::vector<uint32_t> seen(prog_->code.size(), 0);
    for (Thread& t : threads_) {
        const auto& in = prog_->code[t.pc];
        if (in.op == Op::Match) {
            // Every thread after this one has lower priority: this match beats them all.
            best_ = Match{size_t(t.caps[0]), size_t(t.caps[1]), t.caps};
            break;
        }
        if (in.op == Op::Char && prog_->sets[in.x].contains(cp)) {
            add_thread(next, seen, t.pc + 1, std::move(t.caps), next_pos, false);
        }
    }
    (void)pos;
    // Leftmost-first: a new attempt starts at each position until some match has been found.
    if (!best_) add_thread(next, seen, 0, std::vector<int64_t>(size_t(prog_->slots), -1), next_pos, false);
    threads_ = std::move(next);
}

void RegexSearch::feed(std::string_view bytes) {
    for (char ch : bytes) {
        if (threads_.empty() && best_) {  // nothing can change the answer any more
            ++pos_;
            continue;
        }
        const auto b = uint8_t(ch);
        for (;;) {
            const bool had_partial = !pending_.empty();
            if (!had_partial) pending_start_ = pos_;
            uint32_t cp = 0;
            const Utf8Step r = utf8_feed(pending_, b, cp);
            if (r == Utf8Step::Complete) {
                step(cp, pending_start_, pos_ + 1);
            } else if (r == Utf8Step::Invalid) {
                // A broken sequence reads as one U+FFFD; the byte that broke it starts afresh.
                pending_ = {};
                if (had_partial) {
                    step(0xFFFD, pending_start_, pos_);
                    continue;
                }
                step(0xFFFD, pos_, pos_ + 1);
            }
            break;
        }
        ++pos_;
    }
}

std::optional<RegexSearch::Match> RegexSearch::match() const {
    using Op = RegexProgram::Op;
    // Threads still alive outrank best_; the first one that can match at the current end wins.
    const int64_t end = pending_.empty() ? pos_ : pending_start_;
    for (const Thread& t : threads_) {
        const auto op = prog_->code[t.pc].op;
        if (op == Op::Match) return Match{size_t(t.caps[0]), size_t(t.caps[1]), t.caps};
        if (op == Op::End) {
            std::vector<Thread> out;
            std::vector<uint32_t> seen(prog_->code.size(), 0);
            add_thread(out, seen, t.pc + 1, t.caps, end, true);
            for (const Thread& o : out) {
                if (prog_->code[o.pc].op == Op::Match)
                    return Match{size_t(o.caps[0]), size_t(o.caps[1]), o.caps};
            }
        }
    }
    return best_;
}

}  // namespace engine::gbnf
