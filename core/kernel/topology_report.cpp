// SPDX-License-Identifier: GPL-2.0-or-later
// topology_report.cpp: see topology_report.h.
#include "kernel/topology_report.h"

#include <fmt/format.h>

namespace sched {

std::string topologyReport(const Topology& t, const SchedDomains& sd, int onlyCpu) {
    std::string out;
    out += fmt::format("{}\n", t.summary());
    out += fmt::format("arch {}, sched_smt_active {}, asym capacity {}\n", archName(t.arch()), sd.smtActive() ? "yes" : "no",
                       sd.asymCpucapActive() ? "yes" : "no");
    if (t.nrNodes() > 1) {
        out += fmt::format("node distances:\n");
        for (int a = 0; a < t.nrNodes(); ++a) {
            out += fmt::format("  node {:>2}:", a);
            for (int b = 0; b < t.nrNodes(); ++b) out += fmt::format(" {:>3}", t.distance(a, b));
            out += fmt::format("   CPUs {}\n", t.nodeMask(a).toList());
        }
    }
    out += fmt::format("\n");
    for (const auto& c : t.cpus()) {
        if (onlyCpu >= 0 && c.cpu != onlyCpu) continue;
        out += fmt::format("CPU{} attaching sched-domain(s):  (core {}, LLC {}, package {}, node {}{})\n", c.cpu, c.core, c.llc, c.package, c.node,
                           c.capacity != 1024 ? fmt::format(", capacity {}", c.capacity) : "");
        int indent = 1;
        for (const auto& d : sd.domains(c.cpu)) {
            std::string pad(size_t(indent), ' ');
            out += fmt::format("{}domain-{}: span={} level={} weight={} imbalance_pct={} cache_nice_tries={} interval={}..{}ms{}\n", pad, d.level,
                               d.span.toList(), d.name, d.span_weight, d.imbalance_pct, d.cache_nice_tries, d.min_interval, d.max_interval,
                               (d.flags & SD_NUMA) ? fmt::format(" imb_numa_nr={}", d.imb_numa_nr) : "");
            out += fmt::format("{} flags={}\n", pad, sdFlagsToString(d.flags));
            std::string groups;
            for (const auto& g : d.groups) groups += fmt::format(" {{{}}}", g.toList());
            out += fmt::format("{} groups:{}\n", pad, groups);
            ++indent;
        }
        out += fmt::format(" sd_llc_size={} sd_llc_id={}\n", sd.sd_llc_size(c.cpu), sd.sd_llc_id(c.cpu));
    }
    return out;
}

}  // namespace sched
