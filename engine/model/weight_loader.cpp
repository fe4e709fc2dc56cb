#include "engine/model/weight_loader.h"

#include <stdexcept>

namespace engine {

namespace {

std::string shape_str(const int64_t* ne, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

}  // namespace

ggml::Tensor* WeightLoader::tensor(const std::string& name, Shape shape, bool required) {
    if (auto it = loaded_.find(name); it != loaded_.end()) return it->second;
    const ggml::gguf::TensorInfo* ti = model.file_->find_tensor(name);
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
    ggml::Tensor* t = model.ctx_.new_tensor(ti->type, n, want);
    t->data = const_cast<void*>(ti->data);
    t->flags |= ggml::kFlagParam;
    t->set_name(name);
    model.n_params_ += (uint64_t)ti->nelements();
    model.n_bytes_ += ti->size;
    loaded_[name] = t;
    return t;
}

void WeightLoader::bind(ggml::Tensor*& slot, ggml::Tensor* t, int layer) {
    slot = t;
    if (t) model.slots_.push_back({&slot, layer});
}

void WeightLoader::input(ggml::Tensor*& slot, const std::string& name, Shape shape) {
    bind(slot, tensor(name, shape, true), Model::kInputSlot);
}

bool WeightLoader::output(ggml::Tensor*& slot, const std::string& name, Shape shape, bool required) {
    bind(slot, tensor(name, shape, required), Model::kOutputSlot);
    return slot != nullptr;
}

void WeightLoader::output_or_tied(ggml::Tensor*& slot, Shape shape) {
    ggml::Tensor* t = tensor("output.weight", shape, false);
    if (!t) t = tensor("token_embd.weight", shape, true);  // tied embeddings
    bind(slot, t, Model::kOutputSlot);
}

void WeightLoader::req(uint32_t il, ggml::Tensor*& slot, const std::string& name, Shape shape) {
    bind(slot, tensor(layer_name(il, name), shape, true), (int)il);
}

bool WeightLoader::opt(uint32_t il, ggml::Tensor*& slot, const std::string& name, Shape shape) {
    bind(slot, tensor(layer_name(il, name), shape, false), (int)il);
    return slot != nullptr;
}

bool WeightLoader::shared(uint32_t il, ggml::Tensor*& slot, const std::string& name, Shape shape) {
    bind(slot, tensor(name, shape, false), (int)il);
    return slot != nullptr;
}

void WeightLoader::attention(uint32_t il, LayerWeights& w, bool qkv_biases) {
    const int64_t E = hp.n_embd, Q = (int64_t)hp.n_embd_head_k * hp.n_head, K = hp.n_embd_k_gqa(),
                  V = hp.n_embd_v_gqa();
    if (!qkv_biases && opt(il, w.wqkv, "attn_qkv.weight", {E, Q + K + V})) {
        opt(il, w.bqkv, "attn_qkv.bias", {Q + K + V});
    } else {
        req(il, w.wq, "attn_q.weight", {E, Q});
        req(il, w.wk, "attn_k.weight", {E, K});
        req(il, w.wv, "attn_v.weight", {E, V});
        const auto bias = [&](ggml::Tensor*& slot, const char* name, int64_t n) {
            if (qkv_biases) req(il, slot, name, {n});
            else opt(il, slot, name, {n});
        };
        bias(w.bq, "attn_q.bias", Q);
        bias(w.bk, "attn_k.bias", K);
        bias(w.bv, "attn_v.bias", V);
    }
    req(il, w.wo, "attn_output.weight", {(int64_t)hp.n_embd_head_v * hp.n_head, E});
    opt(il, w.bo, "attn_output.bias", {E});
}

namespace {
constexpr const char* kExpertTensors[] = {"ffn_gate_inp.weight", "ffn_gate_exps.weight", "ffn_up_exps.weight",
                                          "ffn_down_exps.weight"};
}

void WeightLoader::experts(uint32_t il, LayerWeights& w, int64_t n_ff_exp) {
    const int64_t E = hp.n_embd, X = hp.n_expert;
    // A dense layer in a file whose metadata declares experts: name both.
    const std::string router = layer_name(il, "ffn_gate_inp.weight"), dense = layer_name(il, "ffn_gate.weight");
    if (!model.file_->find_tensor(router) && model.file_->find_tensor(dense))
        throw std::runtime_error("the model metadata says expert_count " + std::to_string(X) + " but layer " +
                                 std::to_string(il) + " has no expert router '" + router +
                                 "', only a dense feed-forward ('" + dense + "')");
    // Expert tensors of the right rank whose expert count disagrees with expert_count name both numbers
    // (other shapes get the shape check's message).
    for (const char* name : kExpertTensors) {
        const ggml::gguf::TensorInfo* ti = model.file_->find_tensor(layer_name(il, name));
        const int dim = name == kExpertTensors[0] ? 1 : 2;  // the router is [n_embd, n_expert]
        if (ti && ti->n_dims == dim + 1 && ti->ne[dim] != X)
            throw std::runtime_error("tensor '" + layer_name(il, name) + "' holds " + std::to_string(ti->ne[dim]) +
                                     " experts but the model metadata says expert_count " + std::to_string(X));
    }
    req(il, w.router, "ffn_gate_inp.weight", {E, X});
    req(il, w.w_gate_exps, "ffn_gate_exps.weight", {E, n_ff_exp, X});
    req(il, w.w_up_exps, "ffn_up_exps.weight", {E, n_ff_exp, X});
    req(il, w.w_down_exps, "ffn_down_exps.weight", {n_ff_exp, E, X});
}

void WeightLoader::expert_biases(uint32_t il, LayerWeights& w, int64_t n_ff_exp) {
    const int64_t E = hp.n_embd, X = hp.n_expert;
    req(il, w.router_b, "ffn_gate_inp.bias", {X});
    req(il, w.b_gate_exps, "ffn_gate_exps.bias", {n_ff_exp, X});
    req(il, w.b_up_exps, "ffn_up_exps.bias", {n_ff_exp, X});
    req(il, w.b_down_exps, "ffn_down_exps.bias", {E, X});
}

void WeightLoader::refuse_undeclared_experts(Use experts) const {
    if (hp.n_expert > 0) return;
    for (uint32_t il = 0; il < hp.n_layer; ++il)
        for (const char* name : kExpertTensors)
            if (model.file_->find_tensor(layer_name(il, name)))
                throw std::runtime_error("tensor '" + layer_name(il, name) + "' belongs to a mixture of experts, but " +
                                         (experts == Use::Never ? "architecture " + hp.arch + " has no experts"
                                                                : hp.arch + ".expert_count is 0 (or missing)"));
}

}  // namespace engine
