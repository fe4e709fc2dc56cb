// Which type each tensor gets for each file type: llama-quantize's rules (llama-quant.cpp), stated here
// independently as expectations on model shapes where each rule shows (a 32-layer llama without and
// with grouped KV heads, an 80-layer 70B-class llama, an 8-expert MoE, tied embeddings, ragged rows).
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "engine/quantize/file_type.h"
#include "engine/quantize/tensor_rules.h"

using namespace engine::quant;
using ggml::Type;

namespace {

constexpr int64_t kEmbd = 4096, kFfn = 11008, kVocab = 32000;

TensorDesc td(const std::string& name, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1) {
    TensorDesc t;
    t.name = name;
    t.type = Type::F16;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    t.ne[2] = ne2;
    if (ne1 == 1 && ne2 == 1) t.type = Type::F32;
    return t;
}

// A llama-shaped model: n_layer blocks, optionally without output.weight (tied) or with n_expert experts.
std::vector<TensorDesc> llama_tensors(int n_layer, int64_t kv_rows, bool tied = false, int n_expert = 0) {
    std::vector<TensorDesc> v;
    v.push_back(td("token_embd.weight", kEmbd, kVocab));
    v.push_back(td("output_norm.weight", kEmbd));
    if (!tied) v.push_back(td("output.weight", kEmbd, kVocab));
    for (int i = 0; i < n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        v.push_back(td(b + "attn_norm.weight", kEmbd));
        v.push_back(td(b + "attn_q.weight", kEmbd, kEmbd));
        v.push_back(td(b + "attn_k.weight", kEmbd, kv_rows));
        v.push_back(td(b + "attn_v.weight", kEmbd, kv_rows));
        v.push_back(td(b + "attn_output.weight", kEmbd, kEmbd));
        v.push_back(td(b + "ffn_norm.weight", kEmbd));
        if (n_expert > 0) {
            v.push_back(td(b + "ffn_gate_inp.weight", kEmbd, n_expert));
            v.push_back(td(b + "ffn_gate_exps.weight", kEmbd, kFfn, n_expert));
            v.push_back(td(b + "ffn_up_exps.weight", kEmbd, kFfn, n_expert));
            v.push_back(td(b + "ffn_down_exps.weight", kFfn, kEmbd, n_expert));
        } else {
            v.push_back(td(b + "ffn_gate.weight", kEmbd, kFfn));
            v.push_back(td(b + "ffn_up.weight", kEmbd, kFfn));
            v.push_back(td(b + "ffn_down.weight", kFfn, kEmbd));
        }
    }
    sort_weights(v);
    return v;
}

ModelFacts facts(int n_layer, int n_head, int n_head_kv, int n_expert = 0, const std::string& arch = "llama") {
    ModelFacts m;
    m.arch = arch;
    m.n_layer = n_layer;
    m.n_head = n_head;
    m.n_head_kv = n_head_kv;
    m.n_expert = n_expert;
    return m;
}

std::map<std::string, Type> choose(const ModelFacts& m, const std::vector<TensorDesc>& t, const MixOptions& o) {
    const auto c = choose_types(m, t, o);
    REQUIRE(c.size() == t.size());
    std::map<std::string, Type> out;
    for (size_t i = 0; i < t.size(); ++i) out[t[i].name] = c[i].type;
    return out;
}

MixOptions opts(FileType ft) {
    MixOptions o;
    o.ftype = ft;
    return o;
}

// llama.cpp's "more bits" layers of a 32-layer model: the first and last eighth and every third between.
bool more_bits_32(int i) { return i < 4 || i >= 28 || i == 6 || i == 9 || i == 12 || i == 15 || i == 18 || i == 21 || i == 24 || i == 27; }

std::string blk(int i, const char* t) { return "blk." + std::to_string(i) + "." + t + ".weight"; }

}  // namespace

