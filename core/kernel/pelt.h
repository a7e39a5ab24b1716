// SPDX-License-Identifier: GPL-2.0-or-later
// pelt.h: Per-Entity Load Tracking as kernel/sched/pelt.c computes it
// (1024 us periods, y^32 = 1/2, the runnable_avg_yN_inv table), for tasks and
// for each CPU's root cfs_rq. Frequency and capacity invariance are 1 (every
// simulated CPU runs at its nominal speed).
#pragma once

#include <algorithm>
#include <cstdint>

namespace sched {

inline constexpr std::uint32_t LOAD_AVG_PERIOD = 32;
inline constexpr std::uint32_t LOAD_AVG_MAX = 47742;
inline constexpr int SCHED_CAPACITY_SHIFT = 10;

/// struct sched_avg.
struct SchedAvg {
    std::uint64_t last_update_time = 0;  ///< ns
    std::uint64_t load_sum = 0;
    std::uint64_t runnable_sum = 0;
    std::uint32_t util_sum = 0;
    std::uint32_t period_contrib = 0;
    std::uint64_t load_avg = 0;
    std::uint64_t runnable_avg = 0;
    std::uint64_t util_avg = 0;
    std::uint32_t util_est_enqueued = 0;  ///< util_est.enqueued
    std::uint32_t util_est_ewma = 0;      ///< util_est.ewma
};

/// decay_load(val, n): val * y^n.
std::uint64_t decay_load(std::uint64_t val, std::uint64_t n);
/// ___update_load_sum(): returns true when at least one period boundary was crossed.
bool update_load_sum(std::uint64_t now, SchedAvg& sa, unsigned long load, unsigned long runnable, int running);
/// ___update_load_avg(): the averages from the sums.
void update_load_avg(SchedAvg& sa, unsigned long load);
/// get_pelt_divider().
inline std::uint32_t get_pelt_divider(const SchedAvg& sa) { return LOAD_AVG_MAX - 1024 + sa.period_contrib; }
inline constexpr std::uint64_t PELT_MIN_DIVIDER = LOAD_AVG_MAX - 1024;
/// sub_positive() of a cfs_rq's average and its sum, the sum then kept at least
/// avg * PELT_MIN_DIVIDER (update_cfs_rq_load_avg()'s removed load, detach_entity_load_avg()).
template <class S>
void sub_avg_and_sum(std::uint64_t& avg, S& sum, std::uint64_t davg, std::uint64_t dsum) {
    avg = davg > avg ? 0 : avg - davg;
    const std::uint64_t s0 = std::uint64_t(sum);
    sum = S(std::max<std::uint64_t>(dsum > s0 ? 0 : s0 - dsum, avg * PELT_MIN_DIVIDER));
}

/// __update_load_avg_se() (and, with on_rq = runnable = running = 0, __update_load_avg_blocked_se()):
/// the sums accrue !!se->on_rq, se_runnable() and cfs_rq->curr == se; the averages always use
/// se_weight(), scale_load_down(weight) = 1024 for nice 0, also for a sleeping entity.
inline bool pelt_update(std::uint64_t now, SchedAvg& sa, unsigned long on_rq, unsigned long runnable, int running, unsigned long weight = 1024) {
    if (update_load_sum(now, sa, on_rq ? 1 : 0, runnable, running)) {
        update_load_avg(sa, weight);
        return true;
    }
    return false;
}

/// __update_load_avg_cfs_rq(): a cfs_rq accrues its queued weight; its load_avg is load_sum / divider.
inline bool pelt_update_cfs(std::uint64_t now, SchedAvg& sa, unsigned long weight, unsigned long runnable, int running) {
    if (update_load_sum(now, sa, weight, runnable, running)) {
        update_load_avg(sa, 1);
        return true;
    }
    return false;
}

/// util_est_update() on dequeue of a sleeping task (UTIL_EST, no UTIL_EST_FASTUP).
void util_est_update_task(SchedAvg& task, bool fastup = true);
/// _task_util_est(p): max(ewma, enqueued) | UTIL_AVG_UNCHANGED dropped.
inline std::uint64_t task_util_est(const SchedAvg& t) { return t.util_est_ewma > t.util_est_enqueued ? t.util_est_ewma : t.util_est_enqueued; }

}  // namespace sched
