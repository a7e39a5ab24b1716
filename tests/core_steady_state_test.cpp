// SPDX-License-Identifier: GPL-2.0-or-later
// core_steady_state_test.cpp: when a run has settled (SteadyState on synthetic sample streams
// and on the engine's own runs: ramps, plateaus left, drifts, the wind-down, SIS_UTIL's state,
// the window CSV) and `reproduce`'s claims (each on a shipped scenario, the direction with its
// dead band, several seeds).
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/reproduce.h"
#include "sim/scenario.h"
#include "sim/steady_state.h"
#include "test_scenarios.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <variant>

using namespace sched;

// --- Steady state ---------------------------------------------------------------------

namespace {
/// Feeds 20 ms samples whose per-window rates follow busy(t) and migr(t).
/// From `wind_down_ns` on (if >= 0) the job winds down (SteadyState::windDown there).
SteadyState feed(std::int64_t until_ns, double (*busy)(double), double (*migr)(double), std::int64_t wind_down_ns = -1) {
    SteadyState st;
    SteadyCounters c;
    for (std::int64_t t = 0; t <= until_ns; t += 20000000) {
        if (wind_down_ns >= 0 && t >= wind_down_ns) st.windDown(wind_down_ns);
        const double s = double(t) / 1e9;
        if (t > 0) {
            c.busy_cpu_ns += busy(s) * 20e6;
            c.rq_len_area += busy(s) / 100 * 20e6;
            c.migrations += std::uint64_t(migr(s) * 0.02);
            c.ctx_switches += 1000;
            c.progress = s / 10;
        }
        c.t = t;
        st.sample(c);
    }
    return st;
}
}  // namespace

TEST(SteadyState, ARampThenAPlateauIsSteadyWhereThePlateauStarts) {
    const SteadyState st = feed(
        2000000000, [](double s) { return s < 0.5 ? 100 + 300 * s : 250.0; }, [](double) { return 50000.0; });
    const SteadyResult r = st.result();
    ASSERT_TRUE(r.reached);
    EXPECT_GE(r.from_ns, 400000000);
    EXPECT_LE(r.from_ns, 560000000);
    EXPECT_NEAR(r.busy_cpus, 250.0, 1.0);
    EXPECT_NEAR(r.migrations_per_s, 50000.0, 100.0);
    EXPECT_NEAR(r.steadyJobTime(), 10.0, 0.01);  // progress 10 % per second
    EXPECT_NE(describeSteady(r, st.options()).find("steady from"), std::string::npos);
}

TEST(SteadyState, AStillClimbingOrTooShortRunSaysItIsNotSettled) {
    const SteadyState climbing = feed(
        1000000000, [](double s) { return 10 + 300 * s; }, [](double) { return 5000.0; });
    const SteadyResult c = climbing.result();
    EXPECT_FALSE(c.reached);
    EXPECT_GT(c.spread_busy, 0.10);
    EXPECT_NE(describeSteady(c, climbing.options()).find("NOT steady: last 4 windows vary: busy CPUs"), std::string::npos);
    const SteadyState shortRun = feed(
        120000000, [](double) { return 8.0; }, [](double) { return 0.0; });
    EXPECT_FALSE(shortRun.result().reached);
    EXPECT_NE(describeSteady(shortRun.result(), shortRun.options()).find("ended after 2 windows of 60 ms"), std::string::npos);
    // A migration rate that swings by half is not settled either, unless it is below the floor.
    const SteadyState swinging = feed(
        1000000000, [](double) { return 100.0; }, [](double s) { return int(s * 10) % 2 ? 60000.0 : 20000.0; });
    EXPECT_FALSE(swinging.result().reached);
    const SteadyState quiet = feed(
        1000000000, [](double) { return 100.0; }, [](double s) { return int(s * 10) % 2 ? 600.0 : 200.0; });
    EXPECT_TRUE(quiet.result().reached);
    // A slow ramp stays inside the +-10 % band but moves more than 5 % over 4 windows: the
    // report says it still drifts (its spreads alone would look settled).
    const SteadyState drifting = feed(
        1000000000, [](double s) { return 200 + 100 * s; }, [](double) { return 50000.0; });
    const SteadyResult d = drifting.result();
    EXPECT_FALSE(d.reached);
    EXPECT_LE(d.spread_busy, 0.10);
    EXPECT_GT(d.trend_busy, 0.05);
    EXPECT_NE(describeSteady(d, drifting.options()).find("NOT steady: last 4 windows still drift: busy CPUs +"), std::string::npos)
        << describeSteady(d, drifting.options());
}

