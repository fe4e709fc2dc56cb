#include "server/cli/common_options.h"
#include "server/cli/env_names.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>

namespace cli {

void add_model_options(ArgParser& ap, ModelOptions& mo) {
    ap.option("-m,--model", "FILE", "GGUF model file", &mo.model);
    ap.option("-c,--ctx-size", "N", "context size in tokens (KV cache cells; 0 = from the model)", &mo.n_ctx);
    ap.option("-b,--batch-size", "N", "logical batch size: most tokens per decode call (default 2048)", &mo.n_batch);
    ap.option("-ub,--ubatch-size", "N", "physical micro-batch size (default 512)", &mo.n_ubatch);
    ap.option("-t,--threads", "N", "threads for single-token decode (default: all cores)", &mo.n_threads);
    ap.option("-tb,--threads-batch", "N", "threads for prompt batches (default: --threads)", &mo.n_threads_batch);
    // llama-server before 2025 took a bare -fa; later ones take a value. Both work: bare means on.
    ap.optional_value("-fa,--flash-attn", "on|off|auto", "flash attention (default off; bare -fa: on)", "on",
                      [&mo](const std::string& v) {
                          bool b = false;
                          if (v == "on" || v == "off" || v == "auto") mo.flash_attn = v;
                          else if (parse_env_bool(v, &b)) mo.flash_attn = b ? "on" : "off";  // 1, enabled, ...
                          else throw ArgError("invalid value '" + v + "' for --flash-attn: expected on, off or auto");
                      });
    ap.option("-ctk,--cache-type-k", "TYPE", "KV cache type of K (default f16)", &mo.cache_type_k);
    ap.option("-ctv,--cache-type-v", "TYPE", "KV cache type of V (default f16)", &mo.cache_type_v);
    ap.add("-ngl,--n-gpu-layers,--gpu-layers", "N|all|auto",
           "layers to offload to the GPU: the last N (more than the model's layers: the output too); all: "
           "everything; auto: everything when a GPU is usable, else nothing",
           [&mo](const std::string& v) {
               if (v == "all") mo.n_gpu_layers = 9999;
               else if (v == "auto" || v == "-1") mo.n_gpu_layers = ggml::cuda_device_count() > 0 ? 9999 : 0;
               else mo.n_gpu_layers = ArgParser::to_int("--n-gpu-layers", v);
           });
    add_device_options(ap, mo.device);
    ap.flag("-nkvo,--no-kv-offload", "keep the KV cache of offloaded layers in host memory (attention on the CPU)",
            &mo.kv_offload, false);
    ap.flag("-kvo,--kv-offload", "KV cache of offloaded layers on their GPU (default)", &mo.kv_offload);
    ap.flag("--no-mmap", "read the model into memory instead of mapping the file", &mo.use_mmap, false);
    ap.flag("--mmap", "map the model file (default)", &mo.use_mmap);
    ap.flag("--mlock", "lock the model in RAM so that it is never paged out", &mo.use_mlock);
    ap.add("-lm,--load-mode", "MODE", "auto or mmap (map the file), none (read it), mlock (read and lock), mmap+mlock",
           [&mo](const std::string& v) {
               if (v == "auto" || v == "mmap") mo.use_mmap = true, mo.use_mlock = false;
               else if (v == "none") mo.use_mmap = false, mo.use_mlock = false;
               else if (v == "mlock") mo.use_mmap = false, mo.use_mlock = true;
               else if (v == "mmap+mlock") mo.use_mmap = true, mo.use_mlock = true;
               else if (v == "dio") throw ArgError("--load-mode dio: direct I/O is not supported; use none or mmap");
               else throw ArgError("invalid value '" + v + "' for --load-mode: expected auto, none, mmap, mlock or mmap+mlock");
           });
    ap.flag("--check-tensors", "check every tensor for NaN and infinite values before use", &mo.check_tensors);
    ap.add("--override-kv", "KEY=TYPE:VALUE,...",
           "replace model metadata (TYPE int, float, bool or str), e.g. tokenizer.ggml.add_bos_token=bool:false",
           [&mo](const std::string& v) { parse_kv_overrides(v, mo.kv_overrides); });
    // RoPE: the model's values unless given (llama-server's flags and meanings).
    ap.add("--rope-scaling", "none|linear|yarn", "RoPE frequency scaling (default: the model's)",
           [&mo](const std::string& v) {
               if (v == "none") mo.rope.scaling = engine::RopeScaling::None;
               else if (v == "linear") mo.rope.scaling = engine::RopeScaling::Linear;
               else if (v == "yarn") mo.rope.scaling = engine::RopeScaling::Yarn;
               else throw ArgError("invalid value '" + v + "' for --rope-scaling: expected none, linear or yarn");
               mo.rope.scaling_set = true;
           });
    ap.option("--rope-scale", "N", "RoPE context scaling factor: the context is stretched N times (freq scale 1/N)",
              &mo.rope_scale);
    ap.option("--rope-freq-base", "N", "RoPE base frequency (default: the model's)", &mo.rope.freq_base);
    ap.option("--rope-freq-scale", "N", "RoPE frequency scale: the context is stretched 1/N times", &mo.rope.freq_scale);
    ap.option("--yarn-orig-ctx", "N", "YaRN: the model's original context (default: the training context)",
              &mo.rope.yarn_orig_ctx);
    ap.option("--yarn-ext-factor", "N", "YaRN: extrapolation mix factor (default -1: the model's / 1 for YaRN)",
              &mo.rope.yarn_ext_factor);
    ap.option("--yarn-attn-factor", "N", "YaRN: attention magnitude factor (default -1: the model's)",
              &mo.rope.yarn_attn_factor);
    ap.option("--yarn-beta-slow", "N", "YaRN: high correction dimension (default -1: 1)", &mo.rope.yarn_beta_slow);
    ap.option("--yarn-beta-fast", "N", "YaRN: low correction dimension (default -1: 32)", &mo.rope.yarn_beta_fast);
    add_cpu_options(ap, mo.cpu);
}

void parse_kv_overrides(const std::string& spec, std::vector<std::pair<std::string, ggml::gguf::Value>>& out) {
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        const size_t colon = eq == std::string::npos ? std::string::npos : item.find(':', eq);
        if (eq == std::string::npos || eq == 0 || colon == std::string::npos)
            throw ArgError("invalid --override-kv '" + item + "': expected KEY=TYPE:VALUE");
        const std::string key = item.substr(0, eq), type = item.substr(eq + 1, colon - eq - 1),
                          value = item.substr(colon + 1);
        if (key.size() > 127) throw ArgError("invalid --override-kv '" + item + "': the key is longer than 127 bytes");
        ggml::gguf::Value v;
        if (type == "int") {
            char* end = nullptr;
            errno = 0;
            const long long x = std::strtoll(value.c_str(), &end, 10);
            if (value.empty() || *end || errno) throw ArgError("invalid --override-kv '" + item + "': not an integer");
            v = ggml::gguf::Value{ggml::gguf::ValueType::I64, (int64_t)x};
        } else if (type == "float") {
            v = ggml::gguf::Value{ggml::gguf::ValueType::F64, ArgParser::to_double("--override-kv", value)};
        } else if (type == "bool") {
            if (value != "true" && value != "false")
                throw ArgError("invalid --override-kv '" + item + "': a bool is true or false");
            v = ggml::gguf::Value::boolean(value == "true");
        } else if (type == "str") {
            v = ggml::gguf::Value::string(value);
        } else {
            throw ArgError("invalid --override-kv '" + item + "': type '" + type + "' is not int, float, bool or str");
        }
        out.emplace_back(key, std::move(v));
    }
}

