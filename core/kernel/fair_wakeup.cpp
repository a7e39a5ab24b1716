// SPDX-License-Identifier: GPL-2.0-or-later
// fair_wakeup.cpp: kernel/sched/fair.c's part of the Linux 6.1 (Debian 6.1.192) wakeup path, in
// fair.c's order: place_entity(), record_wakee() and wake_wide(), wake_affine(), the slow
// path's find_idlest_cpu(), the idle scans and select_idle_sibling(), select_task_rq_fair(),
// wakeup_preempt_entity(), then the load-balancing section's update_idle_cpu_scan() and
// find_idlest_group(). Each function is tagged with the kernel function it mirrors.
#include "kernel/sched_balance.h"
#include "kernel/wakeup_internal.h"
#include "kernel/wakeup_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>

namespace sched {

// fair.c: update_sysctl() / get_update_sysctl_factor(): the tunables scaled by 1 + ilog2(min(ncpus, 8)).
CfsTunables CfsTunables::forCpus(int ncpus) {
    int n = std::min(ncpus, 8);
    int factor = 1 + (31 - std::countl_zero(unsigned(n)));  // 1 + ilog2(min(ncpus, 8))
    return CfsTunables{6000000LL * factor, 750000LL * factor, 1000000LL * factor};
}

// fair.c: place_entity(), the wakeup case (initial = 0).
std::int64_t placeEntityWakeup(const CfsTunables& t, const Knobs& k, std::int64_t min_vruntime, std::int64_t vruntime, bool long_sleeper) {
    std::int64_t thresh = t.latency_ns;
    if (k.GENTLE_FAIR_SLEEPERS) thresh >>= 1;
    std::int64_t base = min_vruntime - thresh;
    if (long_sleeper) return base;
    return std::max(vruntime, base);
}

// fair.c: task_util_est()
// task_util_est(p): max(task_util(p), _task_util_est(p)) with UTIL_EST, else task_util(p).
std::int64_t task_util_est(const WakeCtx& c, const Task& p) { return c.k.UTIL_EST ? std::max(p.task_util(), p.util_est()) : p.task_util(); }

// fair.c: record_wakee()
void record_wakee(WakeCtx& c, const Task& p) {
    Task& cur = c.current();
    const std::int64_t hz = c.k.hz;
    if (c.st.jiffies > cur.wakee_flip_decay_ts + hz) {  // time_after(): strictly later
        cur.wakee_flips >>= 1;
        cur.wakee_flip_decay_ts = c.st.jiffies;
    }
    if (cur.last_wakee != p.pid) {
        cur.last_wakee = p.pid;
        cur.wakee_flips++;
    }
}

// fair.c: wake_wide()
bool wake_wide(WakeCtx& c, const Task& p) {
    unsigned master = c.current().wakee_flips;
    unsigned slave = p.wakee_flips;
    const unsigned factor = unsigned(c.sd().sd_llc_size(c.this_cpu()));
    if (master < slave) std::swap(master, slave);
    const bool wide = !(slave < factor || master < slave * factor);
    SCHED_STEP(c, Fn::select_task_rq_fair,
               fmt::format("wake_wide: waker flips {}, wakee flips {}, llc_size {} -> {}", c.current().wakee_flips, p.wakee_flips, factor,
                           wide ? "wide" : "not wide"));
    return wide;
}

// fair.c: cpu_load_without(): cpu_load(rq) without p's contribution when p's last CPU is this one.
std::int64_t cpu_load_without(WakeCtx& c, int cpu, const Task& p) {
    const Rq& rq = c.rq(cpu);
    if (cpu != p.cpu || p.avg.last_update_time == 0) return rq.load_avg;  // no contribution, or new
    return std::max<std::int64_t>(0, rq.load_avg - p.h_load());           // lsub_positive(&load, task_h_load(p))
}

// H (SIS_CURRENT v8, Chen Yu 2023-04-29): fair.c wake_on_current(). A short waker and a short
// wakee that wake each other go on the waking CPU.
bool wake_on_current(WakeCtx& c, int this_cpu, const Task& p, Fn fn) {
    if (!c.k.SIS_CURRENT) return false;
    const Task& cur = c.current();
    const char* no = nullptr;
    if (c.rq(this_cpu).nr_running > 1) no = "this_cpu has nr_running > 1";
    else if (!cur.dur_avg || cur.dur_avg >= c.k.migration_cost_ns) no = "the waker is not short";
    else if (!p.dur_avg || p.dur_avg >= c.k.migration_cost_ns) no = "the wakee is not short";
    else if (cur.wakee_flips || p.wakee_flips) no = "wakee_flips not 0";
    else if (cur.last_wakee != p.pid || p.last_wakee != cur.pid) no = "they do not wake each other";
    c.seen(this_cpu, fn, no ? seenAs(c.st, c.k, this_cpu) : Seen::Chosen);
    SCHED_STEP(c, fn,
               fmt::format("SIS_CURRENT wake_on_current({}): nr_running {}, dur_avg waker {} ns / wakee {} ns (< {}), wakee_flips {}/{}, "
                           "last_wakee {}/{} -> {}",
                           this_cpu, c.rq(this_cpu).nr_running, cur.dur_avg, p.dur_avg, c.k.migration_cost_ns, cur.wakee_flips, p.wakee_flips,
                           cur.last_wakee, p.last_wakee, no ? no : "yes"));
    return no == nullptr;
}

// fair.c: wake_affine_idle() (with B's target_idle: Desnoyers, "Favor almost idle previously used
// CPUs for wake affine", 2023-08-10)
int wake_affine_idle(WakeCtx& c, int this_cpu, int prev_cpu, bool sync, bool* target_idle, const Task& p) {
    const Seen sThis = seenAs(c.st, c.k, this_cpu);
    const bool thisIdle = availableIdle(sThis);
    c.seen(this_cpu, Fn::wake_affine_idle, sThis);
    // A: an interrupt on an idle CPU that shares cache with prev.
    if (thisIdle && c.sd().cpus_share_cache(this_cpu, prev_cpu)) {
        Seen sPrev = seenAs(c.st, c.k, prev_cpu);
        c.seen(prev_cpu, Fn::wake_affine_idle, sPrev);
        bool prevIdle = availableIdle(sPrev);
        c.d.stage1 = prevIdle ? Stage1::AFFINE_IDLE_PREV : Stage1::AFFINE_IDLE_THIS;
        SCHED_STEP(c, Fn::wake_affine_idle,
                   fmt::format("A: this {} idle and shares LLC with prev {}; prev is {} -> {}", this_cpu, prev_cpu, seenText(sPrev),
                               prevIdle ? prev_cpu : this_cpu));
        return prevIdle ? prev_cpu : this_cpu;
    }
    // B: a sync wakeup from the only task on this CPU.
    if (sync && c.rq(this_cpu).nr_running == 1) {
        c.d.stage1 = Stage1::AFFINE_SYNC;
        SCHED_STEP(c, Fn::wake_affine_idle, fmt::format("B: sync and this {} has nr_running 1 -> this", this_cpu));
        return this_cpu;
    }
    // C
    Seen sPrev = seenAs(c.st, c.k, prev_cpu);
    c.seen(prev_cpu, Fn::wake_affine_idle, sPrev);
    if (availableIdle(sPrev)) {
        c.d.stage1 = Stage1::AFFINE_PREV_IDLE;
        if (c.k.WA_ALMOST_IDLE_PREV) *target_idle = true;
        SCHED_STEP(c, Fn::wake_affine_idle,
                   fmt::format("C: prev {} is {} -> prev{}", prev_cpu, seenText(sPrev), c.k.WA_ALMOST_IDLE_PREV ? ", target_idle := 1" : ""));
        return prev_cpu;
    }
    if (c.k.WA_ALMOST_IDLE_PREV) {
        // almost_idle_cpu(prev_cpu, p)
        const std::int64_t load = cpu_load_without(c, prev_cpu, p);
        const bool almost = load <= c.k.almost_idle_load;
        SCHED_STEP(c, Fn::wake_affine_idle,
                   fmt::format("C (almost idle): cpu_load_without(prev {}, p) = {} {} {}{}", prev_cpu, load, almost ? "<=" : ">",
                               c.k.almost_idle_load, almost ? " -> prev, target_idle := 1" : ""));
        if (almost) {
            c.d.stage1 = Stage1::AFFINE_PREV_ALMOST_IDLE;
            *target_idle = true;
            return prev_cpu;
        }
    }
    SCHED_STEP(c, Fn::wake_affine_idle,
               fmt::format("A, B, C fail (this {} {}, prev {} {}, sync {})", this_cpu, seenText(sThis), prev_cpu, seenText(sPrev), int(sync)));
    return NR;
}

// fair.c: wake_affine_weight()
int wake_affine_weight(WakeCtx& c, const SchedDomain& sd, Task& p, int this_cpu, int prev_cpu, bool sync) {
    std::int64_t this_eff_load = c.rq(this_cpu).load_avg;
    if (sync) {
        std::int64_t current_load = c.current().h_load();
        if (current_load > this_eff_load) {
            c.d.stage1 = Stage1::AFFINE_WEIGHT_SYNC_THIS;
            SCHED_STEP(c, Fn::wake_affine_weight,
                       fmt::format("W1: sync, task_h_load(current) {} > cpu_load(this {}) {} -> this", current_load, this_cpu, this_eff_load));
            return this_cpu;
        }
        this_eff_load -= current_load;
    }
    const std::int64_t task_load = p.h_load();
    this_eff_load += task_load;
    if (c.k.WA_BIAS) this_eff_load *= 100;
    this_eff_load *= c.rq(prev_cpu).cpu_capacity;
    std::int64_t prev_eff_load = c.rq(prev_cpu).load_avg - task_load;
    if (c.k.WA_BIAS) prev_eff_load *= 100 + (sd.imbalance_pct - 100) / 2;
    prev_eff_load *= c.rq(this_cpu).cpu_capacity;
    if (sync) prev_eff_load += 1;
    const bool toThis = this_eff_load < prev_eff_load;
    c.d.stage1 = toThis ? Stage1::AFFINE_WEIGHT_THIS : Stage1::AFFINE_WEIGHT_PREV;
    SCHED_STEP(c, Fn::wake_affine_weight,
               fmt::format("W2 at {}: this_eff_load {} {} prev_eff_load {} -> {}", sd.name, this_eff_load, toThis ? "<" : ">=", prev_eff_load,
                           toThis ? "this" : "prev"));
    return toThis ? this_cpu : NR;
}

// fair.c: wake_affine()
int wake_affine(WakeCtx& c, const SchedDomain& sd, Task& p, int this_cpu, int prev_cpu, bool sync, bool* target_idle) {
    int target = NR;
    if (c.k.WA_IDLE) target = wake_affine_idle(c, this_cpu, prev_cpu, sync, target_idle, p);
    if (c.k.WA_WEIGHT && target == NR) target = wake_affine_weight(c, sd, p, this_cpu, prev_cpu, sync);
    // H: neither found a CPU: a short pair that wakes each other stays together.
    if (target == NR && c.k.SIS_CURRENT && wake_on_current(c, this_cpu, p, Fn::wake_affine_weight)) {
        target = this_cpu;
        c.d.stage1 = Stage1::AFFINE_WAKE_ON_CURRENT;
    }
    if (target == NR && c.d.stage1 == Stage1::NONE) c.d.stage1 = Stage1::AFFINE_NO_TARGET;
    if (target != this_cpu) return prev_cpu;
    return this_cpu;
}

// fair.c: find_idlest_group_cpu()
int find_idlest_group_cpu(WakeCtx& c, const CpuMask& group, const Task& p, int this_cpu) {
    if (group.weight() == 1) {
        int cpu = group.first();
        c.seen(cpu, Fn::find_idlest_group_cpu, Seen::Chosen);
        c.d.idlest = IdlestSub::IDLEST_SINGLE_CPU_GROUP;
        SCHED_STEP(c, Fn::find_idlest_group_cpu, fmt::format("group {{{}}} has one CPU: {}", group.toList(), cpu));
        return cpu;
    }
    std::int64_t min_load = std::numeric_limits<std::int64_t>::max();
    std::int64_t min_exit_latency = std::numeric_limits<std::int64_t>::max();
    std::int64_t latest_idle_timestamp = 0;
    int least_loaded_cpu = this_cpu, shallowest_idle_cpu = -1, schedIdle = -1;
    (group & *p.cpus_ptr).forEach([&](int i) {
        if (schedIdle >= 0) return;
        if (sched_idle_cpu(c.st, i)) {
            c.seen(i, Fn::find_idlest_group_cpu, Seen::SchedIdle);
            schedIdle = i;
            return;
        }
        const Rq& rq = c.rq(i);
        IdleVerdict v = idleVerdict(c.st, c.k, i);
        if (v != IdleVerdict::NotIdle) {
            c.seen(i, Fn::find_idlest_group_cpu, v == IdleVerdict::Idle ? Seen::Idle : Seen::IdleByDelay);
            const bool hasState = rq.exit_latency_ns >= 0;
            if (hasState && rq.exit_latency_ns < min_exit_latency) {
                min_exit_latency = rq.exit_latency_ns;
                latest_idle_timestamp = rq.idle_stamp;
                shallowest_idle_cpu = i;
            } else if ((!hasState || rq.exit_latency_ns == min_exit_latency) && rq.idle_stamp > latest_idle_timestamp) {
                latest_idle_timestamp = rq.idle_stamp;
                shallowest_idle_cpu = i;
            }
        } else if (shallowest_idle_cpu == -1) {
            c.seen(i, Fn::find_idlest_group_cpu, seenAs(c.st, c.k, i));
            if (rq.load_avg < min_load) {
                min_load = rq.load_avg;
                least_loaded_cpu = i;
            }
        } else {
            c.seen(i, Fn::find_idlest_group_cpu, seenAs(c.st, c.k, i));
        }
    });
    if (schedIdle >= 0) {
        c.d.idlest = IdlestSub::IDLEST_SCHED_IDLE;
        SCHED_STEP(c, Fn::find_idlest_group_cpu, fmt::format("CPU {} runs only SCHED_IDLE tasks", schedIdle));
        return schedIdle;
    }
    if (shallowest_idle_cpu != -1) {
        c.d.idlest = IdlestSub::IDLEST_SHALLOW;
        SCHED_STEP(c, Fn::find_idlest_group_cpu,
                   fmt::format("shallowest / most recently idle CPU {} (idle_stamp {})", shallowest_idle_cpu, latest_idle_timestamp));
        return shallowest_idle_cpu;
    }
    c.d.idlest = IdlestSub::IDLEST_LEAST_LOADED;
    SCHED_STEP(c, Fn::find_idlest_group_cpu, fmt::format("no usable idle CPU (idle_stamp quirk or all busy): least loaded {}", least_loaded_cpu));
    return least_loaded_cpu;
}

// fair.c: find_idlest_cpu()
int find_idlest_cpu(WakeCtx& c, int sdLevel, Task& p, int cpu, int prev_cpu, std::uint32_t sd_flag) {
    const auto* doms = &c.sd().domains(cpu);
    if (!(*doms)[sdLevel].span.intersects(*p.cpus_ptr)) {
        SCHED_STEP(c, Fn::select_task_rq_fair, "find_idlest_cpu: domain does not intersect p's CPUs -> prev");
        return prev_cpu;
    }
    // if (!(sd_flag & SD_BALANCE_FORK)) sync_entity_load_avg(&p->se);
    if (!(sd_flag & SD_BALANCE_FORK) && c.st.hook) c.st.hook->sync_entity_load_avg(p);
    int new_cpu = cpu;
    int level = sdLevel;  // index into domains(cpu); -1 = none
    bool movedAny = false;
    while (level >= 0) {
        const SchedDomain& sd = c.sd().domains(cpu)[level];
        if (!(sd.flags & sd_flag)) {
            --level;
            continue;
        }
        int g = find_idlest_group(c, sd, p, cpu);
        if (g < 0) {
            --level;
            continue;
        }
        new_cpu = find_idlest_group_cpu(c, sd.groups[g], p, cpu);
        if (new_cpu == cpu) {
            --level;
            continue;
        }
        movedAny = true;
        const int weight = sd.span_weight;
        cpu = new_cpu;
        level = -1;
        const auto& nd = c.sd().domains(cpu);
        for (int i = 0; i < int(nd.size()); ++i) {
            if (weight <= nd[i].span_weight) break;
            if (nd[i].flags & sd_flag) level = i;
        }
    }
    if (!movedAny && new_cpu == cpu) c.d.idlest = IdlestSub::IDLEST_STAY_LOCAL;
    return new_cpu;
}

// fair.c: __update_idle_core()
void update_idle_core(MachineState& st, const Knobs& k, int cpu) {
    // __update_idle_core(): only the *other* siblings are tested; no-op without SMT
    // or when the hint is already set.
    if (!st.sd->smtActive()) return;
    SdShared* sds = st.llcShared(cpu);
    if (!sds || sds->has_idle_cores) return;
    bool all = true;
    st.sd->smtMask(cpu).forEach([&](int s) {
        if (s != cpu && !available_idle_cpu(st, k, s)) all = false;
    });
    if (all) sds->has_idle_cores = true;
}

// fair.c: select_idle_core()
int select_idle_core(WakeCtx& c, const Task& p, int core, CpuMask& cpus, int* idle_cpu) {
    bool idle = true;
    const CpuMask& smt = c.sd().smtMask(core);
    int stop = -1;
    smt.forEach([&](int cpu) {
        if (stop >= 0) return;
        Seen s = seenAs(c.st, c.k, cpu);
        c.seen(cpu, Fn::select_idle_core, s);
        if (!availableIdle(s)) {
            idle = false;
            if (*idle_cpu == -1) {
                if (s == Seen::SchedIdle && p.cpus_ptr->test(cpu)) {
                    *idle_cpu = cpu;
                    stop = cpu;
                }
                return;  // continue
            }
            stop = cpu;  // break
            return;
        }
        if (*idle_cpu == -1 && p.cpus_ptr->test(cpu)) *idle_cpu = cpu;
    });
    if (idle) return core;
    cpus.andNot(smt);
    return -1;
}

// fair.c: select_idle_smt()
int select_idle_smt(WakeCtx& c, const Task& p, const SchedDomain& sd, int target) {
    int found = -1;
    CpuMask sibs = c.sd().smtMask(target) & *p.cpus_ptr;
    sibs.forEach([&](int cpu) {
        if (found >= 0) return;
        if (cpu == target) return;
        // 6.1.y backport of the v6.8 fix: the sibling must be in sd_llc(target)'s span (not in v6.5, D1).
        if (c.k.kernel == KernelVersion::V6_1 && !sd.span.test(cpu)) {
            c.seen(cpu, Fn::select_idle_smt, Seen::Skipped);
            return;
        }
        if (idleish(c, cpu, Fn::select_idle_smt)) found = cpu;
    });
    SCHED_STEP(c, Fn::select_idle_smt,
               found >= 0 ? fmt::format("sibling {} of prev {} is idle", found, target) : fmt::format("no idle SMT sibling of prev {}", target));
    return found;
}

// fair.c: select_idle_cpu()
int select_idle_cpu(WakeCtx& c, const Task& p, const SchedDomain& sd, bool has_idle_core, int target) {
    CpuMask cpus = sd.span & *p.cpus_ptr;
    int idle_cpu = -1;
    std::int64_t nr = INT_MAX;
    std::int64_t nr_hot = 0;  // F (SIS_CACHE): 0 without SIS_UTIL's depth: nothing is passed over
    int hot_cpu = -1, hot_skipped = 0;
    const int this_cpu = c.this_cpu();
    const SchedDomain* this_sd = nullptr;
    Rq& this_rq = c.rq(this_cpu);

    if (c.k.SIS_PROP && !has_idle_core) {
        this_sd = c.sd().sd_llc(this_cpu);
        if (!this_sd) return -1;
        // Age the predicted idle time of a busy waker: halve once per jiffy since wake_stamp.
        while (this_rq.wake_stamp < c.st.jiffies && this_rq.wake_avg_idle) {
            this_rq.wake_stamp++;
            this_rq.wake_avg_idle >>= 1;
        }
        std::int64_t avg_idle = this_rq.wake_avg_idle;
        std::int64_t avg_cost = c.st.avg_scan_cost[this_cpu] + 1;
        std::int64_t span_avg = std::int64_t(sd.span_weight) * avg_idle;
        nr = span_avg > 4 * avg_cost ? span_avg / avg_cost : 4;
        SCHED_STEP(c, Fn::select_idle_cpu, fmt::format("SIS_PROP: wake_avg_idle {} ns, avg_scan_cost {} ns -> nr {}", avg_idle, avg_cost - 1, nr));
    }
    if (c.k.SIS_UTIL) {
        if (SdShared* sds = c.st.llcShared(target)) {
            nr = std::int64_t(sds->nr_idle_scan) + 1;
            if (nr == 1) {
                SCHED_STEP(c, Fn::select_idle_cpu, fmt::format("SIS_UTIL: nr_idle_scan of target {}'s LLC is 0: no scan", target));
                c.d.stage2 = Stage2::SIS_UTIL_ABORT;
                return -1;
            }
            SCHED_STEP(c, Fn::select_idle_cpu, fmt::format("SIS_UTIL: nr_idle_scan {} -> scan at most {} CPUs", sds->nr_idle_scan, nr - 1));
            nr_hot = nr >> 1;  // F (SIS_CACHE v2): at most this many cache-hot idle CPUs passed over
        }
    }
    // F: cache_hot_cpu(): an idle CPU some task left less than its average short sleep ago; the
    // first one is remembered as the last resort.
    auto cache_hot_cpu = [&](int cpu) {
        if (!c.k.SIS_CACHE || c.st.now_ns >= c.rq(cpu).cache_hot_timeout) return false;
        if (hot_cpu == -1) hot_cpu = cpu;
        c.seen(cpu, Fn::select_idle_cpu, Seen::CacheHot);
        ++hot_skipped;
        return true;
    };
    const size_t before = c.d.examined.size();
    bool exhausted = false, found = false;
    int result = -2;  // -2: not decided inside the loop
    for_each_cpu_wrap(cpus, target + 1, c.st.nrCpus(), [&](int cpu) {
        if (!cpus.test(cpu)) return false;  // removed by select_idle_core (live mask)
        if (has_idle_core) {
            int i = select_idle_core(c, p, cpu, cpus, &idle_cpu);
            if (valid(i)) {
                if (--nr_hot >= 0 && cache_hot_cpu(i)) return false;  // continue
                result = i;
                return true;
            }
        } else {
            if (!--nr) {
                exhausted = true;
                return true;
            }
            // idle_cpu = __select_idle_cpu(cpu, p): overwritten at every CPU scanned
            idle_cpu = idleish(c, cpu, Fn::select_idle_cpu) ? cpu : -1;
            if (valid(idle_cpu)) {
                if (--nr_hot >= 0 && cache_hot_cpu(idle_cpu)) return false;  // continue
                found = true;
                return true;
            }
        }
        return false;
    });
    // F: "pick the first cache-hot CPU as the last resort" (not after the budget ran out: that returned -1).
    bool hotFallback = false;
    if (!exhausted && result < 0 && idle_cpu == -1 && hot_cpu != -1) {
        idle_cpu = hot_cpu;
        hotFallback = true;
    }
    // The scan may also end on a cache-hot CPU it passed over (idle_cpu keeps the last one scanned).
    if (!has_idle_core && !exhausted && !found && hot_skipped && valid(idle_cpu)) hotFallback = true;
    const int scanned = int(c.d.examined.size() - before) - hot_skipped;  // the CacheHot marks are second looks
    if (result >= 0) {
        c.d.stage2 = Stage2::SIS_IDLE_CORE;
        SCHED_STEP(c, Fn::select_idle_cpu, fmt::format("core scan from {}: whole core of CPU {} is idle", target + 1, result));
        idle_cpu = result;
    } else if (exhausted) {
        c.d.stage2 = Stage2::SIS_SCAN_EXHAUSTED;
        SCHED_STEP(c, Fn::select_idle_cpu, fmt::format("scan budget used up after {} CPUs: give up", scanned));
        idle_cpu = -1;
    } else {
        if (has_idle_core) {
            // The core scan failed: clear the hint (set_idle_cores(target, false)).
            if (SdShared* sds = c.st.llcShared(target)) sds->has_idle_cores = false;
            SCHED_STEP(c, Fn::select_idle_cpu, "no idle core: has_idle_cores := 0");
            if (idle_cpu >= 0) c.d.stage2 = Stage2::SIS_IDLE_CPU_FROM_CORESCAN;
        } else if (idle_cpu >= 0) {
            c.d.stage2 = Stage2::SIS_IDLE_CPU;
        }
        if (hotFallback) {
            c.d.stage2 = Stage2::SIS_CACHE_HOT_FALLBACK;
            SCHED_STEP(c, Fn::select_idle_cpu,
                       fmt::format("SIS_CACHE: {} cache-hot idle CPU(s) passed over and no other found: CPU {} (cache-hot until {} ns)", hot_skipped,
                                   idle_cpu, c.rq(idle_cpu).cache_hot_timeout));
        }
        SCHED_STEP(c, Fn::select_idle_cpu,
                   idle_cpu >= 0 ? fmt::format("scan from {} found idle CPU {}", target + 1, idle_cpu)
                                 : fmt::format("scan from {} found no idle CPU ({} examined)", target + 1, scanned));
    }
    if (c.k.SIS_PROP && this_sd && !has_idle_core) {
        // Scan cost: a per-CPU cost knob stands in for cpu_clock() deltas.
        std::int64_t time = std::int64_t(scanned) * c.k.sis_scan_cost_ns;
        this_rq.wake_avg_idle -= std::min(this_rq.wake_avg_idle, time);
        std::int64_t& avg = c.st.avg_scan_cost[this_cpu];
        avg += (time - avg) / 8;  // update_avg()
    }
    return idle_cpu;
}

// fair.c: select_idle_capacity()
int select_idle_capacity(WakeCtx& c, const Task& p, const SchedDomain& sd, int target) {
    CpuMask cpus = sd.span & *p.cpus_ptr;
    const std::int64_t task_util = task_util_est(c, p);
    std::int64_t best_cap = 0;
    int best_cpu = -1, found = -1;
    for_each_cpu_wrap(cpus, target, c.st.nrCpus(), [&](int cpu) {
        std::int64_t cap = c.rq(cpu).cpu_capacity;
        if (!idleish(c, cpu, Fn::select_idle_capacity)) return false;
        if (task_util * 1280 < cap * 1024) {  // util_fits_cpu() without uclamp: fits_capacity()
            found = cpu;
            return true;
        }
        if (cap > best_cap) {
            best_cap = cap;
            best_cpu = cpu;
        }
        return false;
    });
    int r = found >= 0 ? found : best_cpu;
    SCHED_STEP(c, Fn::select_idle_capacity, r >= 0 ? fmt::format("idle CPU {} fits util {}", r, task_util) : "no idle CPU in the asym domain");
    return r;
}

// fair.c: select_idle_sibling()
int select_idle_sibling(WakeCtx& c, Task& p, int prev, int target, bool target_idle) {
    const SchedDomains& sds = c.sd();
    const bool asym = sds.asymCpucapActive();
    // G: sched_util_fits_capacity_active()
    const bool fitsActive = c.k.UTIL_EST && c.k.UTIL_FITS_CAPACITY;
    // On asymmetric systems (and with UTIL_FITS_CAPACITY) the kernel syncs p's averages first:
    // they decide what fits.
    if ((fitsActive || asym) && c.st.hook) c.st.hook->sync_entity_load_avg(p);
    const std::int64_t task_util = task_util_est(c, p);
    auto asym_fits = [&](int cpu) { return !asym || task_util * 1280 < c.rq(cpu).cpu_capacity * 1024; };
    // G: task_fits_remaining_cpu_capacity(): fits_capacity(util_est.enqueued + task_util,
    // scale_rt_capacity(cpu)); capacity_of() stands for scale_rt_capacity() (no RT, DL or IRQ
    // pressure is modelled, so both are the CPU's capacity).
    auto fits = [&](int cpu) { return fitsActive && (c.rq(cpu).util_est + task_util) * 1280 < c.rq(cpu).cpu_capacity * 1024; };
    auto fitsText = [&](int cpu) {
        return fitsActive ? fmt::format("; util_est {} + task {} {} fits capacity {}", c.rq(cpu).util_est, task_util, fits(cpu) ? "" : "does not",
                                        c.rq(cpu).cpu_capacity)
                          : std::string{};
    };
    auto finish = [&](int cpu, Stage2 why) {
        if (why != Stage2::NONE) c.d.stage2 = why;
        // SIS_DEBOUNCE: remember a placement that stayed on target or prev (docs/patch-variants.md).
        if (c.k.SIS_DEBOUNCE && (cpu == target || cpu == prev)) p.wakee_placed = c.st.jiffies;
        return cpu;
    };
    SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("select_idle_sibling(prev={}, target={})", prev, target));

