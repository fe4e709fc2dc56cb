// `ggserve quantize`: rewrites a GGUF model with its weights in another type, as llama-quantize does.
//
// The output has the input's metadata in the same order, minus split keys and minus the two keys that
// are set again at the end: general.quantization_version (2) and general.file_type; --override-kv
// entries follow. Tensors come in llama.cpp's weight order (tensor_rules.h: sort_weights) with the types
// the mix rules choose, each quantized by ggml's reference quantizers (what llama-quantize writes without
// an importance matrix), rows split over threads. The file is written to OUT.part and renamed at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/quantize/file_type.h"
#include "engine/quantize/tensor_rules.h"
#include "ggml/gguf.h"

namespace engine::quant {

struct QuantizeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct QuantizeOptions {
    std::string input, output;
    FileType ftype = FileType::Q8_0;
    bool only_copy = false;  // COPY: every tensor as it is; general.file_type from the input
    int n_threads = 0;       // <= 0: every hardware thread
    bool allow_requantize = false;
    bool leave_output_tensor = false;
    bool pure = false;
    bool dry_run = false;     // print the plan and sizes, write nothing
    bool keep_split = false;  // single-file input only: OUT-00001-of-00001.gguf, as llama-quantize names it
    std::optional<ggml::Type> output_tensor_type, token_embedding_type;
    std::vector<TensorTypeOverride> tensor_types;
    // Set in the output after everything else (llama-quantize's --override-kv: ints are written as u32).
    std::vector<std::pair<std::string, ggml::gguf::Value>> kv_overrides;
};

struct QuantizeReport {
    std::string output_path;  // "" for a dry run
    size_t n_tensors = 0, n_quantized = 0, n_fallback = 0;
    uint64_t bytes_in = 0, bytes_out = 0, n_elements = 0;
};

// Types a tensor can be written in: f32, f16, bf16 and the block types with a quantizer. Returns "" if
// t can be written, else why not.
std::string why_not_writable(ggml::Type t);

// Runs the whole conversion. log gets llama-quantize-style progress lines. Throws QuantizeError for
// every refusal (same input and output, requantizing without allow_requantize, a type needing an
// importance matrix, non-finite data, split inputs) and for I/O errors; no output is left behind.
QuantizeReport quantize_model(const QuantizeOptions& options, const std::function<void(const std::string&)>& log);

}  // namespace engine::quant
