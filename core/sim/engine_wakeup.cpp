// SPDX-License-Identifier: GPL-2.0-or-later
// engine_wakeup.cpp: the engine's side of try_to_wake_up() (wakelist, IPIs, resched latency) and the tick (scheduler_tick, the idle tick, the governor).
// (engine_internal.h: how the engine is split.)
#include "sim/engine_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace sched {

// ---------------------------------------------------------------------------
// Wakeups

bool Engine::wake(int id, bool sync) {
    SimTask& p = m_tasks[id];
    if (p.state == TaskState::Exited) return false;
    if (p.state == TaskState::Blocked) {
        // Woken before its sleep timer: do_nanosleep()'s hrtimer_cancel() (a run without armed
        // timers, hackbench's, does not load the timer record on every wakeup).
        if (m_armedTimers > 0 && m_hrt[std::size_t(id)].cpu >= 0) cancelTimer(id, m_stepCpu >= 0 ? m_stepCpu : p.t.cpu);
        m_metrics.wake_by_task++;
        doWake(id, m_stepCpu >= 0 ? m_stepCpu : 0, m_stepping >= 0, sync ? std::uint32_t(WF_SYNC) : 0u,
               m_stepping >= 0 ? &m_tasks[m_stepping].t : nullptr);
        return true;
    }
    // Running or queued with a block still pending: try_to_wake_up finds it on the rq.
    if (p.pending == Action::Block) {
        p.wake_pending = true;
        ttwuRunnableStat(p);
        return true;
    }
    // Proxy execution: a donor, still on its runqueue, woken by the unlock that handed it the lock.
    if (p.state == TaskState::Runnable && p.t.on_rq && blockedOn(id)) {
        ttwuRunnableDonor(id);
        return true;
    }
    return false;
}

// try_to_wake_up() finding p on its runqueue: sched_waking, then ttwu_runnable()'s
// ttwu_do_wakeup(): sched_wakeup; ttwu_stat() counts it.
void Engine::ttwuRunnableStat(const SimTask& p) {
    m_metrics.stage0[std::size_t(Stage0::TTWU_RUNNABLE)]++;
    m_metrics.flow.addRunnable();
    const int waker = m_stepCpu >= 0 ? m_stepCpu : p.t.cpu;
    emitEvent(EvKind::sched_waking, waker, p.t.pid, 0, p.t.cpu);
    emitEvent(EvKind::sched_wakeup, waker, p.t.pid, 0, p.t.cpu);
    m_metrics.ttwu_count++;
    if (waker == p.t.cpu) m_metrics.ttwu_local++;
}

// try_to_wake_up() over time (docs/architecture.md: a wakeup over time). At t0 (now):
// sched_waking, then select_task_rq() on the machine as it is at t0 (ttwu_select()). The select
// and set_task_cpu() take the waker ttwu_select + the scan's cost; ttwu_queue() runs after them
// (onTtwuQueue()): the wakelist (ttwu_pending := 1, the IPI) or the target's rq lock and the
// activation (ttwuActivate(), sched_wakeup). Until then the chosen CPU shows nothing of the
// wakee, so another waker can choose it too (a race: Decision::raced); a claim (claim_wakeup)
// is visible at t0.
void Engine::doWake(int id, int waker_cpu, bool in_task, std::uint32_t wf, Task* waker) {
    SimTask& p = m_tasks[id];
    const int from = p.t.cpu;
    // p.t.avg stays as its dequeue left it: select_task_rq_fair() reads it so
    // (wake_affine_weight's task_h_load(p)); only find_idlest_cpu() and the asymmetric
    // select_idle_sibling() sync it first (through RqUpdateHook::sync_entity_load_avg).
    p.t.on_rq = false;
    p.t.on_cpu = false;
    Waker w;
    w.cpu = waker_cpu;
    w.in_task = in_task;
    w.current_ptr = waker ? waker : (m_cpus[waker_cpu].curr >= 0 ? &m_tasks[m_cpus[waker_cpu].curr].t : &m_idleTasks[waker_cpu]);
    if (waker_cpu >= 0 && m_cpus[waker_cpu].curr >= 0) update_curr(waker_cpu);
    // The inputs go to their sink first so that the export can give the waking its context.
    if (wake_inputs_sink) {
        WakeInputs in;
        in.time = m_now;
        in.cpu = std::int16_t(waker_cpu);
        in.prev = std::int16_t(from);
        in.pid = p.t.pid;
        in.this_load = m_st.rq[waker_cpu].load_avg;
        in.prev_load = m_st.rq[from].load_avg;
        in.p_load = p.t.h_load();
        in.cur_load = w.cur().h_load();
        in.sync = (wf & WF_SYNC) != 0;
        if (const SdShared* sh = m_st.llcShared(waker_cpu)) in.scan_this = sh->nr_idle_scan, in.cores_this = sh->has_idle_cores;
        if (const SdShared* sh = m_st.llcShared(from)) in.scan_prev = sh->nr_idle_scan, in.cores_prev = sh->has_idle_cores;
        in.jiffies = m_st.jiffies;
        in.in_task = in_task;
        if (p.t.nr_cpus_allowed < m_nrCpus) in.allowed = p.t.cpus_ptr;
        wake_inputs_sink(in);
    }
    emitEvent(EvKind::sched_waking, waker_cpu, p.t.pid, 0, from);
    const bool keep = m_traceNext;  // the window's Step wakeup: this decision becomes lastTraced() once placed
    const bool tr = m_tracePid == p.t.pid || keep;
    m_traceNext = false;
    // The decision waits in a slot until ttwu_queue() has placed the task.
    int slot;
    if (!m_flightFree.empty()) {
        slot = m_flightFree.back();
        m_flightFree.pop_back();
    } else {
        slot = int(m_flights.size());
        m_flights.emplace_back();
    }
    Flight& f = m_flights[std::size_t(slot)];
    Decision& d = f.d;
    const bool placed = ttwu_select(m_st, m_cfg.knobs, p.t, w, wf, tr, d);
    if (!placed) throw std::logic_error(fmt::format("try_to_wake_up(pid {}): a sleeping task was not placed ({})", p.t.pid, toString(d.stage0)));
    // A timer's wakeup: where its timer was armed, where it went and why, first.
    if (tr && m_timerWaking == id) d.steps.insert(d.steps.begin(), Step{Fn::hrtimer_wakeup, timerStepText(id, waker_cpu)});
    const int cpu = d.cpu;
    m_metrics.ttwu_count++;
    if (cpu == waker_cpu) m_metrics.ttwu_local++;
    p.wake_time = m_now;
    p.wake_pending = false;
    p.state = TaskState::Runnable;  // TASK_WAKING: on no runqueue until ttwu_queue() places it
    f.t0 = m_now;
    f.t1 = -1;
    f.task = id;
    f.cpu = cpu;
    f.waker = waker_cpu;
    f.from = from;
    f.wf = wf | (d.migrated ? std::uint32_t(WF_MIGRATED) : 0u);
    f.in_task = in_task;
    f.traced = tr;
    f.keep = keep;
    f.unseen = true;
    Cpu& t = m_cpus[std::size_t(cpu)];
    // Stacked by a race: the chosen CPU looked idle, and another wakee is already on its way there.
    if (t.ttwu_unseen > 0) {
        for (const Examined& e : d.examined)
            if (e.cpu == cpu && (e.seen == Seen::Idle || e.seen == Seen::IdleByDelay)) {
                d.raced = true;
                m_metrics.ttwu_races++;
                break;
            }
    }
    t.ttwu_unseen++;
    t.ttwu_inflight++;
    // The waker's CPU time: the scan, then the path ttwu_queue() will take as the machine looks
    // now (corrected there if it changed in between). The waker is busy in try_to_wake_up()
    // until the task is placed: the path's cost covers the select and, on the direct path, the
    // rq lock's wait and hold.
    const CostModel& cm = m_cfg.cost;
    const std::int64_t scan = cm.c(CostTerm::sis_scan, cm.sis_scan_per_cpu * std::int64_t(d.examined.size()));
    m_metrics.cost_scan += scan;
    {
        WakeCtx c{m_st, m_cfg.knobs, w, d, false};
        f.predicted_wakelist = m_cfg.knobs.TTWU_QUEUE && ttwu_queue_cond(c, p.t, cpu);
    }
    const bool lock = !f.predicted_wakelist && cm.s(CostTerm::rq_lock) != 0.0;
    const std::int64_t select = cm.c(CostTerm::wakeup, cm.ttwu_select), hold = lock ? cm.c(CostTerm::rq_lock, cm.rq_lock_hold) : 0;
    const std::int64_t path = std::max(ttwuPathCost(cpu, waker_cpu, f.predicted_wakelist), select + hold);
    f.charged = std::int32_t(path);
    m_metrics.cost_wakeup += path;
    std::int64_t cost = scan + path;
    // ttwu_queue() after the select: its fixed part and the scan, at the waker's speed.
    const int speed = m_cpus[std::size_t(waker_cpu)].curr >= 0 ? smtSpeed(waker_cpu) : 1024;
    auto wall = [speed](std::int64_t ns) { return speed == 1024 ? ns : (ns * 1024 + speed - 1) / speed; };
    const std::int64_t tq = m_now + wall(scan + std::min(path, select));
    // The direct path's rq_lock(): reserved now for when the waker gets there (the lock is
    // granted in the order its users asked), waited for (the waker spins), then held.
    if (lock) {
        const std::int64_t wait = cm.c(CostTerm::rq_lock, std::max<std::int64_t>(0, t.lock_free_at - tq));
        m_metrics.cost_lock_wait += wait;
        cost += wait;
        f.lock_was = t.lock_free_at;
        f.t1 = tq + wait + hold;
        t.lock_free_at = f.t1;
    }
    if (in_task && m_stepping >= 0) {
        m_tasks[m_stepping].work_left += cost;
    } else {
        addPendingCharge(waker_cpu, cost);
        // An interrupt's handler: an idle CPU stays out of its C-state until its wakeup is done.
        Cpu& wc = m_cpus[std::size_t(waker_cpu)];
        wc.irq_busy_until = std::max(wc.irq_busy_until, m_now + cost);
    }
    d.t_queue = tq;
    if (tq == m_now) onTtwuQueue(slot);
    else push(tq, EvTtwuQueue, id, std::uint32_t(slot));
}

