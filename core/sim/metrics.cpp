// SPDX-License-Identifier: GPL-2.0-or-later
// metrics.cpp
#include "sim/metrics.h"

#include "util/state_archive.h"

#include <algorithm>

namespace sched {

Metrics::Metrics(int ncpus, int nllcs, std::int64_t sample_period, std::size_t rows, std::size_t ringCap)
    : busy_ns(ncpus),
      rqlen_area(ncpus),
      last_change(ncpus),
      cur_len(ncpus),
      cur_busy(ncpus),
      bpf_len(ncpus),
      idle_while_overloaded_ns(nllcs),
      llc_idle(nllcs),
      llc_over(nllcs),
      llc_last(nllcs),
      timeline(ncpus > 0 ? ncpus : 1, sample_period, rows),
      bpf_timeline(ncpus > 0 ? ncpus : 1, sample_period, rows),
      ring_cap(ringCap) {}

void Metrics::recordDecision(std::int64_t t, std::int32_t pid, const Decision& d) {
    decisions++;
    stage0[std::size_t(d.stage0)]++;
    stage1[std::size_t(d.stage1)]++;
    idlest[std::size_t(d.idlest)]++;
    stage2[std::size_t(d.stage2)]++;
    if (d.idle_delay_hit) idle_delay_hits++;
    if (d.claim_set) claims++;
    flow.add(d);
    if (ring_cap == 0 && !decision_sink) return;
    if (decision_sink) decision_sink(DecisionRecord{t, pid, d});
    if (ring_cap) {
        if (ring.size() < ring_cap) ring.resize(ring_cap);
        DecisionRecord& r = ring[ring_next];
        r.time = t;
        r.pid = pid;
        r.d = d;  // copy-assignment reuses the examined vector's storage
        ring_next = (ring_next + 1) % ring_cap;
        if (ring_size < ring_cap) ring_size++;
    }
}

void Metrics::recordEvent(const SchedEvent& e) {
    events_emitted++;
    if (event_sink) event_sink(e);
    if (event_ring_cap) {
        if (event_ring.size() < event_ring_cap) event_ring.resize(event_ring_cap);
        event_ring[event_next] = e;
        event_next = (event_next + 1) % event_ring_cap;
        if (event_size < event_ring_cap) event_size++;
    }
}

void Metrics::resetCounters(std::int64_t t) {
    // State that describes "now" (current lengths, LLC counts) and the timelines is kept.
    decisions = ttwu_count = ttwu_local = ttwu_wakelist = ttwu_remote_direct = wakeup_new = wake_preempt = 0;
    flow.clear();
    idle_delay_hits = claims = ctx_switches = involuntary_switches = ipis = wake_idle_without_ipi = 0;
    lb_calls = lb_balanced = lb_failed = lb_moved_tasks = newidle_calls = nohz_kicks = newilb_runs = idle_ticks = buddy_picks = tick_preempt = 0;
    proxy_runs = proxy_migrations = proxy_return_migrations = proxy_deactivations = 0;
    wake_by_task = wake_by_timer_local = wake_by_timer_remote = 0;
    timers_armed = timers_moved = timers_kept_local = timers_by_delay = timer_irqs_idle = 0;
    steady.reset();
    stage0 = {};
    stage1 = {};
    idlest = {};
    stage2 = {};
    migrations = {};
    migration_matrix = {};
    cost_ctx_switch = cost_wakeup = cost_refill = cost_tg = cost_lock_wait = cost_scan = cost_lb = idle_exit_latency = cost_msg_trip = 0;
    tg_updates = tg_reads = 0;
    wakeup_latency.clear();
    ttwu_window.clear();
    ttwu_races = 0;
    std::fill(busy_ns.begin(), busy_ns.end(), 0);
    std::fill(rqlen_area.begin(), rqlen_area.end(), 0);
    std::fill(last_change.begin(), last_change.end(), t);
    std::fill(idle_while_overloaded_ns.begin(), idle_while_overloaded_ns.end(), 0);
    std::fill(llc_last.begin(), llc_last.end(), t);
    measure_start = t;
}

std::uint64_t Metrics::migrationsTotal() const {
    std::uint64_t s = 0;
    for (auto m : migrations) s += m;
    return s;
}

double Metrics::busyFraction(std::int64_t t0, std::int64_t t1) const {
    if (t1 <= t0 || busy_ns.empty()) return 0;
    long double s = 0;
    for (auto b : busy_ns) s += b;
    return double(s / ((long double)(t1 - t0) * busy_ns.size()));
}

std::int64_t Metrics::busyNs(int cpu, std::int64_t now) const {
    const auto c = std::size_t(cpu);
    return busy_ns[c] + (cur_busy[c] ? now - last_change[c] : 0);
}

double Metrics::avgRqLen(int cpu, std::int64_t t0, std::int64_t t1) const {
    if (t1 <= t0) return 0;
    return double(rqlen_area[cpu]) / double(t1 - t0);
}

}  // namespace sched

