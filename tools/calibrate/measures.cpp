// SPDX-License-Identifier: GPL-2.0-or-later
// measures.cpp: the microbenchmarks. Every thread pins itself first; the driving thread (the caller,
// pinned to cpuA for the duration, its affinity restored after) does all the timing except where a
// figure is the partner's own call (pipe_read_remote_data, socket_recv_data, wake_to_run_remote).
#include "measures.h"

#include "interrupt.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <functional>
#include <thread>

namespace sched::calibrate {

namespace {

constexpr std::size_t kMsgBytes = 100;
constexpr std::int64_t kReaderIdleNs = 20'000;  // the blocked reader's CPU is left idle this long before a wake
constexpr std::int64_t kWaiterIdleNs = 50'000;  // the same before a futex wake
constexpr std::int64_t kWaitLimitNs = 5'000'000'000;

// The note every method string ends with: what the clock is, and what pinning implies.
std::string clockNote(const MeasureContext& c) {
    return fmt::format("clock_gettime(CLOCK_MONOTONIC), {:.0f} ns per read", c.clockCostNs);
}

// A partner thread pinned to one CPU, running `body` after pinning. `stop` (run first by the
// destructor) must make `body` return; the destructor then joins.
class Partner {
public:
    Partner(int cpu, std::function<void()> body, std::function<void()> stop) : m_stop(std::move(stop)) {
        m_thread = std::thread([this, cpu, body = std::move(body)] {
            try {
                pinThisThread(cpu);
                m_tid.store(thisTid());
                m_status.store(1);
                body();
            } catch (const std::exception& e) {
                m_error = e.what();
                m_status.store(-1);
            }
        });
    }
    ~Partner() {
        if (m_stop) m_stop();
        m_thread.join();
    }
    Partner(const Partner&) = delete;
    Partner& operator=(const Partner&) = delete;

    /// Waits until the partner has pinned itself (throws its error if it could not).
    void waitReady(bool sameCpu) {
        const std::int64_t deadline = nowNs() + kWaitLimitNs;
        while (m_status.load() == 0) {
            if (nowNs() > deadline) throw BenchError("the partner thread did not start");
            if (sameCpu) sched_yield();
        }
        check();
    }
    /// Throws BenchError when the partner failed.
    void check() const {
        if (m_status.load() < 0) throw BenchError("partner thread: " + m_error);
    }
    pid_t tid() const { return m_tid.load(); }

private:
    std::function<void()> m_stop;
    std::atomic<int> m_status{0};  // 0 starting, 1 running, -1 failed
    std::atomic<pid_t> m_tid{0};
    std::string m_error;
    std::thread m_thread;
};

// Spins (or yields, when the partner shares our CPU) until `done()`, checking the partner now and then.
template <class Pred>
void waitUntil(Pred done, bool yield, const Partner& partner, const char* what) {
    const std::int64_t deadline = nowNs() + kWaitLimitNs;
    for (unsigned k = 1; !done(); ++k) {
        if (yield) {
            sched_yield();
        } else {
            cpuRelax();
        }
        if (yield || (k & 1023) == 0) {
            partner.check();
            if (nowNs() > deadline) throw BenchError(std::string("timed out waiting for ") + what);
        }
    }
}

// Waits until the thread is asleep ('S': its only blocking point is the call under test).
void waitAsleep(const ThreadState& st, bool yield, const Partner& partner, const char* what) {
    waitUntil([&] { return st.state() == 'S'; }, yield, partner, what);
}

long involuntarySwitches() {
    rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nivcsw;
}

Figure runFigure(const std::string& name, const Series& s, std::size_t index) {
    Figure f;
    f.name = name;
    f.available = true;
    f.samples = s.perFigure.at(index);
    f.iterations = s.iterations;
    return f;
}

long futex(std::uint32_t* word, int op, std::uint32_t val) {
    return syscall(SYS_futex, word, op, val, nullptr, nullptr, 0);
}

// A hand-off between this thread and a partner that spins (never sleeps): seq odd is the
// partner's turn (the message is there for it), even is done, with the partner's timed call in
// lastNs.
struct SpinHandoff {
    alignas(64) std::atomic<std::uint64_t> seq{0};
    alignas(64) std::atomic<std::int64_t> lastNs{0};
    std::atomic<bool> stop{false};

