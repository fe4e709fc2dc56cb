#include "engine/grammar/json_schema.h"

#include "engine/grammar/schema_converter.h"

namespace engine {

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema) {
    return gbnf::SchemaConverter(schema).run();
}

std::string json_schema_to_gbnf(const nlohmann::json& schema) {
    return json_schema_to_gbnf(nlohmann::ordered_json::parse(schema.dump()));
}

std::string json_object_gbnf() {
    return json_schema_to_gbnf(nlohmann::ordered_json{{"type", "object"}});
}

}  // namespace engine