TEST_CASE("file type names, numbers and general.file_type names are llama.cpp's", "[quantize][rules]") {
    struct Row {
        const char* name;
        uint32_t number;
        Type type;
    };
    const Row rows[] = {{"Q4_0", 2, Type::Q4_0},     {"Q4_1", 3, Type::Q4_1},     {"Q8_0", 7, Type::Q8_0},
                        {"Q5_0", 8, Type::Q5_0},     {"Q5_1", 9, Type::Q5_1},     {"Q2_K", 10, Type::Q2_K},
                        {"Q3_K_S", 11, Type::Q3_K},  {"Q3_K_M", 12, Type::Q3_K},  {"Q3_K_L", 13, Type::Q3_K},
                        {"Q4_K_S", 14, Type::Q4_K},  {"Q4_K_M", 15, Type::Q4_K},  {"Q5_K_S", 16, Type::Q5_K},
                        {"Q5_K_M", 17, Type::Q5_K},  {"Q6_K", 18, Type::Q6_K},    {"IQ4_NL", 25, Type::IQ4_NL},
                        {"IQ3_S", 26, Type::IQ3_S},  {"IQ3_M", 27, Type::IQ3_S},  {"IQ4_XS", 30, Type::IQ4_XS},
                        {"F16", 1, Type::F16},       {"BF16", 32, Type::BF16},    {"F32", 0, Type::F32},
                        {"TQ1_0", 36, Type::TQ1_0},  {"TQ2_0", 37, Type::TQ2_0}, {"MXFP4_MOE", 38, Type::MXFP4}};
    for (const auto& r : rows) {
        INFO(r.name);
        const FileTypeInfo* ft = parse_file_type(r.name);
        REQUIRE(ft);
        CHECK(uint32_t(ft->ftype) == r.number);
        CHECK(ft->default_type == r.type);
        CHECK(file_type_name(r.number) == r.name);
        CHECK(parse_file_type(std::to_string(r.number))->ftype == ft->ftype);
    }
    CHECK(parse_file_type("q4_k_m")->ftype == FileType::Q4_K_M);  // case-insensitive
    CHECK(parse_file_type("Q4_K")->ftype == FileType::Q4_K_M);    // the aliases
    CHECK(parse_file_type("Q3_K")->ftype == FileType::Q3_K_M);
    CHECK(parse_file_type("Q5_K")->ftype == FileType::Q5_K_M);
    CHECK(parse_file_type("Q9_9") == nullptr);
    CHECK(parse_file_type("") == nullptr);
    CHECK(file_type_name(15 | kFileTypeGuessed) == "Q4_K_M (guessed)");
    CHECK(file_type_name(99) == "unknown (99)");
}

TEST_CASE("norms, 1-D tensors, routers and positional tables are never quantized", "[quantize][rules]") {
    CHECK_FALSE(tensor_allows_quantization("blk.0.attn_norm.weight", 1, true));
    CHECK_FALSE(tensor_allows_quantization("blk.0.attn_norm.weight", 2, true));  // by name, whatever the shape
    CHECK_FALSE(tensor_allows_quantization("blk.0.attn_q.bias", 2, true));       // not a weight
    CHECK_FALSE(tensor_allows_quantization("blk.0.ffn_gate_inp.weight", 2, true));
    CHECK_FALSE(tensor_allows_quantization("position_embd.weight", 2, true));
    CHECK_FALSE(tensor_allows_quantization("token_types.weight", 2, true));
    CHECK_FALSE(tensor_allows_quantization("blk.0.ssm_conv1d.weight", 2, true));
    CHECK_FALSE(tensor_allows_quantization("output.weight", 2, false));  // --leave-output-tensor
    CHECK(tensor_allows_quantization("output.weight", 2, true));
    CHECK(tensor_allows_quantization("blk.3.ffn_down_exps.weight", 3, true));

    const auto t = llama_tensors(4, kEmbd);
    for (FileType ft : {FileType::Q4_0, FileType::Q4_K_M, FileType::F16}) {
        const auto types = choose(facts(4, 32, 32), t, opts(ft));
        CHECK(types.at("output_norm.weight") == Type::F32);
        CHECK(types.at("blk.2.ffn_norm.weight") == Type::F32);
    }
}

