// SPDX-License-Identifier: GPL-2.0-or-later
// sched_domain.h: sched domains and groups built from a Topology the way
// Linux 6.1 builds them (kernel/sched/topology.c: build_sched_domains, sd_init,
// build_sched_groups / build_overlap_sched_groups, cpu_attach_domain degeneration,
// update_top_cache_domain).
#pragma once

#include "util/cpumask.h"
#include "topology/topology.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sched {

/// SD flag values of include/linux/sched/sd_flags.h (6.1 order).
enum SdFlag : std::uint32_t {
    SD_BALANCE_NEWIDLE = 0x1,
    SD_BALANCE_EXEC = 0x2,
    SD_BALANCE_FORK = 0x4,
    SD_BALANCE_WAKE = 0x8,
    SD_WAKE_AFFINE = 0x10,
    SD_ASYM_CPUCAPACITY = 0x20,
    SD_ASYM_CPUCAPACITY_FULL = 0x40,
    SD_SHARE_CPUCAPACITY = 0x80,
    SD_SHARE_PKG_RESOURCES = 0x100,
    SD_SERIALIZE = 0x200,
    SD_ASYM_PACKING = 0x400,
    SD_PREFER_SIBLING = 0x800,
    SD_OVERLAP = 0x1000,
    SD_NUMA = 0x2000,
};
/// Flags with SDF_NEEDS_GROUPS (all but WAKE_AFFINE).
inline constexpr std::uint32_t SD_DEGENERATE_GROUPS_MASK = 0x3fff & ~std::uint32_t(SD_WAKE_AFFINE);
/// "BALANCE_NEWIDLE|WAKE_AFFINE|..." as the kernel's debug output names them.
std::string sdFlagsToString(std::uint32_t flags);

/// Default node_reclaim_distance (RECLAIM_DISTANCE); see Topology::nodeReclaimDistance().
inline constexpr int kNodeReclaimDistance = 30;

/// One sched domain of one CPU (after degeneration). Static properties only;
/// the mutable per-domain state lives in MachineState.
struct SchedDomain {
    std::string name;  ///< SMT, CLS, CACHE, MC, DIE, NODE, NUMA
    int level = 0;     ///< index in the per-CPU list, 0 = lowest
    CpuMask span;
    int span_weight = 0;
    std::uint32_t flags = 0;
    int imbalance_pct = 117;
    int cache_nice_tries = 0;
    int min_interval = 0;  ///< ms
    int max_interval = 0;  ///< ms
    int busy_factor = 16;
    int balance_interval = 0;  ///< ms (initial value)
    int imb_numa_nr = 0;
    int numa_distance = 0;        ///< for NUMA levels: the SLIT distance of the level
    int shared_id = -1;           ///< sd->shared: first CPU of the span, for SHARE_PKG_RESOURCES domains
    std::vector<CpuMask> groups;  ///< sd->groups in list order (the CPU's own group first)
};

/// The domains of every CPU, plus the derived per-CPU pointers.
class SchedDomains {
public:
    /// Builds for `topo`. `levelsBuilt` (optional) receives the pre-degeneration level names.
    explicit SchedDomains(const Topology& topo);

    int nrCpus() const { return int(m_perCpu.size()); }
    /// Domains of `cpu`, lowest first (for_each_domain order).
    const std::vector<SchedDomain>& domains(int cpu) const { return m_perCpu[cpu]; }
    /// Index of sd_llc in domains(cpu), or -1.
    int sdLlcIndex(int cpu) const { return m_sdLlc[cpu]; }
    const SchedDomain* sd_llc(int cpu) const { return m_sdLlc[cpu] < 0 ? nullptr : &m_perCpu[cpu][m_sdLlc[cpu]]; }
    int sd_llc_size(int cpu) const { return m_sdLlcSize[cpu]; }
    int sd_llc_id(int cpu) const { return m_sdLlcId[cpu]; }
    /// sd_llc_shared: id (first CPU of the LLC domain span) or -1 when there is no LLC domain.
    int sd_llc_shared(int cpu) const { return m_sdLlc[cpu] < 0 ? -1 : m_sdLlcId[cpu]; }
    const SchedDomain* sd_numa(int cpu) const { return m_sdNuma[cpu] < 0 ? nullptr : &m_perCpu[cpu][m_sdNuma[cpu]]; }
    const SchedDomain* sd_asym_cpucapacity(int cpu) const { return m_sdAsymCap[cpu] < 0 ? nullptr : &m_perCpu[cpu][m_sdAsymCap[cpu]]; }
    bool cpus_share_cache(int a, int b) const { return m_sdLlcId[a] == m_sdLlcId[b]; }
    /// cpus_share_l2c() of the L2 series (Desnoyers, v3 2023-08-22): sd_l2c_id, the first CPU of
    /// topology_cluster_cpumask(cpu), i.e. the CPUs sharing an L2 (the SMT siblings where no
    /// cluster level exists).
    bool cpus_share_l2c(int a, int b) const { return a == b || m_sdL2cId[a] == m_sdL2cId[b]; }
    /// cpu_smt_mask(cpu)
    const CpuMask& smtMask(int cpu) const { return m_smt[cpu]; }
    /// sched_smt_active(): some core has more than one thread.
    bool smtActive() const { return m_smtActive; }
    /// sched_asym_cpucap_active(): some domain has SD_ASYM_CPUCAPACITY.
    bool asymCpucapActive() const { return m_asymCap; }
    /// Names of the topology levels before degeneration, lowest first.
    const std::vector<std::string>& levelNames() const { return m_levelNames; }
    /// Lowest domain of `cpu` whose span contains `other` (for ttwu_wake_remote), or -1.
    int lowestSpanning(int cpu, int other) const;

private:
    /// update_top_cache_domain(): sd_llc, sd_llc_size, sd_llc_id, sd_numa, sd_asym_cpucapacity of `cpu`.
    void updateTopCacheDomain(int cpu);

    std::vector<std::vector<SchedDomain>> m_perCpu;
    std::vector<int> m_sdLlc, m_sdLlcSize, m_sdLlcId, m_sdL2cId, m_sdNuma, m_sdAsymCap;
    std::vector<CpuMask> m_smt;
    bool m_smtActive = false, m_asymCap = false;
    std::vector<std::string> m_levelNames;
};

}  // namespace sched
