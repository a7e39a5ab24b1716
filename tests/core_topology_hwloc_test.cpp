// SPDX-License-Identifier: GPL-2.0-or-later
// Tests of topologyFromHwloc() on the lstopo XML fixtures of tests/data/hwloc
// (see tests/data/hwloc/README.md for how each one was made).
#include "topology/topology_hwloc.h"
#include "util/install_paths.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <stdlib.h>

#ifndef SCHEDLAB_TEST_DATA
#error "SCHEDLAB_TEST_DATA must be defined to the tests/data directory"
#endif

namespace {

using sched::CpuInfo;
using sched::CpuMask;
using sched::Topology;
using sched::TopologyError;

std::string fixture(const std::string& file) { return std::string(SCHEDLAB_TEST_DATA) + "/hwloc/" + file; }

Topology load(const std::string& file) { return sched::topologyFromHwloc(fixture(file), file); }

/// The CPU lists of the objects of one kind, by (dense) id: groups(t, &CpuInfo::llc)[i]
/// is the cpulist of LLC i.
std::vector<std::string> groups(const Topology& t, int CpuInfo::*field) {
    std::map<int, CpuMask> byId;
    for (const auto& c : t.cpus()) byId[c.*field].set(c.cpu);
    std::vector<std::string> out;
    int expected = 0;
    for (const auto& [id, mask] : byId) {
        EXPECT_EQ(id, expected++) << "ids are not dense";
        out.push_back(mask.toList());
    }
    return out;
}

/// `n` strings f(0), f(1), ...
std::vector<std::string> gen(int n, const std::function<std::string(int)>& f) {
    std::vector<std::string> v;
    for (int i = 0; i < n; ++i) v.push_back(f(i));
    return v;
}

std::string range(int a, int b) { return a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b); }

void expectAllCapacities(const Topology& t, int cap) {
    for (const auto& c : t.cpus()) EXPECT_EQ(c.capacity, cap) << "CPU " << c.cpu;
}

/// Ids increase in order of first appearance by ascending CPU number.
void expectFirstAppearanceOrder(const Topology& t) {
    for (int CpuInfo::*field : {&CpuInfo::core, &CpuInfo::cluster, &CpuInfo::llc, &CpuInfo::die, &CpuInfo::package, &CpuInfo::node}) {
        int next = 0;
        for (const auto& c : t.cpus()) {
            EXPECT_LE(c.*field, next) << "CPU " << c.cpu;
            if (c.*field == next) ++next;
        }
    }
}

/// Loading `file` throws a TopologyError whose message starts with its path
/// and contains `what`.
void expectRejected(const std::string& path, const std::string& what) {
    SCOPED_TRACE(path);
    try {
        (void)sched::topologyFromHwloc(path, "bad");
        ADD_FAILURE() << "no TopologyError";
    } catch (const TopologyError& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << msg;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected exception: " << e.what();
    }
}

// pack:2 l3:2 core:4 pu:2 -- hwloc numbers synthetic PUs in logical order, so
// SMT siblings are adjacent (2k, 2k+1). One NUMA node for the whole machine.
TEST(TopologyHwloc, SyntheticAdjacentNumbering) {
    const Topology t = load("2s-2llc-4c-2t.xml");
    EXPECT_EQ(t.name(), "2s-2llc-4c-2t.xml");
    EXPECT_EQ(t.arch(), sched::Arch::X86);
    ASSERT_EQ(t.nrCpus(), 32);
    EXPECT_EQ(t.nrCores(), 16);
    EXPECT_EQ(t.nrLlcs(), 4);
    EXPECT_EQ(t.nrPackages(), 2);
    EXPECT_EQ(t.threadsPerCoreMax(), 2);

    EXPECT_EQ(groups(t, &CpuInfo::core), gen(16, [](int k) { return range(2 * k, 2 * k + 1); }));
    EXPECT_EQ(groups(t, &CpuInfo::cluster), groups(t, &CpuInfo::core));  // no L2 in the description
    EXPECT_EQ(groups(t, &CpuInfo::llc), gen(4, [](int l) { return range(8 * l, 8 * l + 7); }));
    EXPECT_EQ(groups(t, &CpuInfo::package), (std::vector<std::string>{"0-15", "16-31"}));
    EXPECT_EQ(groups(t, &CpuInfo::die), groups(t, &CpuInfo::package));
    EXPECT_EQ(groups(t, &CpuInfo::node), std::vector<std::string>{"0-31"});
    for (const auto& c : t.cpus()) EXPECT_EQ(c.thread, c.cpu % 2) << "CPU " << c.cpu;
    EXPECT_EQ(t.smtMask(5).toList(), "4-5");
    EXPECT_EQ(t.llcMask(9).toList(), "8-15");

    EXPECT_EQ(t.distances(), (std::vector<std::vector<int>>{{10}}));
    expectAllCapacities(t, 1024);
    expectFirstAppearanceOrder(t);
}

