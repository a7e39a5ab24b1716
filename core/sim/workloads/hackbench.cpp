// SPDX-License-Identifier: GPL-2.0-or-later
// hackbench.cpp: hackbench and perf bench sched messaging: senders and receivers over pipes or AF_UNIX stream sockets, with the kernel's wait-queue semantics and the exact coalescing of plain reads and writes.
// (The workloads' common contract: sim/workloads.h.)
#include "sim/workloads.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <stdexcept>

namespace sched {
namespace {

// ---------------------------------------------------------------------------
// hackbench

// What a planned step does to a pipe (Channel::PendingOp): a write or read (with pipe->mutex on:
// __pipe_lock() and the copy), or the __pipe_unlock() after it. A plan's last planned step is a
// write or read whose unlock is the plan's real last step: an acquire with no release after it is
// a hold open until a real unlock.
enum OpKind : std::uint8_t { kOpWrite = 0, kOpRead = 1, kOpRelease = 2 };

// A pipe (16 slots of one page; 100-byte writes merge into the tail page) or an
// AF_UNIX stream socket (sk_sndbuf shared by the group's senders).
struct Channel {
    int reader = -1;
    std::int64_t count = 0;                 ///< unread messages
    int pages = 0;                          ///< pipe slots in use
    int tail_written = 0;                   ///< messages written into the tail page
    int head = 0;                           ///< ring index of the head page
    std::array<std::int16_t, 16> unread{};  ///< unread messages per page (ring of the 16 slots)
    bool reader_waiting = false;
    std::deque<int> writers;  ///< exclusive writer waiters (FIFO)
    std::int64_t sent = 0, received = 0;
    // Coalescing: the planned writes and reads on this pipe not applied yet, pend[pendHead..]
    // sorted by key (the next to apply first); a plan that is cut takes its steps after the
    // cut off at once. resW/resR: the writes/reads among them.
    struct PendingOp {
        PlanKey key;
        std::int32_t task;
        std::uint8_t kind;  ///< OpKind
    };
    std::vector<PendingOp> pend;
    std::uint32_t pendHead = 0;  ///< pend[0..pendHead) are applied (dropped in bulk)
    int resW = 0, resR = 0;
    KMutex mx;  ///< pipe->mutex (with the cost model's pipe_lock term on; sockets take none a second task contends for)
};

class Hackbench final : public Workload {
public:
    Hackbench(const HackbenchParams& p, std::uint16_t index) : m_p(p), m_index(index) {
        m_loops = p.loops > 0 ? std::int64_t(p.loops) : kEndlessLoops;
        m_perPage = std::max(1, 4096 / std::max(1, p.datasize));
        m_ppRecip = ((std::uint64_t(1) << 32) + std::uint64_t(m_perPage) - 1) / std::uint64_t(m_perPage);
        // AF_UNIX: sk_sndbuf 212992 (wmem_default) over skb truesize ~ datasize + 704 (estimate).
        m_sockCap = std::max<std::int64_t>(1, 212992 / (p.datasize + 704));
    }
    std::string name() const override { return m_p.perf ? "perf-bench-messaging" : "hackbench"; }
    std::string commandLine() const override {
        // -l 0 (endless) is schedlab's: the tools would pass no message at all.
        const std::string l = m_p.loops > 0 ? std::to_string(m_p.loops) : "0 (endless)";
        if (m_p.perf)
            return fmt::format("perf bench sched messaging -g {} -l {}{}{}", m_p.groups, l, m_p.threads ? " -t" : "", m_p.pipe ? " -p" : "");
        return fmt::format("hackbench -g {} -f {} {}{} -l {} -s {}", m_p.groups, m_p.fds, m_p.threads ? "--threads" : "--process",
                           m_p.pipe ? " --pipe" : "", l, m_p.datasize);
    }

    void start(Engine& e) override {
        const int total = 2 * m_p.fds * m_p.groups;
        m_workers.reserve(std::size_t(total));
        m_chan.resize(std::size_t(m_p.groups * m_p.fds));
        m_coalescing = e.coalescingAllowed();
        m_lean = m_chan.size() > std::size_t(hackbenchLeanPipes());  // lazy pipe state, even while the engine steps event by event
        m_wcost = writeCost(e);
        m_rcost = readCost(e);
        // A read or write that sleeps copies nothing: its syscall path is the 100-byte figure's.
        m_wblock = ioCost(e, true, 100);
        m_rblock = ioCost(e, false, 100);
        // pipe->mutex: the part of each write and read between __pipe_lock() and __pipe_unlock()
        // (at most the whole of it). Off (the pipe_lock term at 0): one step per write or read.
        const CostModel& cm = e.cost();
        m_wHold = std::min(m_wcost, cm.c(CostTerm::pipe_lock, cm.pipe_write_locked * std::max(1, m_p.datasize) / 100));
        m_rHold = std::min(m_rcost, cm.c(CostTerm::pipe_lock, cm.pipe_read_locked * std::max(1, m_p.datasize) / 100));
        m_locks = m_p.pipe && m_wHold > 0 && m_rHold > 0;
        if (m_locks)
            for (auto& c : m_chan) {
                c.mx.setStats(&m_mutexStats);  // one sum for every pipe
                c.mx.setCompact(m_lean);
            }
        m_main = e.spawn(m_index, "hackbench", 1000000 * (m_index + 1), -1, kMain, 0, m_p.hot_set);
        m_total = total;
    }

    Action step(Engine& e, SimTask& t) override {
        switch (t.role) {
        case kMain: return mainStep(e, t);
        case kSender: return m_locks ? senderStepLocked(e, t) : senderStep(e, t);
        default: return m_locks ? receiverStepLocked(e, t) : receiverStep(e, t);
        }
    }

    void offCpu(Engine& e, SimTask& t) override {
        if (!m_locks || t.role == kMain) return;
        Channel& c = m_chan[std::size_t(lockChan(t))];
        sync(e, c);
        const int id = int(t.t.pid - 1000);
        if (c.mx.owner() == id) cutPlansOn(e, c);  // its unlock comes when it runs again: the plans after it assumed it sooner
        c.mx.offCpu(e, id);
    }
    void segmentMoved(Engine& e, SimTask& t) override {
        if (!m_locks || t.role == kMain || !(t.c & kHolding)) return;
        Channel& c = m_chan[std::size_t(lockChan(t))];
        sync(e, c);
        if (c.mx.owner() == int(t.t.pid - 1000)) cutPlansOn(e, c);  // its unlock moved
    }

    bool finished() const override { return m_finished; }
    double messages() const override { return m_p.loops > 0 ? double(std::int64_t(m_p.groups) * m_p.fds * m_p.fds * m_p.loops) : -1; }
    double work(const Engine& e) const override {
        syncAll(e);  // the planned reads before the current event count
        double got = 0;
        for (const auto& c : m_chan) got += double(c.received);
        return got;
    }
    std::string workUnit() const override { return "messages/s"; }
    double progress(const Engine& e) const override {
        if (m_p.loops <= 0) return -1;  // endless: the run's stop decides
        return m_finished ? 1.0 : work(e) / messages();
    }