// A plateau that the machine later leaves was not its steady state (the seed hackbench with
// some seeds: one socket busy and one LLC of the other for 0.4 s, until balancing spreads the
// job over both). The search starts again after it; a run that leaves its plateau and ends
// before it settles again says so.
TEST(SteadyState, APlateauTheMachineLeavesIsNotItsSteadyState) {
    const auto busy = [](double s) { return s < 0.8 ? 200.0 : 320.0; };
    const SteadyState st = feed(2000000000, busy, [](double) { return 50000.0; });
    const SteadyResult r = st.result();
    ASSERT_TRUE(r.reached);
    EXPECT_GE(r.from_ns, 780000000);
    EXPECT_LE(r.from_ns, 900000000);
    EXPECT_NEAR(r.busy_cpus, 320.0, 1.0);
    EXPECT_EQ(r.plateaus_left, 1);
    EXPECT_LT(r.plateau_from_ns, 300000000);
    EXPECT_NEAR(double(r.plateau_left_ns), 780000000.0, 60000000.0);
    EXPECT_NE(describeSteady(r, st.options()).find("after a plateau 0.00-0.78 s that it left"), std::string::npos) << describeSteady(r, st.options());
    // Left, and the run ends two windows later: not settled.
    const SteadyState cut = feed(1000000000, busy, [](double) { return 50000.0; });
    EXPECT_FALSE(cut.result().reached);
    EXPECT_NE(describeSteady(cut.result(), cut.options()).find("NOT steady: left its plateau"), std::string::npos)
        << describeSteady(cut.result(), cut.options());
    // Noise inside 1.5 x the band, or one window outside it, does not end a steady state.
    const SteadyState noisy = feed(
        2000000000, [](double s) { return int(s * 1000) % 300 < 60 ? 280.0 : 250.0; }, [](double) { return 50000.0; });
    EXPECT_TRUE(noisy.result().reached);
    EXPECT_EQ(noisy.result().plateaus_left, 0);
}

// A slow drift after settling is not a steady state either: the seed hackbench's baseline at
// -l 120000 "settled" at 0.82 s, then its migrations fell from 6.0 to 2.2 M/s over 3.5 s (and
// its busy CPUs rose 15 %) while each window stayed near the running mean of the ones before.
// The band is now the settling run's, fixed: the drift leaves it, and the steady state is
// found where the drift has ended.
TEST(SteadyState, ASlowDriftLeavesTheBandItSettledIn) {
    const auto migr = [](double s) { return s < 1.0 ? 6.0e6 : s < 4.0 ? 6.0e6 - (s - 1.0) * (3.8e6 / 3.0) : 2.2e6; };
    const SteadyState st = feed(
        6000000000, [](double) { return 300.0; }, migr);
    const SteadyResult r = st.result();
    ASSERT_TRUE(r.reached);
    EXPECT_GE(r.plateaus_left, 1);
    EXPECT_GE(r.from_ns, 3000000000) << describeSteady(r, st.options());
    EXPECT_NEAR(r.migrations_per_s, 2.2e6, 0.15e6);
    // The same drift in a run that ends (winds down) before it leaves the band: settled, but
    // still drifting between the first and last thirds of its windows, so not settled.
    const SteadyState shortRun = feed(
        2400000000, [](double) { return 300.0; }, migr);
    const SteadyResult d = shortRun.result();
    EXPECT_FALSE(d.reached);
    EXPECT_TRUE(d.drifting);
    EXPECT_LT(d.drift_migr, -0.20);
    EXPECT_LT(d.drift_from_ns, 300000000);
    EXPECT_NE(describeSteady(d, shortRun.options()).find("NOT steady: settled at 0."), std::string::npos) << describeSteady(d, shortRun.options());
    EXPECT_NE(describeSteady(d, shortRun.options()).find("migr. -"), std::string::npos) << describeSteady(d, shortRun.options());
    // A flat run with the same noise as the seed run's steady windows (+-14 %) stays settled.
    const SteadyState flat = feed(
        6000000000, [](double) { return 300.0; }, [](double s) { return int(s * 1000) % 120 < 60 ? 2.0e6 : 2.6e6; });
    ASSERT_TRUE(flat.result().reached);
    EXPECT_FALSE(flat.result().drifting);
    EXPECT_EQ(flat.result().plateaus_left, 0);
    EXPECT_LT(flat.result().from_ns, 300000000);
}

