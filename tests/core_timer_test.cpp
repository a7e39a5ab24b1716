// SPDX-License-Identifier: GPL-2.0-or-later
// core_timer_test.cpp: sleep timers as Linux 6.1's hrtimers -- where
// get_nohz_timer_target() puts a timer (busy, idle and idle-by-delay CPUs, pinned timers,
// timer_migration off, hrtimer_check_target()), the wakeup a timer makes (its CPU, hard-interrupt
// context, no WF_SYNC), the C-state exit before the handler on an idle CPU, a tick ending a timer
// inside its slack, cyclictest's output, and the side effect of the idle delay on cyclictest beside
// busy hogs, against the real 6.1 recording of that command.
#include "kernel/sched_balance.h"
#include "kernel/wakeup_path.h"
#include "replay/replay.h"
#include "sim/engine.h"
#include "sim/scenario.h"
#include "test_scenarios.h"
#include "trace/trace.h"
#include "trace/trace_dat_writer.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <regex>
#include <sstream>
#include <set>

#include <unistd.h>

using namespace sched;

namespace {

std::shared_ptr<const Topology> topo(const char* name) { return std::make_shared<const Topology>(Topology::preset(name)); }

/// `cpu` runs one task that left idle `ago` ns before now (st.now_ns).
void running(MachineState& st, int cpu, std::int64_t ago) {
    Rq& rq = st.rq[std::size_t(cpu)];
    rq.nr_running = rq.h_nr_running = 1;
    rq.curr = CurrKind::Normal;
    rq.idle_end_time = st.now_ns - ago;
    rq.clock_idle = st.now_ns - ago;
}

void idleCpus(MachineState& st) {
    for (int c = 0; c < int(st.rq.size()); ++c) {
        Rq& rq = st.rq[std::size_t(c)];
        rq.nr_running = rq.h_nr_running = 0;
        rq.curr = CurrKind::Idle;
        rq.idle_end_time = rq.clock_idle = -10000000000LL;
    }
}

}  // namespace

// qemu-2s2c2t: SMT pairs (0,1) (2,3) (4,5) (6,7), one LLC per socket: CPU 2's domains are
// {2,3}, {0-3}, {0-7}. A CPU running a task is not idle_cpu(): the timer stays there.
TEST(TimerTarget, ABusyCpuKeepsItsTimer) {
    MachineState st(topo("qemu-2s2c2t"));
    st.now_ns = 10000000000LL;
    idleCpus(st);
    running(st, 2, 100000);  // left idle 100 us ago
    running(st, 0, 5000000000LL);
    const TimerTarget t = get_nohz_timer_target(st, Knobs::preset("baseline"), 2);
    EXPECT_EQ(t.cpu, 2);
    EXPECT_EQ(t.why, TimerTarget::Why::ThisBusy);
    EXPECT_FALSE(t.this_idle_by_delay);
}

// The idle delay makes the arming CPU idle_cpu(): the first CPU that is not idle, lowest
// domain first, each span in CPU order, gets the timer.
TEST(TimerTarget, AnIdleByDelayCpuSendsItToTheNearestBusyCpu) {
    const Knobs v2 = Knobs::preset("idle-delay-v2");
    MachineState st(topo("qemu-2s2c2t"));
    st.now_ns = 10000000000LL;
    idleCpus(st);
    running(st, 2, 100000);        // within the 1 ms delay, nr_running 1 <= 4: idle by delay
    running(st, 5, 5000000000LL);  // busy for 5 s: not idle
    TimerTarget t = get_nohz_timer_target(st, v2, 2);
    EXPECT_TRUE(t.this_idle_by_delay);
    EXPECT_EQ(t.why, TimerTarget::Why::Moved);
    EXPECT_EQ(t.cpu, 5) << "the only busy CPU, in the machine-wide domain";
    EXPECT_EQ(t.level, int(st.sd->domains(2).size()) - 1);
    running(st, 1, 5000000000LL);  // the same LLC
    t = get_nohz_timer_target(st, v2, 2);
    EXPECT_EQ(t.cpu, 1);
    EXPECT_EQ(t.level, 1);
    running(st, 3, 5000000000LL);  // the SMT sibling comes first
    t = get_nohz_timer_target(st, v2, 2);
    EXPECT_EQ(t.cpu, 3);
    EXPECT_EQ(t.level, 0);
    // A CPU that left idle just now is idle_cpu() as well: it is no target.
    idleCpus(st);
    running(st, 2, 100000);
    running(st, 3, 200000);
    running(st, 6, 300000);
    t = get_nohz_timer_target(st, v2, 2);
    EXPECT_EQ(t.why, TimerTarget::Why::NoneBusy);
    EXPECT_EQ(t.cpu, 2) << "default_cpu: the arming CPU";
    EXPECT_EQ(t.examined, 1 + 1 + 3 + 7) << "itself, then each domain's other CPUs";
    // Without the patch the same CPU is busy.
    EXPECT_EQ(get_nohz_timer_target(st, Knobs::preset("baseline"), 2).why, TimerTarget::Why::ThisBusy);
    // With more than idle_delay_max_running tasks the delay does not apply.
    st.rq[2].nr_running = st.rq[2].h_nr_running = 5;
    EXPECT_EQ(get_nohz_timer_target(st, v2, 2).why, TimerTarget::Why::ThisBusy);
}

