// SPDX-License-Identifier: GPL-2.0-or-later
// wakeup_path.h: the Linux 6.1 CFS wakeup path (kernel/sched/core.c and fair.c),
// function by function with the kernel's names, over a MachineState and Knobs.
// Every function records what it examined into the Decision it is given.
#pragma once

#include "kernel/decision.h"
#include "kernel/knobs.h"
#include "kernel/sched_state.h"

#include <cstdint>

namespace sched {

/// Wake flags (kernel/sched/sched.h).
enum WakeFlag : std::uint32_t { WF_EXEC = 0x02, WF_FORK = 0x04, WF_TTWU = 0x08, WF_SYNC = 0x10, WF_MIGRATED = 0x20 };
std::string wakeFlagsToString(std::uint32_t wf);

/// Where the wakeup runs: the waker's CPU and what `current` is there.
struct Waker {
    int cpu = 0;            ///< this_cpu (smp_processor_id())
    bool in_task = true;    ///< in_task(): false for IRQ/softirq context
    bool is_wakee = false;  ///< p == current (a self-wakeup)
    Task current;           ///< the task running on `cpu` (the idle task for an IRQ on an idle CPU)
    /// When set (the engine), the real task running on `cpu`; `current` is then unused.
    Task* current_ptr = nullptr;
    Task& cur() { return current_ptr ? *current_ptr : current; }
};

/// Everything the wakeup functions share: the state, the knobs, the waker and
/// the decision being recorded.
struct WakeCtx {
    MachineState& st;
    const Knobs& k;
    Waker& w;
    Decision& d;
    bool trace = false;  ///< record Decision::steps (text); off for speed

