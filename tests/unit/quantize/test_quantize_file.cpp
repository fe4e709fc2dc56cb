// quantize_model on stories260K (F32): the output is a valid GGUF whose tensors are the reference
// quantizer applied to the source rows, and the whole file equals llama-quantize's copies in
// ../shared/models (made with --tensor-type ffn_down=f16, as the 172-wide rows fit no 32-wide block).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/quantize/file_type.h"
#include "engine/quantize/quantize.h"
#include "ggml/gguf.h"
#include "ggml/quants.h"
#include "synth_arch.h"

namespace fs = std::filesystem;
using namespace engine::quant;
using ggml::Type;

namespace {

std::string shared(const std::string& rel) { return std::string(GGSERVE_SHARED_DIR) + "/models/" + rel; }

std::string tmp_path(const std::string& tag) {
    return (fs::temp_directory_path() / ("ggserve-quant-" + std::to_string(getpid()) + "-" + tag + ".gguf")).string();
}

struct TmpFile {
    std::string path;
    explicit TmpFile(const std::string& tag) : path(tmp_path(tag)) {}
    ~TmpFile() {
        std::error_code ec;
        fs::remove(path, ec);
    }
};

std::vector<char> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

QuantizeOptions options(const std::string& in, const std::string& out, FileType ft) {
    QuantizeOptions o;
    o.input = in;
    o.output = out;
    o.ftype = ft;
    o.n_threads = 2;
    return o;
}

QuantizeReport run(const QuantizeOptions& o) {
    return quantize_model(o, [](const std::string&) {});
}

// Every tensor of `out` is `in`'s tensor of the same name, either unchanged or quantized row by row with
// ggml::quantize_rows into the type it has in `out`.
void check_tensors_are_reference_quantized(const ggml::gguf::File& in, const ggml::gguf::File& out) {
    REQUIRE(in.tensors().size() == out.tensors().size());
    for (const auto& t : out.tensors()) {
        INFO("tensor " << t.name);
        const ggml::gguf::TensorInfo* s = in.find_tensor(t.name);
        REQUIRE(s);
        for (int i = 0; i < 4; ++i) REQUIRE(t.ne[i] == s->ne[i]);
        const int64_t nrows = t.ne[1] * t.ne[2] * t.ne[3];
        std::vector<uint8_t> expect(ggml::row_size(t.type, t.ne[0]) * size_t(nrows));
        if (t.type == s->type) {
            std::memcpy(expect.data(), s->data, expect.size());
        } else {
            std::vector<float> f32(size_t(t.nelements()));
            ggml::type_traits(s->type).to_float(s->data, f32.data(), t.nelements());
            ggml::quantize_rows(t.type, f32.data(), expect.data(), nrows, t.ne[0]);
        }
        REQUIRE(t.size == expect.size());
        CHECK(std::memcmp(t.data, expect.data(), expect.size()) == 0);
    }
}

}  // namespace

TEST_CASE("stories260K to Q8_0 and Q4_0: the reference quantizer's bytes, and llama-quantize's file",
          "[quantize][file]") {
    const std::string src = shared("stories260K.gguf");
    if (!fs::exists(src)) {
        WARN("skipped: " << src << " is missing");
        return;
    }
    struct Case {
        FileType ft;
        const char* reference;
        Type weights, output;
    };
    // The output projection: Q8_0 for Q8_0; for Q4_0 the rule's Q6_K falls back to Q8_0 (64-wide rows).
    const Case cases[] = {{FileType::Q8_0, "stories260K-q8_0.gguf", Type::Q8_0, Type::Q8_0},
                          {FileType::Q4_0, "stories260K-q4_0.gguf", Type::Q4_0, Type::Q8_0}};
    for (const auto& c : cases) {
        INFO(c.reference);
        TmpFile out(c.reference);
        QuantizeOptions o = options(src, out.path, c.ft);
        o.tensor_types = {{"ffn_down", Type::F16}};
        const QuantizeReport rep = run(o);
        CHECK(rep.output_path == out.path);
        CHECK_FALSE(fs::exists(out.path + ".part"));

        const auto in = ggml::gguf::File::open(src);
        const auto q = ggml::gguf::File::open(out.path);
        CHECK(q->get_int("general.file_type", -1) == int64_t(c.ft));
        CHECK(q->get_int("general.quantization_version", -1) == 2);
        CHECK(q->get_string("general.architecture") == "llama");
        CHECK(q->find_tensor("blk.0.attn_q.weight")->type == c.weights);
        CHECK(q->find_tensor("token_embd.weight")->type == c.weights);
        CHECK(q->find_tensor("blk.4.ffn_down.weight")->type == Type::F16);
        CHECK(q->find_tensor("blk.4.ffn_norm.weight")->type == Type::F32);
        if (const auto* o2 = q->find_tensor("output.weight")) CHECK(o2->type == c.output);
        check_tensors_are_reference_quantized(*in, *q);
        // The strongest check: byte for byte llama-quantize's output.
        const std::string ref = shared(c.reference);
        if (fs::exists(ref)) {
            const auto mine = read_all(out.path), theirs = read_all(ref);
            CHECK(mine.size() == theirs.size());
            CHECK((mine == theirs));
        }
    }
}

