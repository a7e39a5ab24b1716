// SPDX-License-Identifier: GPL-2.0-or-later
// topology.cpp: validation of a machine description, its Boost.Graph tree, the
// per-CPU masks the sched-domain builder reads, and the parametric form.
#include "topology/topology.h"

#include <boost/graph/depth_first_search.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace sched {

const char* archName(Arch a) {
    switch (a) {
    case Arch::X86: return "x86";
    case Arch::Power: return "power";
    case Arch::Arm64: return "arm64";
    }
    return "?";
}

const char* numberingName(Numbering n) { return n == Numbering::X86 ? "x86" : "adjacent"; }

Topology::Topology(std::string name, Arch arch, std::vector<CpuInfo> cpus, std::vector<std::vector<int>> distances)
    : m_name(std::move(name)), m_arch(arch), m_cpus(std::move(cpus)), m_distance(std::move(distances)) {
    const int n = int(m_cpus.size());
    if (n < 1) throw TopologyError("topology has no CPUs");
    if (n > kMaxCpus) throw TopologyError(fmt::format("topology has {} CPUs; schedlab models at most {}", n, kMaxCpus));
    std::sort(m_cpus.begin(), m_cpus.end(), [](const CpuInfo& a, const CpuInfo& b) { return a.cpu < b.cpu; });
    for (int i = 0; i < n; ++i)
        if (m_cpus[i].cpu != i) throw TopologyError(fmt::format("CPU numbers must be 0..{} without gaps (missing CPU {})", n - 1, i));

    // Nesting: every object belongs to exactly one parent object.
    auto checkNest = [&](const char* child, auto childOf, const char* parent, auto parentOf) {
        std::map<int, int> owner;
        for (const auto& c : m_cpus) {
            auto [it, fresh] = owner.emplace(childOf(c), parentOf(c));
            if (!fresh && it->second != parentOf(c))
                throw TopologyError(fmt::format("{} {} spans two {}s ({} and {})", child, childOf(c), parent, it->second, parentOf(c)));
        }
    };
    checkNest(
        "core", [](const CpuInfo& c) { return c.core; }, "cluster", [](const CpuInfo& c) { return c.cluster; });
    checkNest(
        "cluster", [](const CpuInfo& c) { return c.cluster; }, "LLC", [](const CpuInfo& c) { return c.llc; });
    checkNest(
        "LLC", [](const CpuInfo& c) { return c.llc; }, "die", [](const CpuInfo& c) { return c.die; });
    checkNest(
        "die", [](const CpuInfo& c) { return c.die; }, "package", [](const CpuInfo& c) { return c.package; });
    checkNest(
        "core", [](const CpuInfo& c) { return c.core; }, "node", [](const CpuInfo& c) { return c.node; });

    std::set<int> nodes;
    for (const auto& c : m_cpus) {
        if (c.core < 0 || c.cluster < 0 || c.llc < 0 || c.die < 0 || c.package < 0 || c.node < 0)
            throw TopologyError(fmt::format("CPU {} has a negative object id", c.cpu));
        if (c.capacity < 1 || c.capacity > 1024) throw TopologyError(fmt::format("CPU {} capacity {} outside 1..1024", c.cpu, c.capacity));
        nodes.insert(c.node);
    }
    const int nrNodes = *nodes.rbegin() + 1;
    if (int(nodes.size()) != nrNodes) throw TopologyError("NUMA node ids must be dense (0..N-1)");
    if (m_distance.empty()) {
        m_distance.assign(nrNodes, std::vector<int>(nrNodes, 20));
        for (int i = 0; i < nrNodes; ++i) m_distance[i][i] = 10;
    }
    if (int(m_distance.size()) != nrNodes)
        throw TopologyError(fmt::format("distance matrix has {} rows for {} NUMA nodes", m_distance.size(), nrNodes));
    // Every row's length first: the symmetry check below reads [j][i] of rows not reached yet.
    for (int i = 0; i < nrNodes; ++i)
        if (int(m_distance[i].size()) != nrNodes)
            throw TopologyError(fmt::format("distance matrix row {} has {} entries for {} nodes", i, m_distance[i].size(), nrNodes));
    for (int i = 0; i < nrNodes; ++i) {
        for (int j = 0; j < nrNodes; ++j) {
            if (m_distance[i][j] != m_distance[j][i]) throw TopologyError(fmt::format("distance matrix is not symmetric at [{}][{}]", i, j));
            if (i == j ? m_distance[i][j] != 10 : m_distance[i][j] <= 10)
                throw TopologyError(fmt::format("distance [{}][{}] = {}: local distance must be 10 and remote ones > 10", i, j, m_distance[i][j]));
        }
    }
    buildGraphAndMasks();
}

