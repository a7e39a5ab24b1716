// SPDX-License-Identifier: GPL-2.0-or-later
// trace_instance.h: the private tracefs instance every trace-derived figure records in (never the
// top-level buffer, never a sysctl), removed on every exit path, and the event parser for its ring
// buffer.
#pragma once

#include <event-parse.h>

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct tracefs_instance;

namespace sched::calibrate {

/// Why a trace-derived figure cannot be measured; becomes the figure's "reason".
struct TraceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// The name of this process's trace instance, "schedlab-calibrate-PID".
std::string instanceName();

/// The tracing directory, once it is known that instances can be created in it (libtracefs finds
/// tracefs or mounts it at /sys/kernel/tracing; root only). Instances named schedlab-calibrate-PID
/// whose process is gone (killed by SIGKILL) are removed first; `staleRemoved` is their count.
/// Throws TraceError.
std::string openTracingDir(int& staleRemoved);

/// Frees a tep_handle.
struct TepDeleter {
    void operator()(tep_handle* t) const { tep_free(t); }
};
/// An owned event parser.
using TepHandle = std::unique_ptr<tep_handle, TepDeleter>;

/// A record callback of iterate(): non-zero stops the iteration.
using RecordCallback = int (*)(tep_event* event, tep_record* record, int cpu, void* context);

/// A private instance named `name`. Created with tracing off and registered with the interrupt
/// watcher (its last-resort removal); the destructor turns tracing off and removes the directory,
/// also when unwinding from an exception or an interruption.
class TraceInstance {
public:
    /// Throws TraceError when the instance cannot be created.
    explicit TraceInstance(const std::string& name);
    ~TraceInstance();
    TraceInstance(const TraceInstance&) = delete;
    TraceInstance& operator=(const TraceInstance&) = delete;

    const std::string& dir() const { return m_dir; }

    /// Sets trace_clock to mono (one clock for all CPUs' buffers: a pair's two events may come from
    /// two CPUs) and returns the clock in use ("local" when it cannot be read back).
    std::string useMonoClock();
    /// Sizes each CPU's buffer (1 GiB over the CPUs, within 1-16 MiB) and returns the KiB per CPU.
    /// Throws TraceError.
    std::size_t sizeBuffers();
    /// Enables sched:EVENT. Throws TraceError.
    void enableSchedEvent(const char* event);
    /// Disables sched:EVENT (its trace point then costs nothing on this instance's behalf). Throws
    /// TraceError.
    void disableSchedEvent(const char* event);
    /// Records only the events of `pids` (set_event_pid; the kernel keeps an event when the current
    /// task, or a wakeup's wakee, or a switch's next task is listed) and, with `followForks`, of the
    /// tasks they fork from now on (options/event-fork). false when the instance refused: every
    /// task's events are then recorded.
    bool restrictToPids(const std::vector<pid_t>& pids, bool followForks);
    /// Empties set_event_pid: the instance's pid-filter probes on sched_switch and the wakeups are
    /// unregistered. Slow when a list was set (the kernel waits for an RCU grace period, tens of ms).
    void clearPidFilter();
    /// Empties the ring buffer and turns tracing on. Throws TraceError.
    void start();
    /// Turns tracing off.
    void stop();
    /// The event parser for sched:EVENT of each of `events`, from the instance's formats (and the
    /// tracing directory's page header). Throws TraceError.
    TepHandle parser(const std::string& tracingDir, const std::vector<const char*>& events) const;
    /// Calls `callback` for every record in the ring buffer. Throws TraceError.
    void iterate(tep_handle* tep, RecordCallback callback, void* context);
    /// The ring buffer's "overrun:" counts (events lost to a full buffer), summed over the CPUs.
    long long overruns() const;

private:
    std::string m_name, m_dir;
    tracefs_instance* m_instance = nullptr;
};

}  // namespace sched::calibrate
