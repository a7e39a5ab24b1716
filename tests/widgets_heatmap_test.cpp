// SPDX-License-Identifier: GPL-2.0-or-later
// widgets_heatmap_test.cpp: the topology heatmap: layout maths on every preset, colormaps, arrow
// aggregation, and pixels of the painted widget on the offscreen platform.
// Core headers before any Qt header: engine.h has a member named emit, which Qt defines as a macro.
#include "heatmap_layout.h"
#include "sim/metrics.h"
#include "sim/simulation.h"
#include "topology/topology.h"

#include "topology_heatmap.h"

#include <QApplication>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QPixmap>
#include <QToolTip>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

using schedlab::ArrowAgg;
using schedlab::Colormap;
using schedlab::HeatmapLayout;
using schedlab::LayoutBox;
using schedlab::RectF;
using schedlab::Rgb;
using schedlab::TopologyHeatmap;

namespace {

// ---------------------------------------------------------------------------------------------
// Layout

/// Every structural property the heatmap relies on, for one topology and one area.
void checkLayout(const sched::Topology& t, const RectF& area) {
    const HeatmapLayout L = schedlab::layoutTopology(t, area);
    ASSERT_EQ(int(L.cpu.size()), t.nrCpus());

    int packages = 0, llcs = 0, cores = 0, cpus = 0;
    for (const LayoutBox& b : L.boxes) {
        switch (b.kind) {
        case LayoutBox::Kind::Package: ++packages; break;
        case LayoutBox::Kind::Llc: ++llcs; break;
        case LayoutBox::Kind::Core: ++cores; break;
        case LayoutBox::Kind::Cpu: ++cpus; break;
        }
        EXPECT_TRUE(area.containsRect(b.r)) << "box of kind " << int(b.kind) << " id " << b.id << " leaves the area";
        EXPECT_GT(b.r.w, 0);
        EXPECT_GT(b.r.h, 0);
        if (b.kind == LayoutBox::Kind::Package) {
            EXPECT_EQ(b.parent, -1);
        } else {
            ASSERT_GE(b.parent, 0);
            ASSERT_LT(b.parent, int(L.boxes.size()));
            const LayoutBox& parent = L.boxes[std::size_t(b.parent)];
            EXPECT_EQ(int(parent.kind), int(b.kind) - 1) << "parent of the wrong kind";
            EXPECT_TRUE(parent.r.containsRect(b.r)) << "box " << b.id << " of kind " << int(b.kind) << " outside its parent";
        }
    }
    EXPECT_EQ(packages, t.nrPackages());
    EXPECT_EQ(llcs, t.nrLlcs());
    EXPECT_EQ(cores, t.nrCores());
    EXPECT_EQ(cpus, t.nrCpus());

    // Each CPU box sits in the boxes of its own core, LLC and package (ids from CpuInfo).
    for (const LayoutBox& b : L.boxes) {
        if (b.kind != LayoutBox::Kind::Cpu) continue;
        const sched::CpuInfo& ci = t.cpu(b.id);
        const LayoutBox& core = L.boxes[std::size_t(b.parent)];
        const LayoutBox& llc = L.boxes[std::size_t(core.parent)];
        const LayoutBox& pkg = L.boxes[std::size_t(llc.parent)];
        EXPECT_EQ(core.id, ci.core) << "CPU " << b.id;
        EXPECT_EQ(llc.id, ci.llc) << "CPU " << b.id;
        EXPECT_EQ(pkg.id, ci.package) << "CPU " << b.id;
        const RectF& r = L.cpu[std::size_t(b.id)];
        EXPECT_EQ(r.x, b.r.x);
        EXPECT_EQ(r.w, b.r.w);
    }

    for (int a = 0; a < t.nrCpus(); ++a) {
        const RectF& r = L.cpu[std::size_t(a)];
        ASSERT_GT(r.w, 0) << "CPU " << a;
        ASSERT_GT(r.h, 0) << "CPU " << a;
        ASSERT_TRUE(area.containsRect(r)) << "CPU " << a;
        for (int b = a + 1; b < t.nrCpus(); ++b) ASSERT_FALSE(r.intersects(L.cpu[std::size_t(b)])) << "CPUs " << a << " and " << b << " overlap";
    }
}

TEST(HeatmapLayout, EveryPresetNestsWithoutOverlapAtTwoSizes) {
    const auto names = sched::Topology::presetNames();
    ASSERT_FALSE(names.empty());
    for (const std::string& name : names) {
        const sched::Topology t = sched::Topology::preset(name);
        for (const RectF area : {RectF{0, 0, 900, 560}, RectF{0, 0, 300, 200}}) {
            SCOPED_TRACE(name + " at " + std::to_string(int(area.w)) + "x" + std::to_string(int(area.h)));
            checkLayout(t, area);
        }
    }
}

TEST(HeatmapLayout, OffsetAndFractionalAreasStayInside) {
    const sched::Topology t = sched::Topology::preset("epyc-9654-2s");
    checkLayout(t, RectF{13.4, 27.7, 611.3, 377.9});
    checkLayout(t, RectF{0, 0, 61, 41});  // tiny: no snapping, no gaps
}

TEST(HeatmapLayout, ThousandCpusFitIn800x500WithReadableCells) {
    sched::TopologyParams p;
    p.name = "x1024";
    p.sockets = 2;
    p.llcs_per_socket = 16;
    p.cores_per_llc = 16;
    p.threads_per_core = 2;
    const sched::Topology t = sched::Topology::fromParams(p);
    ASSERT_EQ(t.nrCpus(), 1024);
    checkLayout(t, RectF{0, 0, 800, 500});
    const HeatmapLayout L = schedlab::layoutTopology(t, 800, 500);
    EXPECT_GE(std::min(L.cellW, L.cellH), 10.0);  // sqrt(800*500/1024) = 19.8 is the gap-free bound
}

TEST(HeatmapLayout, CellsAreLargeAndNotElongated) {
    for (const std::string& name : sched::Topology::presetNames()) {
        const sched::Topology t = sched::Topology::preset(name);
        const HeatmapLayout L = schedlab::layoutTopology(t, 900, 560);
        SCOPED_TRACE(name);
        const double s = std::min(L.cellW, L.cellH);
        // At least half of the side of the largest square that could tile the area without any gaps.
        EXPECT_GE(s, 0.5 * std::sqrt(900.0 * 560.0 / t.nrCpus()));
        for (const RectF& r : L.cpu) EXPECT_LE(std::max(r.w, r.h) / std::min(r.w, r.h), 3.0);
    }
}

TEST(HeatmapLayout, SmtSiblingsShareACoreBoxOnX86Numbering) {
    // On x86 numbering CPU N and N + ncores are siblings: their boxes must be neighbours in one core box.
    const sched::Topology t = sched::Topology::preset("i7-4790");
    const HeatmapLayout L = schedlab::layoutTopology(t, 600, 400);
    for (const LayoutBox& b : L.boxes) {
        if (b.kind != LayoutBox::Kind::Core) continue;
        std::set<int> inside;
        for (int c = 0; c < t.nrCpus(); ++c)
            if (b.r.containsRect(L.cpu[std::size_t(c)])) inside.insert(c);
        EXPECT_EQ(inside, (std::set<int>{b.id, b.id + 4}));
    }
    EXPECT_TRUE(L.cpuLabels);
}

TEST(HeatmapLayout, RectHelpers) {
    const RectF a{0, 0, 10, 10}, b{10, 0, 10, 10}, c{9, 9, 5, 5};
    EXPECT_FALSE(a.intersects(b));  // shared edge only
    EXPECT_TRUE(a.intersects(c));
    EXPECT_TRUE(a.contains(10, 10));
    EXPECT_FALSE(a.contains(10.5, 5));
    EXPECT_TRUE(a.containsRect({2, 2, 8, 8}));
    EXPECT_FALSE(a.containsRect(c));
    EXPECT_EQ(a.center().x, 5);
}

// ---------------------------------------------------------------------------------------------
// Colours

void expectNear(Rgb got, Rgb want, int tol) {
    EXPECT_NEAR(got.r, want.r, tol);
    EXPECT_NEAR(got.g, want.g, tol);
    EXPECT_NEAR(got.b, want.b, tol);
}

TEST(Colormap, EndpointsMatchThePublishedTables) {
    // viridis: matplotlib _viridis_data[0] = (0.267004, 0.004874, 0.329415), [255] = (0.993248, 0.906157, 0.143936).
    expectNear(schedlab::colormapAt(Colormap::Viridis, 0), Rgb{68, 1, 84}, 2);
    expectNear(schedlab::colormapAt(Colormap::Viridis, 1), Rgb{253, 231, 37}, 2);
    // Midpoint, entry 128 = (0.127568, 0.566949, 0.550556).
    expectNear(schedlab::colormapAt(Colormap::Viridis, 128 / 255.0), Rgb{33, 145, 140}, 2);
    // cividis (Nuñez et al. 2018): first (0.0000, 0.1262, 0.3015), last (1.0000, 0.9169, 0.2731).
    expectNear(schedlab::colormapAt(Colormap::Cividis, 0), Rgb{0, 32, 77}, 2);
    expectNear(schedlab::colormapAt(Colormap::Cividis, 1), Rgb{255, 234, 70}, 2);
}

TEST(Colormap, ClampsOutOfRange) {
    for (Colormap cm : {Colormap::Viridis, Colormap::Cividis}) {
        EXPECT_EQ(schedlab::colormapAt(cm, -3), schedlab::colormapAt(cm, 0));
        EXPECT_EQ(schedlab::colormapAt(cm, 7), schedlab::colormapAt(cm, 1));
        EXPECT_EQ(schedlab::colormapAt(cm, std::nan("")), schedlab::colormapAt(cm, 0));
    }
}

TEST(Colormap, LuminanceIncreasesMonotonically) {
    for (Colormap cm : {Colormap::Viridis, Colormap::Cividis}) {
        double prev = -1;
        for (int i = 0; i <= 64; ++i) {
            const double l = schedlab::relativeLuminance(schedlab::colormapAt(cm, i / 64.0));
            EXPECT_GT(l, prev) << "colormap " << int(cm) << " at " << i << "/64";
            prev = l;
        }
    }
}

TEST(Colormap, CategoricalColoursAreDistinctOkabeIto) {
    const std::set<std::tuple<int, int, int>> okabeIto{{0, 0, 0},      {230, 159, 0}, {86, 180, 233}, {0, 158, 115},
                                                       {240, 228, 66}, {0, 114, 178}, {213, 94, 0},   {204, 121, 167}};
    std::set<std::tuple<int, int, int>> dists, kinds;
    for (auto d :
         {sched::DistClass::smt, sched::DistClass::llc, sched::DistClass::cross_llc, sched::DistClass::cross_node, sched::DistClass::cross_socket}) {
        const Rgb c = schedlab::distColor(d);
        dists.insert({c.r, c.g, c.b});
    }
    for (auto k : {sched::CpuKind::idle, sched::CpuKind::busy, sched::CpuKind::idle_by_delay}) {
        const Rgb c = schedlab::kindColor(k);
        kinds.insert({c.r, c.g, c.b});
    }
    EXPECT_EQ(dists.size(), 5u);
    EXPECT_EQ(kinds.size(), 3u);
    for (auto& c : dists) EXPECT_TRUE(okabeIto.count(c));
    for (auto& c : kinds) EXPECT_TRUE(okabeIto.count(c));
}

// ---------------------------------------------------------------------------------------------
// Arrows

sched::MigrationView mig(std::int64_t t, int from, int to, sched::MigrationCause cause, sched::DistClass d = sched::DistClass::llc) {
    sched::MigrationView m;
    m.time = t;
    m.pid = 100;
    m.from = std::int16_t(from);
    m.to = std::int16_t(to);
    m.cause = cause;
    m.dist = d;
    return m;
}

TEST(AggregateArrows, GroupsByPairAndKind) {
    using C = sched::MigrationCause;
    const std::vector<sched::MigrationView> ms{
        mig(100, 1, 2, C::wakeup),
        mig(400, 1, 2, C::wakeup),
        mig(700, 1, 2, C::fork),                             // 3 placements 1->2
        mig(800, 1, 2, C::periodic, sched::DistClass::smt),  // balance 1->2
        mig(900, 2, 1, C::wakeup),                           // the other way
        mig(950, 3, 3, C::wakeup),                           // no move: no arrow
    };
    const auto a = schedlab::aggregateArrows(ms, 1000, 1000, 10);
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].from, 1);
    EXPECT_EQ(a[0].to, 2);
    EXPECT_TRUE(a[0].wakeup);
    EXPECT_EQ(a[0].count, 3);
    EXPECT_NEAR(a[0].age, 0.3, 1e-9);  // newest member at 700 of a 1000 ns span ending at 1000
    // Equal counts: newest first.
    EXPECT_EQ(a[1].from, 2);
    EXPECT_EQ(a[1].count, 1);
    EXPECT_NEAR(a[1].age, 0.1, 1e-9);
    EXPECT_EQ(a[2].from, 1);
    EXPECT_FALSE(a[2].wakeup);
    EXPECT_EQ(a[2].dist, sched::DistClass::smt);
}

