// libFuzzer target: GBNF text -> parse, expansion check, a few matcher steps over the text itself.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/stack_automaton.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto rules = std::make_shared<const engine::gbnf::Rules>(engine::gbnf::parse_gbnf(text));
        const uint32_t root = engine::gbnf::find_root(*rules, "root");
        engine::gbnf::check_expansion(*rules, root, text);
        engine::gbnf::StackAutomaton automaton(rules, root);
        automaton.set_budget(engine::gbnf::kDefaultStepBudget);
        automaton.step_bytes(automaton.start(), text.substr(0, 64));
    } catch (const std::exception&) {  // the server answers these with 400
    }
    return 0;
}
