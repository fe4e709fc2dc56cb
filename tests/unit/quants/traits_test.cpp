// The type table: sizes from the GGUF spec, names, pairing of weights with activation types.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ggml/quants.h"
#include "ggml/types.h"

using ggml::Type;

namespace {

struct Expected {
    Type type;
    int32_t id;
    const char* name;
    int64_t block_size;
    size_t type_size;
    bool quantized;
};

// From the GGUF specification (ggml_type ids, block sizes and bytes per block).
const Expected kExpected[] = {
    {Type::F32, 0, "f32", 1, 4, false},         {Type::F16, 1, "f16", 1, 2, false},
    {Type::Q4_0, 2, "q4_0", 32, 18, true},      {Type::Q4_1, 3, "q4_1", 32, 20, true},
    {Type::Q5_0, 6, "q5_0", 32, 22, true},      {Type::Q5_1, 7, "q5_1", 32, 24, true},
    {Type::Q8_0, 8, "q8_0", 32, 34, true},      {Type::Q8_1, 9, "q8_1", 32, 36, true},
    {Type::Q2_K, 10, "q2_K", 256, 84, true},    {Type::Q3_K, 11, "q3_K", 256, 110, true},
    {Type::Q4_K, 12, "q4_K", 256, 144, true},   {Type::Q5_K, 13, "q5_K", 256, 176, true},
    {Type::Q6_K, 14, "q6_K", 256, 210, true},   {Type::Q8_K, 15, "q8_K", 256, 292, true},
    {Type::IQ4_NL, 20, "iq4_nl", 32, 18, true}, {Type::I8, 24, "i8", 1, 1, false},
    {Type::I16, 25, "i16", 1, 2, false},        {Type::I32, 26, "i32", 1, 4, false},
    {Type::I64, 27, "i64", 1, 8, false},        {Type::F64, 28, "f64", 1, 8, false},
    {Type::BF16, 30, "bf16", 1, 2, false},      {Type::IQ2_XXS, 16, "iq2_xxs", 256, 66, true},
    {Type::IQ2_XS, 17, "iq2_xs", 256, 74, true}, {Type::IQ3_XXS, 18, "iq3_xxs", 256, 98, true},
    {Type::IQ1_S, 19, "iq1_s", 256, 50, true},   {Type::IQ3_S, 21, "iq3_s", 256, 110, true},
    {Type::IQ2_S, 22, "iq2_s", 256, 82, true},   {Type::IQ4_XS, 23, "iq4_xs", 256, 136, true},
    {Type::IQ1_M, 29, "iq1_m", 256, 56, true},   {Type::TQ1_0, 34, "tq1_0", 256, 54, true},
    {Type::TQ2_0, 35, "tq2_0", 256, 66, true},   {Type::MXFP4, 39, "mxfp4", 32, 17, true},
};

}  // namespace

TEST_CASE("every known type has its GGUF id, name, block size and bytes", "[traits]") {
    for (const Expected& e : kExpected) {
        INFO(e.name);
        const ggml::TypeTraits& t = ggml::type_traits(e.type);
        CHECK(int32_t(e.type) == e.id);
        REQUIRE(t.name != nullptr);
        CHECK(std::string(t.name) == e.name);
        CHECK(std::string(ggml::type_name(e.type)) == e.name);
        CHECK(t.block_size == e.block_size);
        CHECK(t.type_size == e.type_size);
        CHECK(t.is_quantized == e.quantized);
        CHECK(ggml::type_is_known(e.id));
    }
}

TEST_CASE("ids without a row are unknown", "[traits]") {
    int known = 0;
    for (int32_t id = -3; id < ggml::kTypeIdLimit + 3; ++id) {
        bool expected = false;
        for (const Expected& e : kExpected) expected = expected || e.id == id;
        known += expected;
        INFO("id " << id);
        CHECK(ggml::type_is_known(id) == expected);
        if (!expected) {
            CHECK(ggml::type_traits(Type(id)).name == nullptr);
            CHECK(ggml::type_traits(Type(id)).block_size == 0);
            CHECK(std::string(ggml::type_name(Type(id))) == "unknown");
        }
    }
    CHECK(known == int(std::size(kExpected)));
    CHECK_FALSE(ggml::type_is_known(1000000));
}

TEST_CASE("type_from_name is case-insensitive and rejects unknown names", "[traits]") {
    for (const Expected& e : kExpected) {
        Type t = Type::F64;
        std::string upper = e.name;
        for (char& c : upper) c = char(std::toupper((unsigned char)c));
        INFO(e.name);
        CHECK(ggml::type_from_name(e.name, &t));
        CHECK(t == e.type);
        t = Type::F64;
        CHECK(ggml::type_from_name(upper.c_str(), &t));
        CHECK(t == e.type);
    }
    Type t = Type::F32;
    CHECK(ggml::type_from_name("Q4_k", &t));
    CHECK(t == Type::Q4_K);
    for (const char* bad : {"", "q4", "q4_2", "q4_0 ", "f32x", "iq4_xl", "nvfp4", "unknown"}) {
        INFO(bad);
        CHECK_FALSE(ggml::type_from_name(bad, &t));
    }
    CHECK_FALSE(ggml::type_from_name(nullptr, &t));
}

