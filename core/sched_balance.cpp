// sched_balance.cpp: see sched_balance.h.
#include "sched_balance.h"

#include "wakeup_path.h"

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

bool sg_lb_counts_idle(const MachineState& st, const Knobs& k, int cpu) {
    return st.rq[cpu].nr_running == 0 && idle_cpu(st, k, cpu);
}

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

bool can_migrate_hot(bool hot, int nr_balance_failed, int cache_nice_tries) {
    return !hot || nr_balance_failed > cache_nice_tries;
}

bool balance_updates_nr_idle_scan(const SchedDomains& sds, const Knobs& k, int cpu, const SchedDomain& sd, IdleType idle) {
    return k.SIS_UTIL && idle != IdleType::CPU_NEWLY_IDLE && sd.span_weight == sds.sd_llc_size(cpu);
}
}  // namespace sched