std::int64_t Engine::ttwuPathCost(int cpu, int waker_cpu, bool wakelist) const {
    const CostModel& cm = m_cfg.cost;
    if (wakelist) return cm.c(CostTerm::wakeup, cm.wakeup_remote_queued);
    return cm.c(CostTerm::wakeup, cpu == waker_cpu ? cm.wakeup_local : cm.wakeup_remote_direct);
}

Waker Engine::flightWaker(int cpu, bool in_task) {
    Waker w;
    w.cpu = cpu;
    w.in_task = in_task;
    w.current_ptr = m_cpus[std::size_t(cpu)].curr >= 0 ? &m_tasks[m_cpus[std::size_t(cpu)].curr].t : &m_idleTasks[std::size_t(cpu)];
    return w;
}

void Engine::chargeCpuNow(int cpu, std::int64_t ns) {
    if (ns == 0) return;
    Cpu& c = m_cpus[std::size_t(cpu)];
    if (c.curr < 0 || cpu == m_stepCpu) {
        if (cpu == m_stepCpu && m_stepping >= 0) m_tasks[m_stepping].work_left += ns;
        else addPendingCharge(cpu, ns);
        return;
    }
    accountSegment(cpu);  // its plan (if any) ends here
    m_tasks[c.curr].work_left = std::max<std::int64_t>(0, m_tasks[c.curr].work_left + ns);
    startSegment(cpu);
    if (SimTask& t = m_tasks[c.curr]; t.watch_off_cpu) m_workloads[t.workload]->segmentMoved(*this, t);
}

// ttwu_queue() of a wakeup in flight (core.c): set_task_cpu() took effect (sched_migrate_task),
// then the wakelist, or the target's rq lock and the activation.
void Engine::onTtwuQueue(int slot) {
    Flight& f = m_flights[std::size_t(slot)];
    Decision& d = f.d;
    const int id = f.task;
    SimTask& p = m_tasks[id];
    const int cpu = f.cpu;
    const CostModel& cm = m_cfg.cost;
    if (d.migrated) migrateTask(id, f.from, cpu, MigrationCause::wakeup, f.waker);
    Waker w = flightWaker(f.waker, f.in_task);
    WakeCtx ctx{m_st, m_cfg.knobs, w, d, f.traced};
    Cpu& t = m_cpus[std::size_t(cpu)];
    if (ttwu_queue_wakelist(ctx, p.t, cpu, f.wf, f.from)) {
        // The machine changed since t0: no rq lock after all (its reservation is undone when nobody
        // queued behind it). The waker keeps the CPU time it was charged for the path it predicted
        // (a difference of a few hundred ns, and re-timing it would cut its plan).
        if (!f.predicted_wakelist && f.t1 >= 0 && t.lock_free_at == f.t1) t.lock_free_at = f.lock_was;
        m_metrics.ttwu_wakelist++;
        t.wakelist.push_back(id);
        p.wake_from = f.from;
        p.t.on_rq = false;
        m_st.rq[cpu].ttwu_pending = true;
        t.ttwu_unseen--;
        f.unseen = false;
        emitEvent(EvKind::schedlab_ttwu_queue, f.waker, p.t.pid, 0, cpu);
        if (!t.ipi_pending) {
            // The wakelist's IPI (or its polling flag), then the handler's sched_ttwu_pending():
            // rq_lock() and the activations, which take the time of a direct activation's hold.
            t.ipi_pending = true;
            t.ipi_at = m_now + kickDelay(cpu, f.waker) + (cm.s(CostTerm::rq_lock) != 0.0 ? cm.c(CostTerm::rq_lock, cm.rq_lock_hold) : 0);
            push(t.ipi_at, EvIpi, cpu);
        }
        d.t_activate = t.ipi_at;
        finishFlight(slot);
        return;
    }
    if (cpu != f.waker) m_metrics.ttwu_remote_direct++;
    if (f.predicted_wakelist && cm.s(CostTerm::rq_lock) != 0.0) {
        // The machine changed since t0: rq_lock() now; the waker spins for it (its path's cost
        // stays the one it predicted, see above).
        const std::int64_t wait = cm.c(CostTerm::rq_lock, std::max<std::int64_t>(0, t.lock_free_at - m_now));
        m_metrics.cost_lock_wait += wait;
        chargeCpuNow(f.waker, wait);
        f.t1 = m_now + wait + cm.c(CostTerm::rq_lock, cm.rq_lock_hold);
        t.lock_free_at = f.t1;
    }
    if (f.traced && f.t1 >= 0)
        ctx.step(Fn::try_to_wake_up, fmt::format("rq_lock(CPU {}): taken at +{} ns after sched_waking, held until the activation at +{} ns", cpu,
                                                 f.t1 - cm.c(CostTerm::rq_lock, cm.rq_lock_hold) - f.t0, f.t1 - f.t0));
    if (f.t1 <= m_now) ttwuActivate(slot);
    else push(f.t1, EvTtwuActivate, id, std::uint32_t(slot));
}

