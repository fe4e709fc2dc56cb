// State files of one sequence: a save -> load round trip continues exactly like the original, and
// hostile files (truncated, wrong model, wrong version or cache type, random bytes) are refused with
// a clear error and leave the cache unchanged.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/model/kv_shift.h"
#include "engine/model/kv_state.h"
#include "seq_util.h"

using namespace engine;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "ggserve-kvstate-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

std::vector<char> read_bytes(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}
void write_bytes(const std::string& p, const std::vector<char>& b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(b.data(), (std::streamsize)b.size());
}

ContextParams params(uint32_t n_seq = 1) {
    ContextParams cp;
    cp.n_ctx = 256;
    cp.n_seq_max = n_seq;
    cp.n_threads = cp.n_threads_batch = 2;
    return cp;
}

// Re-evaluates the last token of a restored sequence (its logits are not part of the state).
std::vector<float> resume(Context& ctx, SeqId seq, const std::vector<Token>& tokens) {
    ctx.kv().seq_rm(seq, (Pos)tokens.size() - 1, -1);
    return eval_seq(ctx, seq, {tokens.back()}, (Pos)tokens.size() - 1);
}

}  // namespace

TEST_CASE("save -> load round trip gives identical logits and greedy output", "[model][kv][state]") {
    TempDir dir;
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    const auto prompt = golden["cases"][0]["prompt_tokens"].get<std::vector<Token>>();
    const auto want = golden["cases"][0]["completion_tokens"].get<std::vector<Token>>();

    Context a(*model, params());
    const auto logits_a = eval_seq(a, 0, prompt, 0);
    const size_t n_bytes = save_seq_state(a, 0, prompt, dir.file("s.bin"));
    REQUIRE(n_bytes == fs::file_size(dir.file("s.bin")));

    // Into another context and another sequence id.
    Context b(*model, params(4));
    const LoadedState st = load_seq_state(b, 3, dir.file("s.bin"), 256);
    REQUIRE(st.tokens == prompt);
    REQUIRE(st.n_bytes == n_bytes);
    REQUIRE(b.kv().seq_pos_max(3) == (Pos)prompt.size() - 1);
    const auto logits_b = resume(b, 3, st.tokens);
    REQUIRE(logits_b == logits_a);
    REQUIRE(greedy_from(b, 3, logits_b, (Pos)prompt.size(), (int)want.size()) == want);
}

TEST_CASE("in-memory states equal the file's bytes and restore whole or as a prefix", "[model][kv][state]") {
    TempDir dir;
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    // A prompt and the first 40 tokens of its greedy completion: 55 tokens.
    auto prompt = golden["cases"][2]["prompt_tokens"].get<std::vector<Token>>();
    const auto done = golden["cases"][2]["completion_tokens"].get<std::vector<Token>>();
    prompt.insert(prompt.end(), done.begin(), done.begin() + 40);

    Context a(*model, params());
    const auto logits_a = eval_seq(a, 0, prompt, 0);
    const std::vector<uint8_t> bytes = seq_state_bytes(a, 0, prompt);
    REQUIRE(bytes.size() == seq_state_size(a, prompt.size()));
    save_seq_state(a, 0, prompt, dir.file("s.bin"));
    const std::vector<char> file = read_bytes(dir.file("s.bin"));
    REQUIRE(std::vector<uint8_t>(file.begin(), file.end()) == bytes);

    // Whole, into another sequence of another context that holds something else.
    Context b(*model, params(2));
    eval_seq(b, 1, golden["cases"][0]["prompt_tokens"].get<std::vector<Token>>(), 0);
    const LoadedState st = restore_seq_state(b, 1, bytes.data(), bytes.size(), 256, "test state");
    REQUIRE(st.tokens == prompt);
    REQUIRE(resume(b, 1, st.tokens) == logits_a);

    // The first half only: the rest of the prompt evaluated on top gives the same logits.
    const size_t half = prompt.size() / 2;
    Context c(*model, params());
    const LoadedState part = restore_seq_state(c, 0, bytes.data(), bytes.size(), 256, "test state", half);
    REQUIRE(part.tokens == std::vector<Token>(prompt.begin(), prompt.begin() + (long)half));
    REQUIRE(c.kv().seq_cells(0).size() == half);
    REQUIRE(c.kv().seq_pos_max(0) == (Pos)half - 1);
    const auto logits_c =
        eval_seq(c, 0, std::vector<Token>(prompt.begin() + (long)half, prompt.end()), (Pos)half);
    REQUIRE(logits_c == logits_a);

    // A damaged buffer names its source and changes nothing.
    std::vector<uint8_t> bad = bytes;
    bad[0] = 'X';
    const uint32_t used = c.kv().n_used();
    REQUIRE_THROWS_WITH(restore_seq_state(c, 0, bad.data(), bad.size(), 256, "test state"),
                        Catch::Contains("test state is not a ggserve state file"));
    REQUIRE(c.kv().n_used() == used);
}

