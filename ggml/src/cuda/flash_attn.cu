// Fused attention, one block per query row (query token, head), in the steps of the CPU's flash_attn
// (ggml/src/cpu/ops_attn.cpp): q converted to K's activation type; a score per unmasked cell from the
// reference dot product (vec_dot.cuh), masked cells never read; softmax with an exact denominator
// (exact_sum.h); values summed in double in cell order with f16-rounded weights for an F16 V. Soft-capping
// (gemma2) takes glibc's tanhf steps (tanh.h): the same bits as the CPU there too.
// Scores of a chunk of rows live in scratch.
#include "common.cuh"
#include "dequantize.h"
#include "error.h"
#include "ops.h"
#include "quantize.h"
#include "tanh.h"
#include "vec_dot.cuh"

namespace ggml::cuda {

namespace {

constexpr int kThreads = 128;
constexpr size_t kScoreBudget = size_t(64) << 20;  // scratch for the scores of one launch

struct FlashAttnArgs {
    const char* q;
    size_t qnb1, qnb2, qnb3;
    const char* k;
    size_t knb1, knb2, knb3;
    const char* v;
    Type vtype;
    size_t vnb1, vnb2, vnb3;
    const char* mask;  // nullable
    bool mask_f16;
    size_t mnb1, mnb2;   // mnb2 0: one plane for every head
    const float* sinks;  // nullable: one logit per head (attention sinks)
    char* d;
    size_t dnb1, dnb2, dnb3;
    float* scores;
    Type qtype;  // K's activation type
    int64_t qblock;
    int64_t D, Dv, n_q, H, n_kv, ratio, total_rows;
    float scale;    // divided by the cap when soft-capping, as the CPU does
    float softcap;  // 0: none
};

template <Type KT>
__global__ void flash_attn_kernel(FlashAttnArgs p, int64_t row0) {
    extern __shared__ float4 qc_storage[];  // the query row in K's activation type (16-byte aligned)
    char* qc = (char*)qc_storage;
    __shared__ float maxes[kThreads / kWarp];
    __shared__ unsigned long long sums[2 * (kThreads / kWarp)];
    const float neg_inf = -INFINITY;
    const int64_t r = row0 + blockIdx.x;
    const int64_t h = r % p.H, iq = (r / p.H) % p.n_q, i3 = r / (p.H * p.n_q), hk = h / p.ratio;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;

    const float* qrow = (const float*)(p.q + iq * p.qnb1 + h * p.qnb2 + i3 * p.qnb3);
    for (int64_t ib = threadIdx.x; ib < p.D / p.qblock; ib += blockDim.x)
        quantize_block(p.qtype, qrow + ib * p.qblock, qc, ib);
    __syncthreads();

    float* score = p.scores + blockIdx.x * p.n_kv;
    const char* mrow = p.mask ? p.mask + iq * p.mnb1 + h * p.mnb2 : nullptr;
    float mx = neg_inf;
    for (int64_t i = warp; i < p.n_kv; i += blockDim.x / kWarp) {
        float mv = 0.0f;
        if (mrow) mv = p.mask_f16 ? h2f(((const uint16_t*)mrow)[i]) : ((const float*)mrow)[i];
        float s = neg_inf;
        if (mv != neg_inf)
            s = attn_score(warp_dot<KT>(p.k + i * p.knb1 + hk * p.knb2 + i3 * p.knb3, qc, p.D), p.scale,
                           p.softcap, mv);
        if (lane == 0) score[i] = s;
        mx = s > mx ? s : mx;
    }
    mx = block_max(mx, maxes);  // its barriers also publish the scores to the whole block
    if (p.sinks) mx = p.sinks[h] > mx ? p.sinks[h] : mx;  // as soft_max: the sink joins max and sum

    ExactSum es;
    for (int64_t i = threadIdx.x; i < p.n_kv; i += blockDim.x) {
        const float e = score[i] == neg_inf ? 0.0f : exp_f32(score[i] - mx);
        score[i] = e;
        es.add(e);
    }
    double sum = block_exact_sum(es, sums);
    if (p.sinks) sum += (double)exp_f32(p.sinks[h] - mx);
    const float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;

    float* out = (float*)(p.d + h * p.dnb1 + iq * p.dnb2 + i3 * p.dnb3);
    for (int64_t d = threadIdx.x; d < p.Dv; d += blockDim.x) {
        double acc = 0.0;
        for (int64_t i = 0; i < p.n_kv; ++i) {
            float w = score[i] * inv;
            if (p.vtype == Type::F16) w = h2f(f2h(w));
            if (w == 0.0f) continue;
            acc += (double)w * (double)dequantize(p.vtype, p.v + i * p.vnb1 + hk * p.vnb2 + i3 * p.vnb3, d);
        }
        out[d] = (float)acc;
    }
}

int64_t total_rows(const Tensor* t) {
    return t->src[0]->ne[1] * t->src[0]->ne[2] * t->src[0]->ne[3];
}

int64_t chunk_rows(const Tensor* t) {
    const int64_t per_row = t->src[1]->ne[1] * (int64_t)sizeof(float);
    const int64_t fit = per_row > 0 ? (int64_t)kScoreBudget / per_row : total_rows(t);
    const int64_t rows = fit < total_rows(t) ? fit : total_rows(t);
    return rows < 1 ? 1 : rows;
}

template <Type KT>
void launch(const FlashAttnArgs& p, int64_t chunk, size_t smem, cudaStream_t stream) {
    for (int64_t row0 = 0; row0 < p.total_rows; row0 += chunk) {
        const int64_t rows = p.total_rows - row0 < chunk ? p.total_rows - row0 : chunk;
        flash_attn_kernel<KT><<<(unsigned)rows, kThreads, smem, stream>>>(p, row0);
        CUDA_CHECK_LAUNCH();
    }
}

}  // namespace

size_t flash_attn_scratch(const Tensor* t) {
    return (size_t)chunk_rows(t) * (size_t)t->src[1]->ne[1] * sizeof(float);
}

void run_flash_attn(ExecContext& ctx, Tensor* t) {
    const Tensor* q = t->src[0];
    const Tensor* k = t->src[1];
    const Tensor* v = t->src[2];
    const Tensor* mask = t->src[3];
    if (flash_attn_scratch(t) > ctx.scratch_size) throw Error("CUDA flash_attn: scratch too small");
    FlashAttnArgs p{};
    p.q = (const char*)q->data;
    p.qnb1 = q->nb[1], p.qnb2 = q->nb[2], p.qnb3 = q->nb[3];
    p.k = (const char*)k->data;
    p.knb1 = k->nb[1], p.knb2 = k->nb[2], p.knb3 = k->nb[3];
    p.v = (const char*)v->data;
    p.vtype = v->type;
    p.vnb1 = v->nb[1], p.vnb2 = v->nb[2], p.vnb3 = v->nb[3];
    p.mask = mask ? (const char*)mask->data : nullptr;
    p.mask_f16 = mask && mask->type == Type::F16;
    p.mnb1 = mask ? mask->nb[1] : 0;
    p.mnb2 = mask && mask->ne[2] > 1 ? mask->nb[2] : 0;  // a plane per head (ALiBi)
    p.sinks = t->src[4] ? (const float*)t->src[4]->data : nullptr;
    p.d = (char*)t->data;
    p.dnb1 = t->nb[1], p.dnb2 = t->nb[2], p.dnb3 = t->nb[3];
    p.scores = (float*)ctx.scratch;
    p.qtype = type_traits(k->type).vec_dot_type;
    p.qblock = block_size(p.qtype);
    p.D = q->ne[0], p.Dv = v->ne[0], p.n_q = q->ne[1], p.H = q->ne[2], p.n_kv = k->ne[1];
    p.ratio = q->ne[2] / k->ne[2];
    p.total_rows = total_rows(t);
    p.softcap = t->param<float>(1);
    p.scale = p.softcap != 0.0f ? t->param<float>(0) / p.softcap : t->param<float>(0);
    if (p.total_rows == 0) return;
    const size_t smem = (row_size(p.qtype, p.D) + 15) / 16 * 16;
    const int64_t chunk = chunk_rows(t);
    switch (k->type) {
        case Type::F32:
            return launch<Type::F32>(p, chunk, smem, ctx.stream);
        case Type::F16:
            return launch<Type::F16>(p, chunk, smem, ctx.stream);
        case Type::BF16:
            return launch<Type::BF16>(p, chunk, smem, ctx.stream);
        case Type::Q8_0:
            return launch<Type::Q8_0>(p, chunk, smem, ctx.stream);
        case Type::Q4_0:
            return launch<Type::Q4_0>(p, chunk, smem, ctx.stream);
        case Type::Q4_1:
            return launch<Type::Q4_1>(p, chunk, smem, ctx.stream);
        case Type::Q5_0:
            return launch<Type::Q5_0>(p, chunk, smem, ctx.stream);
        case Type::Q5_1:
            return launch<Type::Q5_1>(p, chunk, smem, ctx.stream);
        case Type::IQ4_NL:
            return launch<Type::IQ4_NL>(p, chunk, smem, ctx.stream);
        default:
            throw Error(std::string("CUDA flash_attn: unsupported K type ") + type_name(k->type));
    }
}

}  // namespace ggml::cuda