    // The partner: spin until turn `expect` comes; false once stopped.
    bool awaitTurn(std::uint64_t expect) const {
        while (seq.load(std::memory_order_acquire) < expect) {
            if (stop.load(std::memory_order_relaxed)) return false;
            cpuRelax();
        }
        return true;
    }
    // The partner: turn `expect` done, its call took `ns`.
    void done(std::uint64_t expect, std::int64_t ns) {
        lastNs.store(ns, std::memory_order_relaxed);
        seq.store(expect + 1, std::memory_order_release);
    }
    // This thread: hand turn `next` over, wait until it is done; the partner's time.
    std::int64_t handOver(std::uint64_t next, const Partner& partner, const char* what) {
        seq.store(next, std::memory_order_release);
        waitUntil([&] { return seq.load(std::memory_order_acquire) == next + 1; }, false, partner, what);
        return lastNs.load(std::memory_order_relaxed);
    }
};

}  // namespace

std::vector<Figure> measurePipeNowake(const MeasureContext& c) {
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    // Non-blocking: a bug that filled the pipe fails (EAGAIN) instead of hanging the one thread.
    Pipe p(O_NONBLOCK);
    fcntl(p.writeFd(), F_SETPIPE_SZ, 65536);
    const int capacity = fcntl(p.writeFd(), F_GETPIPE_SZ);
    if (capacity < 4096) throwErrno("F_GETPIPE_SZ");
    // Writes of 100 bytes merge into the last page while it has room: 40 per 4 KiB page.
    const std::uint64_t batch = std::min<std::uint64_t>(512, std::uint64_t(capacity / 4096) * (4096 / kMsgBytes) - 8);
    char msg[kMsgBytes] = {'m'};
    char in[kMsgBytes];

    SeriesPlan plan = c.plan;
    plan.minIterations = std::max<std::uint64_t>(plan.minIterations, batch);
    const Series s = runSeries(plan, [&](std::uint64_t n) {
        std::int64_t writeNs = 0, readNs = 0;
        std::uint64_t done = 0;
        while (done < n) {
            const std::uint64_t k = std::min(batch, n - done);
            const std::int64_t t0 = nowNs();
            for (std::uint64_t i = 0; i < k; ++i) {
                if (write(p.writeFd(), msg, kMsgBytes) != ssize_t(kMsgBytes)) throwErrno("pipe write");
            }
            const std::int64_t t1 = nowNs();
            for (std::uint64_t i = 0; i < k; ++i) {
                if (read(p.readFd(), in, kMsgBytes) != ssize_t(kMsgBytes)) throwErrno("pipe read");
            }
            const std::int64_t t2 = nowNs();
            writeNs += t1 - t0;
            readNs += t2 - t1;
            done += k;
        }
        return std::vector<double>{double(writeNs) / double(done), double(readNs) / double(done)};
    });

    Figure w = runFigure("pipe_write_nowake", s, 0);
    w.label = "write() 100 B, no reader waiting";
    w.method = fmt::format(
        "write() of a 100-byte message into a pipe with room and no reader waiting, one thread on CPU {}; batches of "
        "{} writes (then {} reads, so the 64 KiB pipe never fills) timed as a whole, per call = batch time / {}; {}",
        c.cpuA, batch, batch, batch, clockNote(c));
    Figure r = runFigure("pipe_read_nowake", s, 1);
    r.label = "read() 100 B already there";
    r.method = fmt::format(
        "read() of a 100-byte message already in the pipe (written by the same thread, CPU {}), no wakeup; batches of "
        "{} reads after {} writes timed as a whole, per call = batch time / {}; {}",
        c.cpuA, batch, batch, batch, clockNote(c));
    return {w, r};
}

Figure measurePipeWriteWake(const MeasureContext& c, bool remote) {
    const std::string name = remote ? "pipe_write_wake_remote" : "pipe_write_wake_local";
    if (remote && c.cpuB < 0) return Figure::unavailable(name, c.noCpuBReason);
    const int readerCpu = remote ? c.cpuB : c.cpuA;
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    Pipe data;
    alignas(64) std::atomic<std::uint64_t> acks{0};
    Partner reader(
        readerCpu,
        [&] {
            if (!remote) {
                // SCHED_BATCH: the same wakeup path as SCHED_NORMAL except that the woken reader does not
                // preempt the writer (check_preempt_wakeup_fair() returns early for it), so write() returns
                // before the switch. With SCHED_NORMAL, EEVDF preempts the writer inside nearly every write.
                setThisThreadBatch();
            }
            char buf[kMsgBytes];
            while (readExact(data.readFd(), buf, kMsgBytes, "reader read"))
                acks.fetch_add(1, std::memory_order_release);
        },
        [&] { data.closeWrite(); });
    reader.waitReady(!remote);
    const ThreadState st(reader.tid());
    char msg[kMsgBytes] = {'w'};
    std::uint64_t sent = 0, preempted = 0, timed = 0;

    const Series s = runSeries(
        c.plan,
        [&](std::uint64_t n) {
            std::int64_t sum = 0;
            std::uint64_t ops = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
                // The reader is asleep in read(): its state is S (read() is its only blocking point),
                // and for the remote case its CPU has then been idle for a while.
                waitAsleep(st, !remote, reader, "the reader to block in read()");
                if (remote) spinFor(kReaderIdleNs);
                const long before = involuntarySwitches();
                const std::int64_t t0 = nowNs();
                const ssize_t w = write(data.writeFd(), msg, kMsgBytes);
                const std::int64_t t1 = nowNs();
                if (w != ssize_t(kMsgBytes)) throwErrno("pipe write");
                ++timed;
                // Switched away before write() returned (an involuntary switch): the time holds another
                // task's run, not the write. Left out, and counted.
                if (involuntarySwitches() != before) {
                    ++preempted;
                } else {
                    sum += t1 - t0;
                    ++ops;
                }
                ++sent;
                waitUntil([&] { return acks.load(std::memory_order_acquire) >= sent; }, !remote, reader,
                          "the reader's ack");
            }
            return std::vector<double>{ops ? double(sum) / double(ops) : std::nan("")};
        },
        [&] { preempted = timed = 0; });

