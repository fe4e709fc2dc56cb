// Op builders: validate operand shapes and record the op in a new result tensor.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "ggml/ggml.h"

namespace ggml {

namespace {

[[noreturn]] void fail(const char* op, const std::string& why) { throw Error(std::string(op) + ": " + why); }

std::string shape_str(const Tensor* t) {
    return "[" + std::to_string(t->ne[0]) + "," + std::to_string(t->ne[1]) + "," + std::to_string(t->ne[2]) +
           "," + std::to_string(t->ne[3]) + "]";
}

Tensor* result(Context& ctx, Op op, Type type, const int64_t* ne, Tensor* a, Tensor* b = nullptr,
               Tensor* c = nullptr, Tensor* d = nullptr) {
    Tensor* t = ctx.new_tensor(type, kMaxDims, ne);
    t->op = op;
    t->src[0] = a;
    t->src[1] = b;
    t->src[2] = c;
    t->src[3] = d;
    return t;
}

Tensor* result_like(Context& ctx, Op op, Tensor* a, Tensor* b = nullptr) {
    return result(ctx, op, Type::F32, a->ne, a, b);
}

// A tensor sharing a's memory with the given shape and strides.
Tensor* make_view(Context& ctx, Op op, Tensor* a, const int64_t* ne, const size_t* nb, size_t offset) {
    Tensor* t = ctx.new_tensor(a->type, kMaxDims, ne);
    for (int i = 0; i < kMaxDims; ++i) t->nb[i] = nb[i];
    t->op = op;
    t->src[0] = a;
    Tensor* root = a->view_src ? a->view_src : a;
    t->view_src = root;
    t->view_offs = (a->view_src ? a->view_offs : 0) + offset;
    if (root->data) t->data = (char*)root->data + t->view_offs;
    t->buffer = root->buffer;
    return t;
}

bool can_broadcast(const Tensor* a, const Tensor* b) {
    for (int i = 0; i < kMaxDims; ++i)
        if (b->ne[i] == 0 || a->ne[i] % b->ne[i] != 0) return false;
    return true;
}

void require_f32(const char* op, const Tensor* t) {
    if (t->type != Type::F32) fail(op, std::string("expects F32, got ") + type_name(t->type));
}

}  // namespace

const char* op_name(Op op) {
    static const char* names[] = {"none",    "dup",        "add",      "mul",        "scale",    "rms_norm",
                                  "mul_mat", "mul_mat_t",  "get_rows", "set_rows",   "reshape",  "view",
                                  "permute", "transpose",  "cont",     "rope",       "soft_max", "silu",
                                  "swiglu",  "flash_attn", "gelu",     "tanh",       "div",      "sum_rows",
                                  "top_k",   "mul_mat_id", "norm",     "swiglu_oai", "gelu_erf"};
    static_assert(sizeof(names) / sizeof(names[0]) == (size_t)Op::Count);
    const auto i = (size_t)op;
    return i < (size_t)Op::Count ? names[i] : "invalid";
}

Tensor* dup(Context& ctx, Tensor* a, Type type) {
    if (a->ne[0] % block_size(type) != 0) fail("dup", "row length not a multiple of the target block size");
    return result(ctx, Op::Dup, type, a->ne, a);
}

Tensor* cont(Context& ctx, Tensor* a) { return result(ctx, Op::Cont, a->type, a->ne, a); }

Tensor* add(Context& ctx, Tensor* a, Tensor* b) {
    require_f32("add", a);
    require_f32("add", b);
    if (!can_broadcast(a, b)) fail("add", "cannot broadcast " + shape_str(b) + " to " + shape_str(a));
    return result_like(ctx, Op::Add, a, b);
}

Tensor* mul(Context& ctx, Tensor* a, Tensor* b) {
    require_f32("mul", a);
    require_f32("mul", b);
    if (!can_broadcast(a, b)) fail("mul", "cannot broadcast " + shape_str(b) + " to " + shape_str(a));
    return result_like(ctx, Op::Mul, a, b);
}

Tensor* scale(Context& ctx, Tensor* a, float s) {
    require_f32("scale", a);
    Tensor* t = result_like(ctx, Op::Scale, a);
    t->set_param<float>(0, s);
    return t;
}

Tensor* rms_norm(Context& ctx, Tensor* a, float eps) {
    require_f32("rms_norm", a);
    Tensor* t = result_like(ctx, Op::RmsNorm, a);
    t->set_param<float>(0, eps);
    return t;
}

Tensor* norm(Context& ctx, Tensor* a, float eps) {
    require_f32("norm", a);
    Tensor* t = result_like(ctx, Op::Norm, a);
    t->set_param<float>(0, eps);
    return t;
}

Tensor* mul_mat(Context& ctx, Tensor* a, Tensor* b) {
    if (a->ne[0] != b->ne[0]) fail("mul_mat", "inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
    if (b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        fail("mul_mat", "cannot broadcast " + shape_str(a) + " over " + shape_str(b));
    if (!a->rows_contiguous() || !b->rows_contiguous()) fail("mul_mat", "rows must be contiguous");
    if (!type_traits(a->type).vec_dot_ref) fail("mul_mat", std::string("no dot product for ") + type_name(a->type));
    if (b->type != Type::F32 && b->type != type_traits(a->type).vec_dot_type)
        fail("mul_mat", "b must be F32 or the paired activation type");
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    return result(ctx, Op::MulMat, Type::F32, ne, a, b);
}

Tensor* mul_mat_t(Context& ctx, Tensor* a, Tensor* b) {
    if (a->ne[1] != b->ne[0]) fail("mul_mat_t", "inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
    if (b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        fail("mul_mat_t", "cannot broadcast " + shape_str(a) + " over " + shape_str(b));
    if (a->type != Type::F32 && a->type != Type::F16 && a->type != Type::BF16)
        fail("mul_mat_t", std::string("unsupported type ") + type_name(a->type));
    if (!a->rows_contiguous()) fail("mul_mat_t", "rows of a must be contiguous");
    require_f32("mul_mat_t", b);
    const int64_t ne[4] = {a->ne[0], b->ne[1], b->ne[2], b->ne[3]};
    return result(ctx, Op::MulMatT, Type::F32, ne, a, b);
}

Tensor* get_rows(Context& ctx, Tensor* a, Tensor* ids) {
    if (ids->type != Type::I32) fail("get_rows", "ids must be I32");
    if (!type_traits(a->type).to_float && a->type != Type::F32) fail("get_rows", "type has no conversion to float");
    const int64_t ne[4] = {a->ne[0], ids->ne[0], ids->ne[1], 1};
    return result(ctx, Op::GetRows, Type::F32, ne, a, ids);
}

Tensor* set_rows(Context& ctx, Tensor* dst, Tensor* src, Tensor* ids) {
    if (ids->type != Type::I32 && ids->type != Type::I64) fail("set_rows", "ids must be I32 or I64");
    if (src->ne[0] != dst->ne[0]) fail("set_rows", "row lengths differ");
    if (ids->ne[0] != src->ne[1]) fail("set_rows", "one id per source row required");
    if (src->ne[2] != 1 || src->ne[3] != 1 || dst->ne[2] != 1 || dst->ne[3] != 1)
        fail("set_rows", "2-D tensors only");
    require_f32("set_rows", src);
    if (!type_traits(dst->type).from_float_ref && dst->type != Type::F32)
        fail("set_rows", std::string("cannot convert to ") + type_name(dst->type));
    // The result aliases dst: later readers of the cache depend on it, which orders them after the write.
    Tensor* t = make_view(ctx, Op::SetRows, dst, dst->ne, dst->nb, 0);
    t->src[1] = src;
    t->src[2] = ids;
    return t;
}

static Tensor* reshape_to(Context& ctx, Tensor* a, int n, const int64_t* ne_in) {
    if (!a->is_contiguous()) fail("reshape", "tensor must be contiguous");
    int64_t ne[4] = {1, 1, 1, 1};
    for (int i = 0; i < n; ++i) ne[i] = ne_in[i];
    if (ne[0] * ne[1] * ne[2] * ne[3] != a->nelements()) fail("reshape", "element count changes");
    if (ne[0] % block_size(a->type) != 0) fail("reshape", "row length not a multiple of the block size");
    size_t nb[4];
    nb[0] = type_size(a->type);
    nb[1] = row_size(a->type, ne[0]);
    for (int i = 2; i < 4; ++i) nb[i] = nb[i - 1] * (size_t)ne[i - 1];
    return make_view(ctx, Op::Reshape, a, ne, nb, 0);
}

Tensor* reshape_1d(Context& ctx, Tensor* a, int64_t ne0) { return reshape_to(ctx, a, 1, &ne0); }
Tensor* reshape_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = {ne0, ne1};
    return reshape_to(ctx, a, 2, ne);
}
Tensor* reshape_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    return reshape_to(ctx, a, 3, ne);
}
Tensor* reshape_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return reshape_to(ctx, a, 4, ne);
}

static Tensor* view_nd(Context& ctx, Tensor* a, const int64_t* ne, const size_t* nb_in, int n, size_t offset) {
    size_t nb[4];
    nb[0] = a->nb[0];
    for (int i = 1; i < 4; ++i) nb[i] = i < n ? nb_in[i] : nb[i - 1] * (size_t)ne[i - 1];
    if (ne[0] % block_size(a->type) != 0) fail("view", "row length not a multiple of the block size");
    Tensor probe;
    probe.type = a->type;
    for (int i = 0; i < 4; ++i) {
        probe.ne[i] = ne[i];
        probe.nb[i] = nb[i];
    }
    if (offset + probe.nbytes() > a->nbytes())
        fail("view", "view exceeds the viewed tensor (" + std::to_string(offset + probe.nbytes()) + " > " +
                         std::to_string(a->nbytes()) + " bytes)");
    return make_view(ctx, Op::View, a, ne, nb, offset);
}

Tensor* view_1d(Context& ctx, Tensor* a, int64_t ne0, size_t offset) {
    const int64_t ne[4] = {ne0, 1, 1, 1};
    const size_t nb[4] = {0, 0, 0, 0};
    return view_nd(ctx, a, ne, nb, 1, offset);
}
Tensor* view_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    const int64_t ne[4] = {ne0, ne1, 1, 1};
    const size_t nb[4] = {0, nb1, 0, 0};
    return view_nd(ctx, a, ne, nb, 2, offset);
}
Tensor* view_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2,
                size_t offset) {
    const int64_t ne[4] = {ne0, ne1, ne2, 1};
    const size_t nb[4] = {0, nb1, nb2, 0};
    return view_nd(ctx, a, ne, nb, 3, offset);
}
Tensor* view_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1,
                size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    const size_t nb[4] = {0, nb1, nb2, nb3};
    return view_nd(ctx, a, ne, nb, 4, offset);
}

