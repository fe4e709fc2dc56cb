// Writes the GGUF seed inputs of the gguf fuzz target (tests/fuzz/corpus/gguf/) with our own writer:
// vocabularies of each tokenizer kind and a file with every metadata type and a few tensors. Each
// vocabulary is loaded back before it is written, so a seed always reaches the tokenizer.
//   make_fuzz_seeds DIR
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/tokenizer/vocab.h"
#include "fuzz_vocab.h"

using namespace fuzz_vocab;

namespace {

bool write(const std::string& dir, const std::string& name, const ggml::gguf::Writer& w, bool vocab) {
    const std::vector<uint8_t> bytes = w.to_bytes();
    if (vocab) {
        auto file = ggml::gguf::File::from_memory(bytes.data(), bytes.size());
        const engine::Vocab v = engine::Vocab::from_gguf(*file);
        if (v.tokenize("Once the", true).empty()) return false;
    }
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    std::printf("%s: %zu bytes\n", name.c_str(), bytes.size());
    return bool(out);
}

ggml::gguf::Writer all_types() {
    ggml::gguf::Writer w;
    w.set("general.architecture", Value::string("llama"));
    w.set("general.alignment", Value::u32(64));
    w.set("t.u8", Value{ValueType::U8, uint64_t(200)});
    w.set("t.i8", Value{ValueType::I8, int64_t(-100)});
    w.set("t.u16", Value{ValueType::U16, uint64_t(60000)});
    w.set("t.i16", Value{ValueType::I16, int64_t(-30000)});
    w.set("t.u32", Value::u32(4000000000u));
    w.set("t.i32", Value::i32(-2000000000));
    w.set("t.f32", Value::f32(0.5f));
    w.set("t.bool", Value::boolean(true));
    w.set("t.string", Value::string("hello \xE2\x96\x81 world"));
    w.set("t.u64", Value::u64(uint64_t(1) << 60));
    w.set("t.i64", Value{ValueType::I64, int64_t(-1) << 60});
    w.set("t.f64", Value{ValueType::F64, 1e300});
    w.set("t.array.i32", ints({1, -2, 3}));
    w.set("t.array.f32", floats({1.5f, -2.5f}));
    w.set("t.array.string", strings({"a", "", "ccc"}));
    w.set("t.array.nested", Value::array(ValueType::Array, {ints({1, 2}), ints({})}));
    w.set("llama.context_length", Value::u32(128));
    w.set("llama.rope.freq_base", Value::f32(10000.0f));
    const float f32[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const int64_t ne_a[2] = {4, 2};
    w.add_tensor("a", ggml::Type::F32, 2, ne_a, f32, sizeof(f32));
    std::vector<uint8_t> q8(34, 1);  // one Q8_0 block: f16 scale + 32 int8
    const int64_t ne_b[1] = {32};
    w.add_tensor("b.weight", ggml::Type::Q8_0, 1, ne_b, q8.data(), q8.size());
    std::vector<uint8_t> q4(18, 0x21);  // one Q4_0 block
    const int64_t ne_c[4] = {32, 1, 1, 1};
    w.add_tensor("c", ggml::Type::Q4_0, 4, ne_c, q4.data(), q4.size());
    return w;
}

ggml::gguf::Writer wpm() {
    ggml::gguf::Writer w;
    w.set("general.architecture", Value::string("bert"));
    w.set("tokenizer.ggml.model", Value::string("bert"));
    w.set("tokenizer.ggml.tokens", strings({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "once", "a",
                                            "##b", "##s", ",", "."}));
    w.set("tokenizer.ggml.token_type", ints({3, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1}));
    w.set("tokenizer.ggml.padding_token_id", Value::u32(0));
    w.set("tokenizer.ggml.unknown_token_id", Value::u32(1));
    w.set("tokenizer.ggml.bos_token_id", Value::u32(2));
    w.set("tokenizer.ggml.seperator_token_id", Value::u32(3));
    w.set("tokenizer.ggml.mask_token_id", Value::u32(4));
    return w;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    bool ok = write(dir, "all_types", all_types(), false);
    ok = write(dir, "spm", spm(), true) && ok;
    ok = write(dir, "wpm", wpm(), true) && ok;
    for (const char* pre : {"default", "llama3", "qwen2", "gpt-4o", "deepseek-v3", "chameleon"})
        ok = write(dir, std::string("bpe_") + pre, bpe(pre), true) && ok;
    return ok ? 0 : 1;
}
