#include "engine/quantize/file_type.h"

#include <cctype>
#include <cstdlib>

namespace engine::quant {

namespace {

using T = ggml::Type;
using F = FileType;

// Sizes and perplexity deltas are llama-quantize's published figures for Llama-3-8B (Mistral-7B for the
// 16-bit types); ggserve writes the same tensor types, so they carry over.
constexpr FileTypeInfo kFileTypes[] = {
    {"Q4_0", F::Q4_0, T::Q4_0, " 4.34G, +0.4685 ppl @ Llama-3-8B"},
    {"Q4_1", F::Q4_1, T::Q4_1, " 4.78G, +0.4511 ppl @ Llama-3-8B"},
    {"MXFP4_MOE", F::MXFP4_MOE, T::MXFP4, " MXFP4 experts, Q8_0 elsewhere"},
    {"Q5_0", F::Q5_0, T::Q5_0, " 5.21G, +0.1316 ppl @ Llama-3-8B"},
    {"Q5_1", F::Q5_1, T::Q5_1, " 5.65G, +0.1062 ppl @ Llama-3-8B"},
    {"IQ2_XXS", F::IQ2_XXS, T::IQ2_XXS, " 2.06 bpw (needs an importance matrix)"},
    {"IQ2_XS", F::IQ2_XS, T::IQ2_XS, " 2.31 bpw (needs an importance matrix)"},
    {"IQ2_S", F::IQ2_S, T::IQ2_XS, " 2.5  bpw (needs an importance matrix)"},
    {"IQ2_M", F::IQ2_M, T::IQ2_S, " 2.7  bpw (needs an importance matrix)"},
    {"IQ1_S", F::IQ1_S, T::IQ1_S, " 1.56 bpw (needs an importance matrix)"},
    {"IQ1_M", F::IQ1_M, T::IQ1_M, " 1.75 bpw (needs an importance matrix)"},
    {"TQ1_0", F::TQ1_0, T::TQ1_0, " 1.69 bpw ternarization"},
    {"TQ2_0", F::TQ2_0, T::TQ2_0, " 2.06 bpw ternarization"},
    {"Q2_K", F::Q2_K, T::Q2_K, " 2.96G, +3.5199 ppl @ Llama-3-8B"},
    {"Q2_K_S", F::Q2_K_S, T::Q2_K, " 2.96G, +3.1836 ppl @ Llama-3-8B (needs an importance matrix)"},
    {"IQ3_XXS", F::IQ3_XXS, T::IQ3_XXS, " 3.06 bpw (needs an importance matrix)"},
    {"IQ3_S", F::IQ3_S, T::IQ3_S, " 3.44 bpw quantization"},
    {"IQ3_M", F::IQ3_M, T::IQ3_S, " 3.66 bpw quantization mix"},
    {"Q3_K", F::Q3_K_M, T::Q3_K, "alias for Q3_K_M"},
    {"IQ3_XS", F::IQ3_XS, T::IQ3_S, " 3.3 bpw (needs an importance matrix)"},
    {"Q3_K_S", F::Q3_K_S, T::Q3_K, " 3.41G, +1.6321 ppl @ Llama-3-8B"},
    {"Q3_K_M", F::Q3_K_M, T::Q3_K, " 3.74G, +0.6569 ppl @ Llama-3-8B"},
    {"Q3_K_L", F::Q3_K_L, T::Q3_K, " 4.03G, +0.5562 ppl @ Llama-3-8B"},
    {"IQ4_NL", F::IQ4_NL, T::IQ4_NL, " 4.50 bpw non-linear quantization"},
    {"IQ4_XS", F::IQ4_XS, T::IQ4_XS, " 4.25 bpw non-linear quantization"},
    {"Q4_K", F::Q4_K_M, T::Q4_K, "alias for Q4_K_M"},
    {"Q4_K_S", F::Q4_K_S, T::Q4_K, " 4.37G, +0.2689 ppl @ Llama-3-8B"},
    {"Q4_K_M", F::Q4_K_M, T::Q4_K, " 4.58G, +0.1754 ppl @ Llama-3-8B"},
    {"Q5_K", F::Q5_K_M, T::Q5_K, "alias for Q5_K_M"},
    {"Q5_K_S", F::Q5_K_S, T::Q5_K, " 5.21G, +0.1049 ppl @ Llama-3-8B"},
    {"Q5_K_M", F::Q5_K_M, T::Q5_K, " 5.33G, +0.0569 ppl @ Llama-3-8B"},
    {"Q6_K", F::Q6_K, T::Q6_K, " 6.14G, +0.0217 ppl @ Llama-3-8B"},
    {"Q8_0", F::Q8_0, T::Q8_0, " 7.96G, +0.0026 ppl @ Llama-3-8B"},
    {"F16", F::F16, T::F16, "14.00G, +0.0020 ppl @ Mistral-7B"},
    {"BF16", F::BF16, T::BF16, "14.00G, -0.0050 ppl @ Mistral-7B"},
    {"F32", F::ALL_F32, T::F32, "26.00G              @ 7B"},
    {"COPY", F::ALL_F32, T::F32, "only copy tensors, no quantizing"},
};

bool iequals(const std::string& a, const char* b) {
    size_t i = 0;
    for (; i < a.size() && b[i]; ++i)
        if (std::tolower((unsigned char)a[i]) != std::tolower((unsigned char)b[i])) return false;
    return i == a.size() && !b[i];
}

}  // namespace

std::span<const FileTypeInfo> file_types() { return kFileTypes; }

const FileTypeInfo* parse_file_type(const std::string& s) {
    for (const auto& ft : kFileTypes)
        if (iequals(s, ft.name)) return &ft;
    if (s.empty() || s.size() > 9) return nullptr;
    for (char c : s)
        if (!std::isdigit((unsigned char)c)) return nullptr;
    const unsigned long n = std::strtoul(s.c_str(), nullptr, 10);
    for (const auto& ft : kFileTypes)
        if ((unsigned long)ft.ftype == n) return &ft;
    return nullptr;
}

std::string unsupported_file_type_reason(const std::string& s) {
    // File types of newer llama.cpp builds whose tensor types ggserve does not have.
    static const char* const kForeign[][2] = {{"Q1_0", "40"}, {"Q2_0", ""}, {"NVFP4", "39"}};
    for (const auto& f : kForeign)
        if (iequals(s, f[0]) || (*f[1] && s == f[1]))
            return std::string("file type ") + f[0] + " is not supported: ggserve has no " + f[0] + " tensor type";
    return "";
}

std::string file_type_name(uint32_t ftype) {
    const bool guessed = ftype & kFileTypeGuessed;
    const uint32_t base = ftype & ~kFileTypeGuessed;
    for (const auto& ft : kFileTypes) {
        // The aliases come first in the table; the canonical name is the last entry with the number.
        if ((uint32_t)ft.ftype != base || std::string(ft.name) == "COPY") continue;
        const FileTypeInfo* last = &ft;
        for (const auto& g : kFileTypes)
            if (g.ftype == ft.ftype && std::string(g.name) != "COPY") last = &g;
        return std::string(last->name) + (guessed ? " (guessed)" : "");
    }
    return "unknown (" + std::to_string(ftype) + ")";
}

}  // namespace engine::quant
