// Weight placement for -ngl: every weight slot of an offloaded layer (blk.N.* for N >= the first
// offloaded layer, whatever the architecture named it) and, when -ngl exceeds the layers, of the
// output head gets a twin of the same type and shape in one buffer of the offload backend, filled from
// the mmap; the model uses the twin from then on. A tensor bound to several moved slots (rope_freqs,
// read by every layer) gets one twin. The mmapped originals stay: token_embd is always read on the host
// (get_rows, as llama.cpp does), also when a tied output matrix gets its own twin. Expert tensors (3-D
// weights, read by mul_mat_id) stay on the host when the offload backend cannot compute mul_mat_id:
// the scheduler runs those products on the CPU, which then reads them in place instead of copying
// every expert back each step.
#include <map>
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

    auto device_reads = [&](const ggml::Tensor* w) {
        if (w->ne[2] == 1) return true;
        ggml::Context probe(0, true);
        ggml::Tensor* x = probe.new_tensor_3d(ggml::Type::F32, w->ne[0], 1, 1);
        ggml::Tensor* ids = probe.new_tensor_2d(ggml::Type::I32, 1, 1);
        return offload_->supports_op(ggml::mul_mat_id(probe, const_cast<ggml::Tensor*>(w), x, ids));
    };
    auto moves = [&](const WeightSlot& s) {
        const bool placed = s.layer >= 0 ? (uint32_t)s.layer >= first_offloaded_
                                         : s.layer == kOutputSlot && output_offloaded_;
        return placed && device_reads(*s.slot);
    };
    std::map<const ggml::Tensor*, ggml::Tensor*> twin_of;
    std::vector<const ggml::Tensor*> order;  // the first slot's order, for a deterministic buffer layout
    for (const WeightSlot& s : slots_) {
        if (!moves(s) || twin_of.count(*s.slot)) continue;
        const ggml::Tensor* src = *s.slot;
        ggml::Tensor* twin = offload_ctx_.new_tensor(src->type, ggml::kMaxDims, src->ne);
        twin->set_name(src->name);
        twin->flags |= ggml::kFlagParam;
        twin_of[src] = twin;
        order.push_back(src);
    }
    std::vector<ggml::Tensor*> twins;
    for (const ggml::Tensor* src : order) twins.push_back(twin_of[src]);
    offload_buffer_ = ggml::alloc_tensors(*offload_, twins);
    for (const ggml::Tensor* src : order) ggml::tensor_set(twin_of[src], src->data, 0, src->nbytes());
    for (const WeightSlot& s : slots_)
        if (moves(s)) *s.slot = twin_of.at(*s.slot);
    offload_->synchronize();
}

}  // namespace engine
