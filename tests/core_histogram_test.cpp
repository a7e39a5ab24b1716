// SPDX-License-Identifier: GPL-2.0-or-later
// core_histogram_test.cpp: LatencyHistogram bucket layout, percentile accuracy, merge and bounds.
#include "util/histogram.h"
#include "util/rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace sched;

TEST(LatencyHistogram, EmptyIsZero) {
    LatencyHistogram h;
    EXPECT_EQ(h.count(), 0u);
    EXPECT_EQ(h.min(), 0);
    EXPECT_EQ(h.max(), 0);
    EXPECT_EQ(h.mean(), 0.0);
    EXPECT_EQ(h.percentile(50), 0);
    EXPECT_TRUE(h.buckets().empty());
}

TEST(LatencyHistogram, ExactBelow256) {
    LatencyHistogram h;
    for (std::int64_t v = 0; v < 256; ++v) {
        EXPECT_EQ(LatencyHistogram::bucketIndex(v), std::size_t(v));
        EXPECT_EQ(LatencyHistogram::bucketLow(std::size_t(v)), v);
        h.record(v, std::uint64_t(v) + 1);
    }
    const auto b = h.buckets();
    ASSERT_EQ(b.size(), 256u);
    for (std::size_t i = 0; i < b.size(); ++i) {
        EXPECT_EQ(b[i].lo, std::int64_t(i));
        EXPECT_EQ(b[i].hi, std::int64_t(i) + 1);
        EXPECT_EQ(b[i].count, i + 1);
    }
    LatencyHistogram g;  // 0..99 once each: every percentile is exact
    for (int v = 0; v < 100; ++v) g.record(v);
    EXPECT_EQ(g.percentile(50), 49);
    EXPECT_EQ(g.percentile(99), 98);
    EXPECT_EQ(g.percentile(99.5), 99);
    EXPECT_DOUBLE_EQ(g.mean(), 49.5);
}

TEST(LatencyHistogram, BucketLayout) {
    // Above 256: 128 buckets per power of two, width 2^(e-7) in [2^e, 2^(e+1)).
    EXPECT_EQ(LatencyHistogram::bucketIndex(256), 256u);
    EXPECT_EQ(LatencyHistogram::bucketIndex(257), 256u);
    EXPECT_EQ(LatencyHistogram::bucketIndex(258), 257u);
    EXPECT_EQ(LatencyHistogram::bucketIndex(512), 384u);
    EXPECT_EQ(LatencyHistogram::bucketIndex(515), 384u);
    EXPECT_EQ(LatencyHistogram::bucketIndex(516), 385u);
    EXPECT_EQ(LatencyHistogram::bucketIndex(-5), 0u);
    EXPECT_EQ(LatencyHistogram::bucketIndex(std::numeric_limits<std::int64_t>::max()), LatencyHistogram::kBucketCount - 1);
    for (std::size_t i = 1; i < LatencyHistogram::kBucketCount; ++i) {
        const auto lo = LatencyHistogram::bucketLow(i);
        ASSERT_GT(lo, LatencyHistogram::bucketLow(i - 1));
        ASSERT_EQ(LatencyHistogram::bucketIndex(lo), i);
        ASSERT_EQ(LatencyHistogram::bucketIndex(lo - 1), i - 1);
    }
    Rng r(11);
    for (int i = 0; i < 10000; ++i) {
        const auto v = std::int64_t(r.next() >> (1 + r.below(63)));
        const auto idx = LatencyHistogram::bucketIndex(v);
        const auto lo = LatencyHistogram::bucketLow(idx);
        ASSERT_LE(lo, v);
        ASSERT_LE(double(v - lo), double(v) / 128.0);  // width <= 1/128 of the value
    }
}

