// Tensors, operations and graphs.
//
// A Context owns tensor metadata (and, unless no_alloc, their data). Op builders record an operation
// in a new tensor whose src[] are its operands; nothing is computed until a Graph of the result is
// run by a backend. Shapes follow ggml: ne[0] is the innermost (contiguous) dimension, nb[i] the byte
// stride of dimension i.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "ggml/types.h"

namespace ggml {

constexpr int kMaxDims = 4;
constexpr int kMaxSrc = 6;
constexpr int kMaxOpParams = 16;  // int32 words

// Thrown for invalid shapes/types passed to op builders and for runtime failures of a backend.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Op : int32_t {
    None = 0,  // a leaf: weights or inputs
    Dup,       // contiguous copy (also converts type)
    Add,       // a + b, b broadcast over a
    Mul,       // a * b, b broadcast over a
    Scale,     // a * s
    RmsNorm,   // x / sqrt(mean(x^2) + eps) per row
    MulMat,    // (a^T b): a [K, M, ...] weights, b [K, N, ...] -> [M, N, ...]
    MulMatT,   // sum_i a[d, i] b[i, q]: a [D, I, h], b [I, Q, h'] -> [D, Q, h'] (attention values)
    GetRows,   // rows of a selected by I32 ids
    SetRows,   // writes rows of b into a at I32/I64 row ids; result is a (in place)
    Reshape,
    View,
    Permute,
    Transpose,
    Cont,     // contiguous copy of a (strided) tensor
    Rope,     // rotary embedding by I32 positions; mode normal or neox
    SoftMax,  // softmax(a * scale + mask) per row
    Silu,
    SwiGlu,     // silu(a) * b
    FlashAttn,  // fused attention with online softmax
    Gelu,       // GELU, tanh approximation (f16 table, as ggml's CPU backend)
    Tanh,
    Div,        // a / b, b broadcast over a
    SumRows,    // sum of each row: [1, ne1, ne2, ne3]
    TopK,       // I32 indices of each row's k largest values, largest first
    MulMatId,   // per token, the product with the weight matrices its ids select (experts)
    Norm,       // LayerNorm without weight/bias: (x - mean(x)) / sqrt(var(x) + eps) per row
    SwiGluOai,  // gpt-oss's clamped SwiGLU (swiglu_oai)
    GeluErf,    // GELU, exact (erf) form
    Count,
};
const char* op_name(Op op);

enum TensorFlags : uint32_t {
    kFlagInput = 1,   // filled by the caller before compute
    kFlagOutput = 2,  // read by the caller after compute: never reused by the allocator
    kFlagParam = 4,   // weights
};

enum RopeMode : int32_t { kRopeNormal = 0, kRopeNeox = 2 };

struct Buffer;  // backend memory (ggml/backend.h)

struct Tensor {
    Type type = Type::F32;
    int64_t ne[kMaxDims] = {1, 1, 1, 1};
    size_t nb[kMaxDims] = {0, 0, 0, 0};
    Op op = Op::None;
    int32_t op_params[kMaxOpParams] = {};
    Tensor* src[kMaxSrc] = {};
    Tensor* view_src = nullptr;  // the tensor whose memory this one views
    size_t view_offs = 0;
    void* data = nullptr;
    Buffer* buffer = nullptr;
    uint32_t flags = 0;
    char name[64] = {};

    int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t nrows() const { return ne[1] * ne[2] * ne[3]; }
    size_t nbytes() const;
    bool is_contiguous() const;
    // rows are contiguous (nb[0] == element size) even if rows themselves are strided
    bool rows_contiguous() const;
    int n_dims() const;
    void set_name(const std::string& n);

    template <typename T>
    T param(int i) const {
        static_assert(sizeof(T) == 4);
        T v;
        __builtin_memcpy(&v, &op_params[i], 4);
        return v;
    }
    template <typename T>
    void set_param(int i, T v) {
        static_assert(sizeof(T) == 4);
        __builtin_memcpy(&op_params[i], &v, 4);
    }
    // Pointer to element (i0 is in elements, i.e. blocks * block_size for quantized types).
    char* row_ptr(int64_t i1, int64_t i2 = 0, int64_t i3 = 0) const {
        return (char*)data + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
    }
};

bool same_shape(const Tensor* a, const Tensor* b);