    const SchedDomains& sd() const { return *st.sd; }
    Rq& rq(int cpu) { return st.rq[cpu]; }
    int this_cpu() const { return w.cpu; }
    Task& current() { return w.cur(); }
    void step(Fn fn, std::string text);
    void seen(int cpu, Fn fn, Seen s) { d.examined.push_back(Examined{std::int16_t(cpu), fn, s}); }
};

// --- Entry points -------------------------------------------------------

/// try_to_wake_up(p, TASK_NORMAL, wake_flags): the decision part (core.c, in its branch order),
/// including select_task_rq, set_task_cpu and the wakelist choice of ttwu_queue.
/// Mutates the state as the kernel would (recent_used_cpu, wakee_flips, claims,
/// ttwu_pending or the enqueue on the target, has_idle_cores, avg_idle).
Decision try_to_wake_up(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace = false);
/// The same, into `out` (its vectors' storage reused: the engine's wakeups allocate nothing).
void try_to_wake_up(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace, Decision& out);
/// try_to_wake_up()'s first part, as the engine runs it over time (docs/architecture.md: a
/// wakeup over time): sched_waking's branches (p == current, ttwu_runnable(), the on_cpu
/// wakelist) and select_task_rq() with set_task_cpu() (p->cpu is the chosen CPU after it;
/// `out.migrated`: ttwu_queue() then runs with WF_MIGRATED). True when p was placed and
/// ttwu_queue() is still to run on out.cpu: ttwu_queue_wakelist(), else ttwu_do_activate()
/// under that CPU's rq lock. false: the wakeup ended here.
bool ttwu_select(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace, Decision& out);
/// ttwu_queue()'s wakelist: TTWU_QUEUE and ttwu_queue_cond() -> ttwu_pending := 1 on `cpu`
/// (the caller queues the task and the IPI), true; false: activate directly.
bool ttwu_queue_wakelist(WakeCtx& c, Task& p, int cpu, std::uint32_t wf, int from_cpu);
/// ttwu_do_activate() with the target's rq lock held: check_preempt_curr(), the counts, avg_idle.
void ttwu_do_activate(WakeCtx& c, Task& p, int cpu, std::uint32_t wf, int from_cpu);
/// wake_up_new_task(p): fork placement through the slow path (fair.c: find_idlest_cpu()).
Decision wake_up_new_task(MachineState& st, const Knobs& k, Task& p, Waker& w, bool trace = false);
/// sched_exec(): exec balancing; p is current on w.cpu.
Decision sched_exec(MachineState& st, const Knobs& k, Task& p, Waker& w, bool trace = false);
/// Dispatches on WF_FORK / WF_EXEC / otherwise try_to_wake_up.
Decision decide(MachineState& st, const Knobs& k, Task& p, Waker& w, std::uint32_t wake_flags, bool trace = false);

// --- The kernel functions ------------------------------------------------

int select_task_rq(WakeCtx& c, Task& p, int cpu, std::uint32_t wake_flags);
bool is_cpu_allowed(WakeCtx& c, const Task& p, int cpu);
int select_fallback_rq(WakeCtx& c, int cpu, const Task& p);
int select_task_rq_fair(WakeCtx& c, Task& p, int prev_cpu, std::uint32_t wake_flags);
void record_wakee(WakeCtx& c, const Task& p);
bool wake_wide(WakeCtx& c, const Task& p);
/// `target_idle` (B, almost-idle prev): set when wake_affine_idle() chose an idle or almost idle prev.
int wake_affine(WakeCtx& c, const SchedDomain& sd, Task& p, int this_cpu, int prev_cpu, bool sync, bool* target_idle);
int wake_affine_idle(WakeCtx& c, int this_cpu, int prev_cpu, bool sync, bool* target_idle, const Task& p);
/// cpu_load_without(): the CPU's load without p's contribution (p's last CPU only).
std::int64_t cpu_load_without(WakeCtx& c, int cpu, const Task& p);
/// H (SIS_CURRENT v8): wake_on_current(this_cpu, p); `fn` is the caller, for the record
/// (wake_affine() after wake_affine_weight(), or select_idle_sibling()).
bool wake_on_current(WakeCtx& c, int this_cpu, const Task& p, Fn fn);
/// D (migration ratelimit): should_migrate_task(p, prev_cpu).
bool should_migrate_task(WakeCtx& c, const Task& p, int prev_cpu);
/// D: the ratelimit's bookkeeping at a migration of p at `now` (migrate_task_rq_fair()).
void migrate_task_ratelimit(const Knobs& k, Task& p, std::int64_t now);
/// F (SIS_CACHE): dequeue_task_fair()'s bookkeeping (`rq` after the dequeue).
void sis_cache_dequeue(const Knobs& k, Task& p, Rq& rq, bool sleep, std::int64_t now);
/// F: enqueue_task_fair()'s bookkeeping at a wakeup (ENQUEUE_WAKEUP).
void sis_cache_wakeup(const Knobs& k, Task& p, std::int64_t now);
/// H: dur_avg_update() at a sleeping dequeue, with the task's se.sum_exec_runtime.
void dur_avg_update(Task& p, std::int64_t sum_exec_runtime);
int wake_affine_weight(WakeCtx& c, const SchedDomain& sd, Task& p, int this_cpu, int prev_cpu, bool sync);
int find_idlest_cpu(WakeCtx& c, int sdLevel, Task& p, int cpu, int prev_cpu, std::uint32_t sd_flag);
/// Returns the index in sd.groups of the idlest group, or -1 (stay local).
int find_idlest_group(WakeCtx& c, const SchedDomain& sd, const Task& p, int this_cpu);
int find_idlest_group_cpu(WakeCtx& c, const CpuMask& group, const Task& p, int this_cpu);
/// `target_idle` (B): wake_affine_idle() said target (prev) is idle or almost idle.
int select_idle_sibling(WakeCtx& c, Task& p, int prev, int target, bool target_idle = false);
int select_idle_capacity(WakeCtx& c, const Task& p, const SchedDomain& sd, int target);
int select_idle_smt(WakeCtx& c, const Task& p, const SchedDomain& sd, int target);
int select_idle_core(WakeCtx& c, const Task& p, int core, CpuMask& cpus, int* idle_cpu);
int select_idle_cpu(WakeCtx& c, const Task& p, const SchedDomain& sd, bool has_idle_core, int target);
/// `crossL2` (C, ttwu_queue_l2c): set when the wakelist was chosen only because waker and target
/// share the LLC but not an L2.
bool ttwu_queue_cond(WakeCtx& c, const Task& p, int cpu, bool* crossL2 = nullptr);
bool check_preempt_curr(WakeCtx& c, const Task& p, int cpu, std::uint32_t wake_flags, bool migrated, int from_cpu);

// --- Idle predicates (core.c: idle_cpu(), with the patch variants' knobs) --

enum class IdleVerdict : std::uint8_t { NotIdle, Idle, IdleByDelay };
/// idle_cpu(cpu) with its reason (idle-delay early return, claim as last test).
IdleVerdict idleVerdict(const MachineState& st, const Knobs& k, int cpu);
bool idle_cpu(const MachineState& st, const Knobs& k, int cpu);
/// available_idle_cpu(): idle_cpu() && !vcpu_is_preempted() (never preempted here).
bool available_idle_cpu(const MachineState& st, const Knobs& k, int cpu);
// fair.c: sched_idle_cpu() (inline: the idle scans ask it for every CPU they examine)
inline bool sched_idle_cpu(const MachineState& st, int cpu) {
    const Rq& rq = st.rq[cpu];
    return rq.nr_running > 0 && rq.nr_running == rq.idle_h_nr_running;
}
/// What `cpu` looks like to an idle test (for the examined list).
Seen seenAs(const MachineState& st, const Knobs& k, int cpu);

/// fair.c: update_idle_cpu_scan()'s arithmetic: nr_idle_scan for an LLC.
int update_idle_cpu_scan(int llc_weight, std::int64_t sum_util, int imbalance_pct);
/// fair.c: __update_idle_core(rq): run when `cpu` picks its idle task (idle.c: set_next_task_idle()).
void update_idle_core(MachineState& st, const Knobs& k, int cpu);
/// The avg_idle / idle_stamp update of ttwu_do_wakeup() (core.c: its `if (rq->idle_stamp)` block).
void ttwuIdleStampUpdate(MachineState& st, int cpu);

// --- Old-CFS wakeup preemption (fair.c: check_preempt_wakeup()) -----------

/// sysctl_sched_latency etc. scaled for `ncpus` (SCHED_TUNABLESCALING_LOG).
struct CfsTunables {
    std::int64_t latency_ns, min_granularity_ns, wakeup_granularity_ns;
    static CfsTunables forCpus(int ncpus);
};
/// place_entity(cfs_rq, se, initial=0) for a waking entity: the new vruntime.
std::int64_t placeEntityWakeup(const CfsTunables& t, const Knobs& k, std::int64_t min_vruntime, std::int64_t vruntime, bool long_sleeper);
/// wakeup_preempt_entity(curr, se): -1, 0 or 1 (1 = preempt). Nice-0 weights.
int wakeup_preempt_entity(const CfsTunables& t, std::int64_t curr_vruntime, std::int64_t se_vruntime);

}  // namespace sched
