// SPDX-License-Identifier: GPL-2.0-or-later
// decision.h: the record of one placement decision (docs/decisions.md): chosen CPU,
// stage 0/1/2 reason codes, flags, the CPUs examined in order with what was
// found at each, and (when asked) a step-by-step trace in kernel function names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sched {

class StateArchive;

enum class Stage0 : std::uint8_t { NONE, TTWU_SELF, TTWU_RUNNABLE, TTWU_ONCPU_WAKELIST, AFFINITY_SINGLE, FALLBACK_RQ };
enum class Stage1 : std::uint8_t {
    NONE,
    EAS,
    WAKE_WIDE,
    AFFINE_NOT_ALLOWED,
    AFFINE_SAME_CPU,
    AFFINE_NO_DOMAIN,
    AFFINE_IDLE_PREV,
    AFFINE_IDLE_THIS,
    AFFINE_SYNC,
    AFFINE_PREV_IDLE,
    AFFINE_WEIGHT_SYNC_THIS,
    AFFINE_WEIGHT_THIS,
    AFFINE_WEIGHT_PREV,
    AFFINE_NO_TARGET,  ///< schedlab: WA_IDLE and WA_WEIGHT gave no target (both off) -> prev
    SLOW_PATH_IDLEST,
    SLOW_NO_DOMAIN,
    DEBOUNCE_PLACED,
    DEBOUNCE_COLD_LLC,
    AFFINE_PREV_ALMOST_IDLE,  ///< B: wake_affine_idle(): prev's load without p <= almost_idle_load
    AFFINE_WAKE_ON_CURRENT,   ///< H: wake_affine(): WA_IDLE/WA_WEIGHT gave nothing, wake_on_current() holds -> this
    MIGRATION_RATELIMIT,      ///< D: want_affine and p migrated less than the window ago -> prev
};
/// How find_idlest_cpu ended (sub-code of SLOW_PATH_IDLEST).
enum class IdlestSub : std::uint8_t {
    NONE,
    IDLEST_SCHED_IDLE,
    IDLEST_SHALLOW,
    IDLEST_LEAST_LOADED,
    IDLEST_STAY_LOCAL,
    IDLEST_SINGLE_CPU_GROUP,  ///< schedlab: the group had weight 1 (returned without checks)
};
enum class Stage2 : std::uint8_t {
    NONE,
    SIS_TARGET_IDLE,
    SIS_TARGET_SCHED_IDLE,
    SIS_PREV_IDLE,
    SIS_KTHREAD_STACK,
    SIS_RECENT,
    SIS_ASYM_CAPACITY,
    SIS_NO_LLC,
    SIS_IDLE_SMT,
    SIS_IDLE_CORE,
    SIS_IDLE_CPU,
    SIS_IDLE_CPU_FROM_CORESCAN,
    SIS_UTIL_ABORT,
    SIS_SCAN_EXHAUSTED,
    SIS_FALLBACK_TARGET,
    SIS_TARGET_IDLE_HINT,    ///< B: target not idle, but wake_affine_idle() said it is (target_idle)
    SIS_TARGET_FITS,         ///< G: target not idle, p's util fits its remaining capacity
    SIS_PREV_FITS,           ///< G: prev (shares the LLC) not idle, p fits
    SIS_RECENT_FITS,         ///< G: recent_used_cpu not idle, p fits
    SIS_BIAS_PREV_IDLE,      ///< G: SELECT_BIAS_PREV's first test: prev idle, before target
    SIS_BIAS_PREV_FITS,      ///< G: SELECT_BIAS_PREV's first test: prev not idle, p fits
    SIS_BIAS_PREV_FALLBACK,  ///< G: the LLC scan found nothing: prev instead of target
    SIS_CURRENT,             ///< H: this CPU is target and wake_on_current() holds
    SIS_CACHE_HOT_FALLBACK,  ///< F: the LLC scan found only cache-hot idle CPUs: one of them
};

const char* toString(Stage0 s);
const char* toString(Stage1 s);
const char* toString(IdlestSub s);
const char* toString(Stage2 s);

/// Kernel function that examined a CPU.
enum class Fn : std::uint8_t {
    try_to_wake_up,
    ttwu_queue_cond,
    select_task_rq,
    select_fallback_rq,
    select_task_rq_fair,
    wake_affine_idle,
    wake_affine_weight,
    select_idle_sibling,
    select_idle_smt,
    select_idle_core,
    select_idle_cpu,
    select_idle_capacity,
    find_idlest_group,
    find_idlest_group_cpu,
    check_preempt_curr,
    hrtimer_wakeup,  ///< a sleep timer's handler: where the timer was armed and why (get_nohz_timer_target())
};
const char* toString(Fn f);

/// What a CPU looked like to the function that examined it.
enum class Seen : std::uint8_t {
    Idle,         ///< available_idle_cpu() true (plain idle)
    IdleByDelay,  ///< idle_cpu() true only because of the idle-delay knob
    SchedIdle,    ///< sched_idle_cpu() true
    Busy,         ///< not idle
    Claimed,      ///< idle but claimed by another waker (claim knob)
    Pending,      ///< idle but ttwu_pending set
    NotAllowed,   ///< not in p->cpus_ptr
    Skipped,      ///< looked at and passed over (outside the span, prev itself, ...)
    Chosen,       ///< picked by a non-idle criterion (least loaded, weight-1 group)
    CacheHot,     ///< idle, but cache-hot for its last task (SIS_CACHE): passed over
};
const char* toString(Seen s);

struct Examined {
    std::int16_t cpu;
    Fn fn;
    Seen seen;
    friend bool operator==(const Examined&, const Examined&) = default;
};

struct Step {
    Fn fn;
    std::string text;
};

struct Decision {
    int cpu = -1;
    int prev_cpu = -1;
    int this_cpu = -1;
    std::uint32_t wake_flags = 0;
    Stage0 stage0 = Stage0::NONE;
    Stage1 stage1 = Stage1::NONE;
    IdlestSub idlest = IdlestSub::NONE;
    Stage2 stage2 = Stage2::NONE;
    bool wakelist = false;
    bool migrated = false;
    bool preempted_curr = false;
    bool claim_set = false;
    bool idle_delay_hit = false;
    /// C (ttwu_queue_l2c): the wakelist was taken because waker and target share the LLC but
    /// not an L2, where 6.1 activates directly.
    bool wakelist_cross_l2 = false;
    /// A wakeup over time (the engine): the chosen CPU looked idle to this decision while
    /// another waker's wakee was already on its way there (chosen, its ttwu_pending or enqueue
    /// not visible yet), so both land on it: stacked by a race.
    bool raced = false;
    /// When ttwu_queue() ran and when the task was activated there (sched_wakeup: the direct
    /// enqueue under the target's rq lock, or sched_ttwu_pending() after the IPI), in ns of the
    /// run's clock; -1: at the decision's own instant (the oracles, the replay).
    std::int64_t t_queue = -1, t_activate = -1;
    std::vector<Examined> examined;
    std::vector<Step> steps;  ///< filled only when a trace was asked for

    /// "AFFINE_SYNC -> SIS_IDLE_CPU" style summary of the reasons.
    std::string reasons() const;
    /// Saves or restores the whole decision (checkpoints: a wakeup in flight carries one).
    void state(StateArchive& ar);
};

}  // namespace sched
