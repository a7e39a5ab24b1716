// SPDX-License-Identifier: GPL-2.0-or-later
// topology.h: the machine (CPUs, SMT siblings, cores, clusters, LLCs, dies,
// packages, NUMA nodes with distances), held as a Boost.Graph tree, plus the
// per-architecture list of sched-domain topology levels the kernel builds from it.
#pragma once

#include "util/cpumask.h"

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sched {

/// Which architecture's sched_domain_topology the machine uses (arch/*/kernel/smp*.c).
enum class Arch { X86, Power, Arm64 };

/// How CPU numbers are assigned to hardware threads.
enum class Numbering {
    X86,       ///< ACPI MADT order: first thread of every core, then the second threads (sibling of N is N + ncores)
    Adjacent,  ///< threads of a core are consecutive (POWER, qemu -smp ...,threads=2)
};

/// One logical CPU and the ids of the hardware objects containing it. Ids are
/// global and dense (core 0..ncores-1, llc 0..nllc-1, ...).
struct CpuInfo {
    int cpu = 0;
    int thread = 0;       ///< index of this thread within its core
    int core = 0;         ///< SMT core (on POWER10 SMT8: the SMT4 "small core")
    int cluster = 0;      ///< L2 / cluster group (== core when no cluster level exists)
    int llc = 0;          ///< last-level-cache group (sd_llc span)
    int die = 0;          ///< die / core group (POWER MC level); == package elsewhere
    int package = 0;      ///< socket
    int node = 0;         ///< NUMA node
    int capacity = 1024;  ///< arch_scale_cpu_capacity (capacity_orig)
};

/// Error in a topology description: names the field and the problem.
struct TopologyError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Vertex of the topology tree.
struct TopoVertex {
    enum Kind { Machine, Package, Die, Llc, Cluster, Core, Thread } kind = Machine;
    int id = 0;  ///< global id of the object of that kind (CPU number for Thread)
};
using TopoGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, TopoVertex>;

/// Parametric description of a symmetric machine.
struct TopologyParams {
    std::string name = "custom";
    Arch arch = Arch::X86;
    int sockets = 1;
    int llcs_per_socket = 1;
    int cores_per_llc = 4;
    int threads_per_core = 1;
    int cores_per_cluster = 1;  ///< cores sharing an L2 (cluster level); 1 = none
    int nodes_per_socket = 1;   ///< NUMA nodes per socket (NPS/SNC); must divide llcs_per_socket
    Numbering numbering = Numbering::X86;
    int remote_distance = 32;        ///< SLIT distance between sockets (local = 10)
    int intra_socket_distance = 12;  ///< distance between nodes of one socket
    /// Optional full node-distance matrix (overrides the two distances above).
    std::vector<std::vector<int>> distances;
    /// Optional per-CPU capacities (asymmetric machines); empty = all 1024.
    std::vector<int> capacities;
    /// node_reclaim_distance: 30 (RECLAIM_DISTANCE); AMD Zen (family 17h/19h) sets 32 in init_amd_zn().
    int node_reclaim_distance = 30;
};

/// A machine. Immutable once built; shared by every simulation that runs on it.
class Topology {
public:
    /// Builds from explicit per-CPU records (validated: dense numbering, nesting).
    Topology(std::string name, Arch arch, std::vector<CpuInfo> cpus, std::vector<std::vector<int>> distances);

    static Topology fromParams(const TopologyParams& p);
    /// A named preset (see presetNames()); throws TopologyError for an unknown name.
    static Topology preset(const std::string& name);
    static std::vector<std::string> presetNames();
    /// The presets with exactly `n` CPUs (to suggest the machine a trace was recorded on).
    static std::vector<std::string> presetsWithCpus(int n);
    /// One-line description of a preset (for `schedlab-cli topology --list`).
    static std::string presetDescription(const std::string& name);

    const std::string& name() const { return m_name; }
    Arch arch() const { return m_arch; }
    int nrCpus() const { return int(m_cpus.size()); }
    int nrNodes() const { return int(m_distance.size()); }
    const CpuInfo& cpu(int c) const { return m_cpus[c]; }
    const std::vector<CpuInfo>& cpus() const { return m_cpus; }
    int distance(int nodeA, int nodeB) const { return m_distance[nodeA][nodeB]; }
    const std::vector<std::vector<int>>& distances() const { return m_distance; }

    const CpuMask& allCpus() const { return m_all; }
    const CpuMask& smtMask(int c) const { return m_smt[c]; }
    const CpuMask& clusterMask(int c) const { return m_cluster[c]; }
    const CpuMask& llcMask(int c) const { return m_llc[c]; }
    const CpuMask& dieMask(int c) const { return m_die[c]; }
    const CpuMask& packageMask(int c) const { return m_package[c]; }
    const CpuMask& nodeMask(int node) const { return m_node[node]; }

    int nrCores() const { return m_nrCores; }
    int nrLlcs() const { return m_nrLlcs; }
    int nrPackages() const { return m_nrPackages; }
    int threadsPerCoreMax() const { return m_maxThreads; }
    /// node_reclaim_distance: NUMA levels beyond it lose BALANCE_EXEC/FORK and WAKE_AFFINE.
    int nodeReclaimDistance() const { return m_nodeReclaimDistance; }
    void setNodeReclaimDistance(int d) { m_nodeReclaimDistance = d; }
    /// True when some package holds more than one NUMA node (x86 then drops DIE).
    bool numaInPackage() const { return m_numaInPackage; }

    /// The hardware tree (Machine > Package > Die > Llc > Cluster > Core > Thread).
    const TopoGraph& graph() const { return m_graph; }
    /// CPUs below a vertex of the tree, found by walking the graph.
    CpuMask cpusBelow(TopoGraph::vertex_descriptor v) const;

    /// Human summary: "2 sockets x 12 LLCs x 8 cores x 2 threads = 384 CPUs, 2 nodes".
    std::string summary() const;

private:
    void buildGraphAndMasks();

    std::string m_name;
    Arch m_arch;
    std::vector<CpuInfo> m_cpus;
    std::vector<std::vector<int>> m_distance;
    CpuMask m_all;
    std::vector<CpuMask> m_smt, m_cluster, m_llc, m_die, m_package, m_node;
    int m_nrCores = 0, m_nrLlcs = 0, m_nrPackages = 0, m_maxThreads = 1;
    bool m_numaInPackage = false;
    int m_nodeReclaimDistance = 30;
    TopoGraph m_graph;
};

const char* archName(Arch a);
const char* numberingName(Numbering n);

/// Distance between two CPUs, as the cost model and the migration matrices see it.
enum class DistClass : std::uint8_t { same_cpu, smt, llc, cross_llc, cross_node, cross_socket, count_ };
inline constexpr int kDistClasses = int(DistClass::count_);
const char* toString(DistClass d);
/// Distance class between two CPUs (SMT sibling, same LLC, other LLC, other node, other socket).
DistClass distClass(const Topology& t, int a, int b);

}  // namespace sched
