// SPDX-License-Identifier: GPL-2.0-or-later
// core_topology_test.cpp: presets, Linux CPU numbering, the Boost.Graph tree,
// and the sched-domain tables (topology.c: build_sched_domains()) of every preset (docs/workloads.md: Machine presets).
#include "kernel/sched_domain.h"
#include "topology/topology.h"
#include "topology/topology_json.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace sched;

namespace {

struct Level {
    std::string name;
    int weight;
    int pct;
};

struct Expect {
    std::string preset;
    int nrCpus;
    std::vector<Level> levels;  // CPU 0, bottom-up
    int llcSize;
    int siblingOf0;  // -1: no SMT
};

std::vector<Expect> tables() {
    return {
        {"epyc-9654-2s", 384, {{"SMT", 2, 110}, {"MC", 16, 117}, {"DIE", 192, 117}, {"NUMA", 384, 117}}, 16, 192},
        {"bergamo-9754-2s", 512, {{"SMT", 2, 110}, {"MC", 16, 117}, {"DIE", 256, 117}, {"NUMA", 512, 117}}, 16, 256},
        {"genoa-1s", 192, {{"SMT", 2, 110}, {"MC", 16, 117}, {"DIE", 192, 117}}, 16, 96},
        {"milan-2s", 256, {{"SMT", 2, 110}, {"MC", 16, 117}, {"DIE", 128, 117}, {"NUMA", 256, 117}}, 16, 128},
        {"spr-2s", 224, {{"SMT", 2, 110}, {"MC", 112, 117}, {"NUMA", 224, 117}}, 112, 112},
        {"i7-4790", 8, {{"SMT", 2, 110}, {"MC", 8, 117}}, 8, 4},
        {"x86-20c40t", 40, {{"SMT", 2, 110}, {"MC", 20, 117}, {"NUMA", 40, 117}}, 20, 20},
        {"x86-8s", 384, {{"SMT", 2, 110}, {"MC", 48, 117}, {"NUMA", 192, 117}, {"NUMA", 384, 117}}, 48, 192},
        {"power10-smt8", 96, {{"SMT", 4, 110}, {"CACHE", 8, 117}, {"MC", 48, 117}, {"NUMA", 96, 117}}, 8, 1},
        {"pixel2", 8, {{"MC", 4, 117}, {"DIE", 8, 117}}, 4, -1},
        {"qemu-2s2c2t", 8, {{"SMT", 2, 110}, {"MC", 4, 117}, {"DIE", 8, 117}}, 4, 1},
        {"qemu-1s4c", 4, {{"MC", 4, 117}}, 4, -1},
        {"qemu-2s4c-numa", 8, {{"MC", 4, 117}, {"NUMA", 8, 117}}, 4, -1},
    };
}

void PrintTo(const Expect& e, std::ostream* os) { *os << e.preset; }

class PresetDomains : public ::testing::TestWithParam<Expect> {};

}  // namespace

TEST_P(PresetDomains, MatchesTheKernelsTable) {
    const Expect& e = GetParam();
    Topology t = Topology::preset(e.preset);
    SchedDomains sd(t);
    ASSERT_EQ(t.nrCpus(), e.nrCpus);
    const auto& doms = sd.domains(0);
    ASSERT_EQ(doms.size(), e.levels.size()) << e.preset;
    for (size_t i = 0; i < doms.size(); ++i) {
        EXPECT_EQ(doms[i].name, e.levels[i].name) << e.preset << " level " << i;
        EXPECT_EQ(doms[i].span_weight, e.levels[i].weight) << e.preset << " level " << i;
        EXPECT_EQ(doms[i].imbalance_pct, e.levels[i].pct) << e.preset << " level " << i;
        EXPECT_TRUE(doms[i].span.test(0));
        if (i) {
            EXPECT_TRUE(doms[i - 1].span.subsetOf(doms[i].span));
        }
        // Groups partition the span (non-overlapping levels) and start with CPU 0's own group.
        ASSERT_FALSE(doms[i].groups.empty());
        EXPECT_TRUE(doms[i].groups.front().test(0));
        CpuMask u;
        for (auto& g : doms[i].groups) u |= g;
        EXPECT_EQ(u, doms[i].span) << e.preset << " level " << i;
    }
    EXPECT_EQ(sd.sd_llc_size(0), e.llcSize);
    if (e.siblingOf0 >= 0) {
        EXPECT_TRUE(t.smtMask(0).test(e.siblingOf0));
        EXPECT_TRUE(sd.smtActive());
    } else {
        EXPECT_EQ(t.smtMask(0).weight(), 1);
        EXPECT_FALSE(sd.smtActive());
    }
    // Every CPU has domains, and cpus_share_cache is an equivalence on LLC ids.
    for (int c = 0; c < t.nrCpus(); ++c) {
        ASSERT_FALSE(sd.domains(c).empty());
        EXPECT_EQ(sd.sd_llc_id(c), sd.sd_llc(c)->span.first());
    }
}