// ttwu_do_activate() under the target's rq lock: the enqueue, check_preempt_curr() on the
// machine as it is now, sched_wakeup (traced on the waker's CPU).
void Engine::ttwuActivate(int slot) {
    Flight& f = m_flights[std::size_t(slot)];
    Decision& d = f.d;
    const int id = f.task;
    SimTask& p = m_tasks[id];
    const int cpu = f.cpu;
    Waker w = flightWaker(f.waker, f.in_task);
    WakeCtx ctx{m_st, m_cfg.knobs, w, d, f.traced};
    ttwu_do_activate(ctx, p.t, cpu, f.wf, f.from);
    m_cpus[std::size_t(cpu)].ttwu_unseen--;
    f.unseen = false;
    p.t.on_rq = false;  // ttwu_do_activate() counted it; enqueue_entity() updates the sleeping entity first
    enqueueTask(cpu, id, true, d.migrated);
    emitEvent(EvKind::sched_wakeup, f.waker, p.t.pid, 0, cpu);
    setBuddies(cpu, id, d.preempted_curr, false);
    if (d.preempted_curr) reschedCpu(cpu, f.waker);
    d.t_activate = m_now;
    m_metrics.ttwu_window.record(m_now - f.t0);
    finishFlight(slot);
}

// The wakeup in flight has placed its task: its decision is recorded (at its t0) and its slot freed.
void Engine::finishFlight(int slot) {
    Flight& f = m_flights[std::size_t(slot)];
    Decision& d = f.d;
    const SimTask& p = m_tasks[f.task];
    m_cpus[std::size_t(f.cpu)].ttwu_inflight--;
    if (d.preempted_curr) m_metrics.wake_preempt++;
    if (f.traced) {
        // Who else decided while this wakeup was on its way: the decisions recorded since t0.
        std::string others;
        int n = 0;
        const Metrics& m = m_metrics;
        for (std::size_t i = m.ring_size; i-- > 0 && n < 8;) {
            const DecisionRecord& r = m.recent(i);
            if (r.time < f.t0) break;
            others += fmt::format("{}pid {} -> CPU {}{}", n ? ", " : "", r.pid, r.d.cpu, r.d.cpu == f.cpu ? " (the same CPU)" : "");
            ++n;
        }
        d.steps.push_back(Step{Fn::try_to_wake_up,
                               fmt::format("the window: sched_waking at {} ns, ttwu_queue() at +{} ns, {} at +{} ns{}; {}", f.t0, d.t_queue - f.t0,
                                           d.wakelist ? "sched_ttwu_pending() after the IPI" : "the activation (sched_wakeup)", d.t_activate - f.t0,
                                           d.raced ? ", stacked by a race (the CPU looked idle, another wakee was on its way)" : "",
                                           n ? "placed meanwhile: " + others : "no other placement meanwhile")});
        if (m_tracePid == p.t.pid)
            for (const auto& st : d.steps) std::fprintf(stderr, "[%s] %s\n", toString(st.fn), st.text.c_str());
        if (f.keep) {
            m_lastTraced = DecisionRecord{f.t0, p.t.pid, d};
            m_tracedCount++;
        }
    }
    m_metrics.recordDecision(f.t0, p.t.pid, d);
    f.task = -1;
    m_flightFree.push_back(slot);
}

// sched_ttwu_pending(): the target runs its wakelist.
void Engine::onIpi(int cpu) {
    Cpu& c = m_cpus[cpu];
    c.ipi_pending = false;
    if (c.wakelist.empty()) return;
    std::vector<int>& list = m_ipiList;  // the two buffers trade places: no allocation per IPI
    list.clear();
    list.swap(c.wakelist);
    m_st.rq[cpu].ttwu_pending = false;
    bool resched = false;
    for (int id : list) {
        SimTask& p = m_tasks[id];
        // The task was placed and migrated at wakeup time (its vruntime made relative to the old rq then).
        const int from = p.wake_from >= 0 ? p.wake_from : cpu;
        p.wake_from = -1;
        enqueueTask(cpu, id, true, from != cpu);
        ttwuIdleStampUpdate(m_st, cpu);  // ttwu_do_activate on the target: avg_idle, idle_stamp := 0
        emitEvent(EvKind::sched_wakeup, cpu, p.t.pid, 0, cpu);
        if (p.wake_time >= 0) m_metrics.ttwu_window.record(m_now - p.wake_time);
        addPendingCharge(cpu, m_cfg.cost.c(CostTerm::wakeup, m_cfg.cost.wakeup_local));
        Decision dummy;
        Waker w;
        w.cpu = cpu;
        w.in_task = false;
        w.current_ptr = c.curr >= 0 ? &m_tasks[c.curr].t : &m_idleTasks[cpu];
        WakeCtx ctx{m_st, m_cfg.knobs, w, dummy, false};
        // enqueue has already counted p: check_preempt_curr sees the CPU as the kernel does after activate_task;
        // once one wakee preempts, curr has need_resched and the later ones leave the buddies alone.
        m_st.rq[cpu].curr_need_resched = c.curr >= 0 && (c.need_resched || resched);
        const bool pre = c.curr < 0 || check_preempt_curr(ctx, p.t, cpu, 0, false, cpu);
        setBuddies(cpu, id, pre && !m_st.rq[cpu].curr_need_resched, false);
        if (pre) resched = true;
    }
    m_st.rq[cpu].ttwu_pending = false;
    if (resched) {
        if (c.curr < 0) {
            if (!c.resched_pending) schedule(cpu);  // already out of the C-state: the IPI woke it
        } else {
            c.need_resched = true;
            schedule(cpu);  // preemption on return from the interrupt
        }
    }
}

