#include "engine/grammar/schema_relax.h"

#include <set>

#include "engine/grammar/json_schema.h"
#include "engine/grammar/schema_merge.h"

namespace engine {

namespace {

// Besides the keywords the converter never supports: refinements it may refuse in some combinations.
const std::set<std::string> kRefinements = {"uniqueItems", "pattern",          "format",          "minLength",
                                            "maxLength",   "minimum",          "maximum",         "exclusiveMinimum",
                                            "exclusiveMaximum", "minItems",    "maxItems"};

bool droppable(const std::string& key) {
    return gbnf::is_unsupported_keyword(key) || kRefinements.count(key) > 0;
}

}  // namespace

nlohmann::ordered_json relax_schema(const nlohmann::ordered_json& schema, std::vector<std::string>& dropped,
                                    const std::function<void(const nlohmann::ordered_json&)>& convert) {
    nlohmann::ordered_json s = schema;
    for (int attempt = 0;; ++attempt) {
        try {
            convert(s);
            return s;
        } catch (const SchemaError& e) {
            const size_t slash = e.pointer.rfind('/');
            if (attempt >= 64 || slash == std::string::npos) throw;
            const std::string parent = e.pointer.substr(0, slash);
            const std::string key = e.pointer.substr(slash + 1);  // droppable names need no ~ unescaping
            if (!droppable(key)) throw;
            nlohmann::ordered_json* holder = nullptr;
            try {
                holder = &s.at(nlohmann::ordered_json::json_pointer(parent));
            } catch (const nlohmann::json::exception&) {
                throw e;
            }
            if (!holder->is_object() || !holder->contains(key)) throw;
            // A length limit beside a pattern or format is refused for the pair: the limit alone can be
            // enforced, so the pattern (or format) goes.
            std::string drop = key;
            if (key == "minLength" || key == "maxLength") {
                if (holder->contains("pattern")) drop = "pattern";
                else if (holder->contains("format")) drop = "format";
            }
            holder->erase(drop);
            dropped.push_back(parent + "/" + drop);
        }
    }
}

}  // namespace engine