TEST(AggregateArrows, ProxyExecutionMovesAreAnArrowOfTheirOwn) {
    using C = sched::MigrationCause;
    const std::vector<sched::MigrationView> ms{mig(100, 1, 2, C::proxy), mig(200, 1, 2, C::proxy), mig(300, 1, 2, C::periodic),
                                               mig(400, 1, 2, C::wakeup)};
    const auto a = schedlab::aggregateArrows(ms, 1000, 1000, 10);
    ASSERT_EQ(a.size(), 3u);
    EXPECT_TRUE(a[0].proxy);
    EXPECT_FALSE(a[0].wakeup);
    EXPECT_EQ(a[0].count, 2);
    EXPECT_FALSE(a[1].proxy);  // the wakeup (newer) before the balance
    EXPECT_TRUE(a[1].wakeup);
    EXPECT_FALSE(a[2].proxy);
    EXPECT_FALSE(a[2].wakeup);
}

// Sleep timers get_nohz_timer_target() moved are an arrow of their own, beside a
// wakeup between the same CPUs, neither a placement nor a balance.
TEST(AggregateArrows, MovedTimersAreAnArrowOfTheirOwn) {
    using C = sched::MigrationCause;
    std::vector<sched::MigrationView> ms{mig(100, 3, 2, C::wakeup), mig(200, 3, 2, C::wakeup), mig(300, 3, 2, C::wakeup), mig(400, 3, 2, C::wakeup)};
    ms[0].timer = ms[1].timer = ms[2].timer = true;
    const auto a = schedlab::aggregateArrows(ms, 1000, 1000, 10);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_TRUE(a[0].timer);
    EXPECT_FALSE(a[0].wakeup);
    EXPECT_FALSE(a[0].proxy);
    EXPECT_EQ(a[0].count, 3);
    EXPECT_FALSE(a[1].timer);
    EXPECT_TRUE(a[1].wakeup);
    EXPECT_EQ(a[1].count, 1);
}

