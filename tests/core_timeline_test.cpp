// SPDX-License-Identifier: GPL-2.0-or-later
// core_timeline_test.cpp: RqTimeline stores rows verbatim until full, then compacts keeping spikes.
#include "util/rng.h"
#include "sim/timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

using namespace sched;

TEST(RqTimeline, RejectsBadShapes) {
    EXPECT_THROW(RqTimeline(0, 1000, 8), std::invalid_argument);
    EXPECT_THROW(RqTimeline(4, 0, 8), std::invalid_argument);
    EXPECT_THROW(RqTimeline(4, 1000, 7), std::invalid_argument);
    EXPECT_THROW(RqTimeline(4, 1000, 0), std::invalid_argument);
}

TEST(RqTimeline, StoresRowsVerbatimUntilFull) {
    RqTimeline tl(3, 1000, 8);
    EXPECT_EQ(tl.ncpus(), 3);
    EXPECT_EQ(tl.rows(), 0u);
    for (int i = 0; i < 8; ++i) {
        const std::uint16_t v[3] = {std::uint16_t(i), std::uint16_t(10 * i), std::uint16_t(7 - i)};
        tl.push(1000 * i, v);
    }
    ASSERT_EQ(tl.rows(), 8u);
    EXPECT_EQ(tl.period(), 1000);
    for (std::size_t r = 0; r < 8; ++r) {
        EXPECT_EQ(tl.time(r), std::int64_t(1000 * r));
        EXPECT_EQ(tl.at(r, 0), r);
        EXPECT_EQ(tl.at(r, 1), 10 * r);
        EXPECT_EQ(tl.at(r, 2), 7 - r);
        const auto row = tl.row(r);
        ASSERT_EQ(row.size(), 3u);
        EXPECT_EQ(row[1], 10 * r);
    }
}

TEST(RqTimeline, CompactionKeepsMaxAndFirstTime) {
    RqTimeline tl(2, 100, 4);
    const std::uint16_t rows[5][2] = {{1, 9}, {5, 2}, {0, 0}, {3, 4}, {6, 1}};
    for (int i = 0; i < 5; ++i) tl.push(100 * i, rows[i]);
    // The 5th push compacted {0,1},{2,3} into two rows, then opened a third.
    ASSERT_EQ(tl.rows(), 3u);
    EXPECT_EQ(tl.period(), 200);
    EXPECT_EQ(tl.time(0), 0);
    EXPECT_EQ(tl.time(1), 200);
    EXPECT_EQ(tl.time(2), 400);
    EXPECT_EQ(tl.at(0, 0), 5);
    EXPECT_EQ(tl.at(0, 1), 9);
    EXPECT_EQ(tl.at(1, 0), 3);
    EXPECT_EQ(tl.at(1, 1), 4);
    EXPECT_EQ(tl.at(2, 0), 6);  // open row: one of its two pushes so far
    const std::uint16_t more[2] = {2, 8};
    tl.push(500, more);  // folds into the open row
    ASSERT_EQ(tl.rows(), 3u);
    EXPECT_EQ(tl.time(2), 400);
    EXPECT_EQ(tl.at(2, 0), 6);
    EXPECT_EQ(tl.at(2, 1), 8);
}

TEST(RqTimeline, LongRunStaysBoundedAndSpikesSurvive) {
    constexpr int kCpus = 5;
    constexpr std::size_t kMaxRows = 64;
    constexpr std::int64_t kPeriod = 4000;
    RqTimeline tl(kCpus, kPeriod, kMaxRows);
    Rng r(21);
    std::vector<std::uint16_t> maxSeen(kCpus, 0);
    for (std::size_t i = 0; i < 10 * kMaxRows + 3; ++i) {  // +3: end on a partial row
        std::uint16_t v[kCpus];
        for (int c = 0; c < kCpus; ++c) {
            v[c] = std::uint16_t(r.below(4) + (r.chance(0.01) ? 100 + r.below(900) : 0));  // rare spikes
            maxSeen[std::size_t(c)] = std::max(maxSeen[std::size_t(c)], v[c]);
        }
        tl.push(kPeriod * std::int64_t(i), v);
        ASSERT_LE(tl.rows(), kMaxRows);
    }
    EXPECT_GE(tl.rows(), kMaxRows / 2);
    const std::int64_t ratio = tl.period() / kPeriod;
    EXPECT_EQ(tl.period() % kPeriod, 0);
    EXPECT_GT(ratio, 1);
    EXPECT_EQ(ratio & (ratio - 1), 0);  // a power of two
    for (std::size_t row = 0; row < tl.rows(); ++row) {
        EXPECT_EQ(tl.time(row), std::int64_t(row) * tl.period());  // evenly spaced on the new grid
        if (row) {
            EXPECT_GT(tl.time(row), tl.time(row - 1));
        }
    }
    for (int c = 0; c < kCpus; ++c) {
        std::uint16_t m = 0;
        for (std::size_t row = 0; row < tl.rows(); ++row) m = std::max(m, tl.at(row, c));
        EXPECT_EQ(m, maxSeen[std::size_t(c)]) << "cpu " << c;
    }
}
