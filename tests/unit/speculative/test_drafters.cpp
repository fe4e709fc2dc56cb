// The n-gram drafters on token sequences with known repeats, the --spec-type list parser, and the
// n-gram cache files.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <random>
#include <unordered_map>

#include "engine/speculative/ngram_drafters.h"
#include "engine/speculative/ngram_table.h"

using namespace engine;
using namespace engine::spec;

namespace {

// "a b c d e f" twice, then "a b c": every drafter that indexes the history should propose "d e f ...".
std::vector<Token> repeated() {
    std::vector<Token> h = {10, 11, 12, 13, 14, 15, 16, 17, 10, 11, 12, 13, 14, 15, 16, 17, 10, 11, 12};
    return h;
}

// An empty file of its own under /tmp; the caller removes it.
std::string new_temp_file() {
    char tmpl[] = "/tmp/ggserve-ngram-XXXXXX";
    const int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    close(fd);
    return tmpl;
}

std::vector<std::unique_ptr<Drafter>> all_drafters() {
    std::vector<std::unique_ptr<Drafter>> v;
    v.push_back(make_ngram_simple());
    v.push_back(make_ngram_map_k());
    v.push_back(make_ngram_map_k4v());
    v.push_back(make_ngram_mod(4));  // the mechanism, on short passages; the default key is 24 tokens
    v.push_back(make_ngram_cache(std::make_shared<NgramCacheStore>()));
    return v;
}

}  // namespace

TEST_CASE("n-gram drafters propose the continuation of a repeated passage", "[speculative][drafter]") {
    for (auto& d : all_drafters()) {
        INFO(drafter_name(d->type()));
        d->begin();
        const std::vector<Token> h = repeated();
        const std::vector<Token> got = d->draft(h, 4);
        REQUIRE(got == std::vector<Token>{13, 14, 15, 16});
        // The cap holds, and a longer history (tokens appended) keeps working incrementally.
        REQUIRE(d->draft(h, 2).size() <= 2);
        std::vector<Token> h2 = h;
        h2.push_back(13);
        REQUIRE(d->draft(h2, 3) == std::vector<Token>{14, 15, 16});
    }
}

TEST_CASE("n-gram drafters propose nothing without a repeat, for tiny histories or n_max 0",
          "[speculative][drafter]") {
    for (auto& d : all_drafters()) {
        INFO(drafter_name(d->type()));
        d->begin();
        const std::vector<Token> fresh = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        REQUIRE(d->draft(fresh, 8).empty());
        d->begin();
        REQUIRE(d->draft(std::vector<Token>{1}, 8).empty());
        REQUIRE(d->draft(repeated(), 0).empty());
    }
}

TEST_CASE("ngram-mod's default 24-token key drafts only where a long stretch repeats", "[speculative][drafter]") {
    auto mod = make_ngram_mod();
    mod->begin();
    REQUIRE(mod->draft(repeated(), 4).empty());  // an 8-token passage repeated: too short a match
    std::vector<Token> h;
    for (Token t = 100; t < 140; ++t) h.push_back(t);  // 40 tokens, then its first 30 again
    for (Token t = 100; t < 130; ++t) h.push_back(t);
    REQUIRE(mod->draft(h, 4) == std::vector<Token>{130, 131, 132, 133});
}

TEST_CASE("begin() starts a new history, ngram-mod keeps what it learned", "[speculative][drafter]") {
    auto mod = make_ngram_mod(4);
    mod->begin();
    REQUIRE(!mod->draft(repeated(), 4).empty());
    mod->begin();
    // A new request that starts with the passage's head: the pool remembers the old continuation.
    REQUIRE(mod->draft(std::vector<Token>{10, 11, 12, 13}, 3) == std::vector<Token>{14, 15, 16});
    auto mapk = make_ngram_map_k();
    mapk->begin();
    REQUIRE(!mapk->draft(repeated(), 4).empty());
    mapk->begin();
    REQUIRE(mapk->draft(std::vector<Token>{10, 11, 12, 13}, 3).empty());
}

TEST_CASE("ngram-map-k4v follows only a dominant next token", "[speculative][drafter]") {
    auto d = make_ngram_map_k4v(2);
    d->begin();
    // After (1,2): 3 twice, 4 once, 5 once -> 3 holds half: proposed; after (2,3) always 9.
    const std::vector<Token> h = {1, 2, 3, 9, 1, 2, 4, 7, 1, 2, 3, 9, 1, 2, 5, 6, 1, 2};
    const auto got = d->draft(h, 4);
    REQUIRE(!got.empty());
    REQUIRE(got[0] == 3);
    REQUIRE(got.size() >= 2);
    REQUIRE(got[1] == 9);
}