TEST_CASE("llama.cpp's weight order: tensors outside blocks first, then block by block, by name",
          "[quantize][rules]") {
    std::vector<TensorDesc> v = {td("blk.10.attn_q.weight", 32, 32), td("blk.2.ffn_up.weight", 32, 32),
                                 td("output.weight", 32, 32), td("blk.2.attn_k.weight", 32, 32),
                                 td("token_embd.weight", 32, 32)};
    sort_weights(v);
    std::vector<std::string> names;
    for (const auto& t : v) names.push_back(t.name);
    CHECK(names == std::vector<std::string>{"output.weight", "token_embd.weight", "blk.2.attn_k.weight",
                                            "blk.2.ffn_up.weight", "blk.10.attn_q.weight"});
}

TEST_CASE("mix rules for a 32-layer llama without grouped KV heads", "[quantize][rules]") {
    const ModelFacts m = facts(32, 32, 32);
    const auto t = llama_tensors(32, kEmbd);
    // Per file type: the type of output.weight, token_embd, attn_q/k, attn_output, ffn_gate/up, and of
    // attn_v and ffn_down per layer.
    struct Expect {
        FileType ft;
        Type output, embd, qk, attn_out, gate_up;
        Type (*attn_v)(int layer);
        Type (*ffn_down)(int layer);
    };
    const Expect table[] = {
        {FileType::Q4_0, Type::Q6_K, Type::Q4_0, Type::Q4_0, Type::Q4_0, Type::Q4_0, [](int) { return Type::Q4_0; },
         [](int) { return Type::Q4_0; }},
        {FileType::Q4_1, Type::Q6_K, Type::Q4_1, Type::Q4_1, Type::Q4_1, Type::Q4_1, [](int) { return Type::Q4_1; },
         [](int) { return Type::Q4_1; }},
        {FileType::Q5_0, Type::Q6_K, Type::Q5_0, Type::Q5_0, Type::Q5_0, Type::Q5_0, [](int) { return Type::Q5_0; },
         [](int) { return Type::Q5_0; }},
        {FileType::Q8_0, Type::Q8_0, Type::Q8_0, Type::Q8_0, Type::Q8_0, Type::Q8_0, [](int) { return Type::Q8_0; },
         [](int) { return Type::Q8_0; }},
        {FileType::Q2_K, Type::Q6_K, Type::Q2_K, Type::Q2_K, Type::Q3_K, Type::Q2_K, [](int) { return Type::Q3_K; },
         [](int) { return Type::Q3_K; }},
        {FileType::Q3_K_S, Type::Q6_K, Type::Q3_K, Type::Q3_K, Type::Q3_K, Type::Q3_K,
         [](int) { return Type::Q3_K; }, [](int) { return Type::Q3_K; }},
        {FileType::Q3_K_M, Type::Q6_K, Type::Q3_K, Type::Q3_K, Type::Q4_K, Type::Q3_K,
         [](int i) { return i < 2 ? Type::Q5_K : Type::Q4_K; }, [](int i) { return i < 2 ? Type::Q5_K : Type::Q4_K; }},
        {FileType::Q3_K_L, Type::Q6_K, Type::Q3_K, Type::Q3_K, Type::Q5_K, Type::Q3_K,
         [](int) { return Type::Q5_K; }, [](int) { return Type::Q5_K; }},
        {FileType::Q4_K_S, Type::Q6_K, Type::Q4_K, Type::Q4_K, Type::Q4_K, Type::Q4_K,
         [](int i) { return i < 4 ? Type::Q5_K : Type::Q4_K; }, [](int i) { return i < 4 ? Type::Q5_K : Type::Q4_K; }},
        {FileType::Q4_K_M, Type::Q6_K, Type::Q4_K, Type::Q4_K, Type::Q4_K, Type::Q4_K,
         [](int i) { return more_bits_32(i) ? Type::Q6_K : Type::Q4_K; },
         [](int i) { return more_bits_32(i) ? Type::Q6_K : Type::Q4_K; }},
        {FileType::Q5_K_S, Type::Q6_K, Type::Q5_K, Type::Q5_K, Type::Q5_K, Type::Q5_K,
         [](int) { return Type::Q5_K; }, [](int) { return Type::Q5_K; }},
        {FileType::Q5_K_M, Type::Q6_K, Type::Q5_K, Type::Q5_K, Type::Q5_K, Type::Q5_K,
         [](int i) { return more_bits_32(i) ? Type::Q6_K : Type::Q5_K; },
         [](int i) { return more_bits_32(i) ? Type::Q6_K : Type::Q5_K; }},
        {FileType::Q6_K, Type::Q6_K, Type::Q6_K, Type::Q6_K, Type::Q6_K, Type::Q6_K, [](int) { return Type::Q6_K; },
         [](int) { return Type::Q6_K; }},
        {FileType::IQ4_NL, Type::Q6_K, Type::IQ4_NL, Type::IQ4_NL, Type::IQ4_NL, Type::IQ4_NL,
         [](int) { return Type::IQ4_NL; }, [](int i) { return i < 4 ? Type::Q5_K : Type::IQ4_NL; }},
        {FileType::IQ4_XS, Type::Q6_K, Type::IQ4_XS, Type::IQ4_XS, Type::IQ4_XS, Type::IQ4_XS,
         [](int) { return Type::IQ4_XS; }, [](int i) { return i < 4 ? Type::Q5_K : Type::IQ4_XS; }},
        {FileType::IQ3_M, Type::Q6_K, Type::IQ3_S, Type::IQ3_S, Type::Q4_K, Type::IQ3_S,
         [](int) { return Type::Q4_K; }, [](int i) { return i < 4 ? Type::Q4_K : Type::IQ3_S; }},
        {FileType::TQ2_0, Type::Q6_K, Type::Q4_K, Type::TQ2_0, Type::TQ2_0, Type::TQ2_0,
         [](int) { return Type::TQ2_0; }, [](int) { return Type::TQ2_0; }},
        // 16/32-bit targets: no mix rules at all.
        {FileType::F16, Type::F16, Type::F16, Type::F16, Type::F16, Type::F16, [](int) { return Type::F16; },
         [](int) { return Type::F16; }},
        {FileType::BF16, Type::BF16, Type::BF16, Type::BF16, Type::BF16, Type::BF16, [](int) { return Type::BF16; },
         [](int) { return Type::BF16; }},
        {FileType::ALL_F32, Type::F32, Type::F32, Type::F32, Type::F32, Type::F32, [](int) { return Type::F32; },
         [](int) { return Type::F32; }},
    };
    for (const auto& e : table) {
        INFO("file type " << file_type_name(uint32_t(e.ft)));
        const auto types = choose(m, t, opts(e.ft));
        CHECK(types.at("output.weight") == e.output);
        CHECK(types.at("token_embd.weight") == e.embd);
        for (int i = 0; i < 32; ++i) {
            INFO("layer " << i);
            CHECK(types.at(blk(i, "attn_q")) == e.qk);
            CHECK(types.at(blk(i, "attn_k")) == e.qk);
            CHECK(types.at(blk(i, "attn_output")) == e.attn_out);
            CHECK(types.at(blk(i, "ffn_gate")) == e.gate_up);
            CHECK(types.at(blk(i, "ffn_up")) == e.gate_up);
            CHECK(types.at(blk(i, "attn_v")) == e.attn_v(i));
            CHECK(types.at(blk(i, "ffn_down")) == e.ffn_down(i));
            CHECK(types.at(blk(i, "attn_norm")) == Type::F32);
        }
    }
}

