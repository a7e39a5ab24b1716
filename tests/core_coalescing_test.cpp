// SPDX-License-Identifier: GPL-2.0-or-later
// core_coalescing_test.cpp: exact coalescing of the steps that change no scheduler state is bit
// for bit the step-by-step run (every workload mode, knob preset and shipped scenario, chunked
// runs, every chunk boundary), the golden digests of every shipped scenario and variant, and a
// machine of 200 000 tasks in bounded memory.
#include "sim/cost_model.h"
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "test_scenarios.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <variant>

#include <fmt/format.h>

#include <tuple>

using namespace sched;
using nlohmann::json;

// --- Coalescing (engine.h) ---------------------------------------------------

namespace {

// Everything a run shows: its digest (which counts logical events), every wakeup decision
// and the report text, with and without coalescing.
struct Observed {
    std::uint64_t digest = 0, decisions = 0, planned = 0, paused = 0, events = 0;
    std::size_t ndecisions = 0;
    std::string report;
};

Observed observe(const Scenario& s, bool coalesce, bool check = false) {
    RunOptions o;
    o.coalesce = coalesce;
    o.check_invariants = check;
    Observed ob;
    std::uint64_t h = 0xcbf29ce484222325ULL;
    o.decision_sink = [&](const DecisionRecord& r) {
        for (std::uint64_t v : {std::uint64_t(r.time), std::uint64_t(r.pid), std::uint64_t(r.d.cpu), std::uint64_t(r.d.stage0),
                                std::uint64_t(r.d.stage1), std::uint64_t(r.d.stage2), std::uint64_t(r.d.examined.size())})
            h = (h ^ v) * 0x100000001b3ULL;
        ob.ndecisions++;
    };
    RunResult r = runScenario(s, s.variants.front(), s.cost, o);
    ob.digest = r.digest;
    ob.decisions = h;
    ob.planned = r.engine->plannedSteps();
    ob.paused = r.engine->coalescingPausedWindows();
    ob.events = r.engine->events();
    ob.report = runReportText(s, r);
    // The line that says how much was coalesced differs by design; the rest may not.
    auto cut = [](std::string t) {
        const auto a = t.find("coalesced: ");
        if (a != std::string::npos) t.erase(a, t.find('\n', a) + 1 - a);
        const auto w = t.find(" s wall");
        const auto c = t.rfind(", ", w);
        if (w != std::string::npos && c != std::string::npos) t.erase(c, w - c);
        return t;
    };
    ob.report = cut(ob.report);
    return ob;
}

// Returns the coalesced run's observations.
Observed expectSame(const Scenario& s, const std::string& what, bool check = false, bool mustCoalesce = true) {
    const Observed slow = observe(s, false, check);
    const Observed fast = observe(s, true, check);
    EXPECT_EQ(slow.planned, 0u) << what;
    if (mustCoalesce) {
        EXPECT_GT(fast.planned, 0u) << what << ": nothing was coalesced";
    }
    EXPECT_EQ(fast.digest, slow.digest) << what;
    EXPECT_EQ(fast.ndecisions, slow.ndecisions) << what;
    EXPECT_EQ(fast.decisions, slow.decisions) << what;
    EXPECT_EQ(fast.report, slow.report) << what;
    return fast;
}

}  // namespace

TEST(Coalescing, HackbenchPipesAndSocketsThreadsAndProcessesBitIdentical) {
    for (const char* topo : {"i7-4790", "qemu-2s2c2t", "x86-20c40t"})
        for (bool pipe : {true, false})
            for (bool threads : {true, false}) {
                const Scenario s = scenario(hb(topo, 2, 5, 60, threads, pipe));
                expectSame(s, fmt::format("{} pipe={} threads={}", topo, pipe, threads), /*check=*/true);
            }
}

// pipe->mutex under contention (20 writers a pipe; preemption on 8 CPUs, SMT speed changes on
// 40): holds planned around real ones, plans cut inside a hold, spinners and sleepers; also
// with the lean bookkeeping (the mutexes' contender lists freed when idle). The same runs.
TEST(Coalescing, PipeMutexUnderContentionBitIdentical) {
    struct Restore {
        int was = hackbenchLeanPipes();
        ~Restore() { setHackbenchLeanPipes(was); }
    } restore;
    for (int lean : {4096, 0}) {
        setHackbenchLeanPipes(lean);
        for (const auto& [topo, g, loops] : {std::tuple{"i7-4790", 2, 60}, std::tuple{"x86-20c40t", 6, 40}}) {
            const Scenario s = scenario(hb(topo, g, 20, loops));
            expectSame(s, fmt::format("{} lean={}", topo, lean), /*check=*/lean == 0);
            RunOptions o;
            const RunResult r = runScenario(s, s.variants.front(), s.cost, o);
            double contended = 0, slept = 0;
            for (const auto& c : r.reports[0].counters) {
                if (c.key == "mutex_contended") contended = c.value;
                if (c.key == "mutex_sleep_ms") slept = c.value;
            }
            EXPECT_GT(contended, 100) << topo;  // the runs do exercise the contended paths
            EXPECT_GT(slept, 0) << topo;
        }
    }
}