Tensor* permute(Context& ctx, Tensor* a, int ax0, int ax1, int ax2, int ax3) {
    const int axes[4] = {ax0, ax1, ax2, ax3};
    bool seen[4] = {};
    for (int ax : axes) {
        if (ax < 0 || ax > 3 || seen[ax]) fail("permute", "axes must be a permutation of 0..3");
        seen[ax] = true;
    }
    int64_t ne[4];
    size_t nb[4];
    for (int i = 0; i < 4; ++i) {
        ne[axes[i]] = a->ne[i];
        nb[axes[i]] = a->nb[i];
    }
    if (block_size(a->type) > 1 && axes[0] != 0) fail("permute", "cannot move the row axis of a blocked type");
    return make_view(ctx, Op::Permute, a, ne, nb, 0);
}

Tensor* transpose(Context& ctx, Tensor* a) { return permute(ctx, a, 1, 0, 2, 3); }

Tensor* rope(Context& ctx, Tensor* a, Tensor* pos, int n_dims, int mode, float freq_base, float freq_scale) {
    RopeParams p;
    p.n_dims = n_dims;
    p.mode = mode;
    p.freq_base = freq_base;
    p.freq_scale = freq_scale;
    return rope_ext(ctx, a, pos, nullptr, p);
}

Tensor* rope_ext(Context& ctx, Tensor* a, Tensor* pos, Tensor* freq_factors, const RopeParams& p) {
    require_f32("rope", a);
    if (pos->type != Type::I32) fail("rope", "positions must be I32");
    if (pos->ne[0] != a->ne[2]) fail("rope", "one position per token (a->ne[2]) required");
    if (p.n_dims <= 0 || p.n_dims > a->ne[0] || p.n_dims % 2)
        fail("rope", "invalid number of rotated dimensions");
    if (p.mode != kRopeNormal && p.mode != kRopeNeox) fail("rope", "unknown mode");
    if (freq_factors) {
        require_f32("rope", freq_factors);
        if (freq_factors->ne[0] < p.n_dims / 2 || !freq_factors->is_contiguous())
            fail("rope", "frequency factors must be contiguous F32 [n_dims / 2]");
    }
    Tensor* t = result_like(ctx, Op::Rope, a, pos);
    t->src[2] = freq_factors;
    t->set_param<int32_t>(0, p.n_dims);
    t->set_param<int32_t>(1, p.mode);
    t->set_param<float>(2, p.freq_base);
    t->set_param<float>(3, p.freq_scale);
    t->set_param<float>(4, p.ext_factor);
    t->set_param<float>(5, p.attn_factor);
    t->set_param<float>(6, p.beta_fast);
    t->set_param<float>(7, p.beta_slow);
    t->set_param<int32_t>(8, p.n_ctx_orig);
    return t;
}

void rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float dims[2]) {
    // The dimension whose wavelength makes n_rot turns over the original context.
    auto corr_dim = [&](float n_rot) {
        return (float)n_dims * std::log((float)n_ctx_orig / (n_rot * 2.0f * 3.14159265358979323846f)) /
               (2.0f * std::log(freq_base));
    };
    dims[0] = std::max(0.0f, std::floor(corr_dim(beta_fast)));
    dims[1] = std::min((float)(n_dims - 1), std::ceil(corr_dim(beta_slow)));
}

namespace {
// Attention sinks: one F32 logit per plane (head) of the scores.
void check_sinks(const char* op, const Tensor* sinks, int64_t n_head) {
    if (!sinks) return;
    require_f32(op, sinks);
    if (!sinks->is_contiguous() || sinks->nelements() != n_head)
        fail(op, "sinks must be " + std::to_string(n_head) + " contiguous values (one per head), got " +
                     shape_str(sinks));
}
}  // namespace

Tensor* soft_max(Context& ctx, Tensor* a, Tensor* mask, float scale, Tensor* sinks) {
    require_f32("soft_max", a);
    if (mask) {
        if (mask->type != Type::F32 && mask->type != Type::F16) fail("soft_max", "mask must be F32 or F16");
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1]) fail("soft_max", "mask shape mismatch");
        if (!mask->rows_contiguous()) fail("soft_max", "mask rows must be contiguous");
    }
    check_sinks("soft_max", sinks, a->ne[2]);
    Tensor* t = result_like(ctx, Op::SoftMax, a, mask);
    t->src[2] = sinks;
    t->set_param<float>(0, scale);
    return t;
}

