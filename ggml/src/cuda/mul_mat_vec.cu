// mul_mat and mul_mat_id for every weight type: one warp per (weight row, output column), each output the
// reference dot product of vec_dot.cuh (mul_mat_id's columns pick their expert's plane by id). A warp handles
// up to kMaxVecColumns columns in turn, so an output is computed the same way whatever the batch size: decode
// and prompt batches give the same bits for a token.
#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "vec_dot.cuh"

namespace ggml::cuda {

namespace {

constexpr int kRowsPerBlock = 4;  // warps per block, one weight row each

template <Type T>
__global__ void mul_mat_vec_kernel(MatVecArgs p, MatVecIds id) {
    const int64_t row = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.y;
    if (row >= p.M) return;  // the whole warp leaves together
    if (id.ids) {            // mul_mat_id: blockIdx.z is the token, the columns its selected experts
        const int64_t tok = blockIdx.z;
        const int64_t c0 = (int64_t)blockIdx.y * kMaxVecColumns;
        const int64_t c1 = c0 + kMaxVecColumns < p.N ? c0 + kMaxVecColumns : p.N;
        for (int64_t c = c0; c < c1; ++c) {
            const int32_t e = *(const int32_t*)(id.ids + c * id.nb0 + tok * id.nb1);  // one value per warp
            if (e < 0 || e >= id.n_expert) {
                if (threadIdx.x == 0) report(id.error_flag, kErrMulMatIdId);
                continue;
            }
            const float s = warp_dot<T>(p.a + row * p.a_nb1 + e * p.a_nb2,
                                        p.b + (c % id.n_b) * p.b_nb1 + tok * p.b_nb2, p.K);
            if (threadIdx.x == 0) ((float*)(p.dst + c * p.d_nb1 + tok * p.d_nb2))[row] = s;
        }
        return;
    }
    const int64_t i2 = blockIdx.z % p.ne2, i3 = blockIdx.z / p.ne2;
    const char* x = p.a + row * p.a_nb1 + (i2 / p.r2) * p.a_nb2 + (i3 / p.r3) * p.a_nb3;
    const int64_t c0 = (int64_t)blockIdx.y * kMaxVecColumns;
    const int64_t c1 = c0 + kMaxVecColumns < p.N ? c0 + kMaxVecColumns : p.N;
    for (int64_t c = c0; c < c1; ++c) {
        const float s = warp_dot<T>(x, p.b + c * p.b_nb1 + i2 * p.b_nb2 + i3 * p.b_nb3, p.K);
        if (threadIdx.x == 0) ((float*)(p.dst + c * p.d_nb1 + i2 * p.d_nb2 + i3 * p.d_nb3))[row] = s;
    }
}

template <Type T>
void launch(const MatVecArgs& p, const MatVecIds& id, cudaStream_t stream) {
    const dim3 grid((unsigned)((p.M + kRowsPerBlock - 1) / kRowsPerBlock),
                    (unsigned)((p.N + kMaxVecColumns - 1) / kMaxVecColumns), (unsigned)(p.ne2 * p.ne3));
    mul_mat_vec_kernel<T><<<grid, dim3(kWarp, kRowsPerBlock), 0, stream>>>(p, id);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_mul_mat_vec(Type weight_type, const MatVecArgs& p, cudaStream_t stream, const MatVecIds* ids) {
    if (p.M == 0 || p.N == 0 || p.ne2 * p.ne3 == 0) return;
    const MatVecIds id = ids ? *ids : MatVecIds{nullptr, 0, 0, 1, 0, nullptr};
    switch (weight_type) {
        case Type::F32:
            return launch<Type::F32>(p, id, stream);
        case Type::F16:
            return launch<Type::F16>(p, id, stream);
        case Type::BF16:
            return launch<Type::BF16>(p, id, stream);
        case Type::Q4_0:
            return launch<Type::Q4_0>(p, id, stream);
        case Type::Q4_1:
            return launch<Type::Q4_1>(p, id, stream);
        case Type::Q5_0:
            return launch<Type::Q5_0>(p, id, stream);
        case Type::Q5_1:
            return launch<Type::Q5_1>(p, id, stream);
        case Type::Q8_0:
            return launch<Type::Q8_0>(p, id, stream);
        case Type::Q2_K:
            return launch<Type::Q2_K>(p, id, stream);
        case Type::Q3_K:
            return launch<Type::Q3_K>(p, id, stream);
        case Type::Q4_K:
            return launch<Type::Q4_K>(p, id, stream);
        case Type::Q5_K:
            return launch<Type::Q5_K>(p, id, stream);
        case Type::Q6_K:
            return launch<Type::Q6_K>(p, id, stream);
        case Type::IQ4_NL:
            return launch<Type::IQ4_NL>(p, id, stream);
        default:
            throw Error(std::string("CUDA mul_mat: no kernel for ") + type_name(weight_type));
    }
}

}  // namespace ggml::cuda
