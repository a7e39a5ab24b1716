// SPDX-License-Identifier: GPL-2.0-or-later
// sched_event.h: the kernel tracepoints the simulator emits (DESIGN.md, "The event
// vocabulary"), with the kernel's field meanings, so a simulated run and a recorded
// trace can be shown, measured and exported by the same code.
#pragma once

#include "util/cpumask.h"

#include <cstdint>
#include <string_view>

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
    // timer:hrtimer_* (include/trace/events/timer.h). pid = the timer (schedlab: the sleeper's
    // pid, one sleep timer per task; an imported trace: the index of its pointer in
    // Trace::hrtimer_ptr); the other fields through hrtimerExpires() and the accessors below.
    hrtimer_start,         ///< cpu = the arming CPU (the event does not say which base took it); expires, slack, mode, function
    hrtimer_cancel,        ///< removed before expiry, or by __run_hrtimer() just before hrtimer_expire_entry
    hrtimer_expire_entry,  ///< cpu = the CPU whose interrupt runs it; now (the base's time), function
    hrtimer_expire_exit,   ///< its callback returned
    /// schedlab's own mark (its exports with the wake inputs, `tracing_mark_write:
    /// schedlab_ttwu_queue`; no kernel tracepoint): try_to_wake_up()'s ttwu_queue() put pid on
    /// target_cpu's wakelist, ttwu_pending from here on (a wakeup over time); cpu = the waker's.
    schedlab_ttwu_queue,
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
    case EvKind::hrtimer_start: return "hrtimer_start";
    case EvKind::hrtimer_cancel: return "hrtimer_cancel";
    case EvKind::hrtimer_expire_entry: return "hrtimer_expire_entry";
    case EvKind::hrtimer_expire_exit: return "hrtimer_expire_exit";
    case EvKind::schedlab_ttwu_queue: return "schedlab_ttwu_queue";
    }
    return "?";
}

inline constexpr std::uint32_t PWR_EVENT_EXIT = 4294967295u;
/// One of the timer:hrtimer_* kinds (their pid is a timer, not a task).
inline constexpr bool isHrtimerEvent(EvKind k) { return k >= EvKind::hrtimer_start && k <= EvKind::hrtimer_expire_exit; }

/// enum hrtimer_mode (include/linux/hrtimer.h): the mode bits hrtimer_start prints.
enum HrtimerMode : std::uint8_t {
    HRTIMER_MODE_ABS = 0x00,
    HRTIMER_MODE_REL = 0x01,
    HRTIMER_MODE_PINNED = 0x02,
    HRTIMER_MODE_SOFT = 0x04,
    HRTIMER_MODE_HARD = 0x08
};
/// 6.1's decode_hrtimer_mode(): the eight modes without HARD (the HARD ones were added to it in
/// 6.4; 6.1 prints them, as any value it does not name, as __print_symbolic()'s "0x%lx").
inline constexpr const char* kHrtimerModeNames[8] = {"ABS",      "REL",      "ABS|PINNED",      "REL|PINNED",
                                                     "ABS|SOFT", "REL|SOFT", "ABS|PINNED|SOFT", "REL|PINNED|SOFT"};
/// decode_hrtimer_mode(): "ABS", "REL|PINNED", ...; null for a value 6.1 does not name.
inline const char* hrtimerModeName(std::uint8_t mode) { return mode < 8 ? kHrtimerModeNames[mode] : nullptr; }
/// The mode of such a name; false for a name decode_hrtimer_mode() does not print.
inline bool hrtimerModeOf(std::string_view name, std::uint8_t& mode) {
    for (std::uint8_t m = 0; m < 8; ++m)
        if (name == kHrtimerModeNames[m]) return mode = m, true;
    if (name.size() != 3 || !name.starts_with("0x")) return false;  // "0x8".."0xf": the HARD modes as 6.1 prints them
    const char c = name[2];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 8) return false;
    mode = std::uint8_t(v);
    return true;
}

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

// The hrtimer events keep their 64-bit time (hrtimer_start's expires, hrtimer_expire_entry's
// now) in pid2:state, hrtimer_start's slack (expires - softexpires, ns) in target_cpu:orig_cpu,
// its mode in `cause`, and the callback (an index in Trace::hrtimer_functions; 0 =
// hrtimer_wakeup) in `prev_state`: a SchedEvent stays 32 bytes.
inline std::int64_t hrtimerTime(const SchedEvent& e) {
    const std::uint64_t v = (std::uint64_t(std::uint32_t(e.pid2)) << 32) | e.state;
    return std::int64_t(v);
}
inline void setHrtimerTime(SchedEvent& e, std::int64_t t) {
    e.pid2 = std::int32_t(std::uint32_t(std::uint64_t(t) >> 32));
    e.state = std::uint32_t(std::uint64_t(t));
}
inline std::uint32_t hrtimerSlack(const SchedEvent& e) { return (std::uint32_t(std::uint16_t(e.target_cpu)) << 16) | std::uint16_t(e.orig_cpu); }
inline void setHrtimerSlack(SchedEvent& e, std::uint32_t slack) {
    e.target_cpu = std::int16_t(std::uint16_t(slack >> 16));
    e.orig_cpu = std::int16_t(std::uint16_t(slack));
}
inline std::uint8_t hrtimerFunction(const SchedEvent& e) { return std::uint8_t(e.prev_state); }
inline constexpr std::uint8_t kHrtimerWakeup = 0;
/// hrtimer_cancel's `cause`: written by __run_hrtimer() in the timer's interrupt (1), not by a task (0).
inline constexpr std::uint8_t kHrtimerCancelInIrq = 1;  ///< the function index of hrtimer_wakeup (the sleepers')

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
