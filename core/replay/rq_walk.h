// SPDX-License-Identifier: GPL-2.0-or-later
// rq_walk.h: which runqueue each task of a trace is on, as the trace's events move it. The
// agreement replay (replay.cpp) and the trace cursor (TraceWalker, trace_snapshot.cpp) rebuild it
// the same way from this one walk; each adds its own side effects (PELT and util_est for the
// replay, rq-length areas for the cursor) through hooks.
#pragma once

#include <cstdint>

namespace sched {

/// A task is queued on a CPU by its wakeup (the woken CPU), by running there (sched_switch in,
/// or the current-task column), moved by sched_migrate_task while queued (a task that is not
/// queued only changes task_cpu), and dequeued by a switch-out that is not a preemption
/// (prev_state other than 'R') or by its exit. Pid 0 (the idle tasks) is never queued.
///
/// `Derived` owns the records (each with `bool runnable` and an integer `cpu`, -1 unknown) and provides:
///   Rec* findTask(pid)                       the task's record, or null
///   Rec& taskAt(pid, now)                    the task's record, made when new
///   void beforeQueueChange(Rec&, now)        before a task's queueing is looked at (PELT catches up)
///   void sleeping(Rec&, now)                 a queued task is about to leave its queue (util_est)
///   void nrChanged(cpu, pid, delta, now)     a CPU of the machine gains (+1) or loses (-1) a queued task
template <class Derived>
class TraceRqWalk {
public:
    explicit TraceRqWalk(int ncpus) : m_ncpus(ncpus) {}

    /// `pid` is on CPU `c`'s queue from `now` (moved from the queue it was on, if any).
    void enqueue(std::int32_t pid, int c, std::int64_t now) {
        if (pid == 0 || c < 0 || c >= m_ncpus) return;
        auto& r = self().taskAt(pid, now);
        self().beforeQueueChange(r, now);
        if (r.runnable && r.cpu == c) return;
        if (r.runnable && r.cpu >= 0) self().nrChanged(int(r.cpu), pid, -1, now);
        r.runnable = true;
        r.cpu = decltype(r.cpu)(c);
        self().nrChanged(c, pid, +1, now);
    }

    /// `pid` leaves its queue (it sleeps or exits); nothing when it is not queued.
    void dequeue(std::int32_t pid, std::int64_t now) {
        auto* r = self().findTask(pid);
        if (!r || !r->runnable) return;
        self().beforeQueueChange(*r, now);
        self().sleeping(*r, now);
        r->runnable = false;
        if (r->cpu >= 0 && r->cpu < m_ncpus) self().nrChanged(int(r->cpu), pid, -1, now);
    }

    /// sched_migrate_task: a queued task moves to `target`'s queue; one that is not queued only
    /// gets `target` as its CPU.
    void migrate(std::int32_t pid, int target, std::int64_t now) {
        auto& r = self().taskAt(pid, now);
        if (r.runnable) enqueue(pid, target, now);
        else r.cpu = decltype(r.cpu)(target);
    }

protected:
    int ncpus() const { return m_ncpus; }

private:
    Derived& self() { return static_cast<Derived&>(*this); }
    int m_ncpus;
};

}  // namespace sched