engine::LogitBias parse_logit_bias_arg(const std::string& v) {
    // TOKEN_ID followed by the signed bias: "15043+1", "15043-1.5", "2-inf".
    size_t i = 0;
    while (i < v.size() && std::isdigit((unsigned char)v[i])) ++i;
    if (i == 0 || i >= v.size() || (v[i] != '+' && v[i] != '-'))
        throw ArgError("invalid value '" + v + "' for --logit-bias: expected TOKEN_ID(+/-)BIAS, e.g. 15043+1");
    const int tok = ArgParser::to_int("--logit-bias", v.substr(0, i));
    const std::string b = v.substr(i);
    float bias;
    if (b == "-inf" || b == "-INF") bias = -std::numeric_limits<float>::infinity();
    else if (b == "+inf" || b == "+INF") bias = std::numeric_limits<float>::infinity();
    else bias = (float)ArgParser::to_double("--logit-bias", b);
    return engine::LogitBias{tok, bias};
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

void check_cache_type(const std::string& opt, const std::string& name) { cache_type(opt, name); }

void finish_model_options(const ArgParser& ap, ModelOptions& mo) {
    if (mo.model.empty()) throw ArgError("missing -m MODEL");
    if (mo.n_batch == 0) throw ArgError("--batch-size must be positive");
    if (mo.n_ubatch == 0) throw ArgError("--ubatch-size must be positive");
    if (mo.n_ubatch > mo.n_batch) {
        std::fprintf(stderr, "warning: --ubatch-size %u exceeds --batch-size %u; using %u\n", mo.n_ubatch, mo.n_batch,
                     mo.n_batch);
        mo.n_ubatch = mo.n_batch;
    }
    // -1 is llama-server's spelling of the default (all cores).
    if (mo.n_threads == -1) mo.n_threads = 0;
    if (mo.n_threads_batch == -1) mo.n_threads_batch = 0;
    if (mo.n_threads < 0 || mo.n_threads_batch < 0) throw ArgError("thread counts must not be negative (-1: all cores)");
    if (mo.n_gpu_layers < 0) throw ArgError("--n-gpu-layers must not be negative");
    cache_type("--cache-type-k", mo.cache_type_k);
    const ggml::Type tv = cache_type("--cache-type-v", mo.cache_type_v);
    if (ggml::type_traits(tv).is_quantized && mo.flash_attn == "off")
        throw ArgError("a quantized V cache (--cache-type-v " + mo.cache_type_v + ") requires flash attention (-fa on)");
    mo.offload = mo.device.finish(ap, mo.n_gpu_layers);
    if (mo.rope_scale != 0.0f) {
        if (!(mo.rope_scale > 0.0f)) throw ArgError("--rope-scale must be positive");
        if (mo.rope.freq_scale != 0.0f) throw ArgError("use only one of --rope-scale and --rope-freq-scale");
        mo.rope.freq_scale = 1.0f / mo.rope_scale;
    }
    if (mo.rope.freq_scale < 0.0f) throw ArgError("--rope-freq-scale must be positive");
    if (mo.rope.freq_base < 0.0f) throw ArgError("--rope-freq-base must be positive");
    mo.cpu.finish();
}

engine::ModelParams ModelOptions::model_params() const {
    engine::ModelParams p;
    p.n_gpu_layers = offload ? n_gpu_layers : 0;
    p.main_gpu = device.main_gpu;
    p.rope = rope;
    p.use_mmap = use_mmap;
    p.use_mlock = use_mlock;
    p.check_tensors = check_tensors;
    p.kv_overrides = kv_overrides;
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
    p.offload_kqv = kv_offload;
    p.cpu = cpu.threads;
    ggml::type_from_name(cache_type_k.c_str(), &p.type_k);
    ggml::type_from_name(cache_type_v.c_str(), &p.type_v);
    return p;
}

// \n, \t, \r, \\, \", \' as llama.cpp's command line reads them.
static std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 >= s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
    }
    return out;
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
    ap.option("--typical,--typical-p", "P", "typical-p (default 1.0 = off)", &sp.typical_p);
    ap.option("--top-nsigma,--top-n-sigma", "S", "top-n-sigma (default -1 = off)", &sp.top_n_sigma);
    ap.option("--xtc-probability", "P", "XTC probability (default 0)", &sp.xtc_probability);
    ap.option("--xtc-threshold", "T", "XTC threshold (default 0.1)", &sp.xtc_threshold);
    ap.option("--repeat-penalty", "X", "repeat penalty (default 1.0 = off)", &sp.repeat_penalty);
    ap.option("--repeat-last-n", "N", "tokens the penalties look back (default 64, -1 = context)", &sp.repeat_last_n);
    ap.option("--presence-penalty", "X", "presence penalty (default 0)", &sp.presence_penalty);
    ap.option("--frequency-penalty", "X", "frequency penalty (default 0)", &sp.frequency_penalty);
    ap.option("--dry-multiplier", "X", "DRY multiplier (default 0 = off)", &sp.dry_multiplier);
    ap.option("--dry-base", "X", "DRY base (default 1.75)", &sp.dry_base);
    ap.option("--dry-allowed-length", "N", "DRY allowed length (default 2)", &sp.dry_allowed_length);
    ap.option("--dry-penalty-last-n", "N", "DRY look-back in tokens (default 64, -1 = context, 0 = off)", &sp.dry_penalty_last_n);
    ap.add("--dry-sequence-breaker", "STRING",
           "DRY sequence breaker (repeat the option for several; the first use clears the defaults '\\n', ':', "
           "'\"', '*'; \"none\": no breakers)",
           [&sp, cleared = std::make_shared<bool>(false)](const std::string& v) {
               if (!*cleared) {
                   sp.dry_sequence_breakers.clear();
                   *cleared = true;
               }
               if (v != "none") sp.dry_sequence_breakers.push_back(unescape(v));
           });
    ap.option("--dynatemp-range", "N", "dynamic temperature range (default 0 = off)", &sp.dynatemp_range);
    ap.option("--dynatemp-exp", "N", "dynamic temperature exponent (default 1)", &sp.dynatemp_exponent);
    ap.add("-l,--logit-bias", "TOKEN_ID(+/-)BIAS", "bias a token's logit, e.g. 15043+1 or 15043-1 (repeatable)",
           [&sp](const std::string& v) { sp.logit_bias.push_back(parse_logit_bias_arg(v)); });
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
