// SPDX-License-Identifier: GPL-2.0-or-later
// engine_fair.cpp: the engine's CFS runqueue (enqueue/dequeue, update_curr, PELT and tg->load_avg, migration) and schedule().
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
// CFS runqueue

void Engine::queueInsert(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    const std::int64_t v = m_tasks[id].t.vruntime;
    // After equal keys: __enqueue_entity goes right on ties (entity_before is strict).
    auto it = std::upper_bound(c.queue.begin(), c.queue.end(), v, [&](std::int64_t key, int other) { return key < m_tasks[other].t.vruntime; });
    c.queue.insert(it, id);
}

void Engine::queueErase(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    auto it = std::find(c.queue.begin(), c.queue.end(), id);
    if (it != c.queue.end()) c.queue.erase(it);
}

void Engine::updateMinVruntime(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    std::int64_t vr = rq.min_vruntime;
    bool have = false;
    std::int64_t cand = 0;
    if (const int sel = selOf(c); sel >= 0) {  // cfs_rq->curr: the selected entity
        cand = m_tasks[sel].t.vruntime;
        have = true;
    }
    if (!c.queue.empty()) {
        const std::int64_t l = m_tasks[c.queue.front()].t.vruntime;
        cand = have ? std::min(cand, l) : l;
        have = true;
    }
    if (have) vr = std::max(vr, cand);
    rq.min_vruntime = vr;
}

// update_curr(): charge curr's runtime since exec_start to its vruntime.
void Engine::update_curr(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (c.curr < 0) return;
    SimTask& p = m_tasks[c.curr];
    const std::int64_t delta = m_now - c.exec_start;
    if (delta <= 0) return;
    c.exec_start = m_now;
    // Proxy execution (v6 "Fix runtime accounting w/ split exec & sched contexts"): the task
    // executing gets the runtime (sum_exec_runtime), the selected one (the donor) the vruntime.
    SimTask& sel = m_tasks[selOf(c)];
    p.sum_exec += delta;
    sel.t.vruntime += delta;  // nice 0: calc_delta_fair() is the identity
    p.t.exec_start = m_now;
    sel.t.exec_start = m_now;
    updateMinVruntime(cpu);
    m_st.rq[cpu].curr_vruntime = sel.t.vruntime;
}

void Engine::recordStateChange(int cpu) {
    auto& mc = m_metrics;
    const Cpu& c = m_cpus[cpu];
    const unsigned len = m_st.rq[cpu].nr_running;
    const std::uint8_t busy = c.curr >= 0 ? 1 : 0;
    if (len == mc.cur_len[cpu] && busy == mc.cur_busy[cpu]) return;
    const std::int64_t dt = m_now - mc.last_change[cpu];
    mc.rqlen_area[cpu] += std::int64_t(mc.cur_len[cpu]) * dt;
    if (mc.cur_busy[cpu]) mc.busy_ns[cpu] += dt;
    mc.last_change[cpu] = m_now;
    const bool wasIdle = mc.cur_len[cpu] == 0, wasOver = mc.cur_len[cpu] >= 2;
    const bool isIdle = len == 0, isOver = len >= 2;
    if (wasIdle != isIdle || wasOver != isOver) {
        const int l = c.llc;
        if (mc.llc_idle[l] > 0 && mc.llc_over[l] > 0) mc.idle_while_overloaded_ns[l] += m_now - mc.llc_last[l];
        mc.llc_last[l] = m_now;
        mc.llc_idle[l] += int(isIdle) - int(wasIdle);
        mc.llc_over[l] += int(isOver) - int(wasOver);
    }
    mc.cur_len[cpu] = std::uint16_t(std::min<unsigned>(len, 65535));
    mc.cur_busy[cpu] = busy;
}

// The MachineState view of this CPU, read by the wakeup path.
void Engine::syncRq(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    const unsigned n = nrOnRq(c);
    // add_nr_running(): crossing to two runnable tasks sets the root domain's overload flag.
    if (n >= 2 && rq.nr_running < 2) m_st.rd_overload = true;
    rq.nr_running = n;
    rq.h_nr_running = n;
    rq.idle_h_nr_running = 0;
    rq.curr = c.curr >= 0 ? CurrKind::Normal : CurrKind::Idle;
    if (c.curr >= 0) rq.curr_vruntime = m_tasks[selOf(c)].t.vruntime;
    rq.curr_need_resched = c.need_resched;
    rq.ttwu_pending = !c.wakelist.empty();
    rq.load_avg = std::int64_t(c.avg.load_avg);
    rq.util_avg = std::int64_t(c.avg.util_avg);
    rq.runnable_avg = std::int64_t(c.avg.runnable_avg);
    rq.util_est = c.util_est;
    recordStateChange(cpu);
}

