// <immintrin.h> for the kernels. GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized on their own
// _mm*_undefined_* helpers once inlined (GCC PR 105593, fixed in GCC 13): silenced for this header only.
// Include it before anything else that could include <immintrin.h>.
#pragma once

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif
