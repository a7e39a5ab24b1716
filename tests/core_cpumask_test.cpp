// core_cpumask_test.cpp: cpulist parsing and the kernel's live wrap iteration.
#include "cpumask.h"

#include <gtest/gtest.h>

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
    for_each_cpu_wrap(m, 3, 8, [&](int c) { v.push_back(c); return false; });
    EXPECT_EQ(v, (std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2}));
    v.clear();
    for_each_cpu_wrap(m, 8, 8, [&](int c) { v.push_back(c); return false; });  // target+1 == nr_cpu_ids
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
