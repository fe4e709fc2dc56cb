#include "engine/model/llama_graph.h"

#include <cmath>

namespace engine {

using ggml::Tensor;

GraphInputs build_llama_graph(ggml::Context& ctx, const Model& m, const KvCache& kv, const GraphShape& s) {
    const HParams& hp = m.hparams();
    const int64_t n = s.n_tokens, hd = hp.n_embd_head_k, hdv = hp.n_embd_head_v;
    const int64_t n_head = hp.n_head, n_head_kv = hp.n_head_kv;
    const float kq_scale = 1.0f / std::sqrt((float)hd);

    GraphInputs in;
    in.tokens = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.pos = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.kv_cells = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.mask = ctx.new_tensor_2d(ggml::Type::F32, s.n_kv, n);
    in.out_ids = ctx.new_tensor_1d(ggml::Type::I32, s.n_outputs);
    for (Tensor* t : {in.tokens, in.pos, in.kv_cells, in.mask, in.out_ids}) t->flags |= ggml::kFlagInput;

    Tensor* x = ggml::get_rows(ctx, m.tok_embd, in.tokens);  // [n_embd, n]

    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = m.layers[il];
        Tensor* residual = x;

        // attention
        Tensor* cur = ggml::mul(ctx, ggml::rms_norm(ctx, x, hp.rms_eps), w.attn_norm);
        Tensor* q = ggml::reshape_3d(ctx, ggml::mul_mat(ctx, w.wq, cur), hd, n_head, n);
        Tensor* k = ggml::reshape_3d(ctx, ggml::mul_mat(ctx, w.wk, cur), hd, n_head_kv, n);
        Tensor* v = ggml::mul_mat(ctx, w.wv, cur);
        q = ggml::rope(ctx, q, in.pos, (int)hp.n_rot, hp.rope_mode, hp.rope_freq_base, hp.rope_freq_scale);
        k = ggml::rope(ctx, k, in.pos, (int)hp.n_rot, hp.rope_mode, hp.rope_freq_base, hp.rope_freq_scale);

        Tensor* k_cache = ggml::set_rows(ctx, kv.k(il), ggml::reshape_2d(ctx, k, hd * n_head_kv, n), in.kv_cells);
        Tensor* v_cache = ggml::set_rows(ctx, kv.v(il), v, in.kv_cells);
        const ggml::Type tk = k_cache->type, tv = v_cache->type;
        Tensor* K = ggml::view_3d(ctx, k_cache, hd, s.n_kv, n_head_kv, ggml::row_size(tk, hd * n_head_kv),
                                  ggml::row_size(tk, hd), 0);
        Tensor* V = ggml::view_3d(ctx, v_cache, hdv, s.n_kv, n_head_kv, ggml::row_size(tv, hdv * n_head_kv),
                                  ggml::row_size(tv, hdv), 0);
        Tensor* Q = ggml::permute(ctx, q, 0, 2, 1, 3);  // [hd, n, n_head]

        Tensor* attn;
        if (s.flash_attn) {
            attn = ggml::flash_attn(ctx, Q, K, V, in.mask, kq_scale);  // [hdv, n_head, n]
        } else {
            Tensor* kq = ggml::soft_max(ctx, ggml::mul_mat(ctx, K, Q), in.mask, kq_scale);  // [n_kv, n, n_head]
            Tensor* kqv = ggml::mul_mat_t(ctx, V, kq);                                      // [hdv, n, n_head]
            attn = ggml::cont(ctx, ggml::permute(ctx, kqv, 0, 2, 1, 3));                   // [hdv, n_head, n]
        }
        cur = ggml::mul_mat(ctx, w.wo, ggml::reshape_2d(ctx, attn, hdv * n_head, n));

        if (il == hp.n_layer - 1 && s.n_outputs < s.n_tokens) {
            // Only the tokens that need logits go through the last feed-forward block.
            cur = ggml::get_rows(ctx, cur, in.out_ids);
            residual = ggml::get_rows(ctx, residual, in.out_ids);
        }
        x = ggml::add(ctx, cur, residual);

        // feed-forward (SwiGLU)
        cur = ggml::mul(ctx, ggml::rms_norm(ctx, x, hp.rms_eps), w.ffn_norm);
        cur = ggml::swiglu(ctx, ggml::mul_mat(ctx, w.w_gate, cur), ggml::mul_mat(ctx, w.w_up, cur));
        x = ggml::add(ctx, ggml::mul_mat(ctx, w.w_down, cur), x);
    }

    x = ggml::mul(ctx, ggml::rms_norm(ctx, x, hp.rms_eps), m.output_norm);
    in.logits = ggml::mul_mat(ctx, m.output, x);
    in.logits->flags |= ggml::kFlagOutput;
    in.logits->set_name("logits");
    return in;
}

}  // namespace engine
