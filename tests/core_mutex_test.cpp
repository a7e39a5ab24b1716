// SPDX-License-Identifier: GPL-2.0-or-later
// core_mutex_test.cpp: struct mutex (sim/kmutex.h) against kernel/locking/mutex.c's rules, driven
// by scripted tasks on the engine: the fast path, optimistic spinning only while the owner
// runs, the FIFO wait list, the handoff to a starved first waiter, no lost wakeup, one owner
// at a time (the invariant checker at every event); and the locktorture workload.
#include "sim/engine.h"
#include "sim/kmutex.h"
#include "sim/scenario.h"
#include "sim/workloads.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <vector>

using namespace sched;

namespace {

// One task's script: run CPU work, take or release the mutex, sleep on a timer, in order.
struct Op {
    enum Kind { Run, Lock, Unlock, Sleep } kind;
    std::int64_t ns = 0;
};
using Script = std::vector<Op>;
Op run(std::int64_t ns) { return {Op::Run, ns}; }
Op lock() { return {Op::Lock, 0}; }
Op unlock() { return {Op::Unlock, 0}; }
Op sleepFor(std::int64_t ns) { return {Op::Sleep, ns}; }

// What happened, per task id: when it took and let go of the lock.
struct Log {
    std::vector<std::pair<int, std::int64_t>> acquired;  ///< (task index, time) in order
    std::map<int, std::vector<std::int64_t>> released;   ///< task index -> times
    std::int64_t finishedAt = -1;
};

class Scripted final : public Workload {
public:
    Scripted(std::vector<Script> scripts, std::vector<int> pin, Log& log) : m_scripts(std::move(scripts)), m_pin(std::move(pin)), m_log(log) {}
    std::string name() const override { return "scripted"; }
    std::string commandLine() const override { return "scripted"; }
    void start(Engine& e) override {
        m_masks.resize(m_scripts.size());
        for (std::size_t i = 0; i < m_scripts.size(); ++i) {
            if (i < m_pin.size() && m_pin[i] >= 0) {
                m_masks[i].set(m_pin[i]);
                setCpus(&m_masks[i]);
            } else {
                setCpus(nullptr);
            }
            m_ids.push_back(e.spawn(0, fmt::format("t{}", i), int(i) + 1, -1, 0, int(i), 0));
        }
        setCpus(nullptr);
    }
    Action step(Engine& e, SimTask& t) override {
        const Script& s = m_scripts[std::size_t(t.idx)];
        const int id = e.current();
        for (;;) {
            if (t.a >= std::int64_t(s.size())) {
                if (++m_done == int(m_scripts.size())) {
                    m_log.finishedAt = e.now();
                    e.workloadFinished();
                }
                return Action::exit();
            }
            const Op& op = s[std::size_t(t.a)];
            switch (op.kind) {
            case Op::Run: t.a++; return Action::run(op.ns);
            case Op::Sleep: t.a++; return Action::sleep(op.ns);
            case Op::Unlock:
                t.a++;
                m_inside--;
                m_log.released[t.idx].push_back(e.now());
                m.unlock(e, id);
                continue;
            case Op::Lock:
                switch (m.lock(e, id)) {
                case KMutex::Lock::Acquired:
                    t.a++;
                    if (++m_inside > 1) m_overlap++;
                    m_log.acquired.emplace_back(t.idx, e.now());
                    continue;
                case KMutex::Lock::Spin: return Action::run(KMutex::kSpinNs);
                case KMutex::Lock::Sleep: return Action::block();
                case KMutex::Lock::Yield: return Action::run(0);
                }
            }
        }
    }
    void offCpu(Engine& e, SimTask& t) override { m.offCpu(e, int(t.t.pid - 1000)); }
    bool finished() const override { return m_done == int(m_scripts.size()); }
    void report(const Engine&, WorkloadReport& r) const override { r.name = name(); }
    std::string checkInvariants(const Engine& e) const override {
        if (m_overlap) return "two tasks inside the critical section at once";
        // Ownership is conserved: the one task past its Lock and before its Unlock is the owner.
        int inside = -1, n = 0;
        for (int id : m_ids) {
            const SimTask& t = e.task(id);
            const Script& s = m_scripts[std::size_t(t.idx)];
            int depth = 0;
            for (std::int64_t k = 0; k < std::min<std::int64_t>(t.a, std::int64_t(s.size())); ++k)
                depth += s[std::size_t(k)].kind == Op::Lock ? 1 : s[std::size_t(k)].kind == Op::Unlock ? -1 : 0;
            if (depth > 0) inside = id, n++;
        }
        if (n > 1) return "two tasks hold the mutex";
        if (n == 1 && (m.owner() != inside || m.pickup())) return fmt::format("task {} holds the mutex but its owner is {}", inside, m.owner());
        if (n == 0 && m.owner() >= 0 && !m.pickup()) return fmt::format("nobody holds the mutex but its owner is {}", m.owner());
        return m.check(e);
    }
    KMutex m;
    std::vector<int> m_ids;

private:
    std::vector<Script> m_scripts;
    std::vector<int> m_pin;
    std::vector<CpuMask> m_masks;
    Log& m_log;
    int m_done = 0;
    int m_inside = 0;
    int m_overlap = 0;
};

struct Result {
    Log log;
    MutexStats stats;
    std::uint64_t digest = 0;
    std::string violation;
    bool finished = false;
    std::uint64_t proxy_runs = 0, proxy_migrations = 0, proxy_returns = 0, proxy_cause = 0;
};

// Called every simulated microsecond of a probed run (proxy execution's tests look at the runqueues).
using Probe = std::function<void(const Engine&, const Scripted&)>;

Result runScripts(const std::vector<Script>& scripts, const std::vector<int>& pin = {}, const char* topo = "i7-4790", std::uint64_t seed = 1,
                  bool proxy = false, const Probe& probe = {}) {
    Result r;
    EngineConfig cfg;
    cfg.topo = std::make_shared<const Topology>(Topology::preset(topo));
    cfg.cost = CostModel::forTopology(*cfg.topo);
    cfg.seed = seed;
    cfg.check_invariants = true;
    cfg.stop_ns = 2'000'000'000;
    cfg.knobs.proxy_exec = proxy;
    Engine e(cfg);
    auto w = std::make_unique<Scripted>(scripts, pin, r.log);
    Scripted* sw = w.get();
    e.addWorkload(std::move(w));
    try {
        if (probe) {
            while (e.advance(1000)) probe(e, *sw);
        } else {
            e.run();
        }
    } catch (const std::exception& ex) {
        r.violation = ex.what();
    }
    r.proxy_runs = e.metrics().proxy_runs;
    r.proxy_migrations = e.metrics().proxy_migrations;
    r.proxy_returns = e.metrics().proxy_return_migrations;
    r.proxy_cause = e.metrics().migrations[int(MigrationCause::proxy)];
    r.stats = sw->m.stats();
    r.digest = e.digest();
    r.finished = sw->finished();
    return r;
}

std::vector<int> order(const Log& l) {
    std::vector<int> o;
    for (const auto& [i, t] : l.acquired) o.push_back(i);
    return o;
}
std::int64_t acquiredAt(const Log& l, int task, int nth = 0) {
    for (const auto& [i, t] : l.acquired)
        if (i == task && nth-- == 0) return t;
    return -1;
}

}  // namespace

