// SPDX-License-Identifier: GPL-2.0-or-later
// trace_snapshot.cpp: a Snapshot from a trace at a cursor time (see trace_snapshot.h).
#include "replay/trace_snapshot.h"
#include "replay/rq_walk.h"

#include "sim/snapshot.h"
#include "util/pid_table.h"
#include "sim/report.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace sched {

// The state of a trace replayed in file order up to some event: what a Snapshot is made of.
// traceSnapshot() runs it from the first event; TraceIndex keeps copies every few thousand
// events and runs it from the nearest one.
struct TraceWalker : TraceRqWalk<TraceWalker> {
    struct TaskState {
        std::int64_t waking = -1;  ///< pending sched_waking time (latency start)
        std::int16_t cpu = -1;
        std::int16_t waking_cpu = -1;
        bool runnable = false;
        bool waking_placement = false;
        bool forked = false;  ///< between sched_wakeup_new and its first run
    };
    int n = 0;
    std::int64_t t0 = 0;
    PidTable<TaskState> tasks;  ///< copied at every TraceIndex checkpoint: kept small
    std::vector<int> nr;
    std::vector<std::int32_t> curr;
    std::vector<std::int64_t> idleSince, lastChange, busy;
    std::vector<double> area;
    std::vector<int> cstate;
    std::uint64_t events = 0, ttwu_count = 0, ttwu_local = 0, ttwu_wakelist = 0, ctx_switches = 0;
    std::array<std::uint64_t, kMigrationCauses> migrations_by_cause{};
    LatencyHistogram wakeup_latency;
    std::int64_t latency_from = INT64_MIN;

    TraceWalker(int ncpus, std::int64_t first)
        : TraceRqWalk(ncpus),
          n(ncpus),
          t0(first),
          nr(std::size_t(ncpus), 0),
          curr(std::size_t(ncpus), 0),
          idleSince(std::size_t(ncpus), first),
          lastChange(std::size_t(ncpus), first),
          busy(std::size_t(ncpus), 0),
          area(std::size_t(ncpus), 0.0),
          cstate(std::size_t(ncpus), -1) {}

    void account(int c, std::int64_t now) {
        const std::size_t k = std::size_t(c);
        const std::int64_t dt = now - lastChange[k];
        if (dt > 0) {
            area[k] += double(dt) * nr[k];
            if (curr[k]) busy[k] += dt;
            lastChange[k] = now;
        }
    }
    void setNr(int c, int d, std::int64_t now) {
        if (c < 0 || c >= n) return;
        account(c, now);
        nr[std::size_t(c)] = std::max(0, nr[std::size_t(c)] + d);
    }
    // TraceRqWalk's hooks: the queue counts feed the rq-length areas; no PELT here.
    TaskState* findTask(std::int32_t pid) { return &tasks[pid]; }
    TaskState& taskAt(std::int32_t pid, std::int64_t) { return tasks[pid]; }
    void beforeQueueChange(TaskState&, std::int64_t) {}
    void sleeping(TaskState&, std::int64_t) {}
    void nrChanged(int c, std::int32_t, int d, std::int64_t now) { setNr(c, d, now); }