// The job's wind-down (its workers leaving one by one) is not steady state: no window closes
// after the first exit, so the tail does not pull the steady figures down or make a settled
// run look unsettled. (Before, Aaron's g10 run with idle-delay-v2 was "NOT steady": its last
// windows were the tail.)
TEST(SteadyState, TheWindDownIsLeftOut) {
    const auto busy = [](double s) { return s < 0.8 ? 250.0 : 40.0; };
    const SteadyState st = feed(
        1200000000, busy, [](double) { return 50000.0; }, 800000000);
    const SteadyResult r = st.result();
    ASSERT_TRUE(r.reached);
    EXPECT_EQ(r.wind_down_ns, 800000000);
    EXPECT_NEAR(r.busy_cpus, 250.0, 1.0);
    ASSERT_FALSE(st.windows().empty());
    EXPECT_LE(st.windows().back().t1, 800000000);
    // The same samples without the wind-down: the tail's windows are averaged in.
    EXPECT_LT(feed(1200000000, busy, [](double) { return 50000.0; }).result().busy_cpus, 240.0);
    // A job that winds down before 4 windows says so.
    const SteadyState early = feed(
        1200000000, busy, [](double) { return 50000.0; }, 150000000);
    EXPECT_FALSE(early.result().reached);
    EXPECT_NE(describeSteady(early.result(), early.options()).find("NOT steady: wind-down after 2 windows"), std::string::npos)
        << describeSteady(early.result(), early.options());
}

// The engine tells the detector when the first worker exits.
TEST(SteadyState, TheEngineEndsSteadyStateAtTheFirstWorkersExit) {
    const Scenario s = hackbenchOn("qemu-2s2c2t", 2, 40000);
    RunOptions o;
    std::int64_t firstExit = -1;
    o.event_sink = [&](const SchedEvent& e) {
        if (e.kind == EvKind::sched_process_exit && firstExit < 0) firstExit = e.time;
    };
    const RunResult r = runScenario(s, s.variants[0], s.cost, o);
    const SteadyResult st = r.engine->metrics().steady.result();
    ASSERT_GT(firstExit, 0);
    EXPECT_EQ(st.wind_down_ns, firstExit);
    ASSERT_FALSE(r.engine->metrics().steady.windows().empty());
    EXPECT_LE(r.engine->metrics().steady.windows().back().t1, firstExit);
    EXPECT_LT(firstExit, r.engine->now());
    const nlohmann::json j = runReportJson(s, r);
    EXPECT_DOUBLE_EQ(j["steady_state"]["wind_down_s"].get<double>(), double(firstExit) / 1e9);
    EXPECT_EQ(j["steady_state"]["window_ms"].get<int>(), 60);  // 50 ms cut at the 20 ms samples
    // Messages per context switch at the steady rate: 2 groups x 4 x 4 fds x 40000 messages.
    const double mps = steadyMessagesPerSwitch(r);
    EXPECT_NEAR(mps, st.progress_per_s * 2 * 4 * 4 * 40000 / st.switches_per_s, 1e-9);
    EXPECT_GT(mps, 1.0);
    EXPECT_NE(runReportText(s, r).find(fmt::format("{:.1f} messages per context switch", mps)), std::string::npos);
}

