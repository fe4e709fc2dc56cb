#include "engine/grammar/schema_numbers.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace engine::gbnf {

namespace {

bool all_of_char(std::string_view s, char c) {
    return std::all_of(s.begin(), s.end(), [c](char x) { return x == c; });
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
    return out;
}

std::string digit_class(char lo, char hi) {
    if (lo == hi) return std::string("[") + lo + "]";
    return std::string("[") + lo + "-" + hi + "]";
}

std::string any_digits(size_t min, size_t max) {
    if (max == 0) return "";
    if (min == 1 && max == 1) return "[0-9]";
    if (min == max) return "[0-9]{" + std::to_string(min) + "}";
    return "[0-9]{" + std::to_string(min) + "," + std::to_string(max) + "}";
}

// Compares non-negative digit strings without leading zeros.
int compare_uint(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    return a < b ? -1 : (a > b ? 1 : 0);
}

std::string increment(std::string s) {
    for (size_t i = s.size(); i-- > 0;) {
        if (s[i] != '9') {
            ++s[i];
            return s;
        }
        s[i] = '0';
    }
    return "1" + s;
}

std::string decrement(std::string s) {  // s > 0
    for (size_t i = s.size(); i-- > 0;) {
        if (s[i] != '0') {
            --s[i];
            break;
        }
        s[i] = '9';
    }
    const size_t nz = s.find_first_not_of('0');
    return nz == std::string::npos ? "0" : s.substr(nz);
}

// Equal-length digit strings lo <= hi (inner positions may start with 0).
std::string same_length(std::string_view lo, std::string_view hi) {
    if (lo == hi) return "\"" + std::string(lo) + "\"";
    size_t i = 0;
    while (lo[i] == hi[i]) ++i;
    std::string out = i ? "\"" + std::string(lo.substr(0, i)) + "\" " : "";
    const size_t rest = lo.size() - i - 1;
    if (rest == 0) return out + digit_class(lo[i], hi[i]);
    const std::string_view lo_rest = lo.substr(i + 1), hi_rest = hi.substr(i + 1);
    const bool lo_zeros = all_of_char(lo_rest, '0'), hi_nines = all_of_char(hi_rest, '9');
    const char mid_lo = lo_zeros ? lo[i] : char(lo[i] + 1);
    const char mid_hi = hi_nines ? hi[i] : char(hi[i] - 1);
    std::vector<std::string> alts;
    if (!lo_zeros)
        alts.push_back(digit_class(lo[i], lo[i]) + " (" + same_length(lo_rest, std::string(rest, '9')) + ")");
    if (mid_lo <= mid_hi) alts.push_back(digit_class(mid_lo, mid_hi) + " " + any_digits(rest, rest));
    if (!hi_nines)
        alts.push_back(digit_class(hi[i], hi[i]) + " (" + same_length(std::string(rest, '0'), hi_rest) + ")");
    return out + (alts.size() == 1 ? alts[0] : "(" + join(alts, " | ") + ")");
}

// Non-negative integers in [lo, hi] (hi absent = up to max(len(lo), kFreeDigits) digits), written
// without leading zeros.
std::string uint_range(const std::string& lo, const std::optional<std::string>& hi) {
    const size_t lo_len = lo.size();
    std::vector<std::string> alts;
    if (hi) {
        for (size_t len = lo_len; len <= hi->size(); ++len) {
            const std::string a = len == lo_len ? lo : "1" + std::string(len - 1, '0');
            const std::string b = len == hi->size() ? *hi : std::string(len, '9');
            alts.push_back(same_length(a, b));
        }
    } else {
        alts.push_back(same_length(lo, std::string(lo_len, '9')));
        const size_t cap = std::max(lo_len, kFreeDigits);
        if (cap > lo_len) alts.push_back("[1-9] " + any_digits(lo_len, cap - 1));
    }
    return join(alts, " | ");
}

// Fraction digit strings s (implicitly padded with zeros; empty means no fraction) with
// lo <= s <= hi, strictness per side, as a digit automaton over (position, tight-low, tight-high).
struct Fraction {
    bool empty_ok = false;
    std::string nonempty;  // expression for the non-empty strings, "" if none
};

class FractionRange {
  public:
    FractionRange(const std::string* lo, bool lo_strict, const std::string* hi, bool hi_strict)
        : lo_(lo), hi_(hi), lo_strict_(lo_strict), hi_strict_(hi_strict) {
        cap_ = std::max({kFreeDigits, lo ? lo->size() : 0, hi ? hi->size() : 0});
    }