    // G (SELECT_BIAS_PREV): prev before target, when it shares target's LLC and is idle or p fits.
    if (c.k.SELECT_BIAS_PREV && (prev == target || sds.cpus_share_cache(prev, target))) {
        const Seen s = seenAs(c.st, c.k, prev);
        c.seen(prev, Fn::select_idle_sibling, s);
        const bool idle = idleishSeen(s), fit = !idle && fits(prev);
        SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("SELECT_BIAS_PREV: prev {} is {}{}", prev, seenText(s), fitsText(prev)));
        if ((idle || fit) && asym_fits(prev)) return finish(prev, idle ? Stage2::SIS_BIAS_PREV_IDLE : Stage2::SIS_BIAS_PREV_FITS);
    }
    // S1 (B: target_idle from wake_affine_idle(); G: or p fits target's remaining capacity)
    {
        Seen s = seenAs(c.st, c.k, target);
        c.seen(target, Fn::select_idle_sibling, s);
        const bool idle = idleishSeen(s);
        const bool fit = !idle && !target_idle && fits(target);
        SCHED_STEP(c, Fn::select_idle_sibling,
                   fmt::format("S1 target {} is {}{}{}", target, seenText(s), target_idle ? " (target_idle from wake_affine_idle)" : "",
                               idle || target_idle ? std::string{} : fitsText(target)));
        if ((idle || target_idle || fit) && asym_fits(target))
            return finish(target, idle          ? (s == Seen::SchedIdle ? Stage2::SIS_TARGET_SCHED_IDLE : Stage2::SIS_TARGET_IDLE)
                                  : target_idle ? Stage2::SIS_TARGET_IDLE_HINT
                                                : Stage2::SIS_TARGET_FITS);
    }
    // S2 (not with SELECT_BIAS_PREV, which tested prev first)
    if (!c.k.SELECT_BIAS_PREV && prev != target && sds.cpus_share_cache(prev, target)) {
        Seen s = seenAs(c.st, c.k, prev);
        c.seen(prev, Fn::select_idle_sibling, s);
        const bool idle = idleishSeen(s), fit = !idle && fits(prev);
        SCHED_STEP(c, Fn::select_idle_sibling,
                   fmt::format("S2 prev {} (shares LLC with target) is {}{}", prev, seenText(s), idle ? std::string{} : fitsText(prev)));
        if ((idle || fit) && asym_fits(prev)) return finish(prev, idle ? Stage2::SIS_PREV_IDLE : Stage2::SIS_PREV_FITS);
    }
    // S3: a per-CPU kthread waker stacks the wakee on its own CPU (IO completion).
    if (c.current().is_per_cpu_kthread() && c.w.in_task && prev == c.this_cpu() && c.rq(c.this_cpu()).nr_running <= 1 && asym_fits(prev)) {
        SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("S3 waker is a per-CPU kthread on prev {} with nr_running <= 1", prev));
        return finish(prev, Stage2::SIS_KTHREAD_STACK);
    }
    // S4: recent_used_cpu is overwritten with prev before the test.
    {
        const int recent = p.recent_used_cpu;
        p.recent_used_cpu = prev;
        if (recent != prev && recent != target && valid(recent) && recent < c.st.nrCpus() && sds.cpus_share_cache(recent, target)) {
            const Seen s = seenAs(c.st, c.k, recent);
            const bool allowed = p.cpus_ptr->test(recent);
            const bool idle = idleishSeen(s), fit = !idle && fits(recent);
            c.seen(recent, Fn::select_idle_sibling, (idle || fit) && !allowed ? Seen::NotAllowed : s);
            const bool ok = (idle || fit) && allowed && asym_fits(recent);
            SCHED_STEP(c, Fn::select_idle_sibling,
                       fmt::format("S4 recent_used_cpu {} is {}{}{}; recent_used_cpu := {}", recent, seenText(s),
                                   idle ? std::string{} : fitsText(recent), allowed ? "" : " (not allowed)", prev));
            if (ok) return finish(recent, idle ? Stage2::SIS_RECENT : Stage2::SIS_RECENT_FITS);
        } else {
            SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("S4 recent_used_cpu {} not a candidate; recent_used_cpu := {}", recent, prev));
        }
    }
    // S5: asymmetric capacity (big.LITTLE).
    if (asym) {
        if (const SchedDomain* sd = sds.sd_asym_cpucapacity(target)) {
            int i = select_idle_capacity(c, p, *sd, target);
            return finish(valid(i) ? i : target, Stage2::SIS_ASYM_CAPACITY);
        }
    }
    // S6
    const SchedDomain* llc = sds.sd_llc(target);
    if (!llc) {
        SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("S6 target {} has no LLC domain", target));
        return finish(target, Stage2::SIS_NO_LLC);
    }
    // S7
    bool has_idle_core = false;
    if (sds.smtActive()) {
        SdShared* sh = c.st.llcShared(target);
        has_idle_core = sh && sh->has_idle_cores;
        SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("S7 has_idle_cores({}'s LLC) = {}", target, int(has_idle_core)));
        if (!has_idle_core && sds.cpus_share_cache(prev, target)) {
            int i = select_idle_smt(c, p, *llc, prev);
            if (valid(i)) {
                if (c.k.claim == ClaimMode::Sis) claim_cpu(c, i);
                return finish(i, Stage2::SIS_IDLE_SMT);
            }
        }
    }
    // H (SIS_CURRENT): the waking CPU is the target and the pair is short and mutual.
    if (c.k.SIS_CURRENT && c.this_cpu() == target && wake_on_current(c, target, p, Fn::select_idle_sibling))
        return finish(target, Stage2::SIS_CURRENT);
    // S8
    int i = select_idle_cpu(c, p, *llc, has_idle_core, target);
    if (valid(i)) {
        if (c.k.claim == ClaimMode::Sis) claim_cpu(c, i);
        return finish(i, Stage2::NONE);  // stage2 set by select_idle_cpu
    }
    // G (SELECT_BIAS_PREV): nothing idle in the LLC: stay on a cache-affine prev.
    if (c.k.SELECT_BIAS_PREV && prev != target && sds.cpus_share_cache(prev, target)) {
        SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("SELECT_BIAS_PREV: nothing idle found ({}): prev {}", toString(c.d.stage2), prev));
        c.d.stage2 = Stage2::NONE;
        return finish(prev, Stage2::SIS_BIAS_PREV_FALLBACK);
    }
    // S9
    if (c.d.stage2 == Stage2::NONE) c.d.stage2 = Stage2::SIS_FALLBACK_TARGET;
    SCHED_STEP(c, Fn::select_idle_sibling, fmt::format("S9 nothing idle found: target {}", target));
    return finish(target, Stage2::NONE);
}