    void report(const Engine& e, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        const double secs = m_stop > 0 ? double(m_stop - m_go) / 1e9 : double(e.now() - m_go) / 1e9;
        if (m_p.perf) {
            r.output.push_back(fmt::format("# {} sender and receiver {} per group", m_p.fds, m_p.threads ? "threads" : "processes"));
            r.output.push_back(fmt::format("# {} groups == {} {} run", m_p.groups, m_total, m_p.threads ? "threads" : "processes"));
            r.output.push_back("");
            if (m_p.loops > 0) r.output.push_back(fmt::format("     Total time: {:.3f} [sec]", secs));
        } else {
            r.output.push_back(fmt::format("Running in {} mode with {} groups using {} file descriptors each (== {} tasks)",
                                           m_p.threads ? "threaded" : "process", m_p.groups, 2 * m_p.fds, m_total));
            if (m_p.loops > 0) r.output.push_back(fmt::format("Each sender will pass {} messages of {} bytes", m_p.loops, m_p.datasize));
            else r.output.push_back(fmt::format("Each sender passes messages of {} bytes until the run stops", m_p.datasize));
            if (m_p.loops > 0) r.output.push_back(fmt::format("Time: {:.3f}", secs));
        }
        if (m_p.loops <= 0) {
            // Endless: no job time; the rate of messages read since GO is the figure.
            const double got = work(e);
            const double rate = secs > 0 ? got / secs : 0;
            r.output.push_back(fmt::format("(endless: {:.0f} messages read in {:.3f} s since GO, {:.0f} per second)", got, secs, rate));
            r.headline.push_back({"msgs_per_s", "messages/s since GO", rate, false, 0});
        } else if (!m_finished) {
            r.output.push_back("(stopped before the last worker exited)");
        }
        reportPipes(e, r);
        if (std::getenv("SCHEDLAB_DUMP"))
            for (std::size_t i = 0; i < m_chan.size(); ++i)
                r.output.push_back(fmt::format("  pipe {}: count {} pages {} tail {} head {} reader_waiting {} writers {}", i, m_chan[i].count,
                                               m_chan[i].pages, m_chan[i].tail_written, m_chan[i].head, m_chan[i].reader_waiting,
                                               m_chan[i].writers.size()));
        if (m_p.loops > 0) r.headline.push_back({"time_s", m_p.perf ? "Total time (s)" : "Time (s)", secs, true, 3});
    }

    std::string checkInvariants(const Engine& e) const override {
        syncAll(e);  // planned steps before the current event first
        std::int64_t sent = 0, recv = 0;
        for (int id : m_workers) {
            const SimTask& t = e.task(id);
            // Its planned steps behind the current event are on the pipes (syncAll) but not yet in t.a.
            const std::int64_t n = t.a + plannedOpsBehindNow(e, id);
            if (t.role == kSender) sent += n;
            else recv += n;
        }
        std::int64_t inflight = 0, chSent = 0, chRecv = 0;
        for (std::size_t i = 0; i < m_chan.size(); ++i) {
            const Channel& c = m_chan[i];
            if (c.count != c.sent - c.received)
                return fmt::format("hackbench channel {}: {} queued but {} sent - {} read", i, c.count, c.sent, c.received);
            if (c.count < 0) return fmt::format("hackbench channel {}: negative count", i);
            if (m_p.pipe) {
                std::int64_t u = 0;
                for (int k = 0; k < c.pages; ++k) u += c.unread[std::size_t((c.head + k) % 16)];
                if (u != c.count || (c.count == 0) != (c.pages == 0))
                    return fmt::format("hackbench pipe {}: {} pages hold {} unread but {} are queued", i, c.pages, u, c.count);
            }
            inflight += c.count;
            chSent += c.sent;
            chRecv += c.received;
            if (m_locks) {
                if (std::string m = c.mx.check(e); !m.empty()) return fmt::format("hackbench pipe {}: {}", i, m);
            }
            // (With pipe->mutex a reader may sleep in mutex_lock() with messages queued, and the
            // writer that made the pipe non-empty wakes it at its unlock.)
            const bool heldOrLocking = m_locks && (c.mx.owner() >= 0 || (c.reader >= 0 && (e.task(c.reader).c & kLocking)));
            if (c.reader >= 0 && !heldOrLocking && e.task(c.reader).state == TaskState::Blocked && e.task(c.reader).b == kRun && c.count > 0)
                return fmt::format("hackbench channel {}: reader pid {} asleep with {} messages queued (lost wakeup)", i, e.task(c.reader).t.pid,
                                   c.count);
        }
        if (sent != chSent || recv != chRecv || sent - recv != inflight)
            return fmt::format("hackbench: messages not conserved (sent {}, read {}, in flight {})", sent, recv, inflight);
        for (int id : m_workers) {
            const SimTask& t = e.task(id);
            if (t.state == TaskState::Blocked && t.b == kRun && t.role == kSender && !(m_locks && (t.c & kLocking))) {
                const Channel& c = m_chan[std::size_t(chanOf(t, t.a))];
                if (std::find(c.writers.begin(), c.writers.end(), id) == c.writers.end())
                    return fmt::format("hackbench: sender pid {} asleep but not on the pipe's wait queue", t.t.pid);
                // A pipe wakes a writer on every read of a full pipe; a socket when a read leaves
                // wmem at a quarter of sk_sndbuf or less (unix_write_space).
                const bool shouldBeAwake = m_p.pipe ? !full(c) : c.count * 4 <= m_sockCap;
                // (With pipe->mutex, a reader holding it owes the wakeup at its unlock.)
                if (shouldBeAwake && !(m_locks && c.mx.owner() >= 0)) {
                    // Someone must still be on the way to wake it: a writer that waited on this pipe and
                    // runs, or sleeps in mutex_lock() on its way to the write after which it wakes the
                    // next writer (wake_next_writer).
                    bool waker = false;
                    for (int o : m_workers) {
                        const SimTask& w = e.task(o);
                        const bool wWaited = m_locks ? (w.c & kWaitedBit) != 0 : w.c != 0;
                        const bool onItsWay = w.state != TaskState::Blocked || (m_locks && (w.c & kLocking));
                        if (w.role == kSender && w.b == kRun && onItsWay && wWaited && chanOf(w, w.a) == chanOf(t, t.a)) waker = true;
                    }
                    if (!waker)
                        return fmt::format(
                            "hackbench: sender pid {} asleep on pipe {} which has room ({} pages, {} queued) and nobody will wake it (lost wakeup)",
                            t.t.pid, chanOf(t, t.a), c.pages, c.count);
                }
            }
        }
        return {};
    }

