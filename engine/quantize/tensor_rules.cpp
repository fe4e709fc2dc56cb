#include "engine/quantize/tensor_rules.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

namespace engine::quant {

namespace {

using T = ggml::Type;
using F = FileType;
using C = Category;

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// ---- categories -------------------------------------------------------------------------------------

// Checked in this order: the first name part found decides.
struct CategoryName {
    const char* part;
    Category cat;
};
constexpr CategoryName kCategoryNames[] = {
    {"attn_qkv.weight", C::AttnQkv},       {"attn_kv_b.weight", C::AttnKvB}, {"attn_v.weight", C::AttnV},
    {"attn_k.weight", C::AttnK},           {"attn_q.weight", C::AttnQ},     {"attn_output.weight", C::AttnOutput},
    {"ffn_up", C::FfnUp},                  {"ffn_gate", C::FfnGate},        {"ffn_down", C::FfnDown},
};

// ---- which tensors are never quantized --------------------------------------------------------------

// Name parts that keep a 2-D weight in its type: norms, MoE routers, tiny or positional tensors of
// other architectures (llama.cpp's list).
constexpr const char* kNeverQuantizedParts[] = {
    "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj",
    "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
    "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
    "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
    "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
    "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
    ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger",
    "a.rvq.codebook", "mm.a.code_embd",
};
constexpr const char* kNeverQuantizedNames[] = {"position_embd.weight", "token_types.weight"};  // BERT

// ---- the mix rules ----------------------------------------------------------------------------------

constexpr uint64_t ft(std::initializer_list<F> fs) {
    uint64_t m = 0;
    for (F f : fs) m |= uint64_t(1) << uint32_t(f);
    return m;
}
constexpr uint64_t kAnyFtype = ~uint64_t(0);
bool has(uint64_t mask, F f) { return (mask >> uint32_t(f)) & 1; }

constexpr uint32_t cat(std::initializer_list<C> cs) {
    uint32_t m = 0;
    for (C c : cs) m |= uint32_t(1) << uint32_t(c);
    return m;
}
constexpr uint32_t kAttnVLike = cat({C::AttnV, C::AttnQkv, C::AttnKvB});
constexpr uint32_t kAllButOutput = ~cat({C::Output});
constexpr uint32_t kLayerTensors = ~cat({C::Output, C::TokenEmbd});

// The very-low-bit file types, which llama.cpp only writes with an importance matrix.
constexpr uint64_t kIq12 = ft({F::IQ2_XXS, F::IQ2_XS, F::IQ1_S, F::IQ2_S, F::IQ2_M, F::IQ1_M});

// What a rule's condition may look at.
struct Site {
    const ModelFacts& model;
    T default_type;
    int64_t ne0, ne2;
    Category cat;
    bool has_imatrix;
    int i_wv, n_wv;        // this attn_v-like tensor is the i_wv-th of n_wv
    int i_layer, n_layer;  // ffn tensors: the layer (from the name with experts, else a running count)
    int i_down_count;      // ffn_down: the running count, even with experts
    bool falcon() const { return model.arch == "falcon"; }
    bool gqa4() const { return model.n_gqa() >= 4; }
    bool experts8() const { return model.n_expert == 8; }
};

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third one between.
bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

using Cond = bool (*)(const Site&);
bool always(const Site&) { return true; }

constexpr T kKeep = T::Q8_1;  // marker: leave the type as it is (Q8_1 is never a weight type)

struct Rule {
    uint32_t cats;
    uint64_t ftypes;
    Cond when;
    T type;
};

// First match wins. Rows for the same category and file type are one if/else chain of llama.cpp's.
const Rule kRules[] = {
    // The output projection (and tied token embeddings, which are the output projection).
    {cat({C::Output}), ft({F::MXFP4_MOE}), always, T::Q8_0},
    {cat({C::Output}), kAnyFtype, [](const Site& s) { return s.falcon() || s.ne0 % ggml::block_size(s.default_type) != 0; }, T::Q8_0},
    {cat({C::Output}), ft({F::IQ2_XXS, F::IQ2_XS, F::IQ3_XXS, F::IQ1_S, F::IQ2_S, F::IQ2_M, F::IQ1_M}), always, T::Q5_K},
    {cat({C::Output}), kAnyFtype, [](const Site& s) { return s.default_type != T::Q8_0; }, T::Q6_K},
    {cat({C::Output}), kAnyFtype, always, kKeep},

    // MXFP4_MOE: experts (3-D tensors) in MXFP4, everything else Q8_0.
    {kAllButOutput, ft({F::MXFP4_MOE}),
     [](const Site& s) {
         const bool ffn = s.cat == C::FfnUp || s.cat == C::FfnGate || s.cat == C::FfnDown;
         return s.ne2 > 1 && (s.model.arch != "bailingmoe3" || ffn);
     },
     T::MXFP4},
    {kAllButOutput, ft({F::MXFP4_MOE}), always, T::Q8_0},

    // Untied token embeddings.
    {cat({C::TokenEmbd}), ft({F::IQ2_XXS, F::IQ2_XS, F::IQ1_S, F::IQ1_M}), always, T::Q2_K},
    {cat({C::TokenEmbd}), ft({F::IQ2_S, F::IQ2_M, F::IQ3_XXS}), always, T::IQ3_S},
    {cat({C::TokenEmbd}), ft({F::TQ1_0, F::TQ2_0}), always, T::Q4_K},
    {cat({C::TokenEmbd}), kAnyFtype, always, kKeep},

    // IQ1/IQ2 mixes.
    {kAttnVLike, kIq12, [](const Site& s) { return s.gqa4() || s.model.n_expert >= 4; }, T::Q4_K},
    {kAttnVLike, ft({F::IQ2_S, F::IQ2_M}), always, T::IQ3_S},
    {kAttnVLike, kIq12, always, T::Q2_K},
    {cat({C::AttnK}), kIq12, [](const Site& s) { return s.experts8(); }, T::Q4_K},
    {cat({C::FfnDown}), ft({F::IQ2_S, F::IQ2_M}), [](const Site& s) { return s.i_down_count < s.n_layer / 8; }, T::IQ3_S},
    {cat({C::FfnDown}), kIq12, [](const Site& s) { return s.i_down_count < s.n_layer / 8; }, T::Q2_K},
    {cat({C::AttnOutput}), kIq12, [](const Site& s) { return s.experts8(); }, T::Q5_K},
    {cat({C::AttnOutput}), ft({F::IQ1_S, F::IQ1_M}), always, T::IQ2_XXS},
    {cat({C::AttnOutput}), ft({F::IQ2_S, F::IQ2_M}), always, T::IQ3_S},
    {kLayerTensors, kIq12, always, kKeep},

    // attn_v (and fused qkv, MLA kv_b).
    {kAttnVLike, ft({F::Q2_K}), [](const Site& s) { return s.gqa4(); }, T::Q4_K},
    {kAttnVLike, ft({F::Q2_K}), always, T::Q3_K},
    {kAttnVLike, ft({F::Q2_K_S}), [](const Site& s) { return s.gqa4(); }, T::Q4_K},
    {kAttnVLike, ft({F::IQ3_XXS}), [](const Site& s) { return s.gqa4(); }, T::Q4_K},
    {kAttnVLike, ft({F::IQ3_XXS}), [](const Site& s) { return !s.has_imatrix; }, T::IQ3_S},
    {kAttnVLike, ft({F::IQ3_XXS}), always, T::IQ3_XXS},
    {kAttnVLike, ft({F::IQ3_XS, F::IQ3_S}), [](const Site& s) { return s.gqa4(); }, T::Q4_K},
    {kAttnVLike, ft({F::IQ3_M}), always, T::Q4_K},
    {kAttnVLike, ft({F::Q3_K_M}), [](const Site& s) { return s.i_wv < 2; }, T::Q5_K},
    {kAttnVLike, ft({F::Q3_K_M}), always, T::Q4_K},
    {kAttnVLike, ft({F::Q3_K_L}), always, T::Q5_K},
    {kAttnVLike, ft({F::IQ4_NL, F::IQ4_XS}), [](const Site& s) { return s.gqa4(); }, T::Q5_K},
    {kAttnVLike, ft({F::Q4_K_M, F::Q5_K_M}), [](const Site& s) { return more_bits(s.i_wv, s.n_wv); }, T::Q6_K},
    {kAttnVLike, ft({F::Q4_K_S}), [](const Site& s) { return s.i_wv < 4; }, T::Q5_K},

    // attn_k, attn_q.
    {cat({C::AttnK}), kAnyFtype, [](const Site& s) { return s.experts8(); }, T::Q8_0},
    {cat({C::AttnK}), ft({F::IQ3_XS}), always, T::IQ3_XXS},
    {cat({C::AttnK}), ft({F::IQ3_XXS}), always, T::IQ2_S},
    {cat({C::AttnQ}), ft({F::IQ3_XS}), always, T::IQ3_XXS},
    {cat({C::AttnQ}), ft({F::IQ3_XXS}), always, T::IQ2_S},

    // ffn_down.
    {cat({C::FfnDown}), ft({F::Q2_K}), always, T::Q3_K},
    {cat({C::FfnDown}), ft({F::Q2_K_S}), [](const Site& s) { return s.i_layer < s.n_layer / 8; }, T::Q4_K},
    {cat({C::FfnDown}), ft({F::IQ3_XXS}), [](const Site& s) { return !s.has_imatrix && s.i_layer < s.n_layer / 8; }, T::Q4_K},
    {cat({C::FfnDown}), ft({F::IQ3_XXS}), [](const Site& s) { return !s.has_imatrix; }, T::Q3_K},
    {cat({C::FfnDown}), ft({F::Q3_K_M}), [](const Site& s) { return s.i_layer < s.n_layer / 16; }, T::Q5_K},
    {cat({C::FfnDown}), ft({F::Q3_K_M}), [](const Site& s) { return !s.falcon() || more_bits(s.i_layer, s.n_layer); }, T::Q4_K},
    {cat({C::FfnDown}), ft({F::Q3_K_M}), always, T::Q3_K},
    {cat({C::FfnDown}), ft({F::IQ3_M}),
     [](const Site& s) { return s.i_layer < s.n_layer / 8 || (s.experts8() && more_bits(s.i_layer, s.n_layer)); }, T::Q4_K},
    {cat({C::FfnDown}), ft({F::Q3_K_L}), [](const Site& s) { return s.falcon(); }, T::Q4_K},
    {cat({C::FfnDown}), ft({F::Q3_K_L}), always, T::Q5_K},
    {cat({C::FfnDown}), ft({F::Q4_K_M}), [](const Site& s) { return s.falcon() && s.i_layer < s.n_layer / 16; }, T::Q6_K},
    {cat({C::FfnDown}), ft({F::Q4_K_M}), [](const Site& s) { return s.falcon() && more_bits(s.i_layer, s.n_layer); }, T::Q5_K},
    {cat({C::FfnDown}), ft({F::Q4_K_M}), [](const Site& s) { return s.falcon(); }, T::Q4_K},
    {cat({C::FfnDown}), ft({F::Q4_K_M}), [](const Site& s) { return more_bits(s.i_layer, s.n_layer); }, T::Q6_K},
    {cat({C::FfnDown}), ft({F::IQ4_NL, F::IQ4_XS}), [](const Site& s) { return !s.has_imatrix && s.i_layer < s.n_layer / 8; }, T::Q5_K},
    {cat({C::FfnDown}), ft({F::Q5_K_M}), [](const Site& s) { return more_bits(s.i_layer, s.n_layer); }, T::Q6_K},
    {cat({C::FfnDown}), ft({F::Q4_K_S}), [](const Site& s) { return !s.falcon() && s.i_layer < s.n_layer / 8; }, T::Q5_K},
    {cat({C::FfnDown}), ft({F::Q4_0}), [](const Site& s) { return s.has_imatrix && s.i_layer < s.n_layer / 8; }, T::Q4_1},
    {cat({C::FfnDown}), ft({F::Q5_0}), [](const Site& s) { return s.has_imatrix && s.i_layer < s.n_layer / 8; }, T::Q5_1},

    // attn_output.
    {cat({C::AttnOutput}),
     ft({F::Q2_K, F::IQ3_XS, F::IQ3_XXS, F::Q3_K_S, F::Q3_K_M, F::IQ4_NL, F::Q4_K_S, F::Q4_K_M, F::IQ3_S, F::IQ3_M, F::IQ4_XS}),
     [](const Site& s) { return !s.falcon() && s.experts8(); }, T::Q5_K},
    {cat({C::AttnOutput}), kAnyFtype, [](const Site& s) { return !s.falcon() && s.experts8(); }, kKeep},
    {cat({C::AttnOutput}), ft({F::Q2_K}), [](const Site& s) { return !s.falcon(); }, T::Q3_K},
    {cat({C::AttnOutput}), ft({F::IQ3_XXS}), [](const Site& s) { return !s.falcon(); }, T::IQ3_S},
    {cat({C::AttnOutput}), ft({F::Q3_K_M}), [](const Site& s) { return !s.falcon(); }, T::Q4_K},
    {cat({C::AttnOutput}), ft({F::Q3_K_L}), [](const Site& s) { return !s.falcon(); }, T::Q5_K},
    {cat({C::AttnOutput}), ft({F::IQ3_M}), [](const Site& s) { return !s.falcon(); }, T::Q4_K},
    {cat({C::AttnOutput}), ft({F::Q3_K_L}), [](const Site& s) { return s.falcon(); }, T::Q4_K},

    // ffn_gate, ffn_up.
    {cat({C::FfnGate, C::FfnUp}), ft({F::IQ3_XS}),
     [](const Site& s) { return s.i_layer >= s.n_layer / 8 && s.i_layer < 7 * s.n_layer / 8; }, T::IQ3_XXS},
};

// Applied to attn_v-like tensors after the rows above, for every file type but the IQ1/IQ2 mixes and
// MXFP4_MOE (whose rows settle those tensors on their own).
struct Bump {
    Cond when;
    T from_a, from_b;  // only these types are bumped (kKeep: any type)
    T to;
};
const Bump kAttnVBumps[] = {
    // 70B-class models share each attn_v among 8 heads: a few more bits cost little.
    {[](const Site& s) { return s.model.is_70b(); }, T::Q3_K, T::Q4_K, T::Q5_K},
    {[](const Site& s) { return s.experts8(); }, kKeep, kKeep, T::Q8_0},
};

// Rows that do not divide into the chosen type's blocks: the type that takes over (F16 if that one does
// not fit either). Types not listed have no fallback: quantizing such a tensor fails.
struct Fallback {
    T from, to;
};
constexpr Fallback kFallbacks[] = {
    {T::IQ1_S, T::IQ4_NL}, {T::IQ1_M, T::IQ4_NL}, {T::IQ2_XXS, T::IQ4_NL}, {T::IQ2_XS, T::IQ4_NL},
    {T::IQ2_S, T::IQ4_NL}, {T::IQ3_XXS, T::IQ4_NL}, {T::IQ3_S, T::IQ4_NL}, {T::IQ4_XS, T::IQ4_NL},
    {T::Q2_K, T::Q4_0},    {T::Q3_K, T::Q4_0},      {T::TQ1_0, T::Q4_0},   {T::TQ2_0, T::Q4_0},
    {T::Q4_K, T::Q5_0},    {T::Q5_K, T::Q5_1},      {T::Q6_K, T::Q8_0},
};

// Types that need an importance matrix in llama.cpp (outside the token embeddings and the output).
bool requires_imatrix(Category c, T type, F ftype) {
    if (c == C::TokenEmbd || c == C::Output) return false;
    switch (type) {
        case T::IQ3_XXS:
        case T::IQ2_XXS:
        case T::IQ2_XS:
        case T::IQ2_S:
        case T::IQ1_M:
        case T::IQ1_S:
            return true;
        case T::Q2_K:
            return ftype == F::Q2_K_S;
        default:
            return false;
    }
}

bool is_quantized(T t) { return ggml::type_traits(t).is_quantized; }

// "blk.N." -> N, as sscanf("blk.%d.") reads it; nullopt when the name does not start so.
std::optional<int> layer_of(const std::string& name) {
    if (name.rfind("blk.", 0) != 0) return std::nullopt;
    size_t i = 4;
    bool neg = false;
    if (i < name.size() && (name[i] == '-' || name[i] == '+')) neg = name[i++] == '-';
    const size_t start = i;
    long long v = 0;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && v < (1LL << 40)) v = v * 10 + (name[i++] - '0');
    if (i == start) return std::nullopt;
    return int(neg ? -v : v);
}

}  // namespace

