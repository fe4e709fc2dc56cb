// The quantized bytes (and their dequantized floats) of a fixed input equal those of ggml's reference
// quantizers. The hashes were produced by linking ggml's quantize_row_*_ref / dequantize_row_* (ggml
// commit d99724f2) against quant_test::golden_input(); for IQ4_NL's all-zero blocks the levels are
// taken as 0, as current llama.cpp writes them.
#include <catch2/catch.hpp>
#include <vector>

#include "ggml/quants.h"
#include "test_data.h"

using ggml::Type;

namespace {

struct Golden {
    Type type;
    uint64_t bytes_hash;   // FNV-1a of from_float_ref's output
    uint64_t floats_hash;  // FNV-1a of to_float of those bytes
};

const Golden kGolden[] = {
    {Type::F16, 0x9db9c052bfc8254bull, 0x116ab7aa9e1b4f3aull},
    {Type::BF16, 0x48f041f413de50e1ull, 0x002a4e35095cdb81ull},
    {Type::Q4_0, 0xad18ea731be41b0eull, 0xf372915735732025ull},
    {Type::Q4_1, 0xff5a40707788b6a3ull, 0x70249894b21759b9ull},
    {Type::Q5_0, 0xe7be9ff1effa09e3ull, 0xb1ab768fbb8872cdull},
    {Type::Q5_1, 0x2559ea23b687bb35ull, 0x3c97a6c7f9902bf8ull},
    {Type::Q8_0, 0x0b70b981aa0e901eull, 0xd01472bb3b0cc0fcull},
    {Type::Q8_1, 0x23e3fb64e08d8eebull, 0xd01472bb3b0cc0fcull},
    {Type::Q2_K, 0x731af82571bab319ull, 0xaf5093a33a56561full},
    {Type::Q3_K, 0x778a0acc52a03e97ull, 0xcee2cd103720e279ull},
    {Type::Q4_K, 0x49763d959a5ed4f9ull, 0x0202de223621dba9ull},
    {Type::Q5_K, 0x9d5d1a1e506514dbull, 0x2a9ad1d81837fcd3ull},
    {Type::Q6_K, 0x900c2f9b8987a7a0ull, 0x24b970b08187665bull},
    {Type::Q8_K, 0x818868d12f188c13ull, 0xfebc117a520f1890ull},
    {Type::IQ4_NL, 0x5c03e0ba70df36d0ull, 0xd6a1968035650cf5ull},
};

// IQ4_NL as llama-quantize writes it (ggml quantize_iq4_nl, rows of 256).
constexpr uint64_t kIq4nlSearchHash = 0xc154476a1ede2d58ull;

}  // namespace

TEST_CASE("the input of the golden hashes is the one they were made from", "[golden]") {
    const std::vector<float> x = quant_test::golden_input();
    REQUIRE(x.size() == 12 * 256);
    CHECK(quant_test::fnv1a(x.data(), x.size() * sizeof(float)) == 0x753618196d984d88ull);
}

TEST_CASE("reference quantizers reproduce ggml's bytes", "[golden]") {
    const std::vector<float> x = quant_test::golden_input();
    const auto n = int64_t(x.size());
    for (const Golden& g : kGolden) {
        const ggml::TypeTraits& tt = ggml::type_traits(g.type);
        INFO(tt.name);
        std::vector<uint8_t> q(ggml::row_size(g.type, n));
        std::vector<float> y(x.size());
        tt.from_float_ref(x.data(), q.data(), n);
        tt.to_float(q.data(), y.data(), n);
        CHECK(quant_test::fnv1a(q.data(), q.size()) == g.bytes_hash);
        CHECK(quant_test::fnv1a(y.data(), y.size() * sizeof(float)) == g.floats_hash);
    }
}

TEST_CASE("quantize_rows writes IQ4_NL as llama-quantize does", "[golden]") {
    const std::vector<float> x = quant_test::golden_input();
    std::vector<uint8_t> q(ggml::row_size(Type::IQ4_NL, int64_t(x.size())));
    CHECK(ggml::quantize_rows(Type::IQ4_NL, x.data(), q.data(), 12, 256) == q.size());
    CHECK(quant_test::fnv1a(q.data(), q.size()) == kIq4nlSearchHash);
}