    // --- Coalescing -------------------------------------------------------------
    // A sender's writes are plain while its pipe's reader is not waiting and the pipe has room
    // for every write planned on it (writeFits), whoever makes them and in whatever order with
    // the reads; a reader's reads are plain while no writer waits and the pipe holds at
    // least as many messages as it has planned reads (writes only add). Anything that breaks
    // this cuts the plans concerned: a reader starting to wait, a writer queueing, an
    // unplanned write using up the room. In a job with many pipes (m_lean: more than
    // hackbenchLeanPipes()), a pipe applies the planned steps behind the current event before
    // a plan adds to it (the same state as applying them later: nothing new can come before
    // the current event), so it holds only steps still to come, and gives its buffer back
    // when it drains: memory for 100 000 mostly idle pipes stays bounded. A small job keeps
    // its buffers (on the seed hackbench freeing them cost 20 % more instructions) and
    // applies lazily. The results are the same either way (test).
    void plan(Engine& e, SimTask& t) override {
        if (t.role == kMain || t.b != kRun) return;  // the main's phases are numbered apart: its phase 2 (join) is no kRun
        if (m_locks) return planLocked(e, t);
        const std::int64_t total = m_loops * m_p.fds;
        const int id = int(t.t.pid - 1000);  // engine task id (Engine::spawn)
        PlanInfo& pi = planOf(id);
        pi.a0 = t.a;
        pi.ops = 0;
        if (t.role == kSender) {
            if (t.c != 0) return;
            const std::int64_t w = m_wcost;
            const Engine::PlanRun r = e.planRun(w);
            const int room = int(std::min<std::int64_t>(r.room, total - t.a));
            // chanOf(t, m) for m = t.a, t.a + 1, ...: the group's pipes in turn.
            const int base = t.idx - t.idx % m_p.fds;
            int fd = chanOf(t, t.a) - base;
            int j = 0;
            for (; j < room; ++j, fd = fd + 1 == m_p.fds ? 0 : fd + 1) {
                Channel& c = m_chan[std::size_t(base + fd)];
                if (m_lean) sync(e, c);  // what is behind the current event first: only steps still to come
                if (c.reader_waiting || !writeFits(c, c.resW + 1)) break;
                insertOp(c, r.key(j), id, kOpWrite);
                c.resW++;
            }
            e.planTake(r, j, w);
            pi.ops = j;
        } else if (t.role == kReceiver) {
            Channel& c = m_chan[std::size_t(t.idx)];
            if (!c.writers.empty()) return;
            if (m_lean) sync(e, c);
            if (c.count - c.resR < 1) return;  // no message left for a planned read
            const std::int64_t w = m_rcost;
            const Engine::PlanRun r = e.planRun(w);
            // Reads only while the pipe holds a message for each (writes only add).
            const int room = int(std::min<std::int64_t>({std::int64_t(r.room), total - t.a, c.count - c.resR}));
            for (int j = 0; j < room; ++j) insertOp(c, r.key(j), id, kOpRead);
            const int n = std::max(0, room);
            c.resR += n;
            e.planTake(r, n, w);
            pi.ops = n;
        }
    }

