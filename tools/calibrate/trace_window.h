// SPDX-License-Identifier: GPL-2.0-or-later
// trace_window.h: the kernel's sched_waking -> sched_wakeup window, recorded with libtracefs in a
// private tracefs instance (never the top-level buffer, never a sysctl) while a workload runs.
#pragma once

#include "figure.h"

#include <string>
#include <vector>

namespace sched::calibrate {

/// The workload recorded by default: the project's scenario i7-4790-hackbench-small (rt-tests' hackbench).
inline constexpr const char* kDefaultWindowCommand = "hackbench -g 2 -f 10 --threads --pipe -l 200 -s 100";

/// What to record.
struct WindowPlan {
    std::string command = kDefaultWindowCommand;  ///< run by /bin/sh -c, unpinned, in its own process group
    bool isDefault = true;                        ///< the default hackbench command (checked for in PATH first)
    int recordings = 1;                           ///< recordings made (R for the default command), their pairs pooled
};

/// ttwu_window_same_cpu and ttwu_window_other_cpu: distributions over every waking/wakeup pair of the
/// recordings. Both unavailable, with the reason, when not root, without tracefs, without hackbench,
/// or when the workload fails. The instance is removed on every path (an exception, Interrupted).
std::vector<Figure> measureTtwuWindow(const WindowPlan& plan);

/// The message of the not-root case (the sigterm test expects it).
inline constexpr const char* kNotRootReason =
    "not root: recording sched_waking/sched_wakeup needs a tracefs instance, which only root can create";

}  // namespace sched::calibrate
