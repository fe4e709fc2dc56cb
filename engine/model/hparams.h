// Model hyper-parameters read from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>

namespace ggml::gguf {
class File;
}

namespace engine {

struct HParams {
    std::string arch;  // general.architecture
    std::string name;  // general.name
    uint32_t n_ctx_train = 0;
    uint32_t n_embd = 0;
    uint32_t n_layer = 0;
    uint32_t n_ff = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t n_embd_head_k = 0;  // per-head size of keys/queries
    uint32_t n_embd_head_v = 0;
    uint32_t n_rot = 0;  // rotated dimensions per head
    uint32_t n_vocab = 0;
    float rms_eps = 1e-5f;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
    int rope_mode = 0;             // ggml::kRopeNormal or kRopeNeox

    uint32_t n_embd_k_gqa() const { return n_embd_head_k * n_head_kv; }
    uint32_t n_embd_v_gqa() const { return n_embd_head_v * n_head_kv; }

    // Reads and validates the hyper-parameters; throws std::runtime_error with a clear message.
    static HParams from_gguf(const ggml::gguf::File& f);
};

}  // namespace engine
