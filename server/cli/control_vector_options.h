// llama-server's control vector options (engine/model/control_vector.h): --control-vector FNAME[,...],
// --control-vector-scaled FNAME SCALE or FNAME:SCALE[,...] (both repeatable), and
// --control-vector-layer-range START END.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/model/control_vector.h"
#include "server/cli/args.h"

namespace engine {
class Model;
}

namespace cli {

struct ControlVectorOptions {
    std::vector<engine::ControlVectorFile> files;
    int layer_start = -1, layer_end = -1;  // <= 0: llama.cpp's defaults (1, n_layer)
    engine::ControlVectorSum sum;          // read by finish()
};

void add_control_vector_options(ArgParser& ap, ControlVectorOptions& o);
// Reads and checks the files (before the model loads, so that a bad file stops startup at once);
// throws ArgError with the reason.
void finish_control_vector_options(ControlVectorOptions& o);
// The vectors for the loaded model (nullptr when none was given); throws std::runtime_error with the
// reason (another n_embd, an encoder).
std::unique_ptr<engine::ControlVector> make_control_vector(const ControlVectorOptions& o,
                                                           const engine::Model& m);
// What /props reports under server.control_vectors: the files and scales, the layer range and the
// layers steered.
nlohmann::json describe_control_vector(const ControlVectorOptions& o, const engine::ControlVector& cv);

}  // namespace cli
