// SPDX-License-Identifier: GPL-2.0-or-later
// widgets_plots_test.cpp: RqPlot, LatencyPlot and CountersPlot on the offscreen platform: data they plot, pixels.
// Core headers before any Qt header: engine.h has a member named emit, which Qt defines as a macro.
#include "util/histogram.h"
#include "sim/metrics.h"
#include "sim/simulation.h"

#include "counters_plot.h"
#include "delta_table.h"
#include "latency_plot.h"
#include "rq_plot.h"

#include <QApplication>
#include <QTableWidget>
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

using schedlab::CountersPlot;
using schedlab::LatencyPlot;
using schedlab::RqPlot;

namespace {

std::shared_ptr<sched::Snapshot> latencySnapshot(const std::string& label, std::vector<std::pair<std::int64_t, std::uint64_t>> values) {
    auto s = std::make_shared<sched::Snapshot>();
    s->label = label;
    s->knobs = label == "A" ? "baseline" : "sis-debounce";
    for (auto [v, n] : values) s->wakeup_latency.record(v, n);
    return s;
}

/// `rows` samples 1 ms apart of `ncpus` CPUs, nr_running from `len(row, cpu)`.
template <class F>
std::shared_ptr<sched::Snapshot> rqSnapshot(std::size_t rows, std::size_t ncpus, F len) {
    auto s = std::make_shared<sched::Snapshot>();
    s->cpus.resize(ncpus);
    s->sample_period_ns = 1000000;
    for (std::size_t i = 0; i < rows; ++i) {
        s->sample_t.push_back(std::int64_t(i) * s->sample_period_ns);
        for (std::size_t c = 0; c < ncpus; ++c) s->sample_len.push_back(std::uint16_t(len(i, c)));
    }
    s->now = std::int64_t(rows) * s->sample_period_ns;
    return s;
}

/// `c` drawn with alpha over white, as the plot's fills appear.
QColor overWhite(const QColor& c) {
    const double a = c.alphaF();
    auto mix = [a](int v) { return int(std::lround(a * v + (1 - a) * 255)); };
    return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

bool near(const QColor& x, const QColor& y, int tol = 4) {
    return std::abs(x.red() - y.red()) <= tol && std::abs(x.green() - y.green()) <= tol && std::abs(x.blue() - y.blue()) <= tol;
}

QCPBars* bars(QCustomPlot* plot, int side) { return qobject_cast<QCPBars*>(plot->plottable(side)); }

/// Key of the category labelled `name` on the text ticker of `plot`'s bars' key axis, or NaN.
double categoryKey(QCustomPlot* plot, const QString& name) {
    QCPBars* b = qobject_cast<QCPBars*>(plot->plottable(0));
    if (!b) return std::nan("");
    auto ticker = qSharedPointerCast<QCPAxisTickerText>(b->keyAxis()->ticker());
    if (!ticker) return std::nan("");
    for (auto it = ticker->ticks().cbegin(); it != ticker->ticks().cend(); ++it)
        if (it.value() == name) return it.key();
    return std::nan("");
}

double barValue(QCustomPlot* plot, int side, const QString& name) {
    const double key = categoryKey(plot, name);
    QCPBars* b = bars(plot, side);
    if (!b || std::isnan(key)) return -1;
    auto it = b->data()->findBegin(key, false);
    return it != b->data()->constEnd() && it->key == key ? it->value : -1;
}

}  // namespace

namespace {

/// A side with `points` outcome points every 10 ms up to `endMs`, steady from `fromMs` (-1: not yet).
sched::Snapshot sideWithOutcome(int endMs, int points, int fromMs, double rate) {
    sched::Snapshot s;
    s.outcome_unit = "messages/s";
    s.outcome_period_ns = 10000000;
    for (int i = points - 1; i >= 0; --i) {
        sched::OutcomePoint p;
        p.t = std::int64_t(endMs - 10 * i) * 1000000;
        p.rate = float(rate);
        p.busy_cpus = 4;
        s.outcome.push_back(p);
    }
    if (fromMs >= 0) {
        s.steady.reached = true;
        s.steady.from_ns = std::int64_t(fromMs) * 1000000;
    }
    return s;
}

}  // namespace

// The A/B table counts from t = 0 until both sides are steady over its whole last window, then
// shows that window's rates; a side winding down, or both finished, bring the totals back.
TEST(DeltaTable, TheSteadyModeShowsTheWindowOnlyWhileBothSidesAreSteadyOverIt) {
    using schedlab::deltaShowsWindow;
    using schedlab::DeltaSince;
    const sched::Snapshot a = sideWithOutcome(500, 50, 300, 1e6), b = sideWithOutcome(500, 50, 350, 2e6);
    EXPECT_TRUE(deltaShowsWindow(a, b, DeltaSince::steady));
    EXPECT_FALSE(deltaShowsWindow(a, b, DeltaSince::start));
    EXPECT_FALSE(deltaShowsWindow(a, b, DeltaSince::steady, true)) << "finished: the workloads' final figures";
    EXPECT_TRUE(deltaShowsWindow(a, b, DeltaSince::window, true));
    // B settled inside the window (at 450 ms; the window is 400-500 ms): not steady over it.
    EXPECT_FALSE(deltaShowsWindow(a, sideWithOutcome(500, 50, 450, 2e6), DeltaSince::steady));
    EXPECT_TRUE(deltaShowsWindow(a, sideWithOutcome(500, 50, 450, 2e6), DeltaSince::window));
    // Not steady at all, or winding down.
    EXPECT_FALSE(deltaShowsWindow(a, sideWithOutcome(500, 50, -1, 2e6), DeltaSince::steady));
    sched::Snapshot down = b;
    down.steady.wind_down_ns = 480000000;
    EXPECT_FALSE(deltaShowsWindow(a, down, DeltaSince::steady));
    // Fewer than 10 points, or the two sides at different times: totals whatever is asked.
    EXPECT_FALSE(deltaShowsWindow(sideWithOutcome(90, 9, 0, 1e6), sideWithOutcome(90, 9, 0, 1e6), DeltaSince::window));
    EXPECT_FALSE(deltaShowsWindow(a, sideWithOutcome(510, 51, 350, 2e6), DeltaSince::window));
    // The table itself: the window's start in the "since" column, B's rate +100 %.
    const QString t = schedlab::deltaTable(a, b, false, false);
    EXPECT_TRUE(t.contains(QStringLiteral("t = 0.400 s"))) << t.toStdString();
    EXPECT_TRUE(t.contains(QStringLiteral("+100.0%"))) << t.toStdString();
    EXPECT_TRUE(schedlab::deltaTable(a, b, false, false, DeltaSince::start).contains(QStringLiteral("t = 0 ")));
}

TEST(LatencyPlotBins, TwoValuesFallInTheirDecadesWithHalfEach) {
    sched::LatencyHistogram h;
    h.record(5000, 1000);    // 5 µs
    h.record(500000, 1000);  // 500 µs
    const auto bins = LatencyPlot::displayBins(h, 8);
    ASSERT_EQ(bins.size(), 2u);
    const double step = std::pow(10.0, 1.0 / 8);
    EXPECT_LE(bins[0].first, 5.0);
    EXPECT_GT(bins[0].first * step, 5.0);
    EXPECT_LE(bins[1].first, 500.0);
    EXPECT_GT(bins[1].first * step, 500.0);
    EXPECT_NEAR(bins[0].second, 50.0, 1e-9);
    EXPECT_NEAR(bins[1].second, 50.0, 1e-9);
}

TEST(LatencyPlotBins, SpreadValuesSumToHundredAndEdgesAreOnTheGrid) {
    sched::LatencyHistogram h;
    for (int i = 0; i < 5000; ++i) h.record(std::int64_t(100 * std::pow(1.003, i)));  // 100 ns .. ~3 s
    const auto bins = LatencyPlot::displayBins(h, 8);
    ASSERT_GT(bins.size(), 40u);
    double sum = 0;
    for (std::size_t i = 0; i < bins.size(); ++i) {
        sum += bins[i].second;
        const double k = std::log10(bins[i].first) * 8;
        EXPECT_NEAR(k, std::round(k), 1e-9) << "edge " << bins[i].first;
        if (i > 0) {
            EXPECT_GT(bins[i].first, bins[i - 1].first);
        }
    }
    EXPECT_NEAR(sum, 100.0, 1e-9);
    EXPECT_TRUE(LatencyPlot::displayBins(sched::LatencyHistogram{}, 8).empty());
}

TEST(LatencyPlotPixels, BarsAppearAtTheirLatencyInTheirColour) {
    LatencyPlot w;
    w.resize(800, 400);
    w.setSnapshots(latencySnapshot("A", {{115000, 1000}}), latencySnapshot("B", {{30000, 1000}}));
    w.show();
    w.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const QImage img = w.plot()->grab().toImage();
    ASSERT_EQ(w.plot()->graphCount(), 2);
    const QColor colourA = overWhite(w.plot()->graph(0)->brush().color());
    const QColor colourB = overWhite(w.plot()->graph(1)->brush().color());
    ASSERT_FALSE(near(colourA, colourB));
    auto* x = w.plot()->xAxis;
    const int y = int(w.plot()->yAxis->coordToPixel(0)) - 6;
    const QColor at115 = img.pixelColor(int(x->coordToPixel(115)), y);
    const QColor at30 = img.pixelColor(int(x->coordToPixel(30)), y);
    const QColor at3 = img.pixelColor(int(x->coordToPixel(3)), y);
    EXPECT_TRUE(near(at115, colourA)) << at115.name().toStdString() << " vs " << colourA.name().toStdString();
    EXPECT_TRUE(near(at30, colourB)) << at30.name().toStdString() << " vs " << colourB.name().toStdString();
    EXPECT_FALSE(near(at3, colourA)) << at3.name().toStdString();
    EXPECT_FALSE(near(at3, colourB)) << at3.name().toStdString();
}

TEST(LatencyPlotTable, ShowsPercentilesAndChange) {
    LatencyPlot w;
    auto a = latencySnapshot("A", {{10000, 500}, {40000, 500}});
    auto b = latencySnapshot("B", {{20000, 1000}});
    w.setSnapshots(a, b);
    QTableWidget* t = w.table();
    ASSERT_EQ(t->rowCount(), 8);
    EXPECT_EQ(t->verticalHeaderItem(0)->text(), "p50");
    EXPECT_EQ(t->verticalHeaderItem(4)->text(), "p99");
    EXPECT_EQ(t->verticalHeaderItem(7)->text(), "max");
    EXPECT_EQ(t->item(0, 0)->text(), LatencyPlot::formatUs(a->wakeup_latency.percentile(50)));
    EXPECT_EQ(t->item(0, 0)->text(), "10.0");
    EXPECT_EQ(t->item(4, 0)->text(), "40.0");  // clamped to the exact max
    EXPECT_EQ(t->item(7, 0)->text(), "40.0");
    EXPECT_EQ(t->item(0, 1)->text(), "20.0");
    EXPECT_EQ(t->item(4, 1)->text(), "20.0");
    const double p50a = double(a->wakeup_latency.percentile(50));
    EXPECT_EQ(t->item(0, 2)->text(), QString::asprintf("%+.1f%%", 100.0 * (20000 - p50a) / p50a));
    EXPECT_EQ(t->item(4, 2)->text(), "-50.0%");
    EXPECT_FALSE(t->isColumnHidden(1));
    EXPECT_FALSE(t->isColumnHidden(2));

    w.setSnapshots(a, nullptr);
    EXPECT_EQ(t->item(4, 0)->text(), "40.0");
    EXPECT_TRUE(t->isColumnHidden(1));
    EXPECT_TRUE(t->isColumnHidden(2));
}

TEST(RqPlotData, MapAndLineShowTheBusyCpu) {
    RqPlot w;
    w.resize(900, 500);
    w.setSelectedCpus({2});
    w.setSnapshot(rqSnapshot(100, 4, [](std::size_t, std::size_t cpu) { return cpu == 2 ? 3 : 0; }));
    w.linePlot()->replot(QCustomPlot::rpImmediateRefresh);
    w.mapPlot()->replot(QCustomPlot::rpImmediateRefresh);

    auto* map = qobject_cast<QCPColorMap*>(w.mapPlot()->plottable(0));
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(map->data()->valueSize(), 4);
    EXPECT_EQ(map->data()->data(50.5, 2), 3.0);
    EXPECT_EQ(map->data()->data(50.5, 0), 0.0);
    EXPECT_EQ(map->data()->data(50.5, 3), 0.0);

    ASSERT_EQ(w.linePlot()->graphCount(), 1);
    QCPGraph* g = w.linePlot()->graph(0);
    EXPECT_EQ(g->name(), "CPU 2");
    // One point per row (100 rows fit in the pixel width) plus the point closing the last step.
    ASSERT_EQ(g->dataCount(), 101);
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) EXPECT_EQ(it->value, 3.0);
    EXPECT_DOUBLE_EQ(g->data()->constBegin()->key, 0.0);
    EXPECT_DOUBLE_EQ((g->data()->constEnd() - 1)->key, 100.0);