TEST_CASE("grouped KV heads, 70B-class models and 8-expert models get more bits in attention",
          "[quantize][rules]") {
    SECTION("GQA 4: attn_v of Q2_K is Q4_K, of IQ4_NL Q5_K, of IQ3_S Q4_K") {
        const auto t = llama_tensors(32, kEmbd / 4);
        const ModelFacts m = facts(32, 32, 8);
        CHECK(choose(m, t, opts(FileType::Q2_K)).at(blk(5, "attn_v")) == Type::Q4_K);
        CHECK(choose(m, t, opts(FileType::IQ4_NL)).at(blk(5, "attn_v")) == Type::Q5_K);
        CHECK(choose(m, t, opts(FileType::IQ3_S)).at(blk(5, "attn_v")) == Type::Q4_K);
        CHECK(choose(m, t, opts(FileType::IQ3_S)).at(blk(5, "attn_q")) == Type::IQ3_S);
        // GQA 2 is not enough.
        CHECK(choose(facts(32, 32, 16), t, opts(FileType::Q2_K)).at(blk(5, "attn_v")) == Type::Q3_K);
    }
    SECTION("80-layer llama with GQA (70B): Q3_K/Q4_K attn_v become Q5_K") {
        const auto t = llama_tensors(80, kEmbd / 8);
        const ModelFacts m = facts(80, 64, 8);
        REQUIRE(m.is_70b());
        const auto q4km = choose(m, t, opts(FileType::Q4_K_M));
        CHECK(q4km.at(blk(0, "attn_v")) == Type::Q6_K);   // more bits: Q6_K stays
        CHECK(q4km.at(blk(11, "attn_v")) == Type::Q5_K);  // Q4_K -> Q5_K
        CHECK(q4km.at(blk(11, "attn_q")) == Type::Q4_K);
        CHECK(choose(m, t, opts(FileType::Q3_K_S)).at(blk(40, "attn_v")) == Type::Q5_K);
        CHECK(choose(m, t, opts(FileType::Q5_K_S)).at(blk(40, "attn_v")) == Type::Q5_K);
        CHECK_FALSE(facts(80, 64, 64).is_70b());  // no GQA: not the 70B class
        CHECK(facts(80, 64, 64, 0, "qwen2").is_70b());
    }
    SECTION("8 experts: attn_v and attn_k Q8_0, attn_output Q5_K; expert ffn_down by the layer in the name") {
        const auto t = llama_tensors(32, kEmbd / 4, false, 8);
        const ModelFacts m = facts(32, 32, 8, 8);
        const auto q4km = choose(m, t, opts(FileType::Q4_K_M));
        CHECK(q4km.at(blk(7, "attn_v")) == Type::Q8_0);
        CHECK(q4km.at(blk(7, "attn_k")) == Type::Q8_0);
        CHECK(q4km.at(blk(7, "attn_q")) == Type::Q4_K);
        CHECK(q4km.at(blk(7, "attn_output")) == Type::Q5_K);
        CHECK(q4km.at(blk(0, "ffn_down_exps")) == Type::Q6_K);
        CHECK(q4km.at(blk(7, "ffn_down_exps")) == Type::Q4_K);
        CHECK(q4km.at(blk(9, "ffn_down_exps")) == Type::Q6_K);
        CHECK(q4km.at(blk(9, "ffn_gate_inp")) == Type::F16);  // the router keeps its type
        CHECK(choose(m, t, opts(FileType::Q6_K)).at(blk(7, "attn_output")) == Type::Q6_K);
        // MXFP4_MOE: experts MXFP4, every other weight (the output too) Q8_0.
        const auto mx = choose(m, t, opts(FileType::MXFP4_MOE));
        CHECK(mx.at(blk(3, "ffn_up_exps")) == Type::MXFP4);
        CHECK(mx.at(blk(3, "attn_q")) == Type::Q8_0);
        CHECK(mx.at("output.weight") == Type::Q8_0);
        CHECK(mx.at("token_embd.weight") == Type::Q8_0);
    }
}