TEST_CASE("a quantized cache round trips bit for bit", "[model][kv][state]") {
    TempDir dir;
    auto model = Model::load(shared_path("models/synth/synth-tiny-q8_0.gguf"));
    const auto golden = load_golden("synth-tiny-q8_0.greedy.json");
    const auto prompt = golden["cases"][1]["prompt_tokens"].get<std::vector<Token>>();
    ContextParams cp = params();
    cp.flash_attn = true;
    cp.type_k = ggml::Type::Q8_0;
    cp.type_v = ggml::Type::Q4_0;
    Context a(*model, cp);
    const auto logits_a = eval_seq(a, 0, prompt, 0);
    const auto cont_a = greedy_from(a, 0, logits_a, (Pos)prompt.size(), 6);
    a.kv().clear();
    eval_seq(a, 0, prompt, 0);
    save_seq_state(a, 0, prompt, dir.file("q.bin"));
    Context b(*model, cp);
    const auto st = load_seq_state(b, 0, dir.file("q.bin"), 256);
    const auto logits_b = resume(b, 0, st.tokens);
    REQUIRE(logits_b == logits_a);
    REQUIRE(greedy_from(b, 0, logits_b, (Pos)prompt.size(), 6) == cont_a);
}

TEST_CASE("a shifted sequence is saved with its keys re-rotated", "[model][kv][state]") {
    TempDir dir;
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    const auto prompt = golden["cases"][2]["prompt_tokens"].get<std::vector<Token>>();
    Context a(*model, params());
    const auto gen = greedy_from(a, 0, eval_seq(a, 0, prompt, 0), (Pos)prompt.size(), 60);
    std::vector<Token> cached = prompt;
    cached.insert(cached.end(), gen.begin(), gen.end() - 1);
    shift_context(a.kv(), 0, cached, 1);
    REQUIRE(a.kv().has_shift());
    save_seq_state(a, 0, cached, dir.file("shifted.bin"));
    REQUIRE_FALSE(a.kv().has_shift());
    cached.push_back(gen.back());
    const auto cont_a =
        greedy_from(a, 0, eval_seq(a, 0, {gen.back()}, (Pos)cached.size() - 1), (Pos)cached.size(), 10);

    Context b(*model, params());
    const auto st = load_seq_state(b, 0, dir.file("shifted.bin"), 256);
    REQUIRE(st.tokens.size() == cached.size() - 1);
    const auto cont_b =
        greedy_from(b, 0, eval_seq(b, 0, {gen.back()}, (Pos)cached.size() - 1), (Pos)cached.size(), 10);
    REQUIRE(cont_b == cont_a);
}

