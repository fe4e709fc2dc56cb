// JSON Schema keyword bookkeeping for the GBNF converter: which keywords are rejected, which only
// annotate, numeric bounds, and merging two schemas into one (allOf).
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/grammar/schema_numbers.h"

namespace engine::gbnf {

using ojson = nlohmann::ordered_json;

// Throws SchemaError (pointing at the keyword) for keywords the converter cannot honour.
void check_keywords(const ojson& s, const std::string& ptr);
// Keywords check_keywords always refuses (uniqueItems only when true).
bool is_unsupported_keyword(const std::string& key);
// Whether s has a keyword that constrains instances, other than those in `except`.
bool has_constraints(const ojson& s, std::initializer_list<const char*> except = {});

// minimum / exclusiveMinimum (numbers, or the draft-04 boolean form) as one lower bound; likewise
// for the upper bound. Throws SchemaError for non-numeric values.
std::optional<Bound> lower_bound(const ojson& s, const std::string& ptr);
std::optional<Bound> upper_bound(const ojson& s, const std::string& ptr);

// One schema equivalent to allOf [a, b], for schemas without allOf / anyOf / oneOf / $ref at the
// top. Nested subschemas that must both hold become {"allOf": [x, y]}. Throws SchemaError when the
// two cannot be combined (e.g. different patterns) or contradict each other (disjoint types).
ojson merge_schemas(const ojson& a, const ojson& b, const std::string& ptr);

// JSON pointer escaping of one reference token (~ -> ~0, / -> ~1).
std::string pointer_token(const std::string& key);

}  // namespace engine::gbnf