// RunOptions::steady_hold_ns (run --until-steady, reproduce's hackbench claims): the run stops
// once it has been at steady state that long, the stop changes nothing before it (the same
// engine state as a run advanced to the same instant), and the job time at the steady rate is
// the full run's within a few per cent.
TEST(SteadyState, ARunStopsOnceItHasBeenSteadyForTheHold) {
    const Scenario s = hackbenchOn("qemu-2s2c2t", 2, 250000);
    RunOptions o;
    const RunResult full = runScenario(s, s.variants[0], s.cost, o);
    const SteadyResult fst = full.engine->metrics().steady.result();  // settled at 0.8 s; its migrations then drift (+25 %)
    EXPECT_FALSE(full.stopped_at_steady);
    o.steady_hold_ns = 300000000;  // 0.3 s
    const RunResult held = runScenario(s, s.variants[0], s.cost, o);
    EXPECT_TRUE(held.stopped_at_steady);
    EXPECT_TRUE(steadyHeld(*held.engine, o.steady_hold_ns));
    const SteadyResult hst = held.engine->metrics().steady.result();
    EXPECT_GE(hst.end_ns - hst.from_ns, o.steady_hold_ns);
    EXPECT_LT(hst.end_ns - hst.from_ns, o.steady_hold_ns + 100000000);  // stopped within a window or two of the hold
    EXPECT_LT(held.engine->now(), full.engine->now());
    // Nothing the stop test reads changes the run.
    RunOptions plain;
    auto e = buildEngine(s, s.variants[0].knobs, s.cost, plain);
    e->advance(held.engine->now());
    EXPECT_EQ(e->now(), held.engine->now());
    EXPECT_EQ(e->digest(), held.digest);
    // The job time at the steady rate: the stopped run's against the full run's.
    ASSERT_GT(fst.steadyJobTime(), 0);
    EXPECT_NEAR(hst.steadyJobTime(), fst.steadyJobTime(), 0.05 * fst.steadyJobTime())
        << describeSteady(hst, held.engine->metrics().steady.options()) << " / " << describeSteady(fst, full.engine->metrics().steady.options());
    const std::string text = runReportText(s, held);
    EXPECT_NE(text.find("stopped at steady state"), std::string::npos) << text;
    // Its whole-run figures end at the stop (the integrals closed there, not left at 0).
    EXPECT_EQ(held.engine->metrics().end_time, held.engine->now());
    const nlohmann::json j = runReportJson(s, held);
    EXPECT_GT(j["busy_fraction"].get<double>(), 0.5);  // 2 groups of 8 tasks on 8 CPUs
    EXPECT_LE(j["busy_fraction"].get<double>(), 1.0);
    // A run that never settles runs to its end.
    const Scenario shortRun = hackbenchOn("qemu-2s2c2t", 2, 200);
    const RunResult never = runScenario(shortRun, shortRun.variants[0], shortRun.cost, o);
    EXPECT_FALSE(never.stopped_at_steady);
    EXPECT_TRUE(never.engine->workloads().front()->finished());
}

// The engine feeds the detector: a short hackbench that ends during start-up says so.
TEST(SteadyState, TheEngineReportsWhetherARunSettled) {
    const Scenario s = hackbenchOn("qemu-2s2c2t", 2, 200);
    RunOptions o;
    const RunResult r = runScenario(s, s.variants[0], s.cost, o);
    const SteadyResult st = r.engine->metrics().steady.result();
    EXPECT_FALSE(st.reached);
    const std::string text = runReportText(s, r);
    EXPECT_NE(text.find("NOT steady"), std::string::npos) << text;
}

// SIS_UTIL's state is reported from the steady state on: the LLCs' mean nr_idle_scan and the
// share of them at 0 (means of the samples), and the placements that skipped the idle scan
// (counts over the same windows). The machine settles at 320 busy CPUs after a plateau at 200
// it leaves at 0.8 s; the figures are those after it, not the whole run's.
TEST(SteadyState, SisUtilStateIsMeasuredFromTheSteadyStateOn) {
    SteadyState st;
    SteadyCounters c;
    for (std::int64_t t = 0; t <= 2000000000; t += 20000000) {
        const bool late = t >= 800000000;
        if (t > 0) {
            const double busy = late ? 320.0 : 200.0;
            c.busy_cpu_ns += busy * 20e6;
            c.rq_len_area += busy / 100 * 20e6;
            c.migrations += 1000;
            c.ctx_switches += 1000;
            c.placements += 1000;
            c.sis_util_aborts += late ? 300 : 50;
        }
        c.idle_scan = late ? 1.5 : 8.0;
        c.idle_scan_zero = late ? 0.25 : 0.0;
        c.t = t;
        st.sample(c);
    }
    const SteadyResult r = st.result();
    ASSERT_TRUE(r.reached);
    ASSERT_GE(r.from_ns, 780000000);
    EXPECT_DOUBLE_EQ(r.nr_idle_scan, 1.5);
    EXPECT_DOUBLE_EQ(r.scan_zero, 0.25);
    EXPECT_DOUBLE_EQ(r.sis_skip, 0.3);
    // Without SIS_UTIL (no samples) there is no figure, not a zero.
    const SteadyState off = feed(
        2000000000, [](double) { return 250.0; }, [](double) { return 5000.0; });
    EXPECT_LT(off.result().nr_idle_scan, 0);
    EXPECT_LT(off.result().scan_zero, 0);
}

