// SPDX-License-Identifier: GPL-2.0-or-later
// trace_compare.h: two recorded traces side by side (before/after a patch, or a kernel trace
// beside schedlab's export of a comparable run), as a plain-text table in the layout of
// `schedlab-cli compare`: wakeups, context switches, migrations by cause, wakeup latency
// (sched_waking to switch-in), runqueue lengths and busy CPUs, and, with a topology, the
// decision agreement of each with schedlab's wakeup path.
#pragma once

#include "kernel/knobs.h"
#include "topology/topology.h"
#include "trace/trace.h"

#include <memory>
#include <string>

namespace sched {

struct TraceCompareOptions {
    bool workload_only = false;  ///< between WORKLOAD_START and WORKLOAD_END where the traces mark them
    bool agreement = true;       ///< replay both through schedlab's path (agree) with `knobs`
};

/// `base` and `patch` on `topo` (at least as many CPUs as either trace).
/// The agreement rows replay `base` with `baseKnobs` and `patch` with `patchKnobs`.
std::string traceCompareTable(const Trace& base, const Trace& patch, std::shared_ptr<const Topology> topo, const Knobs& baseKnobs,
                              const Knobs& patchKnobs, const TraceCompareOptions& o = {});

}  // namespace sched
