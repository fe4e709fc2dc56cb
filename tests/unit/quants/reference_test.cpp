// Our IQ, TQ and MXFP4 code against reference data produced by llama.cpp's ggml
// (reference/ggml_iq_reference.txt, see its header): dequantized random blocks, and the bytes of the
// quantizers llama-quantize runs without an importance matrix.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ggml/quants.h"
#include "test_data.h"

using ggml::Type;

namespace {

struct Reference {
    std::vector<std::pair<std::vector<uint8_t>, uint64_t>> blocks;  // block bytes, hash of its floats
    bool has_quantize = false;
    uint64_t quantize_hash = 0;
};

std::vector<uint8_t> from_hex(const std::string& s) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < s.size(); i += 2) out.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
    return out;
}

std::map<Type, Reference> read_reference() {
    const std::string path = std::string(GGSERVE_SOURCE_DIR) + "/tests/unit/quants/reference/ggml_iq_reference.txt";
    std::ifstream in(path);
    REQUIRE(in.good());
    std::map<Type, Reference> ref;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        std::string what, name;
        ss >> what >> name;
        Type t;
        INFO(line);
        REQUIRE(ggml::type_from_name(name.c_str(), &t));
        if (what == "dequantize") {
            std::string hex, hash;
            ss >> hex >> hash;
            ref[t].blocks.emplace_back(from_hex(hex), std::stoull(hash, nullptr, 16));
        } else {
            REQUIRE(what == "quantize");
            std::string hash;
            ss >> hash;
            ref[t].has_quantize = true;
            ref[t].quantize_hash = std::stoull(hash, nullptr, 16);
        }
    }
    return ref;
}

}  // namespace

TEST_CASE("IQ, TQ and MXFP4 blocks dequantize to ggml's values", "[reference]") {
    const auto ref = read_reference();
    const Type types[] = {Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S, Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S,
                          Type::IQ1_M,   Type::IQ4_XS, Type::TQ1_0, Type::TQ2_0,   Type::MXFP4};
    for (Type t : types) {
        const ggml::TypeTraits& tt = ggml::type_traits(t);
        INFO(tt.name);
        REQUIRE(ref.count(t) == 1);
        REQUIRE(ref.at(t).blocks.size() >= 8);
        int i = 0;
        for (const auto& [bytes, hash] : ref.at(t).blocks) {
            INFO("block " << i++);
            REQUIRE(bytes.size() == tt.type_size);
            std::vector<float> y(size_t(tt.block_size));
            tt.to_float(bytes.data(), y.data(), tt.block_size);
            CHECK(quant_test::fnv1a(y.data(), y.size() * sizeof(float)) == hash);
        }
    }
}

TEST_CASE("IQ4_XS, IQ3_XXS, IQ3_S, TQ1_0, TQ2_0 and MXFP4 quantize to ggml's bytes", "[reference]") {
    const auto ref = read_reference();
    const std::vector<float> x = quant_test::golden_input();
    const auto n = int64_t(x.size());
    int checked = 0;
    for (const auto& [t, r] : ref) {
        if (!r.has_quantize) continue;
        INFO(ggml::type_name(t));
        std::vector<uint8_t> q(ggml::row_size(t, n));
        REQUIRE(ggml::quantize_rows(t, x.data(), q.data(), n / 256, 256) == q.size());
        CHECK(quant_test::fnv1a(q.data(), q.size()) == r.quantize_hash);
        ++checked;
    }
    CHECK(checked == 6);
}