// The cost of one access to tg->load_avg's cache line (docs/workloads.md: Cost-model figures and their sources; Aaron Lu's
// profile: update_cfs_group() + update_load_avg() 25-36 % of the cycles of SPR hackbench):
// the line is contended in proportion to how many updates it took in the last window, whether
// this access writes it (update_tg_load_avg()'s atomic_long_add) or reads it
// (calc_group_shares()'s atomic_long_read). A write is recorded for the accesses after it.
std::int64_t Engine::tgLineAccessCost(bool write) {
    const double s = m_cfg.cost.s(CostTerm::tg_load_avg);
    if (s == 0.0) return 0;
    const CostModel& cm = m_cfg.cost;
    // The ring holds the last updates' times in order (time never goes back); the newest
    // m_tgInWindow of them are inside the window. The window only moves forward, so an update
    // that left it never comes back: drop from the oldest end.
    constexpr std::size_t n = kTgRecent;
    static_assert((n & (n - 1)) == 0);
    const std::int64_t from = m_now - cm.tg_update_window;
    while (m_tgInWindow > 0 && m_tgRecent[(m_tgPos - m_tgInWindow) & (n - 1)] <= from) m_tgInWindow--;
    const int recent = int(m_tgInWindow);
    if (write) {
        m_tgRecent[m_tgPos] = m_now;
        m_tgPos = m_tgPos + 1 == n ? 0 : m_tgPos + 1;
        if (m_tgInWindow < n) m_tgInWindow++;  // else the oldest was overwritten
    }
    const std::int64_t cost = std::min(cm.tg_update_cap, cm.tg_update_base + cm.tg_update_per_cpu * recent);
    return cm.c(CostTerm::tg_load_avg, cost);
}

// CPU time on the tg->load_avg line, paid by the task whose step does the update (a remote
// enqueue is the waker's work) or, outside a step, by whatever runs next on `cpu`.
void Engine::chargeTg(int cpu, std::int64_t cost) {
    if (cost == 0) return;
    m_metrics.cost_tg += cost;
    if (m_stepping >= 0 && m_stepCpu >= 0) m_tasks[m_stepping].work_left += cost;
    else addPendingCharge(m_tgPayer >= 0 ? m_tgPayer : cpu, cost);
}

// update_tg_load_avg(cfs_rq): only when the contribution moved by more than 1/64 (and, with
// Aaron Lu's ratelimit, at most once per window per cfs_rq: the knob tg_load_avg_ratelimit_ns,
// else the older cost parameter tg_ratelimit_ns).
void Engine::update_tg_load_avg(int cpu) {
    Cpu& c = m_cpus[cpu];
    const std::int64_t delta = std::int64_t(c.avg.load_avg) - c.tg_contrib;
    const std::int64_t window = m_cfg.knobs.tg_load_avg_ratelimit_ns > 0 ? m_cfg.knobs.tg_load_avg_ratelimit_ns : m_cfg.cost.tg_ratelimit_ns;
    if ((delta < 0 ? -delta : delta) > c.tg_contrib / 64 && (window == 0 || m_now - c.last_tg_update >= window)) {
        c.tg_contrib = std::int64_t(c.avg.load_avg);
        c.last_tg_update = m_now;
        m_metrics.tg_updates++;
        chargeTg(cpu, tgLineAccessCost(true));
    }
}

// update_cfs_group() of the task group's entity: calc_group_shares() reads tg->load_avg, on
// every enqueue and dequeue of a task of the group and at every entity_tick().
void Engine::update_cfs_group(int cpu) {
    m_metrics.tg_reads++;
    chargeTg(cpu, tgLineAccessCost(false));
}

// sync_entity_load_avg(): __update_load_avg_blocked_se() to cfs_rq_last_update_time() of
// p's cfs_rq, in place, as the kernel does.
void Engine::sync_entity_load_avg(Task& p) { pelt_update(m_cpus[p.cpu].avg.last_update_time, p.avg, 0, 0, 0); }

