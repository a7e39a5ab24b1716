// SPDX-License-Identifier: GPL-2.0-or-later
// widgets_live_default_test.cpp: the window on the live default scenario (the seed hackbench on
// 2 x EPYC 9654, 384 CPUs, endless) at its steady state. Minutes of simulation: labelled "long",
// out of the sanitizer suite; `ctest --preset long` runs it on the release build.
#include "knob_panel.h"
#include "main_window.h"
#include "widget_test_support.h"
#include "outcome_plot.h"
#include "sim/scenario.h"

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QSlider>

#include <cmath>
#include <cstdio>

using namespace schedlab;

namespace {

sched::Scenario defaultScenario() {
    QFile f(QStringLiteral(":/scenarios/default.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return sched::parseScenario(nlohmann::json::parse(f.readAll().toStdString()), "default.json", ".");
}

/// The mean of side `s`'s outcome rate over the points in (from, to] (ns).
double meanRate(const sched::Snapshot& s, std::int64_t from, std::int64_t to) {
    double m = 0;
    int n = 0;
    for (const auto& p : s.outcome)
        if (p.t > from && p.t <= to) m += p.rate, ++n;
    return n ? m / n : 0.0;
}

}  // namespace

// The README's live experiment on the default: B runs as baseline (idle-delay-v2 with the delay
// at 0) to the steady state, then its idle-delay slider moves from 0 to 1 ms; within 200 ms of
// simulated time B's message rate has left A's. On the way, the window's steady verdict is the
// command line's on the same run.
TEST(LiveDefault, TheIdleDelaySliderMovesBsRateWithin200msAtTheSteadyState) {
    const sched::Scenario s = defaultScenario();
    ASSERT_TRUE(s.topo) << "the default scenario (:/scenarios/default.json) did not load";
    ASSERT_EQ(s.topo->nrCpus(), 384);
    sched::Knobs b = sched::Knobs::preset("idle-delay-v2");
    b.idle_delay_ns = 0;
    MainWindow w;
    StartOptions o;
    o.a = sched::Knobs::preset("baseline");
    o.b = b;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    QElapsedTimer wall;
    wall.start();
    bool steady = false;
    w.fastForwardToSteady(std::int64_t(10) * 1000000000, [&] { steady = true; });
    ASSERT_TRUE(test::waitFor([&] { return steady; }, 30 * 60 * 1000));
    std::printf("to the steady state: %.1f s wall\n", double(wall.elapsed()) / 1e3);
    auto f = w.frame();
    ASSERT_TRUE(f && f->a && f->b);
    const sched::Snapshot& a0 = *f->a;
    ASSERT_TRUE(a0.steady.reached);
    EXPECT_FALSE(f->done);  // endless
    EXPECT_EQ(f->a->digest, f->b->digest) << "an idle delay of 0 is the baseline";
    const std::int64_t t0 = a0.now;
    std::printf("A steady since t = %.3f s at t = %.3f s: %.1f busy CPUs, %.2f M migrations/s\n", double(a0.steady.from_ns) / 1e9, double(t0) / 1e9,
                a0.steady.busy_cpus, a0.steady.migrations_per_s / 1e6);
    // The command line's run of A to 2 s (docs/window.md's check): its steady windows give the same
    // machine within 10 %.
    {
        sched::Scenario cli = s;
        cli.stop_s = 2.0;  // --until 2s
        sched::RunOptions ro;
        ro.seed = s.seed;
        const sched::RunResult r = sched::runScenario(cli, sched::Variant{"baseline", sched::Knobs::preset("baseline")}, s.cost, ro);
        const sched::SteadyResult st = r.engine->metrics().steady.result();
        ASSERT_TRUE(st.reached);
        EXPECT_NEAR(a0.steady.busy_cpus, st.busy_cpus, 0.1 * st.busy_cpus);
        EXPECT_NEAR(a0.steady.migrations_per_s, st.migrations_per_s, 0.1 * st.migrations_per_s);
        std::printf("schedlab-cli run default --until 2s: %.1f busy CPUs, %.2f M migrations/s\n", st.busy_cpus, st.migrations_per_s / 1e6);
    }
    // The slider, as a user moves it: B's idle delay from 0 to 1 ms, live.
    w.knobPanel()->setEditedSide(1);
    w.knobPanel()->idleDelaySlider()->setValue(10);
    ASSERT_EQ(w.knobPanel()->knobs(1).idle_delay_ns, 1000000);
    bool there = false;
    w.runUntil(t0 + 200000000, [&] { there = true; });
    ASSERT_TRUE(test::waitFor([&] { return there; }, 10 * 60 * 1000));
    f = w.frame();
    const sched::Snapshot &sa = *f->a, &sb = *f->b;
    ASSERT_EQ(sb.knob_marks.size(), 1u);
    EXPECT_EQ(sb.knob_marks[0].change, "idle_delay_ns=1000000");
    const std::int64_t tc = sb.knob_marks[0].t;
    EXPECT_GE(tc, t0);
    // The same rate before the change; apart by more than 5 % over the last 100 ms of the 200.
    EXPECT_DOUBLE_EQ(meanRate(sa, tc - 100000000, tc), meanRate(sb, tc - 100000000, tc));
    const double ra = meanRate(sa, tc + 100000000, tc + 200000000), rb = meanRate(sb, tc + 100000000, tc + 200000000);
    EXPECT_GT(ra, 1e6);
    EXPECT_GT(std::abs(rb / ra - 1), 0.05) << "A " << ra << " B " << rb;
    // Where B left A: the first 10 ms point after the change more than 5 % apart.
    std::int64_t left = -1;
    for (std::size_t i = 0; i < sa.outcome.size() && i < sb.outcome.size(); ++i)
        if (sa.outcome[i].t > tc && std::abs(double(sb.outcome[i].rate) / double(sa.outcome[i].rate) - 1) > 0.05) {
            left = sa.outcome[i].t - tc;
            break;
        }
    EXPECT_GE(left, 0);
    EXPECT_LE(left, 200000000);
    std::printf("B's rate %.1f M/s vs A's %.1f M/s (%+.1f %%) over the last 100 ms; left A's %.0f ms after the change\n", rb / 1e6, ra / 1e6,
                (rb / ra - 1) * 100, double(left) / 1e6);
    // The outcome view draws the change.
    auto* view = qobject_cast<OutcomePlot*>(w.view(QStringLiteral("outcome")));
    ASSERT_NE(view, nullptr);
    const QString png = QStringLiteral("live-default-outcome.png");
    ASSERT_EQ(w.exportView(view, png), QString());
    EXPECT_FALSE(QImage(png).isNull());
    ASSERT_EQ(view->markLabels().size(), 1);
    EXPECT_TRUE(view->markLabels().front().endsWith(QStringLiteral("B: idle_delay_ns=1000000"))) << view->markLabels().front().toStdString();
}

int main(int argc, char** argv) { return schedlab::test::runWidgetTests(argc, argv); }
