// SPDX-License-Identifier: GPL-2.0-or-later
// sched_state.cpp: construction of an all-idle machine state.
#include "kernel/sched_state.h"

namespace sched {

const char* currKindName(CurrKind k) {
    switch (k) {
    case CurrKind::Idle: return "idle";
    case CurrKind::Normal: return "normal";
    case CurrKind::SchedIdle: return "sched_idle";
    case CurrKind::Kthread: return "kthread";
    }
    return "?";
}

MachineState::MachineState(std::shared_ptr<const Topology> t) : topo(std::move(t)) {
    sd = std::make_shared<const SchedDomains>(*topo);
    const int n = topo->nrCpus();
    rq.resize(n);
    for (int i = 0; i < n; ++i) {
        rq[i].cpu = i;
        rq[i].cpu_capacity = topo->cpu(i).capacity;
    }
    shared.resize(n);
    for (int i = 0; i < n; ++i) {
        if (sd->sd_llc_shared(i) == i) {
            shared[i].nr_idle_scan = sd->sd_llc_size(i);  // seeded (a fresh sd_llc_shared is zeroed: topology.c: __sdt_alloc())
            shared[i].nr_busy_cpus = sd->sd_llc_size(i);
        }
    }
    avg_scan_cost.assign(n, 0);
}

}  // namespace sched