// update_load_avg(cfs_rq, se, flags): the entity (if attached), removed load, the cfs_rq,
// then the attach of a migrated or new entity (DO_ATTACH with last_update_time 0) or the
// detach of a migrating one (DO_DETACH), each with update_tg_load_avg(), or else
// update_tg_load_avg() on UPDATE_TG when the cfs_rq decayed.
void Engine::updateLoadAvg(int cpu, SimTask* se, unsigned flags) {
    Cpu& c = m_cpus[cpu];
    const std::uint64_t now = std::uint64_t(m_now);
    if (se && se->t.avg.last_update_time) {  // __update_load_avg_se(): not for an entity not attached yet
        const bool onrq = se->t.on_rq;       // se->on_rq: still 0 in enqueue_entity's update, still 1 in dequeue_entity's
        const int sel = selOf(c);            // cfs_rq->curr == se: the selected entity
        pelt_update(now, se->t.avg, onrq ? 1 : 0, onrq ? 1 : 0, sel >= 0 && &m_tasks[sel] == se ? 1 : 0);
    }
    bool decayed = false;
    if (c.removed_load || c.removed_util || c.removed_runnable) {
        // update_cfs_rq_load_avg(): sub_positive() the removed averages and sums, and keep
        // each sum at least avg * PELT_MIN_DIVIDER.
        const std::uint64_t divider = get_pelt_divider(c.avg);
        auto remove = [divider](auto& avg, auto& sum, std::int64_t r) { sub_avg_and_sum(avg, sum, std::uint64_t(r), std::uint64_t(r) * divider); };
        remove(c.avg.load_avg, c.avg.load_sum, c.removed_load);
        remove(c.avg.util_avg, c.avg.util_sum, c.removed_util);
        remove(c.avg.runnable_avg, c.avg.runnable_sum, c.removed_runnable);
        c.removed_load = c.removed_util = c.removed_runnable = 0;
        decayed = true;
    }
    const unsigned long nr = nrOnRq(c);
    decayed |= pelt_update_cfs(now, c.avg, 1024 * nr, nr, c.curr >= 0 ? 1 : 0);
    if (se && (flags & DO_ATTACH) && !se->t.avg.last_update_time) {
        // "DO_ATTACH means we're here from enqueue_entity()": a task that migrated (or a new
        // one) is attached at this cfs_rq's clock, after its decay.
        attachLoadAvg(c, *se);
        update_tg_load_avg(cpu);
    } else if (se && (flags & DO_DETACH)) {
        // "DO_DETACH means we're here from dequeue_entity() and we are migrating task out of
        // the CPU" (6.1, "Combine detach into dequeue when migrating task").
        detachLoadAvg(c, *se);
        update_tg_load_avg(cpu);
    } else if (decayed && (flags & UPDATE_TG)) {
        update_tg_load_avg(cpu);
    }
}

// enqueue_task_fair() + the engine's queue.
void Engine::enqueueTask(int cpu, int id, bool wakeup, bool migrated) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    Rq& rq = m_st.rq[cpu];
    update_curr(cpu);
    updateLoadAvg(cpu, &p, UPDATE_TG | DO_ATTACH);  // attaches p when it migrated or is new (last_update_time 0)
    update_cfs_group(cpu);                          // the group entity on the parent cfs_rq
    // update_rq_clock() before an activation or attach: on an idle rq, update_rq_clock_pelt()
    // stamps rq->clock_idle (idle-delay v3's clock) -- when rq->curr is the idle task, not
    // while schedule() runs newidle balancing for a task that just slept (curr is still it).
    if (c.curr < 0 && c.in_idle) rq.clock_idle = m_now;
    if (wakeup) {
        sis_cache_wakeup(m_cfg.knobs, p.t, m_now);  // SIS_CACHE: the sleep just ended
        // enqueue_entity(): a migrated wakee's vruntime was made relative to its old cfs_rq by
        // migrate_task_rq_fair() when try_to_wake_up() moved it (migrateTask); renormalise it
        // here, after update_curr(), against this cfs_rq's min_vruntime at the enqueue (which,
        // on the wakelist path, is the IPI's time, not the waking's).
        std::int64_t vr = p.t.vruntime;
        if (migrated) vr += rq.min_vruntime;
        const bool longSleeper = p.t.exec_start != 0 && (m_now - p.t.exec_start) > (std::int64_t(1) << 53);
        p.t.vruntime = placeEntityWakeup(m_tun, m_cfg.knobs, rq.min_vruntime, vr, longSleeper);
    } else {
        p.t.vruntime += rq.min_vruntime;  // attach: renormalise to this cfs_rq
    }
    // ENQUEUE_MIGRATED (ttwu with WF_MIGRATED, attach_task): "Entity has migrated, no longer
    // consider this task hot": exec_start = 0, after place_entity (6.1 stable, a53ce18cacb4).
    if (migrated) p.t.exec_start = 0;
    p.state = TaskState::Runnable;
    p.t.on_rq = true;
    p.t.cpu = cpu;
    c.util_est += std::int64_t(task_util_est(p.t.avg));
    cfsListAdd(cpu, id);  // account_entity_enqueue(): list_add(&se->group_node, &rq->cfs_tasks)
    queueInsert(cpu, id);
    updateMinVruntime(cpu);
    syncRq(cpu);
}

