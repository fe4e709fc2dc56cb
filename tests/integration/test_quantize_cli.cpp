// `ggserve quantize`: llama-quantize's command line. The quantized stories260K generates greedily the
// tokens llama-quantize's copy generates; bad inputs are refused with a message and a nonzero exit
// (2 for usage errors, 1 for refused or failed conversions), leaving no output behind.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_process.h"
#include "server_process.h"

namespace fs = std::filesystem;

namespace {

struct TmpDir {
    fs::path dir;
    TmpDir() {
        std::string tmpl = (fs::temp_directory_path() / "ggserve-quantize-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        dir = tmpl;
    }
    ~TmpDir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

nlohmann::json greedy(const std::string& model) {
    const CliResult r =
        run_ggserve("run -m " + model + " -p 'Once upon a time, there was a little girl named Lily' -n 24 --temp 0 "
                    "-t 1 --json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.output.substr(r.output.find('{')));
}

}  // namespace

TEST_CASE("quantize: stories260K to Q8_0 and Q4_0 loads and generates as llama-quantize's copies do",
          "[integration][cli][quantize]") {
    TmpDir tmp;
    for (const std::string type : {"Q8_0", "Q4_0"}) {
        INFO(type);
        const std::string out = tmp / ("stories-" + type + ".gguf");
        const CliResult r =
            run_ggserve("quantize --tensor-type ffn_down=f16 " + stories_model() + " " + out + " " + type + " 2");
        INFO(r.output);
        REQUIRE(r.code == 0);
        CHECK(r.output.find("converting to") != std::string::npos);
        const CliResult info = run_ggserve("info -m " + out);
        INFO(info.output);
        REQUIRE(info.code == 0);
        std::string lower = type;
        for (auto& ch : lower) ch = (char)std::tolower((unsigned char)ch);
        const auto mine = greedy(out);
        CHECK(mine["completion_tokens"].size() == 24);
        const std::string ref = shared_path("models/stories260K-" + lower + ".gguf");
        if (fs::exists(ref)) CHECK(mine["completion_tokens"] == greedy(ref)["completion_tokens"]);
    }
    // An MoE model (3-D expert tensors), requantized from Q8_0 to the Q4_K_M mix, still generates.
    const std::string moe = shared_path("models/synth/synth-llama-moe-q8_0.gguf");
    if (fs::exists(moe)) {
        const std::string out = tmp / "moe-q4_k_m.gguf";
        const CliResult q = run_ggserve("quantize --allow-requantize " + moe + " " + out + " Q4_K_M");
        INFO(q.output);
        REQUIRE(q.code == 0);
        CHECK(greedy(out)["completion_tokens"].size() == 24);
    }
    // IN TYPE: the output goes beside the input as ggml-model-TYPE.gguf, as llama-quantize names it.
    fs::copy_file(stories_model(), tmp / "in.gguf");
    const CliResult r = run_ggserve("quantize " + (tmp / "in.gguf") + " F16");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(fs::exists(tmp / "ggml-model-F16.gguf"));
}

TEST_CASE("quantize: bad input is refused with a clear message and a nonzero exit",
          "[integration][cli][quantize]") {
    TmpDir tmp;
    const std::string out = tmp / "out.gguf";
    struct Case {
        std::string args, message;
        int code;
    };
    std::ofstream(tmp / "text.gguf") << "this is not a GGUF file\n";
    {
        // The first 4 KiB of a real model: a header that promises more than the file holds.
        std::ifstream in(stories_model(), std::ios::binary);
        std::vector<char> head(4096);
        in.read(head.data(), (std::streamsize)head.size());
        std::ofstream(tmp / "truncated.gguf", std::ios::binary).write(head.data(), (std::streamsize)head.size());
    }
    const std::string q8 = shared_path("models/stories260K-q8_0.gguf");
    const Case cases[] = {
        {"quantize " + (tmp / "missing.gguf") + " " + out + " Q8_0", "cannot read", 1},
        {"quantize " + (tmp / "text.gguf") + " " + out + " Q8_0", "cannot read", 1},
        {"quantize " + (tmp / "truncated.gguf") + " " + out + " Q8_0", "cannot read", 1},
        {"quantize " + stories_model() + " " + out + " Q7_X", "invalid TYPE 'Q7_X'", 2},
        {"quantize " + stories_model() + " " + out, "missing TYPE", 2},
        {"quantize " + stories_model(), "bad arguments", 2},
        {"quantize --no-such-option " + stories_model() + " " + out + " Q8_0", "unknown option", 2},
        {"quantize --output-tensor-type q9_9 " + stories_model() + " " + out + " Q8_0", "invalid ggml_type", 2},
        {"quantize --imatrix m.dat " + stories_model() + " " + out + " Q8_0", "importance matri", 2},
        {"quantize --tensor-type ffn_down=f16 " + q8 + " " + out + " Q4_0", "--allow-requantize", 1},
        {"quantize " + stories_model() + " " + out + " Q8_0", "blk.0.ffn_down.weight", 1},
        {"quantize " + stories_model() + " /nonexistent-dir/out.gguf F16", "cannot create", 1},
    };
    for (const auto& c : cases) {
        const CliResult r = run_ggserve(c.args);
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == c.code);
        CHECK(r.output.find(c.message) != std::string::npos);
        CHECK_FALSE(fs::exists(out));
        CHECK_FALSE(fs::exists(out + ".part"));
    }
    // With --allow-requantize the Q8_0 copy becomes a Q4_0 file that generates.
    const CliResult r = run_ggserve("quantize --allow-requantize --tensor-type ffn_down=f16 " + q8 + " " + out + " Q4_0");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(greedy(out)["completion_tokens"].size() == 24);
}