namespace sched {

void Metrics::state(StateArchive& ar) {
    ar(measure_start, end_time, ttwu_count, decisions, ttwu_local, ttwu_wakelist, ttwu_remote_direct, wakeup_new, wake_preempt, idle_delay_hits,
       claims, ctx_switches, involuntary_switches, ipis, wake_idle_without_ipi, lb_calls, lb_balanced, lb_failed, lb_moved_tasks, newidle_calls,
       nohz_kicks, newilb_runs, idle_ticks, proxy_runs, proxy_migrations, proxy_return_migrations, proxy_deactivations, buddy_picks, tick_preempt,
       wake_by_task, wake_by_timer_local, wake_by_timer_remote, timers_armed, timers_moved, timers_kept_local, timers_by_delay, timer_irqs_idle);
    flow.state(ar);
    for (auto& v : stage0) ar(v);
    for (auto& v : stage1) ar(v);
    for (auto& v : idlest) ar(v);
    for (auto& v : stage2) ar(v);
    for (auto& v : migrations) ar(v);
    for (auto& row : migration_matrix)
        for (auto& v : row) ar(v);
    ar(cost_ctx_switch, cost_wakeup, cost_refill, cost_tg, cost_lock_wait, cost_scan, cost_lb, cost_msg_trip, idle_exit_latency, tg_updates,
       tg_reads);
    wakeup_latency.state(ar);
    ttwu_window.state(ar);
    ar(ttwu_races);
    const std::size_t ncpus = busy_ns.size(), nllcs = llc_idle.size();
    ar.vec(busy_ns);
    ar.vec(rqlen_area);
    ar.vec(last_change);
    ar.vec(cur_len);
    ar.vec(cur_busy);
    ar.vec(bpf_len);
    ar.vec(idle_while_overloaded_ns);
    ar.vec(llc_idle);
    ar.vec(llc_over);
    ar.vec(llc_last);
    if (ar.loading() && (busy_ns.size() != ncpus || rqlen_area.size() != ncpus || last_change.size() != ncpus || cur_len.size() != ncpus ||
                         cur_busy.size() != ncpus || bpf_len.size() != ncpus || idle_while_overloaded_ns.size() != nllcs ||
                         llc_idle.size() != nllcs || llc_over.size() != nllcs || llc_last.size() != nllcs))
        ar.fail("per-CPU metrics of another machine");
    timeline.state(ar);
    steady.state(ar);
    bpf_timeline.state(ar);
    // The decision ring, oldest first; a ring of another capacity keeps the newest.
    {
        std::vector<DecisionRecord> recentOnes;
        if (ar.saving())
            for (std::size_t i = 0; i < ring_size; ++i) recentOnes.push_back(recent(i));
        ar.each(recentOnes, [](StateArchive& a, DecisionRecord& r) {
            a(r.time, r.pid);
            r.d.state(a);
        });
        if (ar.loading()) {
            ring.clear();
            ring_next = ring_size = 0;
            if (ring_cap) {
                const std::size_t from = recentOnes.size() > ring_cap ? recentOnes.size() - ring_cap : 0;
                ring.resize(ring_cap);
                for (std::size_t i = from; i < recentOnes.size(); ++i) {
                    ring[ring_next] = std::move(recentOnes[i]);
                    ring_next = (ring_next + 1) % ring_cap;
                    ring_size++;
                }
            }
        }
    }
    {
        std::vector<SchedEvent> recentEv;
        if (ar.saving())
            for (std::size_t i = 0; i < event_size; ++i) recentEv.push_back(recentEvent(i));
        ar.each(recentEv, [](StateArchive& a, SchedEvent& e) {
            a(e.time, e.kind, e.prev_state, e.cause, e.cpu, e.target_cpu, e.orig_cpu, e.pid, e.pid2, e.state);
        });
        if (ar.loading()) {
            event_ring.clear();
            event_next = event_size = 0;
            const std::size_t from = recentEv.size() > event_ring_cap ? recentEv.size() - event_ring_cap : 0;
            if (event_ring_cap) event_ring.resize(event_ring_cap);
            for (std::size_t i = from; i < recentEv.size(); ++i) {
                event_ring[event_next] = recentEv[i];
                event_next = (event_next + 1) % event_ring_cap;
                event_size++;
            }
        }
    }
    ar(events_emitted);
}

}  // namespace sched
