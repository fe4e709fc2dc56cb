// The rows of the architecture table (arch.h).
#include <cstring>

#include "engine/model/arch/arch.h"

namespace engine {

extern const ArchRow kArchLlama;

namespace {

const ArchRow* const kRows[] = {
    &kArchLlama,
};

}  // namespace

const ArchRow* find_arch(const std::string& name) {
    for (const ArchRow* r : kRows)
        if (name == r->name) return r;
    return nullptr;
}

std::string supported_archs() {
    std::string s;
    for (const ArchRow* r : kRows) s += (s.empty() ? "" : ", ") + std::string(r->name);
    return s;
}

}  // namespace engine
