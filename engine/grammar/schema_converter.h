// The JSON-Schema-to-GBNF converter behind json_schema_to_gbnf(). One instance converts one
// schema: it visits the schema tree, adding one GBNF rule per schema (named after its path) plus
// the builtin rules it uses. The work is split by topic: schema_converter.cpp (rules, $ref, allOf,
// dispatch), schema_objects.cpp (objects, arrays), schema_scalars.cpp (strings, numbers).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/grammar/schema_merge.h"

namespace engine::gbnf {

constexpr uint64_t kNoLimit = UINT64_MAX;  // an unbounded count

std::string join(const std::vector<std::string>& parts, const char* sep);
// `e` as one GBNF item: parenthesized unless it is a single name or literal.
std::string group(const std::string& e);
// item{min,max} (kNoLimit: unbounded); counts beyond GBNF's limit become nested repeats.
std::string repeat(const std::string& item, uint64_t min, uint64_t max, const std::string& ptr);
// A non-negative integer keyword (minItems, maxLength, ...); throws SchemaError otherwise.
uint64_t count_of(const ojson& s, const char* key, const std::string& ptr);
// Whether a JSON value has JSON-Schema type t ("integer" includes 2.0).
bool json_type_is(const ojson& v, const std::string& t);

class SchemaConverter {
  public:
    explicit SchemaConverter(const ojson& root) : root_(root) {}
    // The whole grammar, "root ::= ..." first; throws SchemaError.
    std::string run();

  private:
    // rules
    std::string builtin(const std::string& name);
    // A name derived from the schema path; builtin names get a suffix so they stay reserved.
    static std::string rule_name(const std::string& base);
    // Adds `name ::= body`, reusing an identical rule; a name reserved for a $ref is filled here.
    std::string add_rule(const std::string& base, const std::string& body);
    // Rule names follow the schema path; "root" stays the top rule's.
    static std::string child(const std::string& name, const std::string& part);

    // $ref and allOf
    const ojson& resolve(const std::string& ref, const std::string& ptr);
    std::string ref_rule(const ojson& ref_value, const std::string& ptr);
    void collect(const ojson& x, const std::string& ptr, std::vector<ojson>& parts, int depth);
    // One schema without allOf (and without $ref at the top) equivalent to x; unions inside the
    // parts are distributed into an anyOf of merged alternatives.
    ojson flatten(const ojson& x, const std::string& ptr, int depth = 0);

    // schemas: each returns the name of a rule matching the schema
    std::string visit(const ojson& s, const std::string& name, const std::string& ptr);
    static std::string infer_type(const ojson& s);
    std::string visit_union(const ojson& s, const char* key, const std::string& name, const std::string& ptr);
    std::string visit_enum(const ojson& s, const std::string& type, const std::string& name,
                           const std::string& ptr);
    // A JSON string (with quotes and trailing space) that is none of `names`: a trie over the
    // names where leaving it at any point allows anything after.
    std::string not_strings(const std::vector<std::string>& names);
    std::string visit_object(const ojson& s, const std::string& name, const std::string& ptr);
    std::string visit_array(const ojson& s, const std::string& name, const std::string& ptr);
    std::string visit_string(const ojson& s, const std::string& name, const std::string& ptr);
    std::string visit_number(const ojson& s, bool integer, const std::string& name, const std::string& ptr);

    const ojson& root_;
    std::map<std::string, std::string> rules_;
    std::map<std::string, std::string> ref_rules_;  // $ref value -> rule name
    std::set<std::string> reserved_;                // rule names of $refs being visited
    int depth_ = 0;
};

}  // namespace engine::gbnf
