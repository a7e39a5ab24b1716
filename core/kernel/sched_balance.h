// SPDX-License-Identifier: GPL-2.0-or-later
// sched_balance.h: the observers of idle_cpu() outside the wakeup path and the
// load-balance pieces the patch variants touch (fair.c, core.c, idle.c): should_we_balance,
// task_hot, the NI_RANDOM newidle dice, the newidle entry (idle_stamp), the
// tick's idle_balance, update_sg_lb_stats' idle count, set_next_task_idle.
#pragma once

#include "kernel/knobs.h"
#include "kernel/sched_state.h"

#include <cstdint>

namespace sched {

enum class IdleType { CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE };

/// should_we_balance(): does `cpu` balance domain `sd` (its own domain) now?
bool should_we_balance(const MachineState& st, const Knobs& k, int cpu, const SchedDomain& sd, IdleType idle);

/// Per-domain newidle statistics (6.1.y NI_RANDOM backport: fair.c: update_newidle_cost()).
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
/// The same, honouring the knobs: without NI_RANDOM, and in v6.5 (fair.c: newidle_balance(), no dice),
/// every eligible domain is balanced (weight 1).
bool newidle_dice(const Knobs& k, NewidleStats& s, std::uint32_t draw, int* weight);

/// The start of sched_balance_newidle(): sets idle_stamp (unless ttwu_pending)
/// and reports whether balancing is attempted at all (rd->overload and
/// avg_idle >= max_newidle_lb_cost of the lowest domain).
bool newidle_balance_begins(MachineState& st, int cpu, bool rd_overload, std::int64_t lowest_max_newidle_lb_cost);

/// scheduler_tick(): rq->idle_balance = idle_cpu(cpu).
bool tick_idle_balance(const MachineState& st, const Knobs& k, int cpu);

/// Where get_nohz_timer_target() put a timer, and why (the hrtimer's placement).
struct TimerTarget {
    enum class Why : std::uint8_t {
        ThisBusy,  ///< idle_cpu(this) false: the timer stays on the arming CPU
        Pinned,    ///< HRTIMER_MODE_PINNED, or timer_migration off: no target search
        Moved,     ///< idle_cpu(this) true: the first CPU of the lowest domain that is not idle
        NoneBusy,  ///< every CPU of every domain idle: default_cpu, the arming CPU
    };
    int cpu = -1;
    Why why = Why::ThisBusy;
    int level = -1;                   ///< Moved: the domain level (index in domains(this)) it was found in
    int examined = 0;                 ///< idle_cpu() calls made
    bool this_idle_by_delay = false;  ///< idle_cpu(this) was true only because of the idle-delay knob
};
const char* toString(TimerTarget::Why w);
/// kernel/sched/core.c get_nohz_timer_target() (6.1, every CPU a housekeeping CPU for
/// HK_TYPE_TIMER): the arming CPU when idle_cpu() says it is busy, else the first CPU that is not
/// idle in for_each_domain() order, each domain's span in CPU order, else the arming CPU. It
/// reads the knob-aware idle_cpu(): the idle-delay patches call a CPU that left idle less than
/// idle_delay_ns ago idle, so a task arming its timer there sends it elsewhere.
TimerTarget get_nohz_timer_target(const MachineState& st, const Knobs& k, int cpu);

/// update_sg_lb_stats(): does `cpu` count as an idle CPU of its group?
bool sg_lb_counts_idle(const MachineState& st, const Knobs& k, int cpu);

/// set_next_task_idle() when `cpu` picks its idle task: __update_idle_core,
/// the claim is cleared (docs/patch-variants.md: Claims), clock_idle := rq clock (pelt.h: _update_idle_rq_clock_pelt()).
void set_next_task_idle(MachineState& st, const Knobs& k, int cpu);

/// Input of task_hot().
struct TaskHotInput {
    bool fair = true;  ///< p is a fair task
    bool sched_idle_policy = false;
    bool is_buddy = false;  ///< p is its cfs_rq's next or last buddy
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

// ---------------------------------------------------------------------------
// load_balance()'s statistics and decisions (kernel/sched/fair.c, 6.1), as pure
// functions of the machine state: the engine runs detach/attach around them.

/// enum group_type (fair.c order: a higher value is busier).
enum class GroupType : std::uint8_t {
    group_has_spare = 0,
    group_fully_busy,
    group_misfit_task,
    group_asym_packing,
    group_imbalanced,
    group_overloaded,
};
const char* groupTypeName(GroupType t);

/// enum migration_type
enum class MigrationType : std::uint8_t { migrate_load = 0, migrate_util, migrate_task, migrate_misfit };
const char* migrationTypeName(MigrationType t);

/// lb_env flags
enum LbfFlag : unsigned { LBF_ALL_PINNED = 0x01, LBF_NEED_BREAK = 0x02, LBF_DST_PINNED = 0x04, LBF_SOME_PINNED = 0x08, LBF_ACTIVE_LB = 0x10 };
/// update_sg_lb_stats()' sg_status bits
enum SgStatus : int { SG_OVERLOAD = 0x1, SG_OVERUTILIZED = 0x2 };

/// 6.1: sysctl_sched_nr_migrate and sched_nr_migrate_break.
inline constexpr unsigned sysctl_sched_nr_migrate = 32;
inline constexpr unsigned sched_nr_migrate_break = 32;
/// NUMA_IMBALANCE_MIN of adjust_numa_imbalance().
inline constexpr long NUMA_IMBALANCE_MIN = 2;

/// struct lb_env
struct LbEnv {
    const SchedDomain* sd = nullptr;
    const SchedDomain* child = nullptr;  ///< sd->child (nullptr at the lowest level)
    bool has_parent = false;             ///< sd->parent != NULL (false: the root domain's level)
    int dst_cpu = -1;
    int src_cpu = -1;
    CpuMask cpus;  ///< load_balance_mask: the span's active CPUs not yet ruled out
    IdleType idle = IdleType::CPU_NOT_IDLE;
    std::int64_t imbalance = 0;
    MigrationType migration_type = MigrationType::migrate_load;
    unsigned flags = 0;
    unsigned loop = 0, loop_break = sched_nr_migrate_break, loop_max = 0;
    int nr_balance_failed = 0;  ///< sd->nr_balance_failed of dst_cpu's domain
};

/// struct sg_lb_stats
struct SgLbStats {
    std::int64_t avg_load = 0, group_load = 0, group_capacity = 0, group_util = 0, group_runnable = 0;
    unsigned sum_nr_running = 0, sum_h_nr_running = 0, idle_cpus = 0, group_weight = 0;
    GroupType group_type = GroupType::group_has_spare;
    /// group_misfit_task_load: set by the wakeup path's update_sg_wakeup_stats() when p fits no
    /// CPU of an asymmetric-capacity group; the balancer does not model misfit tasks (0).
    std::int64_t group_misfit_task_load = 0;
};

/// struct sd_lb_stats
struct SdLbStats {
    int busiest = -1;  ///< index of the busiest group in sd->groups, -1 none
    int local = 0;     ///< index of the local group (dst_cpu's)
    std::int64_t total_load = 0, total_capacity = 0, avg_load = 0;
    std::int64_t sum_util = 0;  ///< update_idle_cpu_scan()'s input
    SgLbStats busiest_stat, local_stat;
    bool prefer_sibling = false;
    int sg_status = 0;
    SdLbStats() { busiest_stat.idle_cpus = ~0u; }  // init_sd_lb_stats(): idle_cpus = UINT_MAX, has_spare
};

/// group_is_overloaded() / group_has_capacity() / group_classify() (no asym packing or sg_imbalanced).
bool group_is_overloaded(int imbalance_pct, const SgLbStats& s);
bool group_has_capacity(int imbalance_pct, const SgLbStats& s);
GroupType group_classify(int imbalance_pct, const SgLbStats& s);

/// update_sg_lb_stats() for the group `span` of env.sd.
void update_sg_lb_stats(const MachineState& st, const Knobs& k, const LbEnv& env, const CpuMask& span, SgLbStats& sgs, int* sg_status);
/// update_sd_pick_busiest(): is `sgs` busier than sds.busiest_stat?
bool update_sd_pick_busiest(const LbEnv& env, const SdLbStats& sds, const SgLbStats& sgs);
/// update_sd_lb_stats(): every group of env.sd; at the root level, writes rd->overload.
/// (update_idle_cpu_scan() is the caller's: it needs the LLC's shared state.)
void update_sd_lb_stats(MachineState& st, const Knobs& k, LbEnv& env, SdLbStats& sds);
/// calculate_imbalance(): sets env.migration_type and env.imbalance.
void calculate_imbalance(LbEnv& env, SdLbStats& sds);
/// find_busiest_group(): the busiest group's index, or -1 (balanced); env.imbalance set.
int find_busiest_group(MachineState& st, const Knobs& k, LbEnv& env, SdLbStats& sds);
/// find_busiest_queue(): the busiest CPU of `group` (in env.cpus), or -1.
int find_busiest_queue(const MachineState& st, const Knobs& k, const LbEnv& env, const CpuMask& group);
/// imbalanced_active_balance() / need_active_balance() (no asym, misfit or reduced capacity).
bool need_active_balance(const MachineState& st, const LbEnv& env);
/// shr_bound(val, shift)
inline std::int64_t shr_bound(std::int64_t val, int shift) { return val >> std::min(shift, 63); }
/// msecs_to_jiffies() for HZ dividing 1000 (rounds up).
std::int64_t msecs_to_jiffies(std::int64_t ms, int hz);
/// get_sd_balance_interval(): interval in jiffies, busy-scaled, -1 when busy, clamped to
/// [1, max_load_balance_interval = HZ * nr_online_cpus / 10].
std::int64_t get_sd_balance_interval(const SchedDomain& sd, std::int64_t balance_interval_ms, bool cpu_busy, int hz, int nr_cpus);
/// rebalance_domains()'s `busy`: idle != CPU_IDLE && !sched_idle_cpu(cpu).
bool rebalance_busy(const MachineState& st, int cpu, IdleType idle);
}  // namespace sched
