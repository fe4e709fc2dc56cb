// libFuzzer target: JSON text (depth-limited as the server does) -> JSON Schema -> GBNF -> parse.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/regex.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The server refuses bodies nested deeper than 256 before parsing (server/http/json_depth.h).
    size_t depth = 0, worst = 0;
    for (char c : text) {
        if (c == '[' || c == '{') worst = std::max(worst, ++depth);
        if ((c == ']' || c == '}') && depth > 0) --depth;
    }
    if (worst > 256) return 0;
    nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, false);
    if (schema.is_discarded()) return 0;
    try {
        const std::string gbnf = engine::json_schema_to_gbnf(schema);
        engine::gbnf::parse_gbnf(gbnf);
    } catch (const std::exception&) {  // the server answers these with 400
    }
    return 0;
}
