// SPDX-License-Identifier: GPL-2.0-or-later
// topology_presets.cpp: the machines of docs/workloads.md: Machine presets (and the
// small ones tests/core_wakeup_oracles_test.cpp uses), with Linux CPU numbering.
#include "topology/topology.h"

#include <fmt/format.h>

#include <functional>
#include <map>

namespace sched {
namespace {

struct Preset {
    std::string description;
    std::function<Topology()> make;
};

TopologyParams x86(std::string name, int sockets, int llcs, int cores, int threads, int remote = 32) {
    TopologyParams p;
    p.name = std::move(name);
    p.arch = Arch::X86;
    p.sockets = sockets;
    p.llcs_per_socket = llcs;
    p.cores_per_llc = cores;
    p.threads_per_core = threads;
    p.numbering = Numbering::X86;
    p.remote_distance = remote;
    return p;
}

// AMD EPYC (Zen 2/3/4): SLIT 10/32 between sockets in NPS1, and init_amd_zn()
// raises node_reclaim_distance to 32, so the NUMA level keeps WAKE_AFFINE.
TopologyParams amd(std::string name, int sockets, int llcs, int cores) {
    TopologyParams p = x86(std::move(name), sockets, llcs, cores, 2, 32);
    p.node_reclaim_distance = 32;
    return p;
}

// 8-socket glueless machine: sockets form a hypercube (3 UPI links each), so
// neighbours are 1 hop (21) and the rest 2 hops (31). Two NUMA levels, and the
// 2-hop level exceeds node_reclaim_distance (30): no WAKE_AFFINE there.
Topology eightSocket() {
    TopologyParams p = x86("x86-8s", 8, 1, 24, 2);
    p.distances.assign(8, std::vector<int>(8, 31));
    for (int a = 0; a < 8; ++a) {
        p.distances[a][a] = 10;
        for (int bit : {1, 2, 4}) p.distances[a][a ^ bit] = 21;
    }
    return Topology::fromParams(p);
}

// POWER10 in SMT8 mode: a big core = two SMT4 small cores sharing L2 (the
// CACHE level, which is sd_llc), threads numbered consecutively (core k = CPUs
// 8k..8k+7). Two chips, one node each, LPAR distance 40 (> node_reclaim_distance).
Topology power10() {
    std::vector<CpuInfo> cpus;
    const int chips = 2, bigCores = 6;
    int cpu = 0;
    for (int chip = 0; chip < chips; ++chip)
        for (int b = 0; b < bigCores; ++b)
            for (int t = 0; t < 8; ++t) {
                CpuInfo c;
                c.cpu = cpu++;
                int big = chip * bigCores + b;
                c.core = big * 2 + t / 4;  // SMT4 small core
                c.cluster = c.core;
                c.llc = big;
                c.die = chip;
                c.package = chip;
                c.node = chip;
                cpus.push_back(c);
            }
    return Topology("power10-smt8", Arch::Power, std::move(cpus), {{10, 40}, {40, 10}});
}

// Pixel 2 (Snapdragon 835): CPUs 0-3 LITTLE, 4-7 big, one L2 per cluster, no SMT.
// LITTLE capacity 460 is an estimate (400-500: docs/workloads.md: Machine presets).
Topology pixel2() {
    std::vector<CpuInfo> cpus;
    for (int i = 0; i < 8; ++i) {
        CpuInfo c;
        c.cpu = i;
        c.core = i;
        c.cluster = i;  // arm64 6.1 on DT: no CLS level distinct from the core
        c.llc = i / 4;
        c.die = 0;
        c.package = 0;
        c.node = 0;
        c.capacity = i < 4 ? 460 : 1024;
        cpus.push_back(c);
    }
    return Topology("pixel2", Arch::Arm64, std::move(cpus), {{10}});
}

const std::map<std::string, Preset>& presets() {
    static const std::map<std::string, Preset> table = [] {
        std::map<std::string, Preset> t;
        auto add = [&](const std::string& name, std::string desc, std::function<Topology()> f) {
            t.emplace(name, Preset{std::move(desc), std::move(f)});
        };
        add("epyc-9654-2s", "AMD EPYC 9654 (Genoa) x2: 2 x 12 CCX x 8 cores x 2 = 384 CPUs, NPS1",
            [] { return Topology::fromParams(amd("epyc-9654-2s", 2, 12, 8)); });
        add("bergamo-9754-2s", "AMD EPYC 9754 (Bergamo) x2: 2 x 16 CCX x 8 cores x 2 = 512 CPUs, NPS1",
            [] { return Topology::fromParams(amd("bergamo-9754-2s", 2, 16, 8)); });
        add("genoa-1s", "AMD Genoa 1 socket: 12 CCX x 8 cores x 2 = 192 CPUs", [] { return Topology::fromParams(amd("genoa-1s", 1, 12, 8)); });
        add("milan-2s", "AMD EPYC Milan x2: 2 x 8 CCX x 8 cores x 2 = 256 CPUs", [] { return Topology::fromParams(amd("milan-2s", 2, 8, 8)); });
        add("spr-2s", "Intel Sapphire Rapids x2: 2 x 56 cores x 2 = 224 CPUs, one LLC per socket",
            [] { return Topology::fromParams(x86("spr-2s", 2, 1, 56, 2, 21)); });
        add("i7-4790", "Intel i7-4790 (Haswell): 4 cores x 2 = 8 CPUs, one LLC (test oracle T1)",
            [] { return Topology::fromParams(x86("i7-4790", 1, 1, 4, 2)); });
        add("x86-20c40t", "x86 2 x 10 cores x 2 = 40 CPUs (E5-2600 class), 2 nodes",
            [] { return Topology::fromParams(x86("x86-20c40t", 2, 1, 10, 2, 21)); });
        add("x86-8s", "x86 8 sockets x 24 cores x 2 = 384 CPUs, 2-hop NUMA (21/31)", eightSocket);
        add("power10-smt8", "IBM POWER10 SMT8: 2 chips x 6 big cores x 8 threads = 96 CPUs", power10);
        add("pixel2", "Pixel 2 (Snapdragon 835): 4 LITTLE (cap 460) + 4 big, asymmetric capacity", pixel2);
        add("qemu-2s2c2t", "qemu -smp 8,sockets=2,cores=2,threads=2: siblings adjacent, one node (oracle T4)", [] {
            TopologyParams p = x86("qemu-2s2c2t", 2, 1, 2, 2);
            p.numbering = Numbering::Adjacent;
            p.nodes_per_socket = 1;
            // qemu without -numa: a single node covering both sockets.
            auto t = Topology::fromParams(p);
            std::vector<CpuInfo> cpus = t.cpus();
            for (auto& c : cpus) c.node = 0;
            return Topology("qemu-2s2c2t", Arch::X86, cpus, {{10}});
        });
        add("qemu-1s4c", "4 CPUs, no SMT, one LLC (test oracle T3)", [] { return Topology::fromParams(x86("qemu-1s4c", 1, 1, 4, 1)); });
        add("qemu-2s4c-numa", "2 sockets x 4 cores, no SMT, 2 nodes at distance 21 (test oracle T2)",
            [] { return Topology::fromParams(x86("qemu-2s4c-numa", 2, 1, 4, 1, 21)); });
        return t;
    }();
    return table;
}

}  // namespace

Topology Topology::preset(const std::string& name) {
    auto it = presets().find(name);
    if (it == presets().end()) {
        std::string known;
        for (auto& [k, v] : presets()) known += (known.empty() ? "" : ", ") + k;
        throw TopologyError(fmt::format("unknown topology preset '{}' (known: {})", name, known));
    }
    return it->second.make();
}

std::vector<std::string> Topology::presetNames() {
    std::vector<std::string> v;
    for (auto& [k, p] : presets()) v.push_back(k);
    return v;
}

std::vector<std::string> Topology::presetsWithCpus(int n) {
    std::vector<std::string> v;
    for (const auto& name : presetNames())
        if (preset(name).nrCpus() == n) v.push_back(name);
    return v;
}

std::string Topology::presetDescription(const std::string& name) {
    auto it = presets().find(name);
    return it == presets().end() ? std::string{} : it->second.description;
}

}  // namespace sched
