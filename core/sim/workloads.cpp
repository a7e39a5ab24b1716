// SPDX-License-Identifier: GPL-2.0-or-later
// workloads.cpp: hackbench, schbench (classic, 2023) and stress-ng cpu-load as
// engine task programs. Each step() applies the effect of the work just done
// (a write, a read, a futex wake) and returns the next piece of work; blocking
// follows the kernel's wait-queue semantics (register, block, re-check on wake).
#include "sim/workloads.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>

namespace sched {
namespace {

// ---------------------------------------------------------------------------
// hackbench

// A pipe (16 slots of one page; 100-byte writes merge into the tail page) or an
// AF_UNIX stream socket (sk_sndbuf shared by the group's senders).
struct Channel {
    int reader = -1;
    std::int64_t count = 0;          ///< unread messages
    int pages = 0;                   ///< pipe slots in use
    int tail_written = 0;            ///< messages written into the tail page
    int head = 0;                    ///< ring index of the head page
    std::array<std::int16_t, 16> unread{};  ///< unread messages per page (ring of the 16 slots)
    bool reader_waiting = false;
    std::deque<int> writers;         ///< exclusive writer waiters (FIFO)
    std::int64_t sent = 0, received = 0;
    // Coalescing: the planned writes and reads on this pipe not applied yet, pend[pendHead..]
    // sorted by key (the next to apply first); a plan that is cut takes its steps after the
    // cut off at once. resW/resR: the writes/reads among them.
    struct PendingOp {
        PlanKey key;
        std::int32_t task;
        bool write;
    };
    std::vector<PendingOp> pend;
    std::uint32_t pendHead = 0;  ///< pend[0..pendHead) are applied (dropped in bulk)
    int resW = 0, resR = 0;
};

class Hackbench final : public Workload {
public:
    Hackbench(const HackbenchParams& p, std::uint16_t index) : m_p(p), m_index(index) {
        m_perPage = std::max(1, 4096 / std::max(1, p.datasize));
        m_ppRecip = ((std::uint64_t(1) << 32) + std::uint64_t(m_perPage) - 1) / std::uint64_t(m_perPage);
        // AF_UNIX: sk_sndbuf 212992 (wmem_default) over skb truesize ~ datasize + 704 (estimate).
        m_sockCap = std::max<std::int64_t>(1, 212992 / (p.datasize + 704));
    }
    std::string name() const override { return m_p.perf ? "perf-bench-messaging" : "hackbench"; }
    std::string commandLine() const override {
        if (m_p.perf)
            return fmt::format("perf bench sched messaging -g {} -l {}{}{}", m_p.groups, m_p.loops, m_p.threads ? " -t" : "",
                               m_p.pipe ? " -p" : "");
        return fmt::format("hackbench -g {} -f {} {}{} -l {} -s {}", m_p.groups, m_p.fds, m_p.threads ? "--threads" : "--process",
                           m_p.pipe ? " --pipe" : "", m_p.loops, m_p.datasize);
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
        m_main = e.spawn(m_index, "hackbench", 1000000 * (m_index + 1), -1, kMain, 0, m_p.hot_set);
        m_total = total;
    }

    Action step(Engine& e, SimTask& t) override {
        switch (t.role) {
        case kMain: return mainStep(e, t);
        case kSender: return senderStep(e, t);
        default: return receiverStep(e, t);
        }
    }

    bool finished() const override { return m_finished; }
    double messages() const override { return double(std::int64_t(m_p.groups) * m_p.fds * m_p.fds * m_p.loops); }
    double progress(const Engine& e) const override {
        syncAll(e);  // the planned reads before the current event count
        double got = 0;
        for (const auto& c : m_chan) got += double(c.received);
        return m_finished ? 1.0 : got / messages();
    }