// The engine samples every LLC's nr_idle_scan and counts SIS_UTIL_ABORT placements; the run
// report, its JSON and the A/B table carry them. A loaded machine stops scanning some of the
// time; with SIS_UTIL off there is nothing to report.
TEST(SteadyState, TheEngineReportsSisUtilsState) {
    const Scenario s = hackbenchOn("qemu-2s2c2t", 4, 20000);
    RunOptions o;
    const RunResult r = runScenario(s, s.variants[0], s.cost, o);
    const SteadyResult st = r.engine->metrics().steady.result();
    ASSERT_GT(st.windows, 0);
    EXPECT_GE(st.nr_idle_scan, 0.0);
    EXPECT_LE(st.nr_idle_scan, 4.0);  // an LLC of 4 CPUs
    EXPECT_GE(st.scan_zero, 0.0);
    EXPECT_LE(st.scan_zero, 1.0);
    EXPECT_GT(st.sis_skip, 0.0) << "a loaded machine's LLCs stop the scan some of the time";
    EXPECT_LT(st.sis_skip, 1.0);
    // The fraction is the windows' counts: recount them.
    const auto& ws = r.engine->metrics().steady.windows();
    std::uint64_t pl = 0, ab = 0;
    for (const auto& w : ws)
        if (!st.reached || w.t0 >= st.from_ns) pl += w.placements, ab += w.aborts;
    if (!st.reached) {  // the last windows
        pl = ab = 0;
        for (std::size_t i = ws.size() - std::min<std::size_t>(ws.size(), 4); i < ws.size(); ++i) pl += ws[i].placements, ab += ws[i].aborts;
    }
    ASSERT_GT(pl, 0u);
    EXPECT_DOUBLE_EQ(st.sis_skip, double(ab) / double(pl));
    EXPECT_LE(ab, r.engine->metrics().stage2[std::size_t(Stage2::SIS_UTIL_ABORT)]);
    const std::string text = runReportText(s, r);
    EXPECT_NE(text.find(fmt::format("nr_idle_scan {:.2f} per LLC", st.nr_idle_scan)), std::string::npos) << text;
    const nlohmann::json j = runReportJson(s, r);
    EXPECT_DOUBLE_EQ(j["steady_state"]["sis_util_skip_fraction"].get<double>(), st.sis_skip);
    Knobs k;
    k.SIS_UTIL = false;
    const RunResult b = runScenario(s, Variant{"B", k}, s.cost, o);
    EXPECT_LT(b.engine->metrics().steady.result().nr_idle_scan, 0);
    EXPECT_EQ(runReportText(s, b).find("nr_idle_scan"), std::string::npos);
    EXPECT_TRUE(runReportJson(s, b)["steady_state"]["nr_idle_scan"].is_null());
    EXPECT_EQ(compareTable(s, r, b).find("nr_idle_scan per LLC"), std::string::npos) << "only when both runs have it";
    EXPECT_NE(compareTable(s, r, r).find("nr_idle_scan per LLC"), std::string::npos);
}

