// SPDX-License-Identifier: GPL-2.0-or-later
// decision.cpp: names of the reason codes (as docs/decisions.md spells them).
#include "kernel/decision.h"

#include "util/state_archive.h"

namespace sched {

const char* toString(Stage0 s) {
    switch (s) {
    case Stage0::NONE: return "NONE";
    case Stage0::TTWU_SELF: return "TTWU_SELF";
    case Stage0::TTWU_RUNNABLE: return "TTWU_RUNNABLE";
    case Stage0::TTWU_ONCPU_WAKELIST: return "TTWU_ONCPU_WAKELIST";
    case Stage0::AFFINITY_SINGLE: return "AFFINITY_SINGLE";
    case Stage0::FALLBACK_RQ: return "FALLBACK_RQ";
    }
    return "?";
}

const char* toString(Stage1 s) {
    switch (s) {
    case Stage1::NONE: return "NONE";
    case Stage1::EAS: return "EAS";
    case Stage1::WAKE_WIDE: return "WAKE_WIDE";
    case Stage1::AFFINE_NOT_ALLOWED: return "AFFINE_NOT_ALLOWED";
    case Stage1::AFFINE_SAME_CPU: return "AFFINE_SAME_CPU";
    case Stage1::AFFINE_NO_DOMAIN: return "AFFINE_NO_DOMAIN";
    case Stage1::AFFINE_IDLE_PREV: return "AFFINE_IDLE_PREV";
    case Stage1::AFFINE_IDLE_THIS: return "AFFINE_IDLE_THIS";
    case Stage1::AFFINE_SYNC: return "AFFINE_SYNC";
    case Stage1::AFFINE_PREV_IDLE: return "AFFINE_PREV_IDLE";
    case Stage1::AFFINE_WEIGHT_SYNC_THIS: return "AFFINE_WEIGHT_SYNC_THIS";
    case Stage1::AFFINE_WEIGHT_THIS: return "AFFINE_WEIGHT_THIS";
    case Stage1::AFFINE_WEIGHT_PREV: return "AFFINE_WEIGHT_PREV";
    case Stage1::AFFINE_NO_TARGET: return "AFFINE_NO_TARGET";
    case Stage1::SLOW_PATH_IDLEST: return "SLOW_PATH_IDLEST";
    case Stage1::SLOW_NO_DOMAIN: return "SLOW_NO_DOMAIN";
    case Stage1::DEBOUNCE_PLACED: return "DEBOUNCE_PLACED";
    case Stage1::DEBOUNCE_COLD_LLC: return "DEBOUNCE_COLD_LLC";
    case Stage1::AFFINE_PREV_ALMOST_IDLE: return "AFFINE_PREV_ALMOST_IDLE";
    case Stage1::AFFINE_WAKE_ON_CURRENT: return "AFFINE_WAKE_ON_CURRENT";
    case Stage1::MIGRATION_RATELIMIT: return "MIGRATION_RATELIMIT";
    }
    return "?";
}

const char* toString(IdlestSub s) {
    switch (s) {
    case IdlestSub::NONE: return "NONE";
    case IdlestSub::IDLEST_SCHED_IDLE: return "IDLEST_SCHED_IDLE";
    case IdlestSub::IDLEST_SHALLOW: return "IDLEST_SHALLOW";
    case IdlestSub::IDLEST_LEAST_LOADED: return "IDLEST_LEAST_LOADED";
    case IdlestSub::IDLEST_STAY_LOCAL: return "IDLEST_STAY_LOCAL";
    case IdlestSub::IDLEST_SINGLE_CPU_GROUP: return "IDLEST_SINGLE_CPU_GROUP";
    }
    return "?";
}

const char* toString(Stage2 s) {
    switch (s) {
    case Stage2::NONE: return "NONE";
    case Stage2::SIS_TARGET_IDLE: return "SIS_TARGET_IDLE";
    case Stage2::SIS_TARGET_SCHED_IDLE: return "SIS_TARGET_SCHED_IDLE";
    case Stage2::SIS_PREV_IDLE: return "SIS_PREV_IDLE";
    case Stage2::SIS_KTHREAD_STACK: return "SIS_KTHREAD_STACK";
    case Stage2::SIS_RECENT: return "SIS_RECENT";
    case Stage2::SIS_ASYM_CAPACITY: return "SIS_ASYM_CAPACITY";
    case Stage2::SIS_NO_LLC: return "SIS_NO_LLC";
    case Stage2::SIS_IDLE_SMT: return "SIS_IDLE_SMT";
    case Stage2::SIS_IDLE_CORE: return "SIS_IDLE_CORE";
    case Stage2::SIS_IDLE_CPU: return "SIS_IDLE_CPU";
    case Stage2::SIS_IDLE_CPU_FROM_CORESCAN: return "SIS_IDLE_CPU_FROM_CORESCAN";
    case Stage2::SIS_UTIL_ABORT: return "SIS_UTIL_ABORT";
    case Stage2::SIS_SCAN_EXHAUSTED: return "SIS_SCAN_EXHAUSTED";
    case Stage2::SIS_FALLBACK_TARGET: return "SIS_FALLBACK_TARGET";
    case Stage2::SIS_TARGET_IDLE_HINT: return "SIS_TARGET_IDLE_HINT";
    case Stage2::SIS_TARGET_FITS: return "SIS_TARGET_FITS";
    case Stage2::SIS_PREV_FITS: return "SIS_PREV_FITS";
    case Stage2::SIS_RECENT_FITS: return "SIS_RECENT_FITS";
    case Stage2::SIS_BIAS_PREV_IDLE: return "SIS_BIAS_PREV_IDLE";
    case Stage2::SIS_BIAS_PREV_FITS: return "SIS_BIAS_PREV_FITS";
    case Stage2::SIS_BIAS_PREV_FALLBACK: return "SIS_BIAS_PREV_FALLBACK";
    case Stage2::SIS_CURRENT: return "SIS_CURRENT";
    case Stage2::SIS_CACHE_HOT_FALLBACK: return "SIS_CACHE_HOT_FALLBACK";
    }
    return "?";
}

const char* toString(Fn f) {
    switch (f) {
    case Fn::try_to_wake_up: return "try_to_wake_up";
    case Fn::ttwu_queue_cond: return "ttwu_queue_cond";
    case Fn::select_task_rq: return "select_task_rq";
    case Fn::select_fallback_rq: return "select_fallback_rq";
    case Fn::select_task_rq_fair: return "select_task_rq_fair";
    case Fn::wake_affine_idle: return "wake_affine_idle";
    case Fn::wake_affine_weight: return "wake_affine_weight";
    case Fn::select_idle_sibling: return "select_idle_sibling";
    case Fn::select_idle_smt: return "select_idle_smt";
    case Fn::select_idle_core: return "select_idle_core";
    case Fn::select_idle_cpu: return "select_idle_cpu";
    case Fn::select_idle_capacity: return "select_idle_capacity";
    case Fn::find_idlest_group: return "find_idlest_group";
    case Fn::find_idlest_group_cpu: return "find_idlest_group_cpu";
    case Fn::check_preempt_curr: return "check_preempt_curr";
    case Fn::hrtimer_wakeup: return "hrtimer_wakeup";
    }
    return "?";
}

const char* toString(Seen s) {
    switch (s) {
    case Seen::Idle: return "idle";
    case Seen::IdleByDelay: return "idle (idle delay)";
    case Seen::SchedIdle: return "sched_idle";
    case Seen::Busy: return "busy";
    case Seen::Claimed: return "claimed";
    case Seen::Pending: return "ttwu_pending";
    case Seen::NotAllowed: return "not allowed";
    case Seen::Skipped: return "skipped";
    case Seen::Chosen: return "chosen";
    case Seen::CacheHot: return "idle, cache-hot";
    }
    return "?";
}

std::string Decision::reasons() const {
    std::string s;
    auto add = [&](const char* x) {
        if (!s.empty()) s += " -> ";
        s += x;
    };
    if (stage0 != Stage0::NONE) add(toString(stage0));
    if (stage1 != Stage1::NONE) add(toString(stage1));
    if (idlest != IdlestSub::NONE) add(toString(idlest));
    if (stage2 != Stage2::NONE) add(toString(stage2));
    return s.empty() ? "NONE" : s;
}

}  // namespace sched

namespace sched {

void Decision::state(StateArchive& ar) {
    ar(cpu, prev_cpu, this_cpu, wake_flags, stage0, stage1, idlest, stage2, wakelist, migrated, preempted_curr, claim_set, idle_delay_hit,
       wakelist_cross_l2, raced, t_queue, t_activate);
    ar.each(examined, [](StateArchive& a, Examined& x) { a(x.cpu, x.fn, x.seen); });
    ar.each(steps, [](StateArchive& a, Step& s) {
        a(s.fn);
        a.str(s.text);
    });
}

}  // namespace sched
