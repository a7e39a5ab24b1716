// SPDX-License-Identifier: GPL-2.0-or-later
// engine_state.cpp: the engine's whole state saved and restored (checkpoints, sim/checkpoint.h).
// What the scenario determines (topology, sched domains, cost model, knobs at the start, the
// workloads' parameters) is built again from the scenario; what the run changed is written
// here, field by field. The static_asserts below fail when a record grows: its fields here and
// kStateFormatVersion (checkpoint.cpp) must follow.
#include "sim/engine_internal.h"

#include "util/state_archive.h"

#include <map>

namespace sched {

namespace {

// A record that grows without its state() growing with it would be lost from checkpoints.
static_assert(sizeof(SchedAvg) == 64, "SchedAvg changed: update schedAvgState() and kStateFormatVersion");
static_assert(sizeof(Task) == 200, "Task changed: update taskState() and kStateFormatVersion");
static_assert(sizeof(SimTask) == 304, "SimTask changed: update simTaskState() and kStateFormatVersion");
static_assert(sizeof(Rq) == 168, "Rq changed: update rqState() and kStateFormatVersion");
static_assert(sizeof(TimerInfo) == 56, "TimerInfo changed: update Engine::state() and kStateFormatVersion");

void schedAvgState(StateArchive& ar, SchedAvg& a) {
    ar(a.last_update_time, a.load_sum, a.runnable_sum, a.util_sum, a.period_contrib, a.load_avg, a.runnable_avg, a.util_avg, a.util_est_enqueued,
       a.util_est_ewma);
}

// p->cpus_ptr points at an interned mask: written as an index into the masks written before the
// tasks (-1: kNoCpus, the mask of a task not yet given one).
struct MaskTable {
    std::map<const CpuMask*, std::int32_t> index;
    std::vector<const CpuMask*> masks;
    void add(const CpuMask* m) {
        if (m != &kNoCpus && index.emplace(m, std::int32_t(masks.size())).second) masks.push_back(m);
    }
    void state(StateArchive& ar) {
        std::vector<std::string> lists;
        if (ar.saving())
            for (const CpuMask* m : masks) lists.push_back(m->toList());
        ar.each(lists, [](StateArchive& a, std::string& s) { a.str(s); });
        if (ar.loading()) {
            masks.clear();
            for (const std::string& s : lists) {
                std::string err;
                const auto m = CpuMask::parseList(s, kMaxCpus, &err);
                if (!m) ar.fail("a CPU mask \"" + s + "\"");
                masks.push_back(CpuMask::intern(*m));
            }
        }
    }
    void io(StateArchive& ar, const CpuMask*& p) const {
        std::int32_t i = -1;
        if (ar.saving() && p != &kNoCpus) i = index.at(p);
        ar(i);
        if (ar.loading()) {
            if (i < -1 || i >= std::int32_t(masks.size())) ar.fail("a CPU mask index");
            p = i < 0 ? &kNoCpus : masks[std::size_t(i)];
        }
    }
};

void taskState(StateArchive& ar, Task& t, const MaskTable& masks) {
    ar(t.pid, t.nr_cpus_allowed, t.cpu, t.wake_cpu, t.recent_used_cpu, t.wakee_flips, t.last_wakee, t.numa_preferred_nid, t.nr_migrations_per_window,
       t.quota_migrations_per_window);
    masks.io(ar, t.cpus_ptr);
    ar(t.wakee_flip_decay_ts);
    schedAvgState(ar, t.avg);
    ar(t.task_h_load, t.exec_start, t.vruntime, t.wakee_placed, t.next_migration_time, t.dur_avg, t.prev_sleep_sum_runtime, t.last_dequeue_time,
       t.avg_hot_dur, t.migration_disabled, t.on_rq, t.on_cpu, t.kthread, t.exiting, t.policy);
}

void simTaskState(StateArchive& ar, SimTask& p, const MaskTable& masks) {
    taskState(ar, p.t, masks);
    ar(p.pending_ns, p.work_left, p.sum_exec, p.prev_sum_exec, p.wake_time, p.cfs_newer, p.cfs_older, p.a, p.b, p.c, p.last_ran_cpu, p.wake_from,
       p.mm, p.timer_gen, p.idx, p.hot_set, p.workload, p.plan_limit, p.state, p.pending, p.role, p.wake_pending, p.watch_off_cpu);
}

void rqState(StateArchive& ar, Rq& r) {
    ar(r.cpu, r.curr, r.nr_running, r.h_nr_running, r.idle_h_nr_running, r.ttwu_pending, r.active, r.load_avg, r.util_avg, r.runnable_avg, r.util_est,
       r.cpu_capacity, r.avg_idle, r.max_idle_balance_cost, r.idle_stamp, r.wake_stamp, r.wake_avg_idle, r.clock_idle, r.idle_end_time, r.claimed,
       r.cache_hot_timeout, r.exit_latency_ns, r.min_vruntime, r.curr_vruntime, r.curr_need_resched);
}

}  // namespace

void Engine::state(StateArchive& ar) {
    static_assert(sizeof(Cpu) == 512, "Engine::Cpu changed: update Engine::state() and kStateFormatVersion");
    static_assert(sizeof(Flight) == 152, "Engine::Flight changed: update Engine::state() and kStateFormatVersion");
    ar.section(0x454e4731, "engine");
    ar.expect(m_nrCpus, "the machine's CPU count");
    ar.expect(std::uint64_t(m_workloads.size()), "the scenario's workload count");
    if (ar.saving() && (m_stepping >= 0 || m_planning >= 0)) throw std::logic_error("Engine::state(): saved during an event");

    // The machine.
    ar.each(m_st.rq, rqState);
    if (ar.loading() && int(m_st.rq.size()) != m_nrCpus) ar.fail("runqueues of another machine");
    const std::size_t nShared = m_st.shared.size();
    ar.each(m_st.shared, [](StateArchive& a, SdShared& s) { a(s.has_idle_cores, s.nr_idle_scan, s.nr_busy_cpus); });
    if (ar.loading() && m_st.shared.size() != nShared) ar.fail("LLCs of another machine");
    ar.vec(m_st.avg_scan_cost);
    ar(m_st.now_ns, m_st.jiffies, m_st.rd_overload);
    for (int i = 0; i < 4; ++i) ar(m_rng.words()[i]);

    // Tasks (their masks first).
    MaskTable masks;
    if (ar.saving()) {
        for (std::size_t i = 0; i < m_tasks.size(); ++i) masks.add(m_tasks[i].t.cpus_ptr);
        for (const Task& t : m_idleTasks) masks.add(t.cpus_ptr);
    }
    masks.state(ar);
    const std::size_t nTasks = ar.count(m_tasks.size(), 64);
    if (ar.loading()) {
        if (m_tasks.size() != 0) ar.fail("tasks in an engine that has run");
        reserveTasks(nTasks);
        for (std::size_t i = 0; i < nTasks; ++i) m_tasks.emplace_back();
        m_comm.clear();
    }
    for (std::size_t i = 0; i < nTasks; ++i) simTaskState(ar, m_tasks[i], masks);
    {
        std::vector<std::string> comms;
        if (ar.saving())
            for (const TaskComm& c : m_comm) comms.push_back(c.str());
        ar.each(comms, [](StateArchive& a, std::string& s) { a.str(s); });
        if (ar.loading()) {
            if (comms.size() != nTasks) ar.fail("task names and tasks disagree");
            for (const std::string& s : comms) m_comm.emplace_back(s);
        }
    }
    ar.each(m_idleTasks, [&](StateArchive& a, Task& t) { taskState(a, t, masks); });

    // Per CPU.
    ar.section(0x43505553, "cpus");
    ar.each(m_cpus, [](StateArchive& a, Cpu& c) {
        a(c.curr, c.donor, c.proxy_exec_base);
        a.vec(c.queue);
        a.vec(c.wakelist);
        a(c.seg_start, c.speed, c.need_resched, c.resched_pending, c.ipi_pending, c.in_idle, c.irq_awake, c.irq_busy_until, c.timer_irq_pending,
          c.exec_start, c.cstate, c.idle_since, c.predicted_idle, c.lock_free_at, c.ipi_at, c.ttwu_unseen, c.ttwu_inflight, c.pending_charge,
          c.last_mm);
        schedAvgState(a, c.avg);
        a(c.removed_load, c.removed_util, c.removed_runnable, c.tg_contrib, c.last_tg_update, c.util_est, c.tick_next, c.tick_queued, c.next_balance);
        a.vec(c.last_balance);
        a.vec(c.balance_interval);
        a.vec(c.nr_balance_failed);
        a.each(c.ni, [](StateArchive& b, NewidleStats& s) { b(s.newidle_call, s.newidle_success, s.newidle_ratio); });
        a.vec(c.max_newidle_lb_cost);
        a.vec(c.last_decay_max_lb_cost);
        a(c.llc, c.switch_from, c.switch_state, c.cfs_head, c.cfs_tail, c.active_balance, c.nohz_tick_stopped, c.has_blocked_load,
          c.last_blocked_load_update_tick, c.nohz_flags, c.idle_tick_from, c.next_buddy, c.last_buddy);
    });
    if (ar.loading() && int(m_cpus.size()) != m_nrCpus) ar.fail("CPUs of another machine");
    ar.vec(m_currOf);
    ar.vec(m_coreBusy);
    if (ar.loading() && int(m_currOf.size()) != m_nrCpus) ar.fail("CPUs of another machine");

    // Events: the heap as it is, the CPUs' burst ends by CPU.
    ar.section(0x45564e54, "events");
    ar.each(m_heap.entries(), [](StateArchive& a, EventHeap::Entry& e) { a(e.t, e.ctime, e.tag, e.seq); });
    {
        struct Burst {
            std::int32_t cpu;
            std::int64_t t;
            std::uint64_t lo;
        };
        std::vector<Burst> bursts;
        if (ar.saving()) m_bq.forEach([&](int cpu, std::int64_t t, std::uint64_t lo) { bursts.push_back({cpu, t, lo}); });
        ar.each(bursts, [](StateArchive& a, Burst& b) { a(b.cpu, b.t, b.lo); });
        ar(m_nextJiffyAt, m_seq, m_now, m_events);
        if (ar.loading()) {
            m_bq.reset(m_nrCpus);
            for (const Burst& b : bursts) {
                if (b.cpu < 0 || b.cpu >= m_nrCpus || b.t < m_now) ar.fail("a CPU's burst end");
                m_bq.set(b.cpu, b.t, b.lo, m_now);
            }
        }
    }
    ar(m_done, m_checkDone, m_started);
    ar(m_nohzNextBalance, m_nohzNextBlocked, m_nohzHasBlocked, m_nohzNeedsUpdate, m_nohzNrCpus, m_inNohz, m_balancingOn, m_tgPayer);
    ar(m_tracePid, m_traceNext, m_lastTraced.time, m_lastTraced.pid);
    m_lastTraced.d.state(ar);
    ar(m_tracedCount);

    // Wakeups in flight.
    ar.section(0x464c4954, "flights");
    ar.each(m_flights, [](StateArchive& a, Flight& f) {
        f.d.state(a);
        a(f.t0, f.t1, f.lock_was, f.task, f.cpu, f.waker, f.from, f.charged, f.wf, f.in_task, f.traced, f.keep, f.unseen, f.predicted_wakelist);
    });
    ar.vec(m_flightFree);
    ar.vec(m_ipiList);

    // Coalescing and its governor, the plans in flight.
    ar(m_coalesce, m_coalesceAllowed, m_coalesceWanted, m_govOn, m_govEvents, m_govOff, m_govPause, m_govPlanned0, m_govPausedWindows);
    ar.each(m_plans, [](StateArchive& a, Plan& p) {
        a(p.task, p.speed, p.n, p.limit, p.lastWork, p.lastDur);
        for (auto& v : p.T) a(v);
        for (auto& v : p.W) a(v);
    });
    if (ar.loading() && int(m_plans.size()) != m_nrCpus) ar.fail("plans of another machine");
    ar(m_cur.t, m_cur.ctime, m_cur.tag, m_plannedSteps, m_plansCut, m_plansMade);
    for (auto& v : m_tgRecent) ar(v);
    ar(m_tgPos, m_tgInWindow, m_invariantChecks);

    // Proxy execution, hrtimers.
    ar.section(0x50525859, "proxy");
    ar(m_proxyOn);
    // p->blocked_on as (workload, mutex) indices: the mutexes are found once the workloads are restored.
    std::vector<std::array<std::int64_t, 4>> blocked;  // workload, mutex, donor, waking
    if (ar.saving())
        for (const BlockedOn& b : m_blocked) {
            std::int64_t wi = -1, mi = -1;
            if (b.on)
                for (std::size_t w = 0; w < m_workloads.size() && mi < 0; ++w)
                    if ((mi = m_workloads[w]->mutexIndex(b.on)) >= 0) wi = std::int64_t(w);
            if (b.on && mi < 0) throw std::logic_error("Engine::state(): a task blocked on a mutex no workload owns");
            blocked.push_back({wi, mi, b.donor, b.waking});
        }
    ar.each(blocked, [](StateArchive& a, std::array<std::int64_t, 4>& b) { a(b[0], b[1], b[2], b[3]); });
    ar.each(m_hrt, [](StateArchive& a, TimerInfo& t) {
        a(t.soft, t.hard, t.cpu, t.armed_on, t.target.cpu, t.target.why, t.target.level, t.target.examined, t.target.this_idle_by_delay,
          t.kept_by_check, t.next_pinned, t.next_abs, t.next_slack);
    });
    ar.each(m_cpuTimers, [](StateArchive& a, std::vector<int>& v) { a.vec(v); });
    ar(m_armedTimers, m_timerWaking, m_latencyQos, m_proxyBlocking);

    // The workloads (after the tasks, which their state names by id), then the metrics.
    ar.section(0x574b4c44, "workloads");
    for (auto& w : m_workloads) {
        ar.section(0x574b0000u + std::uint32_t(w->name().size()), "a workload");
        w->state(ar);
    }
    if (ar.loading()) {
        m_blocked.assign(blocked.size(), BlockedOn{});
        for (std::size_t i = 0; i < blocked.size(); ++i) {
            const auto& b = blocked[i];
            m_blocked[i].donor = std::int32_t(b[2]);
            m_blocked[i].waking = b[3] != 0;
            if (b[0] < 0) continue;
            if (std::size_t(b[0]) >= m_workloads.size()) ar.fail("a mutex's workload");
            m_blocked[i].on = m_workloads[std::size_t(b[0])]->mutexAt(b[1]);
            if (!m_blocked[i].on) ar.fail("a mutex its workload does not have");
        }
    }
    ar.section(0x4d455452, "metrics");
    m_metrics.state(ar);
    ar.section(0x454e4432, "engine end");
}

}  // namespace sched
