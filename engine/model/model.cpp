#include "engine/model/model.h"

#include <map>
#include <stdexcept>

#include "engine/tokenizer/vocab.h"

namespace engine {

Model::~Model() = default;

namespace {
std::string shape_str(const int64_t* ne, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}
}  // namespace

ggml::Tensor* Model::weight(const std::string& name, std::initializer_list<int64_t> shape, bool required) {
    const ggml::gguf::TensorInfo* ti = file_->find_tensor(name);
    if (!ti) {
        if (required) throw std::runtime_error("model is missing tensor '" + name + "'");
        return nullptr;
    }
    const int64_t* want = shape.begin();
    const int n = (int)shape.size();
    bool ok = ti->n_dims <= n;
    for (int i = 0; i < 4 && ok; ++i) ok = ti->ne[i] == (i < n ? want[i] : 1);
    if (!ok)
        throw std::runtime_error("tensor '" + name + "' has shape " + shape_str(ti->ne, ti->n_dims) +
                                 " but the model needs " + shape_str(want, n));
    if (!ggml::type_traits(ti->type).to_float && ti->type != ggml::Type::F32)
        throw std::runtime_error("tensor '" + name + "' has type " + ggml::type_name(ti->type) +
                                 ", which cannot be used as a weight");
    ggml::Tensor* t = ctx_.new_tensor(ti->type, n, want);
    t->data = const_cast<void*>(ti->data);
    t->flags |= ggml::kFlagParam;
    t->set_name(name);
    n_params_ += (uint64_t)ti->nelements();
    n_bytes_ += ti->size;
    return t;
}

std::unique_ptr<Model> Model::load(const std::string& path, const ModelParams& params) {
    std::unique_ptr<Model> m(new Model());
    m->path_ = path;
    m->file_ = ggml::gguf::File::open(path);
    m->hp_ = HParams::from_gguf(*m->file_);
    m->vocab_ = std::make_unique<Vocab>(Vocab::from_gguf(*m->file_));
    HParams& h = m->hp_;
    const int64_t n_vocab = m->vocab_->n_tokens();
    if (h.n_vocab != 0 && h.n_vocab != (uint32_t)n_vocab)
        throw std::runtime_error("model metadata: vocab_size " + std::to_string(h.n_vocab) +
                                 " differs from the tokenizer's " + std::to_string(n_vocab) + " tokens");
    h.n_vocab = (uint32_t)n_vocab;

    const int64_t E = h.n_embd, Q = (int64_t)h.n_embd_head_k * h.n_head, KV = h.n_embd_k_gqa(),
                  VV = h.n_embd_v_gqa(), F = h.n_ff;
    m->tok_embd = m->weight("token_embd.weight", {E, n_vocab});
    m->output_norm = m->weight("output_norm.weight", {E});
    m->output = m->weight("output.weight", {E, n_vocab}, false);
    if (!m->output) m->output = m->tok_embd;  // tied embeddings
    m->layers.resize(h.n_layer);
    for (uint32_t i = 0; i < h.n_layer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        LayerWeights& l = m->layers[i];
        l.attn_norm = m->weight(p + "attn_norm.weight", {E});
        l.wq = m->weight(p + "attn_q.weight", {E, Q});
        l.wk = m->weight(p + "attn_k.weight", {E, KV});
        l.wv = m->weight(p + "attn_v.weight", {E, VV});
        l.wo = m->weight(p + "attn_output.weight", {Q, E});
        l.ffn_norm = m->weight(p + "ffn_norm.weight", {E});
        l.w_gate = m->weight(p + "ffn_gate.weight", {E, F});
        l.w_up = m->weight(p + "ffn_up.weight", {E, F});
        l.w_down = m->weight(p + "ffn_down.weight", {F, E});
    }
    if (params.n_gpu_layers > 0) m->offload(params);
    return m;
}

std::string Model::description() const {
    std::map<ggml::Type, uint64_t> bytes_by_type;
    for (const auto& l : layers)
        for (const ggml::Tensor* t : {l.wq, l.wk, l.wv, l.wo, l.w_gate, l.w_up, l.w_down})
            bytes_by_type[t->type] += t->nbytes();
    ggml::Type dom = ggml::Type::F32;
    uint64_t best = 0;
    for (auto& [t, b] : bytes_by_type)
        if (b > best) best = b, dom = t;
    const double np = (double)n_params_;
    char size[32];
    if (np >= 1e9) snprintf(size, sizeof size, "%.1fB", np / 1e9);
    else if (np >= 1e6) snprintf(size, sizeof size, "%.0fM", np / 1e6);
    else snprintf(size, sizeof size, "%.0fK", np / 1e3);
    std::string tname = ggml::type_name(dom);
    for (auto& c : tname) c = (char)toupper(c);
    return hp_.arch + " " + size + " " + tname;
}

std::string Model::chat_template() const { return file_->get_string("tokenizer.chat_template", ""); }

}  // namespace engine