    void planEnded(Engine& e, SimTask& t, int done) override {
        const int id = int(t.t.pid - 1000);
        PlanInfo& pi = planOf(id);
        if (m_locks) return planEndedLocked(e, t, pi, done);
        t.a += done;
        // The steps after the current event never happen: off their pipes (a sender's step k
        // writes to pipe chanOf(a0 + k), a reader's to its own). The task's steps on a pipe
        // that are not before the current event are all of this plan (an earlier plan's
        // later steps went when it ended; its earlier ones are before this event).
        if (t.role == kSender) {
            // Each pipe the dead writes are on (at most fds of them), once.
            for (std::int64_t k = done; k < std::min<std::int64_t>(pi.ops, done + m_p.fds); ++k)
                dropPlanned(e, m_chan[std::size_t(chanOf(t, pi.a0 + k))], id);
        } else if (pi.ops > done) {
            dropPlanned(e, m_chan[std::size_t(t.idx)], id);
        }
        pi.ops = 0;
    }

private:
    struct PlanInfo {
        std::int64_t a0 = 0;        ///< t.a when the current plan was made
        std::int64_t ops = 0;       ///< steps in the current plan
        bool firstRelease = false;  ///< pipe->mutex: its first step is the unlock of a hold (then acquire, unlock, ...)
        std::uint8_t npipes = 0;    ///< pipe->mutex: the pipes it has steps on
        std::array<std::int32_t, 8> pipes{};
        PlanKey end;  ///< pipe->mutex: its real last step, the unlock of its last hold
    };
    const PlanInfo& planOf(int id) const {
        static const PlanInfo none;
        return std::size_t(id) < m_plan.size() ? m_plan[std::size_t(id)] : none;
    }
    PlanInfo& planOf(int id) {
        if (std::size_t(id) >= m_plan.size()) m_plan.resize(std::size_t(id) + 1);
        return m_plan[std::size_t(id)];
    }
    // The most pipe pages `n` more writes can need, whatever reads come between (reads only
    // free pages; an emptied pipe starts again from one page).
    std::int64_t pagesBound(const Channel& c, std::int64_t n) const {
        // ceil(x / pp) as a multiplication by m_ppRecip = ceil(2^32 / pp): exact while
        // (x + pp) * pp < 2^32 (here x + pp <= 18 pp and pp <= 4096).
        const auto pp = std::uint64_t(m_perPage);
        const std::uint64_t recip = m_ppRecip;
        const auto ceilPages = [pp, recip](std::int64_t x) { return std::int64_t(((std::uint64_t(x) + pp - 1) * recip) >> 32); };
        if (n > 16 * std::int64_t(pp)) return 17;
        const std::int64_t fresh = ceilPages(n);
        if (c.pages == 0) return fresh;
        return std::max<std::int64_t>(c.pages + ceilPages(std::max<std::int64_t>(0, c.tail_written + n - pp)), fresh);
    }
    // The pipes as schedlab saw them: how often a reader found its pipe empty and how many
    // messages it read per wakeup, how long from the waking write to its first read, how often
    // a writer found its pipe full (and, woken by a read of the full pipe, still full).
    void reportPipes(const Engine& e, WorkloadReport& r) const {
        syncAll(e);  // the planned reads before the current event count
        std::int64_t received = 0;
        for (const auto& c : m_chan) received += c.received;
        const double perWake = m_rSleeps > 0 ? double(received) / double(m_rSleeps) : 0.0;
        const char* what = m_p.pipe ? "pipe" : "socket";
        r.output.push_back(
            fmt::format("(schedlab: receivers waited {} times on an empty {}: {:.1f} messages read per wakeup,", m_rSleeps, what, perWake));
        r.output.push_back(fmt::format(" {:.1f} us from the waking write to the first read at p50, {:.1f} us at p99;",
                                       double(m_readLat.percentile(50)) / 1e3, double(m_readLat.percentile(99)) / 1e3));
        r.output.push_back(
            fmt::format(" senders waited {} times on a full {}, {} of them woken to find it still full)", m_wSleeps, what, m_wSleepsFull));
        r.counters.push_back({"receiver_waits", "receivers waited (empty)", double(m_rSleeps), true, 0});
        r.counters.push_back({"messages_per_receiver_wakeup", "messages per reader wakeup", perWake, false, 1});
        r.counters.push_back({"wake_to_read_p50_us", "wake->first read p50 (us)", double(m_readLat.percentile(50)) / 1e3, true, 1});
        r.counters.push_back({"sender_waits", "senders waited (full)", double(m_wSleeps), true, 0});
        r.counters.push_back({"sender_waits_still_full", "  woken, still full", double(m_wSleepsFull), true, 0});
        r.histograms.push_back({"waking write to first read", m_readLat});
        if (m_locks) {
            const MutexStats& ms = m_mutexStats;
            r.output.back().back() = ';';
            r.output.push_back(
                fmt::format(" pipe->mutex taken {} times, {} of them contended ({:.2f} %): {} got it spinning, {} after sleeping, "
                            "{} handoffs; {:.3f} ms spinning, {:.3f} ms asleep)",
                            ms.acquisitions, ms.contended, ms.acquisitions ? 100.0 * double(ms.contended) / double(ms.acquisitions) : 0.0, ms.spun,
                            ms.slept, ms.handoffs, double(ms.spin_ns) / 1e6, double(ms.sleep_ns) / 1e6));
            mutexCounters(ms, r);
            r.histograms.push_back({"pipe->mutex: contended wait", ms.wait});
        }
    }
    bool writeFits(const Channel& c, std::int64_t n) const {
        if (m_p.pipe) return pagesBound(c, n) <= 16;
        return c.count + n <= m_sockCap;
    }
    // Keeps c.pend sorted by key. Steps come mostly in key order (a pipe holds about 15 on
    // the seed hackbench and a new one goes before less than one of them on average), so this
    // is a short scan from the back.
    // (The fields are written one by one: a PendingOp built on the stack and copied in as a
    // whole was read back in 16-byte pieces over narrower stores, a store-forwarding stall
    // that took a fifth of a coalesced run.)
    static void insertOp(Channel& c, const PlanKey& k, int task, std::uint8_t kind) {
        std::size_t i = c.pend.size();
        c.pend.emplace_back();
        for (; i > c.pendHead && Engine::keyBefore(k, c.pend[i - 1].key); --i) c.pend[i] = c.pend[i - 1];
        Channel::PendingOp& op = c.pend[i];
        op.key.t = k.t;
        op.key.ctime = k.ctime;
        op.key.cpu = k.cpu;
        op.task = task;
        op.kind = kind;
    }
    // Takes the steps of task `id` that are not before the current event off the pipe.
    void dropPlanned(const Engine& e, Channel& c, int id) {
        // c.pend is sorted by key: the steps not before the current event are a suffix of it.
        std::size_t from = c.pend.size();
        while (from > c.pendHead && !e.keyBeforeNow(c.pend[from - 1].key)) --from;
        const auto end = std::remove_if(c.pend.begin() + std::ptrdiff_t(from), c.pend.end(), [&](const Channel::PendingOp& op) {
            if (op.task != id || e.keyBeforeNow(op.key)) return false;
            if (op.kind == kOpWrite) c.resW--;
            else if (op.kind == kOpRead) c.resR--;
            return true;
        });
        c.pend.erase(end, c.pend.end());
    }
    // Applies the planned steps on this pipe whose keys come before the current event.
    void sync(const Engine& e, Channel& c) {
        if (!m_coalescing) return;  // nothing is ever planned (and c.pend is a cache line the step need not touch)
        // The current event's key and the buffer in locals: the pipe's updates cannot change them.
        const Engine::EventKey now = e.nowKey();
        const Channel::PendingOp* const ops = c.pend.data();
        const std::size_t end = c.pend.size();
        std::size_t h = c.pendHead;
        for (; h < end && Engine::keyBefore(ops[h].key, now); ++h) {
            switch (ops[h].kind) {
            case kOpWrite:
                if (m_locks) c.mx.fastLock(const_cast<Engine&>(e), ops[h].task, ops[h].key.t);  // logically const, as syncAll()
                if (!tryWrite(c, false)) throw std::logic_error("hackbench: a planned write found its pipe full");
                c.resW--;
                break;
            case kOpRead:
                if (m_locks) c.mx.fastLock(const_cast<Engine&>(e), ops[h].task, ops[h].key.t);
                if (c.count <= 0) throw std::logic_error("hackbench: a planned read found its pipe empty");
                if (read(c) && !c.writers.empty()) throw std::logic_error("hackbench: a planned read had a writer to wake");
                c.resR--;
                break;
            default: c.mx.fastUnlock(const_cast<Engine&>(e), ops[h].task, ops[h].key.t); break;
            }
        }
        c.pendHead = std::uint32_t(h);
        if (c.pendHead == c.pend.size()) {
            // Drained. A large job's pipe gives its buffer back to the allocator (memory only
            // for steps still to come; a 200 000-task run has 100 000 pipes, most of them idle).
            if (m_lean && c.pendHead) std::vector<Channel::PendingOp>().swap(c.pend);
            else c.pend.clear();
            c.pendHead = 0;
        } else if (c.pendHead >= 64 && 2 * std::size_t(c.pendHead) >= c.pend.size()) {
            c.pend.erase(c.pend.begin(), c.pend.begin() + c.pendHead);
            c.pendHead = 0;
        }
    }
    // Coalescing: every pipe's planned steps before the current event applied (their effects are
    // lazy; a reader of the pipes' totals outside step() calls this first). Logically const.
    void syncAll(const Engine& e) const {
        auto* self = const_cast<Hackbench*>(this);
        for (auto& c : self->m_chan) self->sync(e, c);
    }
    // Every plan with steps on this pipe (all after the current event, once synced) ends.
    void cutPlansOn(Engine& e, Channel& c) {
        if (c.pendHead == c.pend.size()) return;
        // A cut can cut more (pipe->mutex: a hold that ends later than planned): the list is this
        // call's own, on the stack (a pipe's planners are its writers and its reader).
        std::array<int, 64> local;
        std::vector<int> more;
        std::size_t n = 0;
        for (std::size_t i = c.pendHead; i < c.pend.size(); ++i) {
            const int id = c.pend[i].task;
            if (std::find(local.begin(), local.begin() + std::ptrdiff_t(n), id) != local.begin() + std::ptrdiff_t(n)) continue;
            if (n < local.size()) local[n++] = id;
            else if (std::find(more.begin(), more.end(), id) == more.end()) more.push_back(id);
        }
        for (std::size_t k = 0; k < n; ++k) e.cutPlan(local[k]);
        for (int id : more) e.cutPlan(id);
    }

    enum Role : std::uint8_t { kMain = 0, kSender = 1, kReceiver = 2 };
    enum Phase : std::int64_t { kReady = 0, kWaitGo = 1, kRun = 2, kDone = 3, kExited = 4 };

