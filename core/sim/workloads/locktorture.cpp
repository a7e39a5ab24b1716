// SPDX-License-Identifier: GPL-2.0-or-later
// locktorture.cpp: kernel/locking/locktorture.c's mutex_lock writers: each writer kthread loops
// mutex_lock(), a critical section, mutex_unlock(), and a pause; on one struct mutex (sim/kmutex.h).
// (The workloads' common contract: sim/workloads.h.)
#include "sim/kmutex.h"
#include "sim/workloads.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace sched {
namespace {

class LockTorture final : public Workload {
public:
    LockTorture(const LockTortureParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return "locktorture"; }
    std::string commandLine() const override {
        // shutdown_secs=0: the module runs until it is removed (endless).
        return fmt::format("modprobe locktorture torture_type=mutex_lock nwriters_stress={} shutdown_secs={} (hold {} ns, pause {} ns){}",
                           m_p.writers > 0 ? std::to_string(m_p.writers) : std::string("2xCPUs"), m_p.runtime_s, m_p.hold_ns, m_p.pause_ns,
                           m_p.runtime_s > 0 ? "" : " (endless)");
    }
    void start(Engine& e) override {
        m_n = m_p.writers > 0 ? m_p.writers : 2 * e.nrCpus();  // locktorture: nwriters_stress = 2 * num_online_cpus()
        m_main = e.spawn(m_index, "modprobe", 5000000 * (m_index + 1), -1, kMain, 0, 0);
        m_run.end = std::int64_t(m_p.runtime_s * 1e9);
        m_run.endless = m_p.runtime_s <= 0;
        m_acquired.assign(std::size_t(m_n), 0);
    }
    bool finished() const override { return m_run.finished; }
    double progress(const Engine& e) const override { return m_run.progress(e); }
    double work(const Engine&) const override {
        double n = 0;
        for (std::int64_t a : m_acquired) n += double(a);
        return n;
    }
    std::string workUnit() const override { return "acquisitions/s"; }

    Action step(Engine& e, SimTask& t) override {
        m_run.check(e);
        if (t.role == kMain) {
            if (t.a < m_n) {  // kthread_run() of each writer (one address space: kernel threads)
                m_writers.push_back(e.spawn(m_index, "lock_torture_wr", t.mm, e.current(), kWriter, int(t.a), 0));
                t.a++;
                return Action::run(1000);
            }
            m_run.start(e.now());
            return Action::block();
        }
        const int id = e.current();
        // b: 0 about to take the lock (or retrying inside mutex_lock() when c = 1), 1 in the critical section.
        if (t.b == 1) {
            m_held--;
            m_mutex.unlock(e, id);
            t.b = 0;
            return Action::run(m_p.pause_ns);
        }
        if (t.c == 0 && m_run.finished) return Action::exit();  // torture_must_stop()
        switch (m_mutex.lock(e, id)) {
        case KMutex::Lock::Acquired:
            t.c = 0;
            t.b = 1;
            if (++m_held > 1) m_fail++;  // lock_is_write_held: two writers inside
            m_acquired[std::size_t(t.idx)]++;
            return Action::run(m_p.hold_ns);
        case KMutex::Lock::Spin: t.c = 1; return Action::run(KMutex::kSpinNs);
        case KMutex::Lock::Sleep: t.c = 1; return Action::block();
        case KMutex::Lock::Yield: t.c = 1; return Action::run(0);  // preempted here (need_resched), retries after
        }
        return Action::block();
    }

    void offCpu(Engine& e, SimTask& t) override { m_mutex.offCpu(e, int(t.t.pid - 1000)); }

    std::string checkInvariants(const Engine& e) const override {
        if (m_fail) return fmt::format("locktorture: {} writers inside the critical section at once", m_fail);
        return m_mutex.check(e);
    }

    void report(const Engine& e, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        const double secs = m_run.measuredSeconds(e);
        std::int64_t total = 0, mx = 0, mn = std::numeric_limits<std::int64_t>::max();
        for (std::int64_t a : m_acquired) {
            total += a;
            mx = std::max(mx, a);
            mn = std::min(mn, a);
        }
        if (m_acquired.empty()) mn = 0;
        // lock_torture_stats_print()'s line.
        r.output.push_back(fmt::format("Writes:  Total: {}  Max/Min: {}/{}   Fail: {}", total, mx, mn, m_fail));
        const MutexStats& s = m_mutex.stats();
        r.output.push_back(fmt::format("(schedlab: mutex: {} acquisitions, {} contended ({:.1f} %): {} by spinning, {} after sleeping, {} handoffs;",
                                       s.acquisitions, s.contended, s.acquisitions ? 100.0 * double(s.contended) / double(s.acquisitions) : 0.0,
                                       s.spun, s.slept, s.handoffs));
        r.output.push_back(fmt::format(" {:.3f} ms spinning, {:.3f} ms asleep, {:.3f} ms held; contended wait p50 {:.1f} us, p99 {:.1f} us)",
                                       double(s.spin_ns) / 1e6, double(s.sleep_ns) / 1e6, double(s.hold_ns) / 1e6,
                                       double(s.wait.percentile(50)) / 1e3, double(s.wait.percentile(99)) / 1e3));
        r.headline.push_back({"writes_per_s", "Writes/s", secs > 0 ? double(total) / secs : 0.0, false, 0});
        mutexCounters(s, r);
        r.histograms.push_back({"mutex: contended wait", s.wait});
    }

private:
    enum Role : std::uint8_t { kMain = 0, kWriter = 1 };

public:
    void state(StateArchive& ar) override {
        ar(m_n, m_main);
        m_run.state(ar);
        ar.vec(m_writers);
        ar.vec(m_acquired);
        ar(m_held, m_fail);
        m_mutex.state(ar);
    }
    std::int64_t mutexIndex(const KMutex* m) const override { return m == &m_mutex ? 0 : -1; }
    KMutex* mutexAt(std::int64_t i) override { return i == 0 ? &m_mutex : nullptr; }

private:
    LockTortureParams m_p;
    std::uint16_t m_index;
    int m_n = 0;
    int m_main = -1;
    TimedRun m_run;
    std::vector<int> m_writers;
    std::vector<std::int64_t> m_acquired;  ///< per writer (lwsp->n_lock_acquired)
    int m_held = 0;
    std::int64_t m_fail = 0;  ///< n_lock_fail
    KMutex m_mutex;
};

}  // namespace

void mutexCounters(const MutexStats& s, WorkloadReport& r) {
    r.counters.push_back({"mutex_acquisitions", "mutex acquisitions", double(s.acquisitions), false, 0});
    r.counters.push_back({"mutex_contended", "  contended", double(s.contended), true, 0});
    r.counters.push_back({"mutex_spin_ms", "  spinning (ms)", double(s.spin_ns) / 1e6, true, 3});
    r.counters.push_back({"mutex_sleep_ms", "  asleep (ms)", double(s.sleep_ns) / 1e6, true, 3});
    r.counters.push_back({"mutex_handoffs", "  handoffs", double(s.handoffs), true, 0});
}

std::unique_ptr<Workload> makeLockTorture(const LockTortureParams& p, std::uint16_t index) { return std::make_unique<LockTorture>(p, index); }

}  // namespace sched