// The same machine with the x86 numbering: CPU N and N+16 are siblings.
TEST(TopologyHwloc, SyntheticX86Numbering) {
    const Topology t = load("2s-2llc-4c-2t-x86num.xml");
    ASSERT_EQ(t.nrCpus(), 32);
    EXPECT_EQ(groups(t, &CpuInfo::core), gen(16, [](int k) { return std::to_string(k) + "," + std::to_string(k + 16); }));
    for (const auto& c : t.cpus()) EXPECT_EQ(c.thread, c.cpu / 16) << "CPU " << c.cpu;
    EXPECT_EQ(groups(t, &CpuInfo::llc), gen(4, [](int l) { return range(4 * l, 4 * l + 3) + "," + range(16 + 4 * l, 16 + 4 * l + 3); }));
    EXPECT_EQ(groups(t, &CpuInfo::package), (std::vector<std::string>{"0-7,16-23", "8-15,24-31"}));
    EXPECT_EQ(groups(t, &CpuInfo::node), std::vector<std::string>{"0-31"});
    EXPECT_EQ(t.smtMask(3).toList(), "3,19");
    EXPECT_EQ(t.smtMask(19).toList(), "3,19");
    EXPECT_EQ(t.distances(), (std::vector<std::vector<int>>{{10}}));
    expectFirstAppearanceOrder(t);
}

// 4 NUMA nodes, one per L3, whose Linux numbers run 3,2,1,0 in CPU order; L2
// shared by core pairs (cluster level); an OS latency matrix whose rows are in
// yet another order (os 2,0,3,1).
TEST(TopologyHwloc, NumaNodesAndDistances) {
    const Topology t = load("2s-4numa-2l2-2c-2t.xml");
    ASSERT_EQ(t.nrCpus(), 32);
    ASSERT_EQ(t.nrNodes(), 4);
    EXPECT_EQ(t.nrLlcs(), 4);
    const auto llcs = gen(4, [](int l) { return range(4 * l, 4 * l + 3) + "," + range(16 + 4 * l, 16 + 4 * l + 3); });
    EXPECT_EQ(groups(t, &CpuInfo::llc), llcs);
    EXPECT_EQ(groups(t, &CpuInfo::node), llcs);
    EXPECT_EQ(groups(t, &CpuInfo::core), gen(16, [](int k) { return std::to_string(k) + "," + std::to_string(k + 16); }));
    EXPECT_EQ(groups(t, &CpuInfo::cluster), gen(8, [](int k) { return range(2 * k, 2 * k + 1) + "," + range(16 + 2 * k, 16 + 2 * k + 1); }));
    EXPECT_EQ(groups(t, &CpuInfo::package), (std::vector<std::string>{"0-7,16-23", "8-15,24-31"}));
    EXPECT_EQ(t.nodeMask(2).toList(), "8-11,24-27");
    EXPECT_TRUE(t.numaInPackage());

    // Dense node i is Linux node 3-i; by os_index the distances are 0-1: 13,
    // 2-3: 12, 0-2 and 1-3: 30, 0-3 and 1-2: 32.
    const std::vector<std::vector<int>> expected{
        {10, 12, 30, 32},
        {12, 10, 32, 30},
        {30, 32, 10, 13},
        {32, 30, 13, 10},
    };
    EXPECT_EQ(t.distances(), expected);
    EXPECT_EQ(t.distance(2, 3), 13);
    expectFirstAppearanceOrder(t);
}

