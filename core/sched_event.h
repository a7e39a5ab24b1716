// sched_event.h: the kernel tracepoints the simulator emits (DESIGN.md, "The event
// vocabulary"), with the kernel's field meanings, so a simulated run and a recorded
// trace can be shown, measured and exported by the same code.
#pragma once

#include <cstdint>

namespace sched {

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
const char* toString(EvKind k);

inline constexpr std::uint32_t PWR_EVENT_EXIT = 4294967295u;

struct SchedEvent {
    std::int64_t time = 0;   ///< ns
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

}  // namespace sched
