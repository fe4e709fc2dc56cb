// Exact number ranges as GBNF, for JSON Schema minimum / maximum / exclusiveMinimum /
// exclusiveMaximum. Integers become digit-by-digit alternatives (as llama.cpp does); bounded
// non-integers are written as plain decimals (no exponent) compared digit by digit, so every
// generated number lies in the range and every plain decimal in it can be generated (up to 16
// digits in unbounded parts).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace engine::gbnf {

// A decimal number: sign, integer digits without leading zeros ("0" for zero), fraction digits
// without trailing zeros. Zero is never negative.
struct Decimal {
    bool neg = false;
    std::string int_digits = "0";
    std::string frac_digits;

    // Parses JSON number text (e.g. "-12.50", "1e-3", "2E+2"); throws std::invalid_argument.
    static Decimal parse(std::string_view text);
    bool is_integer() const { return frac_digits.empty(); }
    bool is_zero() const { return int_digits == "0" && frac_digits.empty(); }
};

int compare(const Decimal& a, const Decimal& b);

struct Bound {
    Decimal value;
    bool exclusive = false;
};

// GBNF alternatives (without surrounding parentheses) for the integers within the bounds
// (std::nullopt = unbounded). Throws std::invalid_argument when no integer fits.
std::string integer_range_gbnf(const std::optional<Bound>& lo, const std::optional<Bound>& hi);
// The same for numbers, written as decimals without an exponent.
std::string decimal_range_gbnf(const std::optional<Bound>& lo, const std::optional<Bound>& hi);

// Digits allowed where a part is unbounded (llama.cpp's converter uses 16 as well).
constexpr size_t kFreeDigits = 16;

}  // namespace engine::gbnf
