// SPDX-License-Identifier: GPL-2.0-or-later
// interrupt.h: SIGINT, SIGTERM and SIGHUP in schedlab-calibrate. The handler only records the signal;
// a watcher thread then kills the running workload's process group at once, and the main thread,
// which polls the flag between runs, unwinds (removing the trace instance) and dies by the signal.
// Should the main thread not finish within 10 s (or a second signal come), the watcher removes the
// registered trace instance directory itself and ends the process.
#pragma once

#include <sys/types.h>

#include <exception>
#include <string>

namespace sched::calibrate {

/// Thrown by throwIfInterrupted() after SIGINT, SIGTERM or SIGHUP.
struct Interrupted : std::exception {
    explicit Interrupted(int sig) : signal(sig) {}
    const char* what() const noexcept override { return "interrupted"; }
    int signal;  ///< the signal received
};

/// Installs the handlers (SA_RESTART) and starts the watcher thread. Call once, early in main().
void installInterruptHandling();
/// Stops and joins the watcher thread (a normal exit).
void stopInterruptHandling();

/// The signal received, 0 when none.
int pendingSignal();
/// Throws Interrupted when a signal was received.
void throwIfInterrupted();

/// The process group of the workload being recorded (0: none). The watcher sends it SIGKILL on a signal.
void setWorkloadGroup(pid_t pgid);
/// The trace instance directory to remove as a last resort (empty: none).
void setInstanceDir(const std::string& dir);

/// Prints nothing; restores the default action of `sig` and raises it: the process ends as if
/// killed by it (the shell reports 128 + sig: 130 for SIGINT, 143 for SIGTERM).
[[noreturn]] void dieBySignal(int sig);

}  // namespace sched::calibrate