// D: fair.c should_migrate_task() (1/2; 2/2 with migration_ratelimit_adaptive). sched_clock_cpu(prev_cpu) is now.
bool should_migrate_task(WakeCtx& c, const Task& p, int prev_cpu) {
    const std::int64_t now = c.st.now_ns;
    bool ok;
    if (c.k.migration_ratelimit_adaptive) ok = p.nr_migrations_per_window < p.quota_migrations_per_window || now > p.next_migration_time;
    else ok = !(now < p.next_migration_time);
    SCHED_STEP(c, Fn::select_task_rq_fair,
               c.k.migration_ratelimit_adaptive ? fmt::format("migration ratelimit: {} of {} migrations in the window ending {} ns (now {}) -> {}",
                                                              p.nr_migrations_per_window, p.quota_migrations_per_window, p.next_migration_time, now,
                                                              ok ? "may migrate" : "stay on prev " + std::to_string(prev_cpu))
                                                : fmt::format("migration ratelimit: next_migration_time {} ns, now {} -> {}", p.next_migration_time,
                                                              now, ok ? "may migrate" : "stay on prev " + std::to_string(prev_cpu)));
    return ok;
}

// D: fair.c migrate_task_ratelimit_fair() (2/2), or 1/2's window in migrate_task_rq_fair(): a
// migration of p at `now`.
void migrate_task_ratelimit(const Knobs& k, Task& p, std::int64_t now) {
    if (k.migration_ratelimit_ns <= 0) return;
    if (!k.migration_ratelimit_adaptive) {
        p.next_migration_time = now + k.migration_ratelimit_ns;
        return;
    }
    constexpr int SCHED_MIGRATION_QUOTA = 10, SCHED_MIGRATION_QUOTA_REPLENISH = 1;
    if (now < p.next_migration_time) {
        p.nr_migrations_per_window++;  // sched_clock_stable(): no shift of the window
    } else {
        p.next_migration_time = now + k.migration_ratelimit_ns;
        if (p.nr_migrations_per_window >= p.quota_migrations_per_window)
            p.quota_migrations_per_window = std::max(1, p.quota_migrations_per_window >> 1);
        else p.quota_migrations_per_window = std::min(SCHED_MIGRATION_QUOTA, p.quota_migrations_per_window + SCHED_MIGRATION_QUOTA_REPLENISH);
        p.nr_migrations_per_window = 1;
    }
}

