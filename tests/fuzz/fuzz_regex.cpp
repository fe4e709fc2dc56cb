// libFuzzer target: regex text -> parse (both \s modes).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "engine/grammar/regex.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (bool ascii : {false, true}) {
        try {
            engine::gbnf::parse_regex(text, {ascii});
        } catch (const std::exception&) {  // the server answers these with 400
        }
    }
    return 0;
}
