// Renaming every rule of a GBNF text with a prefix, so that grammars generated separately (one per
// tool's JSON Schema) can live in one grammar without their rule names clashing.
#pragma once

#include <string>

namespace api {

// `gbnf` with each rule name r (defined or referenced) written prefix + r. String literals and
// character classes are left alone.
std::string prefix_gbnf_rules(const std::string& gbnf, const std::string& prefix);

// A GBNF string literal ("...") that matches `text` exactly.
std::string gbnf_literal(const std::string& text);

}  // namespace api