TEST_CASE("quantize_model refuses bad requests before writing anything", "[quantize][file]") {
    const std::string src = shared("stories260K.gguf");
    if (!fs::exists(src)) {
        WARN("skipped: " << src << " is missing");
        return;
    }
    TmpFile out("refused");
    SECTION("a missing input") {
        CHECK_THROWS_WITH(run(options("/nonexistent/model.gguf", out.path, FileType::Q8_0)),
                          Catch::Contains("cannot read '/nonexistent/model.gguf'"));
    }
    SECTION("requantizing without --allow-requantize; allowed with it") {
        const std::string q8 = shared("stories260K-q8_0.gguf");
        if (!fs::exists(q8)) return;
        QuantizeOptions o = options(q8, out.path, FileType::Q4_0);
        o.tensor_types = {{"ffn_down", Type::F16}};
        CHECK_THROWS_WITH(run(o), Catch::Contains("requantizing from type q8_0 is disabled") &&
                                      Catch::Contains("--allow-requantize"));
        CHECK_FALSE(fs::exists(out.path));
        o.allow_requantize = true;
        run(o);
        const auto q = ggml::gguf::File::open(out.path);
        CHECK(q->find_tensor("blk.0.attn_q.weight")->type == Type::Q4_0);
        CHECK(q->get_int("general.file_type", -1) == int64_t(FileType::Q4_0));
    }
    SECTION("a type that needs an importance matrix") {
        // stories260K's 64-wide rows fall back to IQ4_NL, which needs none; synth-tiny's 256-wide do not.
        const std::string synth = shared("synth/synth-tiny-f16.gguf");
        if (!fs::exists(synth)) return;
        CHECK_THROWS_WITH(run(options(synth, out.path, FileType::IQ2_XXS)),
                          Catch::Contains("requires an importance matrix"));
        CHECK_FALSE(fs::exists(out.path));
    }
    SECTION("an unwritable output path leaves nothing behind") {
        QuantizeOptions o = options(src, "/nonexistent-dir/out.gguf", FileType::F16);
        CHECK_THROWS_WITH(run(o), Catch::Contains("cannot create '/nonexistent-dir/out.gguf.part'"));
    }
    SECTION("the input as the output") {
        CHECK_THROWS_WITH(run(options(src, src, FileType::F16)), Catch::Contains("the same"));
    }
    CHECK_FALSE(fs::exists(out.path + ".part"));
}

TEST_CASE("F16 and COPY outputs, and the streaming writer's layout", "[quantize][file]") {
    const std::string src = shared("stories260K.gguf");
    if (!fs::exists(src)) {
        WARN("skipped: " << src << " is missing");
        return;
    }
    TmpFile f16("f16"), copy("copy");
    run(options(src, f16.path, FileType::F16));
    const auto in = ggml::gguf::File::open(src);
    const auto q = ggml::gguf::File::open(f16.path);
    CHECK(q->get_int("general.file_type", -1) == 1);
    CHECK(q->find_tensor("blk.0.ffn_down.weight")->type == Type::F16);  // 16-bit types take any width
    CHECK(q->find_tensor("blk.0.attn_norm.weight")->type == Type::F32);
    check_tensors_are_reference_quantized(*in, *q);

    QuantizeOptions o = options(src, copy.path, FileType::ALL_F32);
    o.only_copy = true;
    run(o);
    const auto c = ggml::gguf::File::open(copy.path);
    REQUIRE(c->tensors().size() == in->tensors().size());
    for (const auto& t : c->tensors()) {
        INFO(t.name);
        CHECK(t.type == Type::F32);
        CHECK(std::memcmp(t.data, in->find_tensor(t.name)->data, t.size) == 0);
    }
}

TEST_CASE("synth-tiny F16 to Q4_K_M: the mix's types, each tensor the reference quantizer's bytes",
          "[quantize][file]") {
    const std::string src = shared("synth/synth-tiny-f16.gguf");
    if (!fs::exists(src)) {
        WARN("skipped: " << src << " is missing");
        return;
    }
    TmpFile out("q4km");
    const QuantizeReport rep = run(options(src, out.path, FileType::Q4_K_M));
    CHECK(rep.n_fallback == 0);
    const auto in = ggml::gguf::File::open(src);
    const auto q = ggml::gguf::File::open(out.path);
    CHECK(q->get_int("general.file_type", -1) == 15);
    // 4 layers: llama.cpp's "more bits" layers are 2 (every third after the first eighth) and 3 (the last
    // eighth); their attn_v and ffn_down are Q6_K, the rest Q4_K; the output Q6_K.
    for (int i = 0; i < 4; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        const Type more = i >= 2 ? Type::Q6_K : Type::Q4_K;
        INFO(b);
        CHECK(q->find_tensor(b + "attn_v.weight")->type == more);
        CHECK(q->find_tensor(b + "ffn_down.weight")->type == more);
        CHECK(q->find_tensor(b + "attn_q.weight")->type == Type::Q4_K);
        CHECK(q->find_tensor(b + "ffn_up.weight")->type == Type::Q4_K);
        CHECK(q->find_tensor(b + "attn_norm.weight")->type == Type::F32);
    }
    if (const auto* o = q->find_tensor("output.weight")) CHECK(o->type == Type::Q6_K);
    check_tensors_are_reference_quantized(*in, *q);
    CHECK(rep.bytes_out < rep.bytes_in / 2);  // the 32000-row token_embd (Q4_K) and output (Q6_K) dominate
}