// F (SIS_CACHE v2, Chen Yu 2023-11-21): dequeue_task_fair()'s part. A sleeping dequeue stamps
// last_dequeue_time (any other dequeue clears it); a CPU it leaves empty is cache-hot for the
// task's average short sleep. `nr_running` is the rq's after the dequeue.
void sis_cache_dequeue(const Knobs& k, Task& p, Rq& rq, bool sleep, std::int64_t now) {
    if (!sleep) {
        p.last_dequeue_time = 0;  // "0 indicates the dequeue is not caused by sleep"
        return;
    }
    p.last_dequeue_time = now;
    if (k.SIS_CACHE && rq.nr_running == 0 && p.avg_hot_dur) rq.cache_hot_timeout = std::max(rq.cache_hot_timeout, now + p.avg_hot_dur);
}

// F: enqueue_task_fair()'s part, at a wakeup's enqueue: a sleep shorter than
// sysctl_sched_migration_cost enters the average; a longer one halves it.
void sis_cache_wakeup(const Knobs& k, Task& p, std::int64_t now) {
    const std::int64_t last = p.last_dequeue_time;
    if (!last || now <= last) return;
    if (now - last < k.migration_cost_ns) p.avg_hot_dur += (now - last - p.avg_hot_dur) / 8;  // update_avg()
    else p.avg_hot_dur >>= 1;
}