    w.setSelectedCpus({});
    ASSERT_EQ(w.linePlot()->graphCount(), 1);
    EXPECT_EQ(w.linePlot()->graph(0)->name(), "all CPUs (mean)");
    EXPECT_DOUBLE_EQ(w.linePlot()->graph(0)->data()->constBegin()->value, 0.75);
}

TEST(RqPlotData, LongBuffersAreBinnedToPixelsKeepingSpikesInTheMap) {
    RqPlot w;
    w.resize(700, 400);
    // 2000 rows x 64 CPUs, all 1 except single-row spikes of 9: CPU 5 at row 1230, CPU 6 at 1231, ...,
    // CPU 12 at row 1237, so whichever row of a pixel column a spike falls on, it must survive.
    w.setSnapshot(rqSnapshot(2000, 64, [](std::size_t i, std::size_t cpu) { return cpu >= 5 && cpu < 13 && i == 1225 + cpu ? 9 : 1; }));
    w.mapPlot()->replot(QCustomPlot::rpImmediateRefresh);
    auto* map = qobject_cast<QCPColorMap*>(w.mapPlot()->plottable(0));
    ASSERT_NE(map, nullptr);
    QCPColorMapData* data = map->data();
    EXPECT_LT(data->keySize(), 700);
    EXPECT_GT(data->keySize(), 300);
    for (int cpu = 4; cpu < 14; ++cpu) {
        double top = 0;
        int spikes = 0;
        for (int k = 0; k < data->keySize(); ++k) {
            top = std::max(top, data->cell(k, cpu));
            spikes += data->cell(k, cpu) == 9.0;
        }
        const bool spiked = cpu >= 5 && cpu < 13;
        EXPECT_EQ(top, spiked ? 9.0 : 1.0) << "cpu " << cpu;
        EXPECT_EQ(spikes, spiked ? 1 : 0) << "cpu " << cpu;
    }
    EXPECT_EQ(data->data(1230.5, 5), 9.0);
    EXPECT_EQ(data->data(1230.5, 4), 1.0);
    EXPECT_LE(w.linePlot()->graph(0)->dataCount(), 701);
    auto* scale = qobject_cast<QCPColorScale*>(map->colorScale());
    ASSERT_NE(scale, nullptr);
    EXPECT_EQ(scale->dataRange(), QCPRange(0, 9));  // automatic: the largest value shown
    w.setScaleMax(4);
    EXPECT_EQ(scale->dataRange(), QCPRange(0, 4));
    w.setScaleMax(0);
    w.setSnapshot(rqSnapshot(2000, 64, [](std::size_t i, std::size_t) { return i == 7 ? 200 : 1; }));
    EXPECT_EQ(scale->dataRange(), QCPRange(0, RqPlot::kAutoScaleCap));  // capped

    w.setWindowMs(100);  // the last 100 rows fit unbinned
    EXPECT_EQ(w.linePlot()->graph(0)->dataCount(), 101);
    EXPECT_DOUBLE_EQ(w.linePlot()->xAxis->range().lower, 1900.0);
    EXPECT_DOUBLE_EQ(w.linePlot()->xAxis->range().upper, 2000.0);
}