TEST_CASE("tied embeddings are the output projection, options override the mix", "[quantize][rules]") {
    const ModelFacts m = facts(32, 32, 32);
    SECTION("tied: token_embd gets the output's type") {
        const auto t = llama_tensors(32, kEmbd, true);
        CHECK(choose(m, t, opts(FileType::Q4_K_M)).at("token_embd.weight") == Type::Q6_K);
        CHECK(choose(m, t, opts(FileType::Q8_0)).at("token_embd.weight") == Type::Q8_0);
        MixOptions o = opts(FileType::Q4_K_M);
        o.output_type = Type::Q8_0;  // --output-tensor-type applies to the tied embeddings
        CHECK(choose(m, t, o).at("token_embd.weight") == Type::Q8_0);
        o.token_embd_type = Type::Q4_0;  // and --token-embedding-type wins over it
        CHECK(choose(m, t, o).at("token_embd.weight") == Type::Q4_0);
    }
    const auto t = llama_tensors(32, kEmbd);
    SECTION("--pure: the file type's type everywhere, the output included") {
        MixOptions o = opts(FileType::Q4_K_M);
        o.pure = true;
        const auto types = choose(m, t, o);
        CHECK(types.at("output.weight") == Type::Q4_K);
        CHECK(types.at(blk(0, "attn_v")) == Type::Q4_K);
        CHECK(types.at(blk(0, "ffn_down")) == Type::Q4_K);
    }
    SECTION("--leave-output-tensor, --output-tensor-type, --token-embedding-type") {
        MixOptions o = opts(FileType::Q4_0);
        o.quantize_output = false;
        CHECK(choose(m, t, o).at("output.weight") == Type::F16);  // the source's type
        o.quantize_output = true;
        o.output_type = Type::Q8_0;
        o.token_embd_type = Type::Q6_K;
        const auto types = choose(m, t, o);
        CHECK(types.at("output.weight") == Type::Q8_0);
        CHECK(types.at("token_embd.weight") == Type::Q6_K);
        CHECK(types.at(blk(0, "attn_q")) == Type::Q4_0);
        // Also with 16-bit targets, where no mix applies.
        MixOptions f = opts(FileType::F16);
        f.output_type = Type::Q8_0;
        CHECK(choose(m, t, f).at("output.weight") == Type::Q8_0);
    }
    SECTION("--tensor-type: the first matching pattern wins over the mix, and the layer counters skip it") {
        MixOptions o = opts(FileType::Q4_K_M);
        o.tensor_types = {{"attn_v", Type::Q8_0}, {"blk\\.1\\.attn_v", Type::Q2_K}, {"ffn_down", Type::Q5_0}};
        const auto types = choose(m, t, o);
        CHECK(types.at(blk(1, "attn_v")) == Type::Q8_0);
        CHECK(types.at(blk(1, "ffn_down")) == Type::Q5_0);
        CHECK(types.at(blk(1, "attn_q")) == Type::Q4_K);
        o.tensor_types = {{"(", Type::Q8_0}};
        CHECK_THROWS_WITH(choose(m, t, o), Catch::Contains("not a valid regular expression"));
    }
    SECTION("COPY: nothing is quantized") {
        MixOptions o = opts(FileType::ALL_F32);
        o.only_copy = true;
        const auto types = choose(m, t, o);
        CHECK(types.at("output.weight") == Type::F16);
        CHECK(types.at(blk(0, "attn_q")) == Type::F16);
    }
}