// The governor (Engine::governCoalescing()): where plans keep being cut (20 writers contending
// for each pipe's mutex) it pauses coalescing for windows of events, and where they hold (AF_UNIX
// sockets, no mutex) it leaves it on; either way the run is the step-by-step one.
TEST(Coalescing, GovernorPausesWhereItDoesNotPaySameRun) {
    const Scenario contended = scenario(hb("x86-20c40t", 6, 20, 150));
    const Observed c = expectSame(contended, "pipe->mutex, 6 groups");
    EXPECT_GT(c.events, 20u * 32768u) << "the run must span the governor's windows";
    // More than the sockets' start-up pauses below (at most 2): the governor sees the cut plans. (Plans
    // are short while wakeups are in flight, so fewer windows are cut than the plan length allows.)
    EXPECT_GT(c.paused, 2u) << "planned " << c.planned << " of " << c.events << " steps";
    EXPECT_GT(c.planned, 0u);  // measured windows coalesced
    const Scenario sockets = scenario(hb("x86-20c40t", 8, 10, 600, true, false));
    const Observed k = expectSame(sockets, "sockets, 8 groups");
    EXPECT_GT(k.events, 20u * 32768u) << "the run must span the governor's windows";
    // (Its start-up, forks and first writes, plans little: at most the first, shortest pause.)
    EXPECT_LE(k.paused, 2u) << "planned " << k.planned << " of " << k.events << " steps";
    EXPECT_GT(5 * k.planned, 2 * k.events);
}

// The bookkeeping of jobs with many pipes (applied before planning, buffers freed when
// drained), forced on for small jobs: the same runs.
TEST(Coalescing, LeanPipeBookkeepingBitIdentical) {
    struct Restore {
        int was = hackbenchLeanPipes();
        ~Restore() { setHackbenchLeanPipes(was); }
    } restore;
    setHackbenchLeanPipes(0);
    for (bool pipe : {true, false}) {
        expectSame(scenario(hb("qemu-2s2c2t", 3, 6, 80, true, pipe)), fmt::format("lean pipe={}", pipe), /*check=*/true);
        expectSame(scenario(hb("x86-20c40t", 4, 10, 40, false, pipe)), fmt::format("lean processes pipe={}", pipe));
    }
}

TEST(Coalescing, EveryKnobPresetBitIdentical) {
    const Scenario s = scenario(hb("qemu-2s2c2t", 3, 6, 80));
    for (const auto& name : Knobs::presetNames()) {
        const Knobs k = Knobs::preset(name);
        Scenario v = s;
        v.variants = {Variant{name, k}};
        // Proxy execution runs without coalescing (its donors and handoffs are outside the
        // plans' rules): the run with coalescing asked for is the same run, one event per step.
        expectSame(v, name, false, !k.proxy_exec);
    }
}

TEST(Coalescing, EveryShippedScenarioShortenedBitIdentical) {
    int n = 0;
    for (const auto& f : std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios")) {
        if (f.path().extension() != ".json") continue;
        Scenario s = loadScenario(f.path().string());
        // Past the forks and GO: about 20 ms on 384 CPUs; 400 processes forked on 8 CPUs
        // (mike-sis-debounce-hackbench) take longer, and small machines are cheap to run.
        s.stop_s = s.topo->nrCpus() <= 16 ? 0.1 : 0.024;
        bool hackbench = false;
        for (const auto& w : s.workloads) hackbench |= std::holds_alternative<HackbenchParams>(w);
        expectSame(s, f.path().filename().string(), false, hackbench);
        ++n;
    }
    EXPECT_GE(n, 10);
}