TEST(RqPlotData, ARecordedTraceIsShownInTimeSinceItsFirstEvent) {
    RqPlot w;
    w.resize(600, 400);
    // A trace's samples on its own clock: 9 s into the machine's uptime.
    auto s = rqSnapshot(500, 4, [](std::size_t i, std::size_t c) { return int((i + c) % 3); });
    const std::int64_t t0 = 9'000'000'000;
    for (auto& t : s->sample_t) t += t0;
    s->measure_start = t0;
    s->now += t0;
    s->knobs = "recorded: trace.dat";
    w.setSnapshot(s);
    EXPECT_NEAR(w.linePlot()->xAxis->range().lower, 0.0, 1e-9);
    EXPECT_NEAR(w.linePlot()->xAxis->range().upper, 500.0, 1e-9);
    EXPECT_NE(w.mapPlot()->xAxis->label().indexOf(QStringLiteral("first event")), -1);
    w.setWindowMs(100);
    EXPECT_NEAR(w.linePlot()->xAxis->range().lower, 400.0, 1e-9);
    ASSERT_GT(w.linePlot()->graph(0)->dataCount(), 0);
    EXPECT_NEAR(w.linePlot()->graph(0)->data()->begin()->key, 400.0, 1e-9);
    // A simulation keeps its own clock (its measure_start is the workload's GO, not 0).
    auto sim = rqSnapshot(500, 4, [](std::size_t, std::size_t) { return 1; });
    sim->measure_start = 20'000'000;
    sim->knobs = "baseline";
    w.setWindowMs(0);
    w.setSnapshot(sim);
    EXPECT_NEAR(w.linePlot()->xAxis->range().lower, 0.0, 1e-9);
    EXPECT_NE(w.mapPlot()->xAxis->label().indexOf(QStringLiteral("simulated")), -1);
}

