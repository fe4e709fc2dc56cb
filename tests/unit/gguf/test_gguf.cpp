// GGUF reader/writer: round trips, every metadata type, and hostile files (truncated, corrupted).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "ggml/gguf.h"

using namespace ggml;
using namespace ggml::gguf;

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

const std::string kStories = std::string(GGSERVE_SHARED_DIR) + "/models/stories260K.gguf";

// Parses an image; returns "" on success or the error text. Anything but FormatError escapes.
std::string try_parse(const std::vector<uint8_t>& img) {
    try {
        auto f = File::from_memory(img.data(), img.size());
        // Touch everything a loader would.
        for (const auto& [k, v] : f->metadata()) (void)v.to_display();
        for (const auto& t : f->tensors()) {
            const uint8_t* p = (const uint8_t*)t.data;
            volatile uint8_t sink = t.size ? p[0] ^ p[t.size - 1] : 0;
            (void)sink;
        }
        return "";
    } catch (const FormatError& e) {
        return e.what();
    }
}

}  // namespace

TEST_CASE("stories260K.gguf parses with its metadata and tensors", "[gguf]") {
    auto f = File::open(kStories);
    REQUIRE(f->version() == 3);
    REQUIRE(f->get_string("general.architecture") == "llama");
    REQUIRE(f->get_int("llama.embedding_length", 0) == 64);
    REQUIRE(f->get_int("llama.block_count", 0) == 5);
    REQUIRE(f->get_string_array("tokenizer.ggml.tokens").size() == 512);
    const TensorInfo* t = f->find_tensor("token_embd.weight");
    REQUIRE(t);
    REQUIRE(t->ne[0] == 64);
    REQUIRE(t->ne[1] == 512);
    REQUIRE(t->type == Type::F32);
    REQUIRE((const uint8_t*)t->data >= (const uint8_t*)f->data_base());
}

TEST_CASE("writer round trip covers every value type, nested arrays and alignment", "[gguf]") {
    Writer w;
    w.set("u8", {ValueType::U8, uint64_t(200)});
    w.set("i8", {ValueType::I8, int64_t(-5)});
    w.set("u16", {ValueType::U16, uint64_t(60000)});
    w.set("i16", {ValueType::I16, int64_t(-30000)});
    w.set("u32", Value::u32(4000000000u));
    w.set("i32", Value::i32(-7));
    w.set("f32", Value::f32(1.5f));
    w.set("bool", Value::boolean(true));
    w.set("str", Value::string("héllo\n"));
    w.set("u64", Value::u64(1ull << 40));
    w.set("i64", {ValueType::I64, int64_t(-(1ll << 40))});
    w.set("f64", {ValueType::F64, 2.25});
    w.set("arr", Value::array(ValueType::String, {Value::string("a"), Value::string("")}));
    w.set("nested", Value::array(ValueType::Array, {Value::array(ValueType::I32, {Value::i32(1), Value::i32(2)}),
                                                    Value::array(ValueType::I32, {})}));
    w.set_alignment(64);
    std::vector<float> data(48);
    for (size_t i = 0; i < data.size(); ++i) data[i] = (float)i;
    const int64_t ne[2] = {16, 3};
    w.add_tensor("t0", Type::F32, 2, ne, data.data(), data.size() * 4);
    w.add_tensor("t1", Type::F32, 1, ne, data.data(), 16 * 4);
    auto img = w.to_bytes();
    auto f = File::from_memory(img.data(), img.size());
    REQUIRE(f->alignment() == 64);
    REQUIRE(f->get_int("u8", 0) == 200);
    REQUIRE(f->get_int("i8", 0) == -5);
    REQUIRE(f->get_int("u16", 0) == 60000);
    REQUIRE(f->get_int("i16", 0) == -30000);
    REQUIRE(f->get_int("u32", 0) == 4000000000ll);
    REQUIRE(f->get_int("i32", 0) == -7);
    REQUIRE(f->get_float("f32", 0) == 1.5);
    REQUIRE(f->get_bool("bool", false));
    REQUIRE(f->get_string("str") == "héllo\n");
    REQUIRE(f->get_int("u64", 0) == (1ll << 40));
    REQUIRE(f->get_int("i64", 0) == -(1ll << 40));
    REQUIRE(f->get_float("f64", 0) == 2.25);
    REQUIRE(f->get_string_array("arr") == std::vector<std::string>{"a", ""});
    const auto& nested = f->find("nested")->as_array();
    REQUIRE(nested.items.size() == 2);
    REQUIRE(nested.items[0].as_array().items[1].as_int() == 2);
    REQUIRE(f->tensors().size() == 2);
    REQUIRE(f->find_tensor("t1")->offset % 64 == 0);
    REQUIRE(std::memcmp(f->find_tensor("t0")->data, data.data(), data.size() * 4) == 0);
    REQUIRE_THROWS_AS(f->get_string("u8"), FormatError);
    REQUIRE_THROWS_AS(f->get_int("str", 0), FormatError);
    REQUIRE(f->get_int("absent", 42) == 42);
}

