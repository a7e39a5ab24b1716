// SPDX-License-Identifier: GPL-2.0-or-later
// wakeup_window.h: the window of each wakeup in a trace, sched_waking to sched_wakeup (a kernel's
// recording or schedlab's export alike): how long the chosen CPU saw nothing of the wakee.
#pragma once

#include "trace/trace.h"
#include "util/histogram.h"

#include <cstdint>
#include <limits>
#include <string>

namespace sched {

/// sched_waking -> sched_wakeup of the same pid, split by where the wakee was activated.
struct WakeupWindows {
    LatencyHistogram same_cpu;   ///< activated on the CPU the waking was recorded on (the waker's)
    LatencyHistogram other_cpu;  ///< activated on another CPU (a remote enqueue or the wakelist's IPI)
    std::uint64_t unpaired = 0;  ///< wakings with no sched_wakeup before the pid's next waking or the end

    /// Two lines of p10/p50/p90/p99 per kind (usec), indented by `indent`.
    std::string text(const std::string& indent = "  ") const;
};

/// The windows of the wakings in [from, to] (the trace's own clock).
WakeupWindows wakeupWindows(const Trace& t, std::int64_t from = std::numeric_limits<std::int64_t>::min(),
                            std::int64_t to = std::numeric_limits<std::int64_t>::max());

}  // namespace sched
