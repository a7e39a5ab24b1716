// trace_snapshot.h: a recorded trace shown by the same views as a simulated run. The state at a
// cursor time is rebuilt from the trace's events into the simulator's Snapshot: curr and
// nr_running per CPU, recent migrations with their cause where the trace tells, rq-length
// samples, and the wakeup latency histogram (sched_waking to the switch-in).
#pragma once

#include "simulation.h"
#include "trace.h"

#include <memory>

namespace sched {

struct TraceViewOptions {
    std::int64_t arrow_span_ns = 5'000'000;  ///< migrations kept for arrows, before the cursor
    std::size_t sample_rows = 2000;          ///< rq-length samples, evenly spaced from the start to the cursor
    std::int64_t sample_period_ns = 0;       ///< a fixed sampling period instead (at most sample_rows samples)
};

/// The trace's state at time `at` (ns, clamped to the trace's span). `label` names the side.
/// Migrations: recorded on the waker's CPU between a task's sched_waking and its wakeup =
/// placement at wakeup; after sched_wakeup_new's fork = fork; any other = load balance
/// (reported as "periodic": the trace does not say which balance moved it).
Snapshot traceSnapshot(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t at, const std::string& label,
                       const TraceViewOptions& o = {});

/// The trace's runqueue lengths (nr_running, the running task included, as rebuilt from the
/// events) every `period_ns` from its first event, in the seed's bpftrace CSV layout
/// (rq_csv.h; times are ns since the first event).
std::string traceRqLenCsv(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t period_ns = 20'000'000);

}  // namespace sched