TEST(Mutex, AnUncontendedLockIsTakenAtOnce) {
    const Result r = runScripts({{lock(), run(5000), unlock(), lock(), unlock()}});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.stats.acquisitions, 2);
    EXPECT_EQ(r.stats.contended, 0);
    EXPECT_EQ(r.stats.spin_ns, 0);
    EXPECT_EQ(r.stats.hold_ns, 5000);
}

TEST(Mutex, AContenderSpinsWhileTheOwnerRunsAndTakesTheLockWhenItIsLetGo) {
    // A holds it for 20 us of CPU on CPU 0; B asks for it 5 us in on CPU 2 and spins.
    const Result r = runScripts({{lock(), run(20000), unlock()}, {run(5000), lock(), run(1000), unlock()}}, {0, 2});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    ASSERT_EQ(order(r.log), (std::vector<int>{0, 1}));
    EXPECT_EQ(acquiredAt(r.log, 1), r.log.released.at(0).front());  // at the instant A lets go
    EXPECT_EQ(r.stats.contended, 1);
    EXPECT_EQ(r.stats.spun, 1);
    EXPECT_EQ(r.stats.slept, 0);
    EXPECT_GT(r.stats.spin_ns, 10000);  // spun until A let go (A and B start a few us apart)
    EXPECT_EQ(r.stats.spin_ns, r.stats.wait.max());
}

TEST(Mutex, AContenderSleepsWhenTheOwnerIsNotRunningAndIsWokenByTheUnlock) {
    // A holds it across a 100-us sleep: B, asking while A sleeps, does not spin.
    const Result r = runScripts({{lock(), sleepFor(100000), unlock()}, {run(5000), lock(), unlock()}}, {0, 2});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.stats.spin_ns, 0);
    EXPECT_EQ(r.stats.slept, 1);
    EXPECT_GT(acquiredAt(r.log, 1), r.log.released.at(0).front());  // after its wakeup
    EXPECT_GT(r.stats.sleep_ns, 80000);
}

