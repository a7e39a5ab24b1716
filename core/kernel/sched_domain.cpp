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

}  // namespace

SchedDomains::SchedDomains(const Topology& topo) {
    const int n = topo.nrCpus();
    const CpuMask cpuMap = topo.allCpus();
    std::vector<int> numaDist;
    const std::vector<Level> levels = archLevels(topo, numaDist);
    for (auto& l : levels) m_levelNames.push_back(l.name);
    const int L = int(levels.size());

    // Capacity classes for asym_cpu_capacity_classify.
    std::map<int, CpuMask> capSpans;
    for (const auto& c : topo.cpus()) capSpans[c.capacity].set(c.cpu);

    auto levelMask = [&](const Level& l, int cpu) -> CpuMask {
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
    };

    // 1. build_sched_domain for every CPU and level, stopping once the span covers cpu_map.
    std::vector<std::vector<BuildSd>> b(n, std::vector<BuildSd>(L));
    for (int cpu = 0; cpu < n; ++cpu) {
        int child = -1;
        for (int li = 0; li < L; ++li) {
            const Level& lvl = levels[li];
            BuildSd& bs = b[cpu][li];
            SchedDomain& sd = bs.sd;
            CpuMask raw = levelMask(lvl, cpu);
            const int sdWeight = raw.weight();
            sd.name = lvl.name;
            sd.min_interval = sdWeight;
            sd.max_interval = 2 * sdWeight;
            sd.busy_factor = 16;
            sd.imbalance_pct = 117;
            sd.cache_nice_tries = 0;
            sd.balance_interval = sdWeight;
            sd.flags = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING | lvl.flags;
            sd.span = raw & cpuMap;
            // asym_cpu_capacity_classify
            int count = 0, miss = 0;
            for (auto& [cap, span] : capSpans) {
                if (sd.span.intersects(span)) ++count;
                else if (cpuMap.intersects(span)) ++miss;
            }
            if (count >= 2) sd.flags |= miss ? SD_ASYM_CPUCAPACITY : (SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL);
            if ((sd.flags & SD_ASYM_CPUCAPACITY) && child >= 0) b[cpu][child].sd.flags &= ~std::uint32_t(SD_PREFER_SIBLING);
            if (sd.flags & SD_SHARE_CPUCAPACITY) {
                sd.imbalance_pct = 110;
            } else if (sd.flags & SD_SHARE_PKG_RESOURCES) {
                sd.imbalance_pct = 117;
                sd.cache_nice_tries = 1;
            } else if (sd.flags & SD_NUMA) {
                sd.cache_nice_tries = 2;
                sd.flags &= ~std::uint32_t(SD_PREFER_SIBLING);
                sd.flags |= SD_SERIALIZE;
                sd.numa_distance = numaDist[lvl.numaLevel];
                if (numaDist[lvl.numaLevel] > topo.nodeReclaimDistance())
                    sd.flags &= ~std::uint32_t(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
            } else {
                sd.cache_nice_tries = 1;
            }
            if (sd.flags & SD_SHARE_PKG_RESOURCES) sd.shared_id = sd.span.first();
            // build_sched_domain: "arch topology borken" fix-up.
            if (child >= 0 && !b[cpu][child].sd.span.subsetOf(sd.span)) sd.span |= b[cpu][child].sd.span;
            if (lvl.overlap) sd.flags |= SD_OVERLAP;
            sd.span_weight = sd.span.weight();
            bs.exists = true;
            bs.child = child;
            child = li;
            if (sd.span == cpuMap) break;
        }
    }

    // 2. Groups (build_sched_groups / build_overlap_sched_groups), before degeneration.
    auto childSpanOf = [&](int cpu, int li) -> CpuMask {
        const BuildSd& bs = b[cpu][li];
        return bs.child >= 0 ? b[cpu][bs.child].sd.span : CpuMask::single(cpu);
    };
    for (int cpu = 0; cpu < n; ++cpu) {
        for (int li = 0; li < L; ++li) {
            BuildSd& bs = b[cpu][li];
            if (!bs.exists) break;
            const CpuMask span = bs.sd.span;
            CpuMask covered;
            for_each_cpu_wrap(span, cpu, n, [&](int i) {
                if (covered.test(i)) return false;
                CpuMask g;
                if (bs.sd.flags & SD_OVERLAP) {
                    const BuildSd& sib = b[i][li];
                    if (!sib.exists || !sib.sd.span.test(i)) return false;
                    int s = li;
                    // find_descended_sibling for NUMA diameters >= 3.
                    auto childSpan = [&](int lvl) { return b[i][lvl].child >= 0 ? b[i][b[i][lvl].child].sd.span : CpuMask{}; };
                    if (b[i][s].child >= 0 && !childSpan(s).subsetOf(span)) {
                        while (b[i][s].child >= 0 && !childSpan(s).subsetOf(span)) s = b[i][s].child;
                        while (b[i][s].child >= 0 && childSpan(s) == b[i][s].sd.span) s = b[i][s].child;
                    }
                    g = b[i][s].child >= 0 ? childSpan(s) : b[i][s].sd.span;
                } else {
                    g = b[i][li].exists ? childSpanOf(i, li) : CpuMask::single(i);
                }
                covered |= g;
                bs.sd.groups.push_back(g);
                return false;
            });
        }
    }

    // 3. imb_numa_nr (computed on the full, pre-degeneration hierarchy).
    for (int cpu = 0; cpu < n; ++cpu) {
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

    // 4. cpu_attach_domain: remove degenerate domains.
    auto sdDegenerate = [](const SchedDomain& sd) {
        if (sd.span_weight == 1) return true;
        if ((sd.flags & SD_DEGENERATE_GROUPS_MASK) && sd.groups.size() > 1) return false;
        if (sd.flags & SD_WAKE_AFFINE) return false;
        return true;
    };
    auto parentDegenerate = [&](const SchedDomain& sd, const SchedDomain& parent) {
        if (sdDegenerate(parent)) return true;
        if (!(sd.span == parent.span)) return false;
        std::uint32_t pflags = parent.flags;
        if (parent.groups.size() == 1) pflags &= ~SD_DEGENERATE_GROUPS_MASK;
        if (~sd.flags & pflags) return false;
        return true;
    };
    m_perCpu.assign(n, {});
    for (int cpu = 0; cpu < n; ++cpu) {
        std::vector<SchedDomain> chain;
        for (int li = 0; li < L && b[cpu][li].exists; ++li) chain.push_back(b[cpu][li].sd);
        // for (tmp = sd; tmp; ) { parent = tmp->parent; if degenerate(tmp,parent) remove parent ... }
        size_t t = 0;
        while (t + 1 < chain.size()) {
            if (parentDegenerate(chain[t], chain[t + 1])) {
                if (chain[t + 1].flags & SD_PREFER_SIBLING) chain[t].flags |= SD_PREFER_SIBLING;
                chain.erase(chain.begin() + long(t) + 1);
            } else {
                ++t;
            }
        }
        if (!chain.empty() && sdDegenerate(chain[0])) chain.erase(chain.begin());
        for (size_t i = 0; i < chain.size(); ++i) chain[i].level = int(i);
        m_perCpu[cpu] = std::move(chain);
    }

    // 5. update_top_cache_domain and the static keys.
    m_sdLlc.assign(n, -1);
    m_sdLlcSize.assign(n, 1);
    m_sdLlcId.assign(n, 0);
    m_sdNuma.assign(n, -1);
    m_sdAsymCap.assign(n, -1);
    m_smt.assign(n, {});
    for (int cpu = 0; cpu < n; ++cpu) {
        const auto& ds = m_perCpu[cpu];
        int h = -1;
        for (int i = 0; i < int(ds.size()); ++i) {  // highest_flag_domain: stops at the first gap
            if (!(ds[i].flags & SD_SHARE_PKG_RESOURCES)) break;
            h = i;
        }
        m_sdLlc[cpu] = h;
        m_sdLlcId[cpu] = h >= 0 ? ds[h].span.first() : cpu;
        m_sdLlcSize[cpu] = h >= 0 ? ds[h].span_weight : 1;
        for (int i = 0; i < int(ds.size()); ++i)
            if (ds[i].flags & SD_NUMA) {
                m_sdNuma[cpu] = i;
                break;
            }
        for (int i = 0; i < int(ds.size()); ++i)
            if (ds[i].flags & SD_ASYM_CPUCAPACITY_FULL) {
                m_sdAsymCap[cpu] = i;
                break;
            }
        for (auto& d : ds)
            if (d.flags & SD_ASYM_CPUCAPACITY) m_asymCap = true;
        m_smt[cpu] = topo.smtMask(cpu);
        if (m_smt[cpu].weight() > 1) m_smtActive = true;
    }
}

int SchedDomains::lowestSpanning(int cpu, int other) const {
    const auto& ds = m_perCpu[cpu];
    for (int i = 0; i < int(ds.size()); ++i)
        if (ds[i].span.test(other)) return i;
    return -1;
}

}  // namespace sched
