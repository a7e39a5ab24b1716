// SPDX-License-Identifier: GPL-2.0-or-later
// core_ttwu_window_test.cpp: a wakeup over time (docs/architecture.md): select_task_rq() at
// sched_waking, ttwu_queue() after the select's time, the activation under the target's rq
// lock; races on an idle CPU and the claim that closes them; the waker's tail; the message's trip.
#include "replay/replay.h"
#include "replay/wakeup_window.h"
#include "sim/engine.h"
#include "sim/scenario.h"
#include "test_scenarios.h"
#include "trace/trace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

using namespace sched;

namespace {

RunResult run(const Scenario& s, const std::string& preset, const std::vector<std::string>& cost = {}, RunOptions o = {}) {
    CostModel cm = s.cost;
    for (const auto& c : cost) cm.set(c);
    Variant v;
    v.knobs = Knobs::preset(preset);
    return runScenario(s, v, cm, o);
}

}  // namespace

// Two wakers inside each other's window choose the same idle CPU (its ttwu_pending is not set
// yet): the later decision is stacked by a race. claim_wakeup writes its claim at the select, so
// the later waker sees the CPU taken; without the window (no select time) there is no race. On
// 6.1 the window is the select's (idle_cpu() reads ttwu_pending, which 4.14 did not), so races
// need many wakers at once: a hackbench on 8 CPUs has them.
TEST(WakeupWindow, TwoWakersCanChooseTheSameIdleCpuAndAClaimClosesTheRace) {
    const Scenario s = scenario(hb("i7-4790", 2, 10, 200));
    const RunResult base = run(s, "baseline");
    const RunResult claim = run(s, "claim-wakeup");
    const RunResult claimAll = run(s, "claim-wakeup-str");
    const RunResult instant = run(s, "baseline", {"ttwu_select=0", "off=sis_scan", "off=rq_lock"});
    const Metrics& mb = base.engine->metrics();
    const Metrics& mc = claim.engine->metrics();
    EXPECT_GT(mb.ttwu_races, 50u);
    EXPECT_GT(mc.claims, 100u);
    // claim_wakeup claims what the idle scans return (not an idle target or prev, S1-S4): fewer
    // races; the select_task_rq() variant claims every choice: almost none.
    EXPECT_LT(mc.ttwu_races, mb.ttwu_races) << "claims " << mc.claims;
    EXPECT_LT(claimAll.engine->metrics().ttwu_races * 10, mb.ttwu_races);
    EXPECT_EQ(instant.engine->metrics().ttwu_races, 0u);
    EXPECT_NE(base.digest, claim.digest);
}

// The window: sched_waking at t0, sched_wakeup at the activation, the queue in between. A local
// wakeup's window is the select and the rq lock's hold; a wakelist's takes the IPI too. The
// exported trace shows the same windows as the engine's histogram.
TEST(WakeupWindow, TheWindowSpansTheSelectTheQueueAndTheActivation) {
    const Scenario s = scenario(hb("i7-4790", 2, 10, 200));
    std::vector<SchedEvent> events;
    RunOptions o;
    o.decision_ring = 1 << 16;
    o.event_sink = [&](const SchedEvent& e) { events.push_back(e); };
    const RunResult r = run(s, "baseline", {}, o);
    const Metrics& m = r.engine->metrics();
    ASSERT_GT(m.ttwu_window.count(), 1000u);
    const CostModel& cm = s.cost;
    // At least the select's fixed part (a wakelist whose IPI is already on its way is activated
    // with the tasks before it).
    EXPECT_GE(m.ttwu_window.min(), cm.ttwu_select);
    int checked = 0;
    for (std::size_t i = 0; i < m.ring_size; ++i) {
        const Decision& d = m.recent(i).d;
        if (d.t_queue < 0) continue;
        EXPECT_LT(m.recent(i).time, d.t_queue);
        EXPECT_LE(d.t_queue, d.t_activate);
        ++checked;
    }
    EXPECT_GT(checked, 1000);
    // The trace's windows (sched_waking to sched_wakeup) are the engine's.
    Trace t;
    t.events = events;
    const WakeupWindows w = wakeupWindows(t);
    EXPECT_EQ(w.same_cpu.count() + w.other_cpu.count(), m.ttwu_window.count() + m.stage0[std::size_t(Stage0::TTWU_RUNNABLE)]);
    EXPECT_GT(w.other_cpu.percentile(90), w.same_cpu.percentile(50));
}

