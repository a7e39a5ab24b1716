// SPDX-License-Identifier: GPL-2.0-or-later
// core_wakeup.cpp: kernel/sched/core.c's part of the Linux 6.1 (Debian 6.1.192) wakeup path:
// try_to_wake_up() and what it calls outside the fair class (select_task_rq(), the wakelist
// decision, the preemption check, idle_cpu()), in core.c's order. The fair class's part is in
// fair_wakeup.cpp. Each function is tagged with the kernel function it mirrors; the patch
// variants' changes cite docs/patch-variants.md, which describes them.
#include "kernel/wakeup_internal.h"
#include "kernel/wakeup_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>

namespace sched {

std::string wakeFlagsToString(std::uint32_t wf) {
    std::string s;
    auto add = [&](std::uint32_t f, const char* n) {
        if (wf & f) {
            if (!s.empty()) s += '|';
            s += n;
        }
    };
    add(WF_EXEC, "WF_EXEC");
    add(WF_FORK, "WF_FORK");
    add(WF_TTWU, "WF_TTWU");
    add(WF_SYNC, "WF_SYNC");
    add(WF_MIGRATED, "WF_MIGRATED");
    return s.empty() ? "0" : s;
}

void WakeCtx::step(Fn fn, std::string text) {
    if (trace) d.steps.push_back(Step{fn, std::move(text)});
}

// core.c: is_cpu_allowed()
bool is_cpu_allowed(WakeCtx& c, const Task& p, int cpu) {
    if (!valid(cpu) || cpu >= c.st.nrCpus() || !p.cpus_ptr->test(cpu)) return false;
    return c.rq(cpu).active;  // all CPUs online; active decides for user tasks and kthreads alike here
}

// core.c: select_fallback_rq()
int select_fallback_rq(WakeCtx& c, int cpu, const Task& p) {
    const int nid = c.st.topo->cpu(cpu).node;
    int dest = -1;
    c.st.topo->nodeMask(nid).forEach([&](int i) {
        if (dest < 0 && is_cpu_allowed(c, p, i)) dest = i;
    });
    if (dest < 0)
        p.cpus_ptr->forEach([&](int i) {
            if (dest < 0 && is_cpu_allowed(c, p, i)) dest = i;
        });
    if (dest < 0) {
        // cpuset / possible-mask widening: any active CPU.
        for (int i = 0; i < c.st.nrCpus() && dest < 0; ++i)
            if (c.rq(i).active) dest = i;
    }
    SCHED_STEP(c, Fn::select_fallback_rq, fmt::format("fallback from CPU {} -> {}", cpu, dest));
    return dest < 0 ? cpu : dest;
}

// core.c: select_task_rq()
int select_task_rq(WakeCtx& c, Task& p, int cpu, std::uint32_t wake_flags) {
    if (p.nr_cpus_allowed > 1 && !p.migration_disabled) {
        cpu = select_task_rq_fair(c, p, cpu, wake_flags);
    } else {
        cpu = p.cpus_ptr->first();
        c.d.stage0 = Stage0::AFFINITY_SINGLE;
        SCHED_STEP(c, Fn::select_task_rq,
                   fmt::format("{}: first allowed CPU {}", p.migration_disabled ? "migration disabled" : "one allowed CPU", cpu));
    }
    if (!is_cpu_allowed(c, p, cpu)) {
        SCHED_STEP(c, Fn::select_task_rq, fmt::format("CPU {} is not allowed/active", cpu));
        cpu = select_fallback_rq(c, p.cpu, p);
        c.d.stage0 = Stage0::FALLBACK_RQ;
    }
    if (c.k.claim == ClaimMode::SelectTaskRq) claim_cpu(c, cpu);
    return cpu;
}

// core.c: ttwu_do_wakeup(): the rq->idle_stamp / avg_idle update of a wakeup on an idle CPU.
void ttwuIdleStampUpdate(MachineState& st, int cpu) {
    Rq& rq = st.rq[cpu];
    if (rq.idle_stamp == 0) return;
    const std::int64_t delta = st.now_ns - rq.idle_stamp;
    const std::int64_t max = 2 * rq.max_idle_balance_cost;
    rq.avg_idle += (delta - rq.avg_idle) / 8;  // update_avg(): C division truncates toward zero
    if (rq.avg_idle > max) rq.avg_idle = max;
    rq.wake_stamp = st.jiffies;
    rq.wake_avg_idle = rq.avg_idle / 2;
    rq.idle_stamp = 0;
}

// core.c: ttwu_queue_cond()
bool ttwu_queue_cond(WakeCtx& c, const Task& p, int cpu, bool* crossL2) {
    const int this_cpu = c.this_cpu();
    if (!c.rq(cpu).active) return false;
    if (!p.cpus_ptr->test(cpu)) return false;
    if (!c.sd().cpus_share_cache(this_cpu, cpu)) return true;
    // C (Desnoyers, v3 2023-08-22): "if (!cpus_share_l2c(smp_processor_id(), cpu)) return true;"
    // in place of the LLC test; 6.1 would go on to activate a busy target directly.
    if (c.k.ttwu_queue_l2c && !c.sd().cpus_share_l2c(this_cpu, cpu)) {
        if (crossL2 && c.rq(cpu).nr_running != 0) *crossL2 = true;
        return true;
    }
    if (cpu == this_cpu) return false;
    if (c.rq(cpu).nr_running == 0) return true;
    return false;
}

namespace {

// A fresh decision in `d`, its vectors' storage kept (no allocation per wakeup).
void beginDecision(Decision& d, const Task& p, const Waker& w, std::uint32_t wake_flags) {
    std::vector<Examined> examined = std::move(d.examined);
    std::vector<Step> steps = std::move(d.steps);
    examined.clear();
    steps.clear();
    d = Decision{};
    d.examined = std::move(examined);
    d.steps = std::move(steps);
    d.prev_cpu = p.cpu;
    d.this_cpu = w.cpu;
    d.wake_flags = wake_flags;
    if (d.examined.capacity() < 16) d.examined.reserve(16);
}
Decision beginDecision(const Task& p, const Waker& w, std::uint32_t wake_flags) {
    Decision d;
    beginDecision(d, p, w, wake_flags);
    return d;
}

// activate_task(): the enqueue's effect on the counters the wakeup path reads.
void enqueueCounts(Rq& rq, const Task& p) {
    rq.nr_running++;
    rq.h_nr_running++;
    if (p.policy == Policy::Idle) rq.idle_h_nr_running++;
}

void finishDecision(WakeCtx& c, int cpu) {
    c.d.cpu = cpu;
    // idle_delay_hit: the chosen CPU was seen as idle only because of the idle delay.
    for (const auto& e : c.d.examined)
        if (e.cpu == cpu && e.seen == Seen::IdleByDelay) c.d.idle_delay_hit = true;
}

}  // namespace

// core.c: ttwu_queue_wakelist(): the wakelist when TTWU_QUEUE and ttwu_queue_cond() say so
// (__ttwu_queue_wakelist(): ttwu_pending := 1, llist_add, the IPI); false: ttwu_queue() goes on
// to rq_lock() the target and ttwu_do_activate() (the caller's part: it may wait for the lock).
bool ttwu_queue_wakelist(WakeCtx& c, Task& p, int cpu, std::uint32_t wf, int from_cpu) {
    const bool migrated = wf & WF_MIGRATED;
    bool crossL2 = false;
    if (c.k.TTWU_QUEUE && ttwu_queue_cond(c, p, cpu, &crossL2)) {
        c.d.wakelist = true;
        c.d.wakelist_cross_l2 = crossL2;
        c.rq(cpu).ttwu_pending = true;
        SCHED_STEP(c, Fn::try_to_wake_up,
                   fmt::format("ttwu_queue: wakelist to CPU {} ({}): ttwu_pending := 1, IPI", cpu,
                               !c.sd().cpus_share_cache(c.this_cpu(), cpu)                       ? "other LLC"
                               : !c.sd().cpus_share_l2c(c.this_cpu(), cpu) && c.k.ttwu_queue_l2c ? "same LLC, other L2 (ttwu_queue_l2c)"
                                                                                                 : "same LLC, idle"));
        // check_preempt happens on the target when it runs sched_ttwu_pending (without WF_SYNC).
        c.d.preempted_curr = check_preempt_curr(c, p, cpu, wf & ~std::uint32_t(WF_SYNC), migrated, from_cpu);
        return true;
    }
    SCHED_STEP(c, Fn::try_to_wake_up, fmt::format("ttwu_queue: direct activation on CPU {}: rq_lock(CPU {})", cpu, cpu));
    return false;
}

// core.c: ttwu_do_activate() under the target's rq lock: activate_task(), check_preempt_curr(),
// and ttwu_do_wakeup()'s avg_idle update.
void ttwu_do_activate(WakeCtx& c, Task& p, int cpu, std::uint32_t wf, int from_cpu) {
    c.d.preempted_curr = check_preempt_curr(c, p, cpu, wf, wf & WF_MIGRATED, from_cpu);
    enqueueCounts(c.rq(cpu), p);
    ttwuIdleStampUpdate(c.st, cpu);
}

namespace {
// core.c: ttwu_queue(): the wakelist, or the direct activation at once (the instantaneous
// try_to_wake_up() of the oracles and the replay; the engine runs the two parts over time).
void ttwu_queue(WakeCtx& c, Task& p, int cpu, std::uint32_t wf, int from_cpu) {
    if (!ttwu_queue_wakelist(c, p, cpu, wf, from_cpu)) ttwu_do_activate(c, p, cpu, wf, from_cpu);
}
}  // namespace

// core.c: try_to_wake_up() up to ttwu_queue(): sched_waking, the on_rq / on_cpu branches,
// select_task_rq() and set_task_cpu().
bool ttwu_select(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace, Decision& d) {
    beginDecision(d, p, w, wake_flags);
    WakeCtx c{st, k, w, d, trace};
    SCHED_STEP(c, Fn::try_to_wake_up,
               fmt::format("try_to_wake_up(pid {}, wake_flags {}) on CPU {} ({} context), prev {}", p.pid, wakeFlagsToString(wake_flags), w.cpu,
                           w.in_task ? "task" : "interrupt", p.cpu));
    // 1. p == current
    if (w.is_wakee) {
        d.stage0 = Stage0::TTWU_SELF;
        SCHED_STEP(c, Fn::try_to_wake_up, "p == current: set RUNNING, no CPU selection");
        finishDecision(c, p.cpu);
        return false;
    }
    // 3. still queued: ttwu_runnable
    if (p.on_rq) {
        d.stage0 = Stage0::TTWU_RUNNABLE;
        SCHED_STEP(c, Fn::try_to_wake_up, fmt::format("p->on_rq: ttwu_runnable on CPU {}", p.cpu));
        d.preempted_curr = !(p.on_cpu) && check_preempt_curr(c, p, p.cpu, wake_flags, false, p.cpu);
        if (k.kernel == KernelVersion::V6_1) {
            ttwuIdleStampUpdate(st, p.cpu);  // 6.1: ttwu_do_wakeup updates avg_idle (not v6.5, D2)
            SCHED_STEP(c, Fn::try_to_wake_up,
                       fmt::format("ttwu_do_wakeup: avg_idle of CPU {} now {} ns, idle_stamp := 0", p.cpu, st.rq[p.cpu].avg_idle));
        }
        finishDecision(c, p.cpu);
        return false;
    }
    // 5. still on_cpu: wakelist on the old CPU without selection.
    if (p.on_cpu) {
        if (k.TTWU_QUEUE && ttwu_queue_cond(c, p, p.cpu)) {
            d.stage0 = Stage0::TTWU_ONCPU_WAKELIST;
            d.wakelist = true;
            st.rq[p.cpu].ttwu_pending = true;
            SCHED_STEP(c, Fn::try_to_wake_up,
                       fmt::format("p->on_cpu and ttwu_queue_cond(CPU {}) holds: wakelist to the old CPU, no selection", p.cpu));
            finishDecision(c, p.cpu);
            return false;
        }
        SCHED_STEP(c, Fn::try_to_wake_up, fmt::format("p->on_cpu but ttwu_queue_cond(CPU {}) fails: wait for it to switch out", p.cpu));
        p.on_cpu = false;
    }
    // 7. select_task_rq
    int cpu = select_task_rq(c, p, p.wake_cpu, wake_flags | WF_TTWU);
    if (cpu != p.cpu) {
        d.migrated = true;  // ttwu_queue() runs with WF_MIGRATED
        SCHED_STEP(c, Fn::try_to_wake_up, fmt::format("set_task_cpu({} -> {}): sched_migrate_task", p.cpu, cpu));
        p.cpu = cpu;
    }
    p.wake_cpu = cpu;
    finishDecision(c, cpu);
    return true;
}

// core.c: try_to_wake_up(), at one instant: ttwu_select() and ttwu_queue() together.
void try_to_wake_up(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace, Decision& d) {
    if (!ttwu_select(st, k, p, w, wake_flags, trace, d)) return;
    WakeCtx c{st, k, w, d, trace};
    const std::uint32_t wf = wake_flags | (d.migrated ? std::uint32_t(WF_MIGRATED) : 0u);
    ttwu_queue(c, p, d.cpu, wf, d.prev_cpu);
    p.on_rq = true;
}

Decision try_to_wake_up(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace) {
    Decision d;
    try_to_wake_up(st, k, p, w, wake_flags, trace, d);
    return d;
}

// core.c: wake_up_new_task()
Decision wake_up_new_task(MachineState& st, const Knobs& k, Task& p, Waker& w, bool trace) {
    Decision d = beginDecision(p, w, WF_FORK);
    WakeCtx c{st, k, w, d, trace};
    SCHED_STEP(c, Fn::select_task_rq, fmt::format("wake_up_new_task(pid {}) from CPU {}: recent_used_cpu := {}", p.pid, w.cpu, p.cpu));
    p.recent_used_cpu = p.cpu;
    p.avg.last_update_time = 0;  // a new child has not been attached to any cfs_rq yet
    const int from = p.cpu;
    int cpu = select_task_rq(c, p, p.cpu, WF_FORK);
    p.cpu = cpu;  // __set_task_cpu: no migration event for fork
    p.wake_cpu = cpu;
    d.preempted_curr = check_preempt_curr(c, p, cpu, WF_FORK, false, from);
    enqueueCounts(st.rq[cpu], p);
    p.on_rq = true;
    finishDecision(c, cpu);
    return d;
}

// core.c: sched_exec()
Decision sched_exec(MachineState& st, const Knobs& k, Task& p, Waker& w, bool trace) {
    Decision d = beginDecision(p, w, WF_EXEC);
    WakeCtx c{st, k, w, d, trace};
    SCHED_STEP(c, Fn::select_task_rq_fair, fmt::format("sched_exec(pid {}) on CPU {}: class hook with WF_EXEC", p.pid, w.cpu));
    int cpu = select_task_rq_fair(c, p, p.cpu, WF_EXEC);
    if (cpu != w.cpu && st.rq[cpu].active) {
        d.migrated = true;
        SCHED_STEP(c, Fn::select_task_rq_fair, fmt::format("migrate to CPU {} through the stopper", cpu));
    } else {
        cpu = w.cpu;
    }
    finishDecision(c, cpu);
    return d;
}

// core.c: idle_cpu(), with the idle-delay and claim variants (the seed patches) as one verdict.
IdleVerdict idleVerdict(const MachineState& st, const Knobs& k, int cpu) {
    const Rq& rq = st.rq[cpu];
    // Idle-delay variants: an early "return 1" in idle_cpu() (docs/patch-variants.md: Idle delay).
    if (k.idle_delay_ns > 0 && (k.idle_delay_max_running < 0 || rq.nr_running <= unsigned(k.idle_delay_max_running))) {
        const std::int64_t mark = k.idle_delay_clock == IdleDelayClock::IdleEndTime ? rq.idle_end_time : rq.clock_idle;
        if (st.now_ns < mark + k.idle_delay_ns) {
            const bool plain = rq.curr == CurrKind::Idle && rq.nr_running == 0 && !rq.ttwu_pending && !(k.claim != ClaimMode::Off && rq.claimed);
            return plain ? IdleVerdict::Idle : IdleVerdict::IdleByDelay;
        }
    }
    if (rq.curr != CurrKind::Idle) return IdleVerdict::NotIdle;
    if (rq.nr_running) return IdleVerdict::NotIdle;
    if (rq.ttwu_pending) return IdleVerdict::NotIdle;
    if (k.claim != ClaimMode::Off && rq.claimed) return IdleVerdict::NotIdle;  // claim: idle_cpu's last test
    return IdleVerdict::Idle;
}

// core.c: idle_cpu()
bool idle_cpu(const MachineState& st, const Knobs& k, int cpu) { return idleVerdict(st, k, cpu) != IdleVerdict::NotIdle; }

// core.c: available_idle_cpu() (vcpu_is_preempted() is false)
bool available_idle_cpu(const MachineState& st, const Knobs& k, int cpu) { return idle_cpu(st, k, cpu); }

Seen seenAs(const MachineState& st, const Knobs& k, int cpu) {
    switch (idleVerdict(st, k, cpu)) {
    case IdleVerdict::Idle: return Seen::Idle;
    case IdleVerdict::IdleByDelay: return Seen::IdleByDelay;
    case IdleVerdict::NotIdle: break;
    }
    if (sched_idle_cpu(st, cpu)) return Seen::SchedIdle;
    const Rq& rq = st.rq[cpu];
    if (rq.curr == CurrKind::Idle && rq.nr_running == 0) {
        if (rq.ttwu_pending) return Seen::Pending;
        if (rq.claimed && k.claim != ClaimMode::Off) return Seen::Claimed;
    }
    return Seen::Busy;
}

Decision decide(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace) {
    if (wake_flags & WF_FORK) return wake_up_new_task(st, k, p, w, trace);
    if (wake_flags & WF_EXEC) return sched_exec(st, k, p, w, trace);
    return try_to_wake_up(st, k, p, w, wake_flags, trace);
}
}  // namespace sched
