// llama.cpp's model file types (general.file_type, llama_ftype): the names llama-quantize takes, each
// with the tensor type most weights get. The numbers are llama.cpp's; never renumber.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ggml/gguf.h"
#include "ggml/types.h"

namespace engine::quant {

enum class FileType : uint32_t {
    ALL_F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q8_0 = 7,
    Q5_0 = 8,
    Q5_1 = 9,
    Q2_K = 10,
    Q3_K_S = 11,
    Q3_K_M = 12,
    Q3_K_L = 13,
    Q4_K_S = 14,
    Q4_K_M = 15,
    Q5_K_S = 16,
    Q5_K_M = 17,
    Q6_K = 18,
    IQ2_XXS = 19,
    IQ2_XS = 20,
    Q2_K_S = 21,
    IQ3_XS = 22,
    IQ3_XXS = 23,
    IQ1_S = 24,
    IQ4_NL = 25,
    IQ3_S = 26,
    IQ3_M = 27,
    IQ2_S = 28,
    IQ2_M = 29,
    IQ4_XS = 30,
    IQ1_M = 31,
    BF16 = 32,
    TQ1_0 = 36,
    TQ2_0 = 37,
    MXFP4_MOE = 38,
};
constexpr uint32_t kFileTypeGuessed = 1024;  // llama.cpp's flag for a file type guessed from the tensors

struct FileTypeInfo {
    const char* name;  // as llama-quantize spells it; "COPY" copies every tensor unchanged
    FileType ftype;
    ggml::Type default_type;  // the type of the weights no mix rule picks otherwise
    const char* description;
};

// llama-quantize's list, in its order (aliases Q3_K, Q4_K, Q5_K before the names they stand for).
std::span<const FileTypeInfo> file_types();
// A name (case-insensitive) or a number; nullptr if neither. A number names the first entry with it.
const FileTypeInfo* parse_file_type(const std::string& s);
// Why a name llama.cpp knows cannot be used here ("" if the name is not one of those).
std::string unsupported_file_type_reason(const std::string& s);
// The canonical name of a general.file_type value ("Q4_K_M"), or "unknown (N)".
std::string file_type_name(uint32_t ftype);

// The name llama.cpp gives a file type where llama-server reports it (/props `model_ftype`, /v1/models
// `meta.ftype`): "Q4_K - Medium", "all F32", "unknown, may not work"; "(guessed) " before a guessed one.
std::string file_type_report_name(uint32_t ftype);

// llama.cpp's guess of a file's type (marked kFileTypeGuessed) from its tensors' types in tensor-name
// order: the type most of them have.
uint32_t guess_file_type(const std::vector<ggml::Type>& types);

// A model file's type as llama.cpp reads it: general.file_type, else guessed.
uint32_t model_file_type(const ggml::gguf::File& file);

}  // namespace engine::quant
