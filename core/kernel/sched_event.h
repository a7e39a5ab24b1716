// SPDX-License-Identifier: GPL-2.0-or-later
// sched_event.h: the kernel tracepoints the simulator emits (DESIGN.md, "The event
// vocabulary"), with the kernel's field meanings, so a simulated run and a recorded
// trace can be shown, measured and exported by the same code.
#pragma once

#include "util/cpumask.h"

#include <cstdint>

namespace sched {

/// Which path moved a task (the cause a sched_migrate_task event carries in schedlab's traces).
/// Why a task moved. `proxy`: proxy execution moved a blocked donor to its lock owner's CPU
/// (proxy_migrate_task()) or a woken donor back to a CPU it may run on (proxy_return_migration()).
enum class MigrationCause : std::uint8_t { wakeup, periodic, newidle, nohz, active, fork, proxy, count_ };
inline constexpr int kMigrationCauses = int(MigrationCause::count_);
inline const char* toString(MigrationCause c) {
    switch (c) {
    case MigrationCause::wakeup: return "wakeup";
    case MigrationCause::periodic: return "periodic";
    case MigrationCause::newidle: return "newidle";
    case MigrationCause::nohz: return "nohz";
    case MigrationCause::active: return "active";
    case MigrationCause::fork: return "fork";
    case MigrationCause::proxy: return "proxy";
    case MigrationCause::count_: break;
    }
    return "?";
}

enum class EvKind : std::uint8_t {
    sched_waking,        ///< pid, target_cpu = task_cpu(p) before selection; cpu = the waker's
    sched_wakeup,        ///< pid, target_cpu = where it was activated; cpu = where ttwu ran the activation
    sched_wakeup_new,    ///< pid, target_cpu
    sched_switch,        ///< pid = prev_pid, pid2 = next_pid (0 = swapper), prev_state
    sched_migrate_task,  ///< pid, orig_cpu, target_cpu = dest_cpu, cause (schedlab)
    cpu_idle,            ///< state (cpuidle state index; 4294967295 = leaving idle), cpu
    sched_process_fork,  ///< pid = parent, pid2 = child
    sched_process_exit,  ///< pid
};
inline const char* toString(EvKind k) {
    switch (k) {
    case EvKind::sched_waking: return "sched_waking";
    case EvKind::sched_wakeup: return "sched_wakeup";
    case EvKind::sched_wakeup_new: return "sched_wakeup_new";
    case EvKind::sched_switch: return "sched_switch";
    case EvKind::sched_migrate_task: return "sched_migrate_task";
    case EvKind::cpu_idle: return "cpu_idle";
    case EvKind::sched_process_fork: return "sched_process_fork";
    case EvKind::sched_process_exit: return "sched_process_exit";
    }
    return "?";
}

inline constexpr std::uint32_t PWR_EVENT_EXIT = 4294967295u;

struct SchedEvent {
    std::int64_t time = 0;  ///< ns
    EvKind kind = EvKind::sched_switch;
    char prev_state = 'R';   ///< sched_switch: R (preempted), S (slept), X (exited)
    std::uint8_t cause = 0;  ///< sched_migrate_task: MigrationCause
    std::int16_t cpu = 0;    ///< the CPU it happened on
    std::int16_t target_cpu = -1;
    std::int16_t orig_cpu = -1;
    std::int32_t pid = 0;
    std::int32_t pid2 = 0;
    std::uint32_t state = 0;  ///< cpu_idle
};

/// What a wakeup decision reads that no scheduler tracepoint carries: the PELT loads
/// wake_affine_weight() compares, WF_SYNC, the SIS_UTIL budget and has_idle_cores of the
/// LLCs of this_cpu and prev, and jiffies (record_wakee's decay). schedlab's ftrace export
/// writes them as a `tracing_mark_write: schedlab_wake ...` line right after the
/// sched_waking (whose context column says in_task()), so that `agree` on a simulated run can take them instead of
/// reconstructing them (docs/replay.md: Exported inputs) and say how far its reconstruction was off.
struct WakeInputs {
    std::int64_t time = 0;
    std::int16_t cpu = 0;  ///< this_cpu (the waking's CPU)
    std::int16_t prev = -1;
    std::int32_t pid = 0;
    std::int64_t this_load = 0, prev_load = 0;  ///< cpu_load() of this_cpu and prev
    std::int64_t p_load = 0, cur_load = 0;      ///< task_h_load(p), task_h_load(current)
    bool sync = false;
    bool in_task = true;                           ///< in_task() of the waker (false: from a timer / IRQ)
    std::int32_t scan_this = -1, scan_prev = -1;   ///< nr_idle_scan of the LLCs of this_cpu / prev (-1: none)
    std::int8_t cores_this = -1, cores_prev = -1;  ///< has_idle_cores of those LLCs (-1: none)
    std::int64_t jiffies = 0;
    /// p->cpus_ptr when p may not run on every CPU (a pinned workload): schedlab's exports write
    /// it (`allowed=`); the readers keep it per task in Trace::affinity, never here (null).
    const CpuMask* allowed = nullptr;
};

}  // namespace sched