TEST(AggregateArrows, DropsMigrationsOutsideTheSpan) {
    using C = sched::MigrationCause;
    const std::vector<sched::MigrationView> ms{mig(0, 1, 2, C::wakeup), mig(499, 1, 2, C::wakeup), mig(500, 4, 5, C::wakeup),
                                               mig(1000, 6, 7, C::nohz), mig(1001, 8, 9, C::wakeup)};
    const auto a = schedlab::aggregateArrows(ms, 1000, 500, 10);
    ASSERT_EQ(a.size(), 2u);  // 500 (the span's edge) and 1000 stay; 0, 499 are too old, 1001 is after now
    EXPECT_EQ(a[0].from, 6);
    EXPECT_EQ(a[0].age, 0.0);
    EXPECT_EQ(a[1].from, 4);
    EXPECT_EQ(a[1].age, 1.0);
    EXPECT_TRUE(schedlab::aggregateArrows(ms, 1000, 0, 10).empty());
}

TEST(AggregateArrows, CapKeepsTheMostCountedDeterministically) {
    using C = sched::MigrationCause;
    std::vector<sched::MigrationView> ms;
    for (int i = 0; i < 5; ++i) ms.push_back(mig(10, 0, 1, C::wakeup));
    for (int i = 0; i < 3; ++i) ms.push_back(mig(10, 2, 3, C::wakeup));
    for (int to = 10; to < 20; ++to) ms.push_back(mig(10, 4, to, C::newidle));  // ten singles, same time
    const auto a = schedlab::aggregateArrows(ms, 10, 100, 4);
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a[0].count, 5);
    EXPECT_EQ(a[1].count, 3);
    // Ties (count 1, same time) by (from, to): the lowest destinations win, whatever the input order.
    EXPECT_EQ(a[2].to, 10);
    EXPECT_EQ(a[3].to, 11);
    std::reverse(ms.begin(), ms.end());
    const auto b = schedlab::aggregateArrows(ms, 10, 100, 4);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(a[i].from, b[i].from);
        EXPECT_EQ(a[i].to, b[i].to);
    }
}