// aarch64: "Cluster" groups of 4 single-thread cores under one L3, a LITTLE
// kind (CPUs 0-3) and a big kind (4-7).
TEST(TopologyHwloc, Arm64ClustersAndCpuKinds) {
    const Topology t = load("arm64-2cluster-biglittle.xml");
    EXPECT_EQ(t.arch(), sched::Arch::Arm64);
    ASSERT_EQ(t.nrCpus(), 8);
    EXPECT_EQ(groups(t, &CpuInfo::core), gen(8, [](int k) { return std::to_string(k); }));
    EXPECT_EQ(groups(t, &CpuInfo::cluster), (std::vector<std::string>{"0-3", "4-7"}));
    EXPECT_EQ(groups(t, &CpuInfo::llc), std::vector<std::string>{"0-7"});
    EXPECT_EQ(groups(t, &CpuInfo::package), std::vector<std::string>{"0-7"});
    EXPECT_EQ(t.threadsPerCoreMax(), 1);
    EXPECT_EQ(t.clusterMask(6).toList(), "4-7");
    for (const auto& c : t.cpus()) EXPECT_EQ(c.capacity, c.cpu < 4 ? 512 : 1024) << "CPU " << c.cpu;
    EXPECT_EQ(t.distances(), (std::vector<std::vector<int>>{{10}}));
}

// ppc64le: 2 packages x 2 dies x 2 L3 x 2 SMT4 cores, adjacent numbering.
TEST(TopologyHwloc, PowerDiesAndSmt4) {
    const Topology t = load("ppc-2s-2die-2llc-2c-4t.xml");
    EXPECT_EQ(t.arch(), sched::Arch::Power);
    ASSERT_EQ(t.nrCpus(), 64);
    EXPECT_EQ(t.threadsPerCoreMax(), 4);
    EXPECT_EQ(groups(t, &CpuInfo::core), gen(16, [](int k) { return range(4 * k, 4 * k + 3); }));
    for (const auto& c : t.cpus()) EXPECT_EQ(c.thread, c.cpu % 4) << "CPU " << c.cpu;
    EXPECT_EQ(groups(t, &CpuInfo::llc), gen(8, [](int l) { return range(8 * l, 8 * l + 7); }));
    EXPECT_EQ(groups(t, &CpuInfo::die), gen(4, [](int d) { return range(16 * d, 16 * d + 15); }));
    EXPECT_EQ(groups(t, &CpuInfo::package), (std::vector<std::string>{"0-31", "32-63"}));
    EXPECT_EQ(t.dieMask(20).toList(), "16-31");
    expectAllCapacities(t, 1024);  // a single CPU kind
    expectFirstAppearanceOrder(t);
}

// No Package object: the machine is one package (and one die).
TEST(TopologyHwloc, NoPackageIsOnePackage) {
    const Topology t = load("nopkg-2l3-2c.xml");
    ASSERT_EQ(t.nrCpus(), 4);
    EXPECT_EQ(groups(t, &CpuInfo::package), std::vector<std::string>{"0-3"});
    EXPECT_EQ(groups(t, &CpuInfo::die), std::vector<std::string>{"0-3"});
    EXPECT_EQ(groups(t, &CpuInfo::llc), (std::vector<std::string>{"0-1", "2-3"}));
    EXPECT_EQ(groups(t, &CpuInfo::core), (std::vector<std::string>{"0", "1", "2", "3"}));
}

// `lstopo --no-io --of xml` of the 2-CPU VM the fixtures were made on: one
// package, an L3 shared by both CPUs, private L2s, no SMT, one node.
TEST(TopologyHwloc, CapturedMachine) {
    const Topology t = load("this-machine.xml");
    EXPECT_EQ(t.arch(), sched::Arch::X86);
    ASSERT_EQ(t.nrCpus(), 2);
    EXPECT_EQ(groups(t, &CpuInfo::core), (std::vector<std::string>{"0", "1"}));
    EXPECT_EQ(groups(t, &CpuInfo::cluster), (std::vector<std::string>{"0", "1"}));
    EXPECT_EQ(groups(t, &CpuInfo::llc), std::vector<std::string>{"0-1"});
    EXPECT_EQ(groups(t, &CpuInfo::package), std::vector<std::string>{"0-1"});
    EXPECT_EQ(groups(t, &CpuInfo::node), std::vector<std::string>{"0-1"});
    EXPECT_EQ(t.distances(), (std::vector<std::vector<int>>{{10}}));
    expectAllCapacities(t, 1024);
}