TEST_CASE("hostile state files give clear errors and leave the cache unchanged", "[model][kv][state]") {
    TempDir dir;
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    const auto prompt = golden["cases"][0]["prompt_tokens"].get<std::vector<Token>>();
    const auto other = golden["cases"][1]["prompt_tokens"].get<std::vector<Token>>();
    Context ctx(*model, params());
    eval_seq(ctx, 0, prompt, 0);
    const std::string good = dir.file("good.bin");
    save_seq_state(ctx, 0, prompt, good);
    const std::vector<char> bytes = read_bytes(good);

    // The context now holds another prompt; every failed load must leave it as it is.
    ctx.kv().clear();
    const auto logits = eval_seq(ctx, 0, other, 0);
    const uint32_t used = ctx.kv().n_used();
    const std::string bad = dir.file("bad.bin");
    auto refused = [&](const std::string& path, const std::string& why) {
        INFO("expecting: " << why);
        REQUIRE_THROWS_WITH(load_seq_state(ctx, 0, path, 256), Catch::Contains(why));
        REQUIRE(ctx.kv().n_used() == used);
        REQUIRE(ctx.kv().seq_pos_max(0) == (Pos)other.size() - 1);
    };
    auto refused_bytes = [&](const std::vector<char>& b, const std::string& why) {
        write_bytes(bad, b);
        refused(bad, why);
    };

    SECTION("truncated") {
        for (size_t len :
             {size_t(0), size_t(7), size_t(43), size_t(44), size_t(100), bytes.size() / 2, bytes.size() - 1})
            refused_bytes(std::vector<char>(bytes.begin(), bytes.begin() + (long)len), "truncated");
        auto longer = bytes;
        longer.push_back(0);
        refused_bytes(longer, "its header implies");
    }
    SECTION("wrong magic, version, types, shape, tokens, positions") {
        auto b = bytes;
        b[0] = 'X';
        refused_bytes(b, "not a ggserve state file");
        b = bytes;
        b[8] = 2;  // version
        refused_bytes(b, "has version 2; this build reads version 1");
        b = bytes;
        b[20] = 0;  // type_k f16 -> f32
        refused_bytes(b, "holds a f32/f16 cache but this context uses f16/f16");
        b = bytes;
        b[28] = 9;  // n_layer
        refused_bytes(b, "different cache shape");
        b = bytes;
        b[44] = (char)0xff;  // first token id: 0x..ff within the header-implied size
        b[45] = (char)0xff;
        refused_bytes(b, "outside the vocabulary");
        b = bytes;
        b[44 + 4 * prompt.size()] = 5;  // first position
        refused_bytes(b, "invalid cell positions");
    }
    SECTION("too many tokens for the slot") {
        REQUIRE_THROWS_WITH(load_seq_state(ctx, 0, good, 3), Catch::Contains("more than the 3 that fit"));
    }
    SECTION("wrong model") {
        auto synth = Model::load(shared_path("models/synth/synth-tiny-f16.gguf"));
        Context sctx(*synth, params());
        eval_seq(sctx, 0, {1, 100, 200}, 0);
        const std::string s = dir.file("synth.bin");
        save_seq_state(sctx, 0, {1, 100, 200}, s);
        refused(s, "saved with a different model");
    }
    SECTION("random bytes") {
        std::mt19937 rng(7);
        for (int i = 0; i < 50; ++i) {
            std::vector<char> b(rng() % 4096);
            for (char& c : b) c = (char)rng();
            if (i % 2 == 0 && b.size() >= 8)
                std::copy(bytes.begin(), bytes.begin() + 8, b.begin());  // valid magic
            write_bytes(bad, b);
            REQUIRE_THROWS_AS(load_seq_state(ctx, 0, bad, 256), StateFileError);
            REQUIRE(ctx.kv().n_used() == used);
        }
        // Random bytes after an intact header: the data is not checked, but sizes are.
        auto b = bytes;
        for (size_t k = 44 + 8 * prompt.size(); k < b.size(); ++k) b[k] = (char)rng();
        write_bytes(bad, b);
        REQUIRE_NOTHROW(load_seq_state(ctx, 0, bad, 256));
        return;
    }
    SECTION("not a regular file") {
        refused(dir.file("missing.bin"), "cannot open");
        refused(dir.path.string(), "not a regular file");
        fs::create_symlink(good, dir.file("link.bin"));
        refused(dir.file("link.bin"), "symbolic link");
    }
    // The cache still works as before.
    REQUIRE(greedy_from(ctx, 0, logits, (Pos)other.size(), 8) ==
            std::vector<Token>(golden["cases"][1]["completion_tokens"].begin(),
                               golden["cases"][1]["completion_tokens"].begin() + 8));
}