Category tensor_category(const std::string& name) {
    if (name == "output.weight") return C::Output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return C::TokenEmbd;
    for (const auto& cn : kCategoryNames)
        if (contains(name, cn.part)) return cn.cat;
    return C::Other;
}

const char* category_name(Category c) {
    static const char* const kNames[] = {"token_embd", "attn_q",  "attn_k",   "attn_v",   "attn_qkv", "attn_kv_b",
                                         "attn_output", "ffn_up", "ffn_gate", "ffn_down", "output",   "other"};
    return kNames[size_t(c)];
}

bool ModelFacts::is_70b() const {
    if (n_layer != 80) return false;
    if (arch == "llama") return n_expert != 8 && n_head != n_head_kv;
    return arch == "qwen2" || arch == "deci";
}

ModelFacts ModelFacts::from_gguf(const ggml::gguf::File& f) {
    ModelFacts m;
    m.arch = f.get_string("general.architecture");
    if (m.arch.empty()) throw std::runtime_error("the model has no general.architecture");
    const std::string p = m.arch + ".";
    if (!f.has(p + "block_count")) throw std::runtime_error("the model has no " + p + "block_count");
    auto first_int = [&](const std::string& key, int64_t def) -> int64_t {
        const ggml::gguf::Value* v = f.find(key);
        if (!v) return def;
        if (v->type == ggml::gguf::ValueType::Array) {
            const auto a = f.get_int_array(key);
            return a.empty() ? def : a[0];
        }
        return v->as_int();
    };
    auto checked = [](const std::string& key, int64_t v) {
        if (v < 0 || v > 1000000) throw std::runtime_error(key + " is out of range: " + std::to_string(v));
        return int(v);
    };
    m.n_layer = checked(p + "block_count", f.get_int(p + "block_count", 0));
    m.n_head = checked(p + "attention.head_count", first_int(p + "attention.head_count", 0));
    m.n_head_kv = checked(p + "attention.head_count_kv", first_int(p + "attention.head_count_kv", m.n_head));
    m.n_expert = checked(p + "expert_count", f.get_int(p + "expert_count", 0));
    return m;
}