    Figure f = runFigure(name, s, 0);
    // Left-out writes are those during which the scheduler switched away (on a busy CPU, mostly to other
    // tasks at the wakeup's update_curr()). Below a tenth of the writes left, the figure says nothing.
    if (10 * (timed - preempted) < timed ||
        std::any_of(f.samples.begin(), f.samples.end(), [](double v) { return std::isnan(v); })) {
        return Figure::unavailable(
            name, fmt::format("the writer was preempted inside write() in {} of {} writes", preempted, timed));
    }
    f.label = remote ? "write() 100 B waking reader on other CPU" : "write() 100 B waking reader on same CPU";
    f.method = fmt::format(
        "the writer's write() of 100 bytes into a pipe whose reader is blocked in read() (state S in /proc before "
        "each write{}); writer on CPU {}, reader{} on CPU {} (both pinned: select_task_rq() is skipped); each write "
        "timed alone; writes preempted before returning (ru_nivcsw) left out: {} of {}; {} (included once)",
        remote ? fmt::format(", then its CPU left idle {} us", kReaderIdleNs / 1000) : "", c.cpuA,
        remote ? "" : " (SCHED_BATCH, so that its wakeup does not preempt the writer)", readerCpu, preempted, timed,
        clockNote(c));
    f.extra["writes_timed"] = timed;
    f.extra["writes_preempted_left_out"] = preempted;
    return f;
}

Figure measurePipeReadRemoteData(const MeasureContext& c) {
    const std::string name = "pipe_read_remote_data";
    if (c.cpuB < 0) return Figure::unavailable(name, c.noCpuBReason);
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    Pipe data;
    // A turn: a message is in the pipe for the reader.
    SpinHandoff h;
    Partner reader(
        c.cpuB,
        [&] {
            char buf[kMsgBytes];
            for (std::uint64_t expect = 1;; expect += 2) {
                if (!h.awaitTurn(expect)) return;
                const std::int64_t t0 = nowNs();
                const ssize_t r = read(data.readFd(), buf, kMsgBytes);
                const std::int64_t t1 = nowNs();
                if (r != ssize_t(kMsgBytes)) throwErrno("reader read");
                h.done(expect, t1 - t0);
            }
        },
        [&] { h.stop.store(true); });
    reader.waitReady(false);
    char msg[kMsgBytes] = {'r'};
    std::uint64_t next = 1;

    const Series s = runSeries(c.plan, [&](std::uint64_t n) {
        std::int64_t sum = 0;
        for (std::uint64_t i = 0; i < n; ++i, next += 2) {
            writeExact(data.writeFd(), msg, kMsgBytes, "pipe write");
            sum += h.handOver(next, reader, "the remote reader");
        }
        return std::vector<double>{double(sum) / double(n)};
    });
    Figure f = runFigure(name, s, 0);
    f.label = "read() 100 B written on other CPU";
    f.method = fmt::format(
        "read() of a 100-byte message that is already in the pipe, written just before by a thread on CPU {}; the "
        "reader on CPU {} spins (no sleep, no wakeup) until told the message is there, then times its read() alone; "
        "{} (included once)",
        c.cpuA, c.cpuB, clockNote(c));
    return f;
}

