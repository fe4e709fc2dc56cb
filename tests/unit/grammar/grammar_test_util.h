// Helpers shared by the grammar tests: random walks over a grammar and a synthetic vocabulary.
#pragma once

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/utf8.h"

namespace grammar_test {

// A random string of the grammar: at each step stop (when complete) with probability stop_p, else
// pick one of the next character sets uniformly and a code point in it (mostly printable ASCII,
// sometimes anything). Gives up (nullopt) past max_chars.
inline std::optional<std::string> random_walk(engine::GrammarMatcher& m, std::mt19937& rng,
                                              size_t max_chars = 3000, double stop_p = 0.5) {
    m.reset();
    std::string out;
    std::uniform_real_distribution<double> coin(0, 1);
    while (out.size() < max_chars) {
        auto sets = m.next_char_sets();
        if (m.complete() && (sets.empty() || coin(rng) < stop_p)) return out;
        if (sets.empty()) return std::nullopt;  // dead end (cannot happen in a valid walk)
        const auto& set = *sets[std::uniform_int_distribution<size_t>(0, sets.size() - 1)(rng)];
        std::vector<uint32_t> printable;
        for (auto r : set.ranges()) {
            for (uint32_t c = std::max<uint32_t>(r.lo, 0x20); c <= std::min<uint32_t>(r.hi, 0x7E); ++c) {
                printable.push_back(c);
            }
        }
        uint32_t cp = 0;
        if (!printable.empty() && coin(rng) < 0.9) {
            cp = printable[std::uniform_int_distribution<size_t>(0, printable.size() - 1)(rng)];
        } else {
            do {
                const auto& r =
                    set.ranges()[std::uniform_int_distribution<size_t>(0, set.ranges().size() - 1)(rng)];
                const uint32_t hi = std::min<uint32_t>(r.hi, r.lo + 0x3000);
                cp = std::uniform_int_distribution<uint32_t>(r.lo, hi)(rng);
            } while (cp >= 0xD800 && cp <= 0xDFFF);
        }
        std::string bytes;
        engine::gbnf::append_utf8(bytes, cp);
        if (!m.accept(bytes)) return std::nullopt;
        out += bytes;
    }
    return std::nullopt;
}

// A small vocabulary with single characters, multi-character pieces, raw UTF-8 bytes that split
// characters, invalid fragments, an empty control token and two end-of-generation tokens (0, 1).
inline std::vector<std::string> synthetic_pieces() {
    std::vector<std::string> p = {"</s>", "<|eot|>", ""};  // 0, 1: EOG; 2: control token, empty piece
    for (char c = 0x20; c < 0x7F; ++c) p.push_back(std::string(1, c));
    for (const char* s : {"ab",
                          "abc",
                          "ba",
                          "aa",
                          "aaa",
                          "{\"",
                          "\":",
                          "\",",
                          "\"}",
                          "true",
                          "false",
                          "null",
                          "12",
                          "3.",
                          ".5",
                          "1e",
                          "e+",
                          "  ",
                          "\n",
                          "\n  ",
                          "\t",
                          "+1",
                          "(1",
                          "1)",
                          "*(",
                          "é",
                          "中",
                          "中文",
                          "é!",
                          "x中",
                          "\xC3",
                          "\xA9",
                          "\xE4",
                          "\xB8",
                          "\xAD",
                          "\xE4\xB8",
                          "\xB8\xAD\xE6",
                          "\xFF",
                          "\xC0\x80",
                          "\x80",
                          "\xF0\x9F",
                          "\x98\x80",
                          "\xF0\x9F\x98\x80",
                          "[1",
                          ",2",
                          "]",
                          "},",
                          "<tool>"}) {
        p.push_back(s);
    }
    return p;
}

}  // namespace grammar_test
