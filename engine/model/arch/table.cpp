// The rows of the architecture table (arch.h).
#include <cstring>

#include "engine/model/arch/arch.h"

namespace engine {

extern const ArchRow kArchBert;
extern const ArchRow kArchGemma;
extern const ArchRow kArchGemma2;
extern const ArchRow kArchGemma3;
extern const ArchRow kArchGptOss;
extern const ArchRow kArchJinaBertV2;
extern const ArchRow kArchLlama;
extern const ArchRow kArchNomicBert;
extern const ArchRow kArchPhi3;
extern const ArchRow kArchQwen2;
extern const ArchRow kArchQwen2Moe;
extern const ArchRow kArchQwen3;
extern const ArchRow kArchQwen3Moe;

namespace {

const ArchRow* const kRows[] = {
    &kArchLlama,
    &kArchQwen2,
    &kArchQwen2Moe,
    &kArchQwen3,
    &kArchQwen3Moe,
    &kArchPhi3,
    &kArchGemma,
    &kArchGemma2,
    &kArchGemma3,
    &kArchGptOss,
    &kArchBert,
    &kArchNomicBert,
    &kArchJinaBertV2,
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