    int chanOf(const SimTask& t, std::int64_t msg) const {
        // Sender idx = group * F + i writes to its group's receivers in fd order. (32-bit
        // division where it fits: a 64-bit one was a tenth of the step's time.)
        const auto fds = std::uint32_t(m_p.fds);
        const auto idx = std::uint32_t(t.idx);
        const std::uint32_t fd = msg <= std::int64_t(UINT32_MAX) ? std::uint32_t(msg) % fds : std::uint32_t(std::uint64_t(msg) % fds);
        return int(idx - idx % fds + fd);
    }
    bool full(const Channel& c) const {
        if (m_p.pipe) return c.pages >= 16;
        return c.count >= m_sockCap;
    }

    // pipe_write / unix_stream_sendmsg of one message; false when it must wait.
    bool tryWrite(Channel& c, bool waited) {
        if (m_p.pipe) {
            // Merge into the tail page (only on the first attempt, before waiting).
            if (!waited && c.count > 0 && c.pages > 0 && c.tail_written < m_perPage) {
                c.tail_written++;
                c.unread[std::size_t((c.head + c.pages - 1) % 16)]++;
            } else if (c.pages < 16) {
                c.pages++;
                c.tail_written = 1;
                c.unread[std::size_t((c.head + c.pages - 1) % 16)] = 1;
            } else {
                return false;
            }
        } else if (c.count >= m_sockCap) {
            return false;
        }
        c.count++;
        c.sent++;
        return true;
    }
    // pipe_read of one message; returns whether a writer should be woken.
    bool read(Channel& c) {
        bool wakeWriter;
        if (m_p.pipe) {
            wakeWriter = c.pages >= 16;  // was_full: 6.1 wakes a writer on every read of a full pipe
            // The head buffer is released (its slot freed) once fully read, even if it is the tail.
            if (--c.unread[std::size_t(c.head)] == 0) {
                c.head = (c.head + 1) % 16;
                c.pages--;
                if (c.pages == 0) c.tail_written = 0;
            }
        } else {
            // unix_write_space(): writers wake when wmem drops to a quarter of sndbuf.
            wakeWriter = (c.count - 1) * 4 <= m_sockCap && !c.writers.empty();
        }
        c.count--;
        c.received++;
        return wakeWriter;
    }

    /// A write or read of `bytes`: the cost model's 100-byte figure, scaled by the size.
    std::int64_t ioCost(const Engine& e, bool write, int bytes) const {
        const CostModel& cm = e.cost();
        const std::int64_t per100 = write ? (m_p.pipe ? cm.pipe_write : cm.socket_send) : (m_p.pipe ? cm.pipe_read : cm.socket_recv);
        return cm.c(CostTerm::syscall, per100 * std::max(1, bytes) / 100);
    }
    std::int64_t writeCost(const Engine& e) const { return ioCost(e, true, m_p.datasize); }
    std::int64_t readCost(const Engine& e) const { return ioCost(e, false, m_p.datasize); }

    [[gnu::noinline, gnu::cold]] Action mainStep(Engine& e, SimTask& t) {
        // a: workers created; b: phase (0 create, 1 wait ready, 4 GO's wakeups, 2 join, 3 done); c: the GO's or the join's index.
        if (t.b == 0) {
            if (t.a < m_total) {
                // Per group: F receivers, then F senders (hackbench's group()).
                const int per = 2 * m_p.fds;
                const int g = int(t.a) / per, k = int(t.a) % per;
                const bool recv = k < m_p.fds;
                const int i = recv ? k : k - m_p.fds;
                const int mm = m_p.threads ? t.mm : t.mm + 1 + int(t.a);
                const int id = e.spawn(m_index, recv ? "hackbench-recv" : "hackbench-send", mm, e.current(), recv ? kReceiver : kSender,
                                       g * m_p.fds + i, m_p.hot_set);
                m_workers.push_back(id);
                if (std::size_t(id) >= m_wokenAt.size()) m_wokenAt.resize(std::size_t(id) + 1, -1);
                if (recv) m_chan[std::size_t(g * m_p.fds + i)].reader = id;
                t.a++;
                return Action::run(1000);
            }
            t.b = 1;
        }
        if (t.b == 1) {
            // read() one ready byte per worker; sleep while the ready pipe is empty.
            if (m_ready < m_total) {
                m_mainWaiting = true;
                return Action::block();
            }
            m_mainWaiting = false;
            // GO: gettimeofday(start); write one byte to the wake fd: every poller wakes (sync).
            m_go = e.now();
            e.metrics().resetCounters(e.now());
            m_goFlag = true;
            t.b = 4;
            t.c = 0;
        }
        if (t.b == 4) {
            // The write's __wake_up_common() wakes the pollers one after the other: each wakeup
            // at its own time, after the ones before it (a wakeup over time).
            while (t.c < std::int64_t(m_workers.size())) {
                SimTask& w = e.task(m_workers[std::size_t(t.c++)]);
                if (w.b != kWaitGo) continue;
                w.b = kRun;
                e.wake(m_workers[std::size_t(t.c - 1)], true);
                return Action::run(e.cost().c(CostTerm::syscall, 100));
            }
            t.b = 2;
            t.c = 0;
            return Action::run(writeCost(e));
        }
        if (t.b == 2) {
            while (t.c < std::int64_t(m_workers.size()) && e.task(m_workers[std::size_t(t.c)]).b == kExited) t.c++;
            if (t.c < std::int64_t(m_workers.size())) {
                m_joinWait = m_workers[std::size_t(t.c)];
                return Action::block();  // pthread_join / waitpid
            }
            m_joinWait = -1;
            m_stop = e.now();
            m_finished = true;
            t.b = 3;
            e.workloadFinished();
            return Action::exit();
        }
        return Action::exit();
    }

    [[gnu::noinline, gnu::cold]] Action readyStep(Engine& e, SimTask& t) {
        if (t.b == kReady) {
            m_ready++;
            if (m_mainWaiting) {
                m_mainWaiting = false;
                e.wake(m_main, true);
            }
            t.b = m_goFlag ? kRun : kWaitGo;
            e.charge(writeCost(e));
            return t.b == kWaitGo ? Action::block() : Action::run(1);
        }
        if (t.b == kWaitGo) return Action::block();  // poll() until GO
        return Action::run(0);
    }

    [[gnu::noinline, gnu::cold]] Action exitStep(Engine& e, SimTask& t) {
        t.b = kDone;  // leaving its loop; do_exit() costs exit_cost, then onExit()
        e.charge(e.cost().exit_cost);
        return Action::exit();
    }

    void onExit(Engine& e, SimTask& t) override {
        if (t.role == kMain) return;
        t.b = kExited;
        if (m_joinWait == e.current()) {
            m_joinWait = -1;
            e.wake(m_main, false);  // pthread_join's futex (CLONE_CHILD_CLEARTID) / waitpid
        }
    }