// --csv's steady_windows.csv: one row per window of the detector, the figures the report
// averages (messages per switch from the window's own rates), steady = 1 exactly from the
// steady state on, and SIS_UTIL's columns empty when SIS_UTIL is off (not 0).
TEST(SteadyState, EveryWindowIsACsvRow) {
    const Scenario s = hackbenchOn("qemu-2s2c2t", 4, 100000);
    RunOptions o;
    const auto split = [](const std::string& line) {
        std::vector<std::string> f;
        std::size_t a = 0;
        for (std::size_t b; (b = line.find(',', a)) != std::string::npos; a = b + 1) f.push_back(line.substr(a, b - a));
        f.push_back(line.substr(a));
        return f;
    };
    const auto rows = [&](const std::string& csv) {
        std::vector<std::vector<std::string>> r;
        std::size_t a = 0;
        for (std::size_t b; (b = csv.find('\n', a)) != std::string::npos; a = b + 1) r.push_back(split(csv.substr(a, b - a)));
        return r;
    };
    for (const bool sisUtil : {true, false}) {
        Knobs k;
        k.SIS_UTIL = sisUtil;
        const RunResult r = runScenario(s, Variant{"v", k}, s.cost, o);
        const auto& ws = r.engine->metrics().steady.windows();
        const SteadyResult st = r.engine->metrics().steady.result();
        ASSERT_GE(ws.size(), 4u);
        const auto files = runCsvFiles(r);
        const auto it = std::find_if(files.begin(), files.end(), [](const auto& f) { return f.first == "steady_windows.csv"; });
        ASSERT_NE(it, files.end());
        const auto t = rows(it->second);
        ASSERT_EQ(t.size(), ws.size() + 1);
        const std::vector<std::string> head = t[0];
        ASSERT_EQ(head.size(), 12u);
        EXPECT_EQ(head[7], "messages_per_switch");
        EXPECT_EQ(head[11], "steady");
        const double msgs = 4 * 4 * 4 * 100000.0;  // groups x senders x receivers (fds 4) x loops
        int steadyRows = 0;
        for (std::size_t i = 0; i < ws.size(); ++i) {
            const auto& f = t[i + 1];
            ASSERT_EQ(f.size(), 12u) << it->second;
            EXPECT_NEAR(std::stod(f[0]), double(ws[i].t0) / 1e9, 1e-3);
            EXPECT_NEAR(std::stod(f[2]), ws[i].busy_cpus, 0.01);
            ASSERT_FALSE(f[7].empty()) << "row " << i;
            EXPECT_NEAR(std::stod(f[7]), ws[i].progress_per_s * msgs / ws[i].switches_per_s, 0.01);
            EXPECT_EQ(f[8].empty(), !sisUtil) << "row " << i;
            EXPECT_EQ(f[10].empty(), !sisUtil) << "row " << i;
            const bool steady = st.reached && ws[i].t0 >= st.from_ns;
            EXPECT_EQ(f[11], steady ? "1" : "0") << "row " << i;
            steadyRows += steady;
        }
        EXPECT_EQ(steadyRows > 0, st.reached);
    }
}

// --- reproduce ---------------------------------------------------------------------------

TEST(Reproduce, EveryClaimRunsOnAShippedScenarioWithValidKnobsAndCosts) {
    const std::string dir = std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios";
    std::set<std::string> ids, keys;
    for (const Claim& c : seedClaims()) {
        EXPECT_TRUE(ids.insert(c.id).second) << "duplicate claim " << c.id;
        EXPECT_GT(c.published_base, 0) << c.id;
        for (const bool quick : {false, true})
            for (const bool patch : {false, true}) {
                const ClaimRun r = claimRun(c, patch, quick);
                keys.insert(r.key());
                const PreparedRun p = prepareClaimRun(r, dir);
                if (r.loops > 0)
                    for (const auto& w : p.scenario.workloads)
                        if (const auto* h = std::get_if<HackbenchParams>(&w)) {
                            EXPECT_EQ(h->loops, r.loops) << c.id;
                        }
                if (patch && !c.patch.cost.empty()) {
                    EXPECT_NE(p.cost.diffFrom(p.scenario.cost).size(), 0u) << c.id;
                }
                // The row's workload overrides reach the parsed workload.
                for (const auto& kv : r.set) {
                    const std::string k = kv.substr(0, kv.find('='));
                    if (k == "test") {  // netperf's test, a string
                        const auto* pp = std::get_if<PingPongParams>(&p.scenario.workloads.front());
                        ASSERT_TRUE(pp && pp->netperf) << c.id;
                        EXPECT_EQ(pp->udp, kv == "test=UDP_RR") << c.id;
                        continue;
                    }
                    const double v = std::stod(kv.substr(kv.find('=') + 1));
                    const auto& w = p.scenario.workloads.front();
                    double got = -1;
                    if (const auto* pp = std::get_if<PingPongParams>(&w))
                        got = k == "pairs" ? pp->pairs : k == "runtime_s" ? pp->runtime_s : k == "warmup_s" ? pp->warmup_s : -1;
                    if (const auto* sp = std::get_if<SchbenchParams>(&w))
                        got = k == "workers" ? sp->workers : k == "message_threads" ? sp->message_threads : k == "runtime_s" ? sp->runtime_s : -1;
                    EXPECT_EQ(got, v) << c.id << " " << kv;
                }
            }
        // A claim's two sides differ only in the variant.
        EXPECT_EQ(claimRun(c, false, false).set, claimRun(c, true, false).set) << c.id;
    }
    // Rows of one sweep are different runs (the override is part of a run's key).
    EXPECT_NE(claimRun(seedClaims()[12], false, false).key(), claimRun(seedClaims()[13], false, false).key());
    // The six Mathieu claims share one baseline run per length; Aaron's share one per group count.
    EXPECT_LT(keys.size(), 4 * seedClaims().size());
    EXPECT_EQ(claimRun(seedClaims()[0], false, false).key(), claimRun(seedClaims()[1], false, false).key());
}