// ---------------------------------------------------------------------------------------------
// Pixels

std::shared_ptr<sched::Snapshot> snapshotOn(const std::string& preset) {
    auto s = std::make_shared<sched::Snapshot>();
    s->label = "A";
    s->topo = std::make_shared<const sched::Topology>(sched::Topology::preset(preset));
    s->now = 10'000'000;
    s->cpus.resize(std::size_t(s->topo->nrCpus()));
    return s;
}

QImage grabImage(TopologyHeatmap& w) {
    QImage img = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
    img.setDevicePixelRatio(1);
    return img;
}

/// The pixel at widget coordinates (x, y), whatever the device pixel ratio of the grab.
QColor pixelAt(const QImage& img, double x, double y, double dpr) { return img.pixelColor(int(std::floor(x * dpr)), int(std::floor(y * dpr))); }

bool near(const QColor& a, const QColor& b, int tol) {
    return std::abs(a.red() - b.red()) <= tol && std::abs(a.green() - b.green()) <= tol && std::abs(a.blue() - b.blue()) <= tol;
}

// A CPU no workload's taskset mask has is drawn dimmed towards the window's background: same
// value, paler colour, closer to the background than the colour it would have.
TEST(TopologyHeatmapPixels, CpusOutsideEveryWorkloadsMaskAreDimmed) {
    auto s = snapshotOn("i7-4790");
    for (int c = 4; c < 8; ++c) s->cpus[std::size_t(c)].outside_masks = true;
    TopologyHeatmap w;
    w.resize(600, 400);
    w.setSnapshot(s);
    const QImage img = grabImage(w);
    const double dpr = w.grab().devicePixelRatio();
    sched::CpuView inside = s->cpus[5];
    inside.outside_masks = false;
    const QColor normal = w.colorFor(inside), dimmed = w.colorFor(s->cpus[5]);
    EXPECT_NE(normal, dimmed);
    const QColor bg = w.palette().color(QPalette::Window);
    auto dist = [](const QColor& a, const QColor& b) {
        return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) + std::abs(a.blue() - b.blue());
    };
    EXPECT_LT(dist(dimmed, bg), dist(normal, bg));
    const QRectF r5 = w.cpuRect(5), r1 = w.cpuRect(1);
    EXPECT_EQ(pixelAt(img, r5.left() + 3, r5.top() + 3, dpr), dimmed);
    EXPECT_EQ(pixelAt(img, r1.left() + 3, r1.top() + 3, dpr), w.colorFor(s->cpus[1]));  // an allowed CPU as always
    EXPECT_EQ(w.colorFor(s->cpus[1]), normal);                                          // both idle: the same value
}

TEST(TopologyHeatmapPixels, CpuCellHasTheColourOfItsRunqueueLengthAndTheLegendAgrees) {
    auto s = snapshotOn("i7-4790");
    s->cpus[3].nr_running = 2;
    s->cpus[3].kind = sched::CpuKind::busy;
    s->cpus[3].curr_pid = 1234;
    TopologyHeatmap w;
    w.setTitle("A: baseline");
    w.resize(600, 400);
    w.setSnapshot(s);
    const QImage img = grabImage(w);
    const double dpr = w.grab().devicePixelRatio();

    const QRectF r3 = w.cpuRect(3);
    ASSERT_FALSE(r3.isEmpty());
    EXPECT_EQ(w.cpuAt(r3.center()), 3);
    const QColor want = w.colorFor(s->cpus[3]);
    EXPECT_EQ(want, QColor(w.colorFor(s->cpus[3])));
    // Inset 3 px from the top-left corner: inside the cell, away from the centred CPU number.
    EXPECT_EQ(pixelAt(img, r3.left() + 3, r3.top() + 3, dpr), want);
    EXPECT_EQ(pixelAt(img, r3.right() - 4, r3.bottom() - 4, dpr), want);
    // An idle CPU has the colour of 0, different from CPU 3's.
    const QRectF r0 = w.cpuRect(0);
    EXPECT_EQ(pixelAt(img, r0.left() + 3, r0.top() + 3, dpr), w.colorFor(s->cpus[0]));
    EXPECT_NE(w.colorFor(s->cpus[0]), want);

    // The legend's colour bar at the value 2 shows the same colour.
    const QRectF bar = w.legendRect();
    ASSERT_FALSE(bar.isEmpty());
    ASSERT_TRUE(QRectF(w.rect()).contains(bar));
    const double x2 = w.legendValueToX(2);
    EXPECT_GT(x2, bar.left());
    EXPECT_LT(x2, bar.right());
    EXPECT_TRUE(near(pixelAt(img, x2, bar.center().y(), dpr), want, 2))
        << "legend " << pixelAt(img, x2, bar.center().y(), dpr).name().toStdString() << " vs cell " << want.name().toStdString();
    // ... and the bar's left end matches the idle CPUs.
    EXPECT_TRUE(near(pixelAt(img, bar.left() + 0.5, bar.center().y(), dpr), w.colorFor(s->cpus[0]), 3));

    // Utilisation and state metrics recolour the cell the same way.
    s->cpus[3].util = 512;
    w.setMetric(TopologyHeatmap::Metric::Utilisation);
    w.setSnapshot(s);
    QImage u = grabImage(w);
    EXPECT_EQ(pixelAt(u, r3.left() + 3, r3.top() + 3, dpr),
              QColor(schedlab::colormapAt(Colormap::Viridis, 0.5).r, schedlab::colormapAt(Colormap::Viridis, 0.5).g,
                     schedlab::colormapAt(Colormap::Viridis, 0.5).b));
    EXPECT_TRUE(near(pixelAt(u, w.legendValueToX(512), w.legendRect().center().y(), dpr), w.colorFor(s->cpus[3]), 2));
    w.setMetric(TopologyHeatmap::Metric::State);
    u = grabImage(w);
    const Rgb busy = schedlab::kindColor(sched::CpuKind::busy);
    EXPECT_EQ(pixelAt(u, r3.left() + 3, r3.top() + 3, dpr), QColor(busy.r, busy.g, busy.b));
    EXPECT_EQ(pixelAt(u, w.legendValueToX(double(int(sched::CpuKind::busy))), w.legendRect().center().y(), dpr), QColor(busy.r, busy.g, busy.b));
}