TEST_CASE("ngram-cache falls back to the dynamic level learned from earlier requests",
          "[speculative][drafter]") {
    auto store = std::make_shared<NgramCacheStore>();
    auto d = make_ngram_cache(store);
    // Request 1 ends: its n-grams go to the dynamic level.
    d->begin();
    std::vector<Token> first;
    for (int r = 0; r < 10; ++r)
        for (Token t : {40, 41, 42, 43}) first.push_back(t);
    d->end(first);
    REQUIRE(store->dynamic.size() > 0);
    // Request 2 has seen "40 41" only once itself: the dynamic level proposes 42 43 ...
    d->begin();
    const auto got = d->draft(std::vector<Token>{7, 8, 40, 41}, 3);
    REQUIRE(got == std::vector<Token>{42, 43, 40});
}

TEST_CASE(
    "ngram-cache: the dynamic level stays within its bound over many distinct requests and keeps "
    "what it saw often",
    "[speculative][drafter]") {
    auto store = std::make_shared<NgramCacheStore>();
    store->dynamic_limit = 4096;
    auto d = make_ngram_cache(store);
    std::mt19937 rng(7);
    std::uniform_int_distribution<Token> tok(100, 30000);
    std::vector<Token> often;
    for (int r = 0; r < 10; ++r)
        for (Token t : {40, 41, 42, 43}) often.push_back(t);
    size_t largest = 0, added = 0;
    for (int i = 0; i < 300; ++i) {
        std::vector<Token> h(64);
        for (Token& t : h) t = tok(rng);  // a text never seen again: about 250 new n-grams
        d->begin();
        d->end(i % 2 ? often : h);
        added += 4 * h.size();
        largest = std::max(largest, store->dynamic.size());
    }
    INFO("n-grams offered " << added << ", largest dynamic level " << largest);
    CHECK(added > 8 * store->dynamic_limit);
    CHECK(largest <= store->dynamic_limit);
    // The text every other request repeated is still there: "40 41" is followed by 42 often enough.
    d->begin();
    CHECK(d->draft(std::vector<Token>{7, 8, 40, 41}, 3) == std::vector<Token>{42, 43, 40});
}

TEST_CASE("n-gram cache aging halves the counts and drops what reaches zero", "[speculative][drafter]") {
    NgramCache c;
    // "5 6" is followed by 7 four times and by 8 once; "1 2" by 3 once.
    c.update(std::vector<Token>{5, 6, 7, 5, 6, 7, 5, 6, 7, 5, 6, 7, 5, 6, 8, 1, 2, 3}, 0, 2, 2);
    Ngram g56, g12;
    g56.tok = {5, 6, -1, -1};
    g12.tok = {1, 2, -1, -1};
    const size_t before = c.size();
    c.age(before - 1);  // one pass is enough to lose an n-gram
    Token t;
    int32_t count, total;
    REQUIRE(c.best(g56, t, count, total));
    CHECK(t == 7);
    CHECK(count == 2);
    CHECK(total == 2);  // 8's single count is gone
    CHECK(c.find(g12) == nullptr);
    CHECK(c.size() < before);
    c.age(0);
    CHECK(c.size() == 0);
}

TEST_CASE(
    "ngram-cache's dynamic file: a missing file starts empty at the default bound, one that exists "
    "is loaded",
    "[speculative][drafter]") {
    const std::string path = new_temp_file();
    std::remove(path.c_str());
    NgramCacheStore missing;
    missing.load_dynamic(path);
    CHECK(missing.dynamic.size() == 0);
    CHECK(missing.dynamic_limit == NgramCacheStore::kDynamicNgrams);
    CHECK(missing.dynamic_path == path);
    NgramCache c;
    c.update(std::vector<Token>{5, 6, 7, 5, 6, 8}, 0, 1, 4);
    c.save(path);
    NgramCacheStore present;
    present.load_dynamic(path);
    CHECK(present.dynamic.size() == c.size());
    CHECK(present.dynamic_limit == NgramCacheStore::kDynamicNgrams);
    std::remove(path.c_str());
}

TEST_CASE("n-gram cache files round-trip and hostile files are rejected with the reason",
          "[speculative][drafter]") {
    const std::string path = new_temp_file();
    NgramCache c;
    const std::vector<Token> seq = {5, 6, 7, 5, 6, 8, 5, 6, 7};
    c.update(seq, 0, 1, 4);
    c.save(path);
    NgramCache back;
    back.load(path);
    REQUIRE(back.size() == c.size());
    Token t;
    int32_t count, total;
    Ngram g;
    g.tok = {5, 6, -1, -1};
    REQUIRE(back.best(g, t, count, total));
    REQUIRE(t == 7);
    REQUIRE(count == 2);
    REQUIRE(total == 3);

    // Truncated inside the first n-gram.
    {
        std::ifstream in(path, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), 10);
    }
    NgramCache bad;
    REQUIRE_THROWS_WITH(bad.load(path), Catch::Contains("truncated"));
    // An entry count larger than the file.
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        const int32_t rec[5] = {1, 2, -1, -1, 1 << 30};
        out.write(reinterpret_cast<const char*>(rec), sizeof rec);
    }
    REQUIRE_THROWS_WITH(bad.load(path), Catch::Contains("bad entry count"));
    std::remove(path.c_str());
    REQUIRE_THROWS_WITH(bad.load("/nonexistent/ngram.bin"), Catch::Contains("cannot open"));
}