// H: fair.c dur_avg_update() from dequeue_task_fair(): a voluntary sleep closes one run.
void dur_avg_update(Task& p, std::int64_t sum_exec_runtime) {
    const std::int64_t dur = sum_exec_runtime - p.prev_sleep_sum_runtime;
    p.prev_sleep_sum_runtime = sum_exec_runtime;
    p.dur_avg += (dur - p.dur_avg) / 8;  // update_avg()
}

// fair.c: select_task_rq_fair()
int select_task_rq_fair(WakeCtx& c, Task& p, int prev_cpu, std::uint32_t wake_flags) {
    const bool sync = (wake_flags & WF_SYNC) && !c.current().exiting;
    const int cpu = c.this_cpu();
    int new_cpu = prev_cpu;
    bool want_affine = false;
    const std::uint32_t sd_flag = wake_flags & 0xF;

    if (wake_flags & WF_TTWU) {
        if (c.k.SIS_DEBOUNCE && p.wakee_placed == c.st.jiffies && p.cpus_ptr->test(prev_cpu)) {
            c.d.stage1 = Stage1::DEBOUNCE_PLACED;
            SCHED_STEP(c, Fn::select_task_rq_fair, fmt::format("SIS_DEBOUNCE: p was placed this jiffy ({}) -> prev {}", c.st.jiffies, prev_cpu));
            return prev_cpu;
        }
        record_wakee(c, p);
        if (c.k.EAS) { /* find_energy_efficient_cpu is not modelled; the knob cannot be set */
        }
        const bool wide = wake_wide(c, p);
        const bool allowed = p.cpus_ptr->test(cpu);
        want_affine = !wide && allowed;
        if (wide) c.d.stage1 = Stage1::WAKE_WIDE;
        else if (!allowed) c.d.stage1 = Stage1::AFFINE_NOT_ALLOWED;
        if (c.k.SIS_DEBOUNCE && c.st.now_ns - p.exec_start >= c.k.migration_cost_ns && c.sd().cpus_share_cache(cpu, prev_cpu)) {
            c.d.stage1 = Stage1::DEBOUNCE_COLD_LLC;
            SCHED_STEP(c, Fn::select_task_rq_fair, "SIS_DEBOUNCE: p is cache-cold and this CPU shares prev's LLC: search prev's LLC");
            return select_idle_sibling(c, p, prev_cpu, prev_cpu, false);
        }
    }

    // D (migration ratelimit, Desnoyers RFC 2023-09-05): an affine wakeup of a task that
    // migrated less than the window ago stays on prev.
    if (want_affine && c.k.migration_ratelimit_ns > 0 && !should_migrate_task(c, p, prev_cpu)) {
        c.d.stage1 = Stage1::MIGRATION_RATELIMIT;
        c.seen(prev_cpu, Fn::select_task_rq_fair, Seen::Chosen);
        return prev_cpu;
    }

    bool target_idle = false;  // B: wake_affine_idle() found prev idle or almost idle
    int sdLevel = -1;
    bool affineDomain = false;
    const auto& doms = c.sd().domains(cpu);
    for (int i = 0; i < int(doms.size()); ++i) {
        const SchedDomain& tmp = doms[i];
        if (want_affine && (tmp.flags & SD_WAKE_AFFINE) && tmp.span.test(prev_cpu)) {
            affineDomain = true;
            if (cpu != prev_cpu) {
                SCHED_STEP(c, Fn::select_task_rq_fair,
                           fmt::format("want_affine: {} domain spans this {} and prev {}: wake_affine", tmp.name, cpu, prev_cpu));
                new_cpu = wake_affine(c, tmp, p, cpu, prev_cpu, sync, &target_idle);
            } else {
                c.d.stage1 = Stage1::AFFINE_SAME_CPU;
                SCHED_STEP(c, Fn::select_task_rq_fair, fmt::format("this CPU {} is prev: no wake_affine", cpu));
            }
            sdLevel = -1;
            break;
        }
        if (tmp.flags & sd_flag) sdLevel = i;
        else if (!want_affine) break;
    }
    if (want_affine && !affineDomain && c.d.stage1 == Stage1::NONE) {
        c.d.stage1 = Stage1::AFFINE_NO_DOMAIN;
        SCHED_STEP(c, Fn::select_task_rq_fair, fmt::format("no SD_WAKE_AFFINE domain spans this {} and prev {}", cpu, prev_cpu));
    }
    if (c.d.stage1 == Stage1::WAKE_WIDE) SCHED_STEP(c, Fn::select_task_rq_fair, "wake_wide: no affine wakeup");

    if (sdLevel >= 0) {
        c.d.stage1 = Stage1::SLOW_PATH_IDLEST;
        SCHED_STEP(c, Fn::select_task_rq_fair, fmt::format("slow path from {} (sd_flag {})", doms[sdLevel].name, wakeFlagsToString(sd_flag)));
        new_cpu = find_idlest_cpu(c, sdLevel, p, cpu, prev_cpu, sd_flag);
    } else if (wake_flags & WF_TTWU) {
        new_cpu = select_idle_sibling(c, p, prev_cpu, new_cpu, target_idle);
    } else {
        c.d.stage1 = Stage1::SLOW_NO_DOMAIN;
        SCHED_STEP(c, Fn::select_task_rq_fair, "no domain has the balance flag: prev");
    }
    return new_cpu;
}

