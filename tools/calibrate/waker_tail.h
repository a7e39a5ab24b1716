// SPDX-License-Identifier: GPL-2.0-or-later
// waker_tail.h: the waker's tail (how long a task keeps running on its CPU after waking another,
// until it blocks itself) and the cross-CPU sched_waking -> sched_wakeup window, per kind of wakeup
// (pipe, loopback TCP, futex), from tracefs recordings of ping-pongs between two pinned threads: on
// two CPUs, and both on one CPU as SCHED_BATCH (a tail without the IPI to the wakee's CPU); and the
// cost of recording one of those events, which the same-CPU tails hold a few of.
#pragma once

#include "figure.h"

#include <string>
#include <vector>

namespace sched::calibrate {

/// The ping-pongs that can be recorded.
enum class PingPongKind { Pipe, Tcp, Futex };

/// The kind's name in the figure keys: "pipe", "tcp", "futex".
const char* kindName(PingPongKind kind);

/// What to record.
struct TailPlan {
    int cpuA = 0;                     ///< the first thread's CPU (it starts each exchange)
    int cpuB = -1;                    ///< the second thread's CPU; -1 when there is none
    std::string noCpuBReason;         ///< why cpuB is -1
    double seconds = 0.3;             ///< how long each ping-pong runs while recorded
    std::vector<PingPongKind> kinds;  ///< the ping-pongs to record on cpuA and cpuB, one recording each
    /// The ping-pongs to record with both threads on cpuA, SCHED_BATCH, one recording each.
    std::vector<PingPongKind> sameCpuKinds;
    /// Whether to measure trace_event_cost (on cpuA; a traced run lasts about `seconds`).
    bool eventCost = false;
    int eventCostRepetitions = 15;  ///< R: pairs of an untraced and a traced run
};

/// The figure of the recording's own cost.
inline constexpr const char* kTraceEventCost = "trace_event_cost";

/// For each kind of the plan, waker_tail_KIND and ttwu_window_KIND_cross; for each of its same-CPU
/// kinds, waker_tail_same_cpu_KIND: distributions over the pairs of one recording. With eventCost,
/// trace_event_cost: ns per recorded event, from R pairs of untraced and traced runs of the same-CPU
/// pipe ping-pong. Unavailable, with the reason, when not root, without tracefs, without a second
/// CPU (the two-CPU figures only), or when a ping-pong fails. The instance is removed on every path
/// (an exception, Interrupted).
std::vector<Figure> measureWakerTails(const TailPlan& plan);

/// The message of the not-root case.
inline constexpr const char* kTailNotRootReason =
    "not root: recording sched_waking/sched_wakeup/sched_switch needs a tracefs instance, which only root can create";

}  // namespace sched::calibrate