    // --- pipe->mutex --------------------------------------------------------------
    // pipe_write() and pipe_read() hold pipe->mutex around their copy and wake after
    // __pipe_unlock(). With the mutex on (m_locks), a write or read is two steps: __pipe_lock()
    // and the copy (the message goes in or out), then the hold (m_wHold / m_rHold of work);
    // __pipe_unlock() and the wakeups, then the rest of the syscall and the loop. A worker's t.c:
    // kWaitedBit a writer that waited on a full pipe; kLocking inside mutex_lock() (spinning or
    // asleep: its step retries); kHolding its next step unlocks; kWakeBit the wakeup that unlock
    // owes (a writer: the pipe was empty; a reader: it was full).
    static constexpr std::int64_t kWaitedBit = 1, kLocking = 2, kHolding = 4, kWakeBit = 8;
    // Cuts the plans with a step on the pipe before `k` (a real hold that ends at k).
    void cutPlansBefore(Engine& e, Channel& c, const PlanKey& k) {
        std::array<int, 64> ids;
        std::size_t n = 0;
        for (std::size_t i = c.pendHead; i < c.pend.size() && n < ids.size() && Engine::keyBefore(c.pend[i].key, k); ++i)
            if (std::find(ids.begin(), ids.begin() + std::ptrdiff_t(n), c.pend[i].task) == ids.begin() + std::ptrdiff_t(n)) ids[n++] = c.pend[i].task;
        if (n == ids.size()) return cutPlansOn(e, c);
        for (std::size_t j = 0; j < n; ++j) e.cutPlan(ids[j]);
    }
    // The pipe whose mutex the worker is taking or holds.
    int lockChan(const SimTask& t) const {
        if (t.role == kReceiver) return t.idx;
        return chanOf(t, (t.c & kHolding) ? t.a - 1 : t.a);
    }
    // __pipe_lock() by the stepping worker, a real step. The plans with a step on this pipe still
    // to come are cut first: their holds assumed the lock free, and a planned hold in progress must
    // end in a real unlock (it lets a spinner in or wakes a waiter). True when it holds the lock;
    // else `wait` is what its step returns.
    bool pipeLock(Engine& e, SimTask& t, Channel& c, Action& wait) {
        // A free lock is taken now; the plans whose holds would start before this one's unlock
        // are cut once its unlock's time is known (planLocked()).
        if (c.mx.owner() >= 0 || !c.mx.uncontended()) cutPlansOn(e, c);
        switch (c.mx.lock(e, e.current())) {
        case KMutex::Lock::Acquired: t.c &= ~kLocking; return true;
        case KMutex::Lock::Spin:
            t.c |= kLocking;
            wait = Action::run(KMutex::kSpinNs);
            return false;
        case KMutex::Lock::Sleep:
            t.c |= kLocking;
            wait = Action::block();
            return false;
        case KMutex::Lock::Yield:
            t.c |= kLocking;
            wait = Action::run(0);  // need_resched: preempted here, retries when it runs again
            return false;
        }
        return false;
    }
    void wakeNextWriter(Engine& e, Channel& c) {
        const int w = c.writers.front();
        c.writers.pop_front();
        e.wake(w, true);
    }

    Action senderStepLocked(Engine& e, SimTask& t) {
        const int id = e.current();
        if (t.c & kHolding) {
            // __pipe_unlock(), then the wakeups: the reader if the pipe was empty, the next
            // writer if this one had waited and left room (wake_next_writer).
            Channel& c = m_chan[std::size_t(chanOf(t, t.a - 1))];
            sync(e, c);
            c.mx.unlock(e, id);
            const bool wasEmpty = t.c & kWakeBit, waited = t.c & kWaitedBit;
            t.c = 0;
            if (wasEmpty && c.reader_waiting) {
                c.reader_waiting = false;
                m_wokenAt[std::size_t(c.reader)] = e.now();
                e.wake(c.reader, true);
            }
            if (waited && !full(c) && !c.writers.empty()) wakeNextWriter(e, c);
            return Action::run(m_wcost - m_wHold);
        }
        if (t.b >= kDone) return Action::exit();
        if (t.b != kRun) return readyStep(e, t);
        const std::int64_t total = m_loops * m_p.fds;
        if (!(t.c & kLocking) && t.a >= total) return exitStep(e, t);
        Channel& c = m_chan[std::size_t(chanOf(t, t.a))];
        sync(e, c);
        Action wait;
        if (!pipeLock(e, t, c, wait)) return wait;
        const bool waited = t.c & kWaitedBit;
        const bool wasEmpty = c.count == 0;
        if (!tryWrite(c, waited)) {
            // Full: pipe_write() lets go of the mutex and waits on wr_wait; the path up to
            // schedule() as in the mutex-less model.
            c.mx.unlock(e, id);
            m_wSleeps++;
            m_wSleepsFull += waited;
            t.c = kWaitedBit;
            c.writers.push_back(id);
            if (c.resR > 0) e.cutPlan(c.reader);  // its planned reads may now have a writer to wake
            e.charge(m_wblock);
            return Action::block();
        }
        t.a++;
        t.c = (waited ? kWaitedBit : 0) | kHolding | (wasEmpty ? kWakeBit : 0);
        if (c.resW > 0 && !writeFits(c, c.resW)) cutPlansOn(e, c);  // no room left for the planned writes
        return Action::run(m_wHold);
    }

    Action receiverStepLocked(Engine& e, SimTask& t) {
        const int id = e.current();
        Channel& c = m_chan[std::size_t(t.idx)];
        if (t.c & kHolding) {
            // __pipe_unlock(), then a writer woken if the pipe was full.
            sync(e, c);
            c.mx.unlock(e, id);
            const bool wasFull = t.c & kWakeBit;
            t.c = 0;
            if (wasFull && !c.writers.empty()) wakeNextWriter(e, c);
            return Action::run(m_rcost - m_rHold);
        }
        if (t.b >= kDone) return Action::exit();
        if (t.b != kRun) return readyStep(e, t);
        const std::int64_t total = m_loops * m_p.fds;
        if (!(t.c & kLocking) && t.a >= total) return exitStep(e, t);
        sync(e, c);
        Action wait;
        if (!pipeLock(e, t, c, wait)) return wait;
        if (c.count == 0) {
            // Empty: pipe_read() lets go of the mutex and waits on rd_wait; a write before it
            // sleeps wakes it on its runqueue, as in the mutex-less model.
            c.mx.unlock(e, id);
            m_rSleeps++;
            c.reader_waiting = true;
            cutPlansOn(e, c);  // the next write wakes the reader
            e.charge(m_rblock);
            return Action::block();
        }
        if (std::int64_t& woken = m_wokenAt[std::size_t(id)]; woken >= 0) {
            m_readLat.record(e.now() - woken);
            woken = -1;
        }
        const bool wasFull = read(c);
        t.a++;
        t.c = kHolding | (wasFull ? kWakeBit : 0);
        return Action::run(m_rHold);
    }