// fair.c: wakeup_preempt_entity() (wakeup_gran() of a nice-0 entity)
int wakeup_preempt_entity(const CfsTunables& t, std::int64_t curr_vruntime, std::int64_t se_vruntime) {
    std::int64_t vdiff = curr_vruntime - se_vruntime;
    if (vdiff <= 0) return -1;
    std::int64_t gran = t.wakeup_granularity_ns;  // wakeup_gran(): identity for nice 0
    return vdiff > gran ? 1 : 0;
}

// fair.c: check_preempt_wakeup(), entered as core.c: check_preempt_curr() (here with its class checks).
bool check_preempt_curr(WakeCtx& c, const Task& p, int cpu, std::uint32_t wake_flags, bool migrated, int from_cpu) {
    // wake_flags only feed NEXT_BUDDY (off by default), which marks a buddy but never decides preemption.
    (void)wake_flags;
    Rq& rq = c.rq(cpu);
    if (rq.curr == CurrKind::Idle) {
        SCHED_STEP(c, Fn::check_preempt_curr, fmt::format("CPU {} runs the idle task: resched_curr", cpu));
        return true;  // fair outranks idle: always resched
    }
    // check_preempt_wakeup()
    if (rq.curr_need_resched) {
        SCHED_STEP(c, Fn::check_preempt_curr, fmt::format("CPU {}: curr already has need_resched", cpu));
        return false;
    }
    const bool pIdle = p.policy == Policy::Idle;
    if (rq.curr == CurrKind::SchedIdle && !pIdle) {
        SCHED_STEP(c, Fn::check_preempt_curr, fmt::format("CPU {}: curr is SCHED_IDLE, p is not: preempt", cpu));
        return true;
    }
    if (p.policy != Policy::Normal || !c.k.WAKEUP_PREEMPTION) {
        SCHED_STEP(c, Fn::check_preempt_curr, "p is not SCHED_NORMAL or WAKEUP_PREEMPTION off: no preemption");
        return false;
    }
    if (rq.curr == CurrKind::SchedIdle && pIdle) return false;
    if (c.st.hook) c.st.hook->update_curr(cpu);  // check_preempt_wakeup: update_curr(cfs_rq_of(se))
    const CfsTunables t = CfsTunables::forCpus(c.st.nrCpus());
    // A migrated task's vruntime was made relative to the old cfs_rq and absolute on the new one.
    std::int64_t vr = p.vruntime;
    if (migrated && valid(from_cpu)) vr = vr - c.rq(from_cpu).min_vruntime + rq.min_vruntime;
    const bool longSleeper = p.exec_start != 0 && (c.st.now_ns - p.exec_start) > (std::int64_t(1) << 53);
    vr = placeEntityWakeup(t, c.k, rq.min_vruntime, vr, longSleeper);
    int r = wakeup_preempt_entity(t, rq.curr_vruntime, vr);
    SCHED_STEP(c, Fn::check_preempt_curr,
               fmt::format("CPU {}: curr vruntime {} vs placed {} (vdiff {} ns, gran {} ns): {}", cpu, rq.curr_vruntime, vr, rq.curr_vruntime - vr,
                           t.wakeup_granularity_ns, r == 1 ? "preempt" : "no preemption"));
    return r == 1;
}

