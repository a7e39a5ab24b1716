// SPDX-License-Identifier: GPL-2.0-or-later
// bench_trace.cpp: ftrace text import and export throughput.
//   BM_ParseFtraceText: a simulated hackbench run exported as ftrace text (in memory), parsed
//     back; MB/s of text and events/s.
//   BM_ReadFtraceFile/0 the same text from a file (memory-mapped), /1 gzip-compressed.
//   BM_WriteFtraceText: the export, MB/s of text written.
//   BM_WriteTraceDat/6, /7: the same events as trace.dat (version 6; 7 with zstd) to a file,
//     libtracecmd's container included; MB/s of ring-buffer pages and events/s.
//   BM_ReadOwnTraceDat: that version-6 file read back by readTraceDat().
//   BM_Agree: `agree` on that run (384 CPUs; no schedlab_wake marks, so every input is
//     reconstructed as for a kernel's trace): decisions replayed per second.
#include "sim/engine.h"
#include "replay/replay.h"
#include "sim/scenario.h"
#include "trace/trace.h"
#include "trace/trace_dat_writer.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <unistd.h>

namespace {

struct Exported {
    std::vector<sched::SchedEvent> events;
    std::unique_ptr<sched::Engine> engine;  ///< kept for the tasks' names
    int cpus = 0;
    std::string text;
};

/// hackbench -g 8 -f 20 on epyc-9654-2s until about 400k events, exported with ns stamps.
const Exported& exported() {
    static const Exported x = [] {
        Exported e;
        const sched::Scenario s = sched::parseScenario(
            nlohmann::json{{"topology", "epyc-9654-2s"},
                           {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 8}, {"fds", 20}, {"loops", 200}}})},
                           {"variants", {{"A", "baseline"}}}},
            "bench.json", ".");
        sched::RunOptions o;
        o.event_sink = [&](const sched::SchedEvent& ev) { e.events.push_back(ev); };
        sched::RunResult r = sched::runScenario(s, s.variants[0], s.cost, o);
        e.engine = std::move(r.engine);
        e.cpus = e.engine->nrCpus();
        std::ostringstream out;
        sched::FtraceTextWriter w(out, e.cpus, [&](std::int32_t pid) { return e.engine->taskComm(pid); });
        for (const auto& ev : e.events) w.write(ev);
        e.text = out.str();
        return e;
    }();
    return x;
}

void BM_ParseFtraceText(benchmark::State& state) {
    const Exported& x = exported();
    std::size_t events = 0;
    for (auto _ : state) {
        const sched::Trace t = sched::parseFtraceText(x.text, "bench.txt");
        events += t.events.size();
        benchmark::DoNotOptimize(t.events.data());
    }
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(x.text.size()));
    state.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
    state.counters["MB"] = double(x.text.size()) / 1e6;
}
BENCHMARK(BM_ParseFtraceText)->Unit(benchmark::kMillisecond);

void BM_ReadFtraceFile(benchmark::State& state) {
    const Exported& x = exported();
    const auto dir = std::filesystem::temp_directory_path();
    const std::string plain = (dir / ("schedlab-bench-" + std::to_string(::getpid()) + ".txt")).string();
    std::ofstream(plain, std::ios::binary) << x.text;
    std::string path = plain;
    if (state.range(0)) {
        const std::string cmd = "gzip -kf1 '" + plain + "'";
        if (std::system(cmd.c_str()) != 0) state.SkipWithError("gzip failed");
        path = plain + ".gz";
    }
    for (auto _ : state) {
        const sched::Trace t = sched::readFtraceText(path);
        benchmark::DoNotOptimize(t.events.data());
    }
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(x.text.size()));  // uncompressed MB/s
    state.SetLabel(state.range(0) ? "gzip" : "plain, memory-mapped");
    std::filesystem::remove(plain);
    std::filesystem::remove(plain + ".gz");
}
BENCHMARK(BM_ReadFtraceFile)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_ReadTraceDat(benchmark::State& state) {
    // The recorded 6.1 sample (10 k records; most of the v6 file is kallsyms): events/s through
    // libtracecmd, including the forked reader and its pipe.
    const std::string path = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/data/traces/qemu-6.1-2s2c2t-hackbench-small-dat/" +
                             (state.range(0) ? "trace.v7-zstd.dat" : "trace.dat");
    std::size_t events = 0;
    for (auto _ : state) {
        const sched::Trace t = sched::readTraceDat(path);
        events += t.events.size();
    }
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(std::filesystem::file_size(path)));
    state.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
    state.SetLabel(state.range(0) ? "version 7, zstd" : "version 6");
}
BENCHMARK(BM_ReadTraceDat)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();  // the work is in the child