// dequeue_task_fair(); the task is either curr or queued.
void Engine::dequeueTask(int cpu, int id, bool sleep) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    // dequeue_entity(): clear_buddies(cfs_rq, se)
    if (c.next_buddy == id) c.next_buddy = -1;
    if (c.last_buddy == id) c.last_buddy = -1;
    update_curr(cpu);
    // A dequeue that is not a sleep is a migration (detach_task(), the stopper's
    // detach_one_task(): TASK_ON_RQ_MIGRATING): its load leaves this cfs_rq now.
    updateLoadAvg(cpu, &p, UPDATE_TG | (sleep ? 0u : DO_DETACH));
    update_cfs_group(cpu);  // the group entity on the parent cfs_rq
    c.util_est = std::max<std::int64_t>(0, c.util_est - std::int64_t(task_util_est(p.t.avg)));
    if (sleep && m_cfg.knobs.UTIL_EST) util_est_update_task(p.t.avg, m_cfg.knobs.UTIL_EST_FASTUP);
    if (sleep) dur_avg_update(p.t, p.sum_exec);  // SIS_CURRENT's 1/2: recorded whatever the knobs, read by SIS_CURRENT
    if (c.curr == id) {
        setCurr(cpu, -1);
        clearBurst(cpu);
    } else {
        queueErase(cpu, id);
    }
    cfsListDel(cpu, id);                                    // account_entity_dequeue(): list_del_init(&se->group_node)
    if (!sleep) p.t.vruntime -= m_st.rq[cpu].min_vruntime;  // detach: make relative
    p.t.on_rq = false;
    updateMinVruntime(cpu);
    syncRq(cpu);
    sis_cache_dequeue(m_cfg.knobs, p.t, m_st.rq[cpu], sleep, m_now);  // SIS_CACHE's stamps (recorded whatever the knobs)
}

namespace {
// The cost of one 64-byte line fetched from another CPU's cache at that distance.
std::int64_t perLineCost(const CostModel& cm, DistClass d) {
    switch (d) {
    case DistClass::same_cpu: return 0;
    case DistClass::smt: return cm.refill_smt_line;
    case DistClass::llc: return cm.refill_llc_line;
    case DistClass::cross_llc:
    case DistClass::cross_node: return cm.refill_cross_llc_line;
    case DistClass::cross_socket: return cm.refill_cross_socket_line;
    case DistClass::count_: break;
    }
    return 0;
}
}  // namespace

std::int64_t Engine::migrationCost(const SimTask& p, int from, int to) const {
    const CostModel& cm = m_cfg.cost;
    const std::int64_t hot = p.hot_set > 0 ? p.hot_set : cm.hot_set_bytes;
    return cm.c(CostTerm::cache_refill, hot / 64 * perLineCost(cm, distClass(*m_cfg.topo, from, to)));
}

std::int64_t Engine::messageTrip(int writerCpu, int readerCpu) {
    if (writerCpu == readerCpu || writerCpu < 0 || readerCpu < 0) return 0;
    const CostModel& cm = m_cfg.cost;
    const std::int64_t ns = cm.c(CostTerm::msg_trip, cm.msg_lines * perLineCost(cm, distClass(*m_cfg.topo, writerCpu, readerCpu)));
    m_metrics.cost_msg_trip += ns;
    return ns;
}