TEST(LatencyHistogram, PercentilesWithinOnePercent) {
    Rng r(12);
    std::vector<std::int64_t> sample;
    LatencyHistogram h;
    for (int i = 0; i < 50000; ++i) {
        // Log-uniform-ish over 1 ns .. ~1 s, plus exponential latencies.
        const auto v = i % 2 ? std::int64_t(r.next() >> (34 + r.below(30))) : r.exponential(50000);
        sample.push_back(v);
        h.record(v);
    }
    std::sort(sample.begin(), sample.end());
    const auto n = sample.size();
    for (double p : {0.0, 0.1, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
        const auto rank = std::clamp<std::size_t>(std::size_t(std::ceil(p / 100.0 * double(n))), 1, n);
        const auto exact = sample[rank - 1];
        const auto est = h.percentile(p);
        EXPECT_LE(std::abs(double(est - exact)), 0.01 * double(exact)) << "p" << p << " exact " << exact << " est " << est;
    }
    EXPECT_EQ(h.percentile(0), sample.front());
    EXPECT_EQ(h.percentile(100), sample.back());
    EXPECT_EQ(h.min(), sample.front());
    EXPECT_EQ(h.max(), sample.back());
    long double sum = 0;
    for (auto v : sample) sum += v;
    EXPECT_DOUBLE_EQ(h.mean(), double(sum / n));
}

TEST(LatencyHistogram, EndsAreExact) {
    // Values inside wide buckets: p0/p100 are still the exact min/max, the middle is a midpoint.
    LatencyHistogram h;
    h.record(1003);
    h.record(100007);
    h.record(5000, 3);
    EXPECT_EQ(h.percentile(0), 1003);
    EXPECT_EQ(h.percentile(100), 100007);
    EXPECT_EQ(h.percentile(50), 5008);  // bucket [4992, 5024)
    EXPECT_EQ(h.count(), 5u);
    h.record(-7);  // clamps to 0
    EXPECT_EQ(h.min(), 0);
    EXPECT_EQ(h.percentile(0), 0);
}

TEST(LatencyHistogram, MergeEqualsRecordingBoth) {
    Rng r(13);
    LatencyHistogram a, b, both;
    for (int i = 0; i < 5000; ++i) {
        const auto v = r.exponential(20000);
        (i % 3 ? a : b).record(v);
        both.record(v);
    }
    b.record(std::int64_t(1) << 40, 2);  // b reaches further than a
    both.record(std::int64_t(1) << 40, 2);
    LatencyHistogram empty;
    a.merge(empty);
    a.merge(b);
    EXPECT_EQ(a.count(), both.count());
    EXPECT_EQ(a.min(), both.min());
    EXPECT_EQ(a.max(), both.max());
    EXPECT_EQ(a.mean(), both.mean());
    const auto ab = a.buckets(), bb = both.buckets();
    ASSERT_EQ(ab.size(), bb.size());
    for (std::size_t i = 0; i < ab.size(); ++i) {
        EXPECT_EQ(ab[i].lo, bb[i].lo);
        EXPECT_EQ(ab[i].count, bb[i].count);
    }
    for (double p : {0.0, 50.0, 99.0, 100.0}) EXPECT_EQ(a.percentile(p), both.percentile(p));
    empty.merge(both);
    EXPECT_EQ(empty.min(), both.min());
    EXPECT_EQ(empty.percentile(90), both.percentile(90));
    a.clear();
    EXPECT_EQ(a.count(), 0u);
    EXPECT_TRUE(a.buckets().empty());
}

TEST(LatencyHistogram, BucketsSumToCount) {
    Rng r(14);
    LatencyHistogram h;
    for (int i = 0; i < 20000; ++i) h.record(r.exponential(1000000), 1 + r.below(3));
    std::uint64_t sum = 0;
    std::int64_t prevHi = -1;
    for (const auto& b : h.buckets()) {
        EXPECT_GT(b.count, 0u);
        EXPECT_LT(b.lo, b.hi);
        EXPECT_GE(b.lo, prevHi);
        prevHi = b.hi;
        sum += b.count;
    }
    EXPECT_EQ(sum, h.count());
}

TEST(LatencyHistogram, MemoryStaysBounded) {
    LatencyHistogram h;
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    h.record(kMax / 2);
    EXPECT_LE(h.storedBuckets(), LatencyHistogram::kBucketCount);
    EXPECT_EQ(LatencyHistogram::kBucketCount, 7296u);  // (64 - 7) * 128
    h.record(kMax);
    EXPECT_EQ(h.storedBuckets(), LatencyHistogram::kBucketCount);
    EXPECT_EQ(h.max(), kMax);
    EXPECT_EQ(h.percentile(100), kMax);
    EXPECT_EQ(h.percentile(50), kMax / 2);
    const auto b = h.buckets();
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b.back().hi, kMax);  // the top bucket saturates
    EXPECT_NEAR(h.mean(), 0.75 * double(kMax), 1e-6 * double(kMax));
}
