// SPDX-License-Identifier: GPL-2.0-or-later
// engine_proxy.cpp: proxy execution as John Stultz's v6 series has it ("[PATCH v6 00/20]
// Proxy Execution: A generalized form of Priority Inheritance v6", LKML 2023-11-06, on
// 6.6; the tree Prateek Nayak measured in the seed thread). The knob proxy_exec turns it on
// for a run (the series' proxy_exec= boot parameter).
//
// - A task that blocks on a mutex stays on its runqueue (__schedule():
//   try_to_deactivate_task(..., !task_is_blocked(prev))): a donor. The mutex side
//   (kmutex.cpp) sets p->blocked_on and hands the lock off at every unlock (v6 10/20, "Switch
//   to mutex handoffs": no optimistic spinning), waking blocked_donor or the first waiter
//   with p->blocked_on_waking set (v6 09/20, 19/20).
// - Picking a donor follows the chain task -> blocked_on -> mutex owner (proxy(), v6
//   17/20): findProxyTask() below, branch by branch.
// - The owner runs in the donor's place: rq->curr is the owner, rq_selected() the donor; the
//   owner gets the runtime (sum_exec_runtime), the donor the vruntime (v6 12/20).
// - A donor whose owner is on another CPU is moved there (proxy_migrate_task(), v6 18/20: the
//   chain migration); a woken donor picked on a CPU outside its mask goes back through
//   select_task_rq(p, p->wake_cpu) (proxy_return_migration()).
// - Load balancing leaves donors alone (can_migrate_task(): task_is_blocked(),
//   task_current_selected(), v6 17/20).
//
// Not modelled (none of these changes a decision in the shipped workloads, whose mutex owners
// never sleep holding the lock -- the counters say when they would):
// - v6 20/20's parking of a donor on a sleeping owner (proxy_enqueue_on_owner() and the owner's
//   wakeup activating its blocked_head): such a donor is dequeued as before that patch
//   (proxy_deactivate()) and the unlock wakes it through try_to_wake_up(); counted in
//   proxy_deactivations.
// - proxy_resched_idle(): the kernel switches to the idle task for a moment where a chain
//   passes through the task still current on the CPU, or an owner is migrating; here the
//   pick goes on at once (prev is already back in the tree when the engine picks).
// - The owner stays in the tree while it runs for a donor in the kernel; here it is out of it
//   (as curr), its vruntime unchanged while it runs for the donor, so every pick sees the same
//   candidates; min_vruntime does not see the owner as a leftmost entity meanwhile.
#include "sim/engine_internal.h"
#include "sim/kmutex.h"

#include <fmt/format.h>

#include <stdexcept>