// detach_entity_load_avg(): dequeue_load_avg() and the util and runnable averages and sums
// taken off with sub_positive(), each sum kept at least its average * PELT_MIN_DIVIDER.
void Engine::detachLoadAvg(Cpu& src, SimTask& p) {
    const SchedAvg& a = p.t.avg;
    sub_avg_and_sum(src.avg.load_avg, src.avg.load_sum, a.load_avg, a.load_sum * 1024);  // se_weight(se) * se->avg.load_sum
    sub_avg_and_sum(src.avg.util_avg, src.avg.util_sum, a.util_avg, a.util_sum);
    sub_avg_and_sum(src.avg.runnable_avg, src.avg.runnable_sum, a.runnable_avg, a.runnable_sum);
}

// attach_entity_load_avg(): align the entity to the cfs_rq's clock and add its averages and sums.
void Engine::attachLoadAvg(Cpu& dst, SimTask& p) {
    p.t.avg.last_update_time = dst.avg.last_update_time;
    p.t.avg.period_contrib = dst.avg.period_contrib;
    const std::uint32_t divider = get_pelt_divider(dst.avg);
    p.t.avg.load_sum = p.t.avg.load_avg * divider / 1024;  // se weight 1024: load_avg = load * load_sum / divider
    p.t.avg.util_sum = std::uint32_t(p.t.avg.util_avg * divider);
    p.t.avg.runnable_sum = p.t.avg.runnable_avg * divider;
    dst.avg.load_avg += p.t.avg.load_avg;
    dst.avg.load_sum += p.t.avg.load_sum * 1024;  // se_weight(se) * se->t.avg.load_sum
    dst.avg.util_avg += p.t.avg.util_avg;
    dst.avg.util_sum += p.t.avg.util_sum;
    dst.avg.runnable_avg += p.t.avg.runnable_avg;
    dst.avg.runnable_sum += p.t.avg.runnable_sum;
}

// set_task_cpu() across CPUs: migrate_task_rq_fair(); sched_migrate_task. The new cfs_rq
// attaches the task at its enqueue (update_load_avg(UPDATE_TG | DO_ATTACH)).
void Engine::migrateTask(int id, int from, int to, MigrationCause cause, int on_cpu) {
    SimTask& p = m_tasks[id];
    Cpu& src = m_cpus[from];
    if (cause == MigrationCause::wakeup) {
        // !task_on_rq_migrating(p): remove_entity_load_avg(): sync_entity_load_avg() to the old
        // cfs_rq's clock, then added to its removed load (taken off at its next update).
        // A queued task that balancing moves was detached by its dequeue (DO_DETACH).
        pelt_update(src.avg.last_update_time, p.t.avg, 0, 0, 0);
        src.removed_load += std::int64_t(p.t.avg.load_avg);
        src.removed_util += std::int64_t(p.t.avg.util_avg);
        src.removed_runnable += std::int64_t(p.t.avg.runnable_avg);
    }
    p.t.avg.last_update_time = 0;                     // "Tell new CPU we are migrated"
    migrate_task_ratelimit(m_cfg.knobs, p.t, m_now);  // the migration ratelimit's window (its knobs)
    // migrate_task_rq_fair(), for a task in TASK_WAKING (try_to_wake_up's set_task_cpu):
    // se->vruntime -= old cfs_rq->min_vruntime, read now, not when the wakee is enqueued.
    // Balancing moves a queued task, whose detach (dequeue without DEQUEUE_SLEEP) made it relative.
    if (cause == MigrationCause::wakeup) p.t.vruntime -= m_st.rq[from].min_vruntime;
    p.t.cpu = to;
    p.t.wake_cpu = to;  // __set_task_cpu(): p->wake_cpu = cpu
    emitEvent(EvKind::sched_migrate_task, on_cpu, p.t.pid, 0, to, from, 'R', std::uint8_t(cause));
    m_metrics.migrations[int(cause)]++;
    if (migration_sink) migration_sink(m_now, p.t.pid, from, to, cause);
    m_metrics.migration_matrix[int(cause)][int(distClass(*m_cfg.topo, from, to))]++;
}

// ---------------------------------------------------------------------------
// schedule()

