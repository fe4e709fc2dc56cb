// top-k, top-p, min-p, typical-p and top-n-sigma against hand-computed results.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "engine/sampling/truncation.h"
#include "sampling_test_util.h"

using namespace engine;
using namespace sampling_test;
using Ids = std::vector<Token>;

TEST_CASE("top-k keeps the k best, sorted", "[sampling][top_k]") {
    auto cur = candidates({1, 5, 3, 4, 2});
    TopKSampler(2).apply(cur);
    CHECK(ids(cur) == Ids{1, 3});
    CHECK(cur.sorted);
}

TEST_CASE("top-k larger than the vocabulary keeps everything, sorted", "[sampling][top_k]") {
    auto cur = candidates({1, 5, 3, 4, 2});
    TopKSampler(100).apply(cur);
    CHECK(ids(cur) == Ids{1, 3, 2, 4, 0});
}

TEST_CASE("top-k <= 0 leaves the candidates alone", "[sampling][top_k]") {
    auto cur = candidates({1, 5, 3});
    TopKSampler(0).apply(cur);
    CHECK(ids(cur) == Ids{0, 1, 2});
    CHECK_FALSE(cur.sorted);
}

TEST_CASE("top-k with many candidates and a large k matches a full sort", "[sampling][top_k]") {
    // 5000 distinct logits in a scrambled order: k = 700 takes the bucketed path.
    std::vector<float> logits(5000);
    for (size_t i = 0; i < logits.size(); ++i)
        logits[i] = static_cast<float>((i * 7919) % 5000) * 0.01f - 20.0f;
    auto cur = candidates(logits);
    TopKSampler(700).apply(cur);
    REQUIRE(cur.data.size() == 700);
    std::vector<size_t> order(logits.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] > logits[b]; });
    for (size_t i = 0; i < 700; ++i) CHECK(cur.data[i].id == static_cast<Token>(order[i]));
}

TEST_CASE("top-k with ties keeps k of the tied candidates", "[sampling][top_k]") {
    auto cur = candidates({2, 2, 2, 1});
    TopKSampler(2).apply(cur);
    REQUIRE(cur.data.size() == 2);
    for (const auto& td : cur.data) CHECK(td.logit == 2.0f);
}

TEST_CASE("top-p keeps the smallest set reaching the mass", "[sampling][top_p]") {
    // p = 0.5, 0.25, 0.125, 0.125 (ids 0..3, given shuffled).
    auto cur = candidates(logits_of({0.125, 0.5, 0.125, 0.25}));
    TopPSampler(0.7f, 0).apply(cur);
    CHECK(ids(cur) == Ids{1, 3});
    CHECK(cur.data[0].p == Approx(0.5));
}

TEST_CASE("top-p 1.0 is a no-op and top-p 0.0 keeps only the best", "[sampling][top_p]") {
    auto all = candidates(logits_of({0.125, 0.5, 0.125, 0.25}));
    TopPSampler(1.0f, 0).apply(all);
    CHECK(ids(all) == Ids{0, 1, 2, 3});

    auto one = candidates(logits_of({0.125, 0.5, 0.125, 0.25}));
    TopPSampler(0.0f, 0).apply(one);
    CHECK(ids(one) == Ids{1});
}

TEST_CASE("top-p honours min_keep", "[sampling][top_p]") {
    auto cur = candidates(logits_of({0.125, 0.5, 0.125, 0.25}));
    TopPSampler(0.1f, 3).apply(cur);
    CHECK(cur.data.size() == 3);
}