    void report(const Engine& e, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        const double secs = m_stop > 0 ? double(m_stop - m_go) / 1e9 : double(e.now() - m_go) / 1e9;
        if (m_p.perf) {
            r.output.push_back(fmt::format("# {} sender and receiver {} per group", m_p.fds, m_p.threads ? "threads" : "processes"));
            r.output.push_back(fmt::format("# {} groups == {} {} run", m_p.groups, m_total, m_p.threads ? "threads" : "processes"));
            r.output.push_back("");
            r.output.push_back(fmt::format("     Total time: {:.3f} [sec]", secs));
        } else {
            r.output.push_back(fmt::format("Running in {} mode with {} groups using {} file descriptors each (== {} tasks)",
                                           m_p.threads ? "threaded" : "process", m_p.groups, 2 * m_p.fds, m_total));
            r.output.push_back(fmt::format("Each sender will pass {} messages of {} bytes", m_p.loops, m_p.datasize));
            r.output.push_back(fmt::format("Time: {:.3f}", secs));
        }
        if (!m_finished) r.output.push_back("(stopped before the last worker exited)");
        reportPipes(e, r);
        if (std::getenv("SCHEDLAB_DUMP"))
            for (std::size_t i = 0; i < m_chan.size(); ++i)
                r.output.push_back(fmt::format("  pipe {}: count {} pages {} tail {} head {} reader_waiting {} writers {}", i, m_chan[i].count,
                                               m_chan[i].pages, m_chan[i].tail_written, m_chan[i].head, m_chan[i].reader_waiting,
                                               m_chan[i].writers.size()));
        r.headline.push_back({"time_s", m_p.perf ? "Total time (s)" : "Time (s)", secs, true, 3});
        (void)e;
    }

