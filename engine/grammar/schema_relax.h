// A schema the converter can honour, made from one it refuses by dropping the refinements it cannot
// enforce (uniqueItems, multipleOf, not, if/then, patternProperties, minProperties, a pattern with
// lookahead, a pattern beside a length limit, ...). For tools' parameters: the model still reads the whole
// schema in its prompt, and llama-server ignores these keywords, so a tool that uses one must not make
// every request that offers it a 400. Structure (types, properties, items, $ref ...) is never dropped: a
// schema wrong there stays an error.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace engine {

// Calls convert(schema); while it throws a SchemaError whose pointer names a droppable keyword present in
// the schema, removes that keyword and tries again (at most 64 times). Returns the schema convert
// accepted; `dropped` gets the pointer of each keyword removed. Other errors are rethrown.
nlohmann::ordered_json relax_schema(const nlohmann::ordered_json& schema, std::vector<std::string>& dropped,
                                    const std::function<void(const nlohmann::ordered_json&)>& convert);

}  // namespace engine
