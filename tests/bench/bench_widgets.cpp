// SPDX-License-Identifier: GPL-2.0-or-later
// bench_widgets.cpp: paint time of the topology heatmap: bergamo-9754-2s (512 CPUs) with 200 migration
// arrows rendered into a 1200x800 image, with and without the arrows, and the layout on its own.
// Core headers before any Qt header: engine.h has a member named emit, which Qt defines as a macro.
#include "heatmap_layout.h"
#include "sim/simulation.h"
#include "topology/topology.h"

#include "topology_heatmap.h"

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace {

/// A busy 512-CPU snapshot: rq lengths 0..5, and 200 (from, to) pairs of migrations, some repeated. Random
/// pairs (`local` false) make long arrows across the machine, the worst case; `local` keeps 9 in 10 inside
/// the source's LLC, closer to what wakeups do.
std::shared_ptr<const sched::Snapshot> bergamoSnapshot(bool local) {
    auto s = std::make_shared<sched::Snapshot>();
    s->topo = std::make_shared<const sched::Topology>(sched::Topology::preset("bergamo-9754-2s"));
    s->now = 50'000'000;
    const int n = s->topo->nrCpus();
    std::mt19937_64 rng(7);
    s->cpus.resize(std::size_t(n));
    for (auto& v : s->cpus) {
        v.nr_running = std::uint16_t(rng() % 6);
        v.kind = v.nr_running ? sched::CpuKind::busy : sched::CpuKind::idle;
        v.util = int(rng() % 1025);
        v.claimed = rng() % 20 == 0;
    }
    for (int i = 0; i < 200; ++i) {
        sched::MigrationView m;
        m.from = std::int16_t(rng() % n);
        m.to = std::int16_t((m.from + 1 + rng() % (n - 1)) % n);
        if (local && rng() % 10 != 0) {
            std::vector<int> same;
            for (const sched::CpuInfo& c : s->topo->cpus())
                if (c.llc == s->topo->cpu(m.from).llc && c.cpu != m.from) same.push_back(c.cpu);
            m.to = std::int16_t(same[rng() % same.size()]);
        }
        m.dist = sched::DistClass(1 + rng() % 5);
        m.cause = rng() % 3 ? sched::MigrationCause::wakeup : sched::MigrationCause::periodic;
        const int repeat = 1 + int(rng() % 4);
        for (int r = 0; r < repeat; ++r) {
            m.time = s->now - std::int64_t(rng() % 5'000'000);
            s->migrations.push_back(m);
        }
    }
    return s;
}

void renderLoop(benchmark::State& state, bool arrows, bool local = false) {
    schedlab::TopologyHeatmap w;
    w.resize(800, 500);
    w.setSnapshot(bergamoSnapshot(local));
    w.setMaxArrows(200);
    w.setShowArrows(arrows);
    w.setHighlight({3, 17, 260, 300});
    w.setSelection({42});
    QImage img(1200, 800, QImage::Format_ARGB32_Premultiplied);
    {
        QPainter warm(&img);  // first render builds the geometry for this target
        w.render(warm, img.rect());
    }
    for (auto _ : state) {
        QPainter p(&img);
        w.render(p, img.rect());
        p.end();
        benchmark::DoNotOptimize(img.constBits());
    }
}

void BM_HeatmapRender512With200Arrows(benchmark::State& state) { renderLoop(state, true); }
BENCHMARK(BM_HeatmapRender512With200Arrows)->Unit(benchmark::kMillisecond);

void BM_HeatmapRender512With200LocalArrows(benchmark::State& state) { renderLoop(state, true, true); }
BENCHMARK(BM_HeatmapRender512With200LocalArrows)->Unit(benchmark::kMillisecond);

void BM_HeatmapRender512NoArrows(benchmark::State& state) { renderLoop(state, false); }
BENCHMARK(BM_HeatmapRender512NoArrows)->Unit(benchmark::kMillisecond);

// What a resize or a new topology costs on top of a paint.
void BM_HeatmapLayout512(benchmark::State& state) {
    const sched::Topology t = sched::Topology::preset("bergamo-9754-2s");
    for (auto _ : state) benchmark::DoNotOptimize(schedlab::layoutTopology(t, 1200, 770));
}
BENCHMARK(BM_HeatmapLayout512)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