// The inspector's first step of a traced timer wakeup (doWake()).
std::string Engine::timerStepText(int id, int fired_on) const {
    const TimerInfo& ti = m_hrt[std::size_t(id)];
    const char* delay = ti.target.this_idle_by_delay ? " (idle delay)" : "";
    std::string why;
    switch (ti.target.why) {
    case TimerTarget::Why::ThisBusy: why = fmt::format("idle_cpu({}) false: the timer stays on CPU {}", ti.armed_on, ti.armed_on); break;
    case TimerTarget::Why::Pinned: why = "pinned (or timer_migration = 0): no target search"; break;
    case TimerTarget::Why::NoneBusy:
        why = fmt::format("idle_cpu({}) true{}, and no CPU of its domains is busy: default_cpu {}", ti.armed_on, delay, ti.armed_on);
        break;
    case TimerTarget::Why::Moved:
        why = fmt::format("idle_cpu({}) true{}: CPU {} is the first busy CPU of domain level {} ({} CPUs examined)", ti.armed_on, delay,
                          ti.target.cpu, ti.target.level, ti.target.examined);
        if (ti.kept_by_check)
            why += fmt::format("; hrtimer_check_target(): it expires before CPU {}'s next event, kept on CPU {}", ti.target.cpu, ti.armed_on);
        break;
    }
    return fmt::format(
        "timer of pid {} armed on CPU {} (clock_nanosleep, expires {} ns + {} ns slack); get_nohz_timer_target(): {}; fired on CPU {} "
        "in hard-interrupt context",
        m_tasks[id].t.pid, ti.armed_on, ti.soft, ti.hard - ti.soft, why, fired_on);
}

// ---------------------------------------------------------------------------
// hrtimers: a sleeping task's timer (kernel/time/hrtimer.c, 6.1)

std::int64_t Engine::hrtimerExpiresNext(int cpu) const {
    const Cpu& c = m_cpus[std::size_t(cpu)];
    std::int64_t t = c.tick_next >= 0 ? c.tick_next : kNever;  // tick_sched_timer, while the tick runs
    const auto& l = m_cpuTimers[std::size_t(cpu)];
    if (!l.empty()) t = std::min(t, m_hrt[std::size_t(l.front())].hard);
    return t;
}

// do_nanosleep() on `cpu`: hrtimer_start_range_ns() of the task's sleeper, the soft expiry
// `delay` from now and the hard one `slack` later. __hrtimer_start_range_ns() ->
// switch_hrtimer_base(): unless pinned (or timer_migration is off), the base of
// get_nohz_timer_target()'s CPU, kept on this CPU when hrtimer_check_target() finds the
// timer earlier than that CPU's next event (a remote clock event is not reprogrammed).
void Engine::armTimer(int id, int cpu, std::int64_t delay, std::int64_t slack, bool pinned) {
    SimTask& p = m_tasks[id];
    TimerInfo& ti = m_hrt[std::size_t(id)];
    if (ti.cpu >= 0) cancelTimer(id, cpu);  // hrtimer_start_range_ns() -> remove_hrtimer()
    p.timer_gen++;
    // An absolute expiry already passed (delay < 0) still arms the timer: it expires at the
    // next interrupt of its CPU, at the latest now (the clock event's minimum delta: not modelled).
    ti.soft = m_now + delay;
    const std::int64_t range = std::max<std::int64_t>(0, slack);
    ti.hard = std::max(m_now, ti.soft + range);
    ti.armed_on = cpu;
    ti.kept_by_check = false;
    syncRq(cpu);  // idle_cpu() reads nr_running and curr as they are now
    if (pinned || !m_cfg.knobs.timer_migration) {
        ti.target = TimerTarget{};
        ti.target.cpu = cpu;
        ti.target.why = TimerTarget::Why::Pinned;
    } else {
        ti.target = get_nohz_timer_target(m_st, m_cfg.knobs, cpu);
    }
    int where = ti.target.cpu;
    if (where != cpu && ti.hard < hrtimerExpiresNext(where)) {
        where = cpu;  // hrtimer_check_target(): expires < new_base->cpu_base->expires_next
        ti.kept_by_check = true;
        m_metrics.timers_kept_local++;
    }
    m_metrics.timers_armed++;
    if (ti.target.this_idle_by_delay) m_metrics.timers_by_delay++;
    if (where != cpu) {
        m_metrics.timers_moved++;
        if (timer_sink) timer_sink(m_now, p.t.pid, cpu, where);
    }
    ti.cpu = where;
    auto& l = m_cpuTimers[std::size_t(where)];
    // timerqueue_add(): after the timers that expire at the same time (their insertion order).
    const std::int64_t h = ti.hard;
    const auto pos = std::upper_bound(l.begin(), l.end(), h, [&](std::int64_t x, int b) { return x < m_hrt[std::size_t(b)].hard; });
    l.insert(pos, id);
    m_armedTimers++;
    if (m_metrics.wantEvents()) {
        // enqueue_hrtimer() -> debug_activate(): on the arming CPU, expires as
        // hrtimer_set_expires_range_ns() set it (an absolute one already passed included).
        const std::uint8_t mode = std::uint8_t((ti.next_abs ? HRTIMER_MODE_ABS : HRTIMER_MODE_REL) | (pinned ? HRTIMER_MODE_PINNED : 0));
        emitHrtimer(EvKind::hrtimer_start, cpu, p.t.pid, ti.soft + range, std::uint32_t(std::min<std::int64_t>(range, UINT32_MAX)), mode);
    }
    push(ti.hard, EvTimer, id, p.timer_gen);  // the clock event programmed for its hard expiry
}

