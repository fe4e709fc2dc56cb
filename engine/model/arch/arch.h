// The architecture table: one row per model architecture, each in its own file (arch/<name>.cpp) and
// listed once in arch/table.cpp. A row reads the hyper-parameters only its architecture has, names
// and shapes every weight (required and optional), and builds the forward graph. Adding an
// architecture is a new file and a row.
#pragma once

#include <cstdint>
#include <string>

#include "ggml/ggml.h"

namespace ggml::gguf {
class File;
}

namespace engine {

struct HParams;
class WeightLoader;
class GraphBuilder;

// How an architecture uses an optional feature of the metadata. HParams::from_gguf and Model::load check
// every row's declaration the same way, so that each row gets the same clear errors for a hostile file.
enum class Use : uint8_t {
    Never,     // the keys are ignored (as llama.cpp ignores them) and the tensors must not be there
    Optional,  // 0 or absent: the feature is off
    Required,  // every model of the architecture has it: 0 or absent is refused
};

struct ArchRow {
    const char* name;  // general.architecture
    int rope_mode;     // ggml::kRopeNormal or ggml::kRopeNeox
    // Keys beyond the shared ones (hparams.cpp), read after them; may adjust shared values.
    void (*read_hparams)(const ggml::gguf::File& f, HParams& h);
    // Binds every weight of the model (WeightLoader checks names, shapes and types).
    void (*load_weights)(WeightLoader& l);
    // The forward graph of a micro-batch; returns the logits of the tokens that want them.
    ggml::Tensor* (*build_graph)(GraphBuilder& g);
    // Whether the builder adds a control vector to each layer's output (GraphBuilder::layer_out): the
    // decoders do; encoders do not (nor in llama.cpp), and --control-vector is refused for them.
    bool steerable = true;
    // Mixture of experts: expert_count, expert_used_count and the router and expert tensors
    // (ffn_gate_inp, ffn_{gate,up,down}_exps).
    Use experts = Use::Never;
    // attention.sliding_window, read by the row (with the row's default); Required: 0 is refused.
    Use sliding_window = Use::Never;
};

// The row for a general.architecture value, or nullptr.
const ArchRow* find_arch(const std::string& name);
// "llama, qwen2, ...": the architectures this build supports.
std::string supported_archs();

}  // namespace engine
