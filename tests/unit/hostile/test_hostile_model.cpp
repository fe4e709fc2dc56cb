// Hostile model files through the whole loader (GGUF, hyper-parameters, tokenizer, weights) and a
// decode step: truncated files and files with random bytes in the header and tensor table either load
// or fail with a clear error. Run under ASan/UBSan by scripts/test.sh.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/tokenizer/vocab.h"
#include "ggml/gguf.h"

namespace {

const std::string kStories = std::string(GGSERVE_SHARED_DIR) + "/models/stories260K.gguf";

std::vector<char> read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

struct TempFile {
    std::string path =
        (std::filesystem::temp_directory_path() / ("ggserve-hostile-" + std::to_string(getpid()) + ".gguf"))
            .string();
    ~TempFile() { std::filesystem::remove(path); }
    void write(const char* data, size_t n) {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(data, (std::streamsize)n);
    }
};

// "" when the model loaded (and decoded a token), otherwise the error message.
std::string try_load(const std::string& path) {
    try {
        auto m = engine::Model::load(path);
        engine::ContextParams cp;
        cp.n_ctx = 64;
        cp.n_threads = 1;
        engine::Context ctx(*m, cp);
        engine::Batch b;
        b.add(m->vocab().bos() >= 0 ? m->vocab().bos() : 0, 0, {0}, true);
        ctx.decode(b);
        return "";
    } catch (const std::exception& e) {
        return e.what()[0] ? e.what() : "(empty message)";
    }
}

}  // namespace

TEST_CASE("stories260K truncated at 200 lengths never loads and always explains why", "[hostile]") {
    const auto img = read_all(kStories);
    TempFile tmp;
    for (int i = 0; i < 200; ++i) {
        const size_t len = img.size() * (size_t)i / 200;
        tmp.write(img.data(), len);
        const std::string err = try_load(tmp.path);
        INFO("length " << len);
        REQUIRE(!err.empty());
        REQUIRE(err != "(empty message)");
    }
}

TEST_CASE("500 copies with random header bytes: load or a clear error, never a crash", "[hostile]") {
    const auto img = read_all(kStories);
    const size_t header_end = ggml::gguf::File::from_memory(img.data(), img.size())->data_offset();
    std::mt19937 rng(4321);
    TempFile tmp;
    int loaded = 0, rejected = 0;
    for (int i = 0; i < 500; ++i) {
        auto copy = img;
        const int n = 1 + (int)(rng() % 16);
        for (int b = 0; b < n; ++b) copy[rng() % header_end] = (char)rng();
        tmp.write(copy.data(), copy.size());
        const std::string err = try_load(tmp.path);
        if (err.empty()) {
            ++loaded;
        } else {
            ++rejected;
            REQUIRE(err != "(empty message)");
        }
    }
    WARN("hostile headers: " << loaded << " loaded, " << rejected << " rejected with an error");
    REQUIRE(rejected > 100);
}