Figure measurePipeRoundtrip(const MeasureContext& c, bool process) {
    const std::string name = process ? "pipe_roundtrip_same_cpu_process" : "pipe_roundtrip_same_cpu_thread";
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    Pipe there, back;
    char byte = 'p';
    auto oneRun = [&](std::uint64_t n) {
        const std::int64_t t0 = nowNs();
        for (std::uint64_t i = 0; i < n; ++i) {
            writeExact(there.writeFd(), &byte, 1, "ping write");
            if (!readExact(back.readFd(), &byte, 1, "ping read")) throw BenchError("the partner ended early");
        }
        return std::vector<double>{double(nowNs() - t0) / double(n)};
    };
    Series s;
    if (!process) {
        Partner echo(
            c.cpuA,
            [&] {
                char b;
                while (readExact(there.readFd(), &b, 1, "echo read")) writeExact(back.writeFd(), &b, 1, "echo write");
            },
            [&] { there.closeWrite(); });
        echo.waitReady(true);
        s = runSeries(c.plan, oneRun);
    } else {
        const pid_t child = fork();
        if (child < 0) throwErrno("fork");
        if (child == 0) {
            // The child: system calls only (it is a fork of a threaded process), then _exit.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            signal(SIGINT, SIG_IGN);
            signal(SIGHUP, SIG_IGN);
            signal(SIGTERM, SIG_DFL);
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(c.cpuA, &set);
            if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(3);
            close(there.writeFd());
            close(back.readFd());
            char b = 'r';
            if (write(back.writeFd(), &b, 1) != 1) _exit(4);  // ready
            while (read(there.readFd(), &b, 1) == 1) {
                if (write(back.writeFd(), &b, 1) != 1) _exit(5);
            }
            _exit(0);
        }
        // The parent keeps only its own ends, so a dead child reads as end of file.
        there.closeRead();
        back.closeWrite();
        struct Reap {
            Pipe& there;
            pid_t pid;
            ~Reap() {
                there.closeWrite();
                int st;
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
                }
            }
        } reap{there, child};
        if (!readExact(back.readFd(), &byte, 1, "child ready"))
            throw BenchError("the child process could not pin itself");
        s = runSeries(c.plan, oneRun);
    }
    Figure f = runFigure(name, s, 0);
    f.label = process ? "1 B ping-pong, 2 processes, 1 CPU" : "1 B ping-pong, 2 threads, 1 CPU";
    f.method = fmt::format(
        "round trip of 1 byte over two pipes between two {} pinned to CPU {}: write(), then read() blocks until the "
        "partner, woken, has read and written back; per round trip = run time / round trips; {}",
        process ? "processes (fork, separate mm)" : "threads of one process (same mm)", c.cpuA, clockNote(c));
    return f;
}

Figure deriveCtxSwitch(const Figure& roundtrip, const Figure& writeWakeLocal, const Figure& readNowake, bool process) {
    const std::string name = process ? "ctx_switch_process" : "ctx_switch_thread";
    for (const Figure* in : {&roundtrip, &writeWakeLocal, &readNowake}) {
        if (!in->available)
            return Figure::unavailable(name, fmt::format("{} is unavailable: {}", in->name, in->reason));
    }
    const double w = summarize(writeWakeLocal.samples).median;
    const double r = summarize(readNowake.samples).median;
    Figure f;
    f.name = name;
    f.available = true;
    f.iterations = roundtrip.iterations;
    for (double rt : roundtrip.samples) f.samples.push_back((rt - 2.0 * (w + r)) / 2.0);
    // A switch takes time: a median at or below zero says that the three inputs, measured at different
    // moments, were not distorted alike (other load during one of them), not that switching is free.
    // Reported as such rather than clamped to a number nobody measured.
    if (const double median = summarize(f.samples).median; median <= 0) {
        return Figure::unavailable(
            name, fmt::format("derived median {:.1f} ns <= 0: ({} median {:.1f} ns - 2 x ({} median {:.1f} ns + {} "
                              "median {:.1f} ns)) / 2; the inputs, measured at different moments, were distorted "
                              "unequally (other load?)",
                              median, roundtrip.name, summarize(roundtrip.samples).median, writeWakeLocal.name, w,
                              readNowake.name, r));
    }
    f.label = "derived: (RT - 2(W+R)) / 2";
    f.method = fmt::format(
        "derived, one switch one way: ({} - 2 x (pipe_write_wake_local + pipe_read_nowake)) / 2, for each round-trip "
        "run with the two medians ({:.1f} ns and {:.1f} ns; they are 100-byte calls, the round trip moves 1 byte); "
        "not clamped",
        roundtrip.name, w, r);
    f.extra["derived_from"] = {roundtrip.name, writeWakeLocal.name, readNowake.name};
    return f;
}