// fair.c: update_idle_cpu_scan() (SIS_UTIL), the nr_idle_scan it stores.
int update_idle_cpu_scan(int llc_weight, std::int64_t sum_util, int pct) {
    // fair.c update_idle_cpu_scan(): y = (1024 - min(x^2 pct^2 / (10000*1024), 1024)) * llc_weight / 1024
    std::int64_t x = sum_util / llc_weight;
    std::int64_t tmp = x * x * pct * pct / (10000 * 1024);
    tmp = std::min<std::int64_t>(tmp, 1024);
    std::int64_t y = (1024 - tmp) * llc_weight / 1024;
    return int(y);
}

// fair.c: update_sg_wakeup_stats() and update_pick_idlest(), for find_idlest_group().
namespace {

// The groups' statistics are the balancer's struct sg_lb_stats (sched_balance.h), classified by
// the same group_classify(), as in fair.c.
using enum GroupType;

bool task_running_on_cpu(int cpu, const Task& p) { return cpu == p.cpu && p.avg.last_update_time != 0 && p.on_rq; }

void update_sg_wakeup_stats(WakeCtx& c, const SchedDomain& sd, const CpuMask& group, SgLbStats& sgs, const Task& p) {
    sgs = SgLbStats{};
    if (sd.flags & SD_ASYM_CPUCAPACITY) sgs.group_misfit_task_load = 1;
    const bool pContributes = p.avg.last_update_time != 0;
    const std::int64_t task_util = task_util_est(c, p);
    (group & *p.cpus_ptr).forEach([&](int i) {
        const Rq& rq = c.rq(i);
        const bool onPrev = pContributes && i == p.cpu;
        // cpu_load_without / cpu_util_without / cpu_runnable_without
        std::int64_t load = rq.load_avg, util = rq.util_avg, runnable = rq.runnable_avg, util_est = rq.util_est;
        if (onPrev) {
            load = std::max<std::int64_t>(0, load - p.h_load());
            util = std::max<std::int64_t>(0, util - p.task_util());
            runnable = std::max<std::int64_t>(0, runnable - std::int64_t(p.avg.runnable_avg));
            util_est = std::max<std::int64_t>(0, util_est - p.util_est());
        }
        if (c.k.UTIL_EST) util = std::max(util, util_est);
        util = std::min(util, std::int64_t(c.st.topo->cpu(i).capacity));
        sgs.group_load += load;
        sgs.group_util += util;
        sgs.group_runnable += runnable;
        const unsigned local = task_running_on_cpu(i, p) ? 1 : 0;
        sgs.sum_h_nr_running += rq.h_nr_running - local;
        const unsigned nr = rq.nr_running - local;
        sgs.sum_nr_running += nr;
        // idle_cpu_without(): its own copy of the test; no idle-delay, no claim.
        const bool currOk = rq.curr == CurrKind::Idle || (p.on_cpu && i == p.cpu);
        if (!nr && currOk && !rq.ttwu_pending) sgs.idle_cpus++;
        if ((sd.flags & SD_ASYM_CPUCAPACITY) && sgs.group_misfit_task_load && task_util * 1280 < rq.cpu_capacity * 1024)
            sgs.group_misfit_task_load = 0;
    });
    sgs.group_weight = 0;  // group->group_weight, counted with sgc->capacity
    group.forEach([&](int i) {
        sgs.group_capacity += c.rq(i).cpu_capacity;
        sgs.group_weight++;
    });  // sgc->capacity: the whole group
    sgs.group_type = group_classify(sd.imbalance_pct, sgs);
    if (sgs.group_type == group_fully_busy || sgs.group_type == group_overloaded) sgs.avg_load = sgs.group_load * 1024 / sgs.group_capacity;
}

bool update_pick_idlest(const SgLbStats& idlest, const SgLbStats& sgs, std::int64_t idlestMaxCap, std::int64_t groupMaxCap) {
    if (sgs.group_type < idlest.group_type) return true;
    if (sgs.group_type > idlest.group_type) return false;
    switch (sgs.group_type) {
    case group_overloaded:
    case group_fully_busy:
        if (idlest.avg_load <= sgs.avg_load) return false;
        break;
    case group_imbalanced:
    case group_asym_packing: return false;
    case group_misfit_task:
        if (idlestMaxCap >= groupMaxCap) return false;
        break;
    case group_has_spare:
        if (idlest.idle_cpus > sgs.idle_cpus) return false;
        if (idlest.idle_cpus == sgs.idle_cpus && idlest.group_util <= sgs.group_util) return false;
        break;
    }
    return true;
}

}  // namespace