namespace {

using Hog = TestHog;

/// Runs 20 us, then sleeps `sleep` ns with `slack` (pinned or not), over and over; at each
/// wakeup it notes how its last timer was placed.
class Sleeper : public Workload {
public:
    Sleeper(std::int64_t sleep, std::int64_t slack, bool pinned, std::uint16_t index)
        : m_sleep(sleep), m_slack(slack), m_pinned(pinned), m_index(index) {}
    std::string name() const override { return "sleeper"; }
    std::string commandLine() const override { return "sleeper"; }
    void start(Engine& e) override { id = e.spawn(m_index, "sleeper", 2, -1, 0, 0, 0); }
    Action step(Engine& e, SimTask& t) override {
        if (t.b == 0) {
            if (t.a++ > 0) {
                placed.push_back(e.timerOf(id));
                wokeOn.push_back(e.currentCpu());
            }
            t.b = 1;
            return Action::run(20000);
        }
        t.b = 0;
        return Action::sleep(m_sleep, m_slack, m_pinned);
    }
    bool finished() const override { return false; }
    void report(const Engine&, WorkloadReport&) const override {}
    int id = -1;
    std::vector<TimerInfo> placed;
    std::vector<int> wokeOn;

private:
    std::int64_t m_sleep, m_slack;
    bool m_pinned;
    std::uint16_t m_index;
};

struct TimerRun {
    std::unique_ptr<Engine> e;
    Sleeper* s = nullptr;
    std::vector<WakeInputs> wakes;  ///< the sleeper's wakeups
};

/// qemu-2s2c2t with a hog pinned to CPU 5 and the sleeper, for 200 ms.
TimerRun runSleeper(const Knobs& k, std::int64_t sleep, std::int64_t slack, bool pinned, const char* t = "qemu-2s2c2t", std::int64_t ns = 200000000) {
    EngineConfig cfg;
    cfg.topo = topo(t);
    cfg.cost = CostModel::forTopology(*cfg.topo);
    cfg.knobs = k;
    cfg.check_invariants = true;
    TimerRun r;
    r.e = std::make_unique<Engine>(cfg);
    auto hog = std::make_unique<Hog>();
    hog->setCpus(CpuMask::intern(CpuMask::single(5)));
    r.e->addWorkload(std::move(hog));
    auto s = std::make_unique<Sleeper>(sleep, slack, pinned, 1);
    r.s = s.get();
    r.e->addWorkload(std::move(s));
    Engine* e = r.e.get();
    r.e->wake_inputs_sink = [&r, e](const WakeInputs& in) {
        if (in.pid == e->task(r.s->id).t.pid) r.wakes.push_back(in);
    };
    r.e->advance(ns);
    return r;
}

}  // namespace

