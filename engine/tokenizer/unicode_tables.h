// Unicode data tables generated from Python's unicodedata (scripts/gen/gen_unicode_tables.py).
// Use the lookups in unicode.h rather than these arrays.
#pragma once

#include <cstddef>
#include <cstdint>

namespace engine::unicode::tables {

struct CategoryRun {
    uint32_t start;    // first code point of the run; the run ends where the next one starts
    uint8_t category;  // engine::unicode::Category
};

struct CodepointPair {
    uint32_t from;
    uint32_t to;
};

struct NfdRun {
    uint32_t first;
    uint32_t last;
    uint32_t nfd;  // first code point of the canonical decomposition of every code point in the run
};

extern const char* const kUnicodeVersion;
extern const CategoryRun kCategoryRuns[];
extern const size_t kCategoryRuns_size;
extern const uint32_t kWhitespace[];
extern const size_t kWhitespace_size;
extern const CodepointPair kLowercase[];  // sorted by from
extern const size_t kLowercase_size;
extern const NfdRun kNfdFirst[];  // sorted by first
extern const size_t kNfdFirst_size;

}  // namespace engine::unicode::tables