TEST_CASE("top-p on a large unsorted vocabulary matches the reference nucleus", "[sampling][top_p]") {
    // 3000 scrambled candidates: a steep head (a nucleus of about 46, returned sorted) and a flat one (about
    // 1900, above the sort limit: the same set, unsorted).
    for (double steepness : {0.05, 0.001}) {
        std::vector<double> ref(3000);
        std::vector<float> logits(3000);
        for (size_t i = 0; i < ref.size(); ++i) {
            const size_t rank = (i * 1237) % ref.size();
            logits[i] = static_cast<float>(-steepness * static_cast<double>(rank));
            ref[i] = logits[i];
        }
        const auto p = softmax(ref);
        std::vector<size_t> order(p.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
        size_t expect = 0;
        double mass = 0.0;
        while (mass < 0.9) mass += p[order[expect++]];

        auto cur = candidates(logits);
        TopPSampler(0.9f, 0).apply(cur);
        INFO("steepness " << steepness << ", nucleus " << expect);
        // float accumulation may land one candidate either way right at the boundary
        REQUIRE(std::abs(static_cast<long>(cur.data.size()) - static_cast<long>(expect)) <= 1);
        CHECK(cur.sorted == (cur.data.size() <= 1024));
        if (cur.sorted) {
            for (size_t i = 0; i < std::min(cur.data.size(), expect); ++i)
                CHECK(cur.data[i].id == static_cast<Token>(order[i]));
        } else {
            std::vector<Token> got = ids(cur), want;
            for (size_t i = 0; i < expect; ++i) want.push_back(static_cast<Token>(order[i]));
            std::sort(got.begin(), got.end());
            std::sort(want.begin(), want.end());
            const auto& big = got.size() >= want.size() ? got : want;
            const auto& small = got.size() >= want.size() ? want : got;
            CHECK(std::includes(big.begin(), big.end(), small.begin(), small.end()));
        }
    }
}

TEST_CASE("min-p keeps candidates at least p times the best, in order", "[sampling][min_p]") {
    // 0.1 * 0.5 = 0.05: 0.04 goes.
    auto cur = candidates(logits_of({0.06, 0.5, 0.04, 0.3, 0.1}));
    MinPSampler(0.1f, 0).apply(cur);
    CHECK(ids(cur) == Ids{0, 1, 3, 4});
}

TEST_CASE("min-p edge cases", "[sampling][min_p]") {
    SECTION("0 disables") {
        auto cur = candidates(logits_of({0.06, 0.5, 0.04, 0.3, 0.1}));
        MinPSampler(0.0f, 0).apply(cur);
        CHECK(cur.data.size() == 5);
    }
    SECTION("1 keeps only the best, or all tied best") {
        auto cur = candidates({1, 3, 2});
        MinPSampler(1.0f, 0).apply(cur);
        CHECK(ids(cur) == Ids{1});
        auto tied = candidates({3, 1, 3});
        MinPSampler(1.0f, 0).apply(tied);
        CHECK(ids(tied) == Ids{0, 2});
    }
    SECTION("min_keep wins over the threshold, keeping the best ones") {
        auto cur = candidates(logits_of({0.06, 0.5, 0.04, 0.3, 0.1}));
        MinPSampler(0.9f, 3).apply(cur);
        CHECK(ids(cur) == Ids{1, 3, 4});
    }
    SECTION("sorted input stays sorted") {
        auto cur = candidates({4, 3, 0, -5});
        cur.sorted = true;
        MinPSampler(0.1f, 0).apply(cur);  // log(0.1) = -2.30: keeps 4 and 3
        CHECK(ids(cur) == Ids{0, 1});
    }
}

TEST_CASE("typical-p keeps the candidates closest to the entropy", "[sampling][typical]") {
    // p = 0.4 0.3 0.2 0.1, entropy H = 1.2799. |-ln p - H| = 0.364 0.076 0.330 1.023, so the order is
    // 0.3, 0.2, 0.4, 0.1; mass 0.3 then 0.5 > 0.45 stops after two.
    auto cur = candidates(logits_of({0.4, 0.3, 0.2, 0.1}));
    TypicalSampler(0.45f, 0).apply(cur);
    CHECK(ids(cur) == Ids{1, 2});

    auto off = candidates(logits_of({0.4, 0.3, 0.2, 0.1}));
    TypicalSampler(1.0f, 0).apply(off);
    CHECK(off.data.size() == 4);
}

TEST_CASE("top-n-sigma keeps logits within n standard deviations of the max", "[sampling][top_n_sigma]") {
    // logits 10 9 5 0 0: mean 4.8, sigma = sqrt(18.16) = 4.2615.
    auto one = candidates({0, 9, 10, 5, 0});
    TopNSigmaSampler(1.0f).apply(one);  // floor 5.74
    // The survivors keep their order, as llama-server's (its draw walks them so: a seed picks its token).
    CHECK(ids(one) == Ids{1, 2});
    CHECK(one.data[1].p == Approx(1.0 / (1.0 + std::exp(-1.0))));

    auto two = candidates({0, 9, 10, 5, 0});
    TopNSigmaSampler(2.0f).apply(two);  // floor 1.48
    CHECK(ids(two) == Ids{1, 2, 3});

    auto off = candidates({0, 9, 10, 5, 0});
    TopNSigmaSampler(-1.0f).apply(off);
    CHECK(off.data.size() == 5);
}

TEST_CASE("top-n-sigma ignores banned candidates in its statistics", "[sampling][top_n_sigma]") {
    auto cur = candidates({kNegInf, 0, 9, 10, kNegInf, 5, 0});
    TopNSigmaSampler(1.0f).apply(cur);
    CHECK(ids(cur) == Ids{2, 3});
}

TEST_CASE("truncation with every candidate banned but one keeps that one", "[sampling][truncation]") {
    const std::vector<float> logits = {kNegInf, 2.0f, kNegInf, kNegInf};
    auto a = candidates(logits);
    TopPSampler(0.5f, 0).apply(a);
    CHECK(ids(a) == Ids{1});
    auto b = candidates(logits);
    MinPSampler(0.5f, 0).apply(b);
    CHECK(ids(b) == Ids{1});
    auto c = candidates(logits);
    TopNSigmaSampler(1.0f).apply(c);
    CHECK(ids(c) == Ids{1});
    auto d = candidates(logits);
    TopKSampler(1).apply(d);
    CHECK(ids(d) == Ids{1});
    auto e = candidates(logits);
    TypicalSampler(0.5f, 0).apply(e);
    CHECK(ids(e) == Ids{1});
}