Tensor* silu(Context& ctx, Tensor* a) {
    require_f32("silu", a);
    return result_like(ctx, Op::Silu, a);
}

Tensor* swiglu(Context& ctx, Tensor* a, Tensor* b) {
    require_f32("swiglu", a);
    require_f32("swiglu", b);
    if (!same_shape(a, b)) fail("swiglu", "shapes differ");
    return result_like(ctx, Op::SwiGlu, a, b);
}

Tensor* swiglu_oai(Context& ctx, Tensor* a, Tensor* b, float alpha, float limit) {
    require_f32("swiglu_oai", a);
    require_f32("swiglu_oai", b);
    if (!same_shape(a, b)) fail("swiglu_oai", "shapes differ");
    if (!(limit > 0.0f)) fail("swiglu_oai", "the limit must be positive");
    Tensor* t = result_like(ctx, Op::SwiGluOai, a, b);
    t->set_param<float>(0, alpha);
    t->set_param<float>(1, limit);
    return t;
}

Tensor* div(Context& ctx, Tensor* a, Tensor* b) {
    require_f32("div", a);
    require_f32("div", b);
    if (!can_broadcast(a, b)) fail("div", "cannot broadcast " + shape_str(b) + " to " + shape_str(a));
    return result_like(ctx, Op::Div, a, b);
}

Tensor* sum_rows(Context& ctx, Tensor* a) {
    require_f32("sum_rows", a);
    const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
    return result(ctx, Op::SumRows, Type::F32, ne, a);
}

Tensor* top_k(Context& ctx, Tensor* a, int k) {
    require_f32("top_k", a);
    if (k <= 0 || k > a->ne[0]) fail("top_k", "k must be in [1, row length]");
    const int64_t ne[4] = {k, a->ne[1], a->ne[2], a->ne[3]};
    Tensor* t = result(ctx, Op::TopK, Type::I32, ne, a);
    t->set_param<int32_t>(0, k);
    return t;
}

Tensor* mul_mat_id(Context& ctx, Tensor* as, Tensor* b, Tensor* ids) {
    require_f32("mul_mat_id", b);
    if (ids->type != Type::I32) fail("mul_mat_id", "ids must be I32");
    if (as->ne[0] != b->ne[0])
        fail("mul_mat_id", "inner dimensions differ: " + shape_str(as) + " x " + shape_str(b));
    if (as->ne[3] != 1 || b->ne[3] != 1 || ids->ne[2] != 1 || ids->ne[3] != 1)
        fail("mul_mat_id", "3-D tensors only");
    if (ids->ne[1] != b->ne[2]) fail("mul_mat_id", "one id row per token required");
    if (b->ne[1] != 1 && b->ne[1] != ids->ne[0])
        fail("mul_mat_id", "b must have 1 or n_used columns per token");
    if (!b->rows_contiguous()) fail("mul_mat_id", "b rows must be contiguous");
    if (!type_traits(as->type).vec_dot_ref && as->type != Type::F32)
        fail("mul_mat_id", "unsupported weight type");
    const int64_t ne[4] = {as->ne[1], ids->ne[0], ids->ne[1], 1};
    return result(ctx, Op::MulMatId, Type::F32, ne, as, b, ids);
}