    /// Applies one event; migrations at or after `arrowFrom` go to `migs` (when given).
    void apply(const SchedEvent& e, const TraceRecord& rec, const Topology& topo, std::int64_t arrowFrom, std::vector<MigrationView>* migs) {
        const int c = e.cpu;
        if (c < 0 || c >= n) return;
        const std::int32_t cur = rec.current;
        if (e.kind != EvKind::sched_switch && cur != curr[std::size_t(c)]) {
            account(c, e.time);
            curr[std::size_t(c)] = cur;
            if (cur) enqueue(cur, c, e.time);
        }
        switch (e.kind) {
        case EvKind::sched_waking: {
            TaskState& ts = tasks[e.pid];
            ts.waking = e.time;
            ts.waking_placement = true;
            ts.waking_cpu = std::int16_t(c);
            ++ttwu_count;
            break;
        }
        case EvKind::sched_wakeup:
        case EvKind::sched_wakeup_new: {
            enqueue(e.pid, e.target_cpu, e.time);
            TaskState& ts = tasks[e.pid];
            ts.waking_placement = false;
            if (e.kind == EvKind::sched_wakeup_new) {
                ts.forked = true;
                ts.waking = e.time;
            } else if (ts.waking_cpu >= 0) {
                if (c != ts.waking_cpu) ++ttwu_wakelist;   // recorded away from the waker: from the IPI
                else if (e.target_cpu == c) ++ttwu_local;  // woken onto the waker's own CPU
            }
            ts.waking_cpu = -1;
            break;
        }
        case EvKind::sched_switch: {
            account(c, e.time);
            ++ctx_switches;
            if (e.pid && e.prev_state != 'R') dequeue(e.pid, e.time);
            if (e.pid2) {
                enqueue(e.pid2, c, e.time);
                TaskState& ts = tasks[e.pid2];
                if (ts.waking >= 0) {
                    if (e.time >= latency_from) wakeup_latency.record(e.time - ts.waking);
                    ts.waking = -1;
                }
                ts.forked = false;
            } else {
                idleSince[std::size_t(c)] = e.time;
            }
            curr[std::size_t(c)] = e.pid2;
            break;
        }
        case EvKind::sched_migrate_task: {
            TaskState& ts = tasks[e.pid];
            MigrationCause cause = MigrationCause::periodic;
            if (e.cause < kMigrationCauses) cause = MigrationCause(e.cause);  // schedlab's own exports say
            else if (ts.waking_placement && ts.waking_cpu == c) cause = MigrationCause::wakeup;
            else if (ts.forked) cause = MigrationCause::fork;
            ++migrations_by_cause[std::size_t(cause)];
            if (migs && e.time >= arrowFrom && e.orig_cpu >= 0 && e.orig_cpu < n && e.target_cpu >= 0 && e.target_cpu < n)
                migs->push_back({e.time, e.pid, e.orig_cpu, e.target_cpu, cause, distClass(topo, e.orig_cpu, e.target_cpu)});
            migrate(e.pid, e.target_cpu, e.time);
            break;
        }
        case EvKind::cpu_idle: cstate[std::size_t(c)] = e.state == PWR_EVENT_EXIT ? -1 : int(std::min<std::uint32_t>(e.state, 127)); break;
        case EvKind::sched_process_exit: dequeue(e.pid, e.time); break;
        case EvKind::sched_process_fork:
        case EvKind::hrtimer_start:
        case EvKind::hrtimer_cancel:
        case EvKind::hrtimer_expire_entry:
        case EvKind::hrtimer_expire_exit:
        case EvKind::schedlab_ttwu_queue: break;
        }
    }

    void sample(std::vector<std::uint16_t>& out) const {
        for (int c = 0; c < n; ++c) out.push_back(std::uint16_t(std::min(nr[std::size_t(c)], 65535)));
    }

    /// The Snapshot at `at` (every event up to `at` applied), counters and CPU views; the
    /// caller fills migrations and samples.
    void finish(Snapshot& s, std::int64_t at) {
        s.events = events;
        s.ttwu_count = ttwu_count;
        s.ttwu_local = ttwu_local;
        s.ttwu_wakelist = ttwu_wakelist;
        s.ctx_switches = ctx_switches;
        s.migrations_by_cause = migrations_by_cause;
        s.wakeup_latency = wakeup_latency;
        const double span = double(std::max<std::int64_t>(1, at - t0));
        for (int c = 0; c < n; ++c) {
            account(c, at);
            CpuView& v = s.cpus[std::size_t(c)];
            v.curr_pid = curr[std::size_t(c)];
            v.nr_running = std::uint16_t(std::min(nr[std::size_t(c)], 65535));
            v.kind = v.curr_pid ? CpuKind::busy : CpuKind::idle;
            v.cstate = v.curr_pid ? -1 : std::int8_t(cstate[std::size_t(c)]);
            v.idle_since_ns = v.curr_pid ? -1 : idleSince[std::size_t(c)];
            v.util = 0;  // not rebuilt here (agree rebuilds PELT for decisions)
            v.rq_avg = float(area[std::size_t(c)] / span);
            v.busy_frac = float(double(busy[std::size_t(c)]) / span);
        }
    }
};

namespace {

Snapshot emptySnapshot(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t& at, const std::string& label) {
    Snapshot s;
    s.label = label;
    s.knobs = "recorded: " + std::filesystem::path(t.file).filename().string();
    s.topo = topo;
    const auto [t0, t1] = traceSpan(t);
    at = std::clamp(at, t0, t1);
    s.now = at;
    s.measure_start = t0;
    s.done = at >= t1;
    s.cpus.assign(std::size_t(topo->nrCpus()), CpuView{});
    return s;
}

}  // namespace

Snapshot traceSnapshot(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t at, const std::string& label, const TraceViewOptions& o) {
    Snapshot s = emptySnapshot(t, topo, at, label);
    const std::int64_t t0 = s.measure_start;
    TraceWalker w(topo->nrCpus(), t0);
    w.latency_from = o.latency_from;
    const std::int64_t period = s.sample_period_ns =
        o.sample_period_ns > 0 ? o.sample_period_ns
                               : std::max<std::int64_t>(1, (at - t0) / std::int64_t(std::max<std::size_t>(1, o.sample_rows)) + 1);
    std::int64_t nextSample = t0;
    for (std::size_t i = 0; i < t.events.size(); ++i) {
        const SchedEvent& e = t.events[i];
        if (e.time > at) break;  // file order is time order per CPU; other CPUs may lag by µs
        while (nextSample <= e.time && s.sample_t.size() < o.sample_rows) {
            s.sample_t.push_back(nextSample);
            w.sample(s.sample_len);
            nextSample += period;
        }
        w.apply(e, t.records[i], *topo, at - o.arrow_span_ns, &s.migrations);
        ++w.events;
    }
    w.finish(s, at);
    return s;
}

