// SPDX-License-Identifier: GPL-2.0-or-later
// bench_trace_view.cpp: what a cursor move over a large trace costs in the window.
//   A simulated hackbench run on qemu-2s2c2t (about 1.4 M sched events, 280 MB of ftrace text)
//   is exported and parsed once; then:
//   BM_CursorReplayFromStart: traceSnapshot() at 90 % of the span (a replay from the first event).
//   BM_TraceIndexBuild: the cursor index (checkpoints every 64 Ki events, 8192 rq rows).
//   BM_CursorIndexed: TraceIndex::snapshot() at a random cursor.
#include "sim/scenario.h"
#include "trace/trace.h"
#include "replay/trace_snapshot.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <random>
#include <sstream>

namespace {

struct Big {
    sched::Trace trace;
    std::shared_ptr<const sched::Topology> topo;
};

const Big& big() {
    static const Big b = [] {
        Big x;
        const sched::Scenario s = sched::parseScenario(
            nlohmann::json{
                {"topology", "qemu-2s2c2t"},
                {"workloads",
                 nlohmann::json::array({{{"type", "hackbench"}, {"groups", 4}, {"fds", 4}, {"threads", true}, {"pipe", true}, {"loops", 40000}}})},
                {"variants", {{"A", "baseline"}}}},
            "big.json", ".");
        std::ostringstream out;
        std::unique_ptr<sched::FtraceTextWriter> w;
        sched::RunOptions o;
        o.on_start = [&](const sched::Engine& e) {
            w = std::make_unique<sched::FtraceTextWriter>(out, e.nrCpus(), [&e](std::int32_t pid) { return e.taskComm(pid); });
        };
        o.event_sink = [&](const sched::SchedEvent& e) { w->write(e); };
        sched::runScenario(s, s.variants[0], s.cost, o);
        x.trace = sched::parseFtraceText(out.str(), "big.txt");
        x.topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
        return x;
    }();
    return b;
}

void BM_CursorReplayFromStart(benchmark::State& state) {
    const Big& b = big();
    const auto [t0, t1] = sched::traceSpan(b.trace);
    for (auto _ : state) benchmark::DoNotOptimize(sched::traceSnapshot(b.trace, b.topo, t0 + (t1 - t0) * 9 / 10, "A"));
    state.counters["events"] = double(b.trace.events.size());
}
BENCHMARK(BM_CursorReplayFromStart)->Unit(benchmark::kMillisecond);

void BM_TraceIndexBuild(benchmark::State& state) {
    const Big& b = big();
    for (auto _ : state) {
        sched::TraceIndex idx(b.trace, b.topo);
        benchmark::DoNotOptimize(idx.checkpoints());
    }
}
BENCHMARK(BM_TraceIndexBuild)->Unit(benchmark::kMillisecond);

void BM_CursorIndexed(benchmark::State& state) {
    const Big& b = big();
    static const sched::TraceIndex idx(b.trace, b.topo);
    const auto [t0, t1] = sched::traceSpan(b.trace);
    std::mt19937_64 rng(1);
    for (auto _ : state) {
        const std::int64_t at = t0 + std::int64_t(rng() % std::uint64_t(t1 - t0 + 1));
        benchmark::DoNotOptimize(idx.snapshot(at, "A"));
    }
}
BENCHMARK(BM_CursorIndexed)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