// hrtimer_try_to_cancel() -> remove_hrtimer() of an armed timer (its hrtimer_cancel event on
// `onCpu`: do_nanosleep()'s cancel runs when the woken task runs again; schedlab removes the
// timer, and writes the event, at the wakeup).
void Engine::cancelTimer(int id, int onCpu) {
    TimerInfo& ti = m_hrt[std::size_t(id)];
    if (ti.cpu < 0) return;
    if (m_metrics.wantEvents()) emitHrtimer(EvKind::hrtimer_cancel, onCpu, m_tasks[id].t.pid);
    auto& l = m_cpuTimers[std::size_t(ti.cpu)];
    l.erase(std::find(l.begin(), l.end(), id));
    ti.cpu = -1;
    m_armedTimers--;
}

// The clock event of a timer's hard expiry. On an idle CPU the interrupt first takes the CPU
// out of its C-state (the exit latency); then hrtimer_interrupt() runs the expired timers.
void Engine::onTimer(int id, std::uint32_t gen) {
    const SimTask& p = m_tasks[id];
    const TimerInfo& ti = m_hrt[std::size_t(id)];
    if (p.timer_gen != gen || ti.cpu < 0) return;  // it already ran (another interrupt in its slack) or was cancelled
    const int cpu = ti.cpu;
    Cpu& c = m_cpus[std::size_t(cpu)];
    if (c.curr < 0 && c.in_idle && !c.irq_awake && m_now >= c.irq_busy_until) {
        if (c.timer_irq_pending) return;  // the interrupt is on its way: it runs this timer too
        const std::int64_t ex = m_cfg.cost.c(CostTerm::idle_exit, m_cfg.cost.cstates[std::size_t(c.cstate)].exit_ns);
        m_metrics.timer_irqs_idle++;
        if (ex > 0) {
            m_metrics.idle_exit_latency += ex;
            c.timer_irq_pending = true;
            push(m_now + ex, EvTimerIrq, cpu);
            return;
        }
    }
    hrtimerInterrupt(cpu);
}

// hrtimer_interrupt() on `cpu`: an idle CPU is out of its C-state while the handler runs.
void Engine::hrtimerInterrupt(int cpu, std::int64_t hardMax) {
    Cpu& c = m_cpus[std::size_t(cpu)];
    const bool wasAwake = c.irq_awake;
    if (c.curr < 0 && c.in_idle) c.irq_awake = true;
    runExpiredTimers(cpu, hardMax);
    c.irq_awake = wasAwake;
}

// __hrtimer_run_queues(): the CPU's timers in expiry order, each run when its soft expiry has
// passed, up to the first that has not; the tick (tick_sched_timer) is one of them, so a sleep
// timer behind a tick that is not due waits for it. `hardMax`: only timers expiring by then
// (those ordered before the tick being run). hrtimer_wakeup() -> wake_up_process() on this
// CPU in hard-interrupt context: try_to_wake_up(p, TASK_NORMAL, 0) with current the task the
// interrupt found (or the idle task).
void Engine::runExpiredTimers(int cpu, std::int64_t hardMax) {
    auto& l = m_cpuTimers[std::size_t(cpu)];
    if (l.empty()) return;
    const Cpu& c = m_cpus[std::size_t(cpu)];
    const std::int64_t tickAt = c.tick_next > m_now ? c.tick_next : kNever;
    std::size_t n = 0;
    while (n < l.size()) {
        const TimerInfo& ti = m_hrt[std::size_t(l[n])];
        if (ti.soft > m_now || ti.hard > hardMax || ti.hard > tickAt) break;
        ++n;
    }
    if (n == 0) return;
    std::vector<int>& expired = m_expiredBuf;  // doWake() does not run timers: the buffer is not reentered
    expired.assign(l.begin(), l.begin() + std::ptrdiff_t(n));
    l.erase(l.begin(), l.begin() + std::ptrdiff_t(n));
    m_armedTimers -= n;
    const bool events = m_metrics.wantEvents();
    for (int id : expired) {
        m_hrt[std::size_t(id)].cpu = -1;
        SimTask& p = m_tasks[id];
        // __run_hrtimer(): debug_deactivate() (hrtimer_cancel), hrtimer_expire_entry, the
        // callback, hrtimer_expire_exit.
        if (events) {
            emitHrtimer(EvKind::hrtimer_cancel, cpu, p.t.pid, 0, 0, kHrtimerCancelInIrq);
            emitHrtimer(EvKind::hrtimer_expire_entry, cpu, p.t.pid, m_now);
        }
        if (p.state != TaskState::Blocked) {
            if (events) emitHrtimer(EvKind::hrtimer_expire_exit, cpu, p.t.pid);
            continue;
        }
        if (cpu == p.t.cpu) m_metrics.wake_by_timer_local++;
        else m_metrics.wake_by_timer_remote++;
        const Cpu& cc = m_cpus[std::size_t(cpu)];
        m_timerWaking = id;
        doWake(id, cpu, false, 0, cc.curr >= 0 ? &m_tasks[cc.curr].t : &m_idleTasks[std::size_t(cpu)]);
        m_timerWaking = -1;
        if (events) emitHrtimer(EvKind::hrtimer_expire_exit, cpu, p.t.pid);
    }
}