    Fraction at(size_t pos, bool tight_lo, bool tight_hi) const {
        Fraction f;
        bool lo_done = !tight_lo || !lo_ || pos >= lo_->size();
        const bool hi_done = !tight_hi || !hi_ || pos >= hi_->size();
        // Past lo's last digit, a non-strict low side allows every suffix: it stops mattering.
        if (tight_lo && lo_done && !lo_strict_) {
            tight_lo = false;
            lo_done = true;
        }
        // Ending here pads with zeros: below lo if lo still has non-zero digits; equal when done.
        const bool lo_ok = !tight_lo || (lo_done && !lo_strict_);
        const bool hi_ok = !tight_hi || !hi_done || !hi_strict_;
        f.empty_ok = lo_ok && hi_ok;
        if (pos >= cap_) return f;
        const size_t room = cap_ - pos;
        if (!tight_lo && !tight_hi) {
            f.nonempty = any_digits(1, room);
            return f;
        }
        if (tight_lo && lo_done && !tight_hi) {  // strictly above lo: some non-zero digit must come
            f.nonempty = (room > 1 ? "[0]{0," + std::to_string(room - 1) + "} " : "") + "[1-9]" +
                         (room > 1 ? " [0-9]{0," + std::to_string(room - 1) + "}" : "");
            return f;
        }
        if (tight_hi && hi_done && !tight_lo) {  // at hi's last digit: only zeros keep s <= hi
            if (!hi_strict_) f.nonempty = "[0]{1," + std::to_string(room) + "}";
            return f;
        }
        const char lo_d = tight_lo ? (lo_ && pos < lo_->size() ? (*lo_)[pos] : '0') : '0';
        const char hi_d = tight_hi ? (hi_ && pos < hi_->size() ? (*hi_)[pos] : '0') : '9';
        if (lo_d > hi_d) return f;
        std::vector<std::string> alts;
        auto add = [&](char a, char b, bool tl, bool th) {
            if (a > b) return;
            const Fraction sub = at(pos + 1, tl, th);
            const std::string cls = digit_class(a, b);
            if (sub.empty_ok && sub.nonempty.empty()) {
                alts.push_back(cls);
            } else if (sub.empty_ok) {
                alts.push_back(cls + " (" + sub.nonempty + ")?");
            } else if (!sub.nonempty.empty()) {
                alts.push_back(cls + " (" + sub.nonempty + ")");
            }
        };
        if (tight_lo && tight_hi && lo_d == hi_d) {
            add(lo_d, lo_d, true, true);
        } else {
            if (tight_lo) add(lo_d, lo_d, true, false);
            const char free_lo = tight_lo ? char(lo_d + 1) : lo_d;
            const char free_hi = tight_hi ? char(hi_d - 1) : hi_d;
            add(free_lo, free_hi, false, false);
            if (tight_hi) add(hi_d, hi_d, false, true);
        }
        f.nonempty = join(alts, " | ");
        return f;
    }

  private:
    const std::string* lo_;
    const std::string* hi_;
    bool lo_strict_, hi_strict_;
    size_t cap_;
};

// "<integer> <fraction>" for one integer part, or "" if the fraction allows nothing.
std::string with_fraction(const std::string& int_expr, const Fraction& f) {
    if (!f.empty_ok && f.nonempty.empty()) return "";
    if (f.nonempty.empty()) return int_expr;
    const std::string frac = "\".\" (" + f.nonempty + ")";
    return int_expr + (f.empty_ok ? " (" + frac + ")?" : " " + frac);
}

// Non-negative decimals y with lo <= y <= hi (hi absent: no upper bound), strictness per side.
std::string udecimal_range(const Decimal& lo, bool lo_strict, const Decimal* hi, bool hi_strict) {
    std::vector<std::string> alts;
    const std::string lit_lo = "\"" + lo.int_digits + "\"";
    if (hi && hi->int_digits == lo.int_digits) {
        const std::string alt = with_fraction(
            lit_lo, FractionRange(&lo.frac_digits, lo_strict, &hi->frac_digits, hi_strict).at(0, true, true));
        if (!alt.empty()) alts.push_back(alt);
        return join(alts, " | ");
    }
    std::string alt =
        with_fraction(lit_lo, FractionRange(&lo.frac_digits, lo_strict, nullptr, false).at(0, true, false));
    if (!alt.empty()) alts.push_back(alt);
    const std::string mid_lo = increment(lo.int_digits);
    const Fraction any = FractionRange(nullptr, false, nullptr, false).at(0, false, false);
    if (!hi) {
        alts.push_back(with_fraction("(" + uint_range(mid_lo, std::nullopt) + ")", any));
    } else {
        if (compare_uint(mid_lo, hi->int_digits) < 0) {
            alts.push_back(with_fraction("(" + uint_range(mid_lo, decrement(hi->int_digits)) + ")", any));
        }
        alt = with_fraction("\"" + hi->int_digits + "\"",
                            FractionRange(nullptr, false, &hi->frac_digits, hi_strict).at(0, false, true));
        if (!alt.empty()) alts.push_back(alt);
    }
    return join(alts, " | ");
}

Decimal negate(Decimal d) {
    if (!d.is_zero()) d.neg = !d.neg;
    return d;
}

[[noreturn]] void empty_range() {
    throw std::invalid_argument("the bounds leave no value");
}

}  // namespace