namespace sched {

void Engine::setBlockedOn(int id, KMutex* m) {
    if (!m_proxyOn) return;
    BlockedOn& b = m_blocked[std::size_t(id)];
    b.on = m;
    b.waking = false;  // set_task_blocked_on() / the wait loop after schedule(): blocked_on_waking = false
}

void Engine::setBlockedOnWaking(int id) {
    if (m_proxyOn) m_blocked[std::size_t(id)].waking = true;
}

int Engine::selectedTask(int cpu) const {
    const Cpu& c = m_cpus[std::size_t(cpu)];
    return selOf(c);
}

// attach_task() / activate_task() + check_preempt_curr() on `dst`, for a task `id` just
// enqueued there by `from`: an idle CPU reschedules, a running one when the task preempts it.
void Engine::attachPreempt(int dst, int id, int from) {
    if (m_cpus[dst].curr < 0) reschedCpu(dst, from);
    else checkPreemptAttached(dst, id, from);
}

// check_preempt_curr() on `dst` against its running curr for a task `id` just attached there
// by `from` (attach_task()); nothing when curr already has need_resched.
void Engine::checkPreemptAttached(int dst, int id, int from) {
    Cpu& d = m_cpus[dst];
    if (d.need_resched) return;
    Decision dummy;
    Waker w;
    w.cpu = from;
    w.in_task = false;
    w.current_ptr = &m_tasks[d.curr].t;
    WakeCtx ctx{m_st, m_cfg.knobs, w, dummy, false};
    if (check_preempt_curr(ctx, m_tasks[id].t, dst, 0, false, dst)) {
        setBuddies(dst, id, true, false);
        reschedCpu(dst, from);
    }
}

// proxy(rq, next): next (taken out of the tree by the pick) is blocked on a mutex. Follow
// task -> blocked_on -> owner. Returns the task to run in next's place, or -1 when the pick
// must be done again (next, or the task of its chain whose owner is elsewhere, was moved or
// dequeued; next is back in the tree unless it was that task).
int Engine::findProxyTask(int cpu, int next) {
    int p = next;
    for (int depth = 0;; ++depth) {
        if (depth > int(m_tasks.size()))
            throw std::logic_error(fmt::format("CPU {}: a blocked_on cycle through pid {} (a mutex deadlock)", cpu, m_tasks[next].t.pid));
        KMutex* m = m_blocked[std::size_t(p)].on;
        const int owner = m->owner();
        if (owner < 0) {
            // "if (!owner) return p": run the waiter, which takes the lock (next stays selected).
            if (p != next) queueErase(cpu, p);
            return p;
        }
        SimTask& o = m_tasks[owner];
        if (o.t.cpu != cpu) {
            // task_cpu(owner) != this_cpu: proxy_migrate_task(rq, rf, p, that_cpu): p goes to the
            // owner's runqueue ("the owner can disappear: simply migrate to that_cpu and leave
            // that CPU to sort things out"), next goes back into this one's tree.
            queueInsert(cpu, next);
            proxyMigrateTask(cpu, p, o.t.cpu);
            return -1;
        }
        if (o.state == TaskState::Blocked || o.state == TaskState::Exited || !o.t.on_rq) {  // !owner->on_rq (asleep, or on a wakelist)
            // !owner->on_rq: proxy_deactivate(rq, next) (v6 17/20; 20/20 parks next on the owner
            // instead, not modelled): next sleeps as a task off the runqueue, and the unlock
            // wakes it with try_to_wake_up().
            queueInsert(cpu, next);
            dequeueTask(cpu, next, true);
            m_tasks[next].state = TaskState::Blocked;
            m_metrics.proxy_deactivations++;
            return -1;
        }
        // The owner is queued here: run it for next, or follow its own blocked_on.
        m_blocked[std::size_t(owner)].donor = p;  // owner->blocked_donor = p
        if (!taskIsBlocked(owner)) {
            queueErase(cpu, owner);
            return owner;
        }
        p = owner;
    }
}

// proxy_migrate_task(): deactivate_task(rq, p, 0); set_task_cpu(p, target) keeping
// p->wake_cpu (where it may run when it is woken); activate_task() + check_preempt_curr() on
// the target. "We must respect the CPU affinity of execution contexts (owner) but we can
// ignore affinity for scheduling contexts (p)": the target may be outside p's mask.
void Engine::proxyMigrateTask(int cpu, int p, int target) {
    SimTask& t = m_tasks[p];
    const int wake_cpu = t.t.wake_cpu;
    dequeueTask(cpu, p, false);
    migrateTask(p, cpu, target, MigrationCause::proxy, cpu);
    t.t.wake_cpu = wake_cpu;
    enqueueTask(target, p, false, true);
    m_metrics.proxy_migrations++;
    attachPreempt(target, p, cpu);
}

// proxy_return_migration(): a donor woken by an unlock (blocked_on_waking) and picked on a
// CPU it may not run on goes to select_task_rq(p, p->wake_cpu, WF_TTWU), then the pick is
// done again. True when it moved.
bool Engine::proxyReturnMigration(int cpu, int next, int prev) {
    const BlockedOn& b = m_blocked[std::size_t(next)];
    SimTask& t = m_tasks[next];
    if (!b.on || !b.waking || t.t.cpus_ptr->test(cpu)) return false;
    queueInsert(cpu, next);
    Decision d;
    Waker w;
    w.cpu = cpu;
    w.in_task = true;
    w.current_ptr = prev >= 0 ? &m_tasks[prev].t : &m_idleTasks[cpu];  // current: still prev, in __schedule()
    WakeCtx ctx{m_st, m_cfg.knobs, w, d, false};
    const int to = select_task_rq(ctx, t.t, t.t.wake_cpu, WF_TTWU);
    dequeueTask(cpu, next, false);
    migrateTask(next, cpu, to, MigrationCause::proxy, cpu);
    enqueueTask(to, next, false, true);
    m_metrics.proxy_return_migrations++;
    attachPreempt(to, next, cpu);
    return true;
}

// try_to_wake_up() on a donor still on its runqueue (the unlock set blocked_on_waking):
// ttwu_runnable(): check_preempt_curr() unless it is the selected task (check_preempt_wakeup()
// compares it with rq_selected(), itself), then ttwu_do_wakeup().
void Engine::ttwuRunnableDonor(int id) {
    SimTask& p = m_tasks[id];
    ttwuRunnableStat(p);
    const int waker = m_stepCpu >= 0 ? m_stepCpu : p.t.cpu;
    if (m_cpus[p.t.cpu].donor != id) attachPreempt(p.t.cpu, id, waker);
}

}  // namespace sched