TEST(TopologyHeatmapPixels, ScaleMaxSharesTheRqLengthScale) {
    auto s = snapshotOn("i7-4790");
    s->cpus[5].nr_running = 2;
    TopologyHeatmap w;
    w.setSnapshot(s);
    const QColor at4 = w.colorFor(s->cpus[5]);
    w.setScaleMax(2);
    EXPECT_EQ(w.colorFor(s->cpus[5]), QColor(253, 231, 37));  // top of viridis
    EXPECT_NE(at4, w.colorFor(s->cpus[5]));
}

/// Pixels near the straight segment between the two CPU centres (t in [0.35, 0.65], +-4 px
/// sideways) that have the colour `c`.
int pixelsOfColourAlong(const QImage& img, QPointF a, QPointF b, const QColor& c, double dpr) {
    const QPointF d = b - a;
    const double len = std::hypot(d.x(), d.y());
    const QPointF n(-d.y() / len, d.x() / len);
    int hits = 0;
    for (double t = 0.35; t <= 0.65; t += 0.05)
        for (int k = -4; k <= 4; ++k) {
            const QPointF p = a + d * t + n * double(k);
            if (near(pixelAt(img, p.x(), p.y(), dpr), c, 24)) ++hits;
        }
    return hits;
}

// At the width the window gives each heatmap of an A/B pair, the full "solid wakeup, hollow
// balance, dashed timer" note does not fit; moved timers still get their key: a dashed sample
// and "timer" right of the distance classes, the colour bar shrinking for it (not below 110 px).
TEST(TopologyHeatmapPixels, TimerArrowsGetTheirKeyAtTheSideBySideWidth) {
    auto plain = snapshotOn("qemu-2s2c2t");
    plain->migrations.push_back(mig(plain->now - 1000, 0, 2, sched::MigrationCause::wakeup, sched::DistClass::llc));
    auto timed = std::make_shared<sched::Snapshot>(*plain);
    sched::MigrationView t = mig(timed->now - 500, 0, 1, sched::MigrationCause::wakeup, sched::DistClass::smt);
    t.timer = true;
    timed->migrations.push_back(t);
    TopologyHeatmap a, b;
    a.resize(620, 400);  // the window's default: 1600 px wide, each heatmap of the pair about 620
    b.resize(620, 400);
    a.setSnapshot(plain);
    b.setSnapshot(timed);
    const QImage ia = grabImage(a), ib = grabImage(b);
    const double dpr = a.grab().devicePixelRatio();
    const QRectF barA = a.legendRect(), barB = b.legendRect();
    ASSERT_FALSE(barA.isEmpty());
    ASSERT_FALSE(barB.isEmpty());
    EXPECT_LT(barB.width(), barA.width()) << "the bar gives the timer key its room";
    EXPECT_GE(barB.width(), 110.0);
    // The key moves left by the timer sample's width: the x-socket swatch's last pixel.
    const Rgb xs = schedlab::distColor(sched::DistClass::cross_socket);
    auto lastSwatchX = [&](const QImage& img) {
        double last = -1;
        for (double x = 0; x < a.width(); x += 1)
            if (near(pixelAt(img, x, barA.center().y(), dpr), QColor(xs.r, xs.g, xs.b), 30)) last = x;
        return last;
    };
    const double xa = lastSwatchX(ia), xb = lastSwatchX(ib);
    ASSERT_GT(xa, 0);
    ASSERT_GT(xb, 0);
    EXPECT_LT(xb, xa - 30) << "no room made for the timer key";
    // ... and what is drawn in that room is ink: the dashed sample and "timer".
    const QColor bg = ia.pixelColor(int((a.width() - 1) * dpr), int((barA.bottom() + 4) * dpr));
    int ink = 0;
    for (double x = a.width() - 50; x < a.width() - 1; x += 1)
        for (double y = barA.top(); y <= barA.bottom(); y += 1) ink += !near(pixelAt(ib, x, y, dpr), bg, 60);
    EXPECT_GT(ink, 20);
    // Both redraw when the timer arrows come and go (the legend is cached with the cells).
    b.setSnapshot(plain);
    const QImage ib2 = grabImage(b);
    EXPECT_EQ(b.legendRect(), barA);
    EXPECT_EQ(pixelAt(ib2, a.width() - 20, barA.center().y(), dpr), pixelAt(ia, a.width() - 20, barA.center().y(), dpr));
}