TEST(RqPlotData, MoreCpusThanPixelRowsAreGroupedByMax) {
    RqPlot w;
    w.resize(900, 300);  // the map has far fewer than 512 pixel rows
    // 512 CPUs idle except CPU 301 at 5 for one row: it must show in its group's cell row.
    w.setSnapshot(rqSnapshot(100, 512, [](std::size_t i, std::size_t cpu) { return i == 40 && cpu == 301 ? 5 : 0; }));
    auto* map = qobject_cast<QCPColorMap*>(w.mapPlot()->plottable(0));
    ASSERT_NE(map, nullptr);
    QCPColorMapData* data = map->data();
    ASSERT_LT(data->valueSize(), 200);
    ASSERT_GT(data->valueSize(), 32);
    int hot = 0;
    for (int k = 0; k < data->keySize(); ++k)
        for (int r = 0; r < data->valueSize(); ++r) hot += data->cell(k, r) == 5.0;
    EXPECT_EQ(hot, 1);
    EXPECT_EQ(data->data(40.5, 301), 5.0);
    EXPECT_EQ(data->data(40.5, 200), 0.0);
    EXPECT_EQ(data->data(60.5, 301), 0.0);
}

TEST(CountersPlotBars, ValuesAreTheSnapshotCounts) {
    auto a = std::make_shared<sched::Snapshot>();
    auto b = std::make_shared<sched::Snapshot>();
    a->label = "A";
    b->label = "B";
    // Ten reasons: the two smallest (by A + B) are summed as "other".
    for (int i = 0; i < 10; ++i) {
        a->reasons.emplace_back(fmt::format("R{}", i), std::uint64_t(1000 - 10 * i));
        b->reasons.emplace_back(fmt::format("R{}", i), std::uint64_t(2000 - 20 * i));
    }
    b->reasons.emplace_back("ONLY_B", 5);
    a->migrations_by_cause[std::size_t(sched::MigrationCause::newidle)] = 42;
    b->migrations_by_cause[std::size_t(sched::MigrationCause::newidle)] = 7;
    b->migrations_by_cause[std::size_t(sched::MigrationCause::fork)] = 3;

    CountersPlot w;
    w.resize(900, 350);
    w.setSnapshots(a, b);
    w.reasonsPlot()->replot(QCustomPlot::rpImmediateRefresh);
    QCustomPlot* r = w.reasonsPlot();
    ASSERT_EQ(r->plottableCount(), 2);
    EXPECT_EQ(bars(r, 0)->dataCount(), 9);  // 8 reasons + other
    EXPECT_EQ(barValue(r, 0, "R0"), 1000.0);
    EXPECT_EQ(barValue(r, 1, "R0"), 2000.0);
    EXPECT_EQ(barValue(r, 0, "R3"), 970.0);
    EXPECT_EQ(barValue(r, 1, "R3"), 1940.0);
    EXPECT_EQ(barValue(r, 0, "other"), 920.0 + 910.0);
    EXPECT_EQ(barValue(r, 1, "other"), 1840.0 + 1820.0 + 5.0);
    EXPECT_TRUE(std::isnan(categoryKey(r, "R9")));

    QCustomPlot* c = w.causesPlot();
    ASSERT_EQ(c->plottableCount(), 2);
    EXPECT_EQ(barValue(c, 0, "newidle"), 42.0);
    EXPECT_EQ(barValue(c, 1, "newidle"), 7.0);
    EXPECT_EQ(barValue(c, 0, "fork"), 0.0);
    EXPECT_EQ(barValue(c, 1, "fork"), 3.0);
    EXPECT_EQ(bars(c, 0)->dataCount(), sched::kMigrationCauses);

    w.setSnapshots(a, nullptr);
    EXPECT_EQ(c->plottableCount(), 1);
    EXPECT_EQ(barValue(c, 0, "newidle"), 42.0);
}

