// SPDX-License-Identifier: GPL-2.0-or-later
// trace_snapshot.h: a recorded trace shown by the same views as a simulated run. The state at a
// cursor time is rebuilt from the trace's events into the simulator's Snapshot: curr and
// nr_running per CPU, recent migrations with their cause where the trace tells, rq-length
// samples, and the wakeup latency histogram (sched_waking to the switch-in).
#pragma once

#include "sim/snapshot.h"
#include "trace/trace.h"

#include <cstdint>
#include <functional>
#include <memory>

namespace sched {

struct TraceViewOptions {
    std::int64_t arrow_span_ns = 5'000'000;  ///< migrations kept for arrows, before the cursor
    std::size_t sample_rows = 2000;          ///< rq-length samples, evenly spaced from the start to the cursor
    std::int64_t sample_period_ns = 0;       ///< a fixed sampling period instead (at most sample_rows samples)
    std::int64_t latency_from = INT64_MIN;   ///< wakeup latencies of switch-ins from this time on only
};

/// The trace's state at time `at` (ns, clamped to the trace's span). `label` names the side.
/// Migrations: recorded on the waker's CPU between a task's sched_waking and its wakeup =
/// placement at wakeup; after sched_wakeup_new's fork = fork; any other = load balance
/// (reported as "periodic": the trace does not say which balance moved it).
Snapshot traceSnapshot(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t at, const std::string& label,
                       const TraceViewOptions& o = {});

struct TraceIndexOptions {
    std::size_t checkpoint_events = 65536;  ///< a copy of the replay's state every this many events
    std::size_t rows = 8192;                ///< rq-length samples over the whole span
    /// Called with the share done (0..1) every 65536 events; false cancels (cancelled()).
    std::function<bool(double)> progress;
};

struct TraceWalker;

/// A trace prepared for a moving cursor: the replay's state every checkpoint_events events and
/// the rq lengths at `rows` instants over the whole span, so that snapshot(at) replays at most
/// one interval instead of the whole trace up to `at`. snapshot(at) equals traceSnapshot(at)
/// but for the rq samples, which come from the index's instants (thinned to sample_rows).
/// Keeps a reference to `t`.
class TraceIndex {
public:
    TraceIndex(const Trace& t, std::shared_ptr<const Topology> topo, const TraceIndexOptions& o = {});
    ~TraceIndex();
    TraceIndex(const TraceIndex&) = delete;
    TraceIndex& operator=(const TraceIndex&) = delete;

    Snapshot snapshot(std::int64_t at, const std::string& label, const TraceViewOptions& o = {}) const;
    bool cancelled() const { return m_cancelled; }
    std::size_t checkpoints() const { return m_checkpoints.size(); }
    std::int64_t samplePeriod() const { return m_period; }

private:
    struct Checkpoint {
        std::size_t event;             ///< the state before this event
        std::int64_t max_time_before;  ///< the latest time of the events before it
        std::shared_ptr<const TraceWalker> state;
    };
    const Trace& m_t;
    std::shared_ptr<const Topology> m_topo;
    std::int64_t m_t0 = 0, m_t1 = 0, m_period = 1;
    std::vector<Checkpoint> m_checkpoints;
    std::vector<std::int64_t> m_rowT;      ///< sample instants
    std::vector<std::int64_t> m_rowReady;  ///< the cursor from which the plain replay has taken the sample
    std::vector<std::uint16_t> m_rowLen;   ///< nr_running per CPU per row
    bool m_cancelled = false;
};

/// The trace's runqueue lengths (nr_running, the running task included, as rebuilt from the
/// events) every `period_ns` from its first event, in the seed's bpftrace CSV layout
/// (rq_csv.h; times are ns since the first event).
std::string traceRqLenCsv(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t period_ns = 20'000'000);

}  // namespace sched
