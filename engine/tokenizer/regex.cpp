// Regex execution: the backtracking machine and the regex-iterator style split.
#include "engine/tokenizer/regex.h"

#include <algorithm>

#include "engine/tokenizer/unicode.h"

namespace engine {

namespace {

bool is_ascii_word(uint32_t cp) {
    return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') || cp == '_';
}

}  // namespace

bool Regex::pred(int index, uint32_t cp) const {
    for (int ci : preds_[size_t(index)]) {
        const CharClass& cls = classes_[size_t(ci)];
        bool hit = false;
        for (const ClassItem& it : cls.items) {
            bool m = false;
            switch (it.kind) {
                case ClassItem::Range:
                    m = cp >= it.lo && cp <= it.hi;
                    break;
                case ClassItem::Categories:
                    m = (it.categories >> int(unicode::category(cp))) & 1;
                    break;
                case ClassItem::Space:
                    m = unicode::is_whitespace(cp);
                    break;
                case ClassItem::Digit:
                    m = cp >= '0' && cp <= '9';
                    break;
                case ClassItem::Word:
                    m = is_ascii_word(cp);
                    break;
            }
            if (m != it.negated) {
                hit = true;
                break;
            }
        }
        if (hit == cls.negated) return false;
    }
    return true;
}

long Regex::run(int program, const uint32_t* cps, size_t begin, size_t end, size_t pos, bool nonempty) const {
    // Backtrack points live on an explicit stack, so long inputs cannot exhaust the call stack; a
    // character run keeps one point that shrinks (or, lazy, grows) its length on each retry.
    struct Point {
        int pc;
        bool run;
        size_t pos;    // run: where the run starts
        size_t count;  // run: the length to try next
        size_t limit;  // run, lazy: the longest possible length
    };
    const std::vector<Inst>& prog = programs_[size_t(program)];
    std::vector<Point> stack;
    const size_t start = pos;
    int pc = 0;
    auto word_at = [&](size_t k) { return k >= begin && k < end && is_ascii_word(cps[k]); };
    while (true) {
        bool ok = true;
        const Inst& in = prog[size_t(pc)];
        switch (in.op) {
            case Op::Char:
                ok = pos < end && pred(in.a, cps[pos]);
                if (ok) ++pos, ++pc;
                break;
            case Op::Run: {
                const size_t cap = in.max < 0 ? end - pos : std::min(end - pos, size_t(in.max));
                size_t k = 0;
                if (in.flag || in.min > 0) {
                    const size_t want = in.flag ? cap : size_t(in.min);
                    while (k < want && pred(in.a, cps[pos + k])) ++k;
                }
                if (k < size_t(in.min)) {
                    ok = false;
                    break;
                }
                if (in.flag) {
                    if (k > size_t(in.min)) stack.push_back({pc, true, pos, k - 1, 0});
                    pos += k;
                } else {
                    if (k < cap) stack.push_back({pc, true, pos, k + 1, cap});
                    pos += k;
                }
                ++pc;
                break;
            }
            case Op::Split:
                stack.push_back({in.b, false, pos, 0, 0});
                pc = in.a;
                break;
            case Op::Jmp:
                pc = in.a;
                break;
            case Op::Begin:
                ok = pos == begin;
                ++pc;
                break;
            case Op::End:
                ok = pos == end;
                ++pc;
                break;
            case Op::WordB:
            case Op::NotWordB:
                ok = (word_at(pos - 1) != word_at(pos)) == (in.op == Op::WordB);
                ++pc;
                break;
            case Op::Look:
                ok = (run(in.a, cps, begin, end, pos, false) >= 0) != in.flag;
                ++pc;
                break;
            case Op::Match:
                if (!nonempty || pos > start) return long(pos);
                ok = false;
                break;
        }
        if (ok) continue;
        // Backtrack.
        while (true) {
            if (stack.empty()) return -1;
            Point& bp = stack.back();
            if (!bp.run) {
                pc = bp.pc;
                pos = bp.pos;
                stack.pop_back();
                break;
            }
            const Inst& rin = prog[size_t(bp.pc)];
            if (rin.flag) {  // greedy: give back one more
                pos = bp.pos + bp.count;
                pc = bp.pc + 1;
                if (bp.count > size_t(rin.min)) {
                    --bp.count;
                } else {
                    stack.pop_back();
                }
                break;
            }
            // lazy: take one more, if it matches
            if (!pred(rin.a, cps[bp.pos + bp.count - 1])) {
                stack.pop_back();
                continue;
            }
            pos = bp.pos + bp.count;
            pc = bp.pc + 1;
            if (bp.count < bp.limit) {
                ++bp.count;
            } else {
                stack.pop_back();
            }
            break;
        }
    }
}

long Regex::match_at(const uint32_t* cps, size_t begin, size_t end, size_t pos, bool nonempty) const {
    return run(0, cps, begin, end, pos, nonempty);
}

void Regex::split(const uint32_t* cps, size_t begin, size_t end, std::vector<size_t>& lengths) const {
    size_t pos = begin, gap = begin;
    bool after_empty = false;
    while (pos <= end) {
        long found = -1;
        size_t s = pos;
        for (; s <= end; ++s) {
            found = run(0, cps, begin, end, s, after_empty && s == pos);
            if (found >= 0) break;
        }
        if (found < 0) break;
        if (s > gap) lengths.push_back(s - gap);
        if (size_t(found) > s) lengths.push_back(size_t(found) - s);
        gap = size_t(found);
        after_empty = size_t(found) == s;
        pos = size_t(found);
    }
    if (gap < end) lengths.push_back(end - gap);
}

}  // namespace engine
