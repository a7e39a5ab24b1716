// SPDX-License-Identifier: GPL-2.0-or-later
// waker_tail.cpp: the three ping-pongs (two threads pinned to two CPUs, or both pinned to one CPU as
// SCHED_BATCH: either way a wakee never preempts its waker), their recording in the private tracefs
// instance, and the pairing of each sched_waking with the waker's next sched_switch on its CPU and
// with the wakee's sched_wakeup; and the recording's own cost per event, from untraced and traced
// runs of the same-CPU pipe ping-pong.
#include "waker_tail.h"

#include "bench_support.h"
#include "interrupt.h"
#include "trace_instance.h"

#include <fmt/format.h>

#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace sched::calibrate {

namespace {

constexpr std::size_t kMsgBytes = 100;

// sched_switch's prev_state: the low byte holds the task state bits the kernel reports (none: R),
// the bit above it marks a preemption (R+). TASK_INTERRUPTIBLE and TASK_UNINTERRUPTIBLE (S, D) are
// the states of a task that blocked; the others (X, Z, T, ...) are not a sleep of the ping-pong.
constexpr long long kReportedStateMask = 0xff;
constexpr long long kBlockedStates = 0x1 | 0x2;

long futex(std::uint32_t* word, int op, std::uint32_t val) {
    return syscall(SYS_futex, word, op, val, nullptr, nullptr, 0);
}

// One side's link to the other side: send() gives the peer its turn (waking it if it waits),
// receive() blocks until this side has its turn (false: the peer has closed), close() ends this
// side's sending direction, so that the peer's receive() returns false. Each direction is written by
// one side only: close() is safe while the peer blocks in receive().
class Link {
public:
    virtual ~Link() = default;
    virtual void send(int side) = 0;
    virtual bool receive(int side) = 0;
    virtual void close(int side) noexcept = 0;
    /// What each side calls, for the method.
    virtual std::string calls() const = 0;
};

class PipeLink : public Link {
public:
    void send(int side) override {
        char msg[kMsgBytes] = {'p'};
        writeExact(m_to[1 - side].writeFd(), msg, kMsgBytes, "pipe write");
    }
    bool receive(int side) override {
        char buf[kMsgBytes];
        return readExact(m_to[side].readFd(), buf, kMsgBytes, "pipe read");
    }
    void close(int side) noexcept override { m_to[1 - side].closeWrite(); }
    std::string calls() const override {
        return "write() of 100 bytes into the peer's pipe, then read() of 100 bytes from its own pipe (blocking)";
    }

private:
    Pipe m_to[2];  // m_to[i]: the pipe that side i reads
};

class TcpLink : public Link {
public:
    void send(int side) override {
        char msg[kMsgBytes] = {'t'};
        sendExact(fd(side), msg, kMsgBytes, "send");
    }
    bool receive(int side) override {
        char buf[kMsgBytes];
        return recvExact(fd(side), buf, kMsgBytes, "recv");
    }
    void close(int side) noexcept override { shutdown(fd(side), SHUT_WR); }
    std::string calls() const override {
        return "send() of 100 bytes over one TCP connection on 127.0.0.1 (TCP_NODELAY, blocking; the loopback "
               "receive that wakes the peer runs in softirq inside the send), then recv() of 100 bytes (blocking)";
    }

private:
    int fd(int side) const { return side == 0 ? m_conn.clientFd() : m_conn.serverFd(); }
    LoopbackTcp m_conn;
};

// Each side sleeps on its own word: kWait, kTurn (stored by the peer, then FUTEX_WAKE) or kClosed.
// FUTEX_WAIT sleeps only while the word still holds kWait, so a turn stored before the wait starts
// is seen and none is lost.
class FutexLink : public Link {
public:
    void send(int side) override {
        if (post(1 - side, kTurn) < 0) throwErrno("FUTEX_WAKE_PRIVATE");
    }
    bool receive(int side) override {
        std::atomic_ref<std::uint32_t> word(m_word[side].value);
        for (;;) {
            std::uint32_t v = kTurn;
            if (word.compare_exchange_strong(v, kWait)) return true;
            if (v == kClosed) return false;
            if (futex(&m_word[side].value, FUTEX_WAIT_PRIVATE, kWait) != 0 && errno != EAGAIN && errno != EINTR)
                throwErrno("FUTEX_WAIT_PRIVATE");
        }
    }
    void close(int side) noexcept override { post(1 - side, kClosed); }
    std::string calls() const override {
        return "a store to the peer's futex word and FUTEX_WAKE_PRIVATE of it, then FUTEX_WAIT_PRIVATE on its own "
               "word while that still says 'wait' (one word per direction: no wakeup is lost)";
    }

private:
    enum : std::uint32_t { kWait = 0, kTurn = 1, kClosed = 2 };
    long post(int to, std::uint32_t value) {
        std::atomic_ref<std::uint32_t>(m_word[to].value).store(value);
        return futex(&m_word[to].value, FUTEX_WAKE_PRIVATE, 1);
    }
    struct alignas(64) Word {
        std::uint32_t value = kWait;
    };
    Word m_word[2];
};

std::unique_ptr<Link> makeLink(PingPongKind kind) {
    switch (kind) {
    case PingPongKind::Pipe: return std::make_unique<PipeLink>();
    case PingPongKind::Tcp: return std::make_unique<TcpLink>();
    case PingPongKind::Futex: return std::make_unique<FutexLink>();
    }
    throw BenchError("unknown ping-pong kind");
}

// Where the two threads of a ping-pong run. TwoCpus: side 0 on cpuA, side 1 on cpuB; the wakee runs
// on the other CPU, so it cannot preempt its waker, but each wakeup of the idle CPU costs an IPI
// (in a VM an exit to the hypervisor, inside the waker's ttwu). SameCpuBatch: both on cpuA and
// SCHED_BATCH: no IPI, and the woken thread waits on the runqueue until its waker blocks.
enum class Placement { TwoCpus, SameCpuBatch };

// One recording: a kind of ping-pong on one placement.
struct Recording {
    PingPongKind kind;
    Placement placement;
};

struct PingPongRun {
    pid_t tids[2] = {0, 0};  // side 0 on cpuA, side 1 on cpuB (both on cpuA: SameCpuBatch)
    std::uint64_t roundTrips = 0;
    double seconds = 0;
    // The first thread's own time from its first send to the answer of its last round trip.
    double loopSeconds = 0;
    // Over the run, as the report's interference block (busy ticks of the CPUs used minus this
    // process's CPU time; coarse over so short a run): what other tasks and the hypervisor took.
    double otherShare = 0, stealShare = 0;
};

// How long a run lasts: `seconds`, or, when roundTrips is not 0, exactly that many round trips.
struct RunLength {
    double seconds = 0;
    std::uint64_t roundTrips = 0;
};

// The two threads of a ping-pong over a link, pinned (and SCHED_BATCH) by the constructor and kept
// for any number of runs: side 0 (cpuA) sends first and receives the answer, side 1 (cpuB, or cpuA
// for SameCpuBatch) answers. Between runs both sleep (side 0 waiting for the next, side 1 in
// receive()), so that the trace instance can be changed around them without new thread ids.
class PingPong {
public:
    // Throws BenchError when a thread cannot be pinned (or made SCHED_BATCH).
    PingPong(Link& link, int cpuA, int cpuB, Placement placement)
        : m_link(link),
          m_cpus{cpuA, placement == Placement::SameCpuBatch ? cpuA : cpuB},
          m_sameCpu(placement == Placement::SameCpuBatch) {
        try {
            m_threads[0] = std::thread([this] { body(0); });
            m_threads[1] = std::thread([this] { body(1); });
        } catch (...) {
            end();
            throw;
        }
        for (int r; (r = m_ready.load()) < 2;) m_ready.wait(r);
        if (const std::string e = firstError(); !e.empty()) {
            end();
            throw BenchError(e);
        }
    }
    ~PingPong() { end(); }
    PingPong(const PingPong&) = delete;
    PingPong& operator=(const PingPong&) = delete;

