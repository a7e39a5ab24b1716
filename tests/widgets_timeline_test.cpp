// SPDX-License-Identifier: GPL-2.0-or-later
// widgets_timeline_test.cpp: the trace bar's timeline (binning to pixel columns, zoom and pan, a
// mark's pixel, clicks) and the agreement in the window: the replay runs on the 6.1 sample, its
// decisions and disagreements reach the timeline, and a click on a disagreement's tick opens it
// in the inspector with both CPUs, on the heatmap too.
#include "decision_inspector.h"
#include "main_window.h"
#include "widget_test_support.h"
#include "replay/replay.h"
#include "topology_heatmap.h"
#include "trace/trace.h"
#include "replay/trace_snapshot.h"
#include "trace_timeline.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QImage>
#include <QListWidget>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QTimer>
#include <QWheelEvent>

#include <gtest/gtest.h>

#include <functional>
#include <numeric>

using namespace schedlab;

namespace {

bool waitFor(const std::function<bool()>& pred, qint64 ms = 120000) { return test::waitFor(pred, ms); }

std::uint64_t sum(const std::vector<std::uint32_t>& v) { return std::accumulate(v.begin(), v.end(), std::uint64_t(0)); }
std::uint64_t sumMarks(const TimelineBins& b) {
    std::uint64_t n = 0;
    for (const auto& c : b.disagreements) n += std::accumulate(c.begin(), c.end(), std::uint64_t(0));
    return n;
}

void click(QWidget* w, QPointF p) {
    QMouseEvent press(QEvent::MouseButtonPress, p, w->mapToGlobal(p), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w, &press);
    QMouseEvent release(QEvent::MouseButtonRelease, p, w->mapToGlobal(p), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(w, &release);
}

/// Pseudo-random but fixed decision times over [0, 1 s] and every 7th one a disagreement.
void sampleData(std::vector<std::int64_t>& times, std::vector<TimelineMark>& marks) {
    std::uint64_t x = 12345;
    for (int i = 0; i < 5000; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const std::int64_t t = std::int64_t((x >> 20) % 1'000'000'001ull);
        times.push_back(t);
        if (i % 7 == 0) marks.push_back({t, i % kDisagreeClasses});
    }
    std::sort(times.begin(), times.end());
    std::sort(marks.begin(), marks.end(), [](const TimelineMark& a, const TimelineMark& b) { return a.time < b.time; });
}

}  // namespace

TEST(TimelineBins, EveryItemLandsInItsColumnAndTheCountsAddUp) {
    std::vector<std::int64_t> times;
    std::vector<TimelineMark> marks;
    sampleData(times, marks);
    times.push_back(1'000'000'000);  // the span's end goes into the last column
    times.push_back(0);
    std::sort(times.begin(), times.end());
    for (int cols : {1, 7, 640, 1333}) {
        const TimelineBins b = binTimeline(times, marks, 0, 1'000'000'000, cols);
        ASSERT_EQ(b.decisions.size(), std::size_t(cols));
        EXPECT_EQ(sum(b.decisions), times.size()) << cols;
        EXPECT_EQ(sumMarks(b), marks.size()) << cols;
        // The same as putting each item into timelineColumn() one by one.
        std::vector<std::uint32_t> brute(std::size_t(cols), 0);
        for (auto t : times) ++brute[std::size_t(timelineColumn(t, 0, 1'000'000'000, cols))];
        EXPECT_EQ(b.decisions, brute) << cols;
        std::vector<std::array<std::uint32_t, kDisagreeClasses>> bm(static_cast<std::size_t>(cols));
        for (const auto& m : marks) ++bm[std::size_t(timelineColumn(m.time, 0, 1'000'000'000, cols))][std::size_t(m.cls)];
        EXPECT_EQ(b.disagreements, bm) << cols;
        EXPECT_EQ(b.maxDecisions, *std::max_element(brute.begin(), brute.end()));
    }
    EXPECT_EQ(timelineColumn(1'000'000'000, 0, 1'000'000'000, 100), 99);
    EXPECT_EQ(timelineColumn(9'999'999, 0, 1'000'000'000, 100), 0);
    EXPECT_EQ(timelineColumn(10'000'000, 0, 1'000'000'000, 100), 1);
    EXPECT_EQ(timelineColumn(-1, 0, 1'000'000'000, 100), -1);
    // A window of the span counts only what lies in it.
    const TimelineBins part = binTimeline(times, marks, 250'000'000, 500'000'000, 300);
    const auto inside = std::count_if(times.begin(), times.end(), [](auto t) { return t >= 250'000'000 && t <= 500'000'000; });
    const auto marksInside = std::count_if(marks.begin(), marks.end(), [](const auto& m) { return m.time >= 250'000'000 && m.time <= 500'000'000; });
    EXPECT_EQ(sum(part.decisions), std::uint64_t(inside));
    EXPECT_EQ(sumMarks(part), std::uint64_t(marksInside));
    EXPECT_LT(inside, std::ptrdiff_t(times.size()));
}

TEST(TraceTimeline, ZoomPanAndAMarksPixel) {
    TraceTimeline tl;
    tl.resize(812, tl.sizeHint().height());
    tl.setSpan(0, 1'000'000'000);
    std::vector<std::int64_t> times;
    std::vector<TimelineMark> marks;
    sampleData(times, marks);
    tl.setDecisions(times, marks);
    const QRect s = tl.stripRect();
    EXPECT_EQ(s.width(), 800);
    EXPECT_EQ(tl.bins().decisions.size(), 800u);
    EXPECT_EQ(sum(tl.bins().decisions), times.size());
    EXPECT_EQ(sumMarks(tl.bins()), marks.size());

    // The wheel zooms around the pointer: the time under it stays, the span shrinks.
    const double px = s.left() + 200.5;
    const std::int64_t under = tl.timeAtX(px);
    QWheelEvent wheel(QPointF(px, s.center().y()), tl.mapToGlobal(QPointF(px, s.center().y())), QPoint(), QPoint(0, 480), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&tl, &wheel);
    const std::int64_t span = tl.viewTo() - tl.viewFrom();
    EXPECT_NEAR(double(span), 250'000'000.0, 1e3);  // 4 notches: x 4
    EXPECT_NEAR(double(tl.timeAtX(px)), double(under), 2.0 * double(span) / s.width());
    EXPECT_LT(sum(tl.bins().decisions), times.size());  // only the visible part is binned
    EXPECT_GT(sum(tl.bins().decisions), 0u);
    EXPECT_TRUE(tl.scrollBar()->isEnabled());
    // Dragging right by 100 px shows earlier times; the scroll bar follows.
    const std::int64_t from = tl.viewFrom();
    const QPointF a(s.left() + 400, s.center().y()), b(s.left() + 500, s.center().y());
    QMouseEvent press(QEvent::MouseButtonPress, a, tl.mapToGlobal(a), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&tl, &press);
    QMouseEvent move(QEvent::MouseMove, b, tl.mapToGlobal(b), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&tl, &move);
    QMouseEvent release(QEvent::MouseButtonRelease, b, tl.mapToGlobal(b), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(&tl, &release);
    EXPECT_NEAR(double(from - tl.viewFrom()), double(span) / 8, double(span) / s.width() * 2);
    EXPECT_EQ(tl.viewTo() - tl.viewFrom(), span);
    EXPECT_EQ(tl.scrollBar()->value(), int(tl.viewFrom()));
    tl.scrollBar()->setValue(tl.scrollBar()->maximum());  // the scroll bar pans to the end
    EXPECT_EQ(tl.viewTo(), 1'000'000'000);
    // Double-click shows the whole trace again.
    QMouseEvent dbl(QEvent::MouseButtonDblClick, a, tl.mapToGlobal(a), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&tl, &dbl);
    EXPECT_EQ(tl.viewFrom(), 0);
    EXPECT_EQ(tl.viewTo(), 1'000'000'000);
    EXPECT_FALSE(tl.scrollBar()->isEnabled());
    // Zooming never goes below kMinViewNs.
    for (int i = 0; i < 60; ++i) tl.zoomAt(s.left() + 10, 2.0);
    EXPECT_EQ(tl.viewTo() - tl.viewFrom(), TraceTimeline::kMinViewNs);
    tl.resetView();

    // A lone mark's tick is painted in its class colour at the column of its time.
    TraceTimeline one;
    one.resize(812, one.sizeHint().height());
    one.setSpan(0, 1'000'000'000);
    one.setDecisions({100'000'000, 612'345'678, 900'000'000}, {{612'345'678, int(sched::DisagreeClass::wake_wide)}});
    const double mx = one.xForTime(612'345'678);
    EXPECT_EQ(mx, s.left() + timelineColumn(612'345'678, 0, 1'000'000'000, 800) + 0.5);
    const QImage img = one.grab().toImage();
    const int y = s.top() + 5;
    EXPECT_EQ(QColor(img.pixel(int(mx), y)), disagreeColor(int(sched::DisagreeClass::wake_wide)));
    EXPECT_NE(QColor(img.pixel(int(mx) + 20, y)), disagreeColor(int(sched::DisagreeClass::wake_wide)));
    EXPECT_NE(QColor(img.pixel(int(mx) - 20, y)), disagreeColor(int(sched::DisagreeClass::wake_wide)));
    // Clicks: on the tick (within a few px) pick the mark; elsewhere move the cursor.
    int picked = -1;
    std::int64_t asked = -1;
    QObject::connect(&one, &TraceTimeline::markClicked, [&](int k) { picked = k; });
    QObject::connect(&one, &TraceTimeline::cursorRequested, [&](std::int64_t t) { asked = t; });
    click(&one, QPointF(mx + 2, y));
    EXPECT_EQ(picked, 0);
    EXPECT_EQ(asked, -1);
    click(&one, QPointF(s.left() + 200, y));
    EXPECT_EQ(asked, one.timeAtX(s.left() + 200));
    EXPECT_NEAR(double(asked), 200.0 / 800 * 1e9, 2e6);
    // The tooltip names the disagreement under the pointer, or the column's counts.
    EXPECT_TRUE(one.tooltipAt(QPoint(int(mx), y)).contains(QStringLiteral("disagreement 1 of 1"))) << one.tooltipAt(QPoint(int(mx), y)).toStdString();
    EXPECT_TRUE(one.tooltipAt(QPoint(int(mx), y)).contains(QStringLiteral("wake_wide")));
    const int x900 = int(one.xForTime(900'000'000));
    EXPECT_TRUE(one.tooltipAt(QPoint(x900, y)).contains(QStringLiteral(": 1 decisions, 0 disagreements")))
        << one.tooltipAt(QPoint(x900, y)).toStdString();
    // Arrow keys move the cursor by a column (Shift: ten).
    one.setCursorTime(500'000'000);
    QKeyEvent right(QEvent::KeyPress, Qt::Key_Right, Qt::NoModifier);
    QApplication::sendEvent(&one, &right);
    EXPECT_EQ(asked, 500'000'000 + 1'000'000'000 / 800);
    QKeyEvent left10(QEvent::KeyPress, Qt::Key_Left, Qt::ShiftModifier);
    QApplication::sendEvent(&one, &left10);
    EXPECT_EQ(asked, 500'000'000 - 10 * (1'000'000'000 / 800));
}

TEST(AgreementInTheWindow, TheSampleReplaysAndATickOpensItsDisagreementWithBothCpus) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    const std::string path = std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz";
    auto trace = std::make_shared<const sched::Trace>(sched::readTrace(path));
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    w.showTrace(trace, topo, QString::fromStdString(path));
    EXPECT_TRUE(w.agreementRunning());
    bool agreed = false;
    w.whenAgreed([&] { agreed = true; });
    ASSERT_TRUE(waitFor([&] { return agreed; }));
    ASSERT_TRUE(w.agreement()) << w.agreementError().toStdString();
    const sched::AgreeReport& r = *w.agreement();
    // The CLI's defaults: baseline knobs, same decisions and agreement as agree() called directly.
    sched::AgreeOptions ao;
    const sched::AgreeReport cli = sched::agree(*trace, topo, sched::Knobs{}, ao);
    EXPECT_EQ(r.decisions, cli.decisions);
    EXPECT_EQ(r.agree, cli.agree);
    EXPECT_EQ(r.knobs, "baseline");
    EXPECT_GT(r.decisions, 1000u);
    const std::uint64_t dis = r.decisions - r.agree;
    ASSERT_GT(dis, 1u);
    EXPECT_EQ(std::uint64_t(w.disagreementCount()), dis);
    // The timeline shows every decision and disagreement of the whole trace.
    TraceTimeline* tl = w.traceTimeline();
    ASSERT_NE(tl, nullptr);
    EXPECT_EQ(sum(tl->bins().decisions), r.decisions);
    EXPECT_EQ(sumMarks(tl->bins()), dis);
    // Summary: decisions, agreement, on the moved ones, stay-on-prev; in the caption too.
    const auto pct = [](std::uint64_t a, std::uint64_t n) { return QString::number(100.0 * double(a) / double(n), 'f', 1) + QStringLiteral(" %"); };
    const QString sum = w.agreementSummary();
    EXPECT_TRUE(sum.contains(QStringLiteral("%1 decisions").arg(r.decisions))) << sum.toStdString();
    EXPECT_TRUE(sum.contains(QStringLiteral("agreement ") + pct(r.agree, r.decisions))) << sum.toStdString();
    EXPECT_TRUE(sum.contains(pct(r.agree_moved, r.moved))) << sum.toStdString();
    EXPECT_TRUE(sum.contains(QStringLiteral("stay-on-prev ") + pct(r.stay_prev, r.decisions))) << sum.toStdString();
    EXPECT_TRUE(w.caption().contains(sum)) << w.caption().toStdString();

    // A disagreement whose tick is alone in its few pixels: a click on it opens exactly it.
    int k = -1;
    for (int i = 0; i < w.disagreementCount() && k < 0; ++i) {
        const double x = tl->xForTime(w.disagreement(i)->time);
        if (tl->markNear(x - 3, 0.5) < 0 && tl->markNear(x + 3, 0.5) < 0 && tl->markNear(x, 4) == i) k = i;
    }
    ASSERT_GE(k, 0);
    const sched::AgreeRow row = *w.disagreement(k);
    ASSERT_NE(row.kernel, row.sim);
    ASSERT_TRUE(row.decision);
    EXPECT_FALSE(row.decision->steps.empty());  // traced for the inspector
    click(tl, QPointF(tl->xForTime(row.time) + 1, tl->stripRect().top() + 4));
    EXPECT_EQ(w.openedDisagreement(), k);
    EXPECT_EQ(tl->selectedMark(), k);
    EXPECT_EQ(tl->cursorTime(), row.time);
    auto* heat = static_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapA")));
    ASSERT_TRUE(heat->snapshot());
    EXPECT_EQ(heat->snapshot()->now, row.time);
    EXPECT_EQ(heat->highlightTarget(), row.sim);
    EXPECT_EQ(heat->kernelChoice(), row.kernel);
    auto* ins = static_cast<DecisionInspector*>(w.view(QStringLiteral("inspector")));
    const QString shown = ins->text();
    EXPECT_TRUE(shown.contains(QStringLiteral("kernel chose CPU %1").arg(row.kernel))) << shown.toStdString();
    EXPECT_TRUE(shown.contains(QStringLiteral("schedlab chose CPU %1").arg(row.sim))) << shown.toStdString();
    EXPECT_TRUE(shown.contains(QStringLiteral("line %1").arg(row.line))) << shown.toStdString();
    EXPECT_TRUE(shown.contains(QString::fromLatin1(sched::toString(sched::DisagreeClass(row.cls)))));
    EXPECT_TRUE(shown.contains(QStringLiteral("select_task_rq_fair")));  // schedlab's path, step by step
    // The same text without the browser's rewriting names both CPUs plainly.
    AgreementItem item;
    item.row = row;
    item.index = k;
    item.total = w.disagreementCount();
    const QString plain = DecisionInspector::describeAgreement(item);
    EXPECT_TRUE(plain.contains(QStringLiteral("kernel chose <b>CPU %1</b>").arg(row.kernel))) << plain.toStdString();
    EXPECT_TRUE(plain.contains(QStringLiteral("schedlab chose <b>CPU %1</b>").arg(row.sim))) << plain.toStdString();
    EXPECT_EQ(ins->list()->count(), w.disagreementCount());
    EXPECT_EQ(ins->list()->currentRow(), k);
    const QString cap = w.caption();
    EXPECT_TRUE(cap.contains(QStringLiteral("disagreement %1 (line %2").arg(k + 1).arg(row.line))) << cap.toStdString();
    EXPECT_TRUE(cap.contains(QStringLiteral("kernel CPU %1, schedlab CPU %2").arg(row.kernel).arg(row.sim)));

    // Next / previous disagreement.
    w.stepDisagreement(+1);
    if (k + 1 < w.disagreementCount()) {
        EXPECT_EQ(w.openedDisagreement(), k + 1);
        EXPECT_EQ(tl->cursorTime(), w.disagreement(k + 1)->time);
        EXPECT_EQ(heat->kernelChoice(), w.disagreement(k + 1)->kernel);
        w.stepDisagreement(-1);
    }
    EXPECT_EQ(w.openedDisagreement(), k);
    // Picking a row of the inspector's list opens that one.
    ins->list()->setCurrentRow(0);
    EXPECT_EQ(w.openedDisagreement(), 0);
    EXPECT_EQ(tl->cursorTime(), w.disagreement(0)->time);
    // From the cursor with nothing opened: the first disagreement after it.
    w.setTraceTime(w.disagreement(1)->time - 1);
    EXPECT_EQ(w.openedDisagreement(), -1);  // the cursor left it: the marks go
    EXPECT_EQ(heat->kernelChoice(), -1);
    EXPECT_EQ(tl->selectedMark(), -1);
    w.stepDisagreement(+1);
    EXPECT_EQ(w.openedDisagreement(), 1);
    // A click away from the ticks moves the cursor only.
    const QRect s = tl->stripRect();
    double freeX = -1;
    for (int x = s.left() + 2; x < s.right() - 2 && freeX < 0; ++x)
        if (tl->markNear(x, 6) < 0) freeX = x;
    ASSERT_GT(freeX, 0);
    click(tl, QPointF(freeX, s.top() + 4));
    EXPECT_EQ(tl->cursorTime(), tl->timeAtX(freeX));
    EXPECT_EQ(w.openedDisagreement(), -1);
    // Once the trace index is made, the cursor uses it: the same state as a replay from the start.
    ASSERT_TRUE(waitFor([&] { return w.traceIndexed(); }));
    for (int i : {0, w.disagreementCount() / 2, w.disagreementCount() - 1}) {
        const std::int64_t at = w.disagreement(i)->time;
        w.setTraceTime(at);
        const sched::Snapshot plain = sched::traceSnapshot(*trace, topo, at, "trace");
        ASSERT_EQ(heat->snapshot()->cpus.size(), plain.cpus.size());
        for (std::size_t c = 0; c < plain.cpus.size(); ++c) {
            EXPECT_EQ(heat->snapshot()->cpus[c].curr_pid, plain.cpus[c].curr_pid) << i << " CPU " << c;
            EXPECT_EQ(heat->snapshot()->cpus[c].nr_running, plain.cpus[c].nr_running) << i << " CPU " << c;
        }
    }
    // Opening a scenario leaves the trace and its agreement.
    w.openDefault(o);
    EXPECT_FALSE(w.traceMode());
    EXPECT_FALSE(w.agreement());
    EXPECT_FALSE(w.openDisagreement(0));
    EXPECT_FALSE(w.traceIndexed());
}

TEST(AgreementInTheWindow, ATraceWithoutNsTimestampsSaysWhyThereIsNoAgreement) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    const std::string text =
        "# tracer: nop\n"
        "#\n"
        "            bash-100   [001] d..2.   1000: sched_waking: comm=cat pid=200 prio=120 target_cpu=002\n"
        "            bash-100   [001] d..2.   1010: sched_wakeup: comm=cat pid=200 prio=120 target_cpu=002\n";
    auto trace = std::make_shared<const sched::Trace>(sched::parseFtraceText(text, "counter.txt"));
    ASSERT_FALSE(trace->ns_timestamps);
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    w.showTrace(trace, topo, QStringLiteral("counter.txt"));
    bool agreed = false;
    w.whenAgreed([&] { agreed = true; });
    ASSERT_TRUE(waitFor([&] { return agreed; }));
    EXPECT_FALSE(w.agreement());
    EXPECT_TRUE(w.agreementError().contains(QStringLiteral("not in ns"))) << w.agreementError().toStdString();
    EXPECT_TRUE(w.agreementSummary().startsWith(QStringLiteral("no agreement: "))) << w.agreementSummary().toStdString();
    EXPECT_TRUE(w.caption().contains(w.agreementSummary()));
    EXPECT_EQ(w.disagreementCount(), 0);
    EXPECT_FALSE(w.openDisagreement(0));
    w.stepDisagreement(+1);
    EXPECT_EQ(w.openedDisagreement(), -1);
    EXPECT_EQ(sum(w.traceTimeline()->bins().decisions), 0u);
    // The window still paints (the timeline says why it is empty).
    const QImage img = w.grab().toImage();
    EXPECT_FALSE(img.isNull());
}

int main(int argc, char** argv) { return schedlab::test::runWidgetTests(argc, argv); }