TEST_CASE("specific hostile headers give clear errors", "[gguf]") {
    Writer w;
    w.set("k", Value::u32(1));
    std::vector<float> data(32, 1.0f);
    const int64_t ne[1] = {32};
    w.add_tensor("t", Type::F32, 1, ne, data.data(), 128);
    const auto good = w.to_bytes();
    REQUIRE(try_parse(good).empty());

    auto bad = good;
    bad[0] = 'X';
    REQUIRE_THAT(try_parse(bad), Catch::Contains("bad magic"));
    bad = good;
    bad[4] = 1;
    REQUIRE_THAT(try_parse(bad), Catch::Contains("version 1"));
    bad = good;
    bad[4] = 9;
    REQUIRE_THAT(try_parse(bad), Catch::Contains("unsupported GGUF version"));
    bad = good;
    std::memset(&bad[8], 0xff, 8);  // tensor count
    REQUIRE_THAT(try_parse(bad), Catch::Contains("tensor count"));
    bad = good;
    std::memset(&bad[16], 0x7f, 8);  // metadata count
    REQUIRE_THAT(try_parse(bad), Catch::Contains("metadata count"));
    bad = good;
    std::memset(&bad[24], 0x7f, 8);  // first key length
    REQUIRE_THAT(try_parse(bad), Catch::Contains("exceeds"));
    REQUIRE_THAT(try_parse(std::vector<uint8_t>(good.begin(), good.begin() + 10)), Catch::Contains("truncated"));
    REQUIRE_THAT(try_parse(std::vector<uint8_t>(good.begin(), good.end() - 64)), Catch::Contains("beyond the end"));
    REQUIRE_THROWS_AS(File::open("/nonexistent/model.gguf"), std::runtime_error);
}

TEST_CASE("stories260K truncated at 200 lengths: loads or fails cleanly", "[gguf][hostile]") {
    const auto img = read_file(kStories);
    int ok = 0, failed = 0;
    for (int i = 0; i < 200; ++i) {
        const size_t len = img.size() * (size_t)i / 200;
        std::vector<uint8_t> cut(img.begin(), img.begin() + (long)len);
        const std::string err = try_parse(cut);
        if (err.empty())
            ++ok;
        else
            ++failed;
    }
    // Every truncation cuts tensor data or the header, so nothing truncated may load.
    REQUIRE(failed == 200);
    REQUIRE(ok == 0);
}

TEST_CASE("500 copies of stories260K with random header bytes overwritten: no crash", "[gguf][hostile]") {
    const auto img = read_file(kStories);
    auto f = File::from_memory(img.data(), img.size());
    const size_t header_end = f->data_offset();  // metadata + tensor table
    std::mt19937 rng(1234);
    int loaded = 0, rejected = 0;
    for (int i = 0; i < 500; ++i) {
        auto copy = img;
        const int n_bytes = 1 + (int)(rng() % 16);
        for (int b = 0; b < n_bytes; ++b) copy[rng() % header_end] = (uint8_t)rng();
        const std::string err = try_parse(copy);
        if (err.empty())
            ++loaded;
        else
            ++rejected;
    }
    INFO("loaded " << loaded << ", rejected " << rejected);
    REQUIRE(loaded + rejected == 500);
    REQUIRE(rejected > 0);
}

TEST_CASE("a file read into memory (no mmap) equals the mapped one, mlock locks it", "[gguf]") {
    auto mapped = File::open(kStories);
    OpenOptions read;
    read.mmap = false;
    read.mlock = true;
    auto loaded = File::open(kStories, read);
    CHECK(mapped->mapped());
    CHECK_FALSE(loaded->mapped());
    // Locked, or the reason (a container's RLIMIT_MEMLOCK) is given.
    CHECK((loaded->locked_bytes() == loaded->file_size() || !loaded->lock_error().empty()));
    REQUIRE(loaded->tensors().size() == mapped->tensors().size());
    for (size_t i = 0; i < mapped->tensors().size(); ++i) {
        const TensorInfo& a = mapped->tensors()[i];
        const TensorInfo& b = loaded->tensors()[i];
        REQUIRE(a.name == b.name);
        REQUIRE(a.size == b.size);
        REQUIRE(std::memcmp(a.data, b.data, a.size) == 0);
        REQUIRE(b.data != a.data);
    }
}

TEST_CASE("metadata overrides replace or add values", "[gguf]") {
    auto f = File::open(kStories);
    f->override_value("general.architecture", Value::string("renamed"));
    f->override_value("new.key", Value::u32(7));
    CHECK(f->get_string("general.architecture") == "renamed");
    CHECK(f->get_int("new.key", 0) == 7);
    CHECK(f->get_int("llama.block_count", 0) == 5);
}

TEST_CASE("floats read as integers: out of range is a FormatError, not a wrapped value", "[gguf]") {
    // Found by the gguf fuzz target (tests/fuzz/corpus/gguf/float-as-int-out-of-range): a float key read as
    // an integer (as_int, and get_bool through it) was converted to int64_t unchecked, undefined for 9.8e299.
    REQUIRE_THROWS_AS(Value({ValueType::F64, 9.8e299}).as_int(), FormatError);
    REQUIRE_THROWS_AS(Value({ValueType::F32, double(std::nanf(""))}).as_int(), FormatError);
    REQUIRE_THROWS_AS(Value({ValueType::F64, -1e19}).as_int(), FormatError);
    REQUIRE(Value::f32(-7.9f).as_int() == -7);
    Writer w;
    w.set("huge", Value{ValueType::F64, 9.8e299});
    w.set("tiny", Value::f32(0.25f));
    w.set("zero", Value::f32(0.0f));
    const auto bytes = w.to_bytes();
    auto f = File::from_memory(bytes.data(), bytes.size());
    REQUIRE(f->get_bool("huge", false));
    REQUIRE(f->get_bool("tiny", false));  // 0.25 is not false
    REQUIRE_FALSE(f->get_bool("zero", true));
}