    std::vector<pid_t> tids() const { return {m_tids[0], m_tids[1]}; }

    // One run of `length`. With `inst`, tracing is on in it from just before side 0 is released until
    // it has its last answer; without, nothing is recorded. Throws BenchError when a thread failed,
    // Interrupted (after the run) on a signal.
    PingPongRun run(RunLength length, TraceInstance* inst) {
        if (const std::string e = firstError(); !e.empty()) throw BenchError(e);
        PingPongRun run;
        run.tids[0] = m_tids[0];
        run.tids[1] = m_tids[1];
        using Clock = std::chrono::steady_clock;
        const std::vector<int> cpus = m_sameCpu ? std::vector<int>{m_cpus[0]} : std::vector<int>{m_cpus[0], m_cpus[1]};
        const CpuTimes cpu0 = cpuTimes(cpus);
        const double own0 = ownCpuSeconds();
        m_limit = length.roundTrips;
        m_stop.store(false);
        const int round = ++m_rounds;
        if (inst) inst->start();
        const Clock::time_point t0 = Clock::now();
        m_round.store(round);
        m_round.notify_all();
        // One sleep (or one wait for the end of a counted run), not a polling loop: each wakeup of this
        // thread on a CPU used could preempt a waker. A signal is acted on after the run.
        if (length.roundTrips == 0) {
            std::this_thread::sleep_for(std::chrono::duration<double>(length.seconds));
            m_stop.store(true);
        }
        for (int d; (d = m_done.load()) < round;) m_done.wait(d);
        run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        if (inst) inst->stop();
        const CpuTimes cpu1 = cpuTimes(cpus);
        const double capacity = std::max(1e-9, run.seconds * double(cpus.size()));
        run.otherShare = std::max(0.0, (cpu1.busySeconds - cpu0.busySeconds) - (ownCpuSeconds() - own0)) / capacity;
        run.stealShare = (cpu1.stealSeconds - cpu0.stealSeconds) / capacity;
        throwIfInterrupted();
        if (const std::string e = firstError(); !e.empty()) throw BenchError(e);
        run.roundTrips = m_roundTrips.load();
        run.loopSeconds = double(m_loopNs.load()) / 1e9;
        return run;
    }

private:
    void body(int side) {
        bool ok = true;
        try {
            pinThisThread(m_cpus[side]);
            if (m_sameCpu) setThisThreadBatch();
            m_tids[side] = thisTid();
        } catch (const std::exception& e) {
            setError(side, e.what());
            ok = false;
        }
        m_ready.fetch_add(1);
        m_ready.notify_all();
        if (side == 1) {
            try {
                while (ok && m_link.receive(1)) m_link.send(1);
            } catch (const std::exception& e) {
                setError(side, e.what());
            }
        }
        for (int round = 1; side == 0 && ok; ++round) {
            int r;
            while ((r = m_round.load()) >= 0 && r < round) m_round.wait(r);
            if (r < 0) break;
            try {
                const std::uint64_t limit = m_limit;
                std::uint64_t n = 0;
                const std::int64_t t0 = nowNs();
                while ((limit == 0 || n < limit) && !m_stop.load(std::memory_order_relaxed)) {
                    m_link.send(0);
                    if (!m_link.receive(0)) {
                        setError(0, "the peer ended the ping-pong");
                        ok = false;
                        break;
                    }
                    ++n;
                }
                m_loopNs.store(nowNs() - t0);
                m_roundTrips.store(n);
            } catch (const std::exception& e) {
                setError(side, e.what());
                ok = false;
            }
            m_done.store(round);
            m_done.notify_all();
        }
        // Also after a failure: the peer, blocked in receive(), then sees the end and returns.
        m_link.close(side);
    }