TEST_CASE("spec-type lists: llama-server's names, priority order, clear errors", "[speculative]") {
    const auto v = parse_drafter_list("ngram-mod, draft-simple,ngram-cache");
    REQUIRE(v == std::vector<DrafterType>{DrafterType::NgramMod, DrafterType::DraftModel, DrafterType::NgramCache});
    REQUIRE(drafter_list_string(v) == "ngram-mod,draft-simple,ngram-cache");
    REQUIRE(parse_drafter_list("ngram-map-k4v") == std::vector<DrafterType>{DrafterType::NgramMapK4v});
    REQUIRE_THROWS_WITH(parse_drafter_list("ngram-mod,eagle"), Catch::Contains("unknown speculative type 'eagle'"));
    REQUIRE_THROWS_WITH(parse_drafter_list(""), Catch::Contains("unknown speculative type ''"));
    REQUIRE_THROWS_WITH(parse_drafter_list("ngram-mod,ngram-mod"), Catch::Contains("listed twice"));
}

TEST_CASE("min-hits: a key drafts only once it has occurred that often", "[speculative][drafter]") {
    // "a b c d" once before the final "a b c": one earlier occurrence of the key.
    const std::vector<Token> once = {10, 11, 12, 13, 20, 21, 10, 11, 12};
    // Twice before it, both followed by 13.
    const std::vector<Token> twice = {10, 11, 12, 13, 20, 10, 11, 12, 13, 21, 10, 11, 12};
    std::vector<std::unique_ptr<Drafter>> two;
    two.push_back(make_ngram_simple(3, 2));
    two.push_back(make_ngram_map_k(3, 2));
    two.push_back(make_ngram_map_k4v(3, 2));
    for (auto& d : two) {
        INFO(drafter_name(d->type()));
        d->begin();
        CHECK(d->draft(once, 4).empty());
        d->begin();
        const std::vector<Token> got = d->draft(twice, 1);
        CHECK(got == std::vector<Token>{13});
    }
    // With min-hits 1 (the default) one occurrence is enough.
    for (auto* make : {+[] { return make_ngram_simple(3, 1); }, +[] { return make_ngram_map_k(3, 1); },
                       +[] { return make_ngram_map_k4v(3, 1); }}) {
        auto d = make();
        d->begin();
        CHECK(d->draft(once, 1) == std::vector<Token>{13});
    }
    // ngram-simple and ngram-map-k propose the latest occurrence's continuation once the key has enough hits.
    const std::vector<Token> differ = {10, 11, 12, 13, 20, 10, 11, 12, 14, 21, 10, 11, 12};
    for (auto* make : {+[] { return make_ngram_simple(3, 2); }, +[] { return make_ngram_map_k(3, 2); }}) {
        auto d = make();
        d->begin();
        CHECK(d->draft(differ, 1) == std::vector<Token>{14});
    }
    // ngram-map-k4v counts the next token: 13 and 14 once each is neither dominant nor seen twice.
    auto k4v = make_ngram_map_k4v(3, 2);
    k4v->begin();
    CHECK(k4v->draft(differ, 1).empty());
}

TEST_CASE("the drafters' flat n-gram table agrees with a reference map through growth and clears",
          "[speculative][drafter]") {
    NgramTable<int32_t> table;
    std::unordered_map<uint64_t, int32_t> ref;
    std::mt19937_64 rng(7);
    for (int request = 0; request < 3; ++request) {
        table.clear();
        ref.clear();
        // Keys from a small range repeat (values accumulate); 0 and 1 share an entry by design, so the
        // reference maps 0 to 1 too.
        for (int i = 0; i < 5000; ++i) {
            const uint64_t key = i % 7 == 0 ? rng() % 64 : rng();
            ++table[key];
            ++ref[key == 0 ? 1 : key];
        }
        REQUIRE(table.size() == ref.size());
        for (const auto& [key, count] : ref) {
            const int32_t* got = table.find(key);
            REQUIRE(got != nullptr);
            REQUIRE(*got == count);
        }
        REQUIRE(table.find(0x123456789abcdefull) == nullptr);
    }
}

TEST_CASE("ngram-map-k proposes what ngram-simple proposes, token for token, over several requests",
          "[speculative][drafter]") {
    // Histories from a small vocabulary repeat n-grams often; each request grows token by token and the
    // two drafters are asked at every length, the way a slot asks them.
    std::mt19937 rng(11);
    for (int32_t min_hits : {1, 2}) {
        auto simple = make_ngram_simple(3, min_hits);
        auto mapk = make_ngram_map_k(3, min_hits);
        for (int request = 0; request < 4; ++request) {
            simple->begin();
            mapk->begin();
            std::vector<Token> h;
            size_t n_drafts = 0;
            for (int i = 0; i < 600; ++i) {
                h.push_back((Token)(rng() % (request % 2 == 0 ? 5 : 8)));
                const auto want = simple->draft(h, 8);
                REQUIRE(mapk->draft(h, 8) == want);
                n_drafts += want.empty() ? 0 : 1;
            }
            CHECK(n_drafts > 50);
        }
    }
}
