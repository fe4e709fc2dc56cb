#include "engine/quantize/file_type.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <vector>

namespace engine::quant {

namespace {

using T = ggml::Type;
using F = FileType;

// Descriptions: what the weights become (the mix rules are in tensor_rules.cpp).
constexpr FileTypeInfo kFileTypes[] = {
    {"Q4_0", F::Q4_0, T::Q4_0, "q4_0, 4.5 bits per weight"},
    {"Q4_1", F::Q4_1, T::Q4_1, "q4_1, 5.0 bits per weight"},
    {"MXFP4_MOE", F::MXFP4_MOE, T::MXFP4, "mxfp4 experts, q8_0 other weights"},
    {"Q5_0", F::Q5_0, T::Q5_0, "q5_0, 5.5 bits per weight"},
    {"Q5_1", F::Q5_1, T::Q5_1, "q5_1, 6.0 bits per weight"},
    {"IQ2_XXS", F::IQ2_XXS, T::IQ2_XXS, "iq2_xxs mix (needs an importance matrix: refused)"},
    {"IQ2_XS", F::IQ2_XS, T::IQ2_XS, "iq2_xs mix (needs an importance matrix: refused)"},
    {"IQ2_S", F::IQ2_S, T::IQ2_XS, "iq2_xs/iq3_s mix (needs an importance matrix: refused)"},
    {"IQ2_M", F::IQ2_M, T::IQ2_S, "iq2_s/iq3_s mix (needs an importance matrix: refused)"},
    {"IQ1_S", F::IQ1_S, T::IQ1_S, "iq1_s mix (needs an importance matrix: refused)"},
    {"IQ1_M", F::IQ1_M, T::IQ1_M, "iq1_m mix (needs an importance matrix: refused)"},
    {"TQ1_0", F::TQ1_0, T::TQ1_0, "tq1_0 ternary, 1.69 bits per weight"},
    {"TQ2_0", F::TQ2_0, T::TQ2_0, "tq2_0 ternary, 2.06 bits per weight"},
    {"Q2_K", F::Q2_K, T::Q2_K, "q2_K mix (attn_v, ffn_down, attn_output q3_K or q4_K)"},
    {"Q2_K_S", F::Q2_K_S, T::Q2_K, "q2_K, smaller mix (needs an importance matrix: refused)"},
    {"IQ3_XXS", F::IQ3_XXS, T::IQ3_XXS, "iq3_xxs mix (needs an importance matrix: refused)"},
    {"IQ3_S", F::IQ3_S, T::IQ3_S, "iq3_s, 3.44 bits per weight"},
    {"IQ3_M", F::IQ3_M, T::IQ3_S, "iq3_s mix (attn_v, attn_output, first ffn_down q4_K)"},
    {"Q3_K", F::Q3_K_M, T::Q3_K, "alias for Q3_K_M"},
    {"IQ3_XS", F::IQ3_XS, T::IQ3_S, "iq3_s/iq3_xxs mix (needs an importance matrix: refused)"},
    {"Q3_K_S", F::Q3_K_S, T::Q3_K, "q3_K everywhere but the output"},
    {"Q3_K_M", F::Q3_K_M, T::Q3_K, "q3_K mix (attn_v, ffn_down, attn_output q4_K or q5_K)"},
    {"Q3_K_L", F::Q3_K_L, T::Q3_K, "q3_K mix (attn_v, ffn_down, attn_output q5_K)"},
    {"IQ4_NL", F::IQ4_NL, T::IQ4_NL, "iq4_nl, 4.5 bits per weight"},
    {"IQ4_XS", F::IQ4_XS, T::IQ4_XS, "iq4_xs, 4.25 bits per weight"},
    {"Q4_K", F::Q4_K_M, T::Q4_K, "alias for Q4_K_M"},
    {"Q4_K_S", F::Q4_K_S, T::Q4_K, "q4_K mix (first attn_v and ffn_down q5_K)"},
    {"Q4_K_M", F::Q4_K_M, T::Q4_K, "q4_K mix (half of attn_v and ffn_down q6_K)"},
    {"Q5_K", F::Q5_K_M, T::Q5_K, "alias for Q5_K_M"},
    {"Q5_K_S", F::Q5_K_S, T::Q5_K, "q5_K everywhere but the output"},
    {"Q5_K_M", F::Q5_K_M, T::Q5_K, "q5_K mix (half of attn_v and ffn_down q6_K)"},
    {"Q6_K", F::Q6_K, T::Q6_K, "q6_K, 6.56 bits per weight"},
    {"Q8_0", F::Q8_0, T::Q8_0, "q8_0, 8.5 bits per weight"},
    {"F16", F::F16, T::F16, "f16, 16 bits per weight"},
    {"BF16", F::BF16, T::BF16, "bf16, 16 bits per weight"},
    {"F32", F::ALL_F32, T::F32, "f32, 32 bits per weight"},
    {"COPY", F::ALL_F32, T::F32, "copy every tensor unchanged"},
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

std::string file_type_report_name(uint32_t ftype) {
    const char* name = "unknown, may not work";
    switch ((FileType)(ftype & ~kFileTypeGuessed)) {
        case FileType::ALL_F32: name = "all F32"; break;
        case FileType::F16: name = "F16"; break;
        case FileType::BF16: name = "BF16"; break;
        case FileType::Q4_0: name = "Q4_0"; break;
        case FileType::Q4_1: name = "Q4_1"; break;
        case FileType::Q5_0: name = "Q5_0"; break;
        case FileType::Q5_1: name = "Q5_1"; break;
        case FileType::Q8_0: name = "Q8_0"; break;
        case FileType::MXFP4_MOE: name = "MXFP4 MoE"; break;
        case FileType::Q2_K: name = "Q2_K - Medium"; break;
        case FileType::Q2_K_S: name = "Q2_K - Small"; break;
        case FileType::Q3_K_S: name = "Q3_K - Small"; break;
        case FileType::Q3_K_M: name = "Q3_K - Medium"; break;
        case FileType::Q3_K_L: name = "Q3_K - Large"; break;
        case FileType::Q4_K_S: name = "Q4_K - Small"; break;
        case FileType::Q4_K_M: name = "Q4_K - Medium"; break;
        case FileType::Q5_K_S: name = "Q5_K - Small"; break;
        case FileType::Q5_K_M: name = "Q5_K - Medium"; break;
        case FileType::Q6_K: name = "Q6_K"; break;
        case FileType::TQ1_0: name = "TQ1_0 - 1.69 bpw ternary"; break;
        case FileType::TQ2_0: name = "TQ2_0 - 2.06 bpw ternary"; break;
        case FileType::IQ2_XXS: name = "IQ2_XXS - 2.0625 bpw"; break;
        case FileType::IQ2_XS: name = "IQ2_XS - 2.3125 bpw"; break;
        case FileType::IQ2_S: name = "IQ2_S - 2.5 bpw"; break;
        case FileType::IQ2_M: name = "IQ2_M - 2.7 bpw"; break;
        case FileType::IQ3_XS: name = "IQ3_XS - 3.3 bpw"; break;
        case FileType::IQ3_XXS: name = "IQ3_XXS - 3.0625 bpw"; break;
        case FileType::IQ1_S: name = "IQ1_S - 1.5625 bpw"; break;
        case FileType::IQ1_M: name = "IQ1_M - 1.75 bpw"; break;
        case FileType::IQ4_NL: name = "IQ4_NL - 4.5 bpw"; break;
        case FileType::IQ4_XS: name = "IQ4_XS - 4.25 bpw"; break;
        case FileType::IQ3_S: name = "IQ3_S - 3.4375 bpw"; break;
        case FileType::IQ3_M: name = "IQ3_S mix - 3.66 bpw"; break;
    }
    return (ftype & kFileTypeGuessed ? "(guessed) " : "") + std::string(name);
}

uint32_t guess_file_type(const std::vector<ggml::Type>& types) {
    // The first type to reach the largest count, as llama.cpp counts them (in tensor-name order).
    std::map<ggml::Type, size_t> count;
    ggml::Type most = ggml::Type::F32;
    size_t n_most = 0;
    for (const ggml::Type t : types)
        if (++count[t] > n_most) n_most = count[t], most = t;
    static const std::map<T, F> kByType = {
        {T::F32, F::ALL_F32},     {T::F16, F::F16},       {T::BF16, F::BF16},       {T::Q4_0, F::Q4_0},
        {T::Q4_1, F::Q4_1},       {T::Q5_0, F::Q5_0},     {T::Q5_1, F::Q5_1},       {T::Q8_0, F::Q8_0},
        {T::Q2_K, F::Q2_K},       {T::Q3_K, F::Q3_K_M},   {T::Q4_K, F::Q4_K_M},     {T::Q5_K, F::Q5_K_M},
        {T::Q6_K, F::Q6_K},       {T::TQ1_0, F::TQ1_0},   {T::TQ2_0, F::TQ2_0},     {T::IQ2_XXS, F::IQ2_XXS},
        {T::IQ2_XS, F::IQ2_XS},   {T::IQ2_S, F::IQ2_S},   {T::IQ3_XXS, F::IQ3_XXS}, {T::IQ1_S, F::IQ1_S},
        {T::IQ1_M, F::IQ1_M},     {T::IQ4_NL, F::IQ4_NL}, {T::IQ4_XS, F::IQ4_XS},   {T::IQ3_S, F::IQ3_S},
        {T::MXFP4, F::MXFP4_MOE},
    };
    const auto it = kByType.find(most);
    return (uint32_t)(it == kByType.end() ? F::ALL_F32 : it->second) | kFileTypeGuessed;
}

uint32_t model_file_type(const ggml::gguf::File& file) {
    if (file.has("general.file_type")) return (uint32_t)file.get_int("general.file_type", 0);
    std::vector<const ggml::gguf::TensorInfo*> by_name;
    for (const auto& t : file.tensors()) by_name.push_back(&t);
    std::sort(by_name.begin(), by_name.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
    std::vector<ggml::Type> types;
    for (const auto* t : by_name) types.push_back(t->type);
    return guess_file_type(types);
}

}  // namespace engine::quant
