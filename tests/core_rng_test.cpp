// SPDX-License-Identifier: GPL-2.0-or-later
// core_rng_test.cpp: Rng against a reference xoshiro256**/splitmix64, and its draws' ranges and shapes.
#include "util/rng.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace sched;

namespace {

// Reference algorithms, written out from Vigna's public-domain C (splitmix64.c, xoshiro256starstar.c).
std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct RefXoshiro {
    std::array<std::uint64_t, 4> s;
    explicit RefXoshiro(std::uint64_t seed) {
        for (auto& w : s) w = splitmix64(seed);
    }
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t next() {
        const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
        const std::uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
    }
};

}  // namespace

TEST(Rng, SplitMix64KnownValue) {
    std::uint64_t x = 0;
    EXPECT_EQ(splitmix64(x), 0xe220a8397b1dcdafull);  // the published first output for seed 0
}

TEST(Rng, FirstOutputsArePinned) {
    // Computed once from an independent (Python) implementation of the reference algorithm.
    Rng a(0);
    EXPECT_EQ(a.next(), 0x99ec5f36cb75f2b4ull);
    EXPECT_EQ(a.next(), 0xbf6e1f784956452aull);
    EXPECT_EQ(a.next(), 0x1a5f849d4933e6e0ull);
    EXPECT_EQ(a.next(), 0x6aa594f1262d2d2cull);
    Rng b(42);
    EXPECT_EQ(b.next(), 0x15780b2e0c2ec716ull);
    EXPECT_EQ(b.next(), 0x6104d9866d113a7eull);
    EXPECT_EQ(b.next(), 0xae17533239e499a1ull);
    EXPECT_EQ(b.next(), 0xecb8ad4703b360a1ull);
}

TEST(Rng, MatchesReferenceImplementation) {
    for (std::uint64_t seed : {0ull, 1ull, 42ull, 0xdeadbeefull, ~0ull}) {
        Rng r(seed);
        RefXoshiro ref(seed);
        for (int i = 0; i < 1000; ++i) ASSERT_EQ(r.next(), ref.next()) << "seed " << seed << " draw " << i;
    }
}

TEST(Rng, SameSeedSameSequence) {
    Rng a(7), b(7), c(8);
    bool differs = false;
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(a.uniform(-5, 5), b.uniform(-5, 5));
        EXPECT_EQ(a.exponential(1000), b.exponential(1000));
        const auto x = a.next();
        EXPECT_EQ(x, b.next());
        differs |= x != c.next();
    }
    EXPECT_TRUE(differs);
}

TEST(Rng, Next32IsTheHighHalf) {
    Rng a(3), b(3);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next32(), std::uint32_t(b.next() >> 32));
}

TEST(Rng, BelowIsInRangeAndRoughlyUniform) {
    Rng r(1);
    constexpr int kBins = 10, kDraws = 100000;
    std::array<int, kBins> hist{};
    for (int i = 0; i < kDraws; ++i) {
        const auto v = r.below(kBins);
        ASSERT_LT(v, std::uint64_t(kBins));
        ++hist[v];
    }
    double chi2 = 0;
    for (int h : hist) chi2 += (h - kDraws / kBins) * double(h - kDraws / kBins) / (kDraws / kBins);
    EXPECT_LT(chi2, 40.0);  // 9 degrees of freedom: p(chi2 > 40) is about 1e-5
    EXPECT_EQ(r.below(1), 0u);
    for (int i = 0; i < 1000; ++i) ASSERT_LT(r.below(3), 3u);
    for (int i = 0; i < 1000; ++i) ASSERT_LT(r.below((1ull << 63) + 1), (1ull << 63) + 1);
}

TEST(Rng, UniformReachesBothEnds) {
    Rng r(2);
    bool lo = false, hi = false;
    for (int i = 0; i < 10000; ++i) {
        const auto v = r.uniform(-3, 3);
        ASSERT_GE(v, -3);
        ASSERT_LE(v, 3);
        lo |= v == -3;
        hi |= v == 3;
    }
    EXPECT_TRUE(lo);
    EXPECT_TRUE(hi);
    EXPECT_EQ(r.uniform(5, 5), 5);
    r.uniform(INT64_MIN, INT64_MAX);  // full range: no overflow, no trap
    for (int i = 0; i < 100; ++i) ASSERT_GE(r.uniform(INT64_MAX - 1, INT64_MAX), INT64_MAX - 1);
}

TEST(Rng, UnitAndChance) {
    Rng r(4);
    int hits = 0;
    for (int i = 0; i < 100000; ++i) {
        const double u = r.unit();
        ASSERT_GE(u, 0.0);
        ASSERT_LT(u, 1.0);
        hits += r.chance(0.25);
    }
    EXPECT_NEAR(hits / 100000.0, 0.25, 0.01);
    EXPECT_FALSE(r.chance(0.0));
    EXPECT_TRUE(r.chance(1.0));
}

TEST(Rng, ExponentialMean) {
    Rng r(5);
    constexpr int kDraws = 200000;
    constexpr std::int64_t kMean = 10000;
    double sum = 0;
    for (int i = 0; i < kDraws; ++i) {
        const auto v = r.exponential(kMean);
        ASSERT_GE(v, 0);
        sum += double(v);
    }
    EXPECT_NEAR(sum / kDraws, double(kMean), 0.02 * kMean);
    EXPECT_EQ(r.exponential(0), 0);
}
