// The GPU options of run, serve and bench: --device and -mg pick the CUDA device; -ngl (the caller's)
// says how many layers go there. Checked before the model loads, so that a missing GPU fails fast with
// the reason (exit code 2).
#pragma once

#include <string>

#include "server/cli/args.h"

namespace cli {

struct DeviceOptions {
    std::string device;  // "" (the main GPU), "none" (no offload) or "CUDA<i>"
    int main_gpu = 0;

    // Resolves --device into main_gpu and checks that a usable device backs n_gpu_layers > 0.
    // Returns whether layers are offloaded (false for n_gpu_layers 0 or --device none). Throws ArgError
    // naming the reason (cuda_status()) when no device is usable or the index is out of range.
    bool finish(const ArgParser& ap, int n_gpu_layers);
};

void add_device_options(ArgParser& ap, DeviceOptions& d);

}  // namespace cli