// perf stat's columns (B's migrations, G's table) are figures of the same runs as the time
// rows: per second of task-clock from the steady state, and CPUs utilized.
TEST(Reproduce, PerfStatRowsShareTheTimeRowsRunsAndReadTheSteadyState) {
    const Claim* time = nullptr;
    std::vector<const Claim*> perf;
    for (const Claim& c : seedClaims()) {
        if (c.id == "util-fits-bias-prev") time = &c;
        if (c.id.rfind("util-fits-bias-prev-", 0) == 0) perf.push_back(&c);
    }
    ASSERT_TRUE(time);
    ASSERT_EQ(perf.size(), 3u);
    for (const Claim* c : perf) {
        EXPECT_TRUE(isPerfStatMetric(c->metric)) << c->id;
        for (const bool patch : {false, true}) EXPECT_EQ(claimRun(*c, patch, false).key(), claimRun(*time, patch, false).key()) << c->id;
    }
    const Scenario s = hackbenchOn("qemu-2s2c2t", 2, 40000);
    const RunResult r = runScenario(s, s.variants.front(), s.cost, {});
    const SteadyResult st = r.engine->metrics().steady.result();
    ASSERT_GT(st.windows, 0);
    ASSERT_GT(st.busy_cpus, 0);
    Claim c;
    c.metric = kPerfCpusUtilized;
    EXPECT_DOUBLE_EQ(claimFigure(c, r, true), st.busy_cpus);
    c.metric = kPerfMigrations;
    EXPECT_DOUBLE_EQ(claimFigure(c, r, true), st.migrations_per_s / st.busy_cpus / 1e3);
    c.metric = kPerfSwitches;
    EXPECT_DOUBLE_EQ(claimFigure(c, r, false), st.switches_per_s / st.busy_cpus / 1e3);
    EXPECT_GT(claimFigure(c, r, false), 1.0);  // hackbench switches far more than 1000 times per CPU-second
    c.metric = "Time (s)";
    EXPECT_FALSE(isPerfStatMetric(c.metric));
}