INSTANTIATE_TEST_SUITE_P(AllPresets, PresetDomains, ::testing::ValuesIn(tables()), [](const auto& info) {
    std::string n = info.param.preset;
    for (auto& ch : n)
        if (!isalnum((unsigned char)ch)) ch = '_';
    return n;
});

TEST(Topology, EveryPresetIsCovered) {
    std::set<std::string> tested;
    for (auto& e : tables()) tested.insert(e.preset);
    for (auto& n : Topology::presetNames()) EXPECT_TRUE(tested.count(n)) << n << " has no domain table test";
}

TEST(Topology, X86SiblingNumbering) {
    Topology t = Topology::preset("epyc-9654-2s");
    for (int c : {0, 7, 100, 191}) {
        EXPECT_EQ(t.smtMask(c).toList(), std::to_string(c) + "," + std::to_string(c + 192));
    }
    EXPECT_EQ(t.cpu(0).package, 0);
    EXPECT_EQ(t.cpu(96).package, 1);
    EXPECT_EQ(t.cpu(192 + 96).package, 1);
    EXPECT_EQ(t.nrLlcs(), 24);
}

TEST(Topology, MilanLlcIdsMatchPrateeksDump) {
    Topology t = Topology::preset("milan-2s");
    SchedDomains sd(t);
    EXPECT_EQ(sd.sd_llc_id(5), 0);
    EXPECT_EQ(sd.sd_llc_id(12), 8);
    EXPECT_EQ(sd.sd_llc_id(130), 0);
    // Flags of CPU 0's domains (K Prateek Nayak, Aug 2023).
    const auto& d = sd.domains(0);
    EXPECT_EQ(d[0].flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES |
                              SD_PREFER_SIBLING);
    EXPECT_EQ(d[1].flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING);
    EXPECT_EQ(d[2].flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING);
    EXPECT_EQ(d[3].flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_SERIALIZE | SD_OVERLAP | SD_NUMA);
}

TEST(Topology, QemuAdjacentSiblings) {
    Topology t = Topology::preset("qemu-2s2c2t");
    EXPECT_EQ(t.smtMask(0).toList(), "0-1");
    EXPECT_EQ(t.smtMask(6).toList(), "6-7");
    EXPECT_EQ(t.llcMask(5).toList(), "4-7");
}

TEST(Topology, GroupsStartAtOwnGroupAndWrap) {
    // topology.c: build_sched_groups() (for_each_cpu_wrap from the CPU): the MC groups of CPU 2 on a 4-CPU LLC are {2},{3},{0},{1}.
    Topology t = Topology::preset("qemu-1s4c");
    SchedDomains sd(t);
    const auto& g = sd.domains(2)[0].groups;
    ASSERT_EQ(g.size(), 4u);
    EXPECT_EQ(g[0].toList(), "2");
    EXPECT_EQ(g[1].toList(), "3");
    EXPECT_EQ(g[2].toList(), "0");
    EXPECT_EQ(g[3].toList(), "1");
}

TEST(Topology, NumaLevelsAndFlags) {
    SchedDomains t2(Topology::preset("qemu-2s4c-numa"));
    const auto& n = t2.domains(0)[1];
    EXPECT_TRUE(n.flags & SD_NUMA);
    EXPECT_TRUE(n.flags & SD_WAKE_AFFINE) << "distance 21 <= node_reclaim_distance";
    EXPECT_FALSE(n.flags & SD_PREFER_SIBLING);
    EXPECT_EQ(n.cache_nice_tries, 2);
    EXPECT_EQ(n.imb_numa_nr, 1);
    SchedDomains eight(Topology::preset("x86-8s"));
    const auto& far = eight.domains(0).back();
    EXPECT_EQ(far.numa_distance, 31);
    EXPECT_FALSE(far.flags & SD_WAKE_AFFINE) << "31 > node_reclaim_distance";
    EXPECT_FALSE(far.flags & SD_BALANCE_FORK);
    EXPECT_TRUE(eight.domains(0)[2].flags & SD_WAKE_AFFINE);
    SchedDomains p10(Topology::preset("power10-smt8"));
    EXPECT_FALSE(p10.domains(0).back().flags & SD_WAKE_AFFINE) << "LPAR distance 40";
}

