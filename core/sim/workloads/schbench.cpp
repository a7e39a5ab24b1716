// SPDX-License-Identifier: GPL-2.0-or-later
// schbench.cpp: schbench, classic and 2023 (request/RPS): message threads, workers, futex wakeups and usleep() timers.
// (The workloads' common contract: sim/workloads.h.)
#include "sim/workloads.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace sched {
namespace {

class Schbench final : public Workload {
public:
    Schbench(const SchbenchParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return m_p.v2023 ? "schbench" : "schbench-classic"; }
    std::string commandLine() const override {
        const char* endless = m_p.runtime_s > 0 ? "" : " (endless)";  // -r 0 is schedlab's: until the run stops
        if (m_p.v2023)
            return fmt::format("schbench -m {} -t {} -r {} -w {} -F {} -n {} -s {}{}{}", m_p.message_threads, m_p.workers, m_p.runtime_s,
                               m_p.warmup_s, m_p.footprint_kb, m_p.ops, m_p.sleep_us, m_p.cpu_lock ? "" : " -L", endless);
        return fmt::format("schbench -m {} -t {} -r {} -s {} -c {}{}", m_p.message_threads, m_p.workers, m_p.runtime_s, m_p.sleep_us, m_p.cputime_us,
                           endless);
    }

    void start(Engine& e) override {
        m_workersPer = m_p.workers > 0 ? m_p.workers : e.nrCpus();
        m_mt.resize(std::size_t(m_p.message_threads));
        const int mm = 2000000 * (m_index + 1);
        m_mainId = e.spawn(m_index, "schbench", mm, -1, kMain, 0, 0);
        m_run.warm = std::int64_t(m_p.warmup_s * 1e9);
        m_run.end = m_run.warm + std::int64_t(m_p.runtime_s * 1e9);
        m_run.endless = m_p.runtime_s <= 0;
        m_rpsBucket.assign(std::size_t(std::max(1.0, std::ceil(m_p.runtime_s))), 0);
        m_lockOwner.assign(std::size_t(e.nrCpus()), -1);
    }

    bool finished() const override { return m_run.finished; }
    double progress(const Engine& e) const override { return m_run.progress(e); }
    double work(const Engine&) const override { return double(m_work); }
    std::string workUnit() const override { return m_p.v2023 ? "requests/s" : "wakeups/s"; }

    Action step(Engine& e, SimTask& t) override {
        m_run.check(e);
        switch (t.role) {
        case kMain: return mainStep(e, t);
        case kMessage: return messageStep(e, t);
        default: return workerStep(e, t);
        }
    }

    void report(const Engine& e, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        const double secs = m_run.measuredSeconds(e);
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
            auto block = [&](const char* title, const LatencyHistogram& h, std::initializer_list<double> ps, double star, std::int64_t unit,
                             bool minmax) {
                r.output.push_back(fmt::format("{} runtime {:.0f} (s) ({} total samples)", title, secs, h.count()));
                for (double p : ps) r.output.push_back(fmt::format("\t{}{:.1f}th: {}", p == star ? "* " : "  ", p, h.percentile(p) / unit));
                if (minmax) r.output.push_back(fmt::format("\t  min={}, max={}", h.min() / unit, h.max() / unit));
            };
            block("Wakeup Latencies percentiles (usec)", m_wake, {50.0, 90.0, 99.0, 99.9}, 99.0, 1000, true);
            block("Request Latencies percentiles (usec)", m_req, {50.0, 90.0, 99.0, 99.9}, 99.0, 1000, true);
            LatencyHistogram rps;
            // Endless: the seconds completed so far (the one in progress would read low).
            const std::size_t full = m_run.endless ? std::min(m_rpsBucket.size(), std::size_t(std::max(0.0, secs))) : m_rpsBucket.size();
            for (std::size_t i = 0; i < full; ++i) rps.record(m_rpsBucket[i]);
            block("RPS percentiles (requests)", rps, {20.0, 50.0, 90.0}, 50.0, 1, false);
            const double avg = secs > 0 ? double(m_completed) / secs : 0;
            r.output.push_back(fmt::format("average rps: {:.2f}", avg));
            if (m_p.cpu_lock)
                r.output.push_back(fmt::format("(schedlab: {:.3f} ms of CPU spent spinning on the per-CPU locks)", double(m_spinNs) / 1e6));
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
        std::vector<int> waking;  ///< the list being woken, waking[next..] still to go
        std::size_t next = 0;
        bool waiting = false;
    };

