// SPDX-License-Identifier: GPL-2.0-or-later
// core_simulation_test.cpp: the GUI's side of the core (Simulation): chunked advancing gives the
// CLI's run bit for bit, single steps, traced wakeups, live knob changes, bounded snapshots.
#include "sim/scenario.h"
#include "sim/simulation.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace sched;
using nlohmann::json;

namespace {

Scenario hackbench(const std::string& topo, int g, int f, int loops) {
    return parseScenario(
        json({{"topology", topo}, {"seed", 11}, {"workloads", json::array({{{"type", "hackbench"}, {"groups", g}, {"fds", f}, {"loops", loops}}})}}),
        "t.json", ".");
}

std::uint64_t cliDigest(const Scenario& s, const Knobs& k) {
    RunOptions o;
    o.seed = s.seed;
    return runScenario(s, Variant{k.presetName, k}, s.cost, o).digest;
}

}  // namespace

TEST(Simulation, ChunkedAdvanceGivesTheCliRunBitForBit) {
    const Scenario s = hackbench("i7-4790", 2, 5, 30);
    for (const char* preset : {"baseline", "idle-delay-v2"}) {
        const Knobs k = Knobs::preset(preset);
        Simulation sim(s, k, "A");
        std::int64_t chunk = 37000;  // odd sizes, so chunk ends fall between events
        while (sim.advance(chunk)) chunk = chunk * 3 / 2 % 5000000 + 1000;
        EXPECT_TRUE(sim.done());
        EXPECT_EQ(sim.snapshot().digest, cliDigest(s, k)) << preset;
    }
}

TEST(Simulation, StepEventRunsExactlyOneEvent) {
    const Scenario s = hackbench("i7-4790", 1, 4, 10);
    Simulation sim(s, Knobs{}, "A");
    sim.advance(200000);
    for (int i = 0; i < 50; ++i) {
        const auto before = sim.engine().events();
        ASSERT_TRUE(sim.stepEvent());
        EXPECT_EQ(sim.engine().events(), before + 1);
    }
}

// The window's run coalesces; "Step event" steps one event of the run without coalescing
// (plans cut) and Play plans again: the run is the CLI's, bit for bit.
TEST(Simulation, SteppingEventsBetweenCoalescedChunksGivesTheCliRun) {
    const Scenario s = hackbench("i7-4790", 2, 5, 30);
    const Knobs k = Knobs::preset("idle-delay-v2");
    Simulation sim(s, k, "A");
    ASSERT_TRUE(sim.engine().coalescingAllowed());
    int round = 0;
    while (sim.advance(150000 + 7000 * round)) {
        const auto before = sim.engine().events();
        for (int i = 0; i < 1 + round % 17; ++i)
            if (!sim.stepEvent()) break;
        if (!sim.done()) {
            EXPECT_EQ(sim.engine().events(), before + std::uint64_t(1 + round % 17));
        }
        ++round;
    }
    EXPECT_TRUE(sim.done());
    EXPECT_GT(sim.engine().plannedSteps(), 0u) << "nothing was coalesced";
    EXPECT_GT(round, 5);
    EXPECT_EQ(sim.result().digest, cliDigest(s, k));
}

