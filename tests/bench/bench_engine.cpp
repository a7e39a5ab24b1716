// SPDX-License-Identifier: GPL-2.0-or-later
// bench_engine.cpp: simulation speed. Simulated context switches per wall-clock
// second for hackbench -g 32 -f 20 --threads --pipe on epyc-9654-2s, and the
// wall-clock cost per wakeup as the machine grows from 8 to 512 CPUs.
#include "bench_hackbench.h"
#include "sim/scenario.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

using namespace sched;

namespace {

using bench::hackbench;

// The figure: simulated context switches per wall-clock second; the second
// argument turns on the exact coalescing of plain steps (same run, fewer events).
void BM_HackbenchEpyc(benchmark::State& state) {
    const Scenario s = hackbench("epyc-9654-2s", 32, int(state.range(0)));
    std::uint64_t switches = 0, events = 0, wakeups = 0, messages = 0;
    for (auto _ : state) {
        RunOptions o;
        o.decision_ring = 0;
        o.coalesce = state.range(1) != 0;
        RunResult r = runScenario(s, s.variants.front(), s.cost, o);
        switches += r.engine->metrics().ctx_switches;
        wakeups += r.engine->metrics().ttwu_count;
        events += r.engine->events();
        messages += std::uint64_t(32) * 20 * 20 * std::uint64_t(state.range(0));
    }
    state.counters["ctx_switches/s"] = benchmark::Counter(double(switches), benchmark::Counter::kIsRate);
    state.counters["wakeups/s"] = benchmark::Counter(double(wakeups), benchmark::Counter::kIsRate);
    state.counters["events/s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
    state.counters["messages/s"] = benchmark::Counter(double(messages), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HackbenchEpyc)->Args({100, 0})->Args({100, 1})->ArgNames({"loops", "coalesce"})->Unit(benchmark::kMillisecond)->Iterations(2);

// The steady-state figure: the seed hackbench (loops 20000, ~5 s simulated) is
// run untimed to 0.5 s simulated (start-up: forks, the first balancing), then each
// iteration simulates the next 20 ms. Arg: coalescing off/on. Iterations are successive
// windows of one run; repetitions give the median of several windows.
void BM_HackbenchEpycSteady(benchmark::State& state) {
    const Scenario s = hackbench("epyc-9654-2s", 32, 20000);
    RunOptions o;
    o.decision_ring = 0;
    o.coalesce = state.range(0) != 0;
    static std::unique_ptr<Engine> e[2];
    std::unique_ptr<Engine>& eng = e[state.range(0) != 0];
    if (!eng) {
        eng = buildEngine(s, s.variants.front().knobs, s.cost, o);
        eng->advance(500000000);
    }
    std::uint64_t switches = 0, events = 0, planned = 0;
    double messages = 0;
    for (auto _ : state) {
        const std::uint64_t s0 = eng->metrics().ctx_switches, e0 = eng->events(), p0 = eng->plannedSteps();
        const double m0 = eng->workloads().front()->progress(*eng) * eng->workloads().front()->messages();
        eng->advance(20000000);
        switches += eng->metrics().ctx_switches - s0;
        events += eng->events() - e0;
        planned += eng->plannedSteps() - p0;
        messages += eng->workloads().front()->progress(*eng) * eng->workloads().front()->messages() - m0;
    }
    // Messages per wall second: the simulated work itself. Context switches per wall second
    // depend on how many messages a switch carries (a reader woken later reads more at once),
    // which the model decides, not the engine's speed.
    state.counters["messages/s"] = benchmark::Counter(messages, benchmark::Counter::kIsRate);
    state.counters["messages/switch"] = messages / double(std::max<std::uint64_t>(1, switches));
    // Of the events, those that were planned steps (coalesced: no event of their own).
    state.counters["planned/switch"] = double(planned) / double(std::max<std::uint64_t>(1, switches));
    state.counters["ctx_switches/s"] = benchmark::Counter(double(switches), benchmark::Counter::kIsRate);
    state.counters["events/s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
    state.counters["events/switch"] = double(events) / double(std::max<std::uint64_t>(1, switches));
    state.counters["sim_ms"] = double(eng->now()) / 1e6;
    // Simulated time per wall second: how long the steady state takes to reach (the goal).
    state.counters["sim_ms/s"] = benchmark::Counter(20.0 * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HackbenchEpycSteady)->Arg(0)->Arg(1)->ArgNames({"coalesce"})->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5);

// Wall-clock ns per wakeup as the machine grows from 8 to 512 CPUs, with the same
// work per wakeup and the same load per CPU: schbench (2023) with one message thread
// and 4 workers per 8 CPUs (each request: a futex wakeup and two timer wakeups).
// Start-up (forks) and the first 2/N simulated seconds are not timed; then about 0.3 M
// wakeups are (a span long enough to rise above a noisy VM's jitter).
void BM_WakeupCostVsCpus(benchmark::State& state) {
    static const char* topos[] = {"i7-4790", "x86-20c40t", "milan-2s", "epyc-9654-2s", "bergamo-9754-2s"};
    const std::string topo = topos[state.range(0)];
    const Topology t = Topology::preset(topo);
    nlohmann::json doc = {{"topology", topo},
                          {"workloads", nlohmann::json::array({{{"type", "schbench"},
                                                                {"message_threads", t.nrCpus() / 8},
                                                                {"workers", 4},
                                                                {"runtime_s", 64.0 / t.nrCpus()},
                                                                {"op_ns", 10000},
                                                                {"sleep_us", 50}}})}};
    const Scenario s = parseScenario(doc, "bench.json", ".");
    std::uint64_t wakeups = 0;
    for (auto _ : state) {
        state.PauseTiming();  // building the machine (sched domains) is not the wakeup cost
        RunOptions o;
        o.decision_ring = 0;
        auto e = buildEngine(s, s.variants.front().knobs, s.cost, o);
        e->advance(std::int64_t(2e9 / t.nrCpus()));  // start-up (forks) and warm-up, untimed
        const std::uint64_t before = e->metrics().ttwu_count;
        state.ResumeTiming();
        e->run();
        wakeups += e->metrics().ttwu_count - before;
    }
    state.SetLabel(topo);
    state.counters["ns/wakeup"] = benchmark::Counter(double(wakeups), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["cpus"] = t.nrCpus();
    state.counters["wakeups"] = double(wakeups) / double(state.iterations());
}
BENCHMARK(BM_WakeupCostVsCpus)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->Iterations(2)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
