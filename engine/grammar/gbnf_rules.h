// A parsed GBNF grammar in flat form: every alternative of every rule is a run of elements in one
// array, closed by an End element. The matcher's stack entries are indices into that array.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/grammar/char_set.h"

namespace engine::gbnf {

enum class Op : uint8_t {
    End,       // end of an alternative
    Chars,     // one code point from sets[arg]
    Rule,      // reference to rules[arg]
    Token,     // exactly the token with id arg (GBNF `<[id]>` / `<piece>`)
    TokenNot,  // any single token except arg (`!<[id]>`)
};

struct Elem {
    Op op;
    uint32_t arg;
};

struct Rule {
    enum class Origin : uint8_t { User, Group, Repeat };
    std::string name;
    std::vector<uint32_t> alts;  // start index (into Rules::elems) of each alternative
    Origin origin = Origin::User;
    uint32_t owner = 0;          // the user rule it was written in (itself for user rules)
    size_t offset = 0;           // byte offset in the source: definition, '(' or repetition operator
    uint32_t repeated_item = 0;  // Repeat rules: elements in the repeated item (for messages)
};

struct Rules {
    std::vector<Elem> elems;
    std::vector<CharSet> sets;
    std::vector<Rule> rules;
    std::unordered_map<std::string, uint32_t> by_name;  // user rules only

    std::optional<uint32_t> find(std::string_view name) const {
        auto it = by_name.find(std::string(name));
        if (it == by_name.end()) return std::nullopt;
        return it->second;
    }
    bool has_tokens() const;  // whether any Token/TokenNot element exists
};

}  // namespace engine::gbnf