void Topology::buildGraphAndMasks() {
    const int n = nrCpus();
    // Thread index within a core, in ascending CPU order.
    std::map<int, int> threadsSeen;
    for (auto& c : m_cpus) c.thread = threadsSeen[c.core]++;
    m_maxThreads = 1;
    for (auto& [core, cnt] : threadsSeen) m_maxThreads = std::max(m_maxThreads, cnt);

    // The tree: Machine > Package > Die > Llc > Cluster > Core > Thread.
    m_graph.clear();
    auto root = boost::add_vertex(TopoVertex{TopoVertex::Machine, 0}, m_graph);
    std::map<std::pair<int, int>, TopoGraph::vertex_descriptor> made;  // (kind, id) -> vertex
    auto vertexFor = [&](TopoVertex::Kind k, int id, TopoGraph::vertex_descriptor parent) {
        auto key = std::make_pair(int(k), id);
        auto it = made.find(key);
        if (it != made.end()) return it->second;
        auto v = boost::add_vertex(TopoVertex{k, id}, m_graph);
        boost::add_edge(parent, v, m_graph);
        made.emplace(key, v);
        return v;
    };
    for (const auto& c : m_cpus) {
        auto p = vertexFor(TopoVertex::Package, c.package, root);
        auto d = vertexFor(TopoVertex::Die, c.die, p);
        auto l = vertexFor(TopoVertex::Llc, c.llc, d);
        auto cl = vertexFor(TopoVertex::Cluster, c.cluster, l);
        auto co = vertexFor(TopoVertex::Core, c.core, cl);
        vertexFor(TopoVertex::Thread, c.cpu, co);
    }

    // Masks per CPU, from the tree: the CPUs below each ancestor.
    m_smt.assign(n, {});
    m_cluster.assign(n, {});
    m_llc.assign(n, {});
    m_die.assign(n, {});
    m_package.assign(n, {});
    std::map<std::pair<int, int>, CpuMask> below;
    for (auto& [key, v] : made) below[key] = cpusBelow(v);
    m_all = below.empty() ? CpuMask{} : cpusBelow(root);
    std::set<int> cores, llcs, pkgs;
    for (const auto& c : m_cpus) {
        m_smt[c.cpu] = below[{TopoVertex::Core, c.core}];
        m_cluster[c.cpu] = below[{TopoVertex::Cluster, c.cluster}];
        m_llc[c.cpu] = below[{TopoVertex::Llc, c.llc}];
        m_die[c.cpu] = below[{TopoVertex::Die, c.die}];
        m_package[c.cpu] = below[{TopoVertex::Package, c.package}];
        cores.insert(c.core);
        llcs.insert(c.llc);
        pkgs.insert(c.package);
    }
    m_nrCores = int(cores.size());
    m_nrLlcs = int(llcs.size());
    m_nrPackages = int(pkgs.size());
    m_node.assign(m_distance.size(), {});
    std::map<int, std::set<int>> nodesOfPkg;
    for (const auto& c : m_cpus) {
        m_node[c.node].set(c.cpu);
        nodesOfPkg[c.package].insert(c.node);
    }
    m_numaInPackage = false;
    for (auto& [p, ns] : nodesOfPkg)
        if (ns.size() > 1) m_numaInPackage = true;
}

CpuMask Topology::cpusBelow(TopoGraph::vertex_descriptor v) const {
    CpuMask m;
    std::vector<TopoGraph::vertex_descriptor> stack{v};
    while (!stack.empty()) {
        auto u = stack.back();
        stack.pop_back();
        if (m_graph[u].kind == TopoVertex::Thread) m.set(m_graph[u].id);
        for (auto [e, end] = boost::out_edges(u, m_graph); e != end; ++e) stack.push_back(boost::target(*e, m_graph));
    }
    return m;
}