// Under the idle delay the sleeper's CPU (it just left idle) is idle_cpu() when it arms its
// 10-ms timer: the timer goes to the hog's CPU, whose interrupt wakes the sleeper from there,
// in hard-interrupt context, without WF_SYNC; a remote wakeup, counted as a remote timer.
TEST(Timers, IdleDelayMovesTheTimerToTheBusyCpuWhichWakesTheSleeper) {
    TimerRun r = runSleeper(Knobs::preset("idle-delay-v2"), 10000000, 50000, false);
    ASSERT_GE(r.s->placed.size(), 10u);
    ASSERT_GE(r.wakes.size(), r.s->placed.size());  // wake_up_new_task() is no wakeup here: wakes[i] is placed[i]'s
    // The first timer is armed 20 us into the run, when the hog has run less than the 1 ms
    // delay itself: no CPU is busy yet, the timer stays (NoneBusy). From the second on:
    EXPECT_EQ(r.s->placed[0].target.why, TimerTarget::Why::NoneBusy);
    for (std::size_t i = 1; i < r.s->placed.size(); ++i) {
        const TimerInfo& ti = r.s->placed[i];
        EXPECT_EQ(ti.target.why, TimerTarget::Why::Moved) << i;
        EXPECT_TRUE(ti.target.this_idle_by_delay) << i;
        EXPECT_EQ(ti.target.cpu, 5) << i;
        EXPECT_FALSE(ti.kept_by_check) << "10 ms is past the hog's next tick (HZ=250)";
        EXPECT_EQ(ti.hard - ti.soft, 50000) << "timer_slack";
        const WakeInputs& w = r.wakes[i];
        EXPECT_EQ(w.cpu, 5) << "try_to_wake_up() runs on the timer's CPU";
        EXPECT_FALSE(w.in_task) << "hrtimer_wakeup() runs in hard-interrupt context";
        EXPECT_FALSE(w.sync);
        EXPECT_EQ(w.prev, ti.armed_on);
        EXPECT_NE(w.cpu, w.prev);
    }
    const Metrics& m = r.e->metrics();
    EXPECT_EQ(m.wake_by_timer_remote, r.s->placed.size() - 1);
    EXPECT_EQ(m.wake_by_timer_local, 1u);
    EXPECT_GE(m.timers_moved, m.wake_by_timer_remote);  // the last one may not have fired yet
    EXPECT_EQ(m.timers_by_delay, m.timers_armed);
}

// The same run without the patch: the sleeper's CPU runs it, so it is not idle; every timer
// stays and fires on the sleeper's own CPU (a local timer).
TEST(Timers, BaselineKeepsEveryTimerOnTheSleepersCpu) {
    TimerRun r = runSleeper(Knobs::preset("baseline"), 10000000, 50000, false);
    ASSERT_GE(r.s->placed.size(), 10u);
    for (std::size_t i = 0; i < r.s->placed.size(); ++i) {
        EXPECT_EQ(r.s->placed[i].target.why, TimerTarget::Why::ThisBusy) << i;
        EXPECT_EQ(r.wakes[i].cpu, r.s->placed[i].armed_on) << i;
        EXPECT_EQ(r.wakes[i].cpu, r.wakes[i].prev) << i;
    }
    EXPECT_EQ(r.e->metrics().wake_by_timer_remote, 0u);
    EXPECT_EQ(r.e->metrics().wake_by_timer_local, r.s->placed.size());
}

// Pinned timers (HRTIMER_MODE_PINNED) and timer_migration = 0 never move.
TEST(Timers, PinnedTimersAndTimerMigrationOffStayLocal) {
    TimerRun pinned = runSleeper(Knobs::preset("idle-delay-v2"), 10000000, 50000, true);
    Knobs off = Knobs::preset("idle-delay-v2");
    off.set("timer_migration", "0");
    TimerRun noMig = runSleeper(off, 10000000, 50000, false);
    for (TimerRun* r : {&pinned, &noMig}) {
        ASSERT_GE(r->s->placed.size(), 10u);
        for (std::size_t i = 0; i < r->s->placed.size(); ++i) {
            EXPECT_EQ(r->s->placed[i].target.why, TimerTarget::Why::Pinned) << i;
            EXPECT_EQ(r->wakes[i].cpu, r->s->placed[i].armed_on) << i;
        }
        EXPECT_EQ(r->e->metrics().timers_moved, 0u);
    }
}

// hrtimer_check_target(): a timer that expires before the target CPU's next event (the hog's
// tick, every 4 ms at HZ=250) stays on the arming CPU, which can program its own clock event.
TEST(Timers, CheckTargetKeepsATimerEarlierThanTheTargetsNextEvent) {
    TimerRun r = runSleeper(Knobs::preset("idle-delay-v2"), 100000, 50000, false);
    ASSERT_GE(r.s->placed.size(), 100u);
    std::size_t kept = 0, moved = 0;
    for (std::size_t i = 0; i < r.s->placed.size(); ++i) {
        const TimerInfo& ti = r.s->placed[i];
        if (ti.soft < 2000000) continue;  // the hog's first millisecond: it is idle by delay itself (see above)
        ASSERT_EQ(ti.target.cpu, 5) << i;
        const int fired = r.wakes[i].cpu;
        if (ti.kept_by_check) {
            ++kept;
            EXPECT_EQ(fired, ti.armed_on) << i;
        } else {
            ++moved;
            EXPECT_EQ(fired, 5) << i;
            // Moved only when the hog's next tick came first: a tick boundary lies in (armed, hard].
            const std::int64_t jiffy = 4000000;
            EXPECT_LE((ti.soft - 100000) / jiffy + 1, ti.hard / jiffy) << i;
        }
    }
    EXPECT_GT(kept, moved * 5) << "150 us fits between most pairs of 4-ms ticks";
    EXPECT_GE(r.e->metrics().timers_kept_local, kept);  // and the first millisecond's, and the last one's
    EXPECT_LE(r.e->metrics().timers_kept_local, kept + 10);
}