// fair.c: find_idlest_group()
int find_idlest_group(WakeCtx& c, const SchedDomain& sd, const Task& p, int this_cpu) {
    int idlest = -1, local = -1;
    SgLbStats local_sgs, tmp, idlest_sgs;
    idlest_sgs.avg_load = std::int64_t(UINT_MAX);
    idlest_sgs.group_type = group_overloaded;
    auto maxCap = [&](const CpuMask& g) {
        std::int64_t m = 0;
        g.forEach([&](int i) { m = std::max(m, c.rq(i).cpu_capacity); });
        return m;
    };
    for (int gi = 0; gi < int(sd.groups.size()); ++gi) {
        const CpuMask& g = sd.groups[gi];
        if (!g.intersects(*p.cpus_ptr)) continue;
        const bool isLocal = g.test(this_cpu);
        SgLbStats& sgs = isLocal ? local_sgs : tmp;
        update_sg_wakeup_stats(c, sd, g, sgs, p);
        SCHED_STEP(c, Fn::find_idlest_group,
                   fmt::format("{} group {{{}}}{}: {} nr_running {} idle_cpus {} util {} runnable {} load {} cap {}{}", sd.name, g.toList(),
                               isLocal ? " (local)" : "", groupTypeName(sgs.group_type), sgs.sum_nr_running, sgs.idle_cpus, sgs.group_util,
                               sgs.group_runnable, sgs.group_load, sgs.group_capacity,
                               (sgs.group_type == group_fully_busy || sgs.group_type == group_overloaded) ? fmt::format(" avg_load {}", sgs.avg_load)
                                                                                                          : std::string{}));
        if (isLocal) {
            local = gi;
        } else if (update_pick_idlest(idlest_sgs, sgs,
                                      // max capacities matter only when comparing misfit groups
                                      sgs.group_type == group_misfit_task && idlest >= 0 ? maxCap(sd.groups[idlest]) : 0,
                                      sgs.group_type == group_misfit_task ? maxCap(g) : 0)) {
            idlest = gi;
            idlest_sgs = sgs;
        }
    }
    auto result = [&](int r, const char* why) {
        SCHED_STEP(c, Fn::find_idlest_group,
                   r < 0 ? fmt::format("{}: stay local ({})", sd.name, why)
                         : fmt::format("{}: idlest group {{{}}} ({})", sd.name, sd.groups[r].toList(), why));
        return r;
    };
    if (idlest < 0) return result(-1, "no remote group");
    if (local < 0) return result(idlest, "local group not allowed");
    if (local_sgs.group_type < idlest_sgs.group_type) return result(-1, "local group type is lower");
    if (local_sgs.group_type > idlest_sgs.group_type) return result(idlest, "local group type is higher");
    switch (local_sgs.group_type) {
    case group_overloaded:
    case group_fully_busy: {
        const std::int64_t imbalance = 1024 * (sd.imbalance_pct - 100) / 100;
        if ((sd.flags & SD_NUMA) && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load)
            return result(-1, "NUMA: idlest avg_load + imbalance >= local");
        if (idlest_sgs.avg_load >= local_sgs.avg_load + imbalance) return result(-1, "idlest avg_load >= local + imbalance");
        if (100 * local_sgs.avg_load <= sd.imbalance_pct * idlest_sgs.avg_load) return result(-1, "100*local avg_load <= pct*idlest avg_load");
        break;
    }
    case group_imbalanced:
    case group_asym_packing: return result(-1, "imbalanced/asym type");
    case group_misfit_task:
        if (maxCap(sd.groups[local]) >= maxCap(sd.groups[idlest])) return result(-1, "misfit: local capacity not lower");
        break;
    case group_has_spare:
        if (sd.flags & SD_NUMA) {
            // NUMA balancing preference (numa_preferred_nid -1 for unscanned tasks).
            const int thisNode = c.st.topo->cpu(this_cpu).node;
            if (p.numa_preferred_nid >= 0) {
                if (thisNode == p.numa_preferred_nid) return result(-1, "this node is p's preferred node");
                if (c.st.topo->cpu(sd.groups[idlest].first()).node == p.numa_preferred_nid) return result(idlest, "idlest is on p's preferred node");
            }
            int imb_numa_nr = std::min((sd.groups[local] & *p.cpus_ptr).weight(), sd.imb_numa_nr);
            int imbalance = std::abs(int(local_sgs.idle_cpus) - int(idlest_sgs.idle_cpus));
            // adjust_numa_imbalance(imbalance, local.sum_nr_running + 1, imb_numa_nr)
            if (int(local_sgs.sum_nr_running) + 1 <= imb_numa_nr && imbalance <= 2)
                return result(-1, "NUMA imbalance allowed (adjust_numa_imbalance)");
        }
        if (local_sgs.idle_cpus >= idlest_sgs.idle_cpus) return result(-1, "local has at least as many idle CPUs");
        break;
    }
    return result(idlest, "idler than local");
}
}  // namespace sched