TraceIndex::TraceIndex(const Trace& t, std::shared_ptr<const Topology> topo, const TraceIndexOptions& o) : m_t(t), m_topo(std::move(topo)) {
    std::tie(m_t0, m_t1) = traceSpan(t);
    m_period = std::max<std::int64_t>(1, (m_t1 - m_t0) / std::int64_t(std::max<std::size_t>(1, o.rows)) + 1);
    const std::size_t every = std::max<std::size_t>(1, o.checkpoint_events);
    TraceWalker w(m_topo->nrCpus(), m_t0);
    std::int64_t nextSample = m_t0, maxTime = INT64_MIN;
    for (std::size_t i = 0; i < t.events.size(); ++i) {
        const SchedEvent& e = t.events[i];
        if (i % every == 0) m_checkpoints.push_back({i, maxTime, std::make_shared<const TraceWalker>(w)});
        while (nextSample <= e.time) {
            m_rowT.push_back(nextSample);
            m_rowReady.push_back(std::max(maxTime, e.time));
            w.sample(m_rowLen);
            nextSample += m_period;
        }
        w.apply(e, t.records[i], *m_topo, 0, nullptr);
        ++w.events;
        maxTime = std::max(maxTime, e.time);
        if (o.progress && i % 65536 == 0 && !o.progress(double(i) / double(t.events.size()))) {
            m_cancelled = true;
            return;
        }
    }
}

TraceIndex::~TraceIndex() = default;

Snapshot TraceIndex::snapshot(std::int64_t at, const std::string& label, const TraceViewOptions& o) const {
    Snapshot s = emptySnapshot(m_t, m_topo, at, label);
    // The latest checkpoint the plain replay passes on its way to `at` (no event before it is
    // later than `at`), and early enough for the arrows' span.
    const std::int64_t from = at - o.arrow_span_ns;
    std::size_t k = 0;
    for (std::size_t j = m_checkpoints.size(); j-- > 0;)
        if (m_checkpoints[j].max_time_before < from) {
            k = j;
            break;
        }
    TraceWalker w = m_checkpoints.empty() ? TraceWalker(m_topo->nrCpus(), m_t0) : *m_checkpoints[k].state;
    // (the index keeps every latency: latency_from is for traceSnapshot's windows)
    const std::size_t first = m_checkpoints.empty() ? 0 : m_checkpoints[k].event;
    for (std::size_t i = first; i < m_t.events.size(); ++i) {
        const SchedEvent& e = m_t.events[i];
        if (e.time > at) break;
        w.apply(e, m_t.records[i], *m_topo, from, &s.migrations);
        ++w.events;
    }
    w.finish(s, at);
    // rq samples: the index rows the plain replay would have taken before `at`, thinned to
    // at most sample_rows.
    std::size_t rows = 0;
    while (rows < m_rowT.size() && m_rowReady[rows] <= at) ++rows;
    const std::size_t stride = std::max<std::size_t>(1, (rows + o.sample_rows - 1) / std::max<std::size_t>(1, o.sample_rows));
    const std::size_t n = std::size_t(m_topo->nrCpus());
    s.sample_period_ns = m_period * std::int64_t(stride);
    for (std::size_t r = 0; r < rows; r += stride) {
        s.sample_t.push_back(m_rowT[r]);
        s.sample_len.insert(s.sample_len.end(), m_rowLen.begin() + std::ptrdiff_t(r * n), m_rowLen.begin() + std::ptrdiff_t((r + 1) * n));
    }
    return s;
}

std::string traceRqLenCsv(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t period_ns) {
    TraceViewOptions o;
    o.arrow_span_ns = 0;
    o.sample_period_ns = std::max<std::int64_t>(1, period_ns);
    const auto [t0, t1] = traceSpan(t);
    o.sample_rows = std::size_t((t1 - t0) / o.sample_period_ns) + 2;
    const Snapshot s = traceSnapshot(t, topo, t1, "csv", o);
    const int n = topo->nrCpus();
    std::vector<std::int64_t> times;
    std::vector<std::uint16_t> values;
    for (std::size_t row = 1; row < s.sample_t.size(); ++row) {  // the first sample is at the first event: the script's come a period later
        times.push_back(s.sample_t[row] - t0);
        values.insert(values.end(), s.sample_len.begin() + std::ptrdiff_t(row) * n, s.sample_len.begin() + std::ptrdiff_t(row + 1) * n);
    }
    return bpftraceRqlenCsv(times, values, n);
}

}  // namespace sched