// A timer interrupt on an idle CPU runs after the CPU left its C-state: a qemu guest idles in
// HLT (2 us to leave, no cpuidle driver), so the wakeup comes 2 us after the hard expiry.
TEST(Timers, AnIdleCpuLeavesItsCStateBeforeTheHandlerRuns) {
    TimerRun r = runSleeper(Knobs::preset("baseline"), 10000000, 0, false);
    ASSERT_GE(r.s->placed.size(), 10u);
    const std::int64_t exit = r.e->cost().cstates[0].exit_ns;
    ASSERT_EQ(exit, 2000);
    for (std::size_t i = 0; i < r.s->placed.size(); ++i)
        EXPECT_EQ(r.wakes[i].time, r.s->placed[i].hard + exit) << "the handler runs once the CPU is out of HLT: " << i;
    EXPECT_EQ(r.e->metrics().timer_irqs_idle, r.s->placed.size());
}

// The tick is one of the CPU's hrtimers: a tick between a sleep timer's soft and hard expiry
// runs it (__hrtimer_run_queues() runs every timer whose soft expiry has passed). The sleeper
// shares the hog's CPU, so that CPU's tick runs; with 6 ms of slack a tick always falls inside.
TEST(Timers, ATickInsideTheSlackEndsTheSleep) {
    EngineConfig cfg;
    cfg.topo = topo("qemu-2s2c2t");
    cfg.cost = CostModel::forTopology(*cfg.topo);
    cfg.check_invariants = true;
    Engine e(cfg);
    auto hog = std::make_unique<Hog>();
    hog->setCpus(CpuMask::intern(CpuMask::single(5)));
    e.addWorkload(std::move(hog));
    auto s = std::make_unique<Sleeper>(1000000, 6000000, true, 1);
    s->setCpus(CpuMask::intern(CpuMask::single(5)));
    Sleeper* sl = s.get();
    e.addWorkload(std::move(s));
    std::vector<std::int64_t> woke;
    e.wake_inputs_sink = [&](const WakeInputs& in) {
        if (in.pid == e.task(sl->id).t.pid) woke.push_back(in.time);
    };
    e.advance(200000000);
    ASSERT_GE(sl->placed.size(), 10u);
    for (std::size_t i = 0; i < sl->placed.size(); ++i) {
        const TimerInfo& ti = sl->placed[i];
        EXPECT_GE(woke[i], ti.soft) << i;
        EXPECT_LT(woke[i], ti.hard) << "a tick came first: " << i;
        EXPECT_EQ(woke[i] % 4000000, 0) << "at a tick (HZ=250): " << i;
    }
}

// cyclictest prints print_stat()'s line per thread; on an idle machine each period wakes
// timer_slack (50 us) late plus the wakeup's own cost, and thread i runs every 1000 + 500 i us.
TEST(Cyclictest, OutputAndLatenciesOnAnIdleMachine) {
    const Scenario s = scenario(R"({"topology": "qemu-2s2c2t", "workloads": [
        {"type": "cyclictest", "threads": 2, "interval_us": 1000, "distance_us": 500, "duration_s": 0.3}]})");
    const RunResult r = runScenario(s, s.variants[0], s.cost, RunOptions{});
    ASSERT_EQ(r.reports.size(), 1u);
    const WorkloadReport& rep = r.reports[0];
    EXPECT_EQ(rep.command, "cyclictest -t 2 -i 1000 -d 500 -D 0.3 -q -m");
    ASSERT_EQ(rep.output.size(), 3u);
    EXPECT_EQ(rep.output[0], "# /dev/cpu_dma_latency set to 0us");
    const std::regex line(
        R"(T: ([01]) \( {0,4}(\d+)\) P: 0 I:(1000|1500) C: {0,6}(\d+) Min: {0,6}(\d+) Act: {0,4}(\d+) Avg: {0,4}(\d+) Max: {0,7}(\d+))");
    for (int i = 0; i < 2; ++i) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(rep.output[std::size_t(i) + 1], m, line)) << rep.output[std::size_t(i) + 1];
        EXPECT_EQ(std::stoi(m[1]), i);
        EXPECT_EQ(std::stoi(m[3]), 1000 + 500 * i);
        const int cycles = std::stoi(m[4]), mn = std::stoi(m[5]), avg = std::stoi(m[7]), mx = std::stoi(m[8]);
        EXPECT_NEAR(cycles, 300000 / (1000 + 500 * i), 1);
        EXPECT_GE(mn, 0);
        EXPECT_GE(avg, 50) << "timer_slack: a lone timer fires at its hard expiry";
        EXPECT_LE(mx, 60);
        EXPECT_LE(mn, avg);
        EXPECT_LE(avg, mx);
    }
    // The fixed-width fields as cyclictest pads them.
    EXPECT_EQ(rep.output[1].substr(0, 5), "T: 0 ");
    EXPECT_NE(rep.output[1].find(" C:    300 "), std::string::npos) << rep.output[1];
}