TEST(Topology, AsymmetricCapacityDomain) {
    SchedDomains sd(Topology::preset("pixel2"));
    EXPECT_TRUE(sd.asymCpucapActive());
    ASSERT_NE(sd.sd_asym_cpucapacity(0), nullptr);
    EXPECT_EQ(sd.sd_asym_cpucapacity(0)->name, "DIE");
    EXPECT_FALSE(sd.domains(0)[0].flags & SD_PREFER_SIBLING) << "cleared below an asym-capacity parent";
}

TEST(Topology, GraphTreeHoldsEveryCpuOnce) {
    Topology t = Topology::preset("bergamo-9754-2s");
    const auto& g = t.graph();
    int threads = 0;
    for (auto [v, end] = boost::vertices(g); v != end; ++v)
        if (g[*v].kind == TopoVertex::Thread) ++threads;
    EXPECT_EQ(threads, 512);
    EXPECT_EQ(t.cpusBelow(0).weight(), 512);  // vertex 0 is the machine
}

TEST(Topology, ParametricValidation) {
    TopologyParams p;
    p.sockets = 2;
    p.llcs_per_socket = 3;
    p.nodes_per_socket = 2;
    EXPECT_THROW(Topology::fromParams(p), TopologyError);
    p.nodes_per_socket = 3;
    Topology t = Topology::fromParams(p);
    EXPECT_EQ(t.nrNodes(), 6);
    EXPECT_TRUE(t.numaInPackage());
    SchedDomains sd(t);
    for (auto& d : sd.domains(0)) EXPECT_NE(d.name, "DIE") << "x86_numa_in_package_topology has no DIE";
    p.sockets = 0;
    EXPECT_THROW(Topology::fromParams(p), TopologyError);
}

TEST(Topology, InlineJsonTopology) {
    auto j = nlohmann::json::parse(R"({"sockets":2,"llcs_per_socket":2,"cores_per_llc":4,"threads_per_core":2,"numbering":"adjacent"})");
    Topology t = topologyFromJson(j, "f.json", "topology", "");
    EXPECT_EQ(t.nrCpus(), 32);
    EXPECT_EQ(t.smtMask(2).toList(), "2-3");
    auto bad = nlohmann::json::parse(R"({"sockets":2,"socket":2})");
    try {
        topologyFromJson(bad, "f.json", "topology", "");
        FAIL() << "unknown key accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "f.json: topology.socket: unknown key in a parametric topology");
    }
}

// Found by tests/bench/fuzz/fuzz_topology_json: a topology named by a string the file system
// refuses (a file name over NAME_MAX) threw std::filesystem_error out of the parser ("internal
// error"); it is an unknown topology, said in one line.
TEST(Topology, ANameTheFileSystemRefusesIsAnUnknownTopology) {
    const std::string name(300, '8');
    try {
        topologyFromJson(nlohmann::json(name), "f.json", "topology", "");
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("f.json: topology"), std::string::npos) << e.what();
    } catch (const TopologyError& e) {
        EXPECT_NE(std::string(e.what()).find(name.substr(0, 20)), std::string::npos) << e.what();
    }
}

// Found by tests/bench/fuzz/fuzz_topology_json: a distance matrix whose later row is
// shorter than the first ([[10, 21], []]) was read past its end by the symmetry check, which
// compares [i][j] with [j][i] before row j's length had been checked (a null dereference).
TEST(Topology, ARaggedDistanceMatrixIsRefusedByItsRow) {
    for (const char* text : {R"({"sockets":2,"llcs_per_socket":1,"cores_per_llc":2,"distances":[[10,21],[]]})",
                             R"({"sockets":2,"llcs_per_socket":1,"cores_per_llc":2,"distances":[[10,21],[21]]})"}) {
        try {
            topologyFromJson(nlohmann::json::parse(text), "f.json", "topology", "");
            FAIL() << "accepted: " << text;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("f.json: topology"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("distance matrix row 1 has"), std::string::npos) << e.what();
        }
    }
}