TEST(Coalescing, ChunkedAdvanceSameAsOneRun) {
    // The GUI advances in chunks: the lazy steps are applied at the same keys either way.
    const Scenario s = scenario(hb("i7-4790", 2, 4, 200));
    RunOptions o;
    o.coalesce = true;
    auto whole = buildEngine(s, Knobs{}, s.cost, o);
    whole->run();
    auto chunked = buildEngine(s, Knobs{}, s.cost, o);
    while (chunked->advance(37'000)) {
    }
    EXPECT_EQ(whole->digest(), chunked->digest());
    EXPECT_GT(chunked->plannedSteps(), 0u);
}

TEST(Coalescing, EveryChunkBoundaryShowsTheSameMachine) {
    // The window shows a run between chunks, with plans in flight: their steps behind the
    // current event count in events() and the digest, so each boundary matches the slow path.
    for (const char* topo : {"i7-4790", "x86-20c40t"}) {
        const Scenario s = scenario(hb(topo, 2, 5, 200));
        RunOptions slowOpt, fastOpt;
        fastOpt.coalesce = true;
        auto slow = buildEngine(s, Knobs{}, s.cost, slowOpt);
        auto fast = buildEngine(s, Knobs{}, s.cost, fastOpt);
        int boundaries = 0;
        bool more = true;
        while (more) {
            more = slow->advance(23'000);
            EXPECT_EQ(fast->advance(23'000), more);
            ASSERT_EQ(fast->events(), slow->events()) << topo << " at " << slow->now();
            ASSERT_EQ(fast->digest(), slow->digest()) << topo << " at " << slow->now();
            ++boundaries;
        }
        EXPECT_GT(boundaries, 20) << topo;
        EXPECT_GT(fast->plannedSteps(), 0u) << topo;
    }
}

TEST(Coalescing, MaxEventsRunsDoNotCoalesce) {
    Scenario s = scenario(hb("i7-4790", 2, 4, 200));
    s.max_events = 5000;
    RunOptions o;
    o.coalesce = true;
    RunResult r = runScenario(s, s.variants.front(), s.cost, o);
    EXPECT_EQ(r.engine->plannedSteps(), 0u);
    EXPECT_EQ(r.engine->events(), 5000u);
}

// Golden digests: every shipped scenario and variant, shortened past the forks, with the
// digest it had when tests/data/golden-digests.txt was last written. A speed-up that claims
// to change nothing must leave this file as it is; a change that moves results on purpose
// rewrites it in the same commit (SCHEDLAB_UPDATE_GOLDEN=1 tests/core_tests
// --gtest_filter='GoldenDigests.*') and says why.
TEST(GoldenDigests, EveryShippedScenarioAndVariantShortened) {
    const std::string golden = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/data/golden-digests.txt";
    std::vector<std::filesystem::path> files;
    for (const auto& f : std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios"))
        if (f.path().extension() == ".json") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    std::string now;
    for (const auto& f : files) {
        Scenario s = loadScenario(f.string());
        // Past the forks and GO: about 20 ms on 384 CPUs; 400 processes forked on 8 CPUs
        // (mike-sis-debounce-hackbench) take longer, and small machines are cheap to run.
        s.stop_s = s.topo->nrCpus() <= 16 ? 0.1 : 0.024;
        for (const auto& v : s.variants) {
            RunOptions o;
            o.decision_ring = 0;
            const RunResult r = runScenario(s, v, s.cost, o);
            now += fmt::format("{} {} {:016x} {}\n", f.filename().string(), v.name, r.engine->digest(), r.engine->events());
        }
    }
    if (std::getenv("SCHEDLAB_UPDATE_GOLDEN")) {
        std::ofstream(golden) << now;
        std::printf("rewrote %s\n", golden.c_str());
        return;
    }
    std::ifstream in(golden);
    ASSERT_TRUE(in) << golden << " is missing";
    const std::string was((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(now, was) << "digests moved: if on purpose, rewrite " << golden << " and say why in the commit";
}

// --- Scale -------------------------------------------------------------------------

#if defined(__SANITIZE_ADDRESS__)
// libasan's allocator statistics (sanitizer/allocator_interface.h, which GCC 12 on Debian
// does not install): live user bytes, without the quarantine of freed blocks.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
static std::size_t liveHeapBytes() { return __sanitizer_get_current_allocated_bytes(); }
#else
#include <malloc.h>
static std::size_t liveHeapBytes() { return mallinfo2().uordblks + mallinfo2().hblkhd; }
#endif

// A 200 000-task scenario (hackbench -g 2500 -f 40 on 384 CPUs) runs in bounded memory:
// under 1 KiB and a cache line of heap per task all told (SimTask is 304 B: four cache lines
// until the follow-up patches' task fields came: se.dur_avg, prev_sleep_sum_runtime,
// next_migration_time and its quota, avg_hot_dur, last_dequeue_time, as their patches add them to
// task_struct), and no growth while it runs
// on. detach_tasks() from a runqueue of tens of thousands of forked tasks stays cheap
// (cfs_tasks is a list, not sorted per balance).
TEST(EngineScale, TwoHundredThousandTasksRunInBoundedMemory) {
    const Scenario s = scenario(hb("epyc-9654-2s", 2500, 40, 1000));
    const std::size_t before = liveHeapBytes();
    RunOptions o;
    auto e = buildEngine(s, Knobs{}, s.cost, o);
    std::int64_t t = 0;
    while (e->taskCount() < 200001 && t < 200'000'000) e->advance(t += 1'000'000);
    ASSERT_EQ(e->taskCount(), 200001) << "every worker forked by " << t << " ns";
    const std::size_t forked = liveHeapBytes();
    const double perTask = double(forked - before) / e->taskCount();
    RecordProperty("heap_bytes_per_task", int(perTask));
    EXPECT_LT(perTask, 1088.0);
    e->advance(t += 10'000'000);
    const std::size_t later = liveHeapBytes();
    EXPECT_LT(double(later) - double(forked), 0.05 * double(forked - before)) << "heap grew while running";
    fmt::print("forked by {} ms: {:.0f} heap bytes per task; {} MB after 10 ms more\n", t / 1000000 - 10, perTask, later / 1000000);
}