TEST_CASE("requantizing an MoE model: expert tensors take the layer from their name", "[quantize][file]") {
    const std::string src = shared("synth/synth-llama-moe-q8_0.gguf");
    if (!fs::exists(src)) {
        WARN("skipped: " << src << " is missing");
        return;
    }
    TmpFile out("moe");
    QuantizeOptions o = options(src, out.path, FileType::Q4_K_M);
    CHECK_THROWS_WITH(run(o), Catch::Contains("--allow-requantize"));
    o.allow_requantize = true;
    run(o);
    const auto in = ggml::gguf::File::open(src);
    const auto q = ggml::gguf::File::open(out.path);
    // 4 layers, 4 experts of FFN 256, n_embd 128: the 256-wide expert ffn_down rows take Q4_K_M's mix
    // (Q6_K in layers 2 and 3), the 128-wide rows fall back from Q4_K to Q5_0, routers keep F32.
    for (int i = 0; i < 4; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        INFO(b);
        CHECK(q->find_tensor(b + "ffn_down_exps.weight")->type == (i >= 2 ? Type::Q6_K : Type::Q4_K));
        CHECK(q->find_tensor(b + "ffn_down_exps.weight")->ne[2] == 4);
        CHECK(q->find_tensor(b + "ffn_up_exps.weight")->type == Type::Q5_0);
        CHECK(q->find_tensor(b + "ffn_gate_inp.weight")->type == Type::F32);
    }
    check_tensors_are_reference_quantized(*in, *q);
}

// gpt-oss (the tests' synthetic MXFP4 model, tests/fixtures/synth_arch.h): the MXFP4 experts requantized by
// the mix, the attention sinks and every bias kept F32, and the whole file what llama-quantize 0.7.0 wrote
// for `--allow-requantize IN OUT Q4_K_M` (its FNV-1a, measured).
TEST_CASE("requantizing gpt-oss to Q4_K_M gives llama-quantize's file", "[quantize][file]") {
    TmpFile in("gpt-oss-in"), out("gpt-oss-q4_k_m");
    synth::write_model("synth-gpt-oss-mxfp4", shared("vocab"), in.path);
    QuantizeOptions o = options(in.path, out.path, FileType::Q4_K_M);
    o.allow_requantize = true;
    run(o);
    const auto q = ggml::gguf::File::open(out.path);
    for (const char* name : {"blk.0.attn_sinks.weight", "blk.1.ffn_gate_exps.bias", "blk.2.ffn_gate_inp.bias",
                             "blk.3.attn_q.bias", "blk.3.ffn_gate_inp.weight"}) {
        INFO(name);
        CHECK(q->find_tensor(name)->type == Type::F32);
    }
    CHECK(q->find_tensor("blk.0.ffn_up_exps.weight")->type != Type::MXFP4);
    CHECK(synth::fnv1a64_file(out.path) == "dee9eefe88f58e97");
}

// llama-server reports a model's type as llama.cpp names it (/props model_ftype, /v1/models meta.ftype);
// the expected names are what llama-server 0.7.0 reported for these files.
TEST_CASE("a model's file type as llama-server reports it: recorded or guessed from its tensors",
          "[quantize][file_type]") {
    const auto reported = [](const std::string& rel) {
        const auto f = ggml::gguf::File::open(shared(rel));
        return file_type_report_name(model_file_type(*f));
    };
    CHECK(reported("stories260K.gguf") == "(guessed) all F32");  // no general.file_type: all tensors f32
    CHECK(reported("stories260K-q8_0.gguf") == "Q8_0");
    CHECK(reported("synth/synth-bert-f16.gguf") == "F16");
    CHECK(reported("synth/synth-tiny-q4_k.gguf") == "Q4_K - Medium");
    CHECK(file_type_report_name(uint32_t(FileType::IQ3_M)) == "IQ3_S mix - 3.66 bpw");
    CHECK(file_type_report_name(uint32_t(FileType::Q2_K_S) | kFileTypeGuessed) == "(guessed) Q2_K - Small");
    CHECK(file_type_report_name(99) == "unknown, may not work");
}