Decimal Decimal::parse(std::string_view text) {
    Decimal d;
    size_t i = 0;
    bool neg = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
    std::string digits;  // all significant digits, integer and fraction together
    long point = -1;     // digits before the decimal point
    for (; i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.'); ++i) {
        if (text[i] == '.') {
            if (point >= 0) throw std::invalid_argument("malformed number");
            point = long(digits.size());
        } else {
            digits += text[i];
        }
    }
    if (digits.empty()) throw std::invalid_argument("malformed number");
    if (point < 0) point = long(digits.size());
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        long exp = std::stol(std::string(text.substr(i)));
        if (exp > 400 || exp < -400) throw std::invalid_argument("number exponent out of range");
        point += exp;
        i = text.size();
    }
    if (i != text.size()) throw std::invalid_argument("malformed number");
    if (point < 0) {
        digits.insert(0, size_t(-point), '0');
        point = 0;
    }
    if (size_t(point) > digits.size()) digits.append(size_t(point) - digits.size(), '0');
    std::string ip = digits.substr(0, size_t(point)), fp = digits.substr(size_t(point));
    ip.erase(0, std::min(ip.find_first_not_of('0'), ip.size()));
    while (!fp.empty() && fp.back() == '0') fp.pop_back();
    d.int_digits = ip.empty() ? "0" : ip;
    d.frac_digits = fp;
    d.neg = neg && !d.is_zero();
    return d;
}

int compare(const Decimal& a, const Decimal& b) {
    if (a.neg != b.neg) return a.neg ? -1 : 1;
    int c = compare_uint(a.int_digits, b.int_digits);
    if (c == 0) {
        const size_t n = std::max(a.frac_digits.size(), b.frac_digits.size());
        std::string fa = a.frac_digits, fb = b.frac_digits;
        fa.resize(n, '0');
        fb.resize(n, '0');
        c = fa < fb ? -1 : (fa > fb ? 1 : 0);
    }
    return a.neg ? -c : c;
}

std::string integer_range_gbnf(const std::optional<Bound>& lo, const std::optional<Bound>& hi) {
    // Inclusive integer bounds as (negative?, magnitude).
    auto ceil_of = [](const Bound& b) {
        Decimal d = b.value;
        const bool exact = d.is_integer();
        d.frac_digits.clear();
        // Truncation rounds toward zero: up for negatives, down for positives.
        if (!d.neg && (!exact || b.exclusive)) d.int_digits = increment(d.int_digits);
        if (d.neg && exact && b.exclusive) d.int_digits = decrement(d.int_digits);
        if (d.int_digits == "0") d.neg = false;
        return d;
    };
    auto floor_of = [&](const Bound& b) { return negate(ceil_of(Bound{negate(b.value), b.exclusive})); };
    std::optional<Decimal> a, b;
    if (lo) a = ceil_of(*lo);
    if (hi) b = floor_of(*hi);
    if (a && b && compare(*a, *b) > 0) empty_range();
    std::vector<std::string> alts;
    // Negative part: magnitudes in [max(1, -b), -a].
    if (!a || a->neg) {
        const std::string m_lo = (b && b->neg) ? b->int_digits : "1";
        const std::optional<std::string> m_hi = a ? std::optional<std::string>(a->int_digits) : std::nullopt;
        alts.push_back("\"-\" (" + uint_range(m_lo, m_hi) + ")");
    }
    // Non-negative part: [max(a, 0), b].
    if (!b || !b->neg) {
        const std::string n_lo = (a && !a->neg) ? a->int_digits : "0";
        const std::optional<std::string> n_hi = b ? std::optional<std::string>(b->int_digits) : std::nullopt;
        alts.push_back(uint_range(n_lo, n_hi));
    }
    return join(alts, " | ");
}

std::string decimal_range_gbnf(const std::optional<Bound>& lo, const std::optional<Bound>& hi) {
    if (lo && hi) {
        const int c = compare(lo->value, hi->value);
        if (c > 0 || (c == 0 && (lo->exclusive || hi->exclusive))) empty_range();
    }
    std::vector<std::string> alts;
    const Decimal zero;
    // Negative part x = -y, y > 0: y in (max(0, -hi), -lo].
    if (!lo || lo->value.neg) {
        Decimal y_lo = zero;
        bool y_lo_strict = true;
        if (hi && hi->value.neg) {
            y_lo = negate(hi->value);
            y_lo_strict = hi->exclusive;
        }
        const Decimal y_hi = lo ? negate(lo->value) : Decimal{};
        const std::string part = udecimal_range(y_lo, y_lo_strict, lo ? &y_hi : nullptr, lo && lo->exclusive);
        if (!part.empty()) alts.push_back("\"-\" (" + part + ")");
    }
    // Non-negative part: x in [max(lo, 0), hi].
    const bool hi_below_zero = hi && (hi->value.neg || (hi->value.is_zero() && hi->exclusive));
    if (!hi_below_zero) {
        Decimal x_lo = zero;
        bool x_lo_strict = false;
        if (lo && !lo->value.neg) {
            x_lo = lo->value;
            x_lo_strict = lo->exclusive;
        }
        const std::string part =
            udecimal_range(x_lo, x_lo_strict, hi ? &hi->value : nullptr, hi && hi->exclusive);
        if (!part.empty()) alts.push_back(part);
    }
    if (alts.empty()) empty_range();
    return join(alts, " | ");
}

}  // namespace engine::gbnf