    // The pipe's mutex is free from kA to kR as planned so far: nobody in mutex_lock(), no hold
    // (applied or planned) open at kA, and no planned step on the pipe between kA and kR.
    static bool lockFree(const Channel& c, const PlanKey& kA, const PlanKey& kR) {
        if (!c.mx.uncontended()) return false;
        std::size_t i = c.pend.size();
        while (i > c.pendHead && Engine::keyBefore(kA, c.pend[i - 1].key)) --i;
        const bool freeAt = i > c.pendHead ? c.pend[i - 1].kind == kOpRelease : c.mx.owner() < 0;
        return freeAt && (i == c.pend.size() || Engine::keyBefore(kR, c.pend[i].key));
    }
    static void addPipe(PlanInfo& pi, int ci) {
        for (int k = 0; k < pi.npipes; ++k)
            if (pi.pipes[std::size_t(k)] == ci) return;
        pi.pipes[pi.npipes++] = ci;
    }
    // Takes the op of `task` at key `k` off the pipe (a tentative unlock the plan did not keep).
    static void eraseOp(Channel& c, const PlanKey& k, int task) {
        for (std::size_t i = c.pend.size(); i > c.pendHead; --i) {
            const Channel::PendingOp& op = c.pend[i - 1];
            if (op.task == task && op.key.t == k.t && op.key.ctime == k.ctime && op.key.cpu == k.cpu) {
                c.pend.erase(c.pend.begin() + std::ptrdiff_t(i - 1));
                return;
            }
        }
    }

    // Plans [unlock,] (write or read, unlock)*, ending with a write or read whose unlock is the
    // real step: each hold fits where the pipe's mutex is free, each write or read is plain
    // (as without the mutex), and no unlock owes a wakeup.
    void planLocked(Engine& e, SimTask& t) {
        if (t.c & kLocking) return;  // spinning
        const int id = int(t.t.pid - 1000);
        const bool sender = t.role == kSender;
        if (t.c & kHolding) {
            // It took the lock in the step just done: the plans whose holds start before its
            // unlock (this step's end) are cut.
            Channel& hc = m_chan[std::size_t(lockChan(t))];
            const Engine::PlanRun r0 = e.planRun(1);
            cutPlansBefore(e, hc, r0.key(0));
        }
        if (t.c & kWaitedBit) return;  // a writer that waited: its unlock may wake the next
        const std::int64_t total = m_loops * m_p.fds;
        const std::int64_t hold = sender ? m_wHold : m_rHold, rest = (sender ? m_wcost : m_rcost) - hold;
        PlanInfo& pi = planOf(id);
        pi.a0 = t.a;
        pi.ops = 0;
        pi.npipes = 0;
        pi.firstRelease = (t.c & kHolding) != 0;
        bool holding = pi.firstRelease;
        Channel* holdCh = nullptr;
        if (holding) {
            holdCh = &m_chan[std::size_t(lockChan(t))];
            if (t.c & kWakeBit) return;  // its unlock may owe a wakeup
            if (!holdCh->mx.uncontended()) return;
            addPipe(pi, lockChan(t));
        }
        for (std::int64_t a = t.a; a < total; ++a) {
            const Engine::PlanRun r = e.planRun(holding ? rest : hold);
            if (r.room < (holding ? 2 : 1)) break;
            PlanKey kRel0{}, kAcq, kRel;
            if (holding) {
                kRel0 = r.key(0);
                kAcq = PlanKey{r.t0 + r.dur, r.t0, r.cpu};
                kRel = PlanKey{kAcq.t + e.planRun(hold).dur, kAcq.t, r.cpu};
            } else {
                kAcq = r.key(0);
                kRel = PlanKey{r.t0 + r.dur, r.t0, r.cpu};
            }
            const int ci = sender ? chanOf(t, a) : t.idx;
            Channel& c = m_chan[std::size_t(ci)];
            if (m_lean) sync(e, c);
            if (holding) insertOp(*holdCh, kRel0, id, kOpRelease);  // first: the next hold may be on the same pipe
            const bool plain = sender ? !c.reader_waiting && writeFits(c, c.resW + 1) : c.writers.empty() && c.count - c.resR >= 1;
            if (!plain || !lockFree(c, kAcq, kRel)) {
                if (holding) eraseOp(*holdCh, kRel0, id);
                break;
            }
            if (holding) {
                e.planTake(r, 1, rest);
                pi.ops++;
            }
            insertOp(c, kAcq, id, sender ? kOpWrite : kOpRead);
            (sender ? c.resW : c.resR)++;
            e.planTake(e.planRun(hold), 1, hold);
            pi.ops++;
            addPipe(pi, ci);
            holding = true;
            holdCh = &c;
            pi.end = kRel;
        }
    }

    void planEndedLocked(Engine& e, SimTask& t, PlanInfo& pi, int done) {
        const int id = int(t.t.pid - 1000);
        // Its steps were [unlock,] write or read, unlock, ...: the first `done` happened.
        const int acquires = pi.firstRelease ? done / 2 : (done + 1) / 2;
        const bool holding = pi.firstRelease ? done % 2 == 0 : done % 2 == 1;
        // (A plan cut inside its last hold has done all its steps, but its unlock may come late too.)
        const bool early = !e.nowIs(pi.end);
        t.a += acquires;
        t.c = holding ? kHolding : 0;  // a planned hold owes no wakeup, and a planning writer had not waited
        for (int k = 0; k < pi.npipes; ++k) dropPlanned(e, m_chan[std::size_t(pi.pipes[std::size_t(k)])], id);
        pi.ops = 0;
        pi.npipes = 0;
        if (holding && early) {
            // Cut inside a hold: its unlock is a real step now, maybe later than planned (a
            // preemption, a slower SMT sibling); the plans after it on the pipe assumed it on time.
            Channel& c = m_chan[std::size_t(lockChan(t))];
            sync(e, c);
            cutPlansOn(e, c);
        }
    }
    // The writes or reads among the planned steps of `id` behind the current event.
    std::int64_t plannedOpsBehindNow(const Engine& e, int id) const {
        const int k = e.plannedStepsBehindNow(id);
        if (!m_locks) return k;
        return planOf(id).firstRelease ? k / 2 : (k + 1) / 2;
    }

    Action senderStep(Engine& e, SimTask& t) {
        if (t.b >= kDone) return Action::exit();
        if (t.b != kRun) return readyStep(e, t);
        const std::int64_t total = m_loops * m_p.fds;
        if (t.a >= total) return exitStep(e, t);
        Channel& c = m_chan[std::size_t(chanOf(t, t.a))];
        sync(e, c);
        const bool waited = t.c != 0;
        const bool wasEmpty = c.count == 0;
        if (!tryWrite(c, waited)) {
            m_wSleeps++;
            m_wSleepsFull += waited;  // woken by a read of the full pipe, and it is still full (wait_event's recheck)
            t.c = 1;
            c.writers.push_back(e.current());
            if (c.resR > 0) e.cutPlan(c.reader);  // its reads may now have a writer to wake
            // The write that finds the pipe full runs its syscall path up to schedule()'s
            // deactivate_task(); a read in that window wakes it while it is still on its
            // runqueue (ttwu_runnable) and it writes on without a context switch.
            e.charge(m_wblock);
            return Action::block();
        }
        t.a++;
        t.c = 0;
        if (c.resW > 0 && !writeFits(c, c.resW)) cutPlansOn(e, c);  // no room left for the planned writes
        if (wasEmpty && c.reader_waiting) {                         // pipe_write: was_empty -> wake the reader (sync)
            c.reader_waiting = false;
            m_wokenAt[std::size_t(c.reader)] = e.now();
            e.wake(c.reader, true);
        }
        if (waited && !full(c) && !c.writers.empty()) {  // wake_next_writer
            const int w = c.writers.front();
            c.writers.pop_front();
            e.wake(w, true);
        }
        return Action::run(m_wcost);
    }