// check_preempt_wakeup()'s buddies, after p was enqueued on `cpu`: NEXT_BUDDY marks p when
// the cfs_rq has sched_nr_latency tasks (not for a fork); a wakeup that preempts makes p the
// next buddy (if not marked yet) and, with LAST_BUDDY and that many tasks, curr the last.
// An idle curr is preempted by the class check alone: no buddy.
void Engine::setBuddies(int cpu, int id, bool preempted, bool fork) {
    Cpu& c = m_cpus[cpu];
    // se = &rq_selected(rq)->se (proxy execution: the donor whose context curr runs)
    const int sel = selOf(c);
    if (sel < 0 || sel == id) return;
    const std::int64_t nr = std::int64_t(nrOnRq(c));                       // cfs_rq->nr_running: curr and the queued, p included
    const bool scale = nr >= m_tun.latency_ns / m_tun.min_granularity_ns;  // sched_nr_latency
    bool marked = false;
    if (m_cfg.knobs.NEXT_BUDDY && scale && !fork) {
        c.next_buddy = id;
        marked = true;
    }
    if (!preempted) return;
    if (!marked) c.next_buddy = id;
    if (m_cfg.knobs.LAST_BUDDY && scale) c.last_buddy = sel;
}

// pick_next_entity() (6.1): the leftmost, unless the next buddy (else the last buddy) is
// within wakeup_gran of it; set_next_entity()'s clear_buddies() forgets the one picked.
int Engine::pickNextEntity(int cpu) {
    Cpu& c = m_cpus[cpu];
    const int left = c.queue.front();
    int se = left;
    auto ok = [&](int b) {
        return b >= 0 && m_tasks[b].t.on_rq && m_tasks[b].t.cpu == cpu && b != c.curr &&
               wakeup_preempt_entity(m_tun, m_tasks[b].t.vruntime, m_tasks[left].t.vruntime) < 1;
    };
    if (ok(c.next_buddy)) se = c.next_buddy;
    else if (ok(c.last_buddy)) se = c.last_buddy;
    if (c.next_buddy == se) c.next_buddy = -1;
    if (c.last_buddy == se) c.last_buddy = -1;
    if (se == left) {
        c.queue.erase(c.queue.begin());
    } else {
        queueErase(cpu, se);
        m_metrics.buddy_picks++;
    }
    return se;
}