TEST(Simulation, StepWakeupTracesTheDecisionStepByStep) {
    const Scenario s = hackbench("epyc-9654-2s", 1, 4, 10);
    Simulation sim(s, Knobs{}, "A");
    sim.advance(500000);
    const auto n0 = sim.engine().metrics().decisions;
    ASSERT_TRUE(sim.stepWakeup());
    // Stepped until that wakeup placed its task (a wakeup over time): its decision is recorded
    // then, with the others that were in flight with it.
    EXPECT_GE(sim.engine().metrics().decisions, n0 + 1);
    const DecisionRecord* d = sim.lastTraced();
    ASSERT_NE(d, nullptr);
    EXPECT_FALSE(d->d.steps.empty());
    EXPECT_GE(d->d.cpu, 0);
    // Decided at sched_waking (its time), queued by ttwu_queue() after the select's time, placed by now.
    EXPECT_LT(d->time, d->d.t_queue);
    EXPECT_LE(d->d.t_queue, sim.now());
    EXPECT_GE(d->d.t_activate, d->d.t_queue);
    EXPECT_NE(d->d.steps.back().text.find("the window: sched_waking at"), std::string::npos) << d->d.steps.back().text;
    // The same wakeup is in the decision ring (without steps) as the newest record.
    const Snapshot snap = sim.snapshot();
    ASSERT_FALSE(snap.decisions.empty());
    EXPECT_EQ(snap.decisions.back().pid, d->pid);
    EXPECT_EQ(snap.decisions.back().d.cpu, d->d.cpu);
}

TEST(Simulation, KnobChangeAppliesLive) {
    const Scenario s = hackbench("i7-4790", 2, 10, 3000);
    Simulation sim(s, Knobs::preset("baseline"), "A");
    sim.advance(5000000);
    ASSERT_FALSE(sim.done());
    EXPECT_EQ(sim.snapshot().idle_delay_hits, 0u);
    Knobs k = Knobs::preset("idle-delay-v2");
    k.hz = 1000;  // CONFIG_HZ is fixed in a running machine
    sim.setKnobs(k);
    EXPECT_EQ(sim.knobs().hz, 250);
    EXPECT_EQ(sim.knobs().idle_delay_ns, 1000000);
    sim.advance(5000000);
    EXPECT_GT(sim.snapshot().idle_delay_hits, 0u);
}

// The outcome series (the window's "Outcome over time"): an endless hackbench whose B side
// starts identical to A (idle-delay-v2 with the delay at 0) and gets the 1 ms delay live at
// 300 ms. Before the change the two series are the same point for point; within 200 ms after
// it B's message rate leaves A's; the change is marked where it happened; and the rates add up
// to the messages read.
TEST(Simulation, OutcomeSeriesShowsALiveIdleDelayChange) {
    const Scenario s = parseScenario(
        json({{"topology", "i7-4790"},
              {"seed", 11},
              {"workloads", json::array({{{"type", "hackbench"}, {"groups", 2}, {"fds", 5}, {"threads", true}, {"pipe", true}, {"loops", 0}}})}}),
        "t.json", ".");
    Knobs kb = Knobs::preset("idle-delay-v2");
    kb.idle_delay_ns = 0;
    Simulation a(s, Knobs::preset("baseline"), "A"), b(s, kb, "B");
    a.advance(300000000);
    b.advance(300000000);
    EXPECT_EQ(a.snapshot().digest, b.snapshot().digest) << "a delay of 0 is the baseline";
    kb.idle_delay_ns = 1000000;
    b.setKnobs(kb);
    a.advance(200000000);
    b.advance(200000000);
    const Snapshot sa = a.snapshot(), sb = b.snapshot();
    EXPECT_EQ(sa.outcome_unit, "messages/s");
    ASSERT_EQ(sa.outcome.size(), 50u);  // one point per 10 ms
    ASSERT_EQ(sb.outcome.size(), 50u);
    EXPECT_EQ(sa.outcome.back().t, 500000000);
    for (std::size_t i = 0; i < 30; ++i) EXPECT_EQ(sa.outcome[i].rate, sb.outcome[i].rate) << i;
    // The mean rate over the 100 ms before the change and over the last 100 ms.
    auto mean = [](const Snapshot& x, std::size_t from, std::size_t to) {
        double m = 0;
        for (std::size_t i = from; i < to; ++i) m += x.outcome[i].rate;
        return m / double(to - from);
    };
    EXPECT_GT(mean(sa, 20, 30), 1e6);  // a running job: millions of messages per second
    const double after = mean(sb, 40, 50) / mean(sa, 40, 50) - 1;
    EXPECT_GT(std::abs(after), 0.05) << "B's rate left A's by " << after * 100 << " %";
    EXPECT_TRUE(sa.knob_marks.empty());
    ASSERT_EQ(sb.knob_marks.size(), 1u);
    EXPECT_EQ(sb.knob_marks[0].t, 300000000);
    EXPECT_EQ(sb.knob_marks[0].change, "idle_delay_ns=1000000");
    // The rates times the period are the messages read (float rounding aside).
    double sum = 0;
    for (const auto& p : sa.outcome) sum += double(p.rate) * 0.01;
    const double read = a.engine().workloads().front()->work(a.engine());
    EXPECT_NEAR(sum, read, read * 1e-5);
    for (const auto& p : sa.outcome) EXPECT_LE(p.busy_cpus, 8.0f + 1e-3f);
}