Figure measureCachelineTransfer(const MeasureContext& c) {
    const std::string name = "cacheline_transfer";
    if (c.cpuB < 0) return Figure::unavailable(name, c.noCpuBReason);
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    struct alignas(64) Line {
        std::atomic<std::uint64_t> value{0};
    };
    Line line;
    alignas(64) std::atomic<bool> stop{false};
    Partner bouncer(
        c.cpuB,
        [&] {
            // B waits for odd, writes the next even value.
            for (;;) {
                std::uint64_t v;
                while (((v = line.value.load(std::memory_order_acquire)) & 1) == 0) {
                    if (stop.load(std::memory_order_relaxed)) return;
                }
                line.value.store(v + 1, std::memory_order_release);
            }
        },
        [&] { stop.store(true); });
    bouncer.waitReady(false);

    const Series s = runSeries(c.plan, [&](std::uint64_t n) {
        // A waits for even, writes the next odd value.
        std::uint64_t v = line.value.load(std::memory_order_acquire);
        const std::int64_t t0 = nowNs();
        for (std::uint64_t i = 0; i < n; ++i) {
            line.value.store(v + 1, std::memory_order_release);
            while (line.value.load(std::memory_order_acquire) != v + 2) {
            }
            v += 2;
        }
        return std::vector<double>{double(nowNs() - t0) / double(2 * n)};
    });
    Figure f = runFigure(name, s, 0);
    f.label = "64 B line ping-pong, one way";
    f.method = fmt::format(
        "one std::atomic<uint64_t> alone in a 64-byte-aligned line, bounced between CPU {} (waits for even, stores "
        "odd) and CPU {} (waits for odd, stores even), both spinning without pause; one way = run time / (2 x round "
        "trips); {}",
        c.cpuA, c.cpuB, clockNote(c));
    return f;
}

Figure measureLoopbackTcp(const MeasureContext& c, bool cross) {
    const std::string name = cross ? "loopback_tcp_rtt_cross_cpu" : "loopback_tcp_rtt_same_cpu";
    if (cross && c.cpuB < 0) return Figure::unavailable(name, c.noCpuBReason);
    const int serverCpu = cross ? c.cpuB : c.cpuA;
    ScopedAffinity keep;
    pinThisThread(c.cpuA);

    LoopbackTcp conn;
    Partner server(
        serverCpu,
        [&] {
            char buf[kMsgBytes];
            while (readExact(conn.serverFd(), buf, kMsgBytes, "server recv")) {
                if (send(conn.serverFd(), buf, kMsgBytes, MSG_NOSIGNAL) != ssize_t(kMsgBytes))
                    throwErrno("server send");
            }
        },
        [&] { shutdown(conn.clientFd(), SHUT_WR); });
    server.waitReady(!cross);
    char req[kMsgBytes] = {'q'};
    char rep[kMsgBytes];

    const Series s = runSeries(c.plan, [&](std::uint64_t n) {
        const std::int64_t t0 = nowNs();
        for (std::uint64_t i = 0; i < n; ++i) {
            if (send(conn.clientFd(), req, kMsgBytes, MSG_NOSIGNAL) != ssize_t(kMsgBytes)) throwErrno("client send");
            if (!readExact(conn.clientFd(), rep, kMsgBytes, "client recv"))
                throw BenchError("the server closed the connection");
        }
        return std::vector<double>{double(nowNs() - t0) / double(n)};
    });
    Figure f = runFigure(name, s, 0);
    f.label = cross ? "TCP 127.0.0.1 100 B req/rep, 2 CPUs" : "TCP 127.0.0.1 100 B req/rep, 1 CPU";
    f.method = fmt::format(
        "round trip of a 100-byte request and a 100-byte reply over one TCP connection on 127.0.0.1 (TCP_NODELAY, "
        "blocking sockets), client on CPU {}, server on CPU {}; per round trip = run time / round trips; {}",
        c.cpuA, serverCpu, clockNote(c));
    return f;
}