std::string Topology::summary() const {
    return fmt::format("{}: {} CPUs, {} packages, {} LLCs, {} cores, up to {} threads/core, {} NUMA node{}", m_name, nrCpus(), m_nrPackages, m_nrLlcs,
                       m_nrCores, m_maxThreads, nrNodes(), nrNodes() == 1 ? "" : "s");
}

Topology Topology::fromParams(const TopologyParams& p) {
    auto need = [](bool ok, const std::string& field, const std::string& what) {
        if (!ok) throw TopologyError(fmt::format("{}: {}", field, what));
    };
    need(p.sockets >= 1 && p.sockets <= 64, "sockets", "must be 1..64");
    need(p.llcs_per_socket >= 1, "llcs_per_socket", "must be >= 1");
    need(p.cores_per_llc >= 1, "cores_per_llc", "must be >= 1");
    need(p.threads_per_core >= 1 && p.threads_per_core <= 8, "threads_per_core", "must be 1..8");
    need(p.cores_per_cluster >= 1 && p.cores_per_llc % p.cores_per_cluster == 0, "cores_per_cluster", "must be >= 1 and divide cores_per_llc");
    need(p.nodes_per_socket >= 1 && p.llcs_per_socket % p.nodes_per_socket == 0, "nodes_per_socket", "must be >= 1 and divide llcs_per_socket");
    const long total = long(p.sockets) * p.llcs_per_socket * p.cores_per_llc * p.threads_per_core;
    need(total <= kMaxCpus, "sockets", fmt::format("the machine would have {} CPUs; at most {}", total, kMaxCpus));

    const int coresPerSocket = p.llcs_per_socket * p.cores_per_llc;
    const int ncores = p.sockets * coresPerSocket;
    const int llcsPerNode = p.llcs_per_socket / p.nodes_per_socket;
    std::vector<CpuInfo> cpus;
    for (int k = 0; k < ncores; ++k) {
        for (int t = 0; t < p.threads_per_core; ++t) {
            CpuInfo c;
            c.cpu = p.numbering == Numbering::X86 ? k + t * ncores : k * p.threads_per_core + t;
            c.core = k;
            c.package = k / coresPerSocket;
            c.llc = k / p.cores_per_llc;
            c.cluster = k / p.cores_per_cluster;
            c.die = c.package;
            c.node = c.llc / llcsPerNode;
            if (!p.capacities.empty()) {
                need(int(p.capacities.size()) == int(total), "capacities", fmt::format("has {} entries for {} CPUs", p.capacities.size(), total));
            }
            cpus.push_back(c);
        }
    }
    if (!p.capacities.empty())
        for (auto& c : cpus) c.capacity = p.capacities[c.cpu];
    const int nrNodes = p.sockets * p.nodes_per_socket;
    std::vector<std::vector<int>> dist = p.distances;
    if (dist.empty()) {
        dist.assign(nrNodes, std::vector<int>(nrNodes, 10));
        for (int a = 0; a < nrNodes; ++a)
            for (int b = 0; b < nrNodes; ++b)
                if (a != b) dist[a][b] = (a / p.nodes_per_socket == b / p.nodes_per_socket) ? p.intra_socket_distance : p.remote_distance;
    }
    Topology t(p.name, p.arch, std::move(cpus), std::move(dist));
    need(p.node_reclaim_distance > 10, "node_reclaim_distance", "must be > 10");
    t.setNodeReclaimDistance(p.node_reclaim_distance);
    return t;
}

const char* toString(DistClass d) {
    switch (d) {
    case DistClass::same_cpu: return "same_cpu";
    case DistClass::smt: return "smt";
    case DistClass::llc: return "llc";
    case DistClass::cross_llc: return "cross_llc";
    case DistClass::cross_node: return "cross_node";
    case DistClass::cross_socket: return "cross_socket";
    case DistClass::count_: break;
    }
    return "?";
}

DistClass distClass(const Topology& t, int a, int b) {
    if (a == b) return DistClass::same_cpu;
    const CpuInfo& x = t.cpu(a);
    const CpuInfo& y = t.cpu(b);
    if (x.core == y.core && x.package == y.package) return DistClass::smt;
    if (x.llc == y.llc) return DistClass::llc;
    if (x.node == y.node) return DistClass::cross_llc;
    if (x.package == y.package) return DistClass::cross_node;
    return DistClass::cross_socket;
}

}  // namespace sched