// ---------------------------------------------------------------------------
// Tick

// sched_slice() for nice-0 entities on a cfs_rq of nr: __sched_period(nr) / nr, at least
// min_granularity with BASE_SLICE.
std::int64_t Engine::sched_slice(std::int64_t nr) const {
    const std::int64_t period = nr > 8 ? nr * m_tun.min_granularity_ns : m_tun.latency_ns;  // sched_nr_latency = 8
    const std::int64_t slice = period / nr;
    return m_cfg.knobs.BASE_SLICE ? std::max(slice, m_tun.min_granularity_ns) : slice;
}

void Engine::checkPreemptTick(int cpu) {
    // check_preempt_tick() (6.1, nice 0).
    Cpu& c = m_cpus[cpu];
    const int sel = selOf(c);  // cfs_rq->curr: a donor while its lock's owner runs for it
    SimTask& p = m_tasks[sel];
    const std::int64_t ideal = sched_slice(std::int64_t(nrOnRq(c)));
    // A donor's context: the time it has run since the pick (the owner got the runtime, v6
    // 12/20). v6 is on 6.6, whose EEVDF ends the context's slice through its vruntime
    // (update_deadline()); 6.1's check here would otherwise never see it run.
    const std::int64_t delta_exec = c.donor >= 0 ? m_tasks[c.curr].sum_exec - c.proxy_exec_base : p.sum_exec - p.prev_sum_exec;
    bool resched = false;
    if (delta_exec > ideal) {
        // "The current task ran long enough, ensure it doesn't get re-elected due to buddy
        // favours": clear_buddies(cfs_rq, curr).
        resched = true;
        if (c.next_buddy == sel) c.next_buddy = -1;
        if (c.last_buddy == sel) c.last_buddy = -1;
    } else if (delta_exec >= m_tun.min_granularity_ns) {
        const std::int64_t delta = p.t.vruntime - m_tasks[c.queue.front()].t.vruntime;
        if (delta > ideal) resched = true;
    }
    if (resched) {
        m_metrics.tick_preempt++;
        c.need_resched = true;
    }
}

// The tick of `cpu` at tick_next. A tick's order key does not depend on when the tick was
// (re)started: it is created at the jiffy before. A CPU that stops its tick (nohz idle) and
// restarts it within the same jiffy keeps the tick already queued, so the queue holds at
// most one tick per CPU however often the CPU enters and leaves idle.
void Engine::queueTick(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (c.tick_queued == c.tick_next) return;
    c.tick_queued = c.tick_next;
    pushAt(c.tick_next, c.tick_next - m_jiffyNs, EvTick, cpu);
}

void Engine::onTick(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (c.tick_queued == m_now) c.tick_queued = -1;
    if (c.tick_next != m_now) return;  // the tick was stopped (nohz idle) and not restarted for this jiffy
    if (m_cpuTimers[std::size_t(cpu)].empty()) return onTickBody(cpu);
    // The tick is an hrtimer of this CPU's interrupt: sleep timers expiring before now run before
    // it (one expiring at the tick's own time was armed after it: it comes after), the ones in
    // their slack window after it.
    hrtimerInterrupt(cpu, m_now - 1);
    onTickBody(cpu);
    hrtimerInterrupt(cpu);
}

void Engine::onTickBody(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (c.curr < 0) {
        onIdleTick(cpu);
        return;
    }
    accountSegment(cpu);
    update_curr(cpu);
    updateLoadAvg(cpu, &m_tasks[c.curr]);  // entity_tick(): update_load_avg(UPDATE_TG), update_cfs_group()
    update_cfs_group(cpu);
    syncRq(cpu);
    m_metrics.bpf_len[cpu] = std::uint16_t(std::min<unsigned>(m_st.rq[cpu].nr_running, 65535));
    if (!c.queue.empty()) checkPreemptTick(cpu);
    // rq->idle_balance = idle_cpu(cpu): the patched idle_cpu() can call a busy CPU idle.
    const bool idle_balance = idle_cpu(m_st, m_cfg.knobs, cpu);
    // trigger_load_balance(): raise SCHED_SOFTIRQ when due, then nohz_balancer_kick(); the
    // softirq (run_rebalance_domains) runs on the way out of the tick interrupt.
    const bool due = m_st.jiffies >= c.next_balance;
    nohzBalancerKick(cpu, idle_balance);
    if (due) {
        c.last_blocked_load_update_tick = m_st.jiffies;  // run_rebalance_domains(): update_blocked_averages() (the update above)
        rebalanceDomains(cpu, idle_balance ? IdleType::CPU_IDLE : IdleType::CPU_NOT_IDLE);
    }
    c.tick_next = m_now + m_jiffyNs;
    queueTick(cpu);
    if (c.need_resched && c.curr >= 0) {
        schedule(cpu);
    } else if (c.curr >= 0) {
        startSegment(cpu);  // speed or pending charge may have changed
        if (SimTask& t = m_tasks[c.curr]; t.watch_off_cpu) m_workloads[t.workload]->segmentMoved(*this, t);
    }
}