int TensorDesc::n_dims() const {
    for (int i = 3; i >= 1; --i)
        if (ne[i] > 1) return i + 1;
    return 1;
}

void sort_weights(std::vector<TensorDesc>& tensors) {
    std::stable_sort(tensors.begin(), tensors.end(), [](const TensorDesc& a, const TensorDesc& b) {
        const int la = layer_of(a.name).value_or(-1), lb = layer_of(b.name).value_or(-1);
        if (la != lb) return la < lb;
        return a.name < b.name;
    });
}

bool tensor_allows_quantization(const std::string& name, int n_dims, bool quantize_output) {
    if (n_dims < 2) return false;
    if (name.size() < 6 || name.compare(name.size() - 6, 6, "weight") != 0) return false;
    if (!quantize_output && name == "output.weight") return false;
    for (const char* part : kNeverQuantizedParts)
        if (contains(name, part)) return false;
    for (const char* n : kNeverQuantizedNames)
        if (name == n) return false;
    return true;
}

std::vector<TensorChoice> choose_types(const ModelFacts& model, const std::vector<TensorDesc>& tensors,
                                       const MixOptions& o) {
    const FileTypeInfo* info = nullptr;
    for (const auto& f : file_types())
        if (f.ftype == o.ftype) info = &f;
    if (!info) throw std::invalid_argument("unknown file type " + std::to_string(uint32_t(o.ftype)));
    const T default_type = info->default_type;

    std::vector<std::pair<std::regex, T>> patterns;
    for (const auto& tt : o.tensor_types) {
        try {
            patterns.emplace_back(std::regex(tt.pattern), tt.type);
        } catch (const std::regex_error& e) {
            throw std::runtime_error("--tensor-type pattern '" + tt.pattern + "' is not a valid regular expression");
        }
    }

    bool tied = true;
    int n_wv = 0;
    for (const auto& t : tensors) {
        const Category c = tensor_category(t.name);
        if (c == C::Output) tied = false;
        if ((kAttnVLike >> uint32_t(c)) & 1) ++n_wv;
    }
    int i_wv = 0, i_down = 0, i_gate = 0, i_up = 0;
    const bool experts = std::max(1, model.n_expert) > 1;

    std::vector<TensorChoice> out;
    out.reserve(tensors.size());
    for (const auto& t : tensors) {
        TensorChoice ch;
        ch.type = t.type;
        const Category c = tensor_category(t.name);
        ch.quantizable = !o.only_copy && tensor_allows_quantization(t.name, t.n_dims(), o.quantize_output);
        if (!ch.quantizable) {
            out.push_back(ch);
            continue;
        }
        if (o.token_embd_type && c == C::TokenEmbd) {
            ch.type = *o.token_embd_type;
        } else if (o.output_type && c == C::Output) {
            ch.type = *o.output_type;
        } else if (!is_quantized(default_type)) {
            ch.type = default_type;
        } else {
            T type = default_type;
            for (const auto& [re, pt] : patterns)
                if (std::regex_search(t.name, re)) {
                    type = pt;
                    ch.manual = true;
                    break;
                }
            if (!ch.manual && !o.pure) {
                // Tied token embeddings are the output projection.
                const Category rc = (tied && c == C::TokenEmbd) ? C::Output : c;
                if (rc == C::Output && o.output_type) {
                    type = *o.output_type;
                } else {
                    const bool iq12 = has(kIq12, o.ftype);
                    const bool mixes_ffn = !iq12 && o.ftype != F::MXFP4_MOE &&
                                           (rc == C::FfnDown || rc == C::FfnGate || rc == C::FfnUp);
                    int i_layer = rc == C::FfnDown ? i_down : rc == C::FfnGate ? i_gate : i_up;
                    if (mixes_ffn && experts) {
                        // Experts are not in layer order: the layer comes from the name.
                        const auto l = layer_of(t.name);
                        if (!l) throw std::runtime_error("cannot determine the layer of tensor " + t.name);
                        if (*l < 0 || *l >= model.n_layer)
                            throw std::runtime_error("bad layer " + std::to_string(*l) + " for tensor " + t.name +
                                                     ": must be in [0, " + std::to_string(model.n_layer) + ")");
                        i_layer = *l;
                    }
                    const Site site{model, default_type, t.ne[0], t.ne[2], rc, o.has_imatrix, i_wv, n_wv,
                                    i_layer, model.n_layer, i_down};
                    for (const Rule& r : kRules)
                        if (((r.cats >> uint32_t(rc)) & 1) && has(r.ftypes, o.ftype) && r.when(site)) {
                            if (r.type != kKeep) type = r.type;
                            break;
                        }
                    const bool attn_v = (kAttnVLike >> uint32_t(rc)) & 1;
                    if (attn_v && !iq12 && o.ftype != F::MXFP4_MOE)
                        for (const Bump& b : kAttnVBumps)
                            if (b.when(site) && (b.from_a == kKeep || type == b.from_a || type == b.from_b))
                                type = b.to;
                    // llama.cpp counts the tensors its mix rules saw.
                    if (o.ftype != F::MXFP4_MOE) {
                        if (attn_v) ++i_wv;
                        if (rc == C::FfnDown) ++i_down;
                        if (!iq12 && rc == C::FfnGate) ++i_gate;
                        if (!iq12 && rc == C::FfnUp) ++i_up;
                    }
                }
            }
            if (t.ne[0] % ggml::block_size(type) != 0) {
                const Fallback* fb = nullptr;
                for (const auto& f : kFallbacks)
                    if (f.from == type) fb = &f;
                if (!fb) {
                    // Suggest a pattern for the tensor in every layer: the name without "blk.N." and ".weight".
                    std::string part = t.name;
                    if (layer_of(part)) part = part.substr(part.find('.', 4) + 1);
                    if (part.size() > 7 && part.compare(part.size() - 7, 7, ".weight") == 0) part.resize(part.size() - 7);
                    throw std::runtime_error("tensor " + t.name + " has rows of " + std::to_string(t.ne[0]) +
                                             " values, not a multiple of " + std::to_string(ggml::block_size(type)) +
                                             ", and no fallback type is defined for " + ggml::type_name(type) +
                                             " (pick a type for it with --tensor-type, e.g. --tensor-type " + part +
                                             "=f16)");
                }
                type = t.ne[0] % ggml::block_size(fb->to) == 0 ? fb->to : T::F16;
                ch.fallback = true;
            }
            ch.type = type;
        }
        ch.requires_imatrix = requires_imatrix(c, ch.type, o.ftype);
        out.push_back(ch);
    }
    return out;
}

}  // namespace engine::quant