TEST_CASE("weight types pair with an activation type that can be quantized", "[traits]") {
    const std::pair<Type, Type> pairs[] = {
        {Type::F32, Type::F32},   {Type::F16, Type::F16},     {Type::BF16, Type::BF16},
        {Type::Q4_0, Type::Q8_0}, {Type::Q4_1, Type::Q8_1},   {Type::Q5_0, Type::Q8_0},
        {Type::Q5_1, Type::Q8_1}, {Type::Q8_0, Type::Q8_0},   {Type::Q2_K, Type::Q8_K},
        {Type::Q3_K, Type::Q8_K}, {Type::Q4_K, Type::Q8_K},   {Type::Q5_K, Type::Q8_K},
        {Type::Q6_K, Type::Q8_K}, {Type::IQ4_NL, Type::Q8_0}, {Type::IQ4_XS, Type::Q8_K},
        {Type::IQ2_XXS, Type::Q8_K}, {Type::IQ2_XS, Type::Q8_K}, {Type::IQ2_S, Type::Q8_K},
        {Type::IQ3_XXS, Type::Q8_K}, {Type::IQ3_S, Type::Q8_K}, {Type::IQ1_S, Type::Q8_K},
        {Type::IQ1_M, Type::Q8_K}, {Type::TQ1_0, Type::Q8_K}, {Type::TQ2_0, Type::Q8_K},
        {Type::MXFP4, Type::Q8_0},
    };
    // Types llama.cpp quantizes only with an importance matrix: no reference quantizer.
    const Type needs_imatrix[] = {Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S, Type::IQ1_S, Type::IQ1_M};
    for (auto [weight, act] : pairs) {
        const ggml::TypeTraits& t = ggml::type_traits(weight);
        INFO(t.name);
        CHECK(t.vec_dot_type == act);
        CHECK(t.vec_dot_ref != nullptr);
        CHECK(t.to_float != nullptr);
        const bool has_quantizer = std::find(std::begin(needs_imatrix), std::end(needs_imatrix), weight) ==
                                   std::end(needs_imatrix);
        CHECK((t.from_float_ref != nullptr) == has_quantizer);
        CHECK(ggml::type_traits(act).from_float_ref != nullptr);
        CHECK(ggml::type_traits(act).block_size == t.block_size);
    }
    // Activation-only formats and storage-only types have no dot product.
    for (Type t : {Type::Q8_1, Type::Q8_K}) CHECK(ggml::type_traits(t).vec_dot_ref == nullptr);
    for (Type t : {Type::I8, Type::I16, Type::I32, Type::I64, Type::F64}) {
        CHECK(ggml::type_traits(t).to_float == nullptr);
        CHECK(ggml::type_traits(t).from_float_ref == nullptr);
        CHECK(ggml::type_traits(t).vec_dot_ref == nullptr);
    }
}

TEST_CASE("row_size counts whole blocks", "[traits]") {
    CHECK(ggml::row_size(Type::F32, 7) == 28);
    CHECK(ggml::row_size(Type::Q4_0, 4096) == 128 * 18);
    CHECK(ggml::row_size(Type::Q4_K, 512) == 288);
    CHECK(ggml::row_size(Type::Q6_K, 4096) == 16 * 210);
}

TEST_CASE("quantize_rows writes row after row and rejects bad input", "[traits]") {
    float x[2 * 64];
    for (int i = 0; i < 128; ++i) x[i] = float(i % 7) - 3.0f;
    uint8_t a[4 * 18], b[4 * 18];
    CHECK(ggml::quantize_rows(Type::Q4_0, x, a, 2, 64) == sizeof a);
    ggml::quantize_row_q4_0_ref(x, b, 64);
    ggml::quantize_row_q4_0_ref(x + 64, b + 2 * 18, 64);
    CHECK(std::equal(a, a + sizeof a, b));
    CHECK_THROWS_AS(ggml::quantize_rows(Type::Q4_0, x, a, 1, 48), std::invalid_argument);
    CHECK_THROWS_AS(ggml::quantize_rows(Type::I32, x, a, 1, 4), std::invalid_argument);
    std::vector<float> big(256, 1.0f);
    std::vector<uint8_t> out(ggml::type_size(Type::IQ2_XXS));
    CHECK_THROWS_AS(ggml::quantize_rows(Type::IQ2_XXS, big.data(), out.data(), 1, 256), std::invalid_argument);
}