// Who woke the sleepers: a task, a timer on the wakee's CPU, a timer elsewhere, and
// the wakelist (IPI) count and the wakeups stacked by a race, A and B side by side.
TEST(CountersPlotBars, WhoWokeIsTheSnapshotsWakerCounts) {
    auto a = std::make_shared<sched::Snapshot>();
    auto b = std::make_shared<sched::Snapshot>();
    a->wake_by_task = 5;
    a->wake_by_timer_local = 10638;
    a->ttwu_wakelist = 1;
    b->wake_by_timer_local = 5656;
    b->wake_by_timer_remote = 4982;
    b->ttwu_wakelist = 4978;
    b->ttwu_races = 17;
    CountersPlot w;
    w.resize(900, 350);
    w.setSnapshots(a, b);
    QCustomPlot* k = w.wakersPlot();
    ASSERT_EQ(k->plottableCount(), 2);
    EXPECT_EQ(bars(k, 0)->dataCount(), 5);
    EXPECT_EQ(barValue(k, 0, "a task"), 5.0);
    EXPECT_EQ(barValue(k, 0, "a local timer"), 10638.0);
    EXPECT_EQ(barValue(k, 0, "a remote timer"), 0.0);
    EXPECT_EQ(barValue(k, 1, "a local timer"), 5656.0);
    EXPECT_EQ(barValue(k, 1, "a remote timer"), 4982.0);
    EXPECT_EQ(barValue(k, 1, "wakelist (IPI)"), 4978.0);
    EXPECT_EQ(barValue(k, 0, "stacked by a race"), 0.0);
    EXPECT_EQ(barValue(k, 1, "stacked by a race"), 17.0);
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
