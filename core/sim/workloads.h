// SPDX-License-Identifier: GPL-2.0-or-later
// workloads.h: the benchmarks of the LKML threads, as task programs for the
// engine (docs/workloads.md: Workloads): hackbench / perf bench sched messaging,
// schbench classic and 2023, stress-ng --cpu N --cpu-load P, cyclictest.
#pragma once

#include "sim/engine.h"
#include "sim/kmutex.h"
#include "util/state_archive.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace sched {

struct HackbenchParams {
    int groups = 10;           ///< -g
    int fds = 20;              ///< -f
    int loops = 100;           ///< -l (0: endless, the senders write until the run is stopped)
    int datasize = 100;        ///< -s
    bool threads = false;      ///< -T (else processes)
    bool pipe = false;         ///< -p (else AF_UNIX stream sockets)
    bool perf = false;         ///< print as `perf bench sched messaging`
    std::int64_t hot_set = 0;  ///< bytes; 0 = cost model default
    std::string cpus;          ///< `taskset -c` cpulist its tasks may run on; "" = every CPU
};

struct SchbenchParams {
    bool v2023 = false;               ///< the 2023 request/RPS schbench (else classic)
    int message_threads = 2;          ///< -m
    int workers = 16;                 ///< -t, per message thread (2023: 0 = number of CPUs)
    double runtime_s = 30;            ///< -r (simulated seconds, after warmup; 0: endless)
    double warmup_s = 0;              ///< -w (stats reset after it)
    std::int64_t sleep_us = 30000;    ///< classic: message thread usleep; 2023: per-request usleep (-s)
    std::int64_t cputime_us = 30000;  ///< classic: worker think time (-c)
    int ops = 5;                      ///< 2023: -n
    std::int64_t op_ns = 600000;      ///< 2023: one matrix op over -F KB (calibrated: RPS ~305 per worker)
    std::int64_t footprint_kb = 256;  ///< 2023: -F (the hot set)
    bool cpu_lock = true;             ///< 2023: the per-CPU lock around the matrix work (false = -L)
    std::string cpus;                 ///< `taskset -c` cpulist its tasks may run on; "" = every CPU
};

struct StressParams {
    int workers = 0;            ///< --cpu N (0 = number of CPUs)
    int load = 50;              ///< --cpu-load P (1..100)
    std::int64_t slice_ms = 0;  ///< --cpu-load-slice; 0 = random busy period up to 500 ms
    std::string cpus;           ///< `taskset -c` cpulist its tasks may run on; "" = every CPU
};

/// tbench/netperf-RR-like buddy pairs (docs/workloads.md: Workloads): each client sends a request to its
/// own server over loopback (a sync wakeup) and blocks for the reply; pairs never interact.
/// will-it-scale's context_switch1 is the same pattern over two pipes (`context_switch1`).
struct PingPongParams {
    int pairs = 1;         ///< tbench clients / netperf instances / will-it-scale instances
    double runtime_s = 5;  ///< measured, after warmup (0: endless)
    double warmup_s = 0.1;
    /// Client and server CPU per transaction (syscalls, protocol), estimates; -1: the cost
    /// model's (context_switch1: pipe_write + pipe_read; else 4000 ns).
    std::int64_t client_ns = -1;
    std::int64_t server_ns = -1;
    std::int64_t bytes = 4096;     ///< payload per transaction (for MB/sec)
    bool netperf = false;          ///< print as netperf (transactions/s) instead of tbench (MB/sec)
    bool udp = false;              ///< netperf -t UDP_RR instead of TCP_RR (the same wakeup pattern)
    bool context_switch1 = false;  ///< will-it-scale context_switch1: one byte over a pipe pair, 2 iterations per round trip
    bool threads = false;          ///< context_switch1_threads (the child a thread, same mm) instead of _processes
    std::string cpus;              ///< `taskset -c` cpulist its tasks may run on; "" = every CPU
};

/// locktorture's mutex_lock writers (kernel/locking/locktorture.c): each loops mutex_lock(), a
/// critical section of hold_ns, mutex_unlock(), a pause of pause_ns, on one struct mutex. The
/// module's writers hold the lock for torture_mutex_delay() (mostly nothing) and pause for
/// stutter_wait() (mostly nothing): hold_ns and pause_ns are this model's, not the module's.
struct LockTortureParams {
    int writers = 0;               ///< nwriters_stress (0 = 2 x the number of CPUs, the module's default)
    double runtime_s = 1;          ///< simulated seconds (0: endless)
    std::int64_t hold_ns = 1000;   ///< CPU work inside the lock
    std::int64_t pause_ns = 2000;  ///< CPU work between an unlock and the next lock
    std::string cpus;              ///< `taskset -c` cpulist its tasks may run on; "" = every CPU
};

