// Weight placement for -ngl: each offloaded weight gets a twin of the same type and shape in one buffer
// of the offload backend, filled from the mmap, and the model uses the twin from then on. The mmapped
// originals stay: token_embd is always read on the host (get_rows, as llama.cpp does), also when a tied
// output matrix gets its own twin.
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine/model/model.h"

namespace engine {

void Model::offload(const ModelParams& params) {
    offload_ = params.offload_backend ? params.offload_backend() : ggml::make_cuda_backend(params.main_gpu);
    if (!offload_) throw std::runtime_error("the offload backend factory gave no backend");
    const uint32_t n_layer = hp_.n_layer, ngl = (uint32_t)params.n_gpu_layers;
    first_offloaded_ = ngl >= n_layer ? 0 : n_layer - ngl;
    output_offloaded_ = ngl > n_layer;

    std::vector<ggml::Tensor**> slots;  // the model's pointers to the weights that move
    for (uint32_t il = first_offloaded_; il < n_layer; ++il) {
        LayerWeights& l = layers[il];
        for (ggml::Tensor** s :
             {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down})
            slots.push_back(s);
    }
    if (output_offloaded_) {
        slots.push_back(&output_norm);
        slots.push_back(&output);
    }

    std::vector<ggml::Tensor*> twins;
    for (ggml::Tensor** s : slots) {
        ggml::Tensor* twin = offload_ctx_.new_tensor((*s)->type, ggml::kMaxDims, (*s)->ne);
        twin->set_name((*s)->name);
        twin->flags |= ggml::kFlagParam;
        twins.push_back(twin);
    }
    offload_buffer_ = ggml::alloc_tensors(*offload_, twins);
    for (size_t i = 0; i < slots.size(); ++i) {
        const ggml::Tensor* src = *slots[i];
        ggml::tensor_set(twins[i], src->data, 0, src->nbytes());
        *slots[i] = twins[i];
    }
    offload_->synchronize();
}

}  // namespace engine
