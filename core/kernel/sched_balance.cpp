// SPDX-License-Identifier: GPL-2.0-or-later
// sched_balance.cpp: see sched_balance.h.
#include "kernel/sched_balance.h"

#include "kernel/wakeup_path.h"

#include <algorithm>

namespace sched {

bool should_we_balance(const MachineState& st, const Knobs& k, int cpu, const SchedDomain& sd, IdleType idle) {
    if (idle == IdleType::CPU_NEWLY_IDLE) return !(st.rq[cpu].nr_running > 0 || st.rq[cpu].ttwu_pending);
    const CpuMask& sg = sd.groups.front();  // the local group (group_balance_mask = its span for plain groups)
    int first = -1;
    sg.forEach([&](int c) {
        if (first < 0 && st.rq[c].active && idle_cpu(st, k, c)) first = c;
    });
    if (first >= 0) return first == cpu;
    return sg.first() == cpu;
}

void update_newidle_stats(NewidleStats& s, int success) {
    s.newidle_call++;
    s.newidle_success += success;
    if (s.newidle_call >= 1024) {
        s.newidle_ratio = s.newidle_success;
        s.newidle_call /= 2;
        s.newidle_success /= 2;
    }
}

bool newidle_dice(NewidleStats& s, std::uint32_t draw, int* weight) {
    const std::uint32_t d = draw % 1024;
    const int w = 1 + s.newidle_ratio;
    if (int(d) > w) {
        update_newidle_stats(s, 0);
        return false;
    }
    if (weight) *weight = (1024 + w / 2) / w;
    return true;
}

bool newidle_dice(const Knobs& k, NewidleStats& s, std::uint32_t draw, int* weight) {
    if (!k.NI_RANDOM || k.kernel == KernelVersion::V6_5) {
        if (weight) *weight = 1;
        return true;
    }
    return newidle_dice(s, draw, weight);
}

bool newidle_balance_begins(MachineState& st, int cpu, bool rd_overload, std::int64_t lowest_max_newidle_lb_cost) {
    Rq& rq = st.rq[cpu];
    if (rq.ttwu_pending) return false;  // idle_stamp untouched
    rq.idle_stamp = st.now_ns;
    if (!rq.active) return false;
    if (!rd_overload || rq.avg_idle < lowest_max_newidle_lb_cost) return false;
    return true;
}

bool tick_idle_balance(const MachineState& st, const Knobs& k, int cpu) { return idle_cpu(st, k, cpu); }

const char* toString(TimerTarget::Why w) {
    switch (w) {
    case TimerTarget::Why::ThisBusy: return "this CPU busy";
    case TimerTarget::Why::Pinned: return "pinned";
    case TimerTarget::Why::Moved: return "moved to a busy CPU";
    case TimerTarget::Why::NoneBusy: return "no busy CPU";
    }
    return "?";
}

TimerTarget get_nohz_timer_target(const MachineState& st, const Knobs& k, int cpu) {
    TimerTarget t;
    t.cpu = cpu;
    t.examined = 1;
    const IdleVerdict self = idleVerdict(st, k, cpu);
    if (self == IdleVerdict::NotIdle) return t;  // housekeeping_cpu(cpu) && !idle_cpu(cpu)
    t.this_idle_by_delay = self == IdleVerdict::IdleByDelay;
    if (st.sd) {
        const auto& doms = st.sd->domains(cpu);
        for (std::size_t l = 0; l < doms.size(); ++l) {
            int found = -1;
            const CpuMask& span = doms[l].span;
            for (int i = span.next(0); i < kMaxCpus; i = span.next(i + 1)) {  // for_each_cpu_and(i, sched_domain_span(sd), hk_mask)
                if (i == cpu || !st.rq[i].active) continue;
                t.examined++;
                if (!idle_cpu(st, k, i)) {
                    found = i;
                    break;
                }
            }
            if (found >= 0) {
                t.cpu = found;
                t.why = TimerTarget::Why::Moved;
                t.level = int(l);
                return t;
            }
        }
    }
    t.why = TimerTarget::Why::NoneBusy;  // default_cpu: this CPU
    return t;
}

bool sg_lb_counts_idle(const MachineState& st, const Knobs& k, int cpu) { return st.rq[cpu].nr_running == 0 && idle_cpu(st, k, cpu); }

void set_next_task_idle(MachineState& st, const Knobs& k, int cpu) {
    update_idle_core(st, k, cpu);
    st.rq[cpu].claimed = false;
    st.rq[cpu].clock_idle = st.now_ns;
}

bool task_hot(const MachineState& st, const Knobs& k, const TaskHotInput& in) {
    if (k.SIS_DEBOUNCE && in.wakee_placed == st.jiffies) return true;  // task_placed(p)
    if (!in.fair) return false;
    if (in.sched_idle_policy) return false;
    if (in.sd_flags & SD_SHARE_CPUCAPACITY) return false;
    if (k.CACHE_HOT_BUDDY && in.dst_nr_running && in.is_buddy) return true;
    if (k.migration_cost_ns == -1) return true;
    if (k.migration_cost_ns == 0) return false;
    return in.src_clock_task - in.exec_start < k.migration_cost_ns;
}

bool can_migrate_hot(bool hot, int nr_balance_failed, int cache_nice_tries) { return !hot || nr_balance_failed > cache_nice_tries; }

bool balance_updates_nr_idle_scan(const SchedDomains& sds, const Knobs& k, int cpu, const SchedDomain& sd, IdleType idle) {
    return k.SIS_UTIL && idle != IdleType::CPU_NEWLY_IDLE && sd.span_weight == sds.sd_llc_size(cpu);
}

// ---------------------------------------------------------------------------
// load_balance()'s pure parts

const char* groupTypeName(GroupType t) {
    static const char* n[] = {"has_spare", "fully_busy", "misfit_task", "asym_packing", "imbalanced", "overloaded"};
    return n[int(t)];
}

const char* migrationTypeName(MigrationType t) {
    static const char* n[] = {"migrate_load", "migrate_util", "migrate_task", "migrate_misfit"};
    return n[int(t)];
}

bool group_is_overloaded(int pct, const SgLbStats& s) {
    if (s.sum_nr_running <= s.group_weight) return false;
    if (s.group_capacity * 100 < s.group_util * pct) return true;
    if (s.group_capacity * pct < s.group_runnable * 100) return true;
    return false;
}

bool group_has_capacity(int pct, const SgLbStats& s) {
    if (s.sum_nr_running < s.group_weight) return true;
    if (s.group_capacity * pct < s.group_runnable * 100) return false;
    if (s.group_capacity * 100 > s.group_util * pct) return true;
    return false;
}

GroupType group_classify(int pct, const SgLbStats& s) {
    if (group_is_overloaded(pct, s)) return GroupType::group_overloaded;
    // sg_imbalanced() and group_asym_packing: no affinity groups and no asymmetric packing in
    // the simulated machines.
    if (s.group_misfit_task_load) return GroupType::group_misfit_task;
    if (!group_has_capacity(pct, s)) return GroupType::group_fully_busy;
    return GroupType::group_has_spare;
}

void update_sg_lb_stats(const MachineState& st, const Knobs& k, const LbEnv& env, const CpuMask& span, SgLbStats& sgs, int* sg_status) {
    sgs = SgLbStats{};
    unsigned group_weight = 0;  // group->group_weight, the span's weight, counted on the way
    span.forEach([&](int i) {
        group_weight++;
        if (!env.cpus.test(i)) return;  // for_each_cpu_and(i, sched_group_span(group), env->cpus)
        const Rq& rq = st.rq[i];
        sgs.group_load += rq.load_avg;  // cpu_load()
        // cpu_util_cfs(): max(util_avg, util_est.enqueued) with UTIL_EST, capped at capacity_orig.
        const std::int64_t util = k.UTIL_EST ? std::max(rq.util_avg, rq.util_est) : rq.util_avg;
        sgs.group_util += std::min<std::int64_t>(util, st.topo->cpu(i).capacity);
        sgs.group_runnable += rq.runnable_avg;  // cpu_runnable()
        sgs.sum_h_nr_running += rq.h_nr_running;
        const unsigned nr_running = rq.nr_running;
        sgs.sum_nr_running += nr_running;
        if (nr_running > 1) *sg_status |= SG_OVERLOAD;
        // cpu_overutilized(): !fits_capacity(cpu_util_cfs(cpu), capacity_of(cpu))
        if (std::min<std::int64_t>(util, st.topo->cpu(i).capacity) * 1280 >= rq.cpu_capacity * 1024) *sg_status |= SG_OVERUTILIZED;
        if (!nr_running && idle_cpu(st, k, i)) sgs.idle_cpus++;
        sgs.group_capacity += rq.cpu_capacity;  // sgc->capacity: the sum of capacity_of()
    });
    sgs.group_weight = group_weight;
    sgs.group_type = group_classify(env.sd->imbalance_pct, sgs);
    // "Computing avg_load makes sense only when group is overloaded"
    if (sgs.group_type == GroupType::group_overloaded && sgs.group_capacity > 0) sgs.avg_load = sgs.group_load * 1024 / sgs.group_capacity;
}

bool update_sd_pick_busiest(const LbEnv& env, const SdLbStats& sds, const SgLbStats& sgs) {
    (void)env;
    const SgLbStats& busiest = sds.busiest_stat;
    if (!sgs.sum_h_nr_running) return false;  // at least one task to pull
    if (sgs.group_type > busiest.group_type) return true;
    if (sgs.group_type < busiest.group_type) return false;
    switch (sgs.group_type) {
    case GroupType::group_overloaded:
    case GroupType::group_fully_busy:  // "avg_load is not computed and always 0 so we select the 1st one"
        if (sgs.avg_load <= busiest.avg_load) return false;
        break;
    case GroupType::group_imbalanced: return true;
    case GroupType::group_asym_packing:
    case GroupType::group_misfit_task: return false;  // not produced (see group_classify)
    case GroupType::group_has_spare:
        if (sgs.idle_cpus > busiest.idle_cpus) return false;
        if (sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running) return false;
        break;
    }
    return true;
}

void update_sd_lb_stats(MachineState& st, const Knobs& k, LbEnv& env, SdLbStats& sds) {
    const SchedDomain& sd = *env.sd;
    for (std::size_t g = 0; g < sd.groups.size(); ++g) {
        const bool local_group = sd.groups[g].test(env.dst_cpu);
        SgLbStats tmp;
        SgLbStats& sgs = local_group ? sds.local_stat : tmp;
        if (local_group) sds.local = int(g);
        update_sg_lb_stats(st, k, env, sd.groups[g], sgs, &sds.sg_status);
        if (!local_group && update_sd_pick_busiest(env, sds, sgs)) {
            sds.busiest = int(g);
            sds.busiest_stat = sgs;
        }
        sds.total_load += sgs.group_load;
        sds.total_capacity += sgs.group_capacity;
        sds.sum_util += sgs.group_util;
    }
    // "Tag domain that child domain prefers tasks go to siblings first"
    sds.prefer_sibling = env.child && (env.child->flags & SD_PREFER_SIBLING);
    // update overload indicator if we are at root domain
    if (!env.has_parent) st.rd_overload = (sds.sg_status & SG_OVERLOAD) != 0;
}

void calculate_imbalance(LbEnv& env, SdLbStats& sds) {
    SgLbStats& local = sds.local_stat;
    const SgLbStats& busiest = sds.busiest_stat;
    if (busiest.group_type == GroupType::group_imbalanced) {
        env.migration_type = MigrationType::migrate_task;
        env.imbalance = 1;
        return;
    }
    // Try to use spare capacity of local group without overloading it or emptying busiest.
    if (local.group_type == GroupType::group_has_spare) {
        if (busiest.group_type > GroupType::group_fully_busy && !(env.sd->flags & SD_SHARE_PKG_RESOURCES)) {
            env.migration_type = MigrationType::migrate_util;
            env.imbalance = std::max(local.group_capacity, local.group_util) - local.group_util;
            if (env.idle != IdleType::CPU_NOT_IDLE && env.imbalance == 0) {
                env.migration_type = MigrationType::migrate_task;
                env.imbalance = 1;
            }
            return;
        }
        if (busiest.group_weight == 1 || sds.prefer_sibling) {
            // When prefer sibling, evenly spread running tasks on groups (lsub_positive).
            env.migration_type = MigrationType::migrate_task;
            env.imbalance = busiest.sum_nr_running > local.sum_nr_running ? std::int64_t(busiest.sum_nr_running - local.sum_nr_running) : 0;
        } else {
            // If there is no overload, we just want to even the number of idle cpus.
            env.migration_type = MigrationType::migrate_task;
            env.imbalance = std::max<std::int64_t>(0, std::int64_t(local.idle_cpus) - std::int64_t(busiest.idle_cpus));
        }
        // Consider allowing a small imbalance between NUMA groups: adjust_numa_imbalance().
        if (env.sd->flags & SD_NUMA) {
            const long dst_running = long(local.sum_nr_running) + 1;
            if (dst_running <= env.sd->imb_numa_nr && env.imbalance <= NUMA_IMBALANCE_MIN) env.imbalance = 0;
        }
        // Number of tasks to move to restore balance
        env.imbalance >>= 1;
        return;
    }
    // Local is fully busy but has to take more load to relieve the busiest group.
    if (local.group_type < GroupType::group_overloaded) {
        local.avg_load = local.group_capacity > 0 ? local.group_load * 1024 / local.group_capacity : 0;
        if (local.avg_load >= busiest.avg_load) {
            env.imbalance = 0;
            return;
        }
        sds.avg_load = sds.total_capacity > 0 ? sds.total_load * 1024 / sds.total_capacity : 0;
        if (local.avg_load >= sds.avg_load) {
            env.imbalance = 0;
            return;
        }
    }
    env.migration_type = MigrationType::migrate_load;
    env.imbalance =
        std::min((busiest.avg_load - sds.avg_load) * busiest.group_capacity, (sds.avg_load - local.avg_load) * local.group_capacity) / 1024;
}

int find_busiest_group(MachineState& st, const Knobs& k, LbEnv& env, SdLbStats& sds) {
    update_sd_lb_stats(st, k, env, sds);
    // There is no busy sibling group to pull tasks from.
    if (sds.busiest < 0) return -1;
    const SgLbStats& busiest = sds.busiest_stat;
    if (busiest.group_type == GroupType::group_imbalanced) goto force_balance;
    {
        const SgLbStats& local = sds.local_stat;
        // If the local group is busier than the selected busiest group don't try and pull any tasks.
        if (local.group_type > busiest.group_type) return -1;
        // When groups are overloaded, use the avg_load to ensure fairness between tasks.
        if (local.group_type == GroupType::group_overloaded) {
            if (local.avg_load >= busiest.avg_load) return -1;
            sds.avg_load = sds.total_capacity > 0 ? sds.total_load * 1024 / sds.total_capacity : 0;
            if (local.avg_load >= sds.avg_load) return -1;
            if (100 * busiest.avg_load <= std::int64_t(env.sd->imbalance_pct) * local.avg_load) return -1;
        }
        // Try to move all excess tasks to child's sibling domain.
        if (sds.prefer_sibling && local.group_type == GroupType::group_has_spare && busiest.sum_nr_running > local.sum_nr_running + 1)
            goto force_balance;
        if (busiest.group_type != GroupType::group_overloaded) {
            if (env.idle == IdleType::CPU_NOT_IDLE) return -1;  // balanced; the idle CPUs will pull
            if (busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1) return -1;
            if (busiest.sum_h_nr_running == 1) return -1;
        }
    }
force_balance:
    calculate_imbalance(env, sds);
    return env.imbalance ? sds.busiest : -1;
}

int find_busiest_queue(const MachineState& st, const Knobs& k, const LbEnv& env, const CpuMask& group) {
    int busiest = -1;
    std::int64_t busiest_util = 0, busiest_load = 0, busiest_capacity = 1;
    unsigned busiest_nr = 0;
    group.forEach([&](int i) {
        if (!env.cpus.test(i)) return;
        const Rq& rq = st.rq[i];
        const unsigned nr_running = rq.h_nr_running;
        if (!nr_running) return;
        const std::int64_t capacity = rq.cpu_capacity;
        switch (env.migration_type) {
        case MigrationType::migrate_load: {
            const std::int64_t load = rq.load_avg;
            // check_cpu_capacity(): capacity_of reduced by more than imbalance_pct from capacity_orig.
            const bool reduced = rq.cpu_capacity * env.sd->imbalance_pct < std::int64_t(st.topo->cpu(i).capacity) * 100;
            if (nr_running == 1 && load > env.imbalance && !reduced) return;
            if (load * busiest_capacity > busiest_load * capacity) {
                busiest_load = load;
                busiest_capacity = capacity;
                busiest = i;
            }
            break;
        }
        case MigrationType::migrate_util: {
            const std::int64_t util = std::min<std::int64_t>(k.UTIL_EST ? std::max(rq.util_avg, rq.util_est) : rq.util_avg,
                                                             st.topo->cpu(i).capacity);  // cpu_util_cfs()
            if (nr_running <= 1) return;
            if (busiest_util < util) {
                busiest_util = util;
                busiest = i;
            }
            break;
        }
        case MigrationType::migrate_task:
            if (busiest_nr < nr_running) {
                busiest_nr = nr_running;
                busiest = i;
            }
            break;
        case MigrationType::migrate_misfit: break;
        }
    });
    return busiest;
}

bool need_active_balance(const MachineState& st, const LbEnv& env) {
    // imbalanced_active_balance()
    if (env.migration_type == MigrationType::migrate_task && env.nr_balance_failed > env.sd->cache_nice_tries + 2) return true;
    // The dst_cpu is idle and the src_cpu has only 1 CFS task whose capacity is reduced.
    if (env.idle != IdleType::CPU_NOT_IDLE && st.rq[env.src_cpu].h_nr_running == 1) {
        const Rq& src = st.rq[env.src_cpu];
        const bool reduced = src.cpu_capacity * env.sd->imbalance_pct < std::int64_t(st.topo->cpu(env.src_cpu).capacity) * 100;
        if (reduced && src.cpu_capacity * env.sd->imbalance_pct < st.rq[env.dst_cpu].cpu_capacity * 100) return true;
    }
    return env.migration_type == MigrationType::migrate_misfit;
}

std::int64_t msecs_to_jiffies(std::int64_t ms, int hz) {
    const std::int64_t per = 1000 / hz;  // MSEC_PER_SEC / HZ (HZ <= 1000 and divides it)
    return (ms + per - 1) / per;
}

std::int64_t get_sd_balance_interval(const SchedDomain& sd, std::int64_t interval, bool cpu_busy, int hz, int nr_cpus) {
    if (cpu_busy) interval *= sd.busy_factor;
    interval = msecs_to_jiffies(interval, hz);  // scale ms to jiffies
    // Reduce likelihood of busy balancing at higher domains racing with balancing at lower domains.
    if (cpu_busy) interval -= 1;
    const std::int64_t max_load_balance_interval = std::int64_t(hz) * nr_cpus / 10;
    return std::clamp<std::int64_t>(interval, 1, std::max<std::int64_t>(1, max_load_balance_interval));
}

bool rebalance_busy(const MachineState& st, int cpu, IdleType idle) { return idle != IdleType::CPU_IDLE && !sched_idle_cpu(st, cpu); }
}  // namespace sched