TEST(Mutex, SpinningStopsWhenTheOwnerLeavesItsCpu) {
    // A runs 30 us holding it, then sleeps 100 us still holding it: B spins while A runs, then sleeps.
    const Result r = runScripts({{lock(), run(30000), sleepFor(100000), unlock()}, {run(5000), lock(), unlock()}}, {0, 2});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_EQ(r.stats.contended, 1);
    EXPECT_EQ(r.stats.slept, 1);
    EXPECT_GT(r.stats.spin_ns, 15000);
    EXPECT_LT(r.stats.spin_ns, 30000);
    EXPECT_GT(r.stats.sleep_ns, 90000);
}

TEST(Mutex, APreemptedSpinnerGoesToSleepOnTheWaitList) {
    // B spins on CPU 2 while A holds the lock for 50 ms on CPU 0; a hog shares CPU 2 with B, and
    // the tick preempts B within a few ms: it must sleep until A's unlock, not spin again.
    const Result r = runScripts({{lock(), run(50'000'000), unlock()}, {run(1000), lock(), unlock()}, {run(60'000'000)}}, {0, 2, 2});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.stats.slept, 1);
    EXPECT_LT(r.stats.spin_ns, 20'000'000);  // stopped at a preemption, long before A let go
    EXPECT_GT(acquiredAt(r.log, 1), r.log.released.at(0).front());
}

TEST(Mutex, SleepingWaitersAreWokenOneAtATimeInFifoOrder) {
    // A holds it across a sleep; B, C, D ask in that order (on their own CPUs) and all sleep;
    // each, once it has it, holds it across a sleep too, so the next is still asleep.
    const Script waiter = {lock(), sleepFor(20000), unlock()};
    std::vector<Script> s = {{lock(), sleepFor(200000), unlock()}};
    for (int k = 1; k <= 3; ++k) {
        Script w = {run(10000 * k)};
        w.insert(w.end(), waiter.begin(), waiter.end());
        s.push_back(w);
    }
    const Result r = runScripts(s, {0, 2, 4, 6});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_EQ(order(r.log), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(r.stats.slept, 3);
    EXPECT_EQ(r.stats.handoffs, 0);
}

TEST(Mutex, AStarvedFirstWaiterHasTheLockHandedToIt) {
    // A holds it across a sleep, then runs: W asks while A sleeps and sleeps (first waiter);
    // S asks while A runs and spins. A's unlock wakes W, but S, spinning, takes the lock. W
    // runs, finds it taken: it sets MUTEX_FLAG_HANDOFF and spins. X asks and spins too. S's
    // unlock hands the lock to W, ahead of X.
    const Result r = runScripts({{lock(), sleepFor(20000), run(40000), unlock()},
                                 {run(5000), lock(), run(5000), unlock()},
                                 {run(40000), lock(), run(30000), unlock()},
                                 {run(70000), lock(), unlock()}},
                                {0, 2, 4, 6});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_EQ(order(r.log), (std::vector<int>{0, 2, 1, 3}));  // A, S, W, X
    EXPECT_EQ(r.stats.handoffs, 1);
    EXPECT_EQ(acquiredAt(r.log, 2), r.log.released.at(0).front());  // S took it as A let go
    EXPECT_EQ(acquiredAt(r.log, 1), r.log.released.at(2).front());  // handed to W as S let go
}

TEST(Mutex, RandomScriptsKeepOneOwnerAndLoseNoWakeup) {
    // Property: any mix of tasks locking, holding across CPU work and sleeps, on a machine with
    // fewer CPUs than tasks (preemption while spinning and while holding), finishes; the
    // invariant checker (one owner, spinners run, a free lock's first waiter woken) holds at
    // every event; every lock is taken once; the same seed gives the same run.
    std::uint64_t seed = 12345;
    auto rnd = [&seed](std::int64_t n) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return std::int64_t((seed >> 33) % std::uint64_t(n));
    };
    for (int trial = 0; trial < 40; ++trial) {
        const int tasks = 2 + int(rnd(9));
        std::vector<Script> s(static_cast<std::size_t>(tasks));
        std::int64_t locks = 0;
        for (auto& sc : s) {
            const int rounds = 1 + int(rnd(12));
            for (int k = 0; k < rounds; ++k) {
                sc.push_back(run(rnd(30000)));
                sc.push_back(lock());
                locks++;
                sc.push_back(rnd(4) == 0 ? sleepFor(1000 + rnd(50000)) : run(100 + rnd(20000)));
                if (rnd(5) == 0) sc.push_back(run(rnd(5'000'000)));  // long enough for a tick preemption
                sc.push_back(unlock());
            }
        }
        const char* topo = trial % 2 ? "i7-4790" : "qemu-2s2c2t";
        const Result a = runScripts(s, {}, topo, std::uint64_t(trial + 1));
        ASSERT_TRUE(a.violation.empty()) << "trial " << trial << ": " << a.violation;
        ASSERT_TRUE(a.finished) << "trial " << trial;
        EXPECT_EQ(a.stats.acquisitions, locks) << "trial " << trial;
        EXPECT_EQ(a.stats.spun + a.stats.slept, a.stats.contended) << "trial " << trial;
        const Result b = runScripts(s, {}, topo, std::uint64_t(trial + 1));
        EXPECT_EQ(a.digest, b.digest) << "trial " << trial;
        // The lock's holds never overlap.
        std::vector<std::pair<std::int64_t, std::int64_t>> holds;
        std::map<int, std::size_t> nth;
        for (const auto& [i, t] : a.log.acquired) holds.emplace_back(t, a.log.released.at(i).at(nth[i]++));
        std::sort(holds.begin(), holds.end());
        for (std::size_t k = 1; k < holds.size(); ++k) ASSERT_LE(holds[k - 1].second, holds[k].first) << "trial " << trial;
    }
}