Figure measureSocketSendWake(const MeasureContext& c) {
    const std::string name = "socket_send_wake_remote";
    if (c.cpuB < 0) return Figure::unavailable(name, c.noCpuBReason);
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    LoopbackTcp conn;
    alignas(64) std::atomic<std::uint64_t> replies{0};
    // The server answers every request, so that each side's ACK rides on the next message (as in the
    // request/reply figures) instead of being a segment of its own sent inside a timed call.
    Partner server(
        c.cpuB,
        [&] {
            char buf[kMsgBytes];
            while (recvExact(conn.serverFd(), buf, kMsgBytes, "server recv")) {
                sendExact(conn.serverFd(), buf, kMsgBytes, "server send");
                replies.fetch_add(1, std::memory_order_release);
            }
        },
        [&] { shutdown(conn.clientFd(), SHUT_WR); });
    server.waitReady(false);
    const ThreadState st(server.tid());
    char req[kMsgBytes] = {'s'};
    char rep[kMsgBytes];
    std::uint64_t sent = 0, preempted = 0, timed = 0;

    const Series s = runSeries(
        c.plan,
        [&](std::uint64_t n) {
            std::int64_t sum = 0;
            std::uint64_t ops = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
                // As for pipe_write_wake_remote: the server is asleep in recv() (state S: recv() is its
                // only interruptible sleep) and its CPU has then been idle for a while.
                waitAsleep(st, false, server, "the server to block in recv()");
                spinFor(kReaderIdleNs);
                const long before = involuntarySwitches();
                const std::int64_t t0 = nowNs();
                const ssize_t w = send(conn.clientFd(), req, kMsgBytes, MSG_NOSIGNAL);
                const std::int64_t t1 = nowNs();
                if (w != ssize_t(kMsgBytes)) throwErrno("client send");
                ++timed;
                if (involuntarySwitches() != before) {
                    ++preempted;
                } else {
                    sum += t1 - t0;
                    ++ops;
                }
                ++sent;
                waitUntil([&] { return replies.load(std::memory_order_acquire) >= sent; }, false, server,
                          "the server's reply");
                if (!recvExact(conn.clientFd(), rep, kMsgBytes, "client recv"))
                    throw BenchError("the server closed the connection");
            }
            return std::vector<double>{ops ? double(sum) / double(ops) : std::nan("")};
        },
        [&] { preempted = timed = 0; });

    Figure f = runFigure(name, s, 0);
    if (10 * (timed - preempted) < timed ||
        std::any_of(f.samples.begin(), f.samples.end(), [](double v) { return std::isnan(v); })) {
        return Figure::unavailable(
            name, fmt::format("the client was preempted inside send() in {} of {} sends", preempted, timed));
    }
    f.label = "send() 100 B TCP waking server on other CPU";
    f.method = fmt::format(
        "the client's send() of a 100-byte request over a TCP connection on 127.0.0.1 (TCP_NODELAY, blocking) whose "
        "server is blocked in recv() (state S in /proc before each send, then its CPU left idle {} us): the "
        "loopback transmit, the softirq receive run inside the send and the wakeup of the server; client on CPU {}, "
        "server on CPU {} (both pinned); the server replies 100 bytes after each request (the reply carries the "
        "ACK), read by the client untimed; each send timed alone; sends preempted before returning (ru_nivcsw) left "
        "out: {} of {}; {} (included once)",
        kReaderIdleNs / 1000, c.cpuA, c.cpuB, preempted, timed, clockNote(c));
    f.extra["sends_timed"] = timed;
    f.extra["sends_preempted_left_out"] = preempted;
    return f;
}