Tensor* gelu(Context& ctx, Tensor* a) {
    require_f32("gelu", a);
    return result_like(ctx, Op::Gelu, a);
}

Tensor* gelu_erf(Context& ctx, Tensor* a) {
    require_f32("gelu_erf", a);
    return result_like(ctx, Op::GeluErf, a);
}

Tensor* tanh(Context& ctx, Tensor* a) {
    require_f32("tanh", a);
    return result_like(ctx, Op::Tanh, a);
}

Tensor* softcap(Context& ctx, Tensor* a, float cap) {
    if (!(cap > 0.0f)) fail("softcap", "the cap must be positive");
    return scale(ctx, tanh(ctx, scale(ctx, a, 1.0f / cap)), cap);
}

Tensor* flash_attn(Context& ctx, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale, float softcap,
                   Tensor* sinks) {
    if (softcap < 0.0f) fail("flash_attn", "negative soft-cap");
    require_f32("flash_attn", q);
    if (q->ne[0] != k->ne[0]) fail("flash_attn", "q and k head sizes differ");
    if (k->ne[1] != v->ne[1] || k->ne[2] != v->ne[2]) fail("flash_attn", "k and v shapes differ");
    if (q->ne[2] % k->ne[2] != 0) fail("flash_attn", "query heads must be a multiple of kv heads");
    if (!type_traits(k->type).vec_dot_ref || !type_traits(v->type).to_float)
        fail("flash_attn", "unsupported k/v type");
    if (mask) {
        if (mask->type != Type::F32 && mask->type != Type::F16) fail("flash_attn", "mask must be F32 or F16");
        if (mask->ne[0] != k->ne[1] || mask->ne[1] < q->ne[1]) fail("flash_attn", "mask shape mismatch");
        if (mask->ne[2] != 1 && mask->ne[2] != q->ne[2]) fail("flash_attn", "mask must have 1 plane or one per head");
        if (mask->ne[3] != 1) fail("flash_attn", "mask must have 1 plane or one per head");
    }
    check_sinks("flash_attn", sinks, q->ne[2]);
    const int64_t ne[4] = {v->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    Tensor* t = result(ctx, Op::FlashAttn, Type::F32, ne, q, k, v, mask);
    t->src[4] = sinks;
    t->set_param<float>(0, scale);
    t->set_param<float>(1, softcap);
    return t;
}

Tensor* with_kv_blocks(Tensor* op, Tensor* blocks) {
    if (op->op != Op::MulMat && op->op != Op::SoftMax && op->op != Op::MulMatT && op->op != Op::FlashAttn)
        fail("with_kv_blocks", std::string("not an attention op: ") + op_name(op->op));
    if (blocks->type != Type::I32 || !blocks->is_contiguous()) fail("with_kv_blocks", "blocks must be contiguous I32");
    if (op->src[kKvBlocksSrc]) fail("with_kv_blocks", "blocks already attached");
    // Rows of the cache: scores per query for mul_mat and soft_max, K's or V's rows for the others.
    const int64_t rows = op->op == Op::FlashAttn ? op->src[1]->ne[1] : op->op == Op::MulMatT ? op->src[0]->ne[1]
                                                                                             : op->ne[0];
    const int64_t queries = op->op == Op::FlashAttn ? op->src[0]->ne[1] : op->ne[1];
    if (blocks->ne[0] < 1 + (rows + kKvBlock - 1) / kKvBlock || blocks->ne[1] < queries)
        fail("with_kv_blocks", "blocks shape " + shape_str(blocks) + " does not cover " + std::to_string(rows) +
                                   " rows and " + std::to_string(queries) + " queries");
    op->src[kKvBlocksSrc] = blocks;
    return op;
}

// ---- graphs ----------------------------------------------------------------------------------------

void Graph::build_forward(Tensor* result) {
    // Iterative post-order DFS: deep graphs must not overflow the native stack.
    struct Frame {
        Tensor* t;
        int next_src;
    };
    if (!visited_.insert(result).second) return;
    std::vector<Frame> frames{{result, 0}};
    while (!frames.empty()) {
        Frame& f = frames.back();
        if (f.next_src < kMaxSrc) {
            Tensor* s = f.t->src[f.next_src++];
            if (s && visited_.insert(s).second) frames.push_back({s, 0});
            continue;
        }
        Tensor* done = f.t;
        frames.pop_back();
        (done->op == Op::None ? leafs : nodes).push_back(done);
    }
}

}  // namespace ggml
