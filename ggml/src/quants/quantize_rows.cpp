// Whole-tensor quantization as a GGUF writer does it (llama-quantize without an importance matrix).
#include <stdexcept>
#include <string>

#include "ggml/quants.h"

namespace ggml {

size_t quantize_rows(Type t, const float* src, void* dst, int64_t nrows, int64_t n_per_row) {
    const TypeTraits& tt = type_traits(t);
    if (!tt.from_float_ref)
        throw std::invalid_argument(std::string("quantize_rows: cannot convert to ") + type_name(t));
    if (n_per_row % tt.block_size != 0)
        throw std::invalid_argument("quantize_rows: row length " + std::to_string(n_per_row) +
                                    " is not a multiple of the block size of " + type_name(t));
    // llama-quantize searches more scales for IQ4_NL than the reference row quantizer does.
    const FromFloatFn quantize = t == Type::IQ4_NL ? quantize_row_iq4_nl_search : tt.from_float_ref;
    const size_t rs = row_size(t, n_per_row);
    auto* out = static_cast<char*>(dst);
    for (int64_t r = 0; r < nrows; ++r) quantize(src + r * n_per_row, out + size_t(r) * rs, n_per_row);
    return size_t(nrows) * rs;
}

}  // namespace ggml