// A claimed CPU or a pending mark is what a later waker sees: the race counts only CPUs that
// looked idle. Every raced decision chose a CPU the path saw idle (or idle by the delay).
TEST(WakeupWindow, ARacedDecisionChoseACpuItSawIdle) {
    const Scenario s = scenario(hb("i7-4790", 2, 10, 200));
    RunOptions o;
    std::vector<Decision> raced;
    o.decision_sink = [&](const DecisionRecord& r) {
        if (r.d.raced) raced.push_back(r.d);
    };
    run(s, "baseline", {}, o);
    ASSERT_GT(raced.size(), 5u);
    for (const Decision& d : raced) {
        bool idle = false;
        for (const Examined& e : d.examined) idle |= e.cpu == d.cpu && (e.seen == Seen::Idle || e.seen == Seen::IdleByDelay);
        EXPECT_TRUE(idle) << d.reasons();
    }
}

// tbench's waker goes on after its peer's wakeup (the loopback send's tail, then its recv): the
// tail costs the same CPU per transaction, and with it the waker is still running when the wakee
// is placed, so a sync wakeup no longer finds this CPU about to be free.
TEST(WakeupWindow, ThePingPongWakerRunsItsTailAfterTheWakeup) {
    const Scenario s = scenario(R"({"topology": "i7-4790", "workloads": [{"type": "tbench", "pairs": 2, "runtime_s": 0.02, "warmup_s": 0.005}]})");
    const RunResult with = run(s, "baseline");
    const RunResult without = run(s, "baseline", {"socket_wake_tail=0"});
    EXPECT_NE(with.digest, without.digest);
    // The same CPU per transaction either way, but with the tail the peer's service runs beside the
    // waker's tail instead of after it, and the CPUs' idle spells get shorter (shallower idle states,
    // quicker exits): the throughput rises, and by more than the overlap alone.
    auto tput = [](const RunResult& r) { return r.reports.front().headline.front().value; };
    EXPECT_GT(tput(without), 0.0);
    EXPECT_GT(tput(with), 1.2 * tput(without));
}

// A message read on another core than its writer's pulls its lines across: nothing on the same
// CPU, more the farther apart the two are (the refill figures of each distance).
TEST(WakeupWindow, AMessageReadOnAnotherCorePaysItsTrip) {
    const Scenario s = scenario(R"({"topology": "epyc-9654-2s", "workloads": [{"type": "netperf-rr", "pairs": 1, "runtime_s": 0.001}]})");
    RunOptions o;
    auto e = buildEngine(s, Knobs{}, s.cost, o);
    const CostModel& cm = s.cost;
    EXPECT_EQ(e->messageTrip(3, 3), 0);
    EXPECT_EQ(e->messageTrip(3, 3 + 192), cm.msg_lines * cm.refill_smt_line);   // SMT sibling
    EXPECT_EQ(e->messageTrip(3, 4), cm.msg_lines * cm.refill_llc_line);         // same CCX
    EXPECT_EQ(e->messageTrip(3, 12), cm.msg_lines * cm.refill_cross_llc_line);  // another CCX
    EXPECT_EQ(e->messageTrip(3, 100), cm.msg_lines * cm.refill_cross_socket_line);
    EXPECT_EQ(e->metrics().cost_msg_trip,
              cm.msg_lines * (cm.refill_smt_line + cm.refill_llc_line + cm.refill_cross_llc_line + cm.refill_cross_socket_line));
    const RunResult on = run(s, "baseline"), off = run(s, "baseline", {"off=msg_trip"});
    EXPECT_GT(on.engine->metrics().cost_msg_trip, 0);
    EXPECT_EQ(off.engine->metrics().cost_msg_trip, 0);
}
