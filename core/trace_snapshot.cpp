// trace_snapshot.cpp: a Snapshot from a trace at a cursor time (see trace_snapshot.h).
#include "trace_snapshot.h"

#include "engine.h"
#include "report.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace sched {

Snapshot traceSnapshot(const Trace& t, std::shared_ptr<const Topology> topo, std::int64_t at, const std::string& label,
                       const TraceViewOptions& o) {
    Snapshot s;
    s.label = label;
    s.knobs = "recorded: " + std::filesystem::path(t.file).filename().string();
    s.topo = topo;
    const int n = topo->nrCpus();
    const auto [t0, t1] = traceSpan(t);
    at = std::clamp(at, t0, t1);
    s.now = at;
    s.measure_start = t0;
    s.done = at >= t1;
    s.cpus.assign(std::size_t(n), CpuView{});

    struct TaskState {
        bool runnable = false;
        int cpu = -1;
        std::int64_t waking = -1;  ///< pending sched_waking time (latency start)
        bool waking_placement = false;
        int waking_cpu = -1;
        bool forked = false;       ///< between sched_wakeup_new and its first run
    };
    std::unordered_map<std::int32_t, TaskState> tasks;
    std::vector<int> nr(std::size_t(n), 0);
    std::vector<std::int32_t> curr(std::size_t(n), 0);
    std::vector<std::int64_t> idleSince(std::size_t(n), t0), lastChange(std::size_t(n), t0), busy(std::size_t(n), 0);
    std::vector<double> area(std::size_t(n), 0.0);
    std::vector<int> cstate(std::size_t(n), -1);
    const std::int64_t period = s.sample_period_ns =
        o.sample_period_ns > 0 ? o.sample_period_ns : std::max<std::int64_t>(1, (at - t0) / std::int64_t(std::max<std::size_t>(1, o.sample_rows)) + 1);
    std::int64_t nextSample = t0;
    auto account = [&](int c, std::int64_t now) {
        const std::size_t k = std::size_t(c);
        const std::int64_t dt = now - lastChange[k];
        if (dt > 0) {
            area[k] += double(dt) * nr[k];
            if (curr[k]) busy[k] += dt;
            lastChange[k] = now;
        }
    };
    auto setNr = [&](int c, int d, std::int64_t now) {
        if (c < 0 || c >= n) return;
        account(c, now);
        nr[std::size_t(c)] = std::max(0, nr[std::size_t(c)] + d);
    };
    auto enqueue = [&](std::int32_t pid, int c, std::int64_t now) {
        if (pid == 0 || c < 0 || c >= n) return;
        TaskState& ts = tasks[pid];
        if (ts.runnable && ts.cpu == c) return;
        if (ts.runnable) setNr(ts.cpu, -1, now);
        ts.runnable = true;
        ts.cpu = c;
        setNr(c, +1, now);
    };

    for (std::size_t i = 0; i < t.events.size(); ++i) {
        const SchedEvent& e = t.events[i];
        if (e.time > at) break;  // file order is time order per CPU; other CPUs may lag by µs
        while (nextSample <= e.time && s.sample_t.size() < o.sample_rows) {
            s.sample_t.push_back(nextSample);
            for (int c = 0; c < n; ++c) s.sample_len.push_back(std::uint16_t(std::min(nr[std::size_t(c)], 65535)));
            nextSample += period;
        }
        const int c = e.cpu;
        if (c < 0 || c >= n) continue;
        const std::int32_t cur = t.records[i].current;
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
            ts.waking_cpu = c;
            ++s.ttwu_count;
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
                if (c != ts.waking_cpu) ++s.ttwu_wakelist;        // recorded away from the waker: from the IPI
                else if (e.target_cpu == c) ++s.ttwu_local;       // woken onto the waker's own CPU
            }
            ts.waking_cpu = -1;
            break;
        }
        case EvKind::sched_switch: {
            account(c, e.time);
            ++s.ctx_switches;
            if (e.pid && e.prev_state != 'R') {
                TaskState& ts = tasks[e.pid];
                if (ts.runnable) setNr(ts.cpu, -1, e.time);
                ts.runnable = false;
            }
            if (e.pid2) {
                enqueue(e.pid2, c, e.time);
                TaskState& ts = tasks[e.pid2];
                if (ts.waking >= 0) {
                    s.wakeup_latency.record(e.time - ts.waking);
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
            ++s.migrations_by_cause[std::size_t(cause)];
            if (e.time >= at - o.arrow_span_ns && e.orig_cpu >= 0 && e.orig_cpu < n && e.target_cpu >= 0 && e.target_cpu < n)
                s.migrations.push_back({e.time, e.pid, e.orig_cpu, e.target_cpu, cause, distClass(*topo, e.orig_cpu, e.target_cpu)});
            if (ts.runnable) enqueue(e.pid, e.target_cpu, e.time);
            else ts.cpu = e.target_cpu;
            break;
        }
        case EvKind::cpu_idle:
            cstate[std::size_t(c)] = e.state == PWR_EVENT_EXIT ? -1 : int(std::min<std::uint32_t>(e.state, 127));
            break;
        case EvKind::sched_process_exit: {
            TaskState& ts = tasks[e.pid];
            if (ts.runnable) setNr(ts.cpu, -1, e.time);
            ts.runnable = false;
            break;
        }
        case EvKind::sched_process_fork: break;
        }
        ++s.events;
    }
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