    // Releases side 0 for good (it closes its direction, which ends side 1) and joins both.
    void end() noexcept {
        m_stop.store(true);
        m_round.store(-1);
        m_round.notify_all();
        for (std::thread& t : m_threads) {
            if (t.joinable()) t.join();
        }
    }

    void setError(int side, const std::string& what) {
        const std::lock_guard<std::mutex> lock(m_errorsLock);
        if (m_errors[side].empty()) m_errors[side] = what;
    }
    // Side 1's first: its failure ends side 0's run too, as "the peer ended the ping-pong".
    std::string firstError() {
        const std::lock_guard<std::mutex> lock(m_errorsLock);
        return !m_errors[1].empty() ? m_errors[1] : m_errors[0];
    }

    Link& m_link;
    const int m_cpus[2];
    const bool m_sameCpu;
    std::atomic<int> m_ready{0};
    std::atomic<int> m_round{0};  // the run side 0 is to make (1, 2, ...); -1: end
    std::atomic<int> m_done{0};   // the last run side 0 has finished
    std::atomic<bool> m_stop{false};
    int m_rounds = 0;
    std::uint64_t m_limit = 0;  // written before m_round, read by side 0 after it
    std::atomic<std::uint64_t> m_roundTrips{0};
    std::atomic<std::int64_t> m_loopNs{0};
    pid_t m_tids[2] = {0, 0};  // written before m_ready, read after it
    std::mutex m_errorsLock;
    std::string m_errors[2];
    std::thread m_threads[2];
};

struct TailEvent {
    unsigned long long ts;
    int cpu;
    enum Type : unsigned char { Waking, Wakeup, Switch } type;
    int pid;          // waking, wakeup: the wakee; switch: prev_pid
    int by;           // waking: the waker (common_pid); switch: next_pid
    long long state;  // switch: prev_state
    int targetCpu;    // wakeup: target_cpu
};

struct TailParser {
    int wakingId = -1, wakeupId = -1, switchId = -1;
    tep_format_field* wakingPid = nullptr;
    tep_format_field* wakingBy = nullptr;
    tep_format_field* wakeupPid = nullptr;
    tep_format_field* wakeupTarget = nullptr;
    tep_format_field* prevPid = nullptr;
    tep_format_field* prevState = nullptr;
    tep_format_field* nextPid = nullptr;
    std::vector<TailEvent> events;
    long long missedEvents = 0;  // records' missed_events (> 0: counted; -1: "some", counted as 1)
};

int onTailEvent(tep_event* event, tep_record* record, int cpu, void* context) {
    auto* p = static_cast<TailParser*>(context);
    if (record->missed_events != 0) p->missedEvents += record->missed_events > 0 ? record->missed_events : 1;
    auto num = [&](tep_format_field* f, unsigned long long& v) {
        return tep_read_number_field(f, record->data, &v) == 0;
    };
    unsigned long long a = 0, b = 0, c = 0;
    if (event->id == p->wakingId) {
        if (num(p->wakingPid, a) && num(p->wakingBy, b))
            p->events.push_back({record->ts, cpu, TailEvent::Waking, int(a), int(b), 0, -1});
    } else if (event->id == p->wakeupId) {
        if (num(p->wakeupPid, a) && num(p->wakeupTarget, b))
            p->events.push_back({record->ts, cpu, TailEvent::Wakeup, int(a), 0, 0, int(b)});
    } else if (event->id == p->switchId) {
        if (num(p->prevPid, a) && num(p->prevState, b) && num(p->nextPid, c))
            p->events.push_back({record->ts, cpu, TailEvent::Switch, int(a), int(c), (long long)(b), -1});
    }
    return pendingSignal() != 0 ? 1 : 0;
}

struct TailPairs {
    std::vector<double> tails, windows;
    // For each tail: the events recorded on its CPU after its waking and before its closing switch
    // (their own cost is inside the tail).
    std::vector<double> eventsInside;
    // By the waker's side (its thread), whether or not the two threads share a CPU.
    std::uint64_t tailsBySide[2] = {0, 0};
    std::uint64_t preempted = 0;       // the waker was switched out runnable before it blocked
    std::uint64_t notBlocked = 0;      // the waker woke the peer again before blocking
    std::uint64_t endedOtherwise = 0;  // the waker left its CPU neither runnable nor blocked (exit)
    std::uint64_t migrated = 0;        // the waker's next switch was on another CPU (pinning failed)
    std::uint64_t unfinished = 0;      // no switch of the waker before the recording ended
    std::uint64_t wakingsByOthers = 0, wakeeOnWakerCpu = 0, unpairedWaking = 0, wakeupWithoutWaking = 0;
    // Where the paired sched_wakeup was recorded: on the waker's CPU (it activated the wakee on the
    // other CPU's runqueue itself, then sent a reschedule IPI) or on the wakee's (the wakelist: the
    // waker queued the wakee and sent an IPI, the other CPU activated it).
    std::uint64_t activatedByWaker = 0, activatedByWakeeCpu = 0;
};

// Each sched_waking of one thread by the other (common_pid) opens a tail on the waker's CPU, closed
// by the waker's next sched_switch away: a sample when it blocked (S/D), skipped when preempted.
// The same waking is paired with the wakee's next sched_wakeup for the window (none when both run on
// one CPU: the wakeup's target_cpu is then the waker's, counted in wakeeOnWakerCpu). Everything is
// keyed by thread, so both directions pair the same way whether the threads share a CPU or not.
TailPairs pairTails(std::vector<TailEvent>& events, const pid_t tids[2]) {
    // Stable: each CPU's records arrive in their ring buffer's order, which the per-CPU counts need.
    std::stable_sort(events.begin(), events.end(), [](const TailEvent& x, const TailEvent& y) { return x.ts < y.ts; });
    struct Pending {
        unsigned long long ts;
        int cpu;
        std::uint64_t seenBefore;  // events of its CPU before this one
    };
    std::vector<std::uint64_t> seen;  // by CPU: the events passed so far
    auto seenOn = [&](int cpu) -> std::uint64_t& {
        if (std::size_t(cpu) >= seen.size()) seen.resize(std::size_t(cpu) + 1, 0);
        return seen[std::size_t(cpu)];
    };
    std::optional<Pending> tail[2], wake[2];  // tail: by the waker's side, wake: by the wakee's side
    bool wokenByOther[2] = {false, false};
    auto sideOf = [&](int pid) { return pid == tids[0] ? 0 : pid == tids[1] ? 1 : -1; };
    TailPairs out;
    for (const TailEvent& e : events) {
        switch (e.type) {
        case TailEvent::Waking: {
            const int s = sideOf(e.pid);
            if (s < 0) break;
            if (sideOf(e.by) != 1 - s) {
                // Woken by another task (the start signal, an interrupt, ksoftirqd): no pair.
                ++out.wakingsByOthers;
                if (wake[s]) ++out.unpairedWaking;
                wake[s].reset();
                wokenByOther[s] = true;
                break;
            }
            const int w = 1 - s;
            if (tail[w]) ++out.notBlocked;
            tail[w] = Pending{e.ts, e.cpu, seenOn(e.cpu)};
            if (wake[s]) ++out.unpairedWaking;
            wake[s] = Pending{e.ts, e.cpu, seenOn(e.cpu)};
            break;
        }
        case TailEvent::Wakeup: {
            const int s = sideOf(e.pid);
            if (s < 0) break;
            if (wake[s]) {
                if (e.targetCpu == wake[s]->cpu) {
                    ++out.wakeeOnWakerCpu;
                } else {
                    out.windows.push_back(double(e.ts - wake[s]->ts));
                    ++(e.cpu == wake[s]->cpu ? out.activatedByWaker : out.activatedByWakeeCpu);
                }
                wake[s].reset();
            } else if (!wokenByOther[s]) {
                ++out.wakeupWithoutWaking;
            }
            wokenByOther[s] = false;
            break;
        }
        case TailEvent::Switch: {
            const int w = sideOf(e.pid);
            if (w < 0 || !tail[w]) break;
            if (e.cpu != tail[w]->cpu) {
                ++out.migrated;
            } else if ((e.state & kReportedStateMask) == 0) {
                ++out.preempted;
            } else if ((e.state & kBlockedStates) != 0) {
                out.tails.push_back(double(e.ts - tail[w]->ts));
                out.eventsInside.push_back(double(seenOn(e.cpu) - tail[w]->seenBefore - 1));
                ++out.tailsBySide[w];
            } else {
                ++out.endedOtherwise;
            }
            tail[w].reset();
            break;
        }
        }
        ++seenOn(e.cpu);
    }
    for (int s = 0; s < 2; ++s) {
        out.unfinished += tail[s] ? 1 : 0;
        out.unpairedWaking += wake[s] ? 1 : 0;
    }
    return out;
}

std::string tailName(const Recording& r) {
    return fmt::format("waker_tail_{}{}", r.placement == Placement::SameCpuBatch ? "same_cpu_" : "", kindName(r.kind));
}
std::string windowName(PingPongKind k) { return fmt::format("ttwu_window_{}_cross", kindName(k)); }

// The figures of one recording: the tail, and for two CPUs the window.
std::vector<std::string> figureNames(const Recording& r) {
    if (r.placement == Placement::SameCpuBatch) return {tailName(r)};
    return {tailName(r), windowName(r.kind)};
}

std::vector<Recording> recordings(const TailPlan& plan) {
    std::vector<Recording> out;
    for (PingPongKind k : plan.kinds) out.push_back({k, Placement::TwoCpus});
    for (PingPongKind k : plan.sameCpuKinds) out.push_back({k, Placement::SameCpuBatch});
    return out;
}

const char* kindLabel(PingPongKind k) {
    switch (k) {
    case PingPongKind::Pipe: return "pipe";
    case PingPongKind::Tcp: return "TCP";
    case PingPongKind::Futex: return "futex";
    }
    return "?";
}

void addUnavailable(std::vector<Figure>& out, const Recording& r, const std::string& reason) {
    for (const std::string& name : figureNames(r)) out.push_back(Figure::unavailable(name, reason));
}

// The events every recording here enables.
constexpr const char* kTailEvents[] = {"sched_waking", "sched_wakeup", "sched_switch"};

// The records of one traced run, counted on one CPU.
struct EventCount {
    int cpu = 0;
    std::uint64_t onCpu = 0;
    long long missedEvents = 0;  // as TailParser's
};

int onCountedEvent(tep_event*, tep_record* record, int cpu, void* context) {
    auto* c = static_cast<EventCount*>(context);
    if (record->missed_events != 0) c->missedEvents += record->missed_events > 0 ? record->missed_events : 1;
    if (cpu == c->cpu) ++c->onCpu;
    return pendingSignal() != 0 ? 1 : 0;
}

// The traced run that sizes the others (it also warms up the threads' path and the tracing).
constexpr std::uint64_t kCostWarmupRoundTrips = 1000;

// trace_event_cost: R repetitions of an untraced and a traced run of the same-CPU SCHED_BATCH pipe
// ping-pong, the same number of round trips each, by one pair of threads. Traced is the waker-tail
// recordings' setup (which `inst` has on entry: the three events enabled, the mono clock, the buffer
// size, an empty pid filter) with the pid filter set to the two threads; untraced is no event
// enabled and no pid filter, so that no probe of this instance runs on any trace point. The
// difference per round trip over the events recorded per round trip is the cost of one event, as
// the tails pay it. May leave the events disabled. Throws BenchError (a run failed) and TraceError
// (the instance could not be switched).
Figure measureEventCost(const TailPlan& plan, TraceInstance& inst, tep_handle* tep, const std::string& clock,
                        std::size_t perCpuKb, int stale) {
    PipeLink link;
    PingPong pingPong(link, plan.cpuA, plan.cpuA, Placement::SameCpuBatch);
    bool eventsOn = true, pidsSet = false, twoThreadsOnly = true;
    // Enabling is quick; emptying a pid list waits for an RCU grace period (tens of ms), and so
    // would setting one over another: one pair of threads, one list, switched only when needed.
    auto setTraced = [&](bool on) {
        if (eventsOn != on) {
            for (const char* ev : kTailEvents) {
                if (on) {
                    inst.enableSchedEvent(ev);
                } else {
                    inst.disableSchedEvent(ev);
                }
            }
            eventsOn = on;
        }
        if (on && !pidsSet) twoThreadsOnly = inst.restrictToPids(pingPong.tids(), false) && twoThreadsOnly;
        if (!on && pidsSet) inst.clearPidFilter();
        pidsSet = on;
    };
    struct Result {
        double nsPerRoundTrip = 0;
        std::uint64_t events = 0;  // traced: the records on cpuA
        long long lost = 0;        // traced: overruns and missed events
        double otherShare = 0, stealShare = 0;
    };
    auto runOnce = [&](bool withTrace, std::uint64_t roundTrips) {
        setTraced(withTrace);
        const PingPongRun run = pingPong.run({0, roundTrips}, withTrace ? &inst : nullptr);
        if (run.roundTrips != roundTrips) {
            throw BenchError(fmt::format("the ping-pong ended after {} of {} round trips", run.roundTrips, roundTrips));
        }
        Result r;
        r.nsPerRoundTrip = run.loopSeconds * 1e9 / double(roundTrips);
        r.otherShare = run.otherShare;
        r.stealShare = run.stealShare;
        if (withTrace) {
            EventCount count;
            count.cpu = plan.cpuA;
            inst.iterate(tep, onCountedEvent, &count);
            throwIfInterrupted();
            r.events = count.onCpu;
            r.lost = inst.overruns() + count.missedEvents;
        }
        return r;
    };

    // As many round trips as a traced run makes in plan.seconds: the recordings' length, which their
    // buffer size holds.
    const Result warm = runOnce(true, kCostWarmupRoundTrips);
    const std::uint64_t n = std::max<std::uint64_t>(
        kCostWarmupRoundTrips, std::uint64_t(plan.seconds * 1e9 / std::max(1.0, warm.nsPerRoundTrip)));
    std::vector<double> costs, untracedNs, tracedNs, eventsPerRoundTrip;
    long long lost = 0;
    double otherMax = 0, stealMax = 0;
    for (int rep = 0; rep < plan.eventCostRepetitions; ++rep) {
        throwIfInterrupted();
        // The order alternates, so that neither kind always runs first: traced, untraced; untraced,
        // traced; ... Traced first after the traced warm-up, so that the two runs of a kind that meet
        // between repetitions need no switch in between.
        const bool tracedFirst = rep % 2 == 0;
        Result u, t;
        for (bool withTrace : {tracedFirst, !tracedFirst}) (withTrace ? t : u) = runOnce(withTrace, n);
        if (t.events == 0) {
            return Figure::unavailable(
                kTraceEventCost,
                fmt::format("the traced run of {} round trips recorded no event on CPU {}", n, plan.cpuA));
        }
        const double perRoundTrip = double(t.events) / double(n);
        costs.push_back((t.nsPerRoundTrip - u.nsPerRoundTrip) / perRoundTrip);
        untracedNs.push_back(u.nsPerRoundTrip);
        tracedNs.push_back(t.nsPerRoundTrip);
        eventsPerRoundTrip.push_back(perRoundTrip);
        lost += t.lost;
        otherMax = std::max({otherMax, u.otherShare, t.otherShare});
        stealMax = std::max({stealMax, u.stealShare, t.stealShare});
    }
    if (lost > 0) {
        return Figure::unavailable(
            kTraceEventCost, fmt::format("{} events were lost in the traced runs ({} KiB of ring buffer per CPU): "
                                         "the recorded count is short",
                                         lost, perCpuKb));
    }

    const double eventsMedian = summarize(eventsPerRoundTrip).median;
    Figure f;
    f.name = kTraceEventCost;
    f.available = true;
    f.iterations = n;
    f.samples = std::move(costs);
    f.label = "one sched event recorded (tracefs instance)";
    f.method = fmt::format(
        "(traced - untraced ns per round trip) / recorded events per round trip, for each of {} repetitions of two "
        "runs of {} round trips of a pipe ping-pong with both threads on CPU {}, SCHED_BATCH (each side: {}): one "
        "untraced (no event enabled in this program's tracefs instance and set_event_pid empty: no probe of it on "
        "any trace point), one traced as the waker tails are recorded (sched_waking, sched_wakeup and sched_switch "
        "enabled in the private instance, trace_clock={}, {}, {} KiB of buffer per CPU); the traced run first in "
        "the first repetition and in every other one after it; the same two threads for every run, asleep between "
        "runs; ns per round trip = the first thread's time from its first write() to its last read() / round trips; "
        "recorded events per round trip = the traced run's records on CPU {} (with the few of the run's start and "
        "end) / round trips, median {:.3f}; {} round trips per run so that a traced run lasts ~{} s, from a "
        "{}-round-trip traced warm-up; an average over the events' mix (each round trip records two of each), "
        "including the pid filter's probes; median over the repetitions, spread p25-p75",
        plan.eventCostRepetitions, n, plan.cpuA, link.calls(), clock,
        twoThreadsOnly ? "set_event_pid = the two threads" : "every task's events: set_event_pid unavailable", perCpuKb,
        plan.cpuA, eventsMedian, n, plan.seconds, kCostWarmupRoundTrips);
    f.extra["cpus"] = {plan.cpuA, plan.cpuA};
    f.extra["sched_policy"] = "SCHED_BATCH";
    f.extra["repetitions"] = plan.eventCostRepetitions;
    f.extra["untraced_round_trip_median_ns"] = summarize(untracedNs).median;
    f.extra["traced_round_trip_median_ns"] = summarize(tracedNs).median;
    f.extra["events_per_round_trip_median"] = eventsMedian;
    f.extra["events_enabled"] = {"sched_waking", "sched_wakeup", "sched_switch"};
    f.extra["trace_clock"] = clock;
    f.extra["two_threads_only"] = twoThreadsOnly;
    f.extra["buffer_kb_per_cpu"] = perCpuKb;
    f.extra["other_tasks_cpu_share_max_during_runs"] = otherMax;
    f.extra["steal_share_max_during_runs"] = stealMax;
    if (stale > 0) f.extra["stale_instances_removed"] = stale;
    return f;
}

std::vector<Figure> record(const TailPlan& plan, const std::vector<Recording>& recs) {
    int stale = 0;
    const std::string tracingDir = openTracingDir(stale);

    TraceInstance inst(instanceName());
    const TepHandle tep = inst.parser(tracingDir, {std::begin(kTailEvents), std::end(kTailEvents)});
    TailParser parser;
    tep_event* waking = tep_find_event_by_name(tep.get(), "sched", "sched_waking");
    tep_event* wakeup = tep_find_event_by_name(tep.get(), "sched", "sched_wakeup");
    tep_event* sw = tep_find_event_by_name(tep.get(), "sched", "sched_switch");
    if (!waking || !wakeup || !sw) {
        throw TraceError("this kernel lacks sched:sched_waking, sched:sched_wakeup or sched:sched_switch");
    }
    parser.wakingId = waking->id;
    parser.wakeupId = wakeup->id;
    parser.switchId = sw->id;
    parser.wakingPid = tep_find_field(waking, "pid");
    parser.wakingBy = tep_find_common_field(waking, "common_pid");
    parser.wakeupPid = tep_find_field(wakeup, "pid");
    parser.wakeupTarget = tep_find_field(wakeup, "target_cpu");
    parser.prevPid = tep_find_field(sw, "prev_pid");
    parser.prevState = tep_find_field(sw, "prev_state");
    parser.nextPid = tep_find_field(sw, "next_pid");
    if (!parser.wakingPid || !parser.wakingBy || !parser.wakeupPid || !parser.wakeupTarget || !parser.prevPid ||
        !parser.prevState || !parser.nextPid) {
        throw TraceError(
            "sched_waking/sched_wakeup/sched_switch lack a field used here (pid, common_pid, target_cpu, prev_pid, "
            "prev_state, next_pid)");
    }
    const std::string clock = inst.useMonoClock();
    const std::size_t perCpuKb = inst.sizeBuffers();
    for (const char* ev : kTailEvents) inst.enableSchedEvent(ev);

    std::vector<Figure> out;
    // First, while the pid filter is still empty: setting it then costs no RCU grace period, and with
    // an odd R the runs end untraced, leaving it empty for the first recording below.
    if (plan.eventCost) {
        // Its own failure leaves the recordings below as they are.
        try {
            out.push_back(measureEventCost(plan, inst, tep.get(), clock, perCpuKb, stale));
        } catch (const BenchError& e) {
            out.push_back(Figure::unavailable(kTraceEventCost, std::string("measurement failed: ") + e.what()));
        } catch (const TraceError& e) {
            out.push_back(Figure::unavailable(kTraceEventCost, e.what()));
        }
        // Its untraced runs leave them disabled.
        for (const char* ev : kTailEvents) inst.enableSchedEvent(ev);
    }
    for (const Recording& rec : recs) {
        throwIfInterrupted();
        const PingPongKind kind = rec.kind;
        const bool sameCpu = rec.placement == Placement::SameCpuBatch;
        PingPongRun run;
        std::string calls;
        bool twoThreadsOnly = false;
        try {
            const std::unique_ptr<Link> link = makeLink(kind);
            calls = link->calls();
            PingPong pingPong(*link, plan.cpuA, plan.cpuB, rec.placement);
            // Only the two threads' events: the kernel keeps a waking when the waker or the wakee is
            // listed, a switch when the task leaving or the one coming is.
            twoThreadsOnly = inst.restrictToPids(pingPong.tids(), false);
            run = pingPong.run({plan.seconds, 0}, &inst);
        } catch (const BenchError& e) {
            addUnavailable(out, rec, std::string("measurement failed: ") + e.what());
            continue;
        }
        parser.events.clear();
        parser.missedEvents = 0;
        inst.iterate(tep.get(), onTailEvent, &parser);
        throwIfInterrupted();
        const std::size_t eventCount = parser.events.size();
        const long long lost = inst.overruns();
        TailPairs pairs = pairTails(parser.events, run.tids);

        const std::string where =
            sameCpu ? fmt::format(
                          "with both threads on CPU {}, SCHED_BATCH (woken, a thread waits on the runqueue "
                          "until its waker blocks: no wakeup preemption, no IPI)",
                          plan.cpuA)
                    : fmt::format("between two threads pinned to CPUs {} and {}", plan.cpuA, plan.cpuB);
        const std::string recorded =
            fmt::format("one {:.3f} s recording of a {} ping-pong {} ({} round trips; each side: {})", run.seconds,
                        kindLabel(kind), where, run.roundTrips, calls);
        const std::string source = fmt::format(
            "from a private tracefs instance (trace_clock={}, {}); includes the trace points' own cost", clock,
            twoThreadsOnly ? "events of the two threads only: set_event_pid"
                           : "every task's events: set_event_pid unavailable");
        auto common = [&](Figure& f) {
            f.available = true;
            f.distribution = true;
            f.iterations = 1;
            // Each thread's CPU, the first thread's first.
            f.extra["cpus"] = {plan.cpuA, sameCpu ? plan.cpuA : plan.cpuB};
            if (sameCpu) f.extra["sched_policy"] = "SCHED_BATCH";
            f.extra["run_s"] = run.seconds;
            f.extra["round_trips"] = run.roundTrips;
            f.extra["trace_clock"] = clock;
            f.extra["events"] = eventCount;
            f.extra["two_threads_only"] = twoThreadsOnly;
            f.extra["buffer_overruns"] = lost;
            f.extra["missed_events"] = parser.missedEvents;
            f.extra["buffer_kb_per_cpu"] = perCpuKb;
            f.extra["wakings_by_other_tasks"] = pairs.wakingsByOthers;
            f.extra["other_tasks_cpu_share_during_run"] = run.otherShare;
            f.extra["steal_share_during_run"] = run.stealShare;
            if (stale > 0) f.extra["stale_instances_removed"] = stale;
        };

        const std::uint64_t skipped = pairs.preempted;
        if (pairs.tails.empty()) {
            out.push_back(Figure::unavailable(
                tailName(rec),
                fmt::format("no waking followed by the waker blocking in {} ({} preempted, {} woke the peer again "
                            "before blocking, {} events)",
                            recorded, skipped, pairs.notBlocked, eventCount)));
        } else {
            Figure f;
            f.name = tailName(rec);
            common(f);
            f.samples = std::move(pairs.tails);
            const Summary s = summarize(f.samples);
            f.label = fmt::format("waker runs on after waking, {}{} (p99 {:.0f}, {} skipped)", kindLabel(kind),
                                  sameCpu ? ", 1 CPU, SCHED_BATCH" : "", s.p99, skipped);
            // Pairs per waker: per CPU when each thread has its own, per thread when they share one.
            const std::string bySide =
                sameCpu ? fmt::format(
                              "{} pairs with the first thread (which starts each exchange) as the waker, {} "
                              "with the second",
                              pairs.tailsBySide[0], pairs.tailsBySide[1])
                        : fmt::format("{} pairs with the waker on CPU {}, {} on CPU {}", pairs.tailsBySide[0],
                                      plan.cpuA, pairs.tailsBySide[1], plan.cpuB);
            f.method = fmt::format(
                "sched_switch timestamp of the waker W leaving its CPU blocked (prev_pid W, prev_state S or D) - "
                "the sched_waking timestamp of W waking the other thread (recorded on W's CPU, common_pid W), for "
                "each such waking; pairs where W was switched out runnable in between (prev_state R/R+: preempted) "
                "skipped: {}; wakings after which W woke the peer again before blocking (no tail to measure) left "
                "out: {}; {}; {}; both directions pooled ({}), runs = pairs, spread p10-p90{}",
                skipped, pairs.notBlocked, recorded, source, bySide,
                sameCpu ? fmt::format("; events_inside_tail_median: the median over the pairs of the events recorded "
                                      "on CPU {} after the pair's waking and before its switch (in that CPU's ring "
                                      "buffer order), each costing about trace_event_cost inside the tail",
                                      plan.cpuA)
                        : "");
            f.extra["skipped_preempted"] = skipped;
            f.extra["left_out_woke_peer_again_before_blocking"] = pairs.notBlocked;
            f.extra["left_out_exited"] = pairs.endedOtherwise;
            f.extra["left_out_migrated"] = pairs.migrated;
            f.extra["unfinished_at_end"] = pairs.unfinished;
            if (sameCpu) {
                f.extra["pairs_by_waker_thread"] = {{"first", pairs.tailsBySide[0]}, {"second", pairs.tailsBySide[1]}};
                // What a consumer subtracts, with trace_event_cost: these events' cost, and about one
                // event's for the two at the ends (the waking's is after its timestamp, the switch's
                // after the tail's end).
                f.extra["events_inside_tail_median"] = summarize(pairs.eventsInside).median;
                // The wakeups activated on the waker's own CPU (all of them, the threads being pinned there):
                // no wakelist, no IPI.
                f.extra["wakeups_on_waker_cpu"] = pairs.wakeeOnWakerCpu;
            } else {
                f.extra["pairs_by_waker_cpu"] = {{std::to_string(plan.cpuA), pairs.tailsBySide[0]},
                                                 {std::to_string(plan.cpuB), pairs.tailsBySide[1]}};
            }
            out.push_back(std::move(f));
        }
        // The same-CPU window is ttwu_window_same_cpu's (recorded under a real workload).
        if (sameCpu) continue;

        if (pairs.windows.empty()) {
            out.push_back(Figure::unavailable(
                windowName(kind), fmt::format("no sched_waking/sched_wakeup pair of the two threads across CPUs in {} "
                                              "({} with the wakee on the waker's CPU, {} events)",
                                              recorded, pairs.wakeeOnWakerCpu, eventCount)));
        } else {
            Figure f;
            f.name = windowName(kind);
            common(f);
            f.samples = std::move(pairs.windows);
            f.label = fmt::format("sched_waking->sched_wakeup, {} ping-pong, 2 CPUs", kindLabel(kind));
            f.method = fmt::format(
                "sched_wakeup timestamp - sched_waking timestamp of the same thread, woken by the other thread (the "
                "waking recorded on the waker's CPU, the wakeup's target_cpu the other CPU; each waking paired with "
                "the wakee's next wakeup; {} wakeups recorded on the waker's CPU, which activated the wakee itself, "
                "{} on the wakee's CPU, which the waker's IPI made activate it); {}; {}; both directions pooled, "
                "runs = pairs, spread p10-p90",
                pairs.activatedByWaker, pairs.activatedByWakeeCpu, recorded, source);
            f.extra["wakee_on_waker_cpu_left_out"] = pairs.wakeeOnWakerCpu;
            f.extra["wakeup_recorded_on_waker_cpu"] = pairs.activatedByWaker;
            f.extra["wakeup_recorded_on_wakee_cpu"] = pairs.activatedByWakeeCpu;
            f.extra["unpaired_waking"] = pairs.unpairedWaking;
            f.extra["wakeup_without_waking"] = pairs.wakeupWithoutWaking;
            out.push_back(std::move(f));
        }
    }
    return out;
}

}  // namespace

