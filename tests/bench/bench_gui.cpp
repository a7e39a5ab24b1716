// SPDX-License-Identifier: GPL-2.0-or-later
// bench_gui.cpp: the main window's frame cost and the simulation speed with the GUI attached.
//   BM_WindowFrame512: give every view a frame of a 512-CPU machine (bergamo-9754-2s, hackbench,
//     migrations capped at 200 arrows) and paint the whole window into an image (target < 8 ms).
//   BM_OpenTraceDat: a ~140 MB trace.dat (hackbench on qemu-2s2c2t, 1.4 M events; made once by
//     schedlab's own writer, SCHEDLAB_BENCH_DAT_LOOPS loops, default 33000) read and shown in a new
//     window until its first frame is painted: the agreement replay and the cursor index go on
//     in the background, as in the window (tests/bench/kernelshark_open.sh times KernelShark).
//   BM_Throughput/0 headless (Simulation::advance in a loop) and /1 through the worker thread with
//     the window taking frames (target: /1 at least 80% of /0's simulated ns per second).
#include "counters_plot.h"
#include "latency_plot.h"
#include "main_window.h"
#include "rq_plot.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "topology_heatmap.h"
#include "trace/trace.h"
#include "trace/trace_dat_writer.h"

#include <QApplication>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QTimer>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace {

sched::Scenario hackbench(const char* topo, int groups, int loops) {
    return sched::parseScenario(
        nlohmann::json{{"topology", topo},
                       {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", groups}, {"fds", 20}, {"loops", loops}}})},
                       {"variants", {{"A", "baseline"}, {"B", "idle-delay-v2"}}}},
        "bench.json", ".");
}

void waitFor(const std::function<bool()>& pred) {
    while (!pred()) {
        QEventLoop loop;
        QTimer::singleShot(2, &loop, &QEventLoop::quit);
        loop.exec();
    }
}

/// A and B of hackbench -g 16 on bergamo-9754-2s (512 CPUs) from 40 ms in (past the fork phase):
/// kFrames successive frames 0.5 ms of simulated time apart, so that each painted frame has new
/// runqueue lengths and arrows, as while running ("as fast as possible" moves ~0.4 ms per frame).
constexpr int kFrames = 8;
using SnapPair = std::pair<std::shared_ptr<const sched::Snapshot>, std::shared_ptr<const sched::Snapshot>>;
std::vector<SnapPair> snapshots512() {
    const sched::Scenario s = hackbench("bergamo-9754-2s", 16, 100000);
    sched::Simulation a(s, s.variants[0].knobs, "A"), b(s, s.variants[1].knobs, "B");
    a.advance(40'000'000);
    b.advance(40'000'000);
    std::vector<SnapPair> frames;
    for (int k = 0; k < kFrames; ++k) {
        a.advance(500'000);
        b.advance(500'000);
        frames.emplace_back(std::make_shared<const sched::Snapshot>(a.snapshot()), std::make_shared<const sched::Snapshot>(b.snapshot()));
    }
    return frames;
}

void BM_WindowFrame512(benchmark::State& state) {
    schedlab::MainWindow w;
    w.resize(1920, 1080);
    const auto frames = snapshots512();
    auto* ha = static_cast<schedlab::TopologyHeatmap*>(w.view(QStringLiteral("heatmapA")));
    auto* hb = static_cast<schedlab::TopologyHeatmap*>(w.view(QStringLiteral("heatmapB")));
    auto* rq = static_cast<schedlab::RqPlot*>(w.view(QStringLiteral("rq")));
    auto* lat = static_cast<schedlab::LatencyPlot*>(w.view(QStringLiteral("latency")));
    auto* cnt = static_cast<schedlab::CountersPlot*>(w.view(QStringLiteral("counters")));
    ha->setMaxArrows(200);
    hb->setMaxArrows(200);
    w.show();
    QImage img(w.size(), QImage::Format_ARGB32_Premultiplied);
    const bool all = state.range(0) != 0;
    std::size_t k = 0;
    double buildMs = 0;      // setting the snapshots (the views' data), the rest is painting
    std::vector<double> ms;  // each frame's wall time: its median and 90th percentile, robust to the VM's bursts
    for (auto _ : state) {
        QElapsedTimer frame;
        frame.start();
        const auto& [sa, sb] = frames[k++ % frames.size()];
        ha->setSnapshot(sa);
        hb->setSnapshot(sb);
        rq->setSnapshot(sa);
        if (all) {  // the views the window refreshes at most every 100 ms while running (when visible, as it does)
            if (lat->isVisible()) lat->setSnapshots(sa, sb);
            if (cnt->isVisible()) cnt->setSnapshots(sa, sb);
        }
        buildMs += double(frame.nsecsElapsed()) / 1e6;
        if (state.range(1)) {
            // What a frame costs on screen: Qt repaints the dirty widgets into the backing store.
            QCoreApplication::sendPostedEvents(nullptr, QEvent::UpdateRequest);
            QCoreApplication::processEvents();
        } else {
            QPainter p(&img);
            w.render(&p);  // every widget of the window, changed or not
        }
        ms.push_back(double(frame.nsecsElapsed()) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    state.counters["frame_p50_ms"] = ms[ms.size() / 2];
    state.counters["frame_p90_ms"] = ms[ms.size() * 9 / 10];
    state.counters["build_ms"] = buildMs / double(ms.size());
    state.SetLabel(all ? "every view updated" : "heatmaps + rq updated (running frame)");
    state.counters["cpus"] = double(frames[0].first->cpus.size());
    state.counters["migrations_in_span"] = double(frames[0].first->migrations.size());
}
void BM_ViewParts512(benchmark::State& state) {
    schedlab::MainWindow w;
    w.resize(1920, 1080);
    const auto frames = snapshots512();
    w.show();
    const char* names[] = {"heatmapA", "rq", "latency", "counters"};
    QWidget* v = w.view(QString::fromLatin1(names[state.range(0)]));
    QImage img(v->size(), QImage::Format_ARGB32_Premultiplied);
    std::size_t k = 0;
    for (auto _ : state) {
        const auto& [sa, sb] = frames[k++ % frames.size()];
        if (state.range(0) == 0) static_cast<schedlab::TopologyHeatmap*>(v)->setSnapshot(sa);
        if (state.range(0) == 1) static_cast<schedlab::RqPlot*>(v)->setSnapshot(sa);
        if (state.range(0) == 2) static_cast<schedlab::LatencyPlot*>(v)->setSnapshots(sa, sb);
        if (state.range(0) == 3) static_cast<schedlab::CountersPlot*>(v)->setSnapshots(sa, sb);
        QPainter p(&img);
        v->render(&p);
    }
    state.SetLabel(names[state.range(0)]);
    state.counters["migrations_in_span"] = double(frames[0].first->migrations.size());
}
BENCHMARK(BM_ViewParts512)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_Snapshot(benchmark::State& state) {
    QFile f(QStringLiteral(":/scenarios/default.json"));
    f.open(QIODevice::ReadOnly);
    const sched::Scenario s = sched::parseScenario(nlohmann::json::parse(f.readAll().toStdString()), "default.json", ".");
    sched::SimOptions o;
    o.sample_period_ns = 100'000;
    o.sample_rows = 1041;
    sched::Simulation a(s, s.variants[0].knobs, "A", o);
    a.advance(40'000'000);
    for (auto _ : state) benchmark::DoNotOptimize(a.snapshot());
}
BENCHMARK(BM_Snapshot)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_WindowFrame512)->Args({0, 0})->Args({1, 0})->Args({0, 1})->Args({1, 1})->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_Throughput(benchmark::State& state) {
    const bool gui = state.range(0) != 0;
    // The window's default scenario (hackbench -g 32 -f 20 on epyc-9654-2s), both ways.
    QFile f(QStringLiteral(":/scenarios/default.json"));
    f.open(QIODevice::ReadOnly);
    const sched::Scenario s = sched::parseScenario(nlohmann::json::parse(f.readAll().toStdString()), "default.json", ".");
    constexpr std::int64_t kWarm = 25'000'000, kSpan = 15'000'000;
    double simNs = 0, wallNs = 0;
    for (auto _ : state) {
        if (!gui) {
            sched::Simulation a(s, s.variants[0].knobs, "A"), b(s, s.variants[1].knobs, "B");
            a.advance(kWarm);
            b.advance(kWarm);
            QElapsedTimer t;
            t.start();
            for (std::int64_t done = 0; done < kSpan; done += 200'000) {  // the worker's lockstep chunk
                a.advance(200'000);
                b.advance(200'000);
            }
            wallNs += double(t.nsecsElapsed());
        } else {
            schedlab::MainWindow w;
            w.resize(1600, 1000);
            schedlab::StartOptions o;
            o.autoplay = false;
            w.show();
            bool reached = false;
            // The window's own path: scenario → worker thread → frames → views.
            w.openDefault(o);
            w.runUntil(kWarm, [&] { reached = true; });
            waitFor([&] { return reached; });
            reached = false;
            QElapsedTimer t;
            t.start();
            w.runUntil(kWarm + kSpan, [&] { reached = true; });
            waitFor([&] { return reached; });
            wallNs += double(t.nsecsElapsed());
        }
        simNs += double(kSpan);
    }
    state.counters["sim_ms_per_s"] = simNs / 1e6 / (wallNs / 1e9);
}
// The GUI thread while the default scenario runs as fast as possible: the longest gap between two
// ticks of a 5 ms timer (how long the event loop was blocked) and the frames shown per second.
void BM_GuiStall(benchmark::State& state) {
    double maxGapMs = 0, frames = 0, wallS = 0;
    for (auto _ : state) {
        schedlab::MainWindow w;
        w.resize(1600, 1000);
        schedlab::StartOptions o;
        o.autoplay = false;
        w.show();
        w.openDefault(o);
        bool reached = false;
        w.runUntil(25'000'000, [&] { reached = true; });  // past the fork phase
        waitFor([&] { return reached; });
        std::uint64_t seq0 = w.frame()->seq;
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0;
        QTimer tick;
        tick.setInterval(5);
        QObject::connect(&tick, &QTimer::timeout, [&] {
            const qint64 now = clock.nsecsElapsed();
            maxGapMs = std::max(maxGapMs, double(now - last) / 1e6 - 5);
            last = now;
        });
        tick.start();
        reached = false;
        w.runUntil(60'000'000, [&] { reached = true; });
        waitFor([&] { return reached; });
        wallS += double(clock.nsecsElapsed()) / 1e9;
        frames += double(w.frame()->seq - seq0);
    }
    state.counters["max_gui_stall_ms"] = maxGapMs;
    state.counters["frames_per_s"] = frames / wallS;
}
BENCHMARK(BM_GuiStall)->Unit(benchmark::kMillisecond)->Iterations(1);

const std::string& bigTraceDat() {
    static const std::string path = [] {
        const std::string p = "/tmp/schedlab-bench-open.dat";
        const char* env = std::getenv("SCHEDLAB_BENCH_DAT_LOOPS");
        const int loops = env ? std::atoi(env) : 33000;
        const sched::Scenario s = sched::parseScenario(
            nlohmann::json{
                {"topology", "qemu-2s2c2t"},
                {"workloads",
                 nlohmann::json::array({{{"type", "hackbench"}, {"groups", 4}, {"fds", 4}, {"threads", true}, {"pipe", true}, {"loops", loops}}})},
                {"variants", {{"A", "baseline"}}}},
            "bench-dat.json", ".");
        std::unique_ptr<sched::TraceDatWriter> w;
        sched::RunOptions o;
        o.on_start = [&](const sched::Engine& e) {
            w = std::make_unique<sched::TraceDatWriter>(p, e.nrCpus(), [&e](std::int32_t pid) { return e.taskComm(pid); });
        };
        o.event_sink = [&](const sched::SchedEvent& e) { w->write(e); };
        o.wake_inputs_sink = [&](const sched::WakeInputs& in) { w->writeWakeInputs(in); };
        sched::runScenario(s, s.variants[0], s.cost, o);
        w->commit();
        return p;
    }();
    return path;
}

void BM_OpenTraceDat(benchmark::State& state) {
    const std::string& path = bigTraceDat();
    const auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    std::size_t events = 0;
    double readMs = 0, windowMs = 0, showMs = 0;
    for (auto _ : state) {
        QElapsedTimer clock;
        clock.start();
        auto trace = std::make_shared<const sched::Trace>(sched::readTrace(path));
        events = trace->events.size();
        readMs += double(clock.nsecsElapsed()) / 1e6;
        clock.restart();
        schedlab::MainWindow w;
        w.resize(1920, 1080);
        w.show();
        windowMs += double(clock.nsecsElapsed()) / 1e6;
        clock.restart();
        w.showTrace(trace, topo, QString::fromStdString(path));
        showMs += double(clock.nsecsElapsed()) / 1e6;
        const QImage img = w.grab().toImage();  // every view painted once
        benchmark::DoNotOptimize(img.constBits());
        state.PauseTiming();
        waitFor([&] { return w.agreement() != nullptr; });  // let the background replay end before the window goes
        state.ResumeTiming();
    }
    state.counters["events"] = double(events);
    state.counters["read_ms"] = readMs / double(state.iterations());
    state.counters["window_ms"] = windowMs / double(state.iterations());
    state.counters["showTrace_ms"] = showMs / double(state.iterations());
    state.counters["MB"] = double(QFile(QString::fromStdString(path)).size()) / 1e6;
}
BENCHMARK(BM_OpenTraceDat)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

BENCHMARK(BM_Throughput)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("schedlab-bench"));
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