Figure measureSocketRecvData(const MeasureContext& c) {
    const std::string name = "socket_recv_data";
    if (c.cpuB < 0) return Figure::unavailable(name, c.noCpuBReason);
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    LoopbackTcp conn;
    // A turn: a request has been sent for the server; done: it has read it and replied.
    SpinHandoff h;
    std::atomic<std::uint64_t> notYetQueued{0};
    Partner server(
        c.cpuB,
        [&] {
            char buf[kMsgBytes];
            for (std::uint64_t expect = 1;; expect += 2) {
                if (!h.awaitTurn(expect)) return;
                // The receive normally ran in the client's send() (loopback softirq), but it may be left
                // to ksoftirqd: until the bytes are queued, a recv() would sleep. Waited for, untimed.
                int queued = 0;
                bool waited = false;
                for (;;) {
                    if (ioctl(conn.serverFd(), SIOCINQ, &queued) != 0) throwErrno("ioctl(SIOCINQ)");
                    if (queued >= int(kMsgBytes)) break;
                    if (h.stop.load(std::memory_order_relaxed)) return;
                    waited = true;
                    cpuRelax();
                }
                if (waited) notYetQueued.fetch_add(1, std::memory_order_relaxed);
                const std::int64_t t0 = nowNs();
                const ssize_t r = recv(conn.serverFd(), buf, kMsgBytes, 0);
                const std::int64_t t1 = nowNs();
                if (r < 0) throwErrno("server recv");
                if (r != ssize_t(kMsgBytes)) throw BenchError(fmt::format("server recv: {} bytes of {}", r, kMsgBytes));
                sendExact(conn.serverFd(), buf, kMsgBytes, "server send");
                h.done(expect, t1 - t0);
            }
        },
        [&] { h.stop.store(true); });
    server.waitReady(false);
    char req[kMsgBytes] = {'r'};
    char rep[kMsgBytes];
    std::uint64_t next = 1;

    const Series s = runSeries(
        c.plan,
        [&](std::uint64_t n) {
            std::int64_t sum = 0;
            for (std::uint64_t i = 0; i < n; ++i, next += 2) {
                sendExact(conn.clientFd(), req, kMsgBytes, "client send");
                sum += h.handOver(next, server, "the server's reply");
                if (!recvExact(conn.clientFd(), rep, kMsgBytes, "client recv"))
                    throw BenchError("the server closed the connection");
            }
            return std::vector<double>{double(sum) / double(n)};
        },
        [&] { notYetQueued.store(0); });
    Figure f = runFigure(name, s, 0);
    f.label = "recv() 100 B TCP already queued";
    f.method = fmt::format(
        "the server's recv() of a 100-byte request already in its TCP socket's receive queue (SIOCINQ checked "
        "before, untimed), sent just before over 127.0.0.1 (TCP_NODELAY, blocking) by the client on CPU {}; the "
        "server on CPU {} spins (no sleep, no wakeup) until told the request was sent, times its recv() alone, then "
        "replies 100 bytes (carrying the ACK), read by the client untimed; {} (included once)",
        c.cpuA, c.cpuB, clockNote(c));
    f.extra["requests_not_yet_queued_when_told"] = notYetQueued.load();
    return f;
}