const char* kindName(PingPongKind kind) {
    switch (kind) {
    case PingPongKind::Pipe: return "pipe";
    case PingPongKind::Tcp: return "tcp";
    case PingPongKind::Futex: return "futex";
    }
    return "?";
}

std::vector<Figure> measureWakerTails(const TailPlan& plan) {
    std::vector<Figure> out;
    std::vector<Recording> recs;
    for (const Recording& r : recordings(plan)) {
        // The same-CPU ping-pongs need no second CPU.
        if (r.placement == Placement::TwoCpus && plan.cpuB < 0) {
            addUnavailable(out, r, plan.noCpuBReason);
        } else {
            recs.push_back(r);
        }
    }
    if (recs.empty() && !plan.eventCost) return out;
    auto allUnavailable = [&](const std::string& reason) {
        for (const Recording& r : recs) addUnavailable(out, r, reason);
        if (plan.eventCost) out.push_back(Figure::unavailable(kTraceEventCost, reason));
    };
    if (geteuid() != 0) {
        allUnavailable(kTailNotRootReason);
        return out;
    }
    try {
        for (Figure& f : record(plan, recs)) out.push_back(std::move(f));
    } catch (const TraceError& e) {
        allUnavailable(e.what());
    }
    return out;
}

}  // namespace sched::calibrate