TEST(TopologyHeatmapPixels, MigrationArrowIsDrawnAlongItsSegmentAndCanBeHidden) {
    auto s = snapshotOn("i7-4790");
    // CPU 1 and CPU 6 are different cores of the one LLC on i7-4790 (siblings are N and N + 4).
    ASSERT_EQ(s->topo->cpu(1).llc, s->topo->cpu(6).llc);
    ASSERT_NE(s->topo->cpu(1).core, s->topo->cpu(6).core);
    s->migrations.push_back(mig(s->now - 1000, 1, 6, sched::MigrationCause::wakeup, sched::DistClass::llc));
    TopologyHeatmap w;
    w.resize(600, 400);
    w.setSnapshot(s);
    const double dpr = w.grab().devicePixelRatio();
    const Rgb c = schedlab::distColor(sched::DistClass::llc);
    const QColor arrow(c.r, c.g, c.b);
    const QPointF a = w.cpuCenter(1), b = w.cpuCenter(6);
    ASSERT_GT(std::hypot(a.x() - b.x(), a.y() - b.y()), 40);

    EXPECT_GE(pixelsOfColourAlong(grabImage(w), a, b, arrow, dpr), 7) << "arrow missing";
    w.setShowArrows(false);
    EXPECT_EQ(pixelsOfColourAlong(grabImage(w), a, b, arrow, dpr), 0) << "arrow drawn although hidden";
    w.setShowArrows(true);
    w.setArrowSpanNs(500);  // the migration is 1000 ns old: outside the span
    EXPECT_EQ(pixelsOfColourAlong(grabImage(w), a, b, arrow, dpr), 0) << "arrow drawn although too old";
}

/// A shown heatmap renders each snapshot on the thread pool and keeps a layer of cells it updates
/// cell by cell. Frame after frame, what it shows must equal a plain synchronous paint of the same
/// state: changed cells recoloured, unchanged ones kept, arrows and selection included.
TEST(TopologyHeatmapPixels, PooledIncrementalFramesEqualAPlainPaint) {
    TopologyHeatmap pooled;
    pooled.resize(600, 400);
    pooled.setTitle("A: baseline");
    pooled.show();  // only a visible heatmap renders on the pool
    ASSERT_TRUE(pooled.isVisible());
    // One machine for all frames, as in a run (a new topology object would reset every cache).
    const auto topo = snapshotOn("x86-20c40t")->topo;  // 40 CPUs, 2 packages: every cell numbered
    auto frame = [&topo](int k) {
        auto s = snapshotOn("x86-20c40t");
        s->topo = topo;
        for (std::size_t c = 0; c < s->cpus.size(); ++c) s->cpus[c].nr_running = int((c * 7 + std::size_t(k) * 3) % 5);
        s->cpus[std::size_t(k)].claimed = true;
        for (int i = 0; i <= k; ++i)
            s->migrations.push_back(mig(s->now - 1000 * (i + 1), i, 39 - i, sched::MigrationCause::wakeup, sched::DistClass::cross_llc));
        s->migrations.push_back(mig(s->now - 500, 30, 3, sched::MigrationCause::periodic, sched::DistClass::cross_llc));
        return s;
    };
    int changed = 0;
    QImage previous;
    for (int k = 0; k < 4; ++k) {
        const auto s = frame(k % 3);  // back to an earlier frame too: cells must change back
        pooled.setSnapshot(s);
        // The reference: a new heatmap, painted synchronously from scratch (no earlier frame to reuse).
        TopologyHeatmap fresh;
        fresh.setAsyncRender(false);
        fresh.resize(600, 400);
        fresh.setTitle("A: baseline");
        fresh.setSnapshot(s);
        if (k == 2) pooled.setSelection({5, 6});
        if (k >= 2) fresh.setSelection({5, 6});
        const QImage a = grabImage(pooled), b = grabImage(fresh);
        ASSERT_EQ(a.size(), b.size());
        EXPECT_TRUE(a == b) << "frame " << k << ": pooled incremental frame differs from a fresh paint";
        if (!previous.isNull() && previous != a) ++changed;
        previous = a;
        // A query right after setSnapshot waits for the pooled render and sees the new arrows.
        EXPECT_EQ(pooled.arrowAt(pooled.cpuCenter(0) + (pooled.cpuCenter(39) - pooled.cpuCenter(0)) * 0.4).to, 39);
    }
    EXPECT_EQ(changed, 3);  // every frame looked different from the one before
    EXPECT_GT(pooled.lastPaintMs(), 0.0);
}

TEST(TopologyHeatmap, ClickSelectsCtrlTogglesShiftExtends) {
    auto s = snapshotOn("i7-4790");
    TopologyHeatmap w;
    w.resize(600, 400);
    w.setSnapshot(s);
    QList<int> last;
    int emitted = 0;
    QObject::connect(&w, &TopologyHeatmap::selectionChanged, [&](const QList<int>& cpus) {
        last = cpus;
        ++emitted;
    });
    auto click = [&](int cpu, Qt::KeyboardModifiers mods) {
        const QPointF p = w.cpuCenter(cpu);
        QMouseEvent e(QEvent::MouseButtonPress, p, w.mapToGlobal(p), Qt::LeftButton, Qt::LeftButton, mods);
        QApplication::sendEvent(&w, &e);
    };
    click(2, Qt::NoModifier);
    EXPECT_EQ(last, (QList<int>{2}));
    click(5, Qt::ControlModifier);
    EXPECT_EQ(last, (QList<int>{2, 5}));
    click(2, Qt::ControlModifier);
    EXPECT_EQ(last, (QList<int>{5}));
    click(7, Qt::ShiftModifier);
    EXPECT_EQ(last, (QList<int>{2, 3, 4, 5, 6, 7}));  // by CPU number from the last clicked CPU (2)
    EXPECT_EQ(emitted, 4);
    w.setSelection({1});
    EXPECT_EQ(w.selection(), (QList<int>{1}));
    EXPECT_EQ(emitted, 4);  // programmatic changes do not emit
}

/// i7-4790 at 600x400 with one wakeup migration 1 -> 6 (different cores of the one LLC).
std::shared_ptr<sched::Snapshot> snapshotWithArrow16(int count = 1) {
    auto s = snapshotOn("i7-4790");
    for (int i = 0; i < count; ++i) s->migrations.push_back(mig(s->now - 1000 - i, 1, 6, sched::MigrationCause::wakeup, sched::DistClass::llc));
    return s;
}