// The recording and the simulation of `cyclictest -t 4 -i 1000 -d 500 -D 4 -q -m` beside 4
// busy-loop hogs on the qemu-2s2c2t guest (stock 6.1): nearly every cyclictest wakeup is made
// by a timer on the thread's own CPU (the sched_waking line's CPU is its target_cpu). Under
// idle-delay-v2 most of them come from a remote timer, through the wakelist and an IPI: their
// wakeup window grows (cyclictest's own p99 barely moves: its threads' CPUs poll, so the remote
// wakeups need no IPI), and the worst latency does not shrink.
TEST(Cyclictest, HogsScenarioAgainstTheRecordingAndUnderTheIdleDelay) {
    const Trace t = readFtraceText(std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-cyclictest-hogs/trace.txt.gz");
    std::uint64_t rec = 0, recLocal = 0;
    for (const SchedEvent& ev : t.events) {
        if (ev.kind != EvKind::sched_waking) continue;
        const auto c = t.comm.find(ev.pid);
        if (c == t.comm.end() || c->second != "cyclictest") continue;
        ++rec;
        recLocal += ev.cpu == ev.target_cpu;
    }
    ASSERT_GT(rec, 4000u);
    const double recShare = double(recLocal) / double(rec);

    const Scenario s = loadScenario(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios/cyclictest-hogs-qemu.json");
    ASSERT_EQ(s.variants.size(), 2u);
    const RunResult a = runScenario(s, s.variants[0], s.cost, RunOptions{});
    const RunResult b = runScenario(s, s.variants[1], s.cost, RunOptions{});
    const Metrics& ma = a.engine->metrics();
    const Metrics& mb = b.engine->metrics();
    const auto share = [](const Metrics& m) {
        return double(m.wake_by_timer_local) / double(std::max<std::uint64_t>(1, m.wake_by_timer_local + m.wake_by_timer_remote));
    };
    EXPECT_GT(recShare, 0.95);
    EXPECT_NEAR(share(ma), recShare, 0.05) << "recorded " << recLocal << " of " << rec << " local";
    EXPECT_LT(share(mb), 0.75) << "the idle delay moves the timers (from nearly none to more than a quarter of them)";
    EXPECT_GT(mb.timers_moved, 10 * std::max<std::uint64_t>(1, ma.timers_moved));
    EXPECT_GT(mb.ttwu_wakelist, ma.ttwu_wakelist + 1000);
    const auto headline = [](const RunResult& r, const char* key) {
        for (const auto& rep : r.reports)
            for (const auto& h : rep.headline)
                if (h.key == key) return h.value;
        return -1.0;
    };
    // The remote timers' wakeups go through the wakelist: their window (sched_waking to
    // sched_wakeup) takes the IPI's and the handler's time, a local timer's only the select's.
    EXPECT_GT(mb.ttwu_window.percentile(99), ma.ttwu_window.percentile(99));
    EXPECT_GE(headline(b, "max_us"), headline(a, "max_us"));
}

// ---------------------------------------------------------------------------------------------
// Timer events in the exports (timer:hrtimer_*) and read back

namespace {

struct ExportedRun {
    std::vector<SchedEvent> events;
    std::uint64_t armed = 0, moved = 0, kept_local = 0;
    std::string text;
};

ExportedRun exportCyclictestHogs(std::size_t variant, const std::string& datPath = {}) {
    const Scenario s = loadScenario(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios/cyclictest-hogs-qemu.json");
    ExportedRun x;
    std::ostringstream text;
    std::unique_ptr<FtraceTextWriter> w;
    std::unique_ptr<TraceDatWriter> dat;
    RunOptions o;
    o.on_start = [&](const Engine& e) {
        auto commOf = [&e](std::int32_t pid) { return e.taskComm(pid); };
        w = std::make_unique<FtraceTextWriter>(text, e.nrCpus(), commOf);
        if (!datPath.empty()) dat = std::make_unique<TraceDatWriter>(datPath, e.nrCpus(), commOf);
    };
    o.event_sink = [&](const SchedEvent& e) {
        x.events.push_back(e);
        w->write(e);
        if (dat) dat->write(e);
    };
    const RunResult r = runScenario(s, s.variants[variant], s.cost, o);
    if (dat) dat->commit();
    x.armed = r.engine->metrics().timers_armed;
    x.moved = r.engine->metrics().timers_moved;
    x.kept_local = r.engine->metrics().timers_kept_local;
    x.text = text.str();
    return x;
}

/// The hrtimer events of `t` equal the simulated ones, field by field (timers by their pointer).
void expectSameTimerEvents(const std::vector<SchedEvent>& sim, const Trace& t) {
    std::vector<SchedEvent> a, b;
    for (const SchedEvent& e : sim)
        if (isHrtimerEvent(e.kind)) a.push_back(e);
    for (const SchedEvent& e : t.events)
        if (isHrtimerEvent(e.kind)) b.push_back(e);
    ASSERT_EQ(a.size(), b.size());
    // The trace.dat reader merges the CPUs by time (ties to the lower CPU): compare in that order.
    auto order = [](const SchedEvent& x, const SchedEvent& y) { return x.time < y.time || (x.time == y.time && x.cpu < y.cpu); };
    std::stable_sort(a.begin(), a.end(), order);
    std::stable_sort(b.begin(), b.end(), order);
    for (std::size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE(i);
        ASSERT_EQ(a[i].kind, b[i].kind);
        ASSERT_EQ(a[i].time, b[i].time);
        ASSERT_EQ(a[i].cpu, b[i].cpu);
        ASSERT_GE(b[i].pid, 0);
        ASSERT_LT(std::size_t(b[i].pid), t.hrtimer_ptr.size());
        ASSERT_EQ(t.hrtimer_ptr[std::size_t(b[i].pid)], hrtimerPointer(a[i].pid));
        if (a[i].kind == EvKind::hrtimer_start || a[i].kind == EvKind::hrtimer_expire_entry) {
            ASSERT_EQ(hrtimerTime(a[i]), hrtimerTime(b[i]));
            ASSERT_EQ(hrtimerFunctionName(b[i], &t), "hrtimer_wakeup");
        }
        if (a[i].kind == EvKind::hrtimer_start) {
            ASSERT_EQ(hrtimerSlack(a[i]), hrtimerSlack(b[i]));
            ASSERT_EQ(a[i].cause, b[i].cause);
        }
    }
}

}  // namespace

TEST(TimerEvents, EveryArmedTimerIsStartedCancelledAndExpiredInTheKernelsOrder) {
    const ExportedRun x = exportCyclictestHogs(1);
    std::uint64_t starts = 0, entries = 0;
    for (std::size_t i = 0; i < x.events.size(); ++i) {
        const SchedEvent& e = x.events[i];
        if (e.kind == EvKind::hrtimer_start) {
            ++starts;
            EXPECT_EQ(hrtimerSlack(e), 50000u) << "timer_slack_ns of a SCHED_OTHER task";
            EXPECT_TRUE(e.cause == HRTIMER_MODE_ABS || e.cause == HRTIMER_MODE_REL) << int(e.cause);
        }
        if (e.kind != EvKind::hrtimer_expire_entry) continue;
        ++entries;
        // __run_hrtimer(): hrtimer_cancel just before, on the same CPU, from the interrupt.
        ASSERT_GT(i, 0u);
        EXPECT_EQ(x.events[i - 1].kind, EvKind::hrtimer_cancel);
        EXPECT_EQ(x.events[i - 1].cause, kHrtimerCancelInIrq);
        EXPECT_EQ(x.events[i - 1].pid, e.pid);
        EXPECT_EQ(hrtimerTime(e), e.time) << "now = the interrupt's time";
        // The callback's sched_waking of the sleeper, then hrtimer_expire_exit, before any switch of that CPU.
        ASSERT_LT(i + 1, x.events.size());
        EXPECT_EQ(x.events[i + 1].kind, EvKind::sched_waking);
        EXPECT_EQ(x.events[i + 1].pid, e.pid) << "the sleeper's pid names its timer";
        EXPECT_EQ(x.events[i + 1].cpu, e.cpu);
        bool exited = false;
        for (std::size_t j = i + 1; j < x.events.size() && !exited; ++j) {
            if (x.events[j].cpu != e.cpu) continue;
            ASSERT_NE(x.events[j].kind, EvKind::sched_switch) << "a switch inside the timer's interrupt at event " << j;
            exited = x.events[j].kind == EvKind::hrtimer_expire_exit && x.events[j].pid == e.pid;
        }
        EXPECT_TRUE(exited);
    }
    EXPECT_EQ(starts, x.armed);
    EXPECT_GT(entries, x.armed - 10);
}

TEST(TimerEvents, TheFtraceTextExportReadsBackWithTheMovedTimers) {
    const ExportedRun x = exportCyclictestHogs(1);
    ASSERT_GT(x.moved, 1000u);
    // As the kernel prints them.
    EXPECT_TRUE(std::regex_search(x.text, std::regex(R"(cyclictest-\d+ +\[\d{3}\] d\.\.1\. +\d+\.\d{9}: hrtimer_start: hrtimer=ffffc900[0-9a-f]{8} )"
                                                     R"(function=hrtimer_wakeup expires=\d+ softexpires=\d+ mode=ABS\n)")));
    EXPECT_TRUE(std::regex_search(x.text, std::regex(R"(\] d\.h1\. +\d+\.\d{9}: hrtimer_cancel: hrtimer=ffffc900[0-9a-f]{8}\n)")));
    EXPECT_TRUE(std::regex_search(
        x.text, std::regex(R"(\] d\.h\.\. +\d+\.\d{9}: hrtimer_expire_entry: hrtimer=ffffc900[0-9a-f]{8} function=hrtimer_wakeup now=\d+\n)")));
    const Trace t = parseFtraceText(x.text, "sim.txt");
    EXPECT_EQ(t.problem_count, 0u);
    expectSameTimerEvents(x.events, t);
    const HrtimerStats h = hrtimerStats(t);
    EXPECT_EQ(h.sleeps_started, x.armed);
    EXPECT_EQ(h.sleeps_moved, x.moved) << "the trace says which timers get_nohz_timer_target() moved: start and expiry CPUs differ";
    EXPECT_NE(t.summary().find(fmt::format("on the CPU that armed them, {} (", x.moved)), std::string::npos) << t.summary();
    // Baseline: none moved.
    const ExportedRun base = exportCyclictestHogs(0);
    EXPECT_EQ(hrtimerStats(parseFtraceText(base.text, "base.txt")).sleeps_moved, 0u);
}

TEST(TimerEvents, TheTraceDatExportReadsBackTheSame) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("schedlab-timer-dat-{}", ::getpid());
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "cyc.dat").string();
    const ExportedRun x = exportCyclictestHogs(1, path);
    const Trace t = readTraceDat(path);
    std::filesystem::remove_all(dir);
    EXPECT_EQ(t.problem_count, 0u);
    expectSameTimerEvents(x.events, t);
    EXPECT_EQ(hrtimerStats(t).sleeps_moved, x.moved);
    EXPECT_EQ(t.event_counts.at("hrtimer_start"), x.armed);
}

TEST(TimerEvents, TheImporterReadsTheKernelsAndTraceCmdsLayoutsAndRefusesBadOnes) {
    const std::string head = "# tracer: nop\n#\n";
    const std::string text =
        head +
        "      cyclictest-1066    [000] d..1.    13.500000: hrtimer_start: hrtimer=00000000a1b2c3d4 function=hrtimer_wakeup "
        "expires=13500050000 softexpires=13500000000 mode=REL|PINNED\n"
        "      cyclictest-1066    [000] d..1.    13.500001: hrtimer_start: hrtimer=00000000deadbeef function=it_real_fn "
        "expires=13600000000 softexpires=13600000000 mode=0x9\n"
        "          <idle>-0       [003] d.h1.    13.500060: hrtimer_cancel: hrtimer=00000000a1b2c3d4\n"
        "          <idle>-0       [003] d.h..    13.500060: hrtimer_expire_entry: hrtimer=00000000a1b2c3d4 function=hrtimer_wakeup "
        "now=13500059000\n"
        "          <idle>-0       [003] d.h..    13.500061: hrtimer_expire_exit: hrtimer=00000000a1b2c3d4\n"
        // trace-cmd report's hrtimer plugin: 0x pointers, no mode, now= before function=.
        "          <idle>-0     [001]    13.600000: hrtimer_expire_entry: hrtimer=0xdeadbeef now=13600000100 function=it_real_fn/0x0\n"
        // Bad ones.
        "          <idle>-0       [001] d.h..    13.700000: hrtimer_expire_entry: function=hrtimer_wakeup now=1\n"
        "          <idle>-0       [001] d..1.    13.700001: hrtimer_start: hrtimer=00000000a1b2c3d4 function=hrtimer_wakeup "
        "expires=10 softexpires=20 mode=ABS\n"
        "          <idle>-0       [001] d..1.    13.700002: hrtimer_start: hrtimer=00000000a1b2c3d4 function=hrtimer_wakeup "
        "expires=30 softexpires=20 mode=SIDEWAYS\n";
    const Trace t = parseFtraceText(text, "timers.txt");
    ASSERT_EQ(t.problem_count, 3u);
    EXPECT_EQ(t.problems[0].what, "hrtimer_expire_entry: expected hrtimer=<pointer>");
    EXPECT_EQ(t.problems[1].what, "hrtimer_start: softexpires 20 is after expires 10");
    EXPECT_EQ(t.problems[2].what, "hrtimer_start: mode=SIDEWAYS is not an hrtimer mode");
    ASSERT_EQ(t.events.size(), 6u);
    const SchedEvent& s = t.events[0];
    EXPECT_EQ(s.kind, EvKind::hrtimer_start);
    EXPECT_EQ(hrtimerTime(s), 13500050000);
    EXPECT_EQ(hrtimerSlack(s), 50000u);
    EXPECT_EQ(s.cause, HRTIMER_MODE_REL | HRTIMER_MODE_PINNED);
    EXPECT_EQ(t.events[1].cause, HRTIMER_MODE_REL | HRTIMER_MODE_HARD) << "6.1 prints the HARD modes as numbers";
    EXPECT_EQ(hrtimerFunctionName(t.events[1], &t), "it_real_fn");
    EXPECT_EQ(t.hrtimer_ptr.size(), 2u);
    EXPECT_EQ(t.hrtimer_ptr[std::size_t(t.events[3].pid)], 0xa1b2c3d4u);
    EXPECT_EQ(hrtimerTime(t.events[3]), 13500059000);
    EXPECT_EQ(t.events[5].pid, t.events[1].pid) << "0xdeadbeef and 00000000deadbeef are one timer";
    EXPECT_EQ(hrtimerFunctionName(t.events[5], &t), "it_real_fn") << "the plugin's /0x0 is not part of the name";
    const HrtimerStats h = hrtimerStats(t);
    EXPECT_EQ(h.sleeps_started, 1u);
    EXPECT_EQ(h.sleeps_moved, 1u) << "armed on CPU 0, expired on CPU 3";
    EXPECT_EQ(h.expired, 2u);
}

TEST(TimerEvents, AgreeChecksTimerPlacementAgainstTheExpiringCpu) {
    const ExportedRun x = exportCyclictestHogs(1);  // idle-delay-v2
    const Trace t = parseFtraceText(x.text, "sim.txt");
    const auto topo = std::make_shared<const Topology>(Topology::preset("qemu-2s2c2t"));
    const AgreeReport v2 = agree(t, topo, Knobs::preset("idle-delay-v2"));
    EXPECT_EQ(v2.timers.checked, x.armed);
    EXPECT_EQ(v2.timers.moved_by_kernel, x.moved);
    EXPECT_EQ(v2.timers.agree_moved, x.moved) << "every moved timer went where get_nohz_timer_target() on the rebuilt state sends it";
    EXPECT_EQ(v2.timers.kept_local, x.kept_local) << "the ones hrtimer_check_target() kept are the only ones apart";
    EXPECT_EQ(v2.timers.disagree, 0u);
    EXPECT_NE(v2.text().find("sleep timers (get_nohz_timer_target() at each hrtimer_start"), std::string::npos);
    // The same trace under stock 6.1's idle_cpu(): each moved timer is a disagreement.
    const AgreeReport base = agree(t, topo, Knobs::preset("baseline"));
    EXPECT_EQ(base.timers.disagree, x.moved);
    EXPECT_EQ(base.timers.agree, x.armed - x.moved);
    ASSERT_FALSE(base.timers.examples.empty());
    EXPECT_NE(base.timers.examples[0].find("(this CPU busy)"), std::string::npos) << base.timers.examples[0];
}