// The cpuidle governor's tick decision (menu: "Don't stop the tick if ... the expected idle
// duration is shorter than the tick period length"), on idle entry and after each idle tick.
bool Engine::idleStopsTick(int cpu) const {
    // No cpuidle driver: cpuidle_idle_call() stops the tick and runs default_idle_call().
    if (!m_cfg.cost.cpuidle_driver) return true;
    // A PM QoS limit that leaves only state 0: menu_select() returns it with
    // stop_tick = !(CPUIDLE_FLAG_POLLING), the tick kept on a polling state.
    const auto& cs = m_cfg.cost.cstates;
    if (cs.size() > 1 && m_latencyQos < cs[1].exit_ns) return !cs[0].polling;
    if (!m_cfg.knobs.idle_retain_tick) return true;
    return m_cpus[std::size_t(cpu)].predicted_idle >= m_jiffyNs;
}

// scheduler_tick() on the idle task (the tick was kept): the rq clock (clock_idle), the
// periodic balance as CPU_IDLE when due, then the idle loop asks the governor again.
void Engine::onIdleTick(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    m_metrics.idle_ticks++;
    rq.clock_idle = m_now;  // update_rq_clock() while curr is the idle task
    const bool idle_balance = idle_cpu(m_st, m_cfg.knobs, cpu);
    if (m_st.jiffies >= c.next_balance) {
        // run_rebalance_domains(): update_blocked_averages(), then rebalance_domains().
        updateBlockedAverages(cpu);
        rebalanceDomains(cpu, idle_balance ? IdleType::CPU_IDLE : IdleType::CPU_NOT_IDLE);
    }
    // The tick ended an idle interval as the governor sees it.
    const std::int64_t dur = m_now - c.idle_tick_from;
    c.predicted_idle = c.predicted_idle == 0 ? dur : (c.predicted_idle * 7 + dur) / 8;
    c.idle_tick_from = m_now;
    if (c.curr < 0 && c.queue.empty() && !c.need_resched && idleStopsTick(cpu)) {
        c.tick_next = -1;  // tick_nohz_idle_stop_tick()
        nohzBalanceEnterIdle(cpu);
        return;
    }
    c.tick_next = m_now + m_jiffyNs;
    queueTick(cpu);
}

void Engine::onSample() {
    for (int c = 0; c < m_nrCpus; ++c) m_rowBuf[c] = std::uint16_t(std::min<unsigned>(m_st.rq[c].nr_running, 65535));
    feedSteadyState();
    m_metrics.timeline.push(m_now, m_rowBuf.data());
    m_metrics.bpf_timeline.push(m_now, m_metrics.bpf_len.data());
    push(m_now + m_cfg.sample_period_ns, EvSample, 0);
}

// The steady-state detector's cumulative counters (the open busy and rq-length intervals
// included), and the workloads' progress (-1 when one of them cannot say).
void Engine::feedSteadyState() {
    Metrics& m = m_metrics;
    SteadyCounters sc;
    sc.t = m_now;
    for (int c = 0; c < m_nrCpus; ++c) {
        const std::int64_t open = m_now - m.last_change[c];
        sc.busy_cpu_ns += double(m.busy_ns[c] + (m.cur_busy[c] ? open : 0));
        sc.rq_len_area += (double(m.rqlen_area[c]) + double(m.cur_len[c]) * double(open)) / double(m_nrCpus);  // per CPU
    }
    sc.migrations = m.migrationsTotal();
    sc.ctx_switches = m.ctx_switches;
    // SIS_UTIL's state: the LLCs' nr_idle_scan as it stands (it changes only at a balance of
    // an LLC domain), and how many placements found it 0 and did not scan.
    sc.placements = m.decisions;
    sc.sis_util_aborts = m.stage2[std::size_t(Stage2::SIS_UTIL_ABORT)];
    if (m_cfg.knobs.SIS_UTIL && !m_llcShared.empty()) {
        double scan = 0, zero = 0;
        for (int id : m_llcShared) {
            const int n = m_st.shared[std::size_t(id)].nr_idle_scan;
            scan += n;
            zero += n == 0;
        }
        sc.idle_scan = scan / double(m_llcShared.size());
        sc.idle_scan_zero = zero / double(m_llcShared.size());
    }
    double prog = 0;
    int n = 0;
    for (const auto& w : m_workloads) {
        if (w->background()) continue;
        const double p = w->progress(*this);
        if (p < 0) {
            n = -1;
            break;
        }
        prog += p;
        ++n;
    }
    sc.progress = n > 0 ? prog / n : -1;
    m.steady.sample(sc);
}

}  // namespace sched