    Action receiverStep(Engine& e, SimTask& t) {
        if (t.b >= kDone) return Action::exit();
        if (t.b != kRun) return readyStep(e, t);
        const std::int64_t total = m_loops * m_p.fds;
        if (t.a >= total) return exitStep(e, t);
        Channel& c = m_chan[std::size_t(t.idx)];
        sync(e, c);
        if (c.count == 0) {
            m_rSleeps++;
            c.reader_waiting = true;
            cutPlansOn(e, c);  // the next write wakes the reader
            // pipe_read() that finds the pipe empty: unlock, prepare_to_wait_exclusive(), the
            // pipe_readable() recheck, then schedule(). Until deactivate_task() the reader is
            // current and on its runqueue: a write in that window wakes it through
            // ttwu_runnable() (or its recheck sees the data) and it reads on, no switch.
            e.charge(m_rblock);
            return Action::block();
        }
        if (std::int64_t& woken = m_wokenAt[std::size_t(e.current())]; woken >= 0) {
            m_readLat.record(e.now() - woken);  // from the write that woke it to this, its first read
            woken = -1;
        }
        const bool wakeWriter = read(c);
        t.a++;
        if (wakeWriter && !c.writers.empty()) {
            const int w = c.writers.front();
            c.writers.pop_front();
            e.wake(w, true);
        }
        return Action::run(m_rcost);
    }

public:
    void state(StateArchive& ar) override {
        const auto key = [](StateArchive& a, PlanKey& k) { a(k.t, k.ctime, k.cpu); };
        ar(m_coalescing, m_lean, m_wcost, m_rcost, m_wblock, m_rblock, m_wHold, m_rHold, m_locks, m_perPage, m_ppRecip, m_sockCap, m_loops);
        ar(m_main, m_total, m_ready, m_mainWaiting, m_goFlag, m_joinWait, m_go, m_stop, m_finished);
        ar.vec(m_workers);
        ar.each(m_chan, [&](StateArchive& a, Channel& c) {
            a(c.reader, c.count, c.pages, c.tail_written, c.head);
            for (auto& u : c.unread) a(u);
            a(c.reader_waiting);
            a.deq(c.writers);
            a(c.sent, c.received);
            a.each(c.pend, [&](StateArchive& b, Channel::PendingOp& op) {
                key(b, op.key);
                b(op.task, op.kind);
            });
            a(c.pendHead, c.resW, c.resR);
            c.mx.state(a);
            if (a.loading() && m_locks) {
                c.mx.setStats(&m_mutexStats);
                c.mx.setCompact(m_lean);
            }
        });
        ar.each(m_plan, [&](StateArchive& a, PlanInfo& p) {
            a(p.a0, p.ops, p.firstRelease, p.npipes);
            for (auto& v : p.pipes) a(v);
            key(a, p.end);
        });
        ar(m_rSleeps, m_wSleeps, m_wSleepsFull);
        ar.vec(m_wokenAt);
        m_readLat.state(ar);
        m_mutexStats.state(ar);
    }
    std::int64_t mutexIndex(const KMutex* m) const override {
        for (std::size_t i = 0; i < m_chan.size(); ++i)
            if (&m_chan[i].mx == m) return std::int64_t(i);
        return -1;
    }
    KMutex* mutexAt(std::int64_t i) override { return i >= 0 && std::size_t(i) < m_chan.size() ? &m_chan[std::size_t(i)].mx : nullptr; }

private:
    HackbenchParams m_p;
    bool m_coalescing = false;
    bool m_lean = false;                      ///< many pipes: plans apply what is behind them, drained pipes free their buffers
    std::int64_t m_wcost = 0, m_rcost = 0;    ///< writeCost()/readCost(): the cost model is fixed for a run
    std::int64_t m_wblock = 0, m_rblock = 0;  ///< a write or read that finds the pipe full or empty, until it sleeps
    std::int64_t m_wHold = 0, m_rHold = 0;    ///< pipe->mutex: the part of a write or read under it
    bool m_locks = false;                     ///< pipes with pipe->mutex (the pipe_lock term on)
    std::uint16_t m_index;
    int m_perPage = 40;
    std::uint64_t m_ppRecip = 1;  ///< ceil(2^32 / m_perPage) (pagesBound)
    std::int64_t m_sockCap = 1;
    /// Each sender's loops: -l, or for an endless job (-l 0) more than a run reaches (2^40
    /// rounds of every pipe: 10^4 simulated days at a message per nanosecond).
    static constexpr std::int64_t kEndlessLoops = std::int64_t(1) << 40;
    std::int64_t m_loops = 0;
    int m_main = -1;
    int m_total = 0;
    int m_ready = 0;
    bool m_mainWaiting = false;
    bool m_goFlag = false;
    int m_joinWait = -1;
    std::int64_t m_go = 0, m_stop = 0;
    bool m_finished = false;
    std::vector<int> m_workers;
    std::vector<Channel> m_chan;
    std::vector<PlanInfo> m_plan;  ///< by engine task id
    // What the pipes did (report(): messages per reader wakeup is what messages per context
    // switch comes from). Counted in real steps only: a planned step never sleeps or is the
    // first after a wakeup, so the counts are the same with and without coalescing.
    std::int64_t m_rSleeps = 0;           ///< reads that found the pipe empty (the reader waits)
    std::int64_t m_wSleeps = 0;           ///< writes that found it full (the writer waits)
    std::int64_t m_wSleepsFull = 0;       ///< of those, a woken writer's retry that found it still full
    std::vector<std::int64_t> m_wokenAt;  ///< by task id: when a write woke the waiting reader, -1 after its first read
    LatencyHistogram m_readLat;           ///< a waiting reader: from the write that wakes it to its first read
    MutexStats m_mutexStats;              ///< every pipe->mutex (m_locks)
};

// ---------------------------------------------------------------------------
// schbench

}  // namespace

namespace {
std::atomic<int> g_leanPipes{4096};
}
int hackbenchLeanPipes() { return g_leanPipes.load(std::memory_order_relaxed); }
void setHackbenchLeanPipes(int n) { g_leanPipes.store(n, std::memory_order_relaxed); }

std::unique_ptr<Workload> makeHackbench(const HackbenchParams& p, std::uint16_t index) { return std::make_unique<Hackbench>(p, index); }

}  // namespace sched