    static void addPct(WorkloadReport& r, const std::string& key, const std::string& label, const LatencyHistogram& h,
                       std::initializer_list<double> ps) {
        for (double p : ps)
            r.headline.push_back({fmt::format("{}_p{}_us", key, p), fmt::format("{} p{} (us)", label, p), double(h.percentile(p)) / 1000.0, true, 1});
    }

    bool measuring(const Engine& e) const { return m_run.measuring(e); }

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
        m_run.start(e.now());
        return Action::block();
    }

    Action messageStep(Engine& e, SimTask& t) {
        MsgThread& m = m_mt[std::size_t(t.idx)];
        const CostModel& cm = e.cost();
        // b: 0 wake the posted list, 1 wait for posts, 2 sleep (classic).
        if (t.b == 0) {
            // xlist_wake_all(): the list taken at once, then each worker stamped and woken in
            // turn (fpost(): a futex wake each), one wakeup after the other over time.
            if (m.next == 0) m.waking.swap(m.posted);
            if (m.next < m.waking.size()) {
                const int id = m.waking[m.next++];
                SimTask& w = e.task(id);
                w.c = e.now();
                w.b = m_p.v2023 ? kSleep1 : kThink;
                e.wake(id, false);  // futex wake
                return Action::run(cm.c(CostTerm::syscall, cm.futex_wake));
            }
            m.waking.clear();
            m.next = 0;
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
                return Action::sleep((m_p.sleep_us + jitter) * 1000, cm.timer_slack);
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
        case kThink:                           // classic: woken, record the latency, spin cputime
            m_work++;
            if (measuring(e) && t.c >= m_run.startAt + m_run.warm) m_wake.record(e.now() - t.c);
            t.b = kPost;
            return Action::run(m_p.cputime_us * 1000);
        case kSleep1:  // 2023: woken; the request starts with a usleep
            if (measuring(e) && t.c >= m_run.startAt + m_run.warm) m_wake.record(e.now() - t.c);
            t.a = e.now();  // request start
            t.b = kCompute;
            return Action::sleep(m_p.sleep_us * 1000, cm.timer_slack);
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
            return Action::sleep(m_p.sleep_us * 1000, cm.timer_slack);
        default:  // request done
            m_work++;
            if (measuring(e) && t.a >= m_run.startAt + m_run.warm) {
                m_req.record(e.now() - t.a);
                m_completed++;
                const std::size_t sec = std::size_t((e.now() - m_run.startAt - m_run.warm) / 1000000000);
                if (m_run.endless && sec >= m_rpsBucket.size()) m_rpsBucket.resize(sec + 1, 0);  // endless: a bucket per second so far
                if (sec < m_rpsBucket.size()) m_rpsBucket[sec]++;
            }
            t.b = kPost;
            return Action::run(100);
        }
    }

public:
    void state(StateArchive& ar) override {
        ar(m_workersPer, m_mainId);
        ar.each(m_mt, [](StateArchive& a, MsgThread& m) {
            a(m.id);
            a.vec(m.posted);
            a.vec(m.waking);
            a(m.next, m.waiting);
        });
        m_run.state(ar);
        m_wake.state(ar);
        m_req.state(ar);
        ar(m_completed);
        ar.vec(m_lockOwner);
        ar(m_spinNs);
        ar.vec(m_rpsBucket);
        ar(m_work);
    }

private:
    SchbenchParams m_p;
    std::uint16_t m_index;
    int m_workersPer = 0;
    int m_mainId = -1;
    std::vector<MsgThread> m_mt;
    TimedRun m_run;
    LatencyHistogram m_wake, m_req;
    std::int64_t m_completed = 0;
    std::vector<int> m_lockOwner;  ///< per-CPU lock holder (task id), -1 free
    std::int64_t m_spinNs = 0;     ///< CPU burned spinning on the per-CPU locks
    std::vector<std::int64_t> m_rpsBucket;
    std::int64_t m_work = 0;  ///< requests done (2023) or worker wakeups (classic) since the start (work())
};

// ---------------------------------------------------------------------------
// stress-ng --cpu N --cpu-load P

}  // namespace

std::unique_ptr<Workload> makeSchbench(const SchbenchParams& p, std::uint16_t index) { return std::make_unique<Schbench>(p, index); }

}  // namespace sched