/// Unit normal of the segment a -> b, on the side arrows are pushed to when both directions exist.
QPointF normalOf(QPointF a, QPointF b) {
    const QPointF d = b - a;
    const double len = std::hypot(d.x(), d.y());
    return {-d.y() / len, d.x() / len};
}

double distanceToSegment(QPointF p, QPointF a, QPointF b) {
    const QPointF ab = b - a;
    const double t = std::clamp(QPointF::dotProduct(p - a, ab) / QPointF::dotProduct(ab, ab), 0.0, 1.0);
    const QPointF q = a + ab * t - p;
    return std::hypot(q.x(), q.y());
}

void click(TopologyHeatmap& w, QPointF p) {
    QMouseEvent e(QEvent::MouseButtonPress, p, w.mapToGlobal(p), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &e);
}

TEST(TopologyHeatmap, ArrowAtHitsTheShaftOnlyAndNothingWhenHidden) {
    auto s = snapshotWithArrow16();
    TopologyHeatmap w;
    w.resize(600, 400);
    w.setSnapshot(s);
    const QPointF a = w.cpuCenter(1), b = w.cpuCenter(6);
    ASSERT_GT(std::hypot(a.x() - b.x(), a.y() - b.y()), 40);
    const QPointF mid = (a + b) / 2, n = normalOf(a, b);

    const TopologyHeatmap::ArrowHit hit = w.arrowAt(mid);
    EXPECT_EQ(hit.from, 1);
    EXPECT_EQ(hit.to, 6);
    EXPECT_TRUE(hit.wakeup);
    EXPECT_EQ(hit.count, 1);
    EXPECT_EQ(w.arrowAt(mid + n * 30).from, -1);
    EXPECT_EQ(w.arrowAt(mid - n * 30).from, -1);
    // Along the shaft too, not only at its middle; nowhere near it, nothing.
    EXPECT_EQ(w.arrowAt(a + (b - a) * 0.2).from, 1);
    EXPECT_EQ(w.arrowAt(QPointF(2, 2)).from, -1);

    w.setShowArrows(false);
    EXPECT_EQ(w.arrowAt(mid).from, -1);
    w.setShowArrows(true);
    w.setArrowSpanNs(500);  // the migration is 1000 ns old: no arrow
    EXPECT_EQ(w.arrowAt(mid).from, -1);
}

TEST(TopologyHeatmap, ArrowAtFollowsTheSidewaysOffsetOfTwoWayPairs) {
    auto s = snapshotWithArrow16();
    s->migrations.push_back(mig(s->now - 2000, 6, 1, sched::MigrationCause::wakeup, sched::DistClass::llc));
    TopologyHeatmap w;
    w.resize(600, 400);
    w.setSnapshot(s);
    const QPointF a = w.cpuCenter(1), b = w.cpuCenter(6);
    const QPointF mid = (a + b) / 2, n = normalOf(a, b);
    // Exact hits (no tolerance) across the pair: 1 -> 6 is pushed to +n, 6 -> 1 to -n, as painted.
    int forward = 0, backward = 0;
    for (double k = -6; k <= 6; k += 0.25) {
        const TopologyHeatmap::ArrowHit h = w.arrowAt(mid + n * k, 0);
        if (h.from == 1) {
            ++forward;
            EXPECT_GT(k, 0) << "1 -> 6 hit on the wrong side at " << k;
        } else if (h.from == 6) {
            ++backward;
            EXPECT_LT(k, 0) << "6 -> 1 hit on the wrong side at " << k;
        }
    }
    EXPECT_GT(forward, 0);
    EXPECT_GT(backward, 0);
}

TEST(TopologyHeatmap, ClickOnAnArrowEmitsArrowClickedAndKeepsTheSelection) {
    auto s = snapshotWithArrow16();
    TopologyHeatmap w;
    w.resize(600, 400);
    w.setSnapshot(s);
    w.setSelection({2});
    int arrowClicks = 0, selectionChanges = 0;
    int gotFrom = -1, gotTo = -1;
    bool gotWakeup = false;
    QObject::connect(&w, &TopologyHeatmap::arrowClicked, [&](int from, int to, bool wakeup) {
        ++arrowClicks;
        gotFrom = from;
        gotTo = to;
        gotWakeup = wakeup;
    });
    QObject::connect(&w, &TopologyHeatmap::selectionChanged, [&](const QList<int>&) { ++selectionChanges; });

    const QPointF a = w.cpuCenter(1), b = w.cpuCenter(6);
    click(w, (a + b) / 2);
    EXPECT_EQ(arrowClicks, 1);
    EXPECT_EQ(gotFrom, 1);
    EXPECT_EQ(gotTo, 6);
    EXPECT_TRUE(gotWakeup);
    EXPECT_EQ(selectionChanges, 0);
    EXPECT_EQ(w.selection(), (QList<int>{2}));

    // A CPU whose centre is well away from the shaft: a click there selects it as before.
    int far = -1;
    for (int c = 0; c < s->topo->nrCpus() && far < 0; ++c)
        if (c != 1 && c != 6 && c != 2 && distanceToSegment(w.cpuCenter(c), a, b) > 20) far = c;
    ASSERT_GE(far, 0);
    ASSERT_EQ(w.arrowAt(w.cpuCenter(far), 3).from, -1);
    click(w, w.cpuCenter(far));
    EXPECT_EQ(w.selection(), (QList<int>{far}));
    EXPECT_EQ(selectionChanges, 1);
    EXPECT_EQ(arrowClicks, 1);
}

