// Scale searches shared by the K-quant reference quantizers. They reproduce ggml's arithmetic
// operation by operation (same expressions, same summation order), so quantized bytes match files
// written by llama.cpp.
#pragma once

#include <cstdint>

namespace ggml::quant_detail {

// Round to nearest, ties to even (ggml's nearest_int), for |v| < 2^22; larger values saturate.
int nearest_int(float v);

// Symmetric levels L[i] = l + nmax, l in [-nmax, nmax - 1], scale chosen by weighted least
// squares over 19 candidate inverse scales (ggml make_qx_quants, rmse_type 1). weights == nullptr
// means w = x^2. Returns the scale (0 for an all-zero group).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* weights);

// As make_qx_quants with w = x^2, then up to 5 passes that move single values to a better level
// (ggml make_q3_quants with do_rmse). L[i] = l + nmax.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L);

// Asymmetric levels L[i] in [0, nmax] for x ~ scale * L - min, searching nstep + 1 inverse scales
// (nmax + rmin + rdelta * is) / (max - min) and fitting scale and min by weighted least squares
// (ggml make_qkx2_quants). Stores the offset (as a positive number) in *the_min; returns the scale.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad);

// The shared part of the Q4_K and Q5_K reference quantizers: fits the 8 sub-blocks of 32 values of
// one super-block with levels 0..nmax (make_qkx2_quants with weights av + |x|), stores the 6-bit
// sub-block scales and mins as multiples of *d and *dmin, and re-picks the levels L for the stored
// scales.
void quantize_k4_superblock(const float* x, int nmax, float rmin, float rdelta, int nstep, uint16_t* d,
                            uint16_t* dmin, uint8_t scales[12], uint8_t L[256]);

// Index of the IQ4_NL level (kIq4nlValues) nearest to v, ties to the larger one (ggml best_index_int8).
int iq4nl_nearest_level(float v);

}  // namespace ggml::quant_detail
