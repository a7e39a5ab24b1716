// sched_balance.h: the observers of idle_cpu() outside the wakeup path and the
// load-balance pieces the patch variants touch (spec §5.2, §7): should_we_balance,
// task_hot, the NI_RANDOM newidle dice, the newidle entry (idle_stamp), the
// tick's idle_balance, update_sg_lb_stats' idle count, set_next_task_idle.
#pragma once

#include "knobs.h"
#include "sched_state.h"

#include <cstdint>

namespace sched {

enum class IdleType { CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE };

/// should_we_balance(): does `cpu` balance domain `sd` (its own domain) now?
bool should_we_balance(const MachineState& st, const Knobs& k, int cpu, const SchedDomain& sd, IdleType idle);

/// Per-domain newidle statistics (6.1.y NI_RANDOM backport, spec §7.2).
struct NewidleStats {
    int newidle_call = 512;
    int newidle_success = 256;
    int newidle_ratio = 512;
};
/// update_newidle_stats(sd, success)
void update_newidle_stats(NewidleStats& s, int success);
/// The NI_RANDOM dice for one domain visit: `draw` is the per-CPU PRNG output.
/// Returns true when load_balance runs; then *weight is the success weight.
/// A skipped visit is counted as a call with no success.
bool newidle_dice(NewidleStats& s, std::uint32_t draw, int* weight);
/// The same, honouring the knobs: without NI_RANDOM, and in v6.5 (spec §0.1 D3),
/// every eligible domain is balanced (weight 1).
bool newidle_dice(const Knobs& k, NewidleStats& s, std::uint32_t draw, int* weight);

/// The start of sched_balance_newidle(): sets idle_stamp (unless ttwu_pending)
/// and reports whether balancing is attempted at all (rd->overload and
/// avg_idle >= max_newidle_lb_cost of the lowest domain).
bool newidle_balance_begins(MachineState& st, int cpu, bool rd_overload, std::int64_t lowest_max_newidle_lb_cost);

/// scheduler_tick(): rq->idle_balance = idle_cpu(cpu).
bool tick_idle_balance(const MachineState& st, const Knobs& k, int cpu);

/// update_sg_lb_stats(): does `cpu` count as an idle CPU of its group?
bool sg_lb_counts_idle(const MachineState& st, const Knobs& k, int cpu);

/// set_next_task_idle() when `cpu` picks its idle task: __update_idle_core,
/// the claim is cleared (spec §8d), clock_idle := rq clock (§5.3).
void set_next_task_idle(MachineState& st, const Knobs& k, int cpu);

/// Input of task_hot().
struct TaskHotInput {
    bool fair = true;            ///< p is a fair task
    bool sched_idle_policy = false;
    bool is_buddy = false;       ///< p is its cfs_rq's next or last buddy
    std::int64_t src_clock_task = 0;
    std::int64_t exec_start = 0;
    unsigned dst_nr_running = 0;
    std::uint32_t sd_flags = 0;
    std::int64_t wakee_placed = -1;  ///< SIS_DEBOUNCE
};
/// task_hot(p, env) of fair.c (with the SIS_DEBOUNCE delta).
bool task_hot(const MachineState& st, const Knobs& k, const TaskHotInput& in);
/// can_migrate_task()'s hot test: a hot task moves only when nr_balance_failed > cache_nice_tries.
bool can_migrate_hot(bool hot, int nr_balance_failed, int cache_nice_tries);

/// Does a load_balance of `sd` on `cpu` refresh nr_idle_scan (update_idle_cpu_scan)?
/// Only non-newidle balancing of the LLC-level domain (span_weight == sd_llc_size), with SIS_UTIL.
bool balance_updates_nr_idle_scan(const SchedDomains& sds, const Knobs& k, int cpu, const SchedDomain& sd, IdleType idle);
}  // namespace sched
