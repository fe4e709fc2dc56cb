// The GPU options of run, serve and bench: --device and -mg pick the CUDA device; -ngl (the caller's)
// says how many layers go there. Checked before the model loads: a device that was named but cannot be
// used fails fast with the reason (exit code 2); a layer count without any GPU runs on the CPU with a
// warning, as llama-server does (compose files carry -ngl 99 everywhere), except where strict (bench).
#pragma once

#include <string>

#include "server/cli/args.h"

namespace cli {

struct DeviceOptions {
    std::string device;  // "" (the main GPU), "none" (no offload) or "CUDA<i>"
    int main_gpu = 0;

    // Resolves --device into main_gpu and checks that a usable device backs n_gpu_layers > 0.
    // Returns whether layers are offloaded (false for n_gpu_layers 0, --device none, or no GPU at all
    // unless strict). Throws ArgError naming the reason (cuda_status()) when a named device or -mg index
    // is out of range, or (strict) when there is no GPU.
    bool finish(const ArgParser& ap, int n_gpu_layers, bool strict = false);
};

void add_device_options(ArgParser& ap, DeviceOptions& d);

}  // namespace cli