TEST(TopologyHeatmap, TooltipsDescribeTheCpuAndTheArrow) {
    auto s = snapshotWithArrow16(12);
    s->migrations.push_back(mig(s->now - 3000, 2, 5, sched::MigrationCause::periodic, sched::DistClass::llc));
    s->cpus[3].nr_running = 3;
    s->cpus[3].curr_pid = 1234;
    s->cpus[3].kind = sched::CpuKind::busy;
    TopologyHeatmap w;
    w.resize(600, 400);
    w.setSnapshot(s);

    const QString cpuTip = w.tooltipFor(3);
    EXPECT_TRUE(cpuTip.startsWith("CPU 3 ")) << cpuTip.toStdString();
    EXPECT_TRUE(cpuTip.contains("nr_running: 3")) << cpuTip.toStdString();
    EXPECT_TRUE(cpuTip.contains("pid 1234")) << cpuTip.toStdString();
    EXPECT_TRUE(w.tooltipFor(99).isEmpty());

    const QPointF mid = (w.cpuCenter(1) + w.cpuCenter(6)) / 2;
    const TopologyHeatmap::ArrowHit hit = w.arrowAt(mid);
    ASSERT_EQ(hit.from, 1);
    EXPECT_EQ(hit.count, 12);
    EXPECT_EQ(w.arrowTooltip(hit), QString::fromUtf8("12 wakeup migrations CPU 1 \u2192 CPU 6 (same LLC) in the last 5.0 ms"));
    EXPECT_EQ(w.arrowTooltip({2, 5, false, false, 1}),
              QString::fromUtf8("1 load-balance migration CPU 2 \u2192 CPU 5 (same LLC) in the last 5.0 ms"));
    EXPECT_TRUE(w.arrowTooltip({}).isEmpty());
    EXPECT_TRUE(w.arrowTooltip({2, 5, false, true, 3}).startsWith(QStringLiteral("3 proxy-execution migrations CPU 2")));

    // The ToolTip event: the arrow's text over the arrow, the CPU's over a CPU away from arrows.
    w.show();
    QHelpEvent overArrow(QEvent::ToolTip, mid.toPoint(), w.mapToGlobal(mid.toPoint()));
    QApplication::sendEvent(&w, &overArrow);
    EXPECT_EQ(QToolTip::text(), w.arrowTooltip(hit));
    int far = -1;
    for (int c = 0; c < s->topo->nrCpus() && far < 0; ++c)
        if (w.arrowAt(w.cpuCenter(c), 6).from < 0) far = c;
    ASSERT_GE(far, 0);
    const QPoint pc = w.cpuCenter(far).toPoint();
    QHelpEvent overCpu(QEvent::ToolTip, pc, w.mapToGlobal(pc));
    QApplication::sendEvent(&w, &overCpu);
    EXPECT_EQ(QToolTip::text(), w.tooltipFor(far));
    QToolTip::hideText();
}

TEST(TopologyHeatmap, RenderIntoAnyTargetAndHighlightDoesNotChangeCellCentres) {
    auto s = snapshotOn("bergamo-9754-2s");
    TopologyHeatmap w;
    w.resize(800, 500);
    w.setSnapshot(s);
    const QPointF c100 = w.cpuCenter(100);
    w.setHighlight({3, 7, 100});
    EXPECT_EQ(w.highlightTarget(), 100);
    w.setHighlightTarget(7);
    EXPECT_EQ(w.cpuCenter(100), c100);
    QImage img(1200, 800, QImage::Format_RGB32);
    img.fill(Qt::magenta);
    QPainter p(&img);
    w.render(p, img.rect());
    p.end();
    // Painted over the whole target: no magenta left.
    int magenta = 0;
    for (int y = 0; y < img.height(); y += 7)
        for (int x = 0; x < img.width(); x += 7)
            if (img.pixelColor(x, y) == QColor(Qt::magenta)) ++magenta;
    EXPECT_EQ(magenta, 0);
    EXPECT_EQ(w.cpuAt(QPointF(-5, -5)), -1);
}

TEST(TopologyHeatmap, TheKernelsChoiceGetsASkyBlueFrameBesideSchedlabsOrangeOne) {
    auto s = snapshotOn("i7-4790");
    TopologyHeatmap w;
    w.resize(800, 500);
    w.setSnapshot(s);
    w.setHighlight({1, 2});  // schedlab examined 1 then chose 2
    w.setKernelChoice(5);
    EXPECT_EQ(w.kernelChoice(), 5);
    const QColor sky(86, 180, 233), orange(230, 159, 0);
    auto frameHas = [&](const QImage& img, int cpu, const QColor& c) {
        const QRectF r = w.cpuRect(cpu);
        for (int x = int(r.left()) + 1; x < int(r.right()); ++x)  // along the box's top edge, inside it
            for (int y = int(r.top()); y <= int(r.top()) + 3; ++y)
                if (img.pixelColor(x, y) == c) return true;
        return false;
    };
    QImage img = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
    EXPECT_TRUE(frameHas(img, 5, sky));
    EXPECT_FALSE(frameHas(img, 5, orange));
    EXPECT_TRUE(frameHas(img, 2, orange));
    EXPECT_FALSE(frameHas(img, 2, sky));
    EXPECT_FALSE(frameHas(img, 3, sky));
    // The same CPU for both: both frames, the kernel's inside.
    w.setKernelChoice(2);
    img = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
    EXPECT_TRUE(frameHas(img, 2, orange));
    EXPECT_TRUE(frameHas(img, 2, sky) || [&] {
        const QRectF r = w.cpuRect(2).adjusted(4, 4, -4, -4);
        for (int x = int(r.left()); x < int(r.right()); ++x)
            for (int y = int(r.top()); y <= int(r.top()) + 3; ++y)
                if (img.pixelColor(x, y) == sky) return true;
        return false;
    }());
    EXPECT_FALSE(frameHas(img, 5, sky));
    w.setKernelChoice(-1);
    img = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
    EXPECT_FALSE(frameHas(img, 2, sky));
}

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