void Engine::schedule(int cpu) {
    Cpu& c = m_cpus[cpu];
    const int prev = c.curr;
    c.need_resched = false;
    m_st.rq[cpu].curr_need_resched = false;
    bool involuntary = false;
    const bool proxyBlocking = m_proxyBlocking;  // prev blocked on a mutex and stays queued (a donor)
    m_proxyBlocking = false;
    if (prev >= 0) {
        SimTask& p = m_tasks[prev];
        accountSegment(cpu);
        update_curr(cpu);
        // put_prev_entity(): back into the tree (still runnable: a preemption);
        // update_load_avg(cfs_rq, prev, 0): no UPDATE_TG.
        updateLoadAvg(cpu, &p, 0);
        setCurr(cpu, -1);
        clearBurst(cpu);
        p.state = TaskState::Runnable;
        queueInsert(cpu, prev);
        involuntary = !proxyBlocking;
    }
    if (c.donor >= 0) {
        // Proxy execution: put_prev_task(rq, rq_selected(rq)): the donor goes back into the tree.
        const int d = c.donor;
        updateLoadAvg(cpu, &m_tasks[d], 0);
        c.donor = -1;
        queueInsert(cpu, d);
    }
    // Who is switched out (for sched_switch): a preempted curr, a task that just slept or exited, or swapper.
    int prevPid = 0;
    char prevState = 'R';
    if (prev >= 0) {
        prevPid = m_tasks[prev].t.pid;
        if (proxyBlocking) prevState = 'D';
    } else if (c.switch_from >= 0) {
        prevPid = m_tasks[c.switch_from].t.pid;
        prevState = c.switch_state;
    }
    const int current = prev >= 0 ? prev : c.switch_from;  // `current` in __schedule() (-1: the idle task)
    c.switch_from = -1;
    int next = -1, exec = -1;
    for (;;) {
        // pick_next_task_fair(): newidle balance when nothing is queued.
        if (c.queue.empty()) {
            newidleBalance(cpu);
            if (c.queue.empty()) {
                if (prevPid != 0) emitEvent(EvKind::sched_switch, cpu, prevPid, 0, -1, -1, prevState);
                if (prev >= 0) {  // a donor that went back into the tree and was moved away
                    m_tasks[prev].t.on_cpu = false;
                    if (m_tasks[prev].watch_off_cpu) m_workloads[m_tasks[prev].workload]->offCpu(*this, m_tasks[prev]);
                }
                enterIdle(cpu);
                return;
            }
        }
        next = pickNextEntity(cpu);
        exec = next;
        if (!m_proxyOn) break;
        m_blocked[std::size_t(next)].donor = -1;  // __schedule(): next->blocked_donor = NULL after each pick
        if (taskIsBlocked(next)) {
            exec = findProxyTask(cpu, next);  // -1: next (or a task of its chain) was moved or deactivated: pick again
            if (exec >= 0) break;
            continue;
        }
        if (!proxyReturnMigration(cpu, next, current)) break;
    }
    SimTask& n = m_tasks[exec];
    SimTask& sel = m_tasks[next];
    const bool fromIdle = c.in_idle;
    setCurr(cpu, exec);
    n.state = TaskState::Running;
    if (exec != next) {
        c.donor = next;  // rq_set_selected(rq, next); rq->curr = the owner
        c.proxy_exec_base = n.sum_exec;
        m_metrics.proxy_runs++;
    }
    cfsListDel(cpu, next);  // pick_next_task_fair(): list_move(&p->se.group_node, &rq->cfs_tasks)
    cfsListAdd(cpu, next);
    updateLoadAvg(cpu, &sel);  // set_next_entity: update_load_avg before it becomes curr
    c.exec_start = m_now;
    sel.t.exec_start = m_now;
    n.t.exec_start = m_now;
    sel.prev_sum_exec = sel.sum_exec;
    n.t.on_cpu = true;
    if (exec != prev) {
        m_metrics.ctx_switches++;
        if (involuntary) m_metrics.involuntary_switches++;
        const CostModel& cm = m_cfg.cost;
        const std::int64_t sw = cm.c(CostTerm::ctx_switch, c.last_mm == n.mm ? cm.ctx_switch_thread : cm.ctx_switch_process);
        n.work_left += sw;
        m_metrics.cost_ctx_switch += sw;
        c.last_mm = n.mm;
        if (n.last_ran_cpu >= 0 && n.last_ran_cpu != cpu) {
            const std::int64_t r = migrationCost(n, n.last_ran_cpu, cpu);
            n.work_left += r;
            m_metrics.cost_refill += r;
        }
        n.last_ran_cpu = cpu;
        if (n.wake_time >= 0) {
            m_metrics.wakeup_latency.record(m_now - n.wake_time);
            n.wake_time = -1;
        }
    }
    if (prev >= 0 && prev != exec) {
        SimTask& pp = m_tasks[prev];
        pp.t.on_cpu = false;
        if (pp.watch_off_cpu) m_workloads[pp.workload]->offCpu(*this, pp);
    }
    const bool again = prev >= 0 && prev == exec;  // curr runs on, its work re-timed (a pending charge, the speed)
    if (fromIdle) leaveIdle(cpu);
    if (exec != prev) emitEvent(EvKind::sched_switch, cpu, prevPid, n.t.pid, -1, -1, prevState);
    syncRq(cpu);
    if (c.tick_next < 0) {  // tick_nohz_idle_exit(): the tick restarts on the jiffy grid
        const std::int64_t j = m_jiffyNs;
        c.tick_next = (m_now / j + 1) * j;
        queueTick(cpu);
    }
    if (fromIdle) reschedSpeed(cpu);
    startSegment(cpu);
    if (again && n.watch_off_cpu) m_workloads[n.workload]->segmentMoved(*this, n);
}

void Engine::enterIdle(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    setCurr(cpu, -1);
    clearBurst(cpu);
    syncRq(cpu);
    // set_next_task_idle(): __update_idle_core, claim cleared, clock_idle.
    set_next_task_idle(m_st, m_cfg.knobs, cpu);
    nohzRunIdleBalance(cpu);  // do_idle()
    // cpuidle governor: deepest state whose target residency fits the predicted idle time and
    // whose exit latency the PM QoS limit allows (cpuidle_governor_latency_req()).
    const auto& cs = m_cfg.cost.cstates;
    int pick = 0;
    for (int i = 0; i < int(cs.size()); ++i)
        if (cs[i].residency_ns <= c.predicted_idle && (cs[i].exit_ns <= m_latencyQos || !m_cfg.cost.cpuidle_driver)) pick = i;
    c.cstate = pick;
    rq.exit_latency_ns = cs[pick].exit_ns;
    emitEvent(EvKind::cpu_idle, cpu, 0, 0, -1, -1, 'R', 0, std::uint32_t(pick));
    const bool wasIdle = c.in_idle;
    c.in_idle = true;
    c.idle_since = m_now;
    c.idle_tick_from = m_now;
    if (idleStopsTick(cpu) || c.tick_next < 0) {
        c.tick_next = -1;  // tick_nohz_idle_stop_tick()
        nohzBalanceEnterIdle(cpu);
    }                            // else tick_nohz_idle_retain_tick(): the queued tick stays
    m_metrics.bpf_len[cpu] = 0;  // the seed script's cpu_idle probe
    if (!wasIdle) reschedSpeed(cpu);
}

