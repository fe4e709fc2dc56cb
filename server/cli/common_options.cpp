#include "server/cli/common_options.h"

#include <cstdio>
#include <sstream>

namespace cli {

void add_model_options(ArgParser& ap, ModelOptions& mo) {
    ap.option("-m,--model", "FILE", "GGUF model file", &mo.model);
    ap.option("-c,--ctx-size", "N", "context size in tokens (KV cache cells; 0 = from the model)", &mo.n_ctx);
    ap.option("-b,--batch-size", "N", "logical batch size: most tokens per decode call (default 2048)", &mo.n_batch);
    ap.option("-ub,--ubatch-size", "N", "physical micro-batch size (default 512)", &mo.n_ubatch);
    ap.option("-t,--threads", "N", "threads for single-token decode (default: all cores)", &mo.n_threads);
    ap.option("-tb,--threads-batch", "N", "threads for prompt batches (default: --threads)", &mo.n_threads_batch);
    ap.add("-fa,--flash-attn", "on|off|auto", "flash attention (default off)", [&mo](const std::string& v) {
        if (v != "on" && v != "off" && v != "auto" && v != "1" && v != "0")
            throw ArgError("invalid value '" + v + "' for --flash-attn: expected on, off or auto");
        mo.flash_attn = v == "1" ? "on" : v == "0" ? "off" : v;
    });
    ap.option("-ctk,--cache-type-k", "TYPE", "KV cache type of K (default f16)", &mo.cache_type_k);
    ap.option("-ctv,--cache-type-v", "TYPE", "KV cache type of V (default f16)", &mo.cache_type_v);
    ap.option("-ngl,--n-gpu-layers,--gpu-layers", "N",
              "layers to offload to the GPU: the last N (more than the model's layers: the output too)",
              &mo.n_gpu_layers);
    add_device_options(ap, mo.device);
}

static ggml::Type cache_type(const std::string& opt, const std::string& name) {
    static const char* allowed[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"};
    for (const char* a : allowed)
        if (name == a) {
            ggml::Type t;
            ggml::type_from_name(a, &t);
            return t;
        }
    throw ArgError("invalid value '" + name + "' for " + opt +
                   ": expected one of f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl");
}

void finish_model_options(const ArgParser& ap, ModelOptions& mo) {
    if (mo.model.empty()) throw ArgError("missing -m MODEL");
    if (mo.n_batch == 0) throw ArgError("--batch-size must be positive");
    if (mo.n_ubatch == 0) throw ArgError("--ubatch-size must be positive");
    if (mo.n_ubatch > mo.n_batch) {
        std::fprintf(stderr, "warning: --ubatch-size %u exceeds --batch-size %u; using %u\n", mo.n_ubatch, mo.n_batch,
                     mo.n_batch);
        mo.n_ubatch = mo.n_batch;
    }
    if (mo.n_threads < 0 || mo.n_threads_batch < 0) throw ArgError("thread counts must not be negative");
    if (mo.n_gpu_layers < 0) throw ArgError("--n-gpu-layers must not be negative");
    cache_type("--cache-type-k", mo.cache_type_k);
    const ggml::Type tv = cache_type("--cache-type-v", mo.cache_type_v);
    if (ggml::type_traits(tv).is_quantized && mo.flash_attn == "off")
        throw ArgError("a quantized V cache (--cache-type-v " + mo.cache_type_v + ") requires flash attention (-fa on)");
    mo.offload = mo.device.finish(ap, mo.n_gpu_layers);
}

engine::ModelParams ModelOptions::model_params() const {
    engine::ModelParams p;
    p.n_gpu_layers = offload ? n_gpu_layers : 0;
    p.main_gpu = device.main_gpu;
    return p;
}

engine::ContextParams ModelOptions::context_params() const {
    engine::ContextParams p;
    p.n_ctx = n_ctx;
    p.n_batch = n_batch;
    p.n_ubatch = n_ubatch;
    p.n_threads = n_threads;
    p.n_threads_batch = n_threads_batch;
    p.flash_attn = flash_attn == "on";
    ggml::type_from_name(cache_type_k.c_str(), &p.type_k);
    ggml::type_from_name(cache_type_v.c_str(), &p.type_v);
    return p;
}

void add_sampling_options(ArgParser& ap, engine::SamplingParams& sp) {
    ap.option("--temp,--temperature", "T", "temperature (default 0.8; <= 0 = greedy)", &sp.temperature);
    ap.add("-s,--seed", "SEED", "random seed (default -1 = random)", [&sp](const std::string& v) {
        const long long x = std::stoll(v);
        if (x < -1 || x > 0xFFFFFFFFll) throw ArgError("invalid value '" + v + "' for --seed");
        sp.seed = x == -1 ? engine::kRandomSeed : (uint32_t)x;
    });
    ap.option("--top-k", "N", "top-k (default 40, 0 = off)", &sp.top_k);
    ap.option("--top-p", "P", "top-p (default 0.95)", &sp.top_p);
    ap.option("--min-p", "P", "min-p (default 0.05)", &sp.min_p);
    ap.option("--typical", "P", "typical-p (default 1.0 = off)", &sp.typical_p);
    ap.option("--top-nsigma", "S", "top-n-sigma (default -1 = off)", &sp.top_n_sigma);
    ap.option("--xtc-probability", "P", "XTC probability (default 0)", &sp.xtc_probability);
    ap.option("--xtc-threshold", "T", "XTC threshold (default 0.1)", &sp.xtc_threshold);
    ap.option("--repeat-penalty", "X", "repeat penalty (default 1.0 = off)", &sp.repeat_penalty);
    ap.option("--repeat-last-n", "N", "tokens the penalties look back (default 64, -1 = context)", &sp.repeat_last_n);
    ap.option("--presence-penalty", "X", "presence penalty (default 0)", &sp.presence_penalty);
    ap.option("--frequency-penalty", "X", "frequency penalty (default 0)", &sp.frequency_penalty);
    ap.option("--dry-multiplier", "X", "DRY multiplier (default 0 = off)", &sp.dry_multiplier);
    ap.option("--dry-base", "X", "DRY base (default 1.75)", &sp.dry_base);
    ap.option("--dry-allowed-length", "N", "DRY allowed length (default 2)", &sp.dry_allowed_length);
    ap.option("--dry-penalty-last-n", "N", "DRY look-back (default -1 = context)", &sp.dry_penalty_last_n);
    ap.option("--mirostat", "N", "mirostat (0 off, 1 v1, 2 v2)", &sp.mirostat);
    ap.option("--mirostat-lr", "ETA", "mirostat learning rate (default 0.1)", &sp.mirostat_eta);
    ap.option("--mirostat-ent", "TAU", "mirostat target entropy (default 5.0)", &sp.mirostat_tau);
    ap.option("--adaptive-target", "P", "adaptive-p target probability (default -1 = off)", &sp.adaptive_target);
    ap.option("--adaptive-decay", "D", "adaptive-p decay (default 0.9)", &sp.adaptive_decay);
    ap.add("--samplers", "LIST", "sampler order, ';'-separated names", [&sp](const std::string& v) {
        std::vector<std::string> names;
        std::stringstream ss(v);
        std::string n;
        while (std::getline(ss, n, ';'))
            if (!n.empty()) names.push_back(n);
        if (auto err = engine::parse_sampler_names(names, sp.samplers); !err.empty()) throw ArgError(err);
    });
    ap.add("--sampling-seq,--sampler-seq", "CHARS", "sampler order in short form (e.g. kypmt)",
           [&sp](const std::string& v) {
               if (auto err = engine::parse_sampler_chars(v, sp.samplers); !err.empty()) throw ArgError(err);
           });
}

}  // namespace cli