TEST_CASE("rows that do not divide into the type's blocks fall back as in llama.cpp", "[quantize][rules]") {
    // stories260K's shape: n_embd 64 (not a multiple of 256), FFN 172 (not a multiple of 32).
    std::vector<TensorDesc> t = {td("token_embd.weight", 64, 512), td("output.weight", 64, 512),
                                 td("blk.0.attn_q.weight", 64, 64), td("blk.0.attn_v.weight", 64, 32),
                                 td("blk.0.ffn_up.weight", 64, 172), td("blk.0.ffn_down.weight", 172, 64)};
    sort_weights(t);
    const ModelFacts m = facts(1, 8, 4);
    auto at = [&](const std::vector<TensorChoice>& c, const std::string& name) {
        for (size_t i = 0; i < t.size(); ++i)
            if (t[i].name == name) return c[i];
        FAIL("no tensor " << name);
        return TensorChoice{};
    };
    SECTION("Q4_K_M: Q4_K -> Q5_0, Q6_K -> Q8_0, and 172-wide rows -> F16") {
        const auto c = choose_types(m, t, opts(FileType::Q4_K_M));
        CHECK(at(c, "blk.0.attn_q.weight").type == Type::Q5_0);
        CHECK(at(c, "blk.0.attn_q.weight").fallback);
        CHECK(at(c, "blk.0.attn_v.weight").type == Type::Q8_0);  // Q6_K (more bits) -> Q8_0
        CHECK(at(c, "blk.0.ffn_down.weight").type == Type::F16);
        CHECK(at(c, "output.weight").type == Type::Q8_0);  // 64 % 256: the output rule picks Q8_0 itself
        CHECK_FALSE(at(c, "output.weight").fallback);
    }
    SECTION("Q2_K/Q3_K -> Q4_0, Q5_K -> Q5_1, IQ4_XS -> IQ4_NL") {
        CHECK(at(choose_types(m, t, opts(FileType::Q3_K_S)), "blk.0.attn_q.weight").type == Type::Q4_0);
        CHECK(at(choose_types(m, t, opts(FileType::Q5_K_S)), "blk.0.attn_q.weight").type == Type::Q5_1);
        CHECK(at(choose_types(m, t, opts(FileType::IQ4_XS)), "blk.0.attn_q.weight").type == Type::IQ4_NL);
    }
    SECTION("Q4_0 and Q8_0: 172-wide rows go to F16 (llama-quantize 2026), or the type --tensor-type picks") {
        const auto c8 = choose_types(m, t, opts(FileType::Q8_0));
        CHECK(at(c8, "blk.0.ffn_down.weight").type == Type::F16);
        CHECK(at(c8, "blk.0.ffn_down.weight").fallback);
        CHECK(at(c8, "blk.0.ffn_up.weight").type == Type::Q8_0);
        MixOptions o = opts(FileType::Q4_0);
        o.tensor_types = {{"ffn_down", Type::F16}};
        const auto c = choose_types(m, t, o);
        CHECK(at(c, "blk.0.ffn_down.weight").type == Type::F16);
        CHECK(at(c, "blk.0.ffn_down.weight").manual);
        CHECK(at(c, "blk.0.attn_q.weight").type == Type::Q4_0);
        CHECK(at(c, "output.weight").type == Type::Q8_0);  // Q6_K by the rule, then Q8_0 by the fallback
        CHECK(at(c, "output.weight").fallback);
        CHECK(at(c, "token_embd.weight").type == Type::Q4_0);
    }
}

TEST_CASE("the very-low-bit types are marked as needing an importance matrix", "[quantize][rules]") {
    const auto t = llama_tensors(8, kEmbd);
    const ModelFacts m = facts(8, 32, 32);
    const auto c = choose_types(m, t, opts(FileType::IQ2_XXS));
    bool any = false;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i].name == "token_embd.weight" || t[i].name == "output.weight") CHECK_FALSE(c[i].requires_imatrix);
        any = any || c[i].requires_imatrix;
    }
    CHECK(any);
    for (const auto& ch : choose_types(m, t, opts(FileType::Q2_K))) CHECK_FALSE(ch.requires_imatrix);
    // Q2_K_S: its Q2_K tensors need one.
    bool q2ks = false;
    for (const auto& ch : choose_types(m, t, opts(FileType::Q2_K_S))) q2ks = q2ks || ch.requires_imatrix;
    CHECK(q2ks);
}