// Owns tensors. With no_alloc, tensors get no data: a graph allocator or a backend buffer gives it.
class Context {
public:
    explicit Context(size_t data_bytes = 0, bool no_alloc = true);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    Tensor* new_tensor(Type type, int n_dims, const int64_t* ne);
    Tensor* new_tensor_1d(Type type, int64_t ne0);
    Tensor* new_tensor_2d(Type type, int64_t ne0, int64_t ne1);
    Tensor* new_tensor_3d(Type type, int64_t ne0, int64_t ne1, int64_t ne2);
    Tensor* new_tensor_4d(Type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
    bool no_alloc() const { return no_alloc_; }
    size_t n_tensors() const { return tensors_.size(); }
    // Every tensor created here, in creation order.
    template <typename F>
    void for_each(F&& f) {
        for (auto& t : tensors_) f(&t);
    }

private:
    Tensor* alloc_tensor();
    std::deque<Tensor> tensors_;
    std::unique_ptr<char[]> data_;
    size_t data_size_ = 0, data_used_ = 0;
    bool no_alloc_;
};

// ---- op builders -------------------------------------------------------------------------------
Tensor* dup(Context& ctx, Tensor* a, Type type);
Tensor* add(Context& ctx, Tensor* a, Tensor* b);
Tensor* mul(Context& ctx, Tensor* a, Tensor* b);
Tensor* scale(Context& ctx, Tensor* a, float s);
Tensor* rms_norm(Context& ctx, Tensor* a, float eps);
// LayerNorm's normalization per row (BERT): (x - mean) / sqrt(variance + eps); weight and bias are mul/add.
Tensor* norm(Context& ctx, Tensor* a, float eps);
Tensor* mul_mat(Context& ctx, Tensor* a, Tensor* b);
Tensor* mul_mat_t(Context& ctx, Tensor* a, Tensor* b);
Tensor* get_rows(Context& ctx, Tensor* a, Tensor* ids);
Tensor* set_rows(Context& ctx, Tensor* dst, Tensor* src, Tensor* ids);
Tensor* reshape_1d(Context& ctx, Tensor* a, int64_t ne0);
Tensor* reshape_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1);
Tensor* reshape_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2);
Tensor* reshape_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
Tensor* view_1d(Context& ctx, Tensor* a, int64_t ne0, size_t offset);
Tensor* view_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
Tensor* view_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2,
                size_t offset);
Tensor* view_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1,
                size_t nb2, size_t nb3, size_t offset);