void Engine::leaveIdle(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    const std::int64_t dur = m_now - c.idle_since;
    c.predicted_idle = c.predicted_idle == 0 ? dur : (c.predicted_idle * 7 + dur) / 8;
    c.in_idle = false;
    emitEvent(EvKind::cpu_idle, cpu, 0, 0, -1, -1, 'R', 0, PWR_EVENT_EXIT);
    rq.idle_end_time = m_now;  // idle-delay v1/v2: stamped when the idle loop is left
    rq.clock_idle = m_now;     // __schedule()'s update_rq_clock() while curr is still the idle task
    rq.exit_latency_ns = -1;
}

// How long until `cpu` acts on what `from_cpu` just asked of it (resched_curr()'s
// set_nr_and_not_polling(), send_call_function_single_ipi()'s set_nr_if_polling()): a CPU idle
// in a polling state (poll_idle, MWAIT) sees its flag word written and needs no IPI
// (sched_wake_idle_without_ipi); any other needs one (none to itself). An idle CPU then leaves
// its C-state.
std::int64_t Engine::kickDelay(int cpu, int from_cpu) {
    const Cpu& c = m_cpus[cpu];
    const CostModel& cm = m_cfg.cost;
    // A timer interrupt's handler already woke it (and runs until its wakeups are placed).
    const bool idle = c.curr < 0 && c.in_idle && !c.irq_awake && m_now >= c.irq_busy_until;
    std::int64_t delay = 0;
    if (idle && cm.cstates[c.cstate].polling) {
        if (cpu != from_cpu) m_metrics.wake_idle_without_ipi++;
    } else if (cpu != from_cpu) {
        delay += cm.c(CostTerm::ipi, m_cfg.topo->cpu(cpu).package == m_cfg.topo->cpu(from_cpu).package ? cm.ipi_same_socket : cm.ipi_cross_socket);
        m_metrics.ipis++;
    }
    if (idle) {
        const std::int64_t ex = cm.c(CostTerm::idle_exit, cm.cstates[c.cstate].exit_ns);
        delay += ex;
        m_metrics.idle_exit_latency += ex;
    }
    return delay;
}

// resched_curr() from `from_cpu`: an IPI (or the polling flag) and, on an idle
// CPU, the C-state exit before schedule() runs there.
void Engine::reschedCpu(int cpu, int from_cpu) {
    cutPlanOnCpu(cpu);  // the next boundary is a preemption point
    Cpu& c = m_cpus[cpu];
    c.need_resched = true;
    m_st.rq[cpu].curr_need_resched = c.curr >= 0;
    if (c.curr >= 0 && cpu == m_stepCpu) return;  // preempted at the end of the current step
    if (c.resched_pending) return;
    const std::int64_t delay = kickDelay(cpu, from_cpu);
    c.resched_pending = true;
    push(m_now + delay, EvResched, cpu);
}

// rq->cfs_tasks as an intrusive list of task ids (SimTask::cfs_newer / cfs_older).
void Engine::cfsListAdd(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    p.cfs_newer = -1;
    p.cfs_older = c.cfs_head;
    if (c.cfs_head >= 0) m_tasks[c.cfs_head].cfs_newer = id;
    else c.cfs_tail = id;
    c.cfs_head = id;
}

void Engine::cfsListDel(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    if (p.cfs_newer >= 0) m_tasks[p.cfs_newer].cfs_older = p.cfs_older;
    else c.cfs_head = p.cfs_older;
    if (p.cfs_older >= 0) m_tasks[p.cfs_older].cfs_newer = p.cfs_newer;
    else c.cfs_tail = p.cfs_newer;
    p.cfs_newer = p.cfs_older = -1;
}

}  // namespace sched
