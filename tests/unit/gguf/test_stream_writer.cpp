// gguf::StreamWriter (the quantizer's output): the same bytes as the in-memory Writer for the same
// metadata and tensors, size and count checks, and no file left behind unless finish() succeeds.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <vector>

#include "ggml/gguf.h"

using namespace ggml;
using namespace ggml::gguf;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::string tmp(const std::string& tag) {
    return (fs::temp_directory_path() / ("ggserve-stream-" + std::to_string(getpid()) + "-" + tag + ".gguf")).string();
}

StreamWriter::TensorDecl decl(const std::string& name, Type type, int64_t ne0, int64_t ne1) {
    StreamWriter::TensorDecl d;
    d.name = name;
    d.type = type;
    d.n_dims = ne1 > 1 ? 2 : 1;
    d.ne[0] = ne0;
    d.ne[1] = ne1;
    return d;
}

}  // namespace

TEST_CASE("StreamWriter writes what Writer writes, tensor by tensor", "[gguf][stream]") {
    for (const uint32_t align : {32u, 64u}) {
        INFO("alignment " << align);
        const std::vector<std::pair<std::string, Value>> common = {{"general.architecture", Value::string("llama")},
                                                                   {"x.count", Value::u32(7)}};
        // Writer puts general.alignment first when it is not the default; the stream takes it as given.
        std::vector<std::pair<std::string, Value>> kv;
        if (align != 32) kv.emplace_back("general.alignment", Value::u32(align));
        kv.insert(kv.end(), common.begin(), common.end());
        std::vector<float> a(3 * 5, 1.5f);
        std::vector<uint8_t> b(row_size(Type::Q8_0, 64) * 2, 0x11);
        Writer w;
        for (const auto& [k, v] : common) w.set(k, v);
        w.set_alignment(align);
        const int64_t ne_a[2] = {3, 5}, ne_b[2] = {64, 2};
        w.add_tensor("a", Type::F32, 2, ne_a, a.data(), a.size() * 4);
        w.add_tensor("b", Type::Q8_0, 2, ne_b, b.data(), b.size());
        const auto expect = w.to_bytes();

        const std::string path = tmp("same" + std::to_string(align));
        {
            StreamWriter s(path, kv, {decl("a", Type::F32, 3, 5), decl("b", Type::Q8_0, 64, 2)});
            CHECK(s.alignment() == align);
            CHECK(fs::exists(path + ".part"));
            CHECK_FALSE(fs::exists(path));
            s.write_tensor(a.data(), a.size() * 4);
            s.write_tensor(b.data(), b.size());
            s.finish();
        }
        CHECK_FALSE(fs::exists(path + ".part"));
        CHECK(slurp(path) == expect);
        fs::remove(path);
    }
}

TEST_CASE("StreamWriter refuses bad declarations and sizes and cleans up", "[gguf][stream]") {
    const std::vector<std::pair<std::string, Value>> kv = {{"general.architecture", Value::string("llama")}};
    const std::string path = tmp("bad");
    CHECK_THROWS_AS(StreamWriter(path, kv, {decl("r", Type::Q4_0, 48, 2)}), std::invalid_argument);  // 48 % 32
    CHECK_THROWS_AS(StreamWriter(path, {{"general.alignment", Value::u32(48)}}, {}), std::invalid_argument);
    CHECK_THROWS_WITH(StreamWriter("/nonexistent-dir/x.gguf", kv, {}), Catch::Contains("cannot create"));
    {
        StreamWriter s(path, kv, {decl("a", Type::F32, 4, 1), decl("b", Type::F32, 4, 1)});
        std::vector<float> v(4);
        CHECK_THROWS_AS(s.write_tensor(v.data(), 12), std::logic_error);  // the wrong size
        s.write_tensor(v.data(), 16);
        CHECK_THROWS_AS(s.finish(), std::logic_error);  // one tensor missing
    }
    CHECK_FALSE(fs::exists(path + ".part"));  // destroyed unfinished: the partial file is gone
    CHECK_FALSE(fs::exists(path));
}
