// SPDX-License-Identifier: GPL-2.0-or-later
// measures.h: schedlab-calibrate's microbenchmarks, each on pinned threads: pipe writes and reads
// with and without a wakeup, pipe ping-pong round trips and the context switch derived from them,
// a cache-line ping-pong, loopback TCP round trips and one-way calls, and a futex wakeup's latency
// and cost.
#pragma once

#include "bench_support.h"
#include "figure.h"

#include <string>
#include <vector>

namespace sched::calibrate {

/// Where and how long to measure.
struct MeasureContext {
    int cpuA = 0;              ///< "same CPU" figures run here; the waker / first thread of cross-CPU ones
    int cpuB = -1;             ///< the other CPU of cross-CPU figures; -1 when there is none
    std::string noCpuBReason;  ///< why cpuB is -1 (the reason cross-CPU figures are unavailable)
    SeriesPlan plan;
    double clockCostNs = 0;  ///< one clock_gettime(CLOCK_MONOTONIC), as measured at start-up
};

/// pipe_write_nowake and pipe_read_nowake (one thread, batches of writes then reads).
std::vector<Figure> measurePipeNowake(const MeasureContext& c);

/// pipe_write_wake_local (`remote` false: the blocked reader on cpuA too) or pipe_write_wake_remote.
Figure measurePipeWriteWake(const MeasureContext& c, bool remote);

/// pipe_read_remote_data: a read() finding a message written just before on the other CPU.
Figure measurePipeReadRemoteData(const MeasureContext& c);

/// pipe_roundtrip_same_cpu_thread (`process` false) or pipe_roundtrip_same_cpu_process.
Figure measurePipeRoundtrip(const MeasureContext& c, bool process);

/// ctx_switch_thread / ctx_switch_process from a round trip figure and the two pipe-call figures:
/// (round trip - 2 x (write with wakeup + read without)) / 2 per round-trip run, not clamped; unavailable,
/// with the three medians, when the median of that is not positive.
Figure deriveCtxSwitch(const Figure& roundtrip, const Figure& writeWakeLocal, const Figure& readNowake, bool process);

/// cacheline_transfer: one-way time of a 64-byte line bounced between cpuA and cpuB.
Figure measureCachelineTransfer(const MeasureContext& c);

/// loopback_tcp_rtt_same_cpu (`cross` false) or loopback_tcp_rtt_cross_cpu.
Figure measureLoopbackTcp(const MeasureContext& c, bool cross);

/// socket_send_wake_remote: a send() of 100 bytes over loopback TCP from cpuA whose receive (softirq,
/// in the send) wakes the server asleep in recv() on cpuB.
Figure measureSocketSendWake(const MeasureContext& c);

/// socket_recv_data: the server's recv() on cpuB of a 100-byte request already queued by the client
/// on cpuA (no sleep); the server replies after each, as in a request/reply exchange.
Figure measureSocketRecvData(const MeasureContext& c);

/// wake_to_run_remote and futex_wake_remote (FUTEX_WAKE from cpuA of a waiter asleep on cpuB).
std::vector<Figure> measureFutexWake(const MeasureContext& c);

/// futex_wake_nowaiter: FUTEX_WAKE_PRIVATE on a word nobody waits on, one thread on cpuA.
Figure measureFutexWakeNowaiter(const MeasureContext& c);

}  // namespace sched::calibrate