    std::string checkInvariants(const Engine& e) const override {
        syncAll(e);  // planned steps before the current event first
        std::int64_t sent = 0, recv = 0;
        for (int id : m_workers) {
            const SimTask& t = e.task(id);
            // Its planned steps behind the current event are on the pipes (syncAll) but not yet in t.a.
            const std::int64_t n = t.a + e.plannedStepsBehindNow(id);
            if (t.role == kSender) sent += n;
            else recv += n;
        }
        std::int64_t inflight = 0, chSent = 0, chRecv = 0;
        for (std::size_t i = 0; i < m_chan.size(); ++i) {
            const Channel& c = m_chan[i];
            if (c.count != c.sent - c.received) return fmt::format("hackbench channel {}: {} queued but {} sent - {} read", i, c.count, c.sent, c.received);
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
            if (c.reader >= 0 && e.task(c.reader).state == TaskState::Blocked && e.task(c.reader).b == kRun && c.count > 0)
                return fmt::format("hackbench channel {}: reader pid {} asleep with {} messages queued (lost wakeup)", i,
                                   e.task(c.reader).t.pid, c.count);
        }
        if (sent != chSent || recv != chRecv || sent - recv != inflight)
            return fmt::format("hackbench: messages not conserved (sent {}, read {}, in flight {})", sent, recv, inflight);
        for (int id : m_workers) {
            const SimTask& t = e.task(id);
            if (t.state == TaskState::Blocked && t.b == kRun && t.role == kSender) {
                const Channel& c = m_chan[std::size_t(chanOf(t, t.a))];
                if (std::find(c.writers.begin(), c.writers.end(), id) == c.writers.end())
                    return fmt::format("hackbench: sender pid {} asleep but not on the pipe's wait queue", t.t.pid);
                // A pipe wakes a writer on every read of a full pipe; a socket when a read leaves
                // wmem at a quarter of sk_sndbuf or less (unix_write_space).
                const bool shouldBeAwake = m_p.pipe ? !full(c) : c.count * 4 <= m_sockCap;
                if (shouldBeAwake) {
                    // Someone must still be on the way to wake it: a runnable writer that waited on this pipe.
                    bool waker = false;
                    for (int o : m_workers) {
                        const SimTask& w = e.task(o);
                        if (w.role == kSender && w.b == kRun && w.state != TaskState::Blocked && w.c != 0 && chanOf(w, w.a) == chanOf(t, t.a)) waker = true;
                    }
                    if (!waker)
                        return fmt::format("hackbench: sender pid {} asleep on pipe {} which has room ({} pages, {} queued) and nobody will wake it (lost wakeup)",
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
        if (t.b != kRun) return;
        const std::int64_t total = std::int64_t(m_p.loops) * m_p.fds;
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
                insertOp(c, r.key(j), id, true);
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
            for (int j = 0; j < room; ++j) insertOp(c, r.key(j), id, false);
            const int n = std::max(0, room);
            c.resR += n;
            e.planTake(r, n, w);
            pi.ops = n;
        }
    }

    void planEnded(Engine& e, SimTask& t, int done) override {
        const int id = int(t.t.pid - 1000);
        PlanInfo& pi = planOf(id);
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
        std::int64_t a0 = 0;   ///< t.a when the current plan was made
        std::int64_t ops = 0;  ///< steps in the current plan
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
        r.output.push_back(fmt::format("(schedlab: receivers waited {} times on an empty {}: {:.1f} messages read per wakeup,", m_rSleeps,
                                       what, perWake));
        r.output.push_back(fmt::format(" {:.1f} us from the waking write to the first read at p50, {:.1f} us at p99;",
                                       double(m_readLat.percentile(50)) / 1e3, double(m_readLat.percentile(99)) / 1e3));
        r.output.push_back(fmt::format(" senders waited {} times on a full {}, {} of them woken to find it still full)", m_wSleeps, what,
                                       m_wSleepsFull));
        r.counters.push_back({"receiver_waits", "receivers waited (empty)", double(m_rSleeps), true, 0});
        r.counters.push_back({"messages_per_receiver_wakeup", "messages per reader wakeup", perWake, false, 1});
        r.counters.push_back({"wake_to_read_p50_us", "wake->first read p50 (us)", double(m_readLat.percentile(50)) / 1e3, true, 1});
        r.counters.push_back({"sender_waits", "senders waited (full)", double(m_wSleeps), true, 0});
        r.counters.push_back({"sender_waits_still_full", "  woken, still full", double(m_wSleepsFull), true, 0});
        r.histograms.push_back({"waking write to first read", m_readLat});
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
    static void insertOp(Channel& c, const PlanKey& k, int task, bool write) {
        std::size_t i = c.pend.size();
        c.pend.emplace_back();
        for (; i > c.pendHead && Engine::keyBefore(k, c.pend[i - 1].key); --i) c.pend[i] = c.pend[i - 1];
        Channel::PendingOp& op = c.pend[i];
        op.key.t = k.t;
        op.key.ctime = k.ctime;
        op.key.cpu = k.cpu;
        op.task = task;
        op.write = write;
    }
    // Takes the steps of task `id` that are not before the current event off the pipe.
    void dropPlanned(const Engine& e, Channel& c, int id) {
        // c.pend is sorted by key: the steps not before the current event are a suffix of it.
        std::size_t from = c.pend.size();
        while (from > c.pendHead && !e.keyBeforeNow(c.pend[from - 1].key)) --from;
        const auto end = std::remove_if(c.pend.begin() + std::ptrdiff_t(from), c.pend.end(), [&](const Channel::PendingOp& op) {
            if (op.task != id || e.keyBeforeNow(op.key)) return false;
            (op.write ? c.resW : c.resR)--;
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
            if (ops[h].write) {
                if (!tryWrite(c, false)) throw std::logic_error("hackbench: a planned write found its pipe full");
                c.resW--;
            } else {
                if (c.count <= 0) throw std::logic_error("hackbench: a planned read found its pipe empty");
                if (read(c) && !c.writers.empty()) throw std::logic_error("hackbench: a planned read had a writer to wake");
                c.resR--;
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
        m_cutTmp.clear();
        for (std::size_t i = c.pendHead; i < c.pend.size(); ++i) {
            const Channel::PendingOp& op = c.pend[i];
            if (std::find(m_cutTmp.begin(), m_cutTmp.end(), op.task) == m_cutTmp.end()) m_cutTmp.push_back(op.task);
        }
        for (int id : m_cutTmp) e.cutPlan(id);
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
        // a: workers created; b: phase (0 create, 1 wait ready, 2 join, 3 done); c: join index.
        if (t.b == 0) {
            if (t.a < m_total) {
                // Per group: F receivers, then F senders (hackbench's group()).
                const int per = 2 * m_p.fds;
                const int g = int(t.a) / per, k = int(t.a) % per;
                const bool recv = k < m_p.fds;
                const int i = recv ? k : k - m_p.fds;
                const int mm = m_p.threads ? t.mm : t.mm + 1 + int(t.a);
                const int id = e.spawn(m_index, recv ? "hackbench-recv" : "hackbench-send", mm, e.current(),
                                       recv ? kReceiver : kSender, g * m_p.fds + i, m_p.hot_set);
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
            for (int id : m_workers) {
                SimTask& w = e.task(id);
                if (w.b == kWaitGo) {
                    w.b = kRun;
                    e.wake(id, true);
                    e.charge(e.cost().c(CostTerm::syscall, 100));
                }
            }
            t.b = 2;
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

    Action senderStep(Engine& e, SimTask& t) {
        if (t.b >= kDone) return Action::exit();
        if (t.b != kRun) return readyStep(e, t);
        const std::int64_t total = std::int64_t(m_p.loops) * m_p.fds;
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
        if (wasEmpty && c.reader_waiting) {  // pipe_write: was_empty -> wake the reader (sync)
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
        const std::int64_t total = std::int64_t(m_p.loops) * m_p.fds;
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

    HackbenchParams m_p;
    bool m_coalescing = false;
    bool m_lean = false;  ///< many pipes: plans apply what is behind them, drained pipes free their buffers
    std::int64_t m_wcost = 0, m_rcost = 0;  ///< writeCost()/readCost(): the cost model is fixed for a run
    std::int64_t m_wblock = 0, m_rblock = 0;  ///< a write or read that finds the pipe full or empty, until it sleeps
    std::uint16_t m_index;
    int m_perPage = 40;
    std::uint64_t m_ppRecip = 1;  ///< ceil(2^32 / m_perPage) (pagesBound)
    std::int64_t m_sockCap = 1;
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
    std::vector<int> m_cutTmp;
    // What the pipes did (report(): messages per reader wakeup is what messages per context
    // switch comes from). Counted in real steps only: a planned step never sleeps or is the
    // first after a wakeup, so the counts are the same with and without coalescing.
    std::int64_t m_rSleeps = 0;       ///< reads that found the pipe empty (the reader waits)
    std::int64_t m_wSleeps = 0;       ///< writes that found it full (the writer waits)
    std::int64_t m_wSleepsFull = 0;   ///< of those, a woken writer's retry that found it still full
    std::vector<std::int64_t> m_wokenAt;  ///< by task id: when a write woke the waiting reader, -1 after its first read
    LatencyHistogram m_readLat;       ///< a waiting reader: from the write that wakes it to its first read
};

// ---------------------------------------------------------------------------
// schbench

class Schbench final : public Workload {
public:
    Schbench(const SchbenchParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return m_p.v2023 ? "schbench" : "schbench-classic"; }
    std::string commandLine() const override {
        if (m_p.v2023)
            return fmt::format("schbench -m {} -t {} -r {} -w {} -F {} -n {} -s {}{}", m_p.message_threads, m_p.workers, m_p.runtime_s,
                               m_p.warmup_s, m_p.footprint_kb, m_p.ops, m_p.sleep_us, m_p.cpu_lock ? "" : " -L");
        return fmt::format("schbench -m {} -t {} -r {} -s {} -c {}", m_p.message_threads, m_p.workers, m_p.runtime_s, m_p.sleep_us,
                           m_p.cputime_us);
    }

    void start(Engine& e) override {
        m_workersPer = m_p.workers > 0 ? m_p.workers : e.nrCpus();
        m_mt.resize(std::size_t(m_p.message_threads));
        const int mm = 2000000 * (m_index + 1);
        m_mainId = e.spawn(m_index, "schbench", mm, -1, kMain, 0, 0);
        m_warmEnd = std::int64_t(m_p.warmup_s * 1e9);
        m_end = m_warmEnd + std::int64_t(m_p.runtime_s * 1e9);
        m_rpsBucket.assign(std::size_t(std::max(1.0, std::ceil(m_p.runtime_s))), 0);
        m_lockOwner.assign(std::size_t(e.nrCpus()), -1);
    }

    bool finished() const override { return m_finished; }
    double progress(const Engine& e) const override {
        if (m_finished) return 1.0;
        if (!m_started) return 0.0;
        return std::min(1.0, double(e.now() - m_startAt) / double(std::max<std::int64_t>(1, m_end)));
    }

    Action step(Engine& e, SimTask& t) override {
        if (e.now() >= m_end + m_startAt && m_started && !m_finished) {
            m_finished = true;
            m_stopAt = e.now();
            e.workloadFinished();
        }
        switch (t.role) {
        case kMain: return mainStep(e, t);
        case kMessage: return messageStep(e, t);
        default: return workerStep(e, t);
        }
    }

    void report(const Engine& e, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        const double secs = double((m_stopAt ? m_stopAt : e.now()) - m_startAt - m_warmEnd) / 1e9;
        if (!m_p.v2023) {
            r.output.push_back("Latency percentiles (usec)");
            for (double p : {50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9})
                r.output.push_back(fmt::format("\t{}{:.4f}th: {}", p == 99.0 ? "*" : "", p, m_wake.percentile(p) / 1000));
            r.output.push_back(fmt::format("\tmin={}, max={}", m_wake.min() / 1000, m_wake.max() / 1000));
            addPct(r, "lat", "latency", m_wake, {50, 75, 90, 95, 99, 99.5, 99.9});
            r.headline.push_back({"lat_max_us", "latency max (us)", double(m_wake.max()) / 1000.0, true, 1});
            r.histograms.push_back({"wakeup latency", m_wake});
        } else {
            // schbench's percentile block: title, one line per percentile (the starred one marked), min/max.
            auto block = [&](const char* title, const LatencyHistogram& h, std::initializer_list<double> ps, double star,
                             std::int64_t unit, bool minmax) {
                r.output.push_back(fmt::format("{} runtime {:.0f} (s) ({} total samples)", title, secs, h.count()));
                for (double p : ps) r.output.push_back(fmt::format("\t{}{:.1f}th: {}", p == star ? "* " : "  ", p, h.percentile(p) / unit));
                if (minmax) r.output.push_back(fmt::format("\t  min={}, max={}", h.min() / unit, h.max() / unit));
            };
            block("Wakeup Latencies percentiles (usec)", m_wake, {50.0, 90.0, 99.0, 99.9}, 99.0, 1000, true);
            block("Request Latencies percentiles (usec)", m_req, {50.0, 90.0, 99.0, 99.9}, 99.0, 1000, true);
            LatencyHistogram rps;
            for (auto v : m_rpsBucket) rps.record(v);
            block("RPS percentiles (requests)", rps, {20.0, 50.0, 90.0}, 50.0, 1, false);
            const double avg = secs > 0 ? double(m_completed) / secs : 0;
            r.output.push_back(fmt::format("average rps: {:.2f}", avg));
            if (m_p.cpu_lock) r.output.push_back(fmt::format("(schedlab: {:.3f} ms of CPU spent spinning on the per-CPU locks)", double(m_spinNs) / 1e6));
            addPct(r, "wakeup", "wakeup lat", m_wake, {50, 90, 99, 99.9});
            addPct(r, "request", "request lat", m_req, {50, 90, 99, 99.9});
            r.headline.push_back({"rps_p50", "RPS p50", double(rps.percentile(50)), false, 0});
            r.headline.push_back({"rps_avg", "average rps", avg, false, 2});
            r.histograms.push_back({"wakeup latency", m_wake});
            r.histograms.push_back({"request latency", m_req});
        }
    }

    std::string checkInvariants(const Engine& e) const override {
        for (std::size_t c = 0; c < m_lockOwner.size(); ++c) {
            const int o = m_lockOwner[c];
            if (o >= 0 && (e.task(o).b != kSleep2 || e.task(o).c != std::int64_t(c)))
                return fmt::format("schbench: CPU {}'s lock held by pid {} which is not in its matrix work", c, e.task(o).t.pid);
        }
        for (std::size_t m = 0; m < m_mt.size(); ++m)
            for (int id : m_mt[m].posted)
                if (e.task(id).b != kPosted) return fmt::format("schbench: pid {} on message thread {}'s list but not posted", e.task(id).t.pid, m);
        return {};
    }

private:
    enum Role : std::uint8_t { kMain = 0, kMessage = 1, kWorker = 2 };
    enum WorkerPhase : std::int64_t { kPost = 0, kPosted = 1, kThink = 2, kSleep1 = 3, kCompute = 4, kSleep2 = 5 };
    struct MsgThread {
        int id = -1;
        std::vector<int> posted;
        bool waiting = false;
    };

    static void addPct(WorkloadReport& r, const std::string& key, const std::string& label, const LatencyHistogram& h,
                       std::initializer_list<double> ps) {
        for (double p : ps)
            r.headline.push_back({fmt::format("{}_p{}_us", key, p), fmt::format("{} p{} (us)", label, p), double(h.percentile(p)) / 1000.0, true, 1});
    }

    bool measuring(const Engine& e) const { return m_started && e.now() >= m_startAt + m_warmEnd; }

    Action mainStep(Engine& e, SimTask& t) {
        // Create the message threads and their workers, then wait forever.
        if (t.a < m_p.message_threads) {
            const int m = int(t.a);
            m_mt[std::size_t(m)].id = e.spawn(m_index, "schbench-msg", t.mm, e.current(), kMessage, m, 0);
            for (int w = 0; w < m_workersPer; ++w)
                e.spawn(m_index, "schbench-worker", t.mm, e.current(), kWorker, m, m_p.v2023 ? m_p.footprint_kb * 1024 : 0);
            t.a++;
            return Action::run(1000);
        }
        if (!m_started) {
            m_started = true;
            m_startAt = e.now();
        }
        return Action::block();
    }

    Action messageStep(Engine& e, SimTask& t) {
        MsgThread& m = m_mt[std::size_t(t.idx)];
        const CostModel& cm = e.cost();
        // b: 0 wake the posted list, 1 wait for posts, 2 sleep (classic).
        if (t.b == 0) {
            std::vector<int> list;
            list.swap(m.posted);
            const std::int64_t stamp = e.now();
            for (int id : list) {
                SimTask& w = e.task(id);
                w.c = stamp;
                w.b = m_p.v2023 ? kSleep1 : kThink;
                e.wake(id, false);  // futex wake
                e.charge(cm.c(CostTerm::syscall, cm.futex_wake));
            }
            t.b = 1;
        }
        if (t.b == 1) {
            if (m.posted.empty()) {
                m.waiting = true;
                return Action::block();
            }
            m.waiting = false;
            if (!m_p.v2023) {
                t.b = 2;
                const std::int64_t jitter = e.rng().uniform(0, m_p.sleep_us / 4);
                return Action::sleep((m_p.sleep_us + jitter) * 1000 + cm.timer_slack);
            }
            t.b = 0;
            return Action::run(100);
        }
        t.b = 0;  // after the usleep
        return Action::run(100);
    }

    Action workerStep(Engine& e, SimTask& t) {
        MsgThread& m = m_mt[std::size_t(t.idx)];
        const CostModel& cm = e.cost();
        switch (t.b) {
        case kPost:
            t.b = kPosted;
            m.posted.push_back(e.current());
            if (m.waiting) {
                m.waiting = false;
                e.wake(m.id, false);
                e.charge(cm.c(CostTerm::syscall, cm.futex_wake));
            }
            return Action::block();
        case kPosted: return Action::block();  // spurious: still on the list
        case kThink:  // classic: woken, record the latency, spin cputime
            if (measuring(e) && t.c >= m_startAt + m_warmEnd) m_wake.record(e.now() - t.c);
            t.b = kPost;
            return Action::run(m_p.cputime_us * 1000);
        case kSleep1:  // 2023: woken; the request starts with a usleep
            if (measuring(e) && t.c >= m_startAt + m_warmEnd) m_wake.record(e.now() - t.c);
            t.a = e.now();  // request start
            t.b = kCompute;
            return Action::sleep(m_p.sleep_us * 1000 + cm.timer_slack);
        case kCompute: {
            // The matrix work runs under the per-CPU lock of the CPU it starts on (schbench's
            // per-cpu spinlock, unless -L): a holder that is preempted or migrated makes the
            // next request on that CPU spin. Spinning is modelled as 1 us polls of burned CPU.
            if (m_p.cpu_lock) {
                const int cpu = e.currentCpu();
                int& owner = m_lockOwner[std::size_t(cpu)];
                if (owner >= 0 && owner != e.current()) {
                    m_spinNs += 1000;
                    return Action::run(1000);
                }
                owner = e.current();
                t.c = cpu;  // the lock it holds
            }
            t.b = kSleep2;
            return Action::run(std::int64_t(m_p.ops) * m_p.op_ns);
        }
        case kSleep2:
            if (m_p.cpu_lock) m_lockOwner[std::size_t(t.c)] = -1;  // spin_unlock
            t.b = 6;
            return Action::sleep(m_p.sleep_us * 1000 + cm.timer_slack);
        default:  // request done
            if (measuring(e) && t.a >= m_startAt + m_warmEnd) {
                m_req.record(e.now() - t.a);
                m_completed++;
                const std::size_t sec = std::size_t((e.now() - m_startAt - m_warmEnd) / 1000000000);
                if (sec < m_rpsBucket.size()) m_rpsBucket[sec]++;
            }
            t.b = kPost;
            return Action::run(100);
        }
    }

    SchbenchParams m_p;
    std::uint16_t m_index;
    int m_workersPer = 0;
    int m_mainId = -1;
    std::vector<MsgThread> m_mt;
    bool m_started = false, m_finished = false;
    std::int64_t m_startAt = 0, m_warmEnd = 0, m_end = 0, m_stopAt = 0;
    LatencyHistogram m_wake, m_req;
    std::int64_t m_completed = 0;
    std::vector<int> m_lockOwner;  ///< per-CPU lock holder (task id), -1 free
    std::int64_t m_spinNs = 0;     ///< CPU burned spinning on the per-CPU locks
    std::vector<std::int64_t> m_rpsBucket;
};

// ---------------------------------------------------------------------------
// stress-ng --cpu N --cpu-load P

class Stress final : public Workload {
public:
    Stress(const StressParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return "stress-ng"; }
    std::string commandLine() const override {
        return fmt::format("stress-ng --cpu {} --cpu-load {}{}", m_p.workers, m_p.load,
                           m_p.slice_ms ? fmt::format(" --cpu-load-slice {}", m_p.slice_ms) : std::string());
    }
    bool background() const override { return true; }
    bool finished() const override { return true; }
    void start(Engine& e) override {
        m_n = m_p.workers > 0 ? m_p.workers : e.nrCpus();
        m_main = e.spawn(m_index, "stress-ng", 3000000 * (m_index + 1), -1, 0, 0, 0);
    }
    Action step(Engine& e, SimTask& t) override {
        if (t.role == 0) {
            if (t.a < m_n) {
                e.spawn(m_index, "stress-ng-cpu", 3000000 * (m_index + 1) + 1 + int(t.a), e.current(), 1, int(t.a), 0);
                t.a++;
                return Action::run(1000);
            }
            return Action::block();
        }
        // Hog: busy R, then sleep R * (100 - P) / P.
        if (t.b == 0) {
            const std::int64_t r = m_p.slice_ms > 0 ? m_p.slice_ms * 1000000 : e.rng().uniform(1000000, 500000000);
            t.c = r;
            t.b = 1;
            m_busyNs += r;
            return Action::run(r);
        }
        t.b = 0;
        if (m_p.load >= 100) return Action::run(0);
        return Action::sleep(t.c * (100 - m_p.load) / std::max(1, m_p.load));
    }
    void report(const Engine&, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        r.output.push_back(fmt::format("stress-ng: info: dispatching hogs: {} cpu ({}% load)", m_n, m_p.load));
    }

private:
    StressParams m_p;
    std::uint16_t m_index;
    int m_n = 0;
    int m_main = -1;
    std::int64_t m_busyNs = 0;
};

// ---------------------------------------------------------------------------
// tbench / netperf RR: buddy pairs

class PingPong final : public Workload {
public:
    PingPong(const PingPongParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return m_p.netperf ? "netperf-rr" : "tbench"; }
    std::string commandLine() const override {
        if (m_p.netperf) return fmt::format("netperf -t TCP_RR -l {} (x{} instances)", m_p.runtime_s, m_p.pairs);
        return fmt::format("tbench -t {} {}", m_p.runtime_s, m_p.pairs);
    }
    void start(Engine& e) override {
        m_main = e.spawn(m_index, m_p.netperf ? "netperf" : "tbench", 4000000 * (m_index + 1), -1, kMain, 0, 0);
        m_warm = std::int64_t(m_p.warmup_s * 1e9);
        m_end = m_warm + std::int64_t(m_p.runtime_s * 1e9);
        m_client.assign(std::size_t(m_p.pairs), -1);
        m_server.assign(std::size_t(m_p.pairs), -1);
    }
    bool finished() const override { return m_finished; }
    double progress(const Engine& e) const override {
        return m_finished ? 1.0 : m_started ? std::min(1.0, double(e.now() - m_startAt) / double(m_end)) : 0.0;
    }
    Action step(Engine& e, SimTask& t) override {
        if (m_started && !m_finished && e.now() >= m_startAt + m_end) {
            m_finished = true;
            m_stopAt = e.now();
            e.workloadFinished();
        }
        const CostModel& cm = e.cost();
        if (t.role == kMain) {
            // Fork each pair: the server (tbench_srv's child), then the client, each its own process.
            if (t.a < m_p.pairs) {
                const int i = int(t.a);
                m_server[std::size_t(i)] = e.spawn(m_index, m_p.netperf ? "netserver" : "tbench_srv", t.mm + 1 + 2 * i, e.current(), kServer, i, 16384);
                m_client[std::size_t(i)] = e.spawn(m_index, m_p.netperf ? "netperf" : "tbench", t.mm + 2 + 2 * i, e.current(), kClient, i, 16384);
                t.a++;
                return Action::run(1000);
            }
            if (!m_started) {
                m_started = true;
                m_startAt = e.now();
            }
            return Action::block();
        }
        const std::size_t i = std::size_t(t.idx);
        if (t.role == kClient) {
            // b: 0 prepare a request (client CPU), 3 send it, 1 wait for the reply.
            if (t.b == 1) {
                if (!t.c) return Action::block();  // no reply yet (spurious wakeup)
                t.c = 0;
                if (measuring(e)) {
                    m_lat.record(e.now() - t.a);
                    m_done++;
                }
                t.b = 0;
            }
            if (t.b == 0) {
                t.b = 3;
                return Action::run(cm.c(CostTerm::syscall, m_p.client_ns));
            }
            // Send: the loopback receive runs in the sender's context and wakes the server (WF_SYNC).
            t.a = e.now();
            t.b = 1;
            SimTask& srv = e.task(m_server[i]);
            srv.c = 1;  // a request is queued
            if (srv.b == 1) e.wake(m_server[i], true);
            return Action::block();
        }
        // Server: b 1 = waiting for a request, 2 = serving.
        if (t.b == 2) {
            // Reply: a sync wakeup of the client.
            SimTask& cl = e.task(m_client[i]);
            cl.c = 1;
            e.wake(m_client[i], true);
        }
        if (!t.c) {
            t.b = 1;
            return Action::block();
        }
        t.c = 0;
        t.b = 2;
        return Action::run(cm.c(CostTerm::syscall, m_p.server_ns));
    }
    void report(const Engine& e, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        const double secs = std::max(1e-9, double((m_stopAt ? m_stopAt : e.now()) - m_startAt - m_warm) / 1e9);
        const double tps = double(m_done) / secs;
        const double mbs = tps * double(m_p.bytes) / 1e6;
        if (m_p.netperf) {
            r.output.push_back(fmt::format("Trans. Rate per sec: {:.2f} ({} instances, {:.2f} per instance)", tps, m_p.pairs, tps / m_p.pairs));
            r.headline.push_back({"trans_per_s", "Trans/s", tps, false, 0});
        } else {
            r.output.push_back(fmt::format("Throughput {:.4f} MB/sec  {} clients  {} procs  max_latency={:.3f} ms", mbs, m_p.pairs, m_p.pairs,
                                           double(m_lat.max()) / 1e6));
            r.headline.push_back({"mb_per_s", "Throughput (MB/s)", mbs, false, 2});
            r.headline.push_back({"max_latency_ms", "max latency (ms)", double(m_lat.max()) / 1e6, true, 3});
        }
        r.headline.push_back({"rtt_p50_us", "round trip p50 (us)", double(m_lat.percentile(50)) / 1000.0, true, 1});
        r.headline.push_back({"rtt_p99_us", "round trip p99 (us)", double(m_lat.percentile(99)) / 1000.0, true, 1});
        r.histograms.push_back({"round trip", m_lat});
    }
    std::string checkInvariants(const Engine& e) const override {
        // A client asleep without a reply must have its request with the server, and the
        // server must be running or queued to serve it (no lost wakeup).
        for (std::size_t i = 0; i < m_client.size(); ++i) {
            if (m_client[i] < 0) continue;
            const SimTask& c = e.task(m_client[i]);
            const SimTask& s = e.task(m_server[i]);
            if (c.state == TaskState::Blocked && c.b == 1 && !c.c && s.state == TaskState::Blocked && !s.c)
                return fmt::format("pingpong pair {}: client and server both asleep with nothing in flight", i);
            if (s.state == TaskState::Blocked && s.c) return fmt::format("pingpong pair {}: server asleep with a request queued", i);
        }
        return {};
    }

private:
    enum Role : std::uint8_t { kMain = 0, kClient = 1, kServer = 2 };
    bool measuring(const Engine& e) const { return m_started && e.now() >= m_startAt + m_warm; }
    PingPongParams m_p;
    std::uint16_t m_index;
    int m_main = -1;
    std::vector<int> m_client, m_server;
    bool m_started = false, m_finished = false;
    std::int64_t m_startAt = 0, m_warm = 0, m_end = 0, m_stopAt = 0;
    std::int64_t m_done = 0;
    LatencyHistogram m_lat;
};

}  // namespace

namespace {
std::atomic<int> g_leanPipes{4096};
}
int hackbenchLeanPipes() { return g_leanPipes.load(std::memory_order_relaxed); }
void setHackbenchLeanPipes(int n) { g_leanPipes.store(n, std::memory_order_relaxed); }

std::unique_ptr<Workload> makeHackbench(const HackbenchParams& p, std::uint16_t index) { return std::make_unique<Hackbench>(p, index); }
std::unique_ptr<Workload> makeSchbench(const SchbenchParams& p, std::uint16_t index) { return std::make_unique<Schbench>(p, index); }
std::unique_ptr<Workload> makeStress(const StressParams& p, std::uint16_t index) { return std::make_unique<Stress>(p, index); }
std::unique_ptr<Workload> makePingPong(const PingPongParams& p, std::uint16_t index) { return std::make_unique<PingPong>(p, index); }

}  // namespace sched