// The running machine: either a valid topology or a TopologyError naming hwloc
// (e.g. offline CPUs leave gaps); never anything else.
TEST(TopologyHwloc, RunningMachine) {
    try {
        const Topology t = sched::topologyFromHwloc("", "here");
        EXPECT_EQ(t.name(), "here");
        ASSERT_GE(t.nrCpus(), 1);
        for (const auto& c : t.cpus()) EXPECT_TRUE(t.smtMask(c.cpu).test(c.cpu));
        EXPECT_EQ(t.distance(0, 0), 10);
    } catch (const TopologyError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("hwloc: ", 0), 0u) << e.what();
    }
}

TEST(TopologyHwloc, TruncatedXmlIsRejected) { expectRejected(fixture("truncated.xml"), "not an hwloc XML topology"); }

TEST(TopologyHwloc, NonXmlFileIsRejected) { expectRejected(fixture("not-xml.txt"), "not an hwloc XML topology"); }

TEST(TopologyHwloc, OtherXmlIsRejected) { expectRejected(fixture("not-hwloc.xml"), "not an hwloc XML topology"); }

TEST(TopologyHwloc, MissingFileIsRejected) { expectRejected(fixture("does-not-exist.xml"), "cannot open"); }

TEST(TopologyHwloc, DirectoryIsRejected) { expectRejected(fixture(""), "not a regular file"); }

// Well-formed XML on which hwloc 2.9 itself segfaults: the load runs in a child
// process, so this is an error, not a crash of the test.
TEST(TopologyHwloc, XmlThatCrashesHwlocIsRejected) { expectRejected(fixture("pu-without-complete-cpuset.xml"), "not an hwloc XML topology"); }

// CPUs 6 and 7 absent (as if offline): CPU numbers are Linux's, so no renumbering.
TEST(TopologyHwloc, GapInCpuNumbersIsRejected) { expectRejected(fixture("gap-cpu6-7.xml"), "CPU 6 is missing"); }

// The hwloc work runs in `schedlab-hwloc-reader`, posix_spawn()ed (found in the build tree);
// without it (SCHEDLAB_HWLOC_READER set and empty, or a program that cannot start) a forked
// child does it: the same machine either way, and the same error for XML that crashes hwloc.
TEST(TopologyHwloc, TheReaderProgramAndTheForkFallbackGiveTheSameMachine) {
    ASSERT_EQ(std::getenv("SCHEDLAB_HWLOC_READER"), nullptr);
    ASSERT_NE(sched::hwlocReaderPath().find("schedlab-hwloc-reader"), std::string::npos) << sched::hwlocReaderPath();
    struct Env {
        explicit Env(const char* v) { ::setenv("SCHEDLAB_HWLOC_READER", v, 1); }
        ~Env() { ::unsetenv("SCHEDLAB_HWLOC_READER"); }
    };
    for (const char* file : {"2s-4numa-2l2-2c-2t.xml", "arm64-2cluster-biglittle.xml"}) {
        const Topology spawned = load(file);
        for (const char* other : {"", "/nonexistent/schedlab-hwloc-reader"}) {
            Env e(other);
            EXPECT_EQ(sched::hwlocReaderPath(), other);
            const Topology t = load(file);
            ASSERT_EQ(t.nrCpus(), spawned.nrCpus()) << file << " with '" << other << "'";
            for (int c = 0; c < t.nrCpus(); ++c) {
                EXPECT_EQ(t.cpu(c).core, spawned.cpu(c).core) << file << " CPU " << c;
                EXPECT_EQ(t.cpu(c).llc, spawned.cpu(c).llc) << file << " CPU " << c;
                EXPECT_EQ(t.cpu(c).node, spawned.cpu(c).node) << file << " CPU " << c;
                EXPECT_EQ(t.cpu(c).capacity, spawned.cpu(c).capacity) << file << " CPU " << c;
            }
            for (int a = 0; a < t.nrNodes(); ++a)
                for (int b = 0; b < t.nrNodes(); ++b) EXPECT_EQ(t.distance(a, b), spawned.distance(a, b)) << file;
        }
    }
    Env e("");
    expectRejected(fixture("pu-without-complete-cpuset.xml"), "not an hwloc XML topology");
}

}  // namespace
