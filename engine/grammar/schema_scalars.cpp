// Strings (length limits, patterns, formats) and numbers (exact ranges).
#include <set>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/schema_converter.h"
#include "engine/grammar/schema_numbers.h"
#include "engine/grammar/schema_pattern.h"

namespace engine::gbnf {

namespace {

constexpr uint64_t kRepeatChunk = 1000;  // counts above the GBNF limit are written as nested repeats

}  // namespace

// item{min,max} (kNoLimit: unbounded), with counts beyond GBNF's limit split into nested repeats.
std::string repeat(const std::string& item, uint64_t min, uint64_t max, const std::string& ptr) {
    const uint64_t limit = kMaxRepetition;
    if (min > limit * kRepeatChunk || (max != kNoLimit && max - min > limit * kRepeatChunk)) {
        throw SchemaError(ptr, "length or item count is too large");
    }
    const std::string g = group(item);
    auto fixed = [&](uint64_t n) -> std::string {
        if (n == 0) return "";
        if (n == 1) return g;
        if (n <= limit) return g + "{" + std::to_string(n) + "}";
        std::string out =
            "(" + g + "{" + std::to_string(kRepeatChunk) + "}){" + std::to_string(n / kRepeatChunk) + "}";
        if (n % kRepeatChunk) out += " " + g + "{" + std::to_string(n % kRepeatChunk) + "}";
        return out;
    };
    auto upto = [&](uint64_t n) -> std::string {  // 0..n copies
        if (n == 0) return "";
        if (n == 1) return g + "?";
        if (n <= limit) return g + "{0," + std::to_string(n) + "}";
        std::string out =
            "(" + g + "{0," + std::to_string(kRepeatChunk) + "}){0," + std::to_string(n / kRepeatChunk) + "}";
        if (n % kRepeatChunk) out += " " + g + "{0," + std::to_string(n % kRepeatChunk) + "}";
        return out;
    };
    if (max == kNoLimit) {
        if (min == 0) return g + "*";
        if (min == 1) return g + "+";
        if (min <= limit) return g + "{" + std::to_string(min) + ",}";
        return fixed(min) + " " + g + "*";
    }
    if (min <= limit && max <= limit && min != max && !(min == 0 && max == 1)) {
        return g + "{" + std::to_string(min) + "," + std::to_string(max) + "}";
    }
    const std::string a = fixed(min), b = upto(max - min);
    if (a.empty()) return b;
    return b.empty() ? a : a + " " + b;
}

std::string SchemaConverter::visit_string(const ojson& s, const std::string& name, const std::string& ptr) {
    static const std::set<std::string> formats = {"date", "time", "date-time", "uuid", "email", "ipv4"};
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    const std::string length_key = s.contains("minLength") ? "/minLength" : "/maxLength";
    if (s.contains("pattern")) {
        if (!s["pattern"].is_string()) throw SchemaError(ptr + "/pattern", "'pattern' must be a string");
        if (lengths)
            throw SchemaError(ptr + length_key, "'pattern' together with a length limit is not supported");
        std::string expr;
        try {
            expr = pattern_to_gbnf(s["pattern"].get<std::string>(), builtin("char"));
        } catch (const std::invalid_argument& e) {
            throw SchemaError(ptr + "/pattern", std::string("unsupported pattern: ") + e.what());
        }
        return add_rule(name, "\"\\\"\" " + group(expr) + " \"\\\"\"");
    }
    if (s.contains("format") && s["format"].is_string() && formats.count(s["format"].get<std::string>())) {
        if (lengths)
            throw SchemaError(ptr + length_key, "'format' together with a length limit is not supported");
        return builtin(s["format"].get<std::string>() + "-string");
    }
    if (!lengths) return builtin("string");
    const uint64_t min = s.contains("minLength") ? count_of(s, "minLength", ptr) : 0;
    const uint64_t max = s.contains("maxLength") ? count_of(s, "maxLength", ptr) : kNoLimit;
    if (max < min) throw SchemaError(ptr + "/maxLength", "'maxLength' is below 'minLength'");
    const std::string chars = repeat(builtin("char"), min, max, ptr + length_key);
    return add_rule(name, "\"\\\"\" " + (chars.empty() ? "" : chars + " ") + "\"\\\"\"");
}

std::string SchemaConverter::visit_number(const ojson& s, bool integer, const std::string& name,
                                          const std::string& ptr) {
    const auto lo = lower_bound(s, ptr), hi = upper_bound(s, ptr);
    if (!lo && !hi) return builtin(integer ? "integer" : "number");
    std::string expr;
    try {
        expr = integer ? integer_range_gbnf(lo, hi) : decimal_range_gbnf(lo, hi);
    } catch (const std::invalid_argument&) {
        throw SchemaError(ptr + (lo ? "/minimum" : "/maximum"),
                          std::string("the bounds leave no valid ") + (integer ? "integer" : "number"));
    }
    return add_rule(name, "(" + expr + ")");
}

}  // namespace engine::gbnf