// "B from here": a copy of the other side's state (a checkpoint in memory) is that state bit for
// bit (its digest, its outcome series and its marks) and runs on as it would have, and goes its
// own way once it gets its own knobs.
TEST(Simulation, CopyIsTheSameStateAndBranchesFromThere) {
    const Scenario s = hackbench("i7-4790", 2, 5, 100000);
    Simulation a(s, Knobs::preset("baseline"), "A");
    a.advance(20000000);
    Knobs k = Knobs::preset("baseline");
    k.WA_WEIGHT = false;  // a live change on the way, replayed at its time
    a.setKnobs(k);
    a.advance(15000000);
    std::unique_ptr<Simulation> b = Simulation::copyOf(a, "B");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->now(), a.now());
    EXPECT_EQ(b->engine().digest(), a.engine().digest());
    const Snapshot sa = a.snapshot(), sb0 = b->snapshot();
    ASSERT_EQ(sa.outcome.size(), sb0.outcome.size());
    for (std::size_t i = 0; i < sa.outcome.size(); ++i) EXPECT_EQ(sa.outcome[i].rate, sb0.outcome[i].rate);
    ASSERT_EQ(sb0.knob_marks.size(), 1u);
    EXPECT_EQ(sb0.knob_marks[0].change, "WA_WEIGHT=0");
    EXPECT_EQ(sb0.label, "B");
    EXPECT_EQ(sb0.sample_t, sa.sample_t);
    EXPECT_EQ(sb0.sample_len, sa.sample_len);
    EXPECT_EQ(sb0.migrations.size(), sa.migrations.size());
    // The same knobs: the copy runs on exactly as the original.
    {
        std::unique_ptr<Simulation> c = Simulation::copyOf(a, "C");
        std::unique_ptr<Simulation> a2 = Simulation::copyOf(a, "A");
        c->advance(7000000);
        a2->advance(7000000);
        EXPECT_EQ(c->engine().digest(), a2->engine().digest());
        EXPECT_EQ(c->snapshot().outcome.size(), a2->snapshot().outcome.size());
    }
    // From here B has the 1 ms idle delay: A and B part.
    b->addMark("branched from A");
    b->setKnobs(Knobs::preset("idle-delay-v2"));
    a.advance(10000000);
    b->advance(10000000);
    EXPECT_NE(b->engine().digest(), a.engine().digest());
    EXPECT_GT(b->snapshot().idle_delay_hits, 0u);
    EXPECT_EQ(b->snapshot().knob_marks.size(), 3u);
}