/// rt-tests' cyclictest, clock_nanosleep(TIMER_ABSTIME) mode, SCHED_OTHER at priority 0 (no -p):
/// thread i wakes every interval_us + i * distance_us and measures how late it woke.
struct CyclictestParams {
    int threads = 1;                  ///< -t
    std::int64_t interval_us = 1000;  ///< -i
    std::int64_t distance_us = 500;   ///< -d
    double duration_s = 1;            ///< -D (0: until -l cycles)
    std::int64_t loops = 0;           ///< -l (0: until -D; both 0: endless)
    bool mlock = true;                ///< -m (mlockall: nothing the scheduler sees)
    double delay_s = 0;               ///< the command starts this late (a shell's sleep before it)
    /// Thread i runs on the i-th CPU it may use (modulo their number): what the 6.1 recording's
    /// cyclictest (rt-tests of Debian 12, no -a) did, its threads moved by the migration
    /// stopper right after they started. false: the threads may run anywhere.
    bool pin_threads = true;
    std::int64_t loop_ns = 1500;  ///< CPU per cycle: clock_nanosleep() entry and exit, clock_gettime(), the statistics (estimate)
    std::string cpus;             ///< `taskset -c` cpulist its tasks may run on; "" = every CPU
};

/// The clock of a workload that runs for a set time once its tasks exist (tbench, schbench,
/// locktorture): it starts when the main task has created them, measures after `warm`, and
/// finishes at the first step at or past `end` (warm-up plus the measured time) from the start.
/// An endless run (`endless`: the workload's runtime 0) never finishes by itself: the run's
/// stop (stop.sim_time_s, the CLI's --until, the window's Stop) ends it.
struct TimedRun {
    bool started = false, finished = false, endless = false;
    std::int64_t startAt = 0, warm = 0, end = 0, stopAt = 0;
    void state(StateArchive& ar) { ar(started, finished, endless, startAt, warm, end, stopAt); }
    void start(std::int64_t now) {
        if (!started) {
            started = true;
            startAt = now;
        }
    }
    /// At every step: once the time is up, the workload is finished (Engine::workloadFinished()).
    void check(Engine& e) {
        if (started && !finished && !endless && e.now() >= startAt + end) {
            finished = true;
            stopAt = e.now();
            e.workloadFinished();
        }
    }
    double progress(const Engine& e) const {
        if (endless) return -1;  // unknown: the run's stop decides
        return finished ? 1.0 : started ? std::min(1.0, double(e.now() - startAt) / double(std::max<std::int64_t>(1, end))) : 0.0;
    }
    bool measuring(const Engine& e) const { return started && e.now() >= startAt + warm; }
    /// The measured time so far, or up to the stop.
    double measuredSeconds(const Engine& e) const { return double((stopAt ? stopAt : e.now()) - startAt - warm) / 1e9; }
};

std::unique_ptr<Workload> makeHackbench(const HackbenchParams& p, std::uint16_t index);
/// Coalescing's pipe bookkeeping: a hackbench with more pipes than this (default 4096)
/// frees a drained pipe's buffer and applies planned steps before planning more (bounded
/// memory for 100 000 pipes); a smaller one keeps its buffers (faster). Same results.
/// The setter is for tests (read when a workload starts).
int hackbenchLeanPipes();
void setHackbenchLeanPipes(int n);
std::unique_ptr<Workload> makeSchbench(const SchbenchParams& p, std::uint16_t index);
std::unique_ptr<Workload> makeStress(const StressParams& p, std::uint16_t index);
std::unique_ptr<Workload> makePingPong(const PingPongParams& p, std::uint16_t index);
std::unique_ptr<Workload> makeLockTorture(const LockTortureParams& p, std::uint16_t index);
std::unique_ptr<Workload> makeCyclictest(const CyclictestParams& p, std::uint16_t index);
/// A mutex's figures as a workload's counters (acquisitions, contended, spin and sleep time, handoffs).
void mutexCounters(const MutexStats& s, WorkloadReport& r);

}  // namespace sched
