// SPDX-License-Identifier: GPL-2.0-or-later
// sched_domain.cpp: build_sched_domains() of Linux 6.1 for a Topology.
// Mirrors kernel/sched/topology.c: the arch topology levels (+ NODE and NUMA
// levels from sched_init_numa), sd_init, group construction (plain and overlap),
// imb_numa_nr, cpu_attach_domain's degeneration, and update_top_cache_domain.
#include "kernel/sched_domain.h"

#include <algorithm>
#include <map>
#include <set>

namespace sched {

std::string sdFlagsToString(std::uint32_t flags) {
    static const std::pair<std::uint32_t, const char*> names[] = {
        {SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"},
        {SD_BALANCE_EXEC, "SD_BALANCE_EXEC"},
        {SD_BALANCE_FORK, "SD_BALANCE_FORK"},
        {SD_BALANCE_WAKE, "SD_BALANCE_WAKE"},
        {SD_WAKE_AFFINE, "SD_WAKE_AFFINE"},
        {SD_ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"},
        {SD_ASYM_CPUCAPACITY_FULL, "SD_ASYM_CPUCAPACITY_FULL"},
        {SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"},
        {SD_SHARE_PKG_RESOURCES, "SD_SHARE_PKG_RESOURCES"},
        {SD_SERIALIZE, "SD_SERIALIZE"},
        {SD_ASYM_PACKING, "SD_ASYM_PACKING"},
        {SD_PREFER_SIBLING, "SD_PREFER_SIBLING"},
        {SD_OVERLAP, "SD_OVERLAP"},
        {SD_NUMA, "SD_NUMA"},
    };
    std::string s;
    for (auto& [f, n] : names)
        if (flags & f) {
            s += n;
            s += ' ';
        }
    if (!s.empty()) s.pop_back();
    return s;
}

namespace {

enum class MaskKind { Smt, Cluster, Llc, Die, Node, NumaLevel };

struct Level {
    std::string name;
    MaskKind mask;
    std::uint32_t flags;   // tl->sd_flags()
    int numaLevel = -1;    // for NODE (0) and NUMA (>=1)
    bool overlap = false;  // SDTL_OVERLAP
};

// A domain under construction (pre-degeneration), one per (cpu, level).
struct BuildSd {
    bool exists = false;
    SchedDomain sd;
    int child = -1;  // level index of the child, -1 at the bottom
};

std::vector<Level> archLevels(const Topology& t, std::vector<int>& numaDistances) {
    std::vector<Level> lv;
    const std::uint32_t smtFlags = SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES;
    switch (t.arch()) {
    case Arch::X86:
        lv.push_back({"SMT", MaskKind::Smt, smtFlags});
        lv.push_back({"CLS", MaskKind::Cluster, SD_SHARE_PKG_RESOURCES});
        lv.push_back({"MC", MaskKind::Llc, SD_SHARE_PKG_RESOURCES});
        // x86_numa_in_package_topology has no DIE level.
        if (!t.numaInPackage()) lv.push_back({"DIE", MaskKind::Node, 0});  // cpu_cpu_mask = the node
        break;
    case Arch::Power:
        lv.push_back({"SMT", MaskKind::Smt, smtFlags});
        lv.push_back({"CACHE", MaskKind::Llc, SD_SHARE_PKG_RESOURCES});
        lv.push_back({"MC", MaskKind::Die, 0});
        lv.push_back({"DIE", MaskKind::Node, 0});
        break;
    case Arch::Arm64:
        lv.push_back({"SMT", MaskKind::Smt, smtFlags});
        lv.push_back({"CLS", MaskKind::Cluster, SD_SHARE_PKG_RESOURCES});
        lv.push_back({"MC", MaskKind::Llc, SD_SHARE_PKG_RESOURCES});
        lv.push_back({"DIE", MaskKind::Node, 0});
        break;
    }
    // sched_init_numa: unique distances; NODE identity level, then one NUMA level per remote distance.
    std::set<int> uniq;
    for (int a = 0; a < t.nrNodes(); ++a)
        for (int b = 0; b < t.nrNodes(); ++b) uniq.insert(t.distance(a, b));
    numaDistances.assign(uniq.begin(), uniq.end());
    lv.push_back({"NODE", MaskKind::Node, 0, 0, false});
    for (int j = 1; j < int(numaDistances.size()); ++j) lv.push_back({"NUMA", MaskKind::NumaLevel, SD_NUMA, j, true});
    return lv;
}

using CapSpans = std::map<int, CpuMask>;

// topology.c: asym_cpu_capacity_scan()
// Capacity classes for asym_cpu_capacity_classify.
CapSpans asymCpuCapacityScan(const Topology& topo) {
    CapSpans capSpans;
    for (const auto& c : topo.cpus()) capSpans[c.capacity].set(c.cpu);
    return capSpans;
}

// topology.c: asym_cpu_capacity_classify()
std::uint32_t asymCpuCapacityClassify(const CpuMask& sdSpan, const CpuMask& cpuMap, const CapSpans& capSpans) {
    int count = 0, miss = 0;
    for (auto& [cap, span] : capSpans) {
        if (sdSpan.intersects(span)) ++count;
        else if (cpuMap.intersects(span)) ++miss;
    }
    if (count < 2) return 0;
    return miss ? SD_ASYM_CPUCAPACITY : (SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL);
}

/// tl->mask(cpu): the CPUs of `cpu`'s level `l` (NUMA levels: the nodes within the level's distance).
CpuMask levelMask(const Topology& topo, const std::vector<int>& numaDist, const Level& l, int cpu) {
    switch (l.mask) {
    case MaskKind::Smt: return topo.smtMask(cpu);
    case MaskKind::Cluster: return topo.clusterMask(cpu);
    case MaskKind::Llc: return topo.llcMask(cpu);
    case MaskKind::Die: return topo.dieMask(cpu);
    case MaskKind::Node: return topo.nodeMask(topo.cpu(cpu).node);
    case MaskKind::NumaLevel: {
        CpuMask m;
        const int node = topo.cpu(cpu).node;
        for (int k = 0; k < topo.nrNodes(); ++k)
            if (topo.distance(node, k) <= numaDist[l.numaLevel]) m |= topo.nodeMask(k);
        return m;
    }
    }
    return {};
}

/// What build_sched_domains() works on: the topology levels, cpu_map, the capacity classes, and
/// the domains under construction, b[cpu][level].
struct DomainBuild {
    const Topology& topo;
    const int n;
    const CpuMask cpuMap;
    std::vector<int> numaDist;  // filled by archLevels() (declared before `levels`, which it initialises)
    const std::vector<Level> levels;
    const int L;
    const CapSpans capSpans;
    std::vector<std::vector<BuildSd>> b;

    explicit DomainBuild(const Topology& t)
        : topo(t),
          n(t.nrCpus()),
          cpuMap(t.allCpus()),
          levels(archLevels(t, numaDist)),
          L(int(levels.size())),
          capSpans(asymCpuCapacityScan(t)),
          b(n, std::vector<BuildSd>(L)) {}
};

// topology.c: sd_init()
// `child`: the domain below, whose SD_PREFER_SIBLING an asymmetric-capacity domain clears.
SchedDomain sdInit(const DomainBuild& d, const Level& lvl, int cpu, SchedDomain* child) {
    SchedDomain sd;
    CpuMask raw = levelMask(d.topo, d.numaDist, lvl, cpu);
    const int sdWeight = raw.weight();
    sd.name = lvl.name;
    sd.min_interval = sdWeight;
    sd.max_interval = 2 * sdWeight;
    sd.busy_factor = 16;
    sd.imbalance_pct = 117;
    sd.cache_nice_tries = 0;
    sd.balance_interval = sdWeight;
    sd.flags = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING | lvl.flags;
    sd.span = raw & d.cpuMap;
    sd.flags |= asymCpuCapacityClassify(sd.span, d.cpuMap, d.capSpans);
    if ((sd.flags & SD_ASYM_CPUCAPACITY) && child) child->flags &= ~std::uint32_t(SD_PREFER_SIBLING);
    if (sd.flags & SD_SHARE_CPUCAPACITY) {
        sd.imbalance_pct = 110;
    } else if (sd.flags & SD_SHARE_PKG_RESOURCES) {
        sd.imbalance_pct = 117;
        sd.cache_nice_tries = 1;
    } else if (sd.flags & SD_NUMA) {
        sd.cache_nice_tries = 2;
        sd.flags &= ~std::uint32_t(SD_PREFER_SIBLING);
        sd.flags |= SD_SERIALIZE;
        sd.numa_distance = d.numaDist[lvl.numaLevel];
        if (d.numaDist[lvl.numaLevel] > d.topo.nodeReclaimDistance()) sd.flags &= ~std::uint32_t(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
    } else {
        sd.cache_nice_tries = 1;
    }
    if (sd.flags & SD_SHARE_PKG_RESOURCES) sd.shared_id = sd.span.first();
    return sd;
}

// topology.c: build_sched_domain()
// `cpu`'s domain at level `li` above the one at level `child` (-1: the bottom one).
void buildSchedDomain(DomainBuild& d, int cpu, int li, int child) {
    BuildSd& bs = d.b[cpu][li];
    bs.sd = sdInit(d, d.levels[li], cpu, child >= 0 ? &d.b[cpu][child].sd : nullptr);
    // build_sched_domain: "arch topology borken" fix-up.
    if (child >= 0 && !d.b[cpu][child].sd.span.subsetOf(bs.sd.span)) bs.sd.span |= d.b[cpu][child].sd.span;
    bs.child = child;
}

// topology.c: build_sched_domains(), "Set up domains for CPUs specified by the cpu_map"
void buildDomains(DomainBuild& d) {
    for (int cpu = 0; cpu < d.n; ++cpu) {
        int child = -1;
        for (int li = 0; li < d.L; ++li) {
            buildSchedDomain(d, cpu, li, child);
            BuildSd& bs = d.b[cpu][li];
            SchedDomain& sd = bs.sd;
            if (d.levels[li].overlap) sd.flags |= SD_OVERLAP;
            sd.span_weight = sd.span.weight();
            bs.exists = true;
            child = li;
            if (sd.span == d.cpuMap) break;
        }
    }
}

/// The span of the child of `bi[lvl]` (bi: one CPU's domains), or an empty mask at the bottom.
CpuMask childSpan(const std::vector<BuildSd>& bi, int lvl) { return bi[lvl].child >= 0 ? bi[bi[lvl].child].sd.span : CpuMask{}; }

// topology.c: get_group()
// The group that CPU i's domain at level li contributes: its child's span, or CPU i alone.
CpuMask getGroup(const DomainBuild& d, int i, int li) {
    const BuildSd& bs = d.b[i][li];
    if (!bs.exists) return CpuMask::single(i);
    return bs.child >= 0 ? d.b[i][bs.child].sd.span : CpuMask::single(i);
}

// topology.c: build_sched_groups()
void buildSchedGroups(DomainBuild& d, int cpu, int li) {
    SchedDomain& sd = d.b[cpu][li].sd;
    const CpuMask span = sd.span;
    CpuMask covered;
    for_each_cpu_wrap(span, cpu, d.n, [&](int i) {
        if (covered.test(i)) return false;
        const CpuMask g = getGroup(d, i, li);
        covered |= g;
        sd.groups.push_back(g);
        return false;
    });
}

// topology.c: find_descended_sibling()
// For NUMA diameters >= 3: the level of the sibling's domain (bi: its CPU's domains) whose child
// stays within `span`, past the domains that degenerate.
int findDescendedSibling(const std::vector<BuildSd>& bi, int s, const CpuMask& span) {
    while (bi[s].child >= 0 && !childSpan(bi, s).subsetOf(span)) s = bi[s].child;
    while (bi[s].child >= 0 && childSpan(bi, s) == bi[s].sd.span) s = bi[s].child;
    return s;
}

// topology.c: build_group_from_child_sched_domain()
CpuMask buildGroupFromChildSchedDomain(const std::vector<BuildSd>& bi, int s) { return bi[s].child >= 0 ? childSpan(bi, s) : bi[s].sd.span; }

// topology.c: build_overlap_sched_groups()
void buildOverlapSchedGroups(DomainBuild& d, int cpu, int li) {
    SchedDomain& sd = d.b[cpu][li].sd;
    const CpuMask span = sd.span;
    CpuMask covered;
    for_each_cpu_wrap(span, cpu, d.n, [&](int i) {
        if (covered.test(i)) return false;
        const std::vector<BuildSd>& bi = d.b[i];
        if (!bi[li].exists || !bi[li].sd.span.test(i)) return false;
        int s = li;
        // find_descended_sibling for NUMA diameters >= 3.
        if (bi[s].child >= 0 && !childSpan(bi, s).subsetOf(span)) s = findDescendedSibling(bi, s, span);
        const CpuMask g = buildGroupFromChildSchedDomain(bi, s);
        covered |= g;
        sd.groups.push_back(g);
        return false;
    });
}

// topology.c: build_sched_domains(), "Build the groups for the domains"
void buildGroups(DomainBuild& d) {
    for (int cpu = 0; cpu < d.n; ++cpu) {
        for (int li = 0; li < d.L; ++li) {
            const BuildSd& bs = d.b[cpu][li];
            if (!bs.exists) break;
            if (bs.sd.flags & SD_OVERLAP) buildOverlapSchedGroups(d, cpu, li);
            else buildSchedGroups(d, cpu, li);
        }
    }
}

// topology.c: build_sched_domains(), "Calculate an allowed NUMA imbalance such that LLCs do not get imbalanced"
void setImbNumaNr(DomainBuild& d) {
    auto& b = d.b;
    const int L = d.L;
    for (int cpu = 0; cpu < d.n; ++cpu) {
        int imb = 0, imbSpan = 1;
        for (int li = 0; li < L && b[cpu][li].exists; ++li) {
            SchedDomain& sd = b[cpu][li].sd;
            int ch = b[cpu][li].child;
            if (!(sd.flags & SD_SHARE_PKG_RESOURCES) && ch >= 0 && (b[cpu][ch].sd.flags & SD_SHARE_PKG_RESOURCES)) {
                int nrLlcs = sd.span_weight / b[cpu][ch].sd.span_weight;
                imb = nrLlcs == 1 ? (sd.span_weight >> 3) : nrLlcs;
                imb = std::max(1, imb);
                sd.imb_numa_nr = imb;
                int top = li + 1;
                while (top < L && b[cpu][top].exists && !(b[cpu][top].sd.flags & SD_NUMA)) ++top;
                imbSpan = (top < L && b[cpu][top].exists) ? b[cpu][top].sd.span_weight : sd.span_weight;
            } else {
                int factor = std::max(1, sd.span_weight / imbSpan);
                sd.imb_numa_nr = imb * factor;
            }
        }
    }
}

// topology.c: sd_degenerate()
bool sdDegenerate(const SchedDomain& sd) {
    if (sd.span_weight == 1) return true;
    if ((sd.flags & SD_DEGENERATE_GROUPS_MASK) && sd.groups.size() > 1) return false;
    if (sd.flags & SD_WAKE_AFFINE) return false;
    return true;
}

// topology.c: sd_parent_degenerate()
bool sdParentDegenerate(const SchedDomain& sd, const SchedDomain& parent) {
    if (sdDegenerate(parent)) return true;
    if (!(sd.span == parent.span)) return false;
    std::uint32_t pflags = parent.flags;
    if (parent.groups.size() == 1) pflags &= ~SD_DEGENERATE_GROUPS_MASK;
    if (~sd.flags & pflags) return false;
    return true;
}

/// One CPU's domains as built (bi: its b[cpu]), lowest first.
std::vector<SchedDomain> builtChain(const std::vector<BuildSd>& bi) {
    std::vector<SchedDomain> chain;
    for (int li = 0; li < int(bi.size()) && bi[li].exists; ++li) chain.push_back(bi[li].sd);
    return chain;
}

// topology.c: cpu_attach_domain()
// Its removal of the degenerate domains (its update_top_cache_domain() is SchedDomains::updateTopCacheDomain()).
std::vector<SchedDomain> cpuAttachDomain(std::vector<SchedDomain> chain) {
    // for (tmp = sd; tmp; ) { parent = tmp->parent; if degenerate(tmp,parent) remove parent ... }
    size_t t = 0;
    while (t + 1 < chain.size()) {
        if (sdParentDegenerate(chain[t], chain[t + 1])) {
            if (chain[t + 1].flags & SD_PREFER_SIBLING) chain[t].flags |= SD_PREFER_SIBLING;
            chain.erase(chain.begin() + long(t) + 1);
        } else {
            ++t;
        }
    }
    if (!chain.empty() && sdDegenerate(chain[0])) chain.erase(chain.begin());
    for (size_t i = 0; i < chain.size(); ++i) chain[i].level = int(i);
    return chain;
}

// sched.h: highest_flag_domain()
// Index in `ds` (lowest first) of the highest domain with `flag`, or -1: stops at the first gap.
int highestFlagDomain(const std::vector<SchedDomain>& ds, std::uint32_t flag) {
    int h = -1;
    for (int i = 0; i < int(ds.size()); ++i) {
        if (!(ds[i].flags & flag)) break;
        h = i;
    }
    return h;
}

// sched.h: lowest_flag_domain()
int lowestFlagDomain(const std::vector<SchedDomain>& ds, std::uint32_t flag) {
    for (int i = 0; i < int(ds.size()); ++i)
        if (ds[i].flags & flag) return i;
    return -1;
}

}  // namespace

SchedDomains::SchedDomains(const Topology& topo) {
    const int n = topo.nrCpus();
    DomainBuild d(topo);
    for (auto& l : d.levels) m_levelNames.push_back(l.name);

    // 1. build_sched_domain for every CPU and level, stopping once the span covers cpu_map.
    buildDomains(d);
    // 2. Groups (build_sched_groups / build_overlap_sched_groups), before degeneration.
    buildGroups(d);
    // 3. imb_numa_nr (computed on the full, pre-degeneration hierarchy).
    setImbNumaNr(d);

    // 4. cpu_attach_domain: remove degenerate domains.
    m_perCpu.assign(n, {});
    for (int cpu = 0; cpu < n; ++cpu) m_perCpu[cpu] = cpuAttachDomain(builtChain(d.b[cpu]));

    // 5. update_top_cache_domain and the static keys.
    m_sdLlc.assign(n, -1);
    m_sdLlcSize.assign(n, 1);
    m_sdLlcId.assign(n, 0);
    m_sdL2cId.assign(n, 0);
    m_sdNuma.assign(n, -1);
    m_sdAsymCap.assign(n, -1);
    m_smt.assign(n, {});
    for (int cpu = 0; cpu < n; ++cpu) {
        updateTopCacheDomain(cpu);
        for (auto& dom : m_perCpu[cpu])
            if (dom.flags & SD_ASYM_CPUCAPACITY) m_asymCap = true;
        m_smt[cpu] = topo.smtMask(cpu);
        m_sdL2cId[cpu] = topo.clusterMask(cpu).first();
        if (m_smt[cpu].weight() > 1) m_smtActive = true;
    }
}

// topology.c: update_top_cache_domain()
void SchedDomains::updateTopCacheDomain(int cpu) {
    const auto& ds = m_perCpu[cpu];
    const int h = highestFlagDomain(ds, SD_SHARE_PKG_RESOURCES);
    m_sdLlc[cpu] = h;
    m_sdLlcId[cpu] = h >= 0 ? ds[h].span.first() : cpu;
    m_sdLlcSize[cpu] = h >= 0 ? ds[h].span_weight : 1;
    m_sdNuma[cpu] = lowestFlagDomain(ds, SD_NUMA);
    m_sdAsymCap[cpu] = lowestFlagDomain(ds, SD_ASYM_CPUCAPACITY_FULL);
}

int SchedDomains::lowestSpanning(int cpu, int other) const {
    const auto& ds = m_perCpu[cpu];
    for (int i = 0; i < int(ds.size()); ++i)
        if (ds[i].span.test(other)) return i;
    return -1;
}

}  // namespace sched