TEST(LockTorture, WritersShareTheLockAndTheReportSaysHow) {
    Scenario s = parseScenario(nlohmann::json::parse(R"({"topology": "i7-4790", "workloads": [
        {"type": "locktorture", "writers": 16, "runtime_s": 0.02, "hold_ns": 1000, "pause_ns": 2000}]})"),
                               "lt.json", ".");
    RunOptions o;
    o.check_invariants = true;
    const RunResult r = runScenario(s, s.variants.front(), s.cost, o);
    ASSERT_EQ(r.reports.size(), 1u);
    const WorkloadReport& w = r.reports[0];
    EXPECT_EQ(w.command.rfind("modprobe locktorture torture_type=mutex_lock nwriters_stress=16", 0), 0u) << w.command;
    ASSERT_FALSE(w.output.empty());
    EXPECT_EQ(w.output[0].rfind("Writes:  Total: ", 0), 0u) << w.output[0];
    EXPECT_NE(w.output[0].find("Fail: 0"), std::string::npos);
    std::map<std::string, double> c;
    for (const auto& v : w.counters) c[v.key] = v.value;
    // 16 writers, 8 CPUs, a 1-us hold in a 3-us loop: the lock is the bottleneck, nearly every
    // acquisition is contended, and writers sharing a CPU are preempted and sleep.
    EXPECT_LE(c["mutex_acquisitions"], 0.02 / 1e-6 + 16);  // the lock is held at most all the time
    EXPECT_GT(c["mutex_acquisitions"], 0.5 * 0.02 / 1e-6);
    EXPECT_GT(c["mutex_contended"], 0.9 * c["mutex_acquisitions"]);
    EXPECT_GT(c["mutex_spin_ms"], 0);
    EXPECT_GT(c["mutex_sleep_ms"], 0);
    // With one writer there is nobody to contend with.
    s.workloads[0] = LockTortureParams{1, 0.01, 1000, 2000, ""};
    const RunResult one = runScenario(s, s.variants.front(), s.cost, o);
    for (const auto& v : one.reports[0].counters)
        if (v.key == "mutex_contended") EXPECT_EQ(v.value, 0);
}

// --- Proxy execution (knob proxy_exec, engine_proxy.cpp; v6 of the series) -------------------

