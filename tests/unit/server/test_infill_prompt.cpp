// The /infill prompt layout (server/api/infill_prompt.h) on real code-model vocabularies: StarCoder's
// (FIM prefix/suffix/middle tokens, no repository or file-separator token) and the same with those two
// named in the metadata, as Qwen2.5-Coder's vocabulary has them.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "ggml/gguf.h"
#include "server/api/infill_prompt.h"

using engine::Token;
using engine::Vocab;
using Tokens = std::vector<Token>;

namespace {

const std::string kStarcoder = std::string(GGSERVE_SHARED_DIR) + "/models/vocab/ggml-vocab-starcoder.gguf";

const Vocab& starcoder() {
    static const Vocab v = Vocab::from_file(kStarcoder);
    return v;
}

// StarCoder's vocabulary with <repo_name> and <file_sep> named as the FIM repository and file separator.
const Vocab& starcoder_repo_level() {
    static const Vocab v = [] {
        auto f = ggml::gguf::File::open(kStarcoder);
        ggml::gguf::Writer w;
        for (const auto& [k, val] : f->metadata()) w.set(k, val);
        const Vocab plain = Vocab::from_file(kStarcoder);
        w.set("tokenizer.ggml.fim_rep_token_id", ggml::gguf::Value::u32((uint32_t)plain.find_token("<repo_name>")));
        w.set("tokenizer.ggml.fim_sep_token_id", ggml::gguf::Value::u32((uint32_t)plain.find_token("<file_sep>")));
        const auto path = std::filesystem::temp_directory_path() / ("ggserve-infill-" + std::to_string(getpid()) + ".gguf");
        w.write(path.string());
        Vocab out = Vocab::from_file(path.string());
        std::filesystem::remove(path);
        return out;
    }();
    return v;
}

Tokens text(const Vocab& v, const std::string& s) {
    return v.tokenize(s, false, false);
}

Tokens cat(std::initializer_list<Tokens> parts) {
    Tokens out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace

TEST_CASE("infill: the vocabularies' FIM tokens", "[server][infill]") {
    const Vocab& v = starcoder();
    REQUIRE(api::supports_infill(v));
    REQUIRE(v.token_text(v.fim_pre()) == "<fim_prefix>");
    REQUIRE(v.token_text(v.fim_suf()) == "<fim_suffix>");
    REQUIRE(v.token_text(v.fim_mid()) == "<fim_middle>");
    REQUIRE(v.fim_rep() == engine::kNoToken);
    REQUIRE(v.fim_sep() == engine::kNoToken);
    REQUIRE(starcoder_repo_level().token_text(starcoder_repo_level().fim_sep()) == "<file_sep>");
    REQUIRE_FALSE(api::supports_infill(Vocab::from_file(std::string(GGSERVE_SHARED_DIR) + "/models/stories260K.gguf")));
}

TEST_CASE("infill: prefix, suffix and prompt in PSM and SPM order", "[server][infill]") {
    const Vocab& v = starcoder();
    api::InfillInput in;
    in.prefix = text(v, "def add(a, b):\n    ");
    in.suffix = text(v, "\n\nprint(add(1, 2))\n");
    in.prompt = text(v, "return");
    const Tokens pre{v.fim_pre()}, suf{v.fim_suf()}, mid{v.fim_mid()};
    const Tokens bos = v.add_bos() ? Tokens{v.bos()} : Tokens{};
    REQUIRE(api::build_infill_prompt(v, in, 2048, 16, 4096, false) ==
            cat({bos, pre, in.prefix, in.prompt, suf, in.suffix, mid}));
    REQUIRE(api::build_infill_prompt(v, in, 2048, 16, 4096, true) ==
            cat({bos, suf, in.suffix, pre, in.prefix, in.prompt, mid}));
}

TEST_CASE("infill: a small batch keeps the prefix's tail and the suffix's head, 3:1", "[server][infill]") {
    const Vocab& v = starcoder();
    api::InfillInput in;
    for (int i = 0; i < 40; ++i) in.prefix.push_back(1000 + i);
    for (int i = 0; i < 40; ++i) in.suffix.push_back(2000 + i);
    // n_batch 32: 24 prefix tokens; 32/4 - 2 = 6 suffix tokens (with no prompt), 3 with a 3-token prompt.
    Tokens got = api::build_infill_prompt(v, in, 32, 0, 4096, false);
    Tokens want = cat({{v.fim_pre()}, Tokens(in.prefix.end() - 24, in.prefix.end()), {v.fim_suf()},
                       Tokens(in.suffix.begin(), in.suffix.begin() + 6), {v.fim_mid()}});
    REQUIRE(got == want);
    in.prompt = {7, 8, 9};
    got = api::build_infill_prompt(v, in, 32, 0, 4096, false);
    REQUIRE(got.size() == 1 + 24 + 3 + 1 + 3 + 1);
    // A prompt that fills the suffix's share leaves no suffix.
    in.prompt = Tokens(10, 5);
    got = api::build_infill_prompt(v, in, 32, 0, 4096, false);
    REQUIRE(got == cat({{v.fim_pre()}, Tokens(in.prefix.end() - 24, in.prefix.end()), in.prompt, {v.fim_suf()},
                        {v.fim_mid()}}));
}

TEST_CASE("infill: extra files go first, separated as the vocabulary allows, cut to the context", "[server][infill]") {
    api::InfillInput in;
    in.extra = {{"a.py", "x = 1\n"}, {"b.py", "y = 2\n"}};
    SECTION("without a file separator: a plain-text snippet separator") {
        const Vocab& v = starcoder();
        in.prefix = text(v, "z = ");
        const Tokens sep = text(v, "\n\n--- snippet ---\n\n");
        const Tokens extra = cat({sep, text(v, "x = 1\n"), sep, text(v, "y = 2\n")});
        const Tokens fim = cat({{v.fim_pre()}, in.prefix, {v.fim_suf()}, {v.fim_mid()}});
        REQUIRE(api::build_infill_prompt(v, in, 64, 16, 4096, false) == cat({extra, fim}));
        // Room for 5 extra tokens (n_ctx - n_batch - 2 n_predict): the last 5.
        REQUIRE(api::build_infill_prompt(v, in, 64, 16, 64 + 32 + 5, false) ==
                cat({Tokens(extra.end() - 5, extra.end()), fim}));
        REQUIRE(api::build_infill_prompt(v, in, 64, 16, 64, false) == fim);
    }
    SECTION("repository level: [FIM_REP] project, [FIM_SEP] per file, [FIM_SEP] for the current one") {
        const Vocab& v = starcoder_repo_level();
        in.prefix = text(v, "z = ");
        const Token rep = v.fim_rep(), fs = v.fim_sep();
        const Tokens extra = cat({{rep}, text(v, "myproject\n"), {fs}, text(v, "a.py\n"), text(v, "x = 1\n"), {fs},
                                  text(v, "b.py\n"), text(v, "y = 2\n"), {fs}, text(v, "filename\n")});
        REQUIRE(api::build_infill_prompt(v, in, 64, 16, 4096, false) ==
                cat({extra, {v.fim_pre()}, in.prefix, {v.fim_suf()}, {v.fim_mid()}}));
    }
}
