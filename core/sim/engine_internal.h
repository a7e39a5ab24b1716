// SPDX-License-Identifier: GPL-2.0-or-later
// engine_internal.h: what the engine's source files share and nobody else sees: the per-CPU
// record (Engine::Cpu) and the "never" time. The engine is one class in four files by kernel
// area: engine.cpp (construction, the event loop, coalescing, segments of work, tasks,
// checks), engine_fair.cpp (the CFS runqueue, PELT and schedule()), engine_wakeup.cpp
// (wakeups, IPIs and the tick) and engine_balance.cpp (load balancing and nohz).
#pragma once

#include "sim/engine.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace sched {

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

struct Engine::Cpu {
    int curr = -1;                     ///< running task, -1 = the idle task
    int donor = -1;                    ///< proxy execution: the donor curr runs for (rq_selected(), out of the tree), -1 none
    std::int64_t proxy_exec_base = 0;  ///< proxy execution: curr's sum_exec when it started running for the donor
    std::vector<int> queue;            ///< queued (not running) tasks, ascending vruntime (the rb-tree)
    std::vector<int> wakelist;         ///< rq->wake_list (llist), in arrival order
    std::int64_t seg_start = 0;
    int speed = 1024;
    bool need_resched = false;
    bool resched_pending = false;     ///< an EvResched is queued
    bool ipi_pending = false;         ///< an EvIpi is queued
    bool in_idle = true;              ///< in the idle loop (C-state)
    bool irq_awake = false;           ///< a timer interrupt is running on this idle CPU: it left its C-state for it
    std::int64_t irq_busy_until = 0;  ///< an interrupt's wakeup keeps its handler running (the CPU awake) until then
    bool timer_irq_pending = false;   ///< an EvTimerIrq is queued (the C-state exit before the handler)
    std::int64_t exec_start = 0;
    int cstate = 0;
    std::int64_t idle_since = 0;
    std::int64_t predicted_idle = 0;  ///< governor's prediction (EWMA of idle lengths)
    std::int64_t lock_free_at = 0;    ///< rq->__lock: when its holders let go (reservations in order: __schedule(), wakers)
    std::int64_t ipi_at = 0;          ///< when the pending EvIpi runs (ipi_pending)
    int ttwu_unseen = 0;              ///< wakeups chosen for this CPU whose ttwu_pending / enqueue is not visible yet
    int ttwu_inflight = 0;            ///< wakeups chosen for this CPU not yet placed (in flight)
    std::int64_t pending_charge = 0;  ///< CPU cost to pay by whatever runs next here (IRQ work)
    int last_mm = -1;
    SchedAvg avg;  ///< cfs_rq->avg (root)
    std::int64_t removed_load = 0, removed_util = 0, removed_runnable = 0;
    std::int64_t tg_contrib = 0;  ///< cfs_rq->tg_load_avg_contrib
    std::int64_t last_tg_update = std::numeric_limits<std::int64_t>::min() / 2;
    std::int64_t util_est = 0;                         ///< cfs_rq->avg.util_est.enqueued
    std::int64_t tick_next = -1;                       ///< next tick time, -1 = tick stopped (nohz idle)
    std::int64_t tick_queued = -1;                     ///< time of the EvTick in the queue, -1 none (one per CPU at most)
    std::int64_t next_balance = 0;                     ///< rq->next_balance (jiffies)
    std::vector<std::int64_t> last_balance;            ///< per domain (jiffies)
    std::vector<int> balance_interval;                 ///< per domain (ms)
    std::vector<int> nr_balance_failed;                ///< per domain
    std::vector<NewidleStats> ni;                      ///< per domain (NI_RANDOM)
    std::vector<std::int64_t> max_newidle_lb_cost;     ///< per domain (ns): the largest newidle load_balance() cost, decayed
    std::vector<std::int64_t> last_decay_max_lb_cost;  ///< per domain (jiffies)
    int llc = 0;                                       ///< dense LLC index
    int switch_from = -1;                              ///< task that just slept/exited here (sched_switch prev)
    char switch_state = 'S';
    int cfs_head = -1, cfs_tail = -1;                ///< rq->cfs_tasks: the most recently enqueued or picked first (task ids)
    bool active_balance = false;                     ///< rq->active_balance (the stopper's work is queued)
    bool nohz_tick_stopped = true;                   ///< rq->nohz_tick_stopped: in nohz.idle_cpus_mask (sd_llc->nohz_idle)
    bool has_blocked_load = false;                   ///< rq->has_blocked_load
    std::int64_t last_blocked_load_update_tick = 0;  ///< rq->last_blocked_load_update_tick (jiffies)
    unsigned nohz_flags = 0;                         ///< nohz_flags(cpu): NOHZ_*_KICK pending on this CPU
    std::int64_t idle_tick_from = 0;                 ///< start of the idle interval the governor last measured
    int next_buddy = -1;                             ///< cfs_rq->next (a task id), -1 none
    int last_buddy = -1;                             ///< cfs_rq->last
};

/// rq->nr_running of a CPU: the queued tasks, curr, and a donor curr runs for.
/// rq_selected() of a CPU: the donor curr runs for (proxy execution), else curr; -1 idle.
inline int Engine::selOf(const Cpu& c) { return c.donor >= 0 ? c.donor : c.curr; }
inline unsigned Engine::nrOnRq(const Cpu& c) { return unsigned(c.queue.size()) + (c.curr >= 0 ? 1u : 0u) + (c.donor >= 0 ? 1u : 0u); }

// Small and called on every switch from each of the engine's files: defined here, inline.
inline void Engine::clearBurst(int cpu) { m_bq.clear(cpu); }
inline void Engine::setBurst(int cpu, std::int64_t t) { setBurstAt(cpu, t, m_now); }
inline void Engine::startSegment(int cpu) { setBurst(cpu, segmentEnd(cpu)); }
inline void Engine::setCurr(int cpu, int id) {
    m_cpus[cpu].curr = id;
    std::int32_t& was = m_currOf[std::size_t(cpu)];
    m_coreBusy[std::size_t(m_coreOf[std::size_t(cpu)])] += int(id >= 0) - int(was >= 0);
    was = id;
}

inline void Engine::emitEvent(EvKind kind, int cpu, int pid, int pid2, int target, int orig, char prev_state, std::uint8_t cause,
                              std::uint32_t state) {
    if (!m_metrics.wantEvents()) return;
    SchedEvent e;
    e.time = m_now;
    e.kind = kind;
    e.cpu = std::int16_t(cpu);
    e.pid = pid;
    e.pid2 = pid2;
    e.target_cpu = std::int16_t(target);
    e.orig_cpu = std::int16_t(orig);
    e.prev_state = prev_state;
    e.cause = cause;
    e.state = state;
    m_metrics.recordEvent(e);
}

inline void Engine::emitHrtimer(EvKind kind, int cpu, int pid, std::int64_t time, std::uint32_t slack, std::uint8_t mode) {
    SchedEvent e;
    e.time = m_now;
    e.kind = kind;
    e.cpu = std::int16_t(cpu);
    e.pid = pid;
    e.prev_state = char(kHrtimerWakeup);
    e.cause = mode;
    setHrtimerTime(e, time);
    setHrtimerSlack(e, slack);
    m_metrics.recordEvent(e);
}

}  // namespace sched
