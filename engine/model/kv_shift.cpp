#include "engine/model/kv_shift.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/graph_builder.h"

namespace engine {

void apply_k_shift(const Model& model, KvCache& kv, GraphRunner& runner, int n_threads, bool long_rope) {
    const HParams& hp = model.hparams();
    if (!kv.has_shift()) return;
    std::vector<int32_t> cells, deltas;
    kv.pending_shifts(cells, deltas);
    if (cells.empty()) {
        kv.clear_shifts();
        return;
    }
    const int64_t m = (int64_t)cells.size(), hd = hp.n_embd_head_k, n_head_kv = hp.n_head_kv;
    ggml::Context gctx(0, true);
    ggml::Tensor* ids = gctx.new_tensor_1d(ggml::Type::I32, m);
    ggml::Tensor* pos = gctx.new_tensor_1d(ggml::Type::I32, m);  // the rotation: each cell's shift
    ids->flags |= ggml::kFlagInput;
    pos->flags |= ggml::kFlagInput;
    ggml::Graph g;
    for (int il = 0; il < kv.n_layer(); ++il) {
        ggml::Tensor* rows = ggml::get_rows(gctx, kv.k(il), ids);  // F32 [hd * n_head_kv, m]
        ggml::Tensor* r =
            rope_layer(gctx, model, ggml::reshape_3d(gctx, rows, hd, n_head_kv, m), pos, (uint32_t)il, long_rope, false);
        g.build_forward(ggml::set_rows(gctx, kv.k(il), ggml::reshape_2d(gctx, r, hd * n_head_kv, m), ids));
    }
    runner.allocate(g);
    std::memcpy(ids->data, cells.data(), cells.size() * sizeof(int32_t));
    std::memcpy(pos->data, deltas.data(), deltas.size() * sizeof(int32_t));
    runner.compute(g, n_threads);
    kv.clear_shifts();
}

int32_t shift_context(KvCache& kv, SeqId seq, std::vector<Token>& tokens, int32_t n_keep, int32_t n_discard) {
    const int32_t n_past = (int32_t)tokens.size();
    n_keep = std::clamp(n_keep, 0, n_past);
    n_discard = n_discard > 0 ? std::min(n_discard, n_past - n_keep) : (n_past - n_keep) / 2;
    if (n_discard == 0) return 0;
    // Moved cells that other sequences share need a copy; make sure the cells exist (counting those
    // the discarded range frees) before changing anything.
    uint32_t n_copies = 0, n_freed = 0;
    for (int32_t c : kv.seq_cells(seq)) {
        const KvCell& cell = kv.cell(c);
        if (cell.pos >= n_keep + n_discard && cell.seq.count() > 1) ++n_copies;
        if (cell.pos >= n_keep && cell.pos < n_keep + n_discard && cell.seq.count() == 1) ++n_freed;
    }
    if (n_copies > kv.size() - kv.n_used() + n_freed)
        throw std::runtime_error("context shift: the KV cache has no room to copy " + std::to_string(n_copies) +
                                 " shared cells");
    kv.seq_rm(seq, n_keep, n_keep + n_discard);
    kv.seq_add(seq, n_keep + n_discard, n_past, -n_discard);
    tokens.erase(tokens.begin() + n_keep, tokens.begin() + n_keep + n_discard);
    return n_discard;
}

}  // namespace engine