// permute(a, 0, 2, 1, 3): axis i of a becomes axis axes[i] of the result.
Tensor* permute(Context& ctx, Tensor* a, int ax0, int ax1, int ax2, int ax3);
Tensor* transpose(Context& ctx, Tensor* a);
Tensor* cont(Context& ctx, Tensor* a);
// a: [head_dim, n_head, n_tokens], pos: I32 [n_tokens]. Rotates the first n_dims of each head.
Tensor* rope(Context& ctx, Tensor* a, Tensor* pos, int n_dims, int mode, float freq_base, float freq_scale);
// RoPE with the extensions llama.cpp's rope_ext has: dimension pair i turns by
// theta_i = p * base^(-2i/n_dims) / freq_factors[i] (freq_factors: F32 [n_dims / 2] or nullptr), scaled by
// freq_scale and, for YaRN (ext_factor != 0), mixed with the unscaled angle over the pairs between the
// correction dimensions of beta_fast and beta_slow; cos and sin are multiplied by attn_factor (and, with
// YaRN, by 1 + 0.1 ln(1 / freq_scale)).
struct RopeParams {
    int n_dims = 0;
    int mode = 0;  // kRopeNormal or kRopeNeox
    int n_ctx_orig = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    float ext_factor = 0.0f;
    float attn_factor = 1.0f;
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
};
Tensor* rope_ext(Context& ctx, Tensor* a, Tensor* pos, Tensor* freq_factors, const RopeParams& p);
// YaRN's correction dimensions [low, high] (pairs below low extrapolate, above high interpolate).
void rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float dims[2]);
// softmax(a * scale + mask) over rows; mask [ne0, >= ne1, 1 or ne2, 1 or ne3] F32 or F16, broadcast over
// dims 2,3 where it has one plane (nullable); a plane per head carries per-head biases (ALiBi).
// sinks: F32 [ne2] or nullptr. An attention sink (gpt-oss) is one more logit per head, sinks[i2], that
// takes part in the normalization but has no output: each row is exp(x_j - m) / (sum_j exp(x_j - m) +
// exp(sink - m)), m the maximum of the row and the sink.
Tensor* soft_max(Context& ctx, Tensor* a, Tensor* mask, float scale, Tensor* sinks = nullptr);
Tensor* silu(Context& ctx, Tensor* a);
Tensor* swiglu(Context& ctx, Tensor* a, Tensor* b);
// gpt-oss's expert activation: x = min(a, limit), y = clamp(b, -limit, limit),
// x / (1 + exp(-alpha x)) * (y + 1).
Tensor* swiglu_oai(Context& ctx, Tensor* a, Tensor* b, float alpha, float limit);
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated as ggml's CPU backend does: x rounded to f16,
// the result looked up (f16) in a table of every f16 input; 0 below -10, x above 10.
Tensor* gelu(Context& ctx, Tensor* a);
// The exact GELU, 0.5 x (1 + erf(x / sqrt(2))) (Hugging Face's "gelu"), evaluated as 0.5 x erfc(-x / sqrt(2))
// in double (no cancellation for negative x) and rounded once.
Tensor* gelu_erf(Context& ctx, Tensor* a);
Tensor* tanh(Context& ctx, Tensor* a);
Tensor* div(Context& ctx, Tensor* a, Tensor* b);
// [1, ne1, ne2, ne3]: each row's sum (accumulated in double, in order).
Tensor* sum_rows(Context& ctx, Tensor* a);
// I32 [k, ne1, ne2, ne3]: the indices of each row's k largest values, largest first (ties: lower index
// first).
Tensor* top_k(Context& ctx, Tensor* a, int k);
// Expert products. as: [K, M, n_as] (one matrix per expert), b: [K, n_b, n_tokens] with n_b 1 (every
// selected expert reads the same row) or ids->ne[0], ids: I32 [n_used, n_tokens]. Result F32
// [M, n_used, n_tokens]: column (e, t) = as[ids[e, t]] times b[:, e % n_b, t], each element one dot
// product of the activations quantized to the weight type's paired type, as mul_mat computes it.
Tensor* mul_mat_id(Context& ctx, Tensor* as, Tensor* b, Tensor* ids);
// cap * tanh(a / cap): soft-capping of attention scores and logits (gemma2).
Tensor* softcap(Context& ctx, Tensor* a, float cap);
// q [D, n_q, n_head], k [D, n_kv, n_head_kv], v [Dv, n_kv, n_head_kv], mask [n_kv, >= n_q, 1 or n_head] F32
// or F16 (one plane for every head, or one per head: ALiBi's per-head biases).
// Result [Dv, n_head, n_q] (heads then tokens, ready to reshape to [Dv*n_head, n_q]).
// softcap > 0: scores are cap * tanh(scale * s / cap) before the mask (as the unfused softcap + soft_max
// with scale 1). sinks: F32 [n_head] attention sinks, as soft_max takes them (nullable).
Tensor* flash_attn(Context& ctx, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale,
                   float softcap = 0.0f, Tensor* sinks = nullptr);

// Visible blocks of a KV cache that several sequences share, so that attention costs what a query's own
// cells cost rather than what the whole cache holds. blocks: I32 [1 + n_blocks, n_q], row j for query j:
// a count c, then c ascending indices of blocks of kKvBlock cache rows (block b: rows [b * kKvBlock,
// (b + 1) * kKvBlock) of K and V); every row outside those blocks is masked for query j. Attached to the
// ops of one attention (mul_mat of K and Q, soft_max, mul_mat_t of V, or flash_attn) as their source
// kKvBlocksSrc, it lets the CPU skip the other rows: mul_mat leaves their scores unwritten, soft_max neither
// reads nor writes them, mul_mat_t and flash_attn do not read them. The results are the same bits. Attach
// it only where the whole chain runs on the CPU (K and V in host memory). Returns op.
constexpr int64_t kKvBlock = 32;
constexpr int kKvBlocksSrc = kMaxSrc - 1;
Tensor* with_kv_blocks(Tensor* op, Tensor* blocks);

// ---- graphs ------------------------------------------------------------------------------------
struct Graph {
    std::vector<Tensor*> nodes;  // ops, parents before children
    std::vector<Tensor*> leafs;  // tensors without op (weights, inputs)
    void build_forward(Tensor* result);  // appends result and everything it depends on
    size_t n_nodes() const { return nodes.size(); }

private:
    std::unordered_set<const Tensor*> visited_;
};

}  // namespace ggml