TEST(ProxyExec, ADonorStaysQueuedAndItsLockOwnerRunsInItsPlace) {
    // A and B share CPU 0: A takes the lock and works 20 ms holding it; B, run when the tick
    // preempts A, asks for it.
    // B blocks on it but stays on the runqueue (nr_running 2); when CFS picks B, A runs in its
    // place (rq->curr A, rq_selected() B). No spinning: the unlock hands the lock to B.
    bool sawDonorQueued = false, sawOwnerForDonor = false, donorRan = false;
    const Result r = runScripts({{lock(), run(20'000'000), unlock()}, {run(100'000), lock(), run(1000), unlock()}}, {0, 0}, "i7-4790", 1, true,
                                [&](const Engine& e, const Scripted& w) {
                                    const int a = w.m_ids[0], b = w.m_ids[1];
                                    if (e.taskIsBlocked(b)) {
                                        if (e.task(b).state == TaskState::Runnable && e.nrRunning(0) == 2) sawDonorQueued = true;
                                        if (e.currTask(0) == a && e.selectedTask(0) == b) sawOwnerForDonor = true;
                                        if (e.currTask(0) == b) donorRan = true;
                                    }
                                });
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_TRUE(r.finished);
    EXPECT_TRUE(sawDonorQueued);
    EXPECT_TRUE(sawOwnerForDonor);
    EXPECT_FALSE(donorRan);  // a blocked donor never executes
    EXPECT_GT(r.proxy_runs, 0u);
    EXPECT_EQ(r.stats.spin_ns, 0);
    EXPECT_EQ(r.stats.slept, 1);
    EXPECT_EQ(r.stats.handoffs, 1);
    EXPECT_EQ(order(r.log), (std::vector<int>{0, 1}));
}

TEST(ProxyExec, ADonorMovesToItsOwnersCpuAndReturnsWhenWoken) {
    // A holds the lock 2 ms on CPU 1; B (allowed on CPU 0 only) asks for it on CPU 0. Picking B
    // finds the owner on CPU 1: B is moved there (the chain migration, outside its mask: a
    // scheduling context only); the unlock wakes it on CPU 1, and being picked there, where it
    // may not run, sends it back through select_task_rq() (the return migration) to CPU 0.
    bool sawOnOwnersCpu = false, ranOutsideMask = false;
    const Result r = runScripts({{lock(), run(2'000'000), unlock(), run(1'000'000)}, {run(50'000), lock(), run(1000), unlock()}}, {1, 0}, "i7-4790",
                                1, true, [&](const Engine& e, const Scripted& w) {
                                    const int b = w.m_ids[1];
                                    if (e.taskIsBlocked(b) && e.task(b).t.cpu == 1) sawOnOwnersCpu = true;
                                    for (int c = 1; c < e.nrCpus(); ++c)
                                        if (e.currTask(c) == b) ranOutsideMask = true;
                                });
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_TRUE(r.finished);
    EXPECT_TRUE(sawOnOwnersCpu);
    EXPECT_FALSE(ranOutsideMask);
    EXPECT_EQ(r.proxy_migrations, 1u);
    EXPECT_EQ(r.proxy_returns, 1u);
    EXPECT_EQ(r.proxy_cause, 2u);  // both counted as the migration cause `proxy`
    EXPECT_EQ(order(r.log), (std::vector<int>{0, 1}));
    EXPECT_GE(acquiredAt(r.log, 1), r.log.released.at(0).front());
}

TEST(ProxyExec, WithoutTheKnobTheSameScriptsSpinAndNothingMovesForALock) {
    const Result r = runScripts({{lock(), run(2'000'000), unlock(), run(1'000'000)}, {run(50'000), lock(), run(1000), unlock()}}, {1, 0});
    ASSERT_TRUE(r.violation.empty()) << r.violation;
    EXPECT_GT(r.stats.spin_ns, 1'000'000);
    EXPECT_EQ(r.proxy_cause, 0u);
    EXPECT_EQ(r.proxy_runs, 0u);
}

TEST(ProxyExec, RandomScriptsKeepOneOwnerAndEveryDonorGetsTheLock) {
    // Eight tasks on four CPUs take the lock in random scripts, with proxy execution: the
    // invariant checker runs at every event (one owner, donors queued and never running), and
    // every script finishes (no lost handoff).
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        Rng rng(seed);
        std::vector<Script> scripts(8);
        for (auto& s : scripts)
            for (int k = 0; k < 6; ++k) {
                s.push_back(run(std::int64_t(rng.below(200'000)) + 1000));
                s.push_back(lock());
                s.push_back(run(std::int64_t(rng.below(300'000)) + 1000));
                if (rng.below(4) == 0) s.push_back(sleepFor(std::int64_t(rng.below(100'000)) + 1000));
                s.push_back(unlock());
            }
        const Result r = runScripts(scripts, {}, "i7-4790", seed, true);
        ASSERT_TRUE(r.violation.empty()) << "seed " << seed << ": " << r.violation;
        EXPECT_TRUE(r.finished) << "seed " << seed;
        EXPECT_EQ(r.stats.acquisitions, 48) << "seed " << seed;
        EXPECT_EQ(r.stats.spin_ns, 0) << "seed " << seed;
    }
}
