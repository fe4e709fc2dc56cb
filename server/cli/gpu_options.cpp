#include "server/cli/gpu_options.h"

#include <cstdio>

#include "ggml/backend.h"

namespace cli {

void add_device_options(ArgParser& ap, DeviceOptions& d) {
    ap.add("-dev,--device", "none|CUDA<i>",
           "device for offloaded layers (default: the main GPU; none: no offload)",
           [&d](const std::string& v) {
               const bool cuda = v.size() > 4 && v.compare(0, 4, "CUDA") == 0 &&
                                 v.find_first_not_of("0123456789", 4) == std::string::npos;
               if (v != "none" && !cuda)
                   throw ArgError("invalid value '" + v +
                                  "' for --device: expected none or CUDA<i> (e.g. CUDA0)");
               d.device = v;
           });
    ap.option("-mg,--main-gpu", "N", "CUDA device index for offloaded layers (default 0)", &d.main_gpu);
}

bool DeviceOptions::finish(const ArgParser& ap, int n_gpu_layers, bool strict) {
    if (main_gpu < 0) throw ArgError("--main-gpu must not be negative");
    if (device == "none") return false;
    if (!device.empty()) {
        const int idx = ArgParser::to_int("--device", device.substr(4));
        if (ap.given("main-gpu") && idx != main_gpu)
            throw ArgError("--device " + device + " and --main-gpu " + std::to_string(main_gpu) +
                           " disagree");
        main_gpu = idx;
    }
    if (n_gpu_layers <= 0) return false;
    const int n = ggml::cuda_device_count();
    if (n == 0) {
        const std::string why = "no GPU to offload to: " + ggml::cuda_status();
        if (strict || !device.empty()) throw ArgError("--n-gpu-layers " + std::to_string(n_gpu_layers) + ": " + why);
        // Before the log is set up (as the other option warnings): straight to stderr.
        std::fprintf(stderr, "warning: --n-gpu-layers %s ignored, every layer runs on the CPU: %s\n",
                     n_gpu_layers >= 9999 ? "all" : std::to_string(n_gpu_layers).c_str(), why.c_str());
        return false;
    }
    if (main_gpu >= n)
        throw ArgError("CUDA device " + std::to_string(main_gpu) + " does not exist: " + ggml::cuda_status());
    return true;
}

}  // namespace cli
