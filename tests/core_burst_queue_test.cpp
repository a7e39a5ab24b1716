// SPDX-License-Identifier: GPL-2.0-or-later
// core_burst_queue_test.cpp: the engine's queue of CPU burst ends against a sorted set, through
// the cases its ring can get wrong: equal times, laps of the ring, entries beyond its span,
// moves between the ring and the winner tree, and times on bucket and lap boundaries.
#include "sim/burst_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

using namespace sched;

namespace {

struct Ref {
    std::set<std::tuple<std::int64_t, std::uint64_t, int>> s;
    std::vector<std::pair<std::int64_t, std::uint64_t>> by;
    explicit Ref(int n) : by(std::size_t(n), {BurstQueue::kNever, 0}) {}
    void set(int c, std::int64_t t, std::uint64_t lo) {
        clear(c);
        by[std::size_t(c)] = {t, lo};
        s.insert({t, lo, c});
    }
    void clear(int c) {
        auto& [t, lo] = by[std::size_t(c)];
        if (t != BurstQueue::kNever) s.erase({t, lo, c});
        t = BurstQueue::kNever;
    }
};

// Random sets, clears and pops for `cpus` CPUs; times drawn so that `far` of them lie beyond
// the ring's span and `tie` share a time with another entry.
void fuzz(int cpus, std::uint64_t seed, double far, double tie, int ops) {
    BurstQueue q;
    q.reset(cpus);
    Ref ref(cpus);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::int64_t now = 1000;
    const std::int64_t span = std::int64_t(BurstQueue::kBuckets) << BurstQueue::kShift;
    for (int i = 0; i < ops; ++i) {
        const double r = u(rng);
        const int c = int(rng() % std::uint64_t(cpus));
        if (r < 0.55) {
            std::int64_t t;
            if (u(rng) < tie && !ref.s.empty()) t = std::get<0>(*ref.s.begin());
            else if (u(rng) < far) t = now + span - 64 + std::int64_t(rng() % std::uint64_t(4 * span));
            else t = now + std::int64_t(rng() % 5000);
            const std::uint64_t lo = (rng() % 64) << 20 | std::uint64_t(c);
            q.set(c, t, lo, now);
            ref.set(c, t, lo);
        } else if (r < 0.65) {
            q.clear(c);
            ref.clear(c);
        } else if (!ref.s.empty()) {
            // Pop the first: time moves to it, as the engine's does.
            const auto [t, lo, cpu] = *ref.s.begin();
            const BurstQueue::Top top = q.top(now);
            ASSERT_EQ(top.cpu, cpu) << "op " << i << " at " << now;
            ASSERT_EQ(top.t, t);
            ASSERT_EQ(top.lo, lo);
            now = t;
            q.clear(cpu);
            ref.clear(cpu);
        }
        ASSERT_EQ(q.size(), ref.s.size());
        for (int k = 0; k < cpus; k += 7) ASSERT_EQ(q.t(k), ref.by[std::size_t(k)].first);
    }
    // Drain: every entry in order.
    while (!ref.s.empty()) {
        const auto [t, lo, cpu] = *ref.s.begin();
        const BurstQueue::Top top = q.top(now);
        ASSERT_EQ(top.cpu, cpu);
        ASSERT_EQ(top.t, t);
        now = t;
        q.clear(cpu);
        ref.clear(cpu);
    }
    EXPECT_EQ(q.top(now).cpu, -1);
    EXPECT_EQ(q.top(now).t, BurstQueue::kNever);
    EXPECT_EQ(q.size(), 0u);
    EXPECT_EQ(q.farSize(), 0u);
}

}  // namespace

TEST(BurstQueue, OrdersLikeASortedSetOnSmallAndLargeMachines) {
    fuzz(8, 1, 0.05, 0.1, 200000);
    fuzz(384, 2, 0.05, 0.1, 200000);
    fuzz(1000, 3, 0.3, 0.2, 100000);  // not a power of two; many far entries
}

TEST(BurstQueue, MostlyFarAndMostlyTied) {
    fuzz(16, 4, 0.9, 0.0, 100000);
    fuzz(64, 5, 0.0, 0.8, 100000);
}

TEST(BurstQueue, LapsAndBucketBoundaries) {
    BurstQueue q;
    q.reset(4);
    const std::int64_t span = std::int64_t(BurstQueue::kBuckets) << BurstQueue::kShift;
    // now in the last bucket of a lap: an entry in the next lap's first bucket is in the ring
    // at index 0 (behind the cursor) and still comes after one at the cursor.
    std::int64_t now = span - 1;
    q.set(0, span, 5, now);              // next lap, bucket 0
    q.set(1, span - 1, 9, now);          // this lap, last bucket
    q.set(2, now + span - 16, 1, now);   // the ring's last bucket ahead
    q.set(3, now + span + 100, 0, now);  // beyond the span: the winner tree
    EXPECT_EQ(q.farSize(), 1u);
    EXPECT_EQ(q.top(now).cpu, 1);
    q.clear(1);
    EXPECT_EQ(q.top(now).cpu, 0);
    now = span;
    q.clear(0);
    EXPECT_EQ(q.top(now).cpu, 2);
    // Moving the far entry into the ring, ahead of CPU 2's.
    q.set(3, now + 10, 0, now);
    EXPECT_EQ(q.farSize(), 0u);
    EXPECT_EQ(q.top(now).cpu, 3);
    // Equal times: the lower lo first, in the ring and across ring and tree.
    q.set(2, now + 10, 0, now);
    q.set(3, now + 10, 1, now);
    EXPECT_EQ(q.top(now).cpu, 2);
    q.clear(3);
    q.set(1, now + 10 + span, 0, now);       // far
    q.set(2, now + 10 + span, 1, now + 16);  // the same time, in the ring (set a bucket later)
    EXPECT_EQ(q.farSize(), 1u);
    now += 10 + span;
    EXPECT_EQ(q.top(now).cpu, 1);
    q.clear(1);
    EXPECT_EQ(q.top(now).cpu, 2);
}

TEST(BurstQueue, RejectsAnEntryBeforeTheCurrentTime) {
    BurstQueue q;
    q.reset(2);
    EXPECT_THROW(q.set(0, 99, 0, 100), std::logic_error);
    EXPECT_THROW(q.set(0, BurstQueue::kNever, 0, 100), std::logic_error);
    EXPECT_EQ(q.size(), 0u);
}
