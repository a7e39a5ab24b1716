// SPDX-License-Identifier: GPL-2.0-or-later
// core_cpumask_test.cpp: cpulist parsing and the kernel's live wrap iteration.
#include "util/cpumask.h"

#include <gtest/gtest.h>

#include <bitset>
#include <random>

using namespace sched;

TEST(CpuMask, ParseAndPrintCpulist) {
    std::string err;
    auto m = CpuMask::parseList("0-3,8, 10-11", 16, &err);
    ASSERT_TRUE(m) << err;
    EXPECT_EQ(m->weight(), 7);
    EXPECT_EQ(m->toList(), "0-3,8,10-11");
    EXPECT_FALSE(CpuMask::parseList("0-3,x", 16, &err));
    EXPECT_FALSE(CpuMask::parseList("5-2", 16, &err));
    EXPECT_FALSE(CpuMask::parseList("0-16", 16, &err));
    EXPECT_NE(err.find("outside the machine"), std::string::npos);
}

TEST(CpuMask, WrapIterationFromStart) {
    CpuMask m = CpuMask::range(0, 7);
    std::vector<int> v;
    for_each_cpu_wrap(m, 3, 8, [&](int c) {
        v.push_back(c);
        return false;
    });
    EXPECT_EQ(v, (std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2}));
    v.clear();
    for_each_cpu_wrap(m, 8, 8, [&](int c) {
        v.push_back(c);
        return false;
    });  // target+1 == nr_cpu_ids
    EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(CpuMask, WrapIterationReadsTheMaskLive) {
    // select_idle_core removes a core's siblings while the scan is running.
    CpuMask m = CpuMask::range(0, 7);
    std::vector<int> v;
    for_each_cpu_wrap(m, 1, 8, [&](int c) {
        v.push_back(c);
        m.clear(c);
        m.clear((c + 4) % 8);
        return false;
    });
    EXPECT_EQ(v, (std::vector<int>{1, 2, 3, 4}));
}

// The masks scan only the words they use (CpuMask::words()): every operation, on masks of
// every reach (8 CPUs to 1024), against std::bitset<kMaxCpus>.
TEST(CpuMask, SizedMasksAgreeWithABitset) {
    using B = std::bitset<kMaxCpus>;
    std::mt19937_64 rng(7);
    auto toBits = [](const CpuMask& m) {
        B b;
        m.forEach([&](int c) { b.set(std::size_t(c)); });
        return b;
    };
    auto randomMask = [&](int reach, CpuMask& m, B& b) {
        m = CpuMask{};
        b.reset();
        const int n = int(rng() % 12);
        for (int i = 0; i < n; ++i) {
            const int c = int(rng() % std::uint64_t(reach));
            if (rng() % 4 == 0) m.clear(c), b.reset(std::size_t(c));
            else m.set(c), b.set(std::size_t(c));
        }
    };
    const int reaches[] = {8, 64, 65, 192, 384, 512, 1024};
    for (int round = 0; round < 4000; ++round) {
        CpuMask a, b;
        B x, y;
        randomMask(reaches[rng() % 7], a, x);
        randomMask(reaches[rng() % 7], b, y);
        ASSERT_EQ(toBits(a), x);
        ASSERT_EQ(a.weight(), int(x.count()));
        ASSERT_EQ(a.empty(), x.none());
        ASSERT_EQ(a.intersects(b), (x & y).any());
        ASSERT_EQ(a.subsetOf(b), (x & ~y).none());
        ASSERT_EQ(a == b, x == y);
        ASSERT_EQ(toBits(a | b), x | y);
        ASSERT_EQ(toBits(a & b), x & y);
        CpuMask c = a;
        c.andNot(b);
        ASSERT_EQ(toBits(c), x & ~y);
        ASSERT_EQ(c == a, (x & ~y) == x);
        const int from = int(rng() % (kMaxCpus + 2));
        int want = kMaxCpus;
        for (int i = from; i < kMaxCpus; ++i)
            if (x.test(std::size_t(i))) {
                want = i;
                break;
            }
        ASSERT_EQ(a.next(from), want) << "from " << from;
        int last = -1;
        for (int i = kMaxCpus - 1; i >= 0; --i)
            if (x.test(std::size_t(i))) {
                last = i;
                break;
            }
        ASSERT_EQ(a.last(), last);
        for (int i = a.words(); i < CpuMask::kWords; ++i)
            for (int bit = 0; bit < 64; ++bit) ASSERT_FALSE(x.test(std::size_t(i * 64 + bit)));
    }
    // A mask of an 8-CPU machine scans one word; the cleared mask keeps its reach but is empty.
    CpuMask m = CpuMask::range(0, 7);
    EXPECT_EQ(m.words(), 1);
    CpuMask big = CpuMask::single(1000);
    EXPECT_EQ(big.words(), 16);
    big.clear(1000);
    EXPECT_TRUE(big.empty());
    EXPECT_EQ(big, CpuMask{});
    EXPECT_EQ(CpuMask::intern(big), CpuMask::intern(CpuMask{}));
}
