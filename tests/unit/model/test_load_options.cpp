// Model loading options of llama-server: --no-mmap (the file read into memory), --check-tensors (a NaN
// or infinity in any tensor is a load error naming it), --override-kv (metadata replaced before use).
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "golden_util.h"

using namespace engine;

namespace {

std::vector<uint8_t> file_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

struct TempFile {
    std::string path =
        "/tmp/ggserve-test-" + std::to_string(getpid()) + "-" + std::to_string(counter()++) + ".gguf";
    static int& counter() {
        static int n = 0;
        return n;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

// stories260K with one value of `tensor` (an f32 tensor) replaced by v.
void write_with_value(const std::string& out, const std::string& tensor, size_t index, float v) {
    const std::string src = shared_path("models/stories260K.gguf");
    auto f = ggml::gguf::File::open(src);
    const ggml::gguf::TensorInfo* t = f->find_tensor(tensor);
    REQUIRE(t);
    REQUIRE(t->type == ggml::Type::F32);
    std::vector<uint8_t> bytes = file_bytes(src);
    const size_t at = f->data_offset() + t->offset + index * sizeof(float);
    std::memcpy(bytes.data() + at, &v, sizeof v);
    std::ofstream(out, std::ios::binary).write((const char*)bytes.data(), (std::streamsize)bytes.size());
}

std::vector<Token> greedy_of(const Model& m) {
    ContextParams cp;
    cp.n_ctx = 64;
    cp.n_threads = 1;
    Context ctx(m, cp);
    const std::vector<Token> prompt = m.vocab().tokenize("Once upon a time", true, false);
    return greedy(ctx, prompt, 12);
}

}  // namespace

TEST_CASE("no-mmap reads the model into memory and computes the same tokens", "[model][load]") {
    auto mapped = Model::load(shared_path("models/stories260K.gguf"));
    ModelParams p;
    p.use_mmap = false;
    auto read = Model::load(shared_path("models/stories260K.gguf"), p);
    CHECK(mapped->mapped());
    CHECK_FALSE(read->mapped());
    CHECK(greedy_of(*read) == greedy_of(*mapped));
}

TEST_CASE("check-tensors finds NaN and infinity, naming the tensor", "[model][load]") {
    for (const float bad :
         {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
        TempFile tmp;
        write_with_value(tmp.path, "blk.1.attn_norm.weight", 3, bad);
        // Without the check the file loads (the damage shows only in the outputs).
        CHECK_NOTHROW(Model::load(tmp.path));
        ModelParams p;
        p.check_tensors = true;
        CHECK_THROWS_WITH(Model::load(tmp.path, p), Catch::Contains("--check-tensors") &&
                                                        Catch::Contains("blk.1.attn_norm.weight") &&
                                                        Catch::Contains("element 3") &&
                                                        Catch::Contains(std::isnan(bad) ? "NaN" : "-inf"));
    }
    ModelParams p;
    p.check_tensors = true;
    CHECK_NOTHROW(Model::load(shared_path("models/stories260K.gguf"), p));
    // Quantized tensors are checked through their dequantized values.
    CHECK(
        find_invalid_tensor_values(*ggml::gguf::File::open(shared_path("models/synth/synth-tiny-q4_0.gguf")))
            .empty());
}

TEST_CASE("override-kv replaces metadata before the model reads it", "[model][load]") {
    ModelParams p;
    p.kv_overrides.emplace_back("llama.context_length",
                                ggml::gguf::Value{ggml::gguf::ValueType::I64, int64_t(77)});
    p.kv_overrides.emplace_back("general.name", ggml::gguf::Value::string("renamed"));
    auto m = Model::load(shared_path("models/stories260K.gguf"), p);
    CHECK(m->hparams().n_ctx_train == 77);
    CHECK(m->hparams().name == "renamed");
    // A bad override is the model's usual error.
    ModelParams bad;
    bad.kv_overrides.emplace_back("llama.block_count", ggml::gguf::Value::string("five"));
    CHECK_THROWS(Model::load(shared_path("models/stories260K.gguf"), bad));
}
