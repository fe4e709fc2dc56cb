#include "engine/model/arch/encoder_common.h"

#include <stdexcept>
#include <string>

#include "ggml/gguf.h"

namespace engine {

void read_encoder_hparams(const ggml::gguf::File& f, HParams& h) {
    h.pooling_type = (int)read_u32(f, h, "pooling_type", 0);
    if (h.pooling_type > 4)
        throw std::runtime_error("model metadata: unknown pooling_type " + std::to_string(h.pooling_type));
    h.n_token_types = read_u32(f, h, "token_type_count", 2);
    if (h.n_token_types == 0 || h.n_token_types > 1024)
        throw std::runtime_error("model metadata: implausible token_type_count");
    h.causal = false;  // an encoder: the attention.causal key only confirms it (llama.cpp ignores it too)
}

void load_encoder_inputs(WeightLoader& l, bool types_required, bool positions) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd;
    l.input(m.tok_embd, "token_embd.weight", {E, h.n_vocab});
    if (types_required || m.gguf().find_tensor("token_types.weight"))
        l.input(m.tok_types, "token_types.weight", {E, h.n_token_types});
    if (positions) l.input(m.pos_embd, "position_embd.weight", {E, h.n_ctx_train});
    l.input(m.tok_norm, "token_embd_norm.weight", {E});
    l.input(m.tok_norm_b, "token_embd_norm.bias", {E});
}

void load_classification_head(WeightLoader& l) {
    Model& m = l.model;
    const int64_t E = l.hp.n_embd;
    const ggml::gguf::File& f = m.gguf();
    const ggml::gguf::TensorInfo* t = f.find_tensor("cls.output.weight");
    if (!t) return;
    const int64_t n_out = t->ne[1];
    l.input(m.cls_out, "cls.output.weight", {E, n_out});
    if (f.find_tensor("cls.output.bias")) l.input(m.cls_out_b, "cls.output.bias", {n_out});
    if (f.find_tensor("cls.weight")) {
        l.input(m.cls, "cls.weight", {E, E});
        if (f.find_tensor("cls.bias")) l.input(m.cls_b, "cls.bias", {E});
    }
}

ggml::Tensor* encoder_input(GraphBuilder& g) {
    const Model& m = g.model;
    ggml::Tensor* x = g.embed();
    if (m.tok_types) x = ggml::add(g.ctx, x, ggml::view_1d(g.ctx, m.tok_types, g.hp.n_embd, 0));
    if (m.pos_embd) x = ggml::add(g.ctx, x, ggml::get_rows(g.ctx, m.pos_embd, g.in.pos));
    return g.layer_norm(x, m.tok_norm, m.tok_norm_b);
}

}  // namespace engine