std::vector<Figure> measureFutexWake(const MeasureContext& c) {
    if (c.cpuB < 0) {
        return {Figure::unavailable("wake_to_run_remote", c.noCpuBReason),
                Figure::unavailable("futex_wake_remote", c.noCpuBReason)};
    }
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    // The futex word: B stores kWaiting and sleeps in FUTEX_WAIT while it holds kWaiting; A stamps t0,
    // stores kWoken, then FUTEX_WAKEs. B reads the clock as soon as FUTEX_WAIT returns.
    enum : std::uint32_t { kWoken = 0, kWaiting = 1 };
    alignas(64) std::uint32_t word = kWoken;
    std::atomic_ref<std::uint32_t> w(word);
    alignas(64) std::atomic<std::int64_t> t0Shared{0};
    alignas(64) std::atomic<std::int64_t> latency{0};
    std::atomic<std::uint64_t> done{0};
    std::atomic<bool> stop{false};
    std::uint64_t expected = 0;
    auto wake = [&] { return futex(&word, FUTEX_WAKE_PRIVATE, 1); };
    Partner waiter(
        c.cpuB,
        [&] {
            for (std::uint64_t k = 1;; ++k) {
                w.store(kWaiting);
                while (w.load() == kWaiting) futex(&word, FUTEX_WAIT_PRIVATE, kWaiting);
                const std::int64_t tB = nowNs();
                if (stop.load()) return;
                latency.store(tB - t0Shared.load(std::memory_order_acquire), std::memory_order_relaxed);
                done.store(k, std::memory_order_release);
            }
        },
        [&] {
            // Stop only once B has announced its wait, so that the store below cannot be overwritten.
            const std::int64_t deadline = nowNs() + kWaitLimitNs;
            while (w.load() != kWaiting && nowNs() < deadline) cpuRelax();
            stop.store(true);
            w.store(kWoken);
            wake();
        });
    waiter.waitReady(false);
    const ThreadState st(waiter.tid());
    std::uint64_t notWoken = 0;

    const Series s = runSeries(
        c.plan,
        [&](std::uint64_t n) {
            std::int64_t latSum = 0, wakeSum = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
                waitUntil([&] { return w.load() == kWaiting; }, false, waiter, "the waiter's announcement");
                waitAsleep(st, false, waiter, "the waiter to sleep in FUTEX_WAIT");
                spinFor(kWaiterIdleNs);
                waitAsleep(st, false, waiter, "the waiter to sleep in FUTEX_WAIT");
                const std::int64_t t0 = nowNs();
                t0Shared.store(t0, std::memory_order_release);
                w.store(kWoken);
                const long woke = wake();
                const std::int64_t t1 = nowNs();
                if (woke != 1) ++notWoken;
                wakeSum += t1 - t0;
                ++expected;
                waitUntil([&] { return done.load(std::memory_order_acquire) == expected; }, false, waiter,
                          "the woken waiter");
                latSum += latency.load(std::memory_order_relaxed);
            }
            return std::vector<double>{double(latSum) / double(n), double(wakeSum) / double(n)};
        },
        [&] { notWoken = 0; });
    if (notWoken > 0) {
        const std::string why = fmt::format("FUTEX_WAKE found no waiter {} times: the waiter was not asleep", notWoken);
        return {Figure::unavailable("wake_to_run_remote", why), Figure::unavailable("futex_wake_remote", why)};
    }
    Figure lat = runFigure("wake_to_run_remote", s, 0);
    lat.label = "FUTEX_WAKE on A to waiter running on B";
    lat.method = fmt::format(
        "t_B - t0: t0 read on CPU {} just before FUTEX_WAKE_PRIVATE, t_B read by the waiter on CPU {} as soon as its "
        "FUTEX_WAIT_PRIVATE returns; the waiter was asleep (state S, then its CPU idle {} us, S again) before each "
        "wake; both pinned (select_task_rq() skipped); {} (one read included)",
        c.cpuA, c.cpuB, kWaiterIdleNs / 1000, clockNote(c));
    Figure wk = runFigure("futex_wake_remote", s, 1);
    wk.label = "FUTEX_WAKE syscall, waiter on other CPU";
    wk.method = fmt::format(
        "the waker's FUTEX_WAKE_PRIVATE system call on CPU {} (plus two stores before it) waking one waiter asleep on "
        "CPU {} whose CPU was idle {} us; each call timed alone; {} (included once)",
        c.cpuA, c.cpuB, kWaiterIdleNs / 1000, clockNote(c));
    return {lat, wk};
}

Figure measureFutexWakeNowaiter(const MeasureContext& c) {
    const std::string name = "futex_wake_nowaiter";
    ScopedAffinity keep;
    pinThisThread(c.cpuA);
    alignas(64) std::uint32_t word = 0;
    const Series s = runSeries(c.plan, [&](std::uint64_t n) {
        const std::int64_t t0 = nowNs();
        long woken = 0;
        for (std::uint64_t i = 0; i < n; ++i) woken |= futex(&word, FUTEX_WAKE_PRIVATE, 1);
        if (woken < 0) throwErrno("FUTEX_WAKE_PRIVATE");
        if (woken != 0) throw BenchError("FUTEX_WAKE_PRIVATE found a waiter on a word nobody waits on");
        return std::vector<double>{double(nowNs() - t0) / double(n)};
    });
    Figure f = runFigure(name, s, 0);
    f.label = "FUTEX_WAKE syscall, nobody waiting";
    f.method = fmt::format(
        "FUTEX_WAKE_PRIVATE (wake one) on a 32-bit word nobody waits on, one thread on CPU {}: the system call and "
        "the futex hash-bucket lookup that finds no waiter, no wakeup; runs of back-to-back calls timed as a whole, "
        "per call = run time / calls; {}",
        c.cpuA, clockNote(c));
    return f;
}

}  // namespace sched::calibrate
