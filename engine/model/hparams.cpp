#include "engine/model/hparams.h"

#include <stdexcept>

#include "ggml/ggml.h"
#include "ggml/gguf.h"

namespace engine {

namespace {

uint32_t get_u32(const ggml::gguf::File& f, const std::string& key, int64_t def, bool required) {
    if (!f.has(key)) {
        if (required) throw std::runtime_error("model metadata is missing '" + key + "'");
        return (uint32_t)def;
    }
    const int64_t v = f.get_int(key, def);
    if (v < 0 || v > (int64_t)UINT32_MAX) throw std::runtime_error("model metadata '" + key + "' is out of range");
    return (uint32_t)v;
}

}  // namespace

HParams HParams::from_gguf(const ggml::gguf::File& f) {
    HParams h;
    h.arch = f.get_string("general.architecture");
    if (h.arch.empty()) throw std::runtime_error("model metadata is missing 'general.architecture'");
    if (h.arch != "llama")
        throw std::runtime_error("unsupported model architecture '" + h.arch + "' (supported: llama)");
    h.name = f.get_string("general.name");
    const std::string a = h.arch + ".";
    h.n_ctx_train = get_u32(f, a + "context_length", 2048, false);
    h.n_embd = get_u32(f, a + "embedding_length", 0, true);
    h.n_layer = get_u32(f, a + "block_count", 0, true);
    h.n_ff = get_u32(f, a + "feed_forward_length", 0, true);
    h.n_head = get_u32(f, a + "attention.head_count", 0, true);
    h.n_head_kv = get_u32(f, a + "attention.head_count_kv", h.n_head, false);
    if (h.n_embd == 0 || h.n_layer == 0 || h.n_head == 0 || h.n_head_kv == 0 || h.n_ff == 0)
        throw std::runtime_error("model metadata: embedding length, block count, head counts and feed-forward "
                                 "length must be positive");
    if (h.n_layer > 4096 || h.n_head > 4096 || h.n_embd > (1u << 20) || h.n_ff > (1u << 22))
        throw std::runtime_error("model metadata: implausible model dimensions");
    if (h.n_head % h.n_head_kv != 0)
        throw std::runtime_error("model metadata: head_count must be a multiple of head_count_kv");
    h.n_embd_head_k = get_u32(f, a + "attention.key_length", h.n_embd / h.n_head, false);
    h.n_embd_head_v = get_u32(f, a + "attention.value_length", h.n_embd / h.n_head, false);
    if (h.n_embd_head_k == 0 || h.n_embd_head_v == 0) throw std::runtime_error("model metadata: zero head size");
    h.n_rot = get_u32(f, a + "rope.dimension_count", h.n_embd_head_k, false);
    if (h.n_rot == 0 || h.n_rot > h.n_embd_head_k || h.n_rot % 2)
        throw std::runtime_error("model metadata: rope.dimension_count must be even and at most the head size");
    h.rms_eps = (float)f.get_float(a + "attention.layer_norm_rms_epsilon", 1e-5);
    if (!(h.rms_eps > 0.0f)) throw std::runtime_error("model metadata: layer_norm_rms_epsilon must be positive");
    h.rope_freq_base = (float)f.get_float(a + "rope.freq_base", 10000.0);
    if (!(h.rope_freq_base > 0.0f)) throw std::runtime_error("model metadata: rope.freq_base must be positive");
    const std::string scaling = f.get_string(a + "rope.scaling.type", "none");
    const double factor = f.get_float(a + "rope.scaling.factor", 0.0);
    if (scaling == "linear" && factor > 0.0) h.rope_freq_scale = (float)(1.0 / factor);
    else if (scaling != "none" && scaling != "linear")
        throw std::runtime_error("model metadata: unsupported rope scaling type '" + scaling + "'");
    h.rope_mode = ggml::kRopeNormal;  // the llama architecture rotates adjacent pairs
    h.n_vocab = get_u32(f, a + "vocab_size", 0, false);
    return h;
}

}  // namespace engine