TEST(Simulation, SnapshotIsBoundedAndSamplesTheRunqueues) {
    const Scenario s = hackbench("i7-4790", 2, 5, 3000);
    SimOptions o;
    o.sample_period_ns = 50000;
    o.sample_rows = 50;
    o.arrow_span_ns = 2000000;
    Simulation sim(s, Knobs{}, "B", o);
    sim.advance(3456789);
    ASSERT_FALSE(sim.done());
    const Snapshot a = sim.snapshot();
    EXPECT_EQ(a.label, "B");
    ASSERT_EQ(a.sample_t.size(), 50u);
    ASSERT_EQ(a.sample_len.size(), 50u * 8u);
    EXPECT_EQ(a.sample_t.back(), 3450000);
    for (std::size_t i = 1; i < a.sample_t.size(); ++i) EXPECT_EQ(a.sample_t[i] - a.sample_t[i - 1], 50000);
    for (const auto& m : a.migrations) {
        EXPECT_GE(m.time, a.now - 2000000);
        EXPECT_LE(m.time, a.now);
        EXPECT_NE(m.from, m.to);
    }
    // Per-CPU state agrees with the engine.
    int running = 0;
    for (int c = 0; c < 8; ++c) {
        EXPECT_EQ(a.cpus[c].nr_running, sim.engine().nrRunning(c));
        EXPECT_EQ(a.cpus[c].curr_pid == 0, sim.engine().currTask(c) < 0);
        EXPECT_EQ(a.cpus[c].kind == CpuKind::idle, a.cpus[c].curr_pid == 0);
        running += a.cpus[c].curr_pid != 0;
    }
    EXPECT_GT(running, 0);
    std::uint64_t causes = 0;
    for (auto v : a.migrations_by_cause) causes += v;
    EXPECT_EQ(causes, sim.engine().metrics().migrationsTotal());
    ASSERT_EQ(a.reports.size(), 1u);
}

// Every workload type's tasks are capped, each and together, and a scenario whose
// start-up alone would take hours says so before it runs.
TEST(ScenarioLimits, EveryWorkloadTypesTasksAreCappedAndCostlyOnesWarned) {
    auto errorOf = [](const std::string& text) {
        try {
            (void)sched::parseScenario(nlohmann::json::parse(text), "s.json", ".");
        } catch (const sched::InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(errorOf(R"({"topology":"i7-4790","workloads":[{"type":"schbench","message_threads":1024,"workers":65536}]})"),
              "s.json: workloads[0]: 67109888 tasks on 8 CPUs: more than the 200000 a simulation holds");
    EXPECT_EQ(errorOf(R"({"topology":"i7-4790","workloads":[{"type":"hackbench","groups":4096,"fds":100}]})"),
              "s.json: workloads[0]: 819200 tasks on 8 CPUs: more than the 200000 a simulation holds");
    EXPECT_EQ(errorOf(R"({"topology":"i7-4790","workloads":[{"type":"stress","workers":65536},{"type":"locktorture","writers":65536},
                         {"type":"cyclictest","threads":4096,"duration_s":1},{"type":"stress","workers":65536}]})"),
              "s.json: workloads: 200704 tasks in all: more than the 200000 a simulation holds");
    EXPECT_EQ(errorOf(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],"variants":[{"name":"A"},{"name":"B"},{"name":"A"}]})"),
              "s.json: variants[2].name: 'A' is also the name of variants[0]");
    // schbench's 0 workers are one per CPU: 2 x (1 + 8).
    EXPECT_EQ(sched::workloadTasks(
                  parseScenario(json::parse(R"({"topology":"i7-4790","workloads":[{"type":"schbench-classic","message_threads":2,"workers":0}]})"),
                                "s.json", ".")
                      .workloads[0],
                  8),
              18);
    const sched::Scenario big = parseScenario(json::parse(R"({"topology":"i7-4790","workloads":[{"type":"tbench","pairs":65536}]})"), "s.json", ".");
    ASSERT_EQ(big.warnings.size(), 1u);
    EXPECT_NE(big.warnings[0].find("131072 tasks on 8 CPUs (16384 per CPU)"), std::string::npos) << big.warnings[0];
    EXPECT_TRUE(parseScenario(json::parse(R"({"topology":"i7-4790","workloads":[{"type":"tbench","pairs":1024}]})"), "s.json", ".").warnings.empty());
}