// The explanation names the follow-up patch's own reason codes the patch run decided by.
TEST(Reproduce, TheExplanationCountsThePatchsOwnReasonCodes) {
    const Scenario s = hackbenchOn("qemu-2s2c2t", 2, 4000);
    Variant base, patch;
    base.knobs = Knobs::preset("baseline");
    patch.knobs = Knobs::preset("util-fits-bias-prev");
    const RunResult b = runScenario(s, base, s.cost, {});
    const RunResult p = runScenario(s, patch, s.cost, {});
    Claim c;
    c.id = "g";
    c.metric = kPerfCpusUtilized;
    c.published_base = 1;
    c.published_patch = 2;
    const ClaimOutcome o = evaluateClaim(c, b, p, 0);
    ASSERT_FALSE(o.patch_reasons.empty());
    std::uint64_t total = 0;
    for (const auto& [code, n] : o.patch_reasons) {
        EXPECT_TRUE(code.rfind("SIS_", 0) == 0 && (code.find("FITS") != std::string::npos || code.find("BIAS_PREV") != std::string::npos)) << code;
        EXPECT_GT(n, 0u);
        total += n;
    }
    const Metrics& m = p.engine->metrics();
    std::uint64_t expect = 0;
    for (Stage2 r : {Stage2::SIS_TARGET_FITS, Stage2::SIS_PREV_FITS, Stage2::SIS_RECENT_FITS, Stage2::SIS_BIAS_PREV_IDLE, Stage2::SIS_BIAS_PREV_FITS,
                     Stage2::SIS_BIAS_PREV_FALLBACK})
        expect += m.stage2[std::size_t(r)];
    EXPECT_EQ(total, expect);
    // The baseline decides by none of them, and the table's explanation prints the codes.
    EXPECT_TRUE(evaluateClaim(c, p, b, 0).patch_reasons.empty());
    const std::string t = reproduceTable({o}, false, 1, {});
    EXPECT_NE(t.find(o.patch_reasons.front().first + " "), std::string::npos) << t;
}

TEST(Reproduce, DirectionIsTheSignOfTheChangeWithA1PercentDeadBand) {
    Claim c;
    c.published_base = 49;
    c.published_patch = 34;
    ClaimOutcome o;
    o.claim = &c;
    o.base = 1.76;
    o.patch = 1.02;
    EXPECT_TRUE(o.directionMatches());
    o.patch = 1.9;
    EXPECT_FALSE(o.directionMatches());
    o.patch = 1.765;  // within 1 %: no change, while the claim has one
    EXPECT_FALSE(o.directionMatches());
    c.published_patch = 49.2;
    EXPECT_TRUE(o.directionMatches());
}

TEST(Reproduce, AClaimIsInertWhenSchedlabBarelyMovesWhereTheMachineMoved) {
    Claim c;
    c.published_base = 386.1;
    c.published_patch = 463.5;  // +20 %
    ClaimOutcome o;
    o.claim = &c;
    o.base = 305.7;
    o.patch = 306.9;  // +0.4 %
    EXPECT_TRUE(o.inert());
    o.patch = 310.0;  // +1.4 %: it moved
    EXPECT_FALSE(o.inert());
    o.patch = 305.7;
    c.published_patch = 400;  // +3.6 %: the machine barely moved either
    EXPECT_FALSE(o.inert());
    c.published_patch = 463.5;
    o.seeds = {{1, 305.7, 305.7}, {2, 300, 310}};  // one seed moves by 3 %
    EXPECT_FALSE(o.inert());
    o.seeds[1].patch = 302;
    EXPECT_TRUE(o.inert());
    const std::string t = reproduceTable({o}, false, 1, {});
    EXPECT_NE(t.find("1 of 1 claims move by 1 % or less in schedlab where the machine moved by 5 % or more"), std::string::npos) << t;
    EXPECT_EQ(reproduceJson({o}, false, 1, {})["inert"], 1);
}

TEST(Reproduce, SeveralSeedsMatchOnlyWhenEverySeedGoesThePublishedWay) {
    Claim c;
    c.published_base = 49;
    c.published_patch = 34;  // -31 %
    ClaimOutcome o;
    o.claim = &c;
    o.base = 2.0;
    o.patch = 1.0;
    EXPECT_TRUE(o.matchesEverySeed());  // one seed: its own direction
    EXPECT_FALSE(o.flipsWithSeed());
    o.seeds = {{1, 2.0, 1.0}, {2, 2.0, 1.5}, {3, 2.0, 2.0}};  // -50 %, -25 %, 0 %
    EXPECT_EQ(o.seedsMatching(), 2);
    EXPECT_FALSE(o.matchesEverySeed());
    EXPECT_TRUE(o.flipsWithSeed());
    o.seeds[2].patch = 1.9;  // -5 %
    EXPECT_TRUE(o.matchesEverySeed());
    EXPECT_FALSE(o.flipsWithSeed());
    for (auto& sd : o.seeds) sd.patch = 2.5;  // +25 % everywhere: consistently wrong, not a flip
    EXPECT_EQ(o.seedsMatching(), 0);
    EXPECT_FALSE(o.matchesEverySeed());
    EXPECT_FALSE(o.flipsWithSeed());
}
