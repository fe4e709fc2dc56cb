// Options shared by the commands that load a model (run, serve): model, context, threads, cache types,
// GPU offload, and the default sampling settings.
#pragma once

#include <string>

#include "engine/model/context.h"
#include "engine/sampling/sampling_params.h"
#include "server/cli/args.h"
#include "server/cli/cpu_options.h"
#include "server/cli/gpu_options.h"

namespace cli {

struct ModelOptions {
    std::string model;
    uint32_t n_ctx = 0;  // 0: the model's training context (run) / 4096 (serve)
    uint32_t n_batch = 2048;
    uint32_t n_ubatch = 512;
    int n_threads = 0;
    int n_threads_batch = 0;
    std::string flash_attn = "off";  // on|off|auto
    std::string cache_type_k = "f16";
    std::string cache_type_v = "f16";
    int n_gpu_layers = 0;
    DeviceOptions device;
    bool offload = false;  // set by finish_model_options: layers go to a usable GPU
    bool kv_offload = true;  // -nkvo: the KV cache of offloaded layers stays in host memory
    engine::RopeOverrides rope;
    float rope_scale = 0.0f;  // --rope-scale N: freq_scale 1/N
    bool use_mmap = true, use_mlock = false, check_tensors = false;
    std::vector<std::pair<std::string, ggml::gguf::Value>> kv_overrides;  // --override-kv
    CpuOptions cpu;

    engine::ModelParams model_params() const;
    engine::ContextParams context_params() const;
};

void add_model_options(ArgParser& ap, ModelOptions& mo);
// Validates and normalizes after parsing (n_ubatch <= n_batch with a warning, cache types, a usable GPU
// for -ngl). Throws ArgError.
void finish_model_options(const ArgParser& ap, ModelOptions& mo);
void add_sampling_options(ArgParser& ap, engine::SamplingParams& sp);
// Throws ArgError unless `name` is a KV cache type (f32, f16, bf16, q8_0, ...).
void check_cache_type(const std::string& opt, const std::string& name);

// --override-kv KEY=TYPE:VALUE[,...] (TYPE: int, float, bool, str). Throws ArgError.
void parse_kv_overrides(const std::string& spec, std::vector<std::pair<std::string, ggml::gguf::Value>>& out);
// -l/--logit-bias TOKEN_ID(+/-)BIAS, e.g. "15043+1", "2-inf". Throws ArgError.
engine::LogitBias parse_logit_bias_arg(const std::string& v);

}  // namespace cli
