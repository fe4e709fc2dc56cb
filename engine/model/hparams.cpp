#include "engine/model/hparams.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "engine/model/arch/arch.h"
#include "ggml/ggml.h"
#include "ggml/gguf.h"

namespace engine {

namespace {

[[noreturn]] void bad(const std::string& why) { throw std::runtime_error("model metadata: " + why); }

std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

RopeScaling parse_scaling(const std::string& s) {
    if (s == "none") return RopeScaling::None;
    if (s == "linear") return RopeScaling::Linear;
    if (s == "yarn") return RopeScaling::Yarn;
    if (s == "longrope") return RopeScaling::LongRope;
    bad("unsupported rope scaling type '" + s + "' (supported: none, linear, yarn, longrope)");
}

// YaRN's magnitude correction for a context scaled by `scale` (1 for no scaling).
float yarn_mscale(float scale, float mscale) { return scale <= 1.0f ? 1.0f : 0.1f * mscale * std::log(scale) + 1.0f; }

}  // namespace

const char* rope_scaling_name(RopeScaling s) {
    switch (s) {
        case RopeScaling::None: return "none";
        case RopeScaling::Linear: return "linear";
        case RopeScaling::Yarn: return "yarn";
        case RopeScaling::LongRope: return "longrope";
    }
    return "?";
}

uint32_t read_u32(const ggml::gguf::File& f, const HParams& h, const std::string& key, uint32_t def,
                  bool required) {
    const std::string k = h.arch + "." + key;
    if (!f.has(k)) {
        if (required) bad("missing '" + k + "'");
        return def;
    }
    const int64_t v = f.get_int(k, def);
    if (v < 0 || v > (int64_t)UINT32_MAX) bad("'" + k + "' is " + std::to_string(v) + ", out of range");
    return (uint32_t)v;
}

float read_f32(const ggml::gguf::File& f, const HParams& h, const std::string& key, float def) {
    const double v = f.get_float(h.arch + "." + key, def);
    if (!std::isfinite(v)) bad("'" + h.arch + "." + key + "' is not a finite number");
    return (float)v;
}

void read_swa_pattern(const ggml::gguf::File& f, HParams& h, uint32_t def_period) {
    const std::string k = h.arch + ".attention.sliding_window_pattern";
    h.swa_layers.assign(h.n_layer, 0);
    const ggml::gguf::Value* v = f.find(k);
    if (v && v->type == ggml::gguf::ValueType::Array) {
        const std::vector<int64_t> flags = f.get_int_array(k);
        if (flags.size() != h.n_layer)
            bad("'" + k + "' has " + std::to_string(flags.size()) + " entries for " + std::to_string(h.n_layer) +
                " layers");
        for (uint32_t il = 0; il < h.n_layer; ++il) h.swa_layers[il] = flags[il] != 0;
        return;
    }
    const uint32_t n = read_u32(f, h, "attention.sliding_window_pattern", def_period);
    for (uint32_t il = 0; il < h.n_layer; ++il) h.swa_layers[il] = n == 0 || il % n < n - 1;
}

uint32_t HParams::n_swa_layers() const {
    uint32_t n = 0;
    for (uint32_t il = 0; il < n_layer; ++il) n += is_swa(il);
    return n;
}

HParams HParams::from_gguf(const ggml::gguf::File& f, const RopeOverrides& o) {
    HParams h;
    h.arch = f.get_string("general.architecture");
    if (h.arch.empty()) bad("missing 'general.architecture'");
    const ArchRow* row = find_arch(h.arch);
    if (!row)
        throw std::runtime_error("unsupported model architecture '" + h.arch + "' (supported: " + supported_archs() +
                                 ")");
    h.name = f.get_string("general.name");
    h.n_ctx_train = read_u32(f, h, "context_length", 2048);
    h.n_embd = read_u32(f, h, "embedding_length", 0, true);
    h.n_layer = read_u32(f, h, "block_count", 0, true);
    h.n_ff = read_u32(f, h, "feed_forward_length", 0, true);
    h.n_head = read_u32(f, h, "attention.head_count", 0, true);
    h.n_head_kv = read_u32(f, h, "attention.head_count_kv", h.n_head);
    // Each dimension positive and below a bound no real model reaches, so that nothing sized from them (the
    // KV cache, the graph) overflows or asks for an absurd allocation.
    const struct {
        const char* key;
        uint32_t value, max;
    } dims[] = {{"context_length", h.n_ctx_train, 1u << 27}, {"embedding_length", h.n_embd, 1u << 20},
                {"block_count", h.n_layer, 4096},            {"feed_forward_length", h.n_ff, 1u << 22},
                {"attention.head_count", h.n_head, 4096},    {"attention.head_count_kv", h.n_head_kv, 4096}};
    for (const auto& d : dims) {
        if (d.value == 0) bad(h.arch + "." + d.key + " must be positive");
        if (d.value > d.max)
            bad(h.arch + "." + d.key + " " + std::to_string(d.value) + " is implausible (at most " +
                std::to_string(d.max) + ")");
    }
    if (h.n_head % h.n_head_kv != 0)
        bad("attention.head_count " + std::to_string(h.n_head) + " is not a multiple of attention.head_count_kv " +
            std::to_string(h.n_head_kv));
    if ((!f.has(h.arch + ".attention.key_length") || !f.has(h.arch + ".attention.value_length")) &&
        h.n_embd % h.n_head != 0)
        bad("embedding_length " + std::to_string(h.n_embd) + " is not a multiple of attention.head_count " +
            std::to_string(h.n_head) + " (and the file gives no attention.key_length/value_length)");
    h.n_embd_head_k = read_u32(f, h, "attention.key_length", h.n_embd / h.n_head);
    h.n_embd_head_v = read_u32(f, h, "attention.value_length", h.n_embd / h.n_head);
    if (h.n_embd_head_k == 0 || h.n_embd_head_v == 0) bad("zero head size");
    if (h.n_embd_head_k > 4096 || h.n_embd_head_v > 4096) bad("implausible head size");
    h.n_rot = read_u32(f, h, "rope.dimension_count", h.n_embd_head_k);
    if (h.n_rot == 0) bad("rope.dimension_count must be positive");
    if (h.n_rot % 2) bad("rope.dimension_count " + std::to_string(h.n_rot) + " is odd (RoPE rotates pairs)");
    if (h.n_rot > h.n_embd_head_k)
        bad("rope.dimension_count " + std::to_string(h.n_rot) + " exceeds the head size " +
            std::to_string(h.n_embd_head_k));
    h.rms_eps = read_f32(f, h, "attention.layer_norm_rms_epsilon", 1e-5f);
    h.norm_eps = read_f32(f, h, "attention.layer_norm_epsilon", 1e-5f);
    if (!(h.rms_eps > 0.0f) || !(h.norm_eps > 0.0f)) bad("layer norm epsilons must be positive");
    h.causal = f.get_bool(h.arch + ".attention.causal", true);
    h.n_vocab = read_u32(f, h, "vocab_size", 0);

    // RoPE as trained; the row sets the rotation mode and may change the rest.
    h.rope_mode = row->rope_mode;
    h.rope_freq_base = read_f32(f, h, "rope.freq_base", 10000.0f);
    float factor = read_f32(f, h, "rope.scaling.factor", 0.0f);
    if (factor == 0.0f) factor = read_f32(f, h, "rope.scale_linear", 0.0f);
    if (factor < 0.0f) bad("rope scaling factor must not be negative");
    h.rope_freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;
    const std::string scaling = f.get_string(h.arch + ".rope.scaling.type", "");
    h.rope_scaling = !scaling.empty() ? parse_scaling(scaling) : factor != 0.0f ? RopeScaling::Linear : RopeScaling::None;
    h.n_ctx_orig = read_u32(f, h, "rope.scaling.original_context_length", 0);
    h.rope_attn_factor = read_f32(f, h, "rope.scaling.attn_factor", 1.0f);
    h.yarn_log_mul = read_f32(f, h, "rope.scaling.yarn_log_multiplier", 0.0f);
    h.yarn_ext_factor = read_f32(f, h, "rope.scaling.yarn_ext_factor", -1.0f);
    h.yarn_attn_factor = read_f32(f, h, "rope.scaling.yarn_attn_factor", 1.0f);
    h.yarn_beta_fast = read_f32(f, h, "rope.scaling.yarn_beta_fast", 32.0f);
    h.yarn_beta_slow = read_f32(f, h, "rope.scaling.yarn_beta_slow", 1.0f);
    h.rope_freq_base_swa = read_f32(f, h, "rope.freq_base_swa", h.rope_freq_base);
    h.rope_freq_scale_swa = h.rope_freq_scale;

    // Experts (shared keys, read where the row has experts; WeightLoader checks the tensors against them).
    // Checked before the row reads its own keys, which may divide by them.
    if (row->experts != Use::Never) {
        h.n_expert = read_u32(f, h, "expert_count", 0);
        h.n_expert_used = read_u32(f, h, "expert_used_count", 0);
        h.n_ff_exp = read_u32(f, h, "expert_feed_forward_length", 0);
        h.n_ff_shexp = read_u32(f, h, "expert_shared_feed_forward_length", 0);
        if (row->experts == Use::Required && h.n_expert == 0)
            bad(h.arch + " needs '" + h.arch + ".expert_count' (a mixture-of-experts architecture)");
        if (h.n_expert > 512) bad("expert_count " + std::to_string(h.n_expert) + " is implausible (at most 512)");
        if (h.n_expert_used > h.n_expert)
            bad("expert_used_count " + std::to_string(h.n_expert_used) + " exceeds expert_count " +
                std::to_string(h.n_expert));
        if (h.n_expert > 0 && h.n_expert_used == 0)
            bad("expert_used_count must be positive when expert_count is set (expert_count " +
                std::to_string(h.n_expert) + ")");
        if (h.n_ff_exp > (1u << 22) || h.n_ff_shexp > (1u << 22)) bad("implausible expert feed-forward length");
    }

    // Embedding models built on decoders (e.g. Qwen3-Embedding: last) name their pooling too.
    if (f.find(h.arch + ".pooling_type")) {
        h.pooling_type = (int)read_u32(f, h, "pooling_type", 0);
        if (h.pooling_type > 4) bad("unknown pooling_type " + std::to_string(h.pooling_type));
    }

    row->read_hparams(f, h);

    if (!(h.rope_freq_base > 0.0f) || !(h.rope_freq_base_swa > 0.0f)) bad("rope.freq_base must be positive");
    if (row->sliding_window == Use::Never) h.n_swa = 0;
    if (row->sliding_window == Use::Required && h.n_swa == 0)
        bad(h.arch + ".attention.sliding_window must be positive (every " + h.arch +
            " model has sliding-window layers)");
    if (h.n_swa > 0) {
        if (h.swa_layers.size() != h.n_layer) h.swa_layers.assign(h.n_layer, 1);
        if (h.n_swa > h.n_ctx_train)
            bad("attention.sliding_window " + std::to_string(h.n_swa) + " exceeds the training context " +
                std::to_string(h.n_ctx_train));
    }
    if (h.attn_softcap < 0.0f || h.final_softcap < 0.0f) bad("soft-capping values must not be negative");

    // The user's overrides, then the derived factors: the steps of llama.cpp's context setup, so that
    // the same flags give the same rotation.
    if (o.freq_base != 0.0f) h.rope_freq_base = o.freq_base;
    if (o.freq_scale != 0.0f) h.rope_freq_scale = o.freq_scale;
    if (o.scaling_set) h.rope_scaling = o.scaling;
    // llama.cpp reads a file without a scaling type as linear, so a frequency scale given alone applies.
    if (!o.scaling_set && scaling.empty() && o.freq_scale != 0.0f) h.rope_scaling = RopeScaling::Linear;
    if (h.n_ctx_orig == 0) h.n_ctx_orig = h.n_ctx_train;
    if (o.yarn_orig_ctx != 0) h.n_ctx_orig = o.yarn_orig_ctx;
    if (o.yarn_ext_factor >= 0.0f) h.yarn_ext_factor = o.yarn_ext_factor;
    if (o.yarn_attn_factor >= 0.0f) h.yarn_attn_factor = o.yarn_attn_factor;
    if (o.yarn_beta_fast >= 0.0f) h.yarn_beta_fast = o.yarn_beta_fast;
    if (o.yarn_beta_slow >= 0.0f) h.yarn_beta_slow = o.yarn_beta_slow;
    if (h.rope_scaling == RopeScaling::None) h.rope_freq_scale = 1.0f;
    if (!(h.rope_freq_scale > 0.0f)) bad("rope frequency scale must be positive");
    if (h.yarn_ext_factor < 0.0f) h.yarn_ext_factor = h.rope_scaling == RopeScaling::Yarn ? 1.0f : 0.0f;
    if (h.yarn_ext_factor != 0.0f) {
        const float scale = 1.0f / h.rope_freq_scale;
        if (h.yarn_log_mul != 0.0f)
            h.yarn_attn_factor = yarn_mscale(scale, 1.0f) / yarn_mscale(scale, h.yarn_log_mul);
        else
            h.yarn_attn_factor = yarn_mscale(scale, 1.0f);
        // The rope kernel multiplies by 1 + 0.1 ln(scale) again whenever YaRN mixes (ext_factor != 0).
        h.yarn_attn_factor *= 1.0f / (1.0f + 0.1f * std::log(scale));
    }
    h.yarn_attn_factor *= h.rope_attn_factor;
    return h;
}

std::vector<std::string> describe_model(const HParams& h, const ggml::gguf::File& f) {
    std::vector<std::string> out = h.describe();
    for (const char* name : {"rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight"})
        if (const ggml::gguf::TensorInfo* t = f.find_tensor(name))
            out.push_back(std::string("rope frequency factors: ") + name + " (" + std::to_string(t->ne[0]) +
                          ")");
    return out;
}

std::vector<std::string> HParams::describe() const {
    std::vector<std::string> out;
    std::string a = "architecture " + arch + ": " + std::to_string(n_layer) + " layers, n_embd " +
                    std::to_string(n_embd) + ", " + std::to_string(n_head) + " heads";
    if (n_head_kv != n_head) a += " (" + std::to_string(n_head_kv) + " KV)";
    a += " of " + std::to_string(n_embd_head_k) + ", FFN " + std::to_string(n_ff) + ", vocab " +
         std::to_string(n_vocab) + ", context " + std::to_string(n_ctx_train) + (causal ? "" : ", non-causal");
    out.push_back(a);
    std::string r = std::string("rope: ") + (rope_mode == ggml::kRopeNeox ? "neox" : "normal") + ", " +
                    std::to_string(n_rot) + " dims, base " + fmt(rope_freq_base) + ", scaling " +
                    rope_scaling_name(rope_scaling);
    if (rope_freq_scale != 1.0f) r += " x" + fmt(1.0 / rope_freq_scale);
    if (rope_scaling == RopeScaling::Yarn || rope_scaling == RopeScaling::LongRope || yarn_ext_factor != 0.0f)
        r += " (original context " + std::to_string(n_ctx_orig) + ", ext_factor " + fmt(yarn_ext_factor) +
             ", attn_factor " + fmt(yarn_attn_factor) + ", beta_fast " + fmt(yarn_beta_fast) + ", beta_slow " +
             fmt(yarn_beta_slow) + ")";
    out.push_back(r);
    if (n_swa > 0) {
        std::string s = "sliding window: " + std::to_string(n_swa) + " positions on " +
                        std::to_string(n_swa_layers()) + " of " + std::to_string(n_layer) + " layers";
        if (rope_freq_base_swa != rope_freq_base || rope_freq_scale_swa != rope_freq_scale)
            s += " (rope base " + fmt(rope_freq_base_swa) + ", scale " + fmt(rope_freq_scale_swa) + " there)";
        out.push_back(s);
    }
    if (n_expert > 0) {
        std::string e = "experts: " + std::to_string(n_expert) + ", " + std::to_string(n_expert_used) +
                        " used per token, FFN " + std::to_string(n_ff_exp ? n_ff_exp : n_ff) + " each";
        if (n_ff_shexp > 0) e += ", shared expert FFN " + std::to_string(n_ff_shexp);
        out.push_back(e);
    }
    if (attn_softcap > 0.0f || final_softcap > 0.0f)
        out.push_back("soft-cap: attention " + fmt(attn_softcap) + ", logits " + fmt(final_softcap));
    if (max_alibi_bias > 0.0f) out.push_back("ALiBi: maximum bias " + fmt(max_alibi_bias));
    return out;
}

}  // namespace engine