void BM_WriteFtraceText(benchmark::State& state) {
    const Exported& x = exported();
    for (auto _ : state) {
        std::ostringstream out;
        sched::FtraceTextWriter w(out, x.cpus, [&](std::int32_t pid) { return x.engine->taskComm(pid); });
        for (const auto& ev : x.events) w.write(ev);
        benchmark::DoNotOptimize(out.str().size());
    }
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(x.text.size()));
    state.counters["events"] = double(x.events.size());
}
BENCHMARK(BM_WriteFtraceText)->Unit(benchmark::kMillisecond);

std::string benchDatPath(const char* what) {
    return (std::filesystem::temp_directory_path() / ("schedlab-bench-" + std::to_string(::getpid()) + what)).string();
}

/// Writes the exported run as trace.dat at `path`; returns the bytes of ring-buffer pages.
std::uint64_t writeDat(const Exported& x, const std::string& path, int version) {
    sched::TraceDatOptions o;
    o.version = version;
    if (version == 7) o.compression = "zstd";
    sched::TraceDatWriter w(
        path, x.cpus, [&](std::int32_t pid) { return x.engine->taskComm(pid); }, o);
    for (const auto& ev : x.events) w.write(ev);
    const std::uint64_t bytes = w.bytesOfPages();
    w.commit();
    return bytes;
}

void BM_WriteTraceDat(benchmark::State& state) {
    const Exported& x = exported();
    const std::string path = benchDatPath(".dat");
    std::uint64_t bytes = 0;
    for (auto _ : state) bytes = writeDat(x, path, int(state.range(0)));
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(bytes));  // ring-buffer pages (uncompressed)
    state.counters["events_per_s"] = benchmark::Counter(double(state.iterations()) * double(x.events.size()), benchmark::Counter::kIsRate);
    state.counters["file_MB"] = double(std::filesystem::file_size(path)) / 1e6;
    state.SetLabel(state.range(0) == 7 ? "version 7, zstd" : "version 6");
    std::filesystem::remove(path);
}
BENCHMARK(BM_WriteTraceDat)->Arg(6)->Arg(7)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadOwnTraceDat(benchmark::State& state) {
    const Exported& x = exported();
    const std::string path = benchDatPath(".own.dat");
    writeDat(x, path, 6);
    std::size_t events = 0;
    for (auto _ : state) {
        const sched::Trace t = sched::readTraceDat(path);
        events += t.events.size();
    }
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(std::filesystem::file_size(path)));
    state.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
    std::filesystem::remove(path);
}
BENCHMARK(BM_ReadOwnTraceDat)->Unit(benchmark::kMillisecond)->UseRealTime();  // the work is in the child

void BM_Agree(benchmark::State& state) {
    const Exported& x = exported();
    const sched::Trace t = sched::parseFtraceText(x.text, "bench.txt");
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("epyc-9654-2s"));
    std::uint64_t decisions = 0;
    double agreement = 0;
    for (auto _ : state) {
        const sched::AgreeReport r = sched::agree(t, topo, sched::Knobs::preset("baseline"), sched::AgreeOptions{});
        decisions += r.decisions;
        agreement = r.decisions ? double(r.agree) / double(r.decisions) : 0;
    }
    state.counters["decisions_per_s"] = benchmark::Counter(double(decisions), benchmark::Counter::kIsRate);
    state.counters["decisions"] = double(decisions) / double(std::max<std::int64_t>(1, state.iterations()));
    state.counters["agreement"] = agreement;
}
BENCHMARK(BM_Agree)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
