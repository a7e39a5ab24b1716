// SPDX-License-Identifier: GPL-2.0-or-later
// bench_support.h: what every schedlab-calibrate microbenchmark stands on: the clock, busy-waiting,
// CPU pinning, a thread's scheduler state from /proc, pipes, and the run series (calibrated
// iteration counts, R timed runs).
#pragma once

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sched::calibrate {

/// A system call or set-up step failed; what() names it and the system's reason.
struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Throws BenchError "WHAT: strerror(errno)".
[[noreturn]] void throwErrno(const std::string& what);

/// CLOCK_MONOTONIC in ns (clock_gettime through the vDSO).
inline std::int64_t nowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Busy-waits (no system call) for `ns` nanoseconds of CLOCK_MONOTONIC.
void spinFor(std::int64_t ns);

/// One pause instruction (or nothing): the body of a spin-wait loop.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/// Median cost in ns of one clock_gettime(CLOCK_MONOTONIC) call, measured now (back-to-back calls).
double clockReadCostNs();

/// Pins the calling thread to `cpu` and checks that it now runs there. Throws BenchError.
void pinThisThread(int cpu);

/// Makes the calling thread SCHED_BATCH (priority 0). Its wakeups take the same path as SCHED_NORMAL's
/// except that, woken, it never preempts the running task (check_preempt_wakeup_fair() returns early
/// for a wakee that is not SCHED_NORMAL): its waker runs on until it blocks or its slice ends. Throws
/// BenchError.
void setThisThreadBatch();

/// The calling thread's CPU affinity, restored when this object goes out of scope.
class ScopedAffinity {
public:
    ScopedAffinity();
    ~ScopedAffinity();
    ScopedAffinity(const ScopedAffinity&) = delete;
    ScopedAffinity& operator=(const ScopedAffinity&) = delete;

private:
    std::vector<unsigned char> m_mask;  ///< the saved cpu_set_t, as bytes
};

/// The CPUs in the calling thread's affinity mask, ascending.
std::vector<int> allowedCpus();

/// The calling thread's kernel thread id.
pid_t thisTid();

/// A thread's scheduler state letter from /proc/self/task/TID/stat ('R', 'S', 'D', ...). The file
/// stays open: state() costs one pread(), never done inside a timed region.
class ThreadState {
public:
    explicit ThreadState(pid_t tid);
    ~ThreadState();
    ThreadState(const ThreadState&) = delete;
    ThreadState& operator=(const ThreadState&) = delete;
    /// The state letter now; '?' when the thread is gone.
    char state() const;

private:
    int m_fd = -1;
};

/// A pipe whose two ends are closed on destruction.
class Pipe {
public:
    /// `flags`: pipe2() flags (O_NONBLOCK, O_CLOEXEC).
    explicit Pipe(int flags = 0);
    ~Pipe();
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    int readFd() const { return m_fd[0]; }
    int writeFd() const { return m_fd[1]; }
    /// Closes the write end now (the reader then sees end of file).
    void closeWrite();
    /// Closes the read end now.
    void closeRead();

private:
    int m_fd[2] = {-1, -1};
};

/// Writes exactly `n` bytes (restarting after EINTR). Throws BenchError on an error or a short write.
void writeExact(int fd, const void* buf, std::size_t n, const char* what);
/// Reads exactly `n` bytes; false at end of file before the first byte. Throws BenchError otherwise.
bool readExact(int fd, void* buf, std::size_t n, const char* what);

/// A TCP connection over 127.0.0.1 (blocking sockets, TCP_NODELAY on both ends), its two ends
/// closed on destruction.
class LoopbackTcp {
public:
    /// Listens on an ephemeral port, connects and accepts. Throws BenchError.
    LoopbackTcp();
    ~LoopbackTcp();
    LoopbackTcp(const LoopbackTcp&) = delete;
    LoopbackTcp& operator=(const LoopbackTcp&) = delete;
    int clientFd() const { return m_client; }
    int serverFd() const { return m_server; }

private:
    int m_client = -1, m_server = -1;
};

/// send() of exactly `n` bytes (MSG_NOSIGNAL, restarting after EINTR). Throws BenchError on an error
/// or a short send.
void sendExact(int fd, const void* buf, std::size_t n, const char* what);
/// recv() of exactly `n` bytes; false at end of stream before the first byte. Throws BenchError otherwise.
bool recvExact(int fd, void* buf, std::size_t n, const char* what);

/// Time the given CPUs spent since boot, per /proc/stat.
struct CpuTimes {
    double busySeconds = 0;   ///< user + nice + system + irq + softirq
    double stealSeconds = 0;  ///< time the hypervisor ran something else while the vCPU wanted to run
};

/// /proc/stat's times of `cpus`, summed (zeros when unreadable).
CpuTimes cpuTimes(const std::vector<int>& cpus);

/// CPU seconds used so far by this process (every thread) and its reaped children.
double ownCpuSeconds();

/// How long runs last and how many there are.
struct SeriesPlan {
    int runs = 15;                    ///< R: timed runs per figure
    std::int64_t targetRunNs = 30e6;  ///< wall time one run should take (iterations are calibrated to it)
    std::uint64_t minIterations = 16;
};

/// One run with `iterations` iterations; returns ns per operation, one value per figure measured.
using RunFn = std::function<std::vector<double>(std::uint64_t iterations)>;

/// The timed runs of one microbenchmark.
struct Series {
    std::vector<std::vector<double>> perFigure;  ///< [figure][run]: ns per operation
    std::uint64_t iterations = 0;                ///< iterations in each timed run
};

/// Calibrates the iteration count on two untimed warm-up runs so that one run lasts about
/// plan.targetRunNs, calls `beforeTimedRuns` (may be empty: resets counters kept across runs), then
/// makes plan.runs timed runs. Checks for an interruption before each run (throws Interrupted).
Series runSeries(const SeriesPlan& plan, const RunFn& run, const std::function<void()>& beforeTimedRuns = {});

}  // namespace sched::calibrate
