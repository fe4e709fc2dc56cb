// quantize -> dequantize stays within the per-type error bounds documented in docs/quantization.md
// (the table is read from the document, so the document and the test cannot drift apart).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ggml/quants.h"
#include "test_data.h"

using ggml::Type;
using quant_test::Kind;

namespace {

constexpr int kColumns = 7;  // normal, uniform, sparse, mixed, one-sign, outlier, constant
const std::vector<Kind> kColumnKinds[kColumns] = {
    {Kind::Normal},
    {Kind::Uniform},
    {Kind::Sparse},
    {Kind::MixedScales},
    {Kind::Positive, Kind::SmallNeg},
    {Kind::Outlier},
    {Kind::Constant, Kind::ConstantNeg},
};

std::vector<std::string> split_cells(const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, '|');  // text before the first '|'
    while (std::getline(ss, cell, '|')) {
        const size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
        cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    return cells;
}

// The error-bound table of docs/quantization.md: type -> bound per column.
std::map<Type, std::vector<double>> read_bounds() {
    std::ifstream in(std::string(GGSERVE_SOURCE_DIR) + "/docs/quantization.md");
    REQUIRE(in.good());
    std::map<Type, std::vector<double>> bounds;
    std::string line;
    bool in_table = false;
    while (std::getline(in, line)) {
        if (line.rfind("| type | normal |", 0) == 0) {
            in_table = true;
            continue;
        }
        if (!in_table || line.rfind("|---", 0) == 0) continue;
        if (line.empty() || line[0] != '|') break;
        const std::vector<std::string> cells = split_cells(line);
        INFO(line);
        REQUIRE(cells.size() == kColumns + 1);
        Type t;
        REQUIRE(ggml::type_from_name(cells[0].c_str(), &t));
        std::vector<double> row;
        for (int c = 1; c <= kColumns; ++c) row.push_back(std::stod(cells[c]));
        bounds[t] = row;
    }
    return bounds;
}

}  // namespace

TEST_CASE("quantize-dequantize error stays within the documented bounds", "[roundtrip]") {
    const auto bounds = read_bounds();
    const Type expected[] = {Type::F16,  Type::BF16, Type::Q4_0, Type::Q4_1, Type::Q5_0,
                             Type::Q5_1, Type::Q8_0, Type::Q8_1, Type::Q2_K, Type::Q3_K,
                             Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::Q8_K, Type::IQ4_NL,
                             Type::IQ4_XS, Type::IQ3_XXS, Type::IQ3_S, Type::TQ1_0, Type::TQ2_0, Type::MXFP4};
    REQUIRE(bounds.size() == std::size(expected));
    for (Type t : expected) {
        const ggml::TypeTraits& tt = ggml::type_traits(t);
        INFO("type " << tt.name);
        REQUIRE(bounds.count(t) == 1);
        for (int c = 0; c < kColumns; ++c) {
            for (Kind kind : kColumnKinds[c]) {
                for (int64_t blocks : {1, 3, 7, 33}) {
                    for (uint64_t seed = 1; seed <= 3; ++seed) {
                        // Float types have one value per block: count them in groups of 32.
                        const int64_t n = blocks * std::max<int64_t>(tt.block_size, 32);
                        const std::vector<float> x =
                            quant_test::make_row(seed * 7919 + uint64_t(kind), kind, n);
                        std::vector<uint8_t> q(ggml::row_size(t, n));
                        std::vector<float> y(size_t(n), 0.0f);
                        tt.from_float_ref(x.data(), q.data(), n);
                        tt.to_float(q.data(), y.data(), n);
                        const double err = quant_test::rms_diff(x.data(), y.data(), size_t(n)) /
                                           quant_test::rms(x.data(), size_t(n));
                        INFO("kind " << int(kind) << ", " << blocks << " blocks, seed " << seed);
                        REQUIRE(err <= bounds.at(t)[size_t(c)]);
                    }
                }
            }
        }
    }
}

TEST_CASE("all-zero rows come back exactly zero", "[roundtrip]") {
    for (int32_t id = 0; id < ggml::kTypeIdLimit; ++id) {
        const ggml::TypeTraits& tt = ggml::type_traits(Type(id));
        if (!tt.from_float_ref) continue;
        INFO("type " << tt.name);
        for (int64_t blocks : {1, 3, 7, 33}) {
            const int64_t n = blocks * tt.block_size;
            const std::vector<float> x(size_t(n), 0.0f);
            std::vector<uint8_t> q(ggml::row_size(Type(id), n), 0xa5);
            std::vector<float> y(size_t(n), 1.0f);
            tt.from_float_ref(x.data(), q.data(), n);
            tt.to_float(q.data(), y.data(), n);
            for (float v : y) REQUIRE(v == 0.0f);
        }
    }
}

TEST_CASE("quantizers are deterministic and write only their row", "[roundtrip]") {
    for (int32_t id = 0; id < ggml::kTypeIdLimit; ++id) {
        const ggml::TypeTraits& tt = ggml::type_traits(Type(id));
        if (!tt.from_float_ref) continue;
        INFO("type " << tt.name);
        const int64_t n = 3 * tt.block_size;
        const std::vector<float> x = quant_test::make_row(99, Kind::Normal, n);
        const size_t bytes = ggml::row_size(Type(id), n);
        // Garbage in the destination (and a guard after it) must not leak into the output.
        std::vector<uint8_t> a(bytes + 8, 0x00), b(bytes + 8, 0xff);
        tt.from_float_ref(x.data(), a.data(), n);
        tt.from_float_ref(x.data(), b.data(), n);
        REQUIRE(std::equal(a.begin(), a.begin() + long(bytes), b.begin()));
        for (size_t i = bytes; i < bytes + 8; ++i) REQUIRE(b[i] == 0xff);
    }
}
