// SPDX-License-Identifier: GPL-2.0-or-later
// widgets_window_test.cpp: the simulation worker thread (start, pause, restart, stop mid-run,
// same results as the CLI) and the main window (frames reach the views, knob changes apply live,
// export writes whole files with the caption, the A/B text is the CLI's table).
#include "counters_plot.h"
#include "decision_inspector.h"
#include "delta_table.h"
#include "flow_view.h"
#include "knob_panel.h"
#include "latency_plot.h"
#include "main_window.h"
#include "widget_test_support.h"
#include "outcome_plot.h"
#include "replay/replay.h"
#include "progress_job.h"
#include "recent_menu.h"
#include "rq_plot.h"
#include "run_export.h"
#include "replay/trace_compare.h"
#include "trace/trace.h"
#include "replay/trace_snapshot.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim_worker.h"
#include "topology_heatmap.h"
#include "trace_timeline.h"

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QSpinBox>
#include <QStatusBar>
#include <QClipboard>
#include <QDir>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QEventLoop>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QProgressBar>
#include <QProgressDialog>
#include <QRegularExpression>
#include <QToolButton>
#include <QPushButton>
#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

using namespace schedlab;

namespace {

sched::Scenario smallScenario(int loops = 400) {
    return sched::parseScenario(
        nlohmann::json::parse(R"({"topology":"i7-4790","seed":5,"workloads":[{"type":"hackbench","groups":2,"fds":5,"loops":)" +
                              std::to_string(loops) + "}]}"),
        "small.json", ".");
}

/// Runs the event loop until `pred` holds (checked on every frame signal and every 5 ms), at most `ms`.
bool waitFor(const std::function<bool()>& pred, qint64 ms = 60000) { return test::waitFor(pred, ms); }

/// Opens an endless hackbench (i7-4790, -g 2 -f `fds`, seed 11) with `variants` (JSON), paused at t = 0.
void openEndless(MainWindow& w, QTemporaryDir& dir, const char* variants, int fds = 5) {
    const QString path = dir.filePath(QStringLiteral("endless.json"));
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(R"({"topology":"i7-4790","seed":11,"workloads":[{"type":"hackbench","groups":2,"fds":)") + QByteArray::number(fds) +
            R"(,"threads":true,"pipe":true,"loops":0}],"variants":)" + variants + "}");
    f.close();
    StartOptions o;
    o.autoplay = false;
    ASSERT_EQ(w.openScenario(path, o), QString());
    w.show();
}

/// Runs the window to simulated time `ns` (MainWindow::runUntil) and waits for it.
bool runTo(MainWindow& w, qint64 ns) {
    bool reached = false;
    w.runUntil(ns, [&] { reached = true; });
    return waitFor([&] { return reached; });
}

/// The A/B table's cell in row `row` (1 = A, 2 = B) and column `col` (0: "since"): cells are
/// set apart by two spaces or more, a cell has at most one space in a row.
QString deltaRowAt(const MainWindow& w, int row, int col) {
    auto* l = w.findChild<QLabel*>(QStringLiteral("deltaTable"));
    const QStringList lines = l ? l->text().split(QLatin1Char('\n')) : QStringList();
    if (row >= lines.size()) return {};
    const QStringList cells = lines[row].mid(7).split(QRegularExpression(QStringLiteral("\\s{2,}")), Qt::SkipEmptyParts);
    return col < cells.size() ? cells[col].trimmed() : QString();
}

std::uint64_t cliDigest(const sched::Scenario& s, const sched::Knobs& k) {
    sched::RunOptions o;
    o.seed = s.seed;
    return sched::runScenario(s, sched::Variant{k.presetName, k}, s.cost, o).digest;
}

}  // namespace

TEST(SimWorker, RunsToTheEndWithTheCliResultsAndFramesAreOrdered) {
    SimController c;
    std::shared_ptr<const Frame> last;
    std::uint64_t lastSeq = 0;
    std::int64_t lastNow = -1;
    bool ordered = true;
    QObject::connect(&c, &SimController::frameReady, [&] {
        auto f = c.take();
        if (!f) return;
        ordered = ordered && f->seq > lastSeq && f->a->now >= lastNow;
        lastSeq = f->seq;
        lastNow = f->a->now;
        last = f;
    });
    const sched::Scenario s = smallScenario();
    const sched::Knobs a = sched::Knobs::preset("baseline"), b = sched::Knobs::preset("idle-delay-v2");
    c.post([s, a, b](SimWorker& w) {
        w.setSpeed(0);
        w.restart(s, a, b, true, 0);
        w.play();
    });
    ASSERT_TRUE(waitFor([&] { return last && last->done; }));
    EXPECT_TRUE(ordered);
    EXPECT_FALSE(last->running);
    ASSERT_TRUE(last->b);
    EXPECT_EQ(last->a->digest, cliDigest(s, a));
    EXPECT_EQ(last->b->digest, cliDigest(s, b));
    // A finished A/B run gives the CLI's compare table on request.
    QString table;
    QObject::connect(c.worker(), &SimWorker::compareTextReady, &c, [&](const QString& t) { table = t; });  // queued to this thread
    c.post([](SimWorker& w) { w.requestCompareText(); });
    ASSERT_TRUE(waitFor([&] { return !table.isEmpty(); }));
    EXPECT_TRUE(table.contains(QStringLiteral("baseline")));
    EXPECT_TRUE(table.contains(QStringLiteral("idle-delay-v2")));
}

TEST(SimWorker, FastForwardRunsBothSidesWithoutFramesThenPublishesOnePaused) {
    SimController c;
    std::vector<std::shared_ptr<const Frame>> frames;
    QObject::connect(&c, &SimController::frameReady, [&] {
        if (auto f = c.take()) frames.push_back(f);
    });
    int progress = 0;
    bool ended = false;
    qint64 endedAt = -1;
    QObject::connect(c.worker(), &SimWorker::fastForwardProgress, &c, [&](qint64 now, qint64, double, bool done) {
        ++progress;
        if (done) ended = true, endedAt = now;
    });
    const sched::Scenario s = smallScenario(200000);
    c.post([s](SimWorker& w) {
        w.setSpeed(1e-3);  // 1 ms per second: the fast-forward must not be paced by it
        w.restart(s, sched::Knobs{}, sched::Knobs::preset("idle-delay-v2"), true, 0);
    });
    ASSERT_TRUE(waitFor([&] { return !frames.empty(); }));
    const std::size_t before = frames.size();
    const qint64 target = 40'000'000;
    c.post([target](SimWorker& w) { w.fastForward(target); });
    ASSERT_TRUE(waitFor([&] { return ended && !frames.empty() && frames.back()->a->now == target; }, 60000));
    EXPECT_EQ(endedAt, target);
    EXPECT_GE(progress, 1);
    // One frame for the whole fast-forward (its end), none on the way; both sides there, paused.
    EXPECT_EQ(frames.size(), before + 1);
    EXPECT_FALSE(frames.back()->running);
    ASSERT_TRUE(frames.back()->b);
    EXPECT_EQ(frames.back()->b->now, target);
    // The speed chosen before comes back: playing on is paced again (1 ms per wall second).
    c.post([](SimWorker& w) { w.play(); });
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 300) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    c.post([](SimWorker& w) { w.pause(); });
    ASSERT_TRUE(waitFor([&] { return !frames.back()->running && frames.size() > before + 1; }));
    EXPECT_LT(frames.back()->a->now, target + 5'000'000);
}

TEST(SimWorker, PauseRestartAndStopMidRun) {
    SimController c;
    std::shared_ptr<const Frame> last;
    QObject::connect(&c, &SimController::frameReady, [&] {
        if (auto f = c.take()) last = f;
    });
    const sched::Scenario s = smallScenario(200000);  // far longer than this test runs
    c.post([s](SimWorker& w) {
        w.setSpeed(0);
        w.restart(s, sched::Knobs{}, sched::Knobs::preset("idle-delay-v2"), true, 0);
        w.play();
    });
    ASSERT_TRUE(waitFor([&] { return last && last->running && last->a->now > 2000000; }));
    c.post([](SimWorker& w) { w.pause(); });
    ASSERT_TRUE(waitFor([&] { return last && !last->running; }));
    const std::int64_t pausedAt = last->a->now;
    EXPECT_EQ(last->b->now, pausedAt);  // lockstep
    // Paused: stepping one event moves at most one side by one event.
    const std::uint64_t ev = last->a->events;
    c.post([](SimWorker& w) { w.stepEvent(); });
    ASSERT_TRUE(waitFor([&] { return last->a->events != ev; }));
    EXPECT_EQ(last->a->events, ev + 1);
    // Restart from t = 0.
    c.post([s](SimWorker& w) { w.restart(s, sched::Knobs{}, sched::Knobs{}, false, 0); });
    ASSERT_TRUE(waitFor([&] { return last->a->now == 0; }));
    EXPECT_FALSE(last->b);
    c.post([](SimWorker& w) { w.play(); });
    ASSERT_TRUE(waitFor([&] { return last->a->now > 1000000; }));
    // Stop while running: returns, and the thread is gone.
    QElapsedTimer t;
    t.start();
    c.shutdown();
    EXPECT_LT(t.elapsed(), 5000);
}

TEST(MainWindow, FramesReachTheViewsAndKnobsApplyLive) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("s.json"));
    {
        QFile f(path);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(R"({"topology":"x86-20c40t","seed":3,"workloads":[{"type":"hackbench","groups":2,"fds":10,"loops":100000}],
                    "variants":{"A":"baseline","B":"baseline"}})");
    }
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    ASSERT_EQ(w.openScenario(path, o), QString());
    w.show();
    bool reached = false;
    w.runUntil(5000000, [&] { reached = true; });
    ASSERT_TRUE(waitFor([&] { return reached; }));
    ASSERT_TRUE(w.frame());
    EXPECT_EQ(w.frame()->a->now, 5000000);
    EXPECT_EQ(w.frame()->a->idle_delay_hits, 0u);
    // Drag B's idle-delay slider to 1 ms: B sees idle-delay hits from now on, A does not.
    w.knobPanel()->setEditedSide(1);
    w.knobPanel()->idleDelaySlider()->setValue(10);
    EXPECT_EQ(w.knobPanel()->knobs(1).idle_delay_ns, 1000000);
    reached = false;
    w.runUntil(15000000, [&] { reached = true; });
    ASSERT_TRUE(waitFor([&] { return reached; }));
    EXPECT_EQ(w.frame()->a->idle_delay_hits, 0u);
    EXPECT_GT(w.frame()->b->idle_delay_hits, 0u);
    EXPECT_NE(w.frame()->b->knobs.find("idle_delay_ns=1000000"), std::string::npos);

    // Export: a whole PNG with the caption strip, and the caption names everything.
    const QString cap = w.caption();
    for (const char* part : {"x86-20c40t", "hackbench -g 2 -f 10", "A: baseline", "B: baseline (idle_delay_ns=1000000)", "seed 3", "t = 15.000 ms"})
        EXPECT_TRUE(cap.contains(QString::fromUtf8(part))) << part << " in " << cap.toStdString();
    const QString png = dir.filePath(QStringLiteral("w.png"));
    ASSERT_EQ(w.exportView(nullptr, png), QString());
    QImage img(png);
    ASSERT_FALSE(img.isNull());
    EXPECT_EQ(img.width(), w.width());
    EXPECT_GT(img.height(), w.height());  // the caption below
    EXPECT_FALSE(QFile::exists(png + QStringLiteral(".part")));
    for (const char* suf : {"svg", "pdf"}) {
        const QString p = dir.filePath(QStringLiteral("v.") + QString::fromLatin1(suf));
        ASSERT_EQ(w.exportView(w.view(QStringLiteral("latency")), p), QString());
        EXPECT_GT(QFileInfo(p).size(), 1000);
    }
    EXPECT_FALSE(w.exportView(nullptr, dir.filePath(QStringLiteral("x.bmp"))).isEmpty());
    // "Copy A/B table as text": the worker makes the CLI's compare table; it lands on the clipboard.
    QString copied;
    QObject::connect(&w, &MainWindow::compareTextCopied, [&](const QString& t) { copied = t; });
    QAction* copy = nullptr;
    for (QAction* act : w.findChildren<QAction*>())
        if (act->text().contains(QStringLiteral("Copy A/B table"))) copy = act;
    ASSERT_NE(copy, nullptr);
    copy->trigger();
    ASSERT_TRUE(waitFor([&] { return !copied.isEmpty(); }));
    EXPECT_EQ(copied, QApplication::clipboard()->text());
    EXPECT_TRUE(copied.contains(QStringLiteral("migrations"))) << copied.toStdString();
    // The A/B text is the compare table.
    EXPECT_TRUE(copied.contains(QStringLiteral("ttwu_count")) || copied.contains(QStringLiteral("wakeups"))) << copied.toStdString();
}

// The live experiment: an endless hackbench with B = idle-delay-v2 at a delay of 0 (the same
// run as A), the slider moved to 1 ms on B at 300 ms of simulated time: within the next 200 ms
// the outcome view shows B's message rate away from A's and the change marked where it was
// made; the status line gives each side's steady-state verdict.
TEST(MainWindow, TheOutcomeViewShowsALiveIdleDelayChange) {
    QTemporaryDir dir;
    MainWindow w;
    openEndless(w, dir, R"({"A":"baseline","B":{"preset":"idle-delay-v2","idle_delay_ns":0}})");
    ASSERT_TRUE(runTo(w, 300000000));
    w.knobPanel()->setEditedSide(1);
    w.knobPanel()->idleDelaySlider()->setValue(10);
    ASSERT_EQ(w.knobPanel()->knobs(1).idle_delay_ns, 1000000);
    ASSERT_TRUE(runTo(w, 500000000));
    ASSERT_TRUE(w.frame() && w.frame()->b);
    EXPECT_FALSE(w.frame()->done);  // endless: still running at 500 ms
    // Export the outcome view: it is fed from the shown frame even in a hidden tab.
    const QString png = dir.filePath(QStringLiteral("outcome.png"));
    ASSERT_EQ(w.exportView(w.view(QStringLiteral("outcome")), png), QString());
    EXPECT_FALSE(QImage(png).isNull());
    auto* view = qobject_cast<OutcomePlot*>(w.view(QStringLiteral("outcome")));
    ASSERT_NE(view, nullptr);
    ASSERT_EQ(view->markLabels().size(), 1);
    EXPECT_EQ(view->markLabels().front(), QStringLiteral("t = 0.300 s: B: idle_delay_ns=1000000"));
    QCustomPlot* p = view->plot();
    ASSERT_GE(p->graphCount(), 2);
    // Graph 0 is A's rate, graph 1 B's, one point per 10 ms: the same before the change, apart by
    // more than 5 % over the last 100 ms.
    auto mean = [](QCPGraph* g, double from, double to) {
        double m = 0;
        int n = 0;
        for (auto it = g->data()->findBegin(from, false); it != g->data()->constEnd() && it->key <= to; ++it)
            if (it->key > from) m += it->value, ++n;
        return n ? m / n : 0.0;
    };
    EXPECT_EQ(p->graph(0)->data()->size(), 50);
    EXPECT_DOUBLE_EQ(mean(p->graph(0), 0.15, 0.28), mean(p->graph(1), 0.15, 0.28));
    const double a = mean(p->graph(0), 0.4, 0.5), b = mean(p->graph(1), 0.4, 0.5);
    EXPECT_GT(a, 1e6);
    EXPECT_GT(std::abs(b / a - 1), 0.05) << "A " << a << " B " << b;
    // The A/B table: totals since t = 0 before the steady state (the default), the rates of the
    // last 100 ms on request; its "since" column says which.
    auto* table = w.findChild<QLabel*>(QStringLiteral("deltaTable"));
    auto* since = w.findChild<QComboBox*>(QStringLiteral("deltaSince"));
    ASSERT_TRUE(table && since);
    const bool steady = w.frame()->a->steady.reached && w.frame()->b->steady.reached;
    if (!steady) {
        EXPECT_TRUE(table->text().contains(QStringLiteral("since"))) << table->text().toStdString();
        EXPECT_EQ(deltaRowAt(w, 1, 0), QStringLiteral("t = 0")) << table->text().toStdString();
        EXPECT_TRUE(table->text().contains(QStringLiteral("ctx switches "))) << table->text().toStdString();
    }
    since->setCurrentIndex(since->findData(int(DeltaSince::window)));
    const QString windowed = table->text();
    EXPECT_EQ(deltaRowAt(w, 1, 0), QStringLiteral("t = 0.400 s")) << windowed.toStdString();
    EXPECT_TRUE(windowed.contains(QStringLiteral("messages/s"))) << windowed.toStdString();
    EXPECT_TRUE(windowed.contains(QStringLiteral("busy CPUs"))) << windowed.toStdString();
    EXPECT_TRUE(windowed.contains(QStringLiteral("ctx switches/s"))) << windowed.toStdString();
    EXPECT_FALSE(windowed.contains(QStringLiteral("wakeup p99"))) << "no latency over a window";
    // A's rate in the table is the mean of the outcome series' last 10 points.
    double rateA = 0;
    for (std::size_t i = 40; i < 50; ++i) rateA += double(w.frame()->a->outcome[i].rate) / 10;
    EXPECT_EQ(deltaRowAt(w, 1, 1), QString::number(rateA, 'f', 0)) << windowed.toStdString();
    since->setCurrentIndex(since->findData(int(DeltaSince::start)));
    EXPECT_EQ(deltaRowAt(w, 1, 0), QStringLiteral("t = 0"));
    // The status line says where each side stands.
    bool verdict = false;
    for (QLabel* l : w.findChildren<QLabel*>())
        verdict |= l->text().contains(QStringLiteral("A start-up")) || l->text().contains(QStringLiteral("A steady since t = "));
    EXPECT_TRUE(verdict);
}

// Run → B from here: B starts again from A's state with B's knobs; before the branch B's
// outcome is A's, the branch is marked, and after it the two part.
TEST(MainWindow, BFromHereStartsBFromAsStateWithBsKnobs) {
    QTemporaryDir dir;
    MainWindow w;
    openEndless(w, dir, R"({"A":"baseline","B":"idle-delay-v2"})");
    ASSERT_TRUE(runTo(w, 100000000));
    const std::uint64_t digestA = w.frame()->a->digest;
    EXPECT_NE(w.frame()->b->digest, digestA);  // B ran its own way so far
    bool branched = false;
    w.branchHere(1, [&] { branched = true; });
    ASSERT_TRUE(waitFor([&] { return branched; }));
    EXPECT_EQ(w.frame()->b->now, 100000000);
    EXPECT_EQ(w.frame()->b->knobs, "idle-delay-v2");
    ASSERT_GE(w.frame()->b->knob_marks.size(), 1u);
    EXPECT_EQ(w.frame()->b->knob_marks.front().change, "branched from A");
    EXPECT_TRUE(w.caption().contains(QStringLiteral("branched from A at t = 100.000 ms"))) << w.caption().toStdString();
    for (std::size_t i = 0; i < w.frame()->a->outcome.size(); ++i) EXPECT_EQ(w.frame()->a->outcome[i].rate, w.frame()->b->outcome[i].rate) << i;
    ASSERT_TRUE(runTo(w, 150000000));
    EXPECT_GT(w.frame()->b->idle_delay_hits, 0u);
    EXPECT_EQ(w.frame()->a->idle_delay_hits, 0u);
}

// File > Save state, File > Open state: the state opens in another window as it was (time,
// digests, outcome series, marks) and goes on as the saved run went on; a missing file is one line.
TEST(MainWindow, SavedStateOpensAsItWasAndGoesOnTheSame) {
    QTemporaryDir dir;
    MainWindow w;
    openEndless(w, dir, R"({"A":"baseline","B":"idle-delay-v2"})");
    ASSERT_TRUE(runTo(w, 60000000));
    ASSERT_EQ(w.changeKnob(1, QStringLiteral("WA_WEIGHT"), QStringLiteral("0")), QString());
    ASSERT_TRUE(waitFor([&] { return w.frame()->b->knob_marks.size() == 1; }));
    const auto before = w.frame();
    const QString path = dir.filePath(QStringLiteral("w.state"));
    std::optional<QString> err;
    w.saveSimState(path, [&](const QString& e) { err = e; });
    ASSERT_TRUE(waitFor([&] { return err.has_value(); }));
    EXPECT_EQ(*err, QString());
    ASSERT_TRUE(runTo(w, 90000000));
    MainWindow w2;
    w2.show();
    bool shown = false;
    ASSERT_EQ(w2.openSimState(path, [&] { shown = true; }), QString());
    ASSERT_TRUE(waitFor([&] { return shown; }));
    const auto& a = *w2.frame()->a;
    ASSERT_TRUE(w2.frame()->b);
    EXPECT_EQ(a.now, before->a->now);
    EXPECT_EQ(a.digest, before->a->digest);
    EXPECT_EQ(w2.frame()->b->digest, before->b->digest);
    EXPECT_EQ(a.outcome.size(), before->a->outcome.size());
    EXPECT_EQ(a.sample_t, before->a->sample_t);
    ASSERT_EQ(w2.frame()->b->knob_marks.size(), before->b->knob_marks.size());
    EXPECT_EQ(w2.frame()->b->knob_marks.back().change, "WA_WEIGHT=0");
    ASSERT_TRUE(runTo(w2, 90000000));
    EXPECT_EQ(w2.frame()->a->digest, w.frame()->a->digest);
    EXPECT_EQ(w2.frame()->b->digest, w.frame()->b->digest);
    EXPECT_NE(w2.openSimState(dir.filePath(QStringLiteral("nosuch.state"))), QString());
}

// The window at the steady state: the first start fast-forwards there and caches the state; the
// next start opens the cache, at the same instant, at once.
TEST(MainWindow, SteadyStartCachesTheStateAndOpensItTheNextTime) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("endless.json"));
    {
        QFile f(path);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"topology":"i7-4790","seed":11,"workloads":[{"type":"hackbench","groups":2,"fds":1,"threads":true,"pipe":true,"loops":0}],"variants":{"A":"baseline","B":"idle-delay-v2"}})");
    }
    const sched::Scenario s = sched::loadScenario(path.toStdString());
    const QByteArray oldCache = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", dir.filePath(QStringLiteral("cache")).toUtf8());  // a first start: no cache yet
    MainWindow w;
    w.show();
    bool done = false;
    w.openSteady(s, [&] { done = true; });
    const QString cache = w.steadyCachePath();
    EXPECT_TRUE(cache.startsWith(dir.path())) << cache.toStdString();
    ASSERT_TRUE(waitFor([&] { return done; }));
    ASSERT_TRUE(w.frame()->a->steady.reached);
    ASSERT_TRUE(waitFor([&] { return QFileInfo::exists(cache); }));
    const auto first = w.frame();
    MainWindow w2;
    w2.show();
    bool again = false;
    QElapsedTimer t;
    t.start();
    w2.openSteady(s, [&] { again = true; });
    ASSERT_TRUE(waitFor([&] { return again; }));
    EXPECT_LT(t.elapsed(), 5000);
    EXPECT_EQ(w2.steadyCachePath(), cache);
    EXPECT_EQ(w2.frame()->a->now, first->a->now);
    EXPECT_EQ(w2.frame()->a->digest, first->a->digest);
    EXPECT_EQ(w2.frame()->b->digest, first->b->digest);
    EXPECT_TRUE(w2.frame()->a->steady.reached);
    if (oldCache.isNull()) qunsetenv("XDG_CACHE_HOME");
    else qputenv("XDG_CACHE_HOME", oldCache);
}

// The first steady start of the default (384 CPUs) takes minutes: the status bar shows how far
// the fast-forward has gone, and its Stop ends it where it is (the window stays usable).
TEST(MainWindow, AFastForwardShowsItsProgressAndStopsOnRequest) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    auto* bar = w.findChild<QProgressBar*>(QStringLiteral("fastForwardProgress"));
    auto* stop = w.findChild<QToolButton*>(QStringLiteral("fastForwardStop"));
    ASSERT_TRUE(bar && stop);
    EXPECT_FALSE(bar->isVisible());
    bool done = false;
    w.fastForwardToSteady(std::int64_t(60) * 1000000000, [&] { done = true; });
    ASSERT_TRUE(waitFor([&] { return bar->isVisible(); }));
    EXPECT_TRUE(stop->isVisible());
    EXPECT_TRUE(bar->format().startsWith(QStringLiteral("start-up: t = "))) << bar->format().toStdString();
    EXPECT_EQ(bar->value(), 0);
    // The status line's message (it takes the place of the run's status while it shows).
    EXPECT_TRUE(w.statusBar()->currentMessage().startsWith(QStringLiteral("Fast-forward to the steady state: t = ")))
        << w.statusBar()->currentMessage().toStdString();
    stop->click();
    ASSERT_TRUE(waitFor([&] { return done; }));
    EXPECT_FALSE(bar->isVisible());
    EXPECT_FALSE(stop->isVisible());
    ASSERT_TRUE(w.frame());
    EXPECT_FALSE(w.frame()->running);
    EXPECT_FALSE(w.frame()->a->steady.reached);
    EXPECT_LT(w.frame()->a->now, std::int64_t(800000000));  // stopped in the start-up, not run on to the limit
}

// Run → Fast-forward to the steady state: it stops where A's detector says A settled, well
// before its limit, and the status line says so.
TEST(MainWindow, FastForwardToTheSteadyStateStopsWhereASettled) {
    QTemporaryDir dir;
    MainWindow w;
    openEndless(w, dir, R"({"A":"baseline","B":"idle-delay-v2"})", 1);  // 4 tasks: a quick second of steady state
    bool done = false;
    w.fastForwardToSteady(std::int64_t(60) * 1000000000, [&] { done = true; });
    ASSERT_TRUE(waitFor([&] { return done; }));
    const sched::Snapshot& a = *w.frame()->a;
    EXPECT_TRUE(a.steady.reached);
    EXPECT_GE(a.steady.from_ns, 0);
    EXPECT_LT(a.now, std::int64_t(10) * 1000000000);
    EXPECT_GE(a.steady.end_ns - a.steady.from_ns, SimWorker::kSteadyHoldNs);  // held for a second
    EXPECT_LE(a.now - a.steady.end_ns, 30000000);                             // stopped within a few of the detector's samples of it
    bool said = false;
    for (QLabel* l : w.findChildren<QLabel*>()) said |= l->text().contains(QStringLiteral("A steady since t = "));
    EXPECT_TRUE(said);
}

TEST(MainWindow, EditedWorkloadsRestartBothSidesOrSayWhatIsWrong) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    EXPECT_TRUE(w.applyWorkloads(QStringLiteral("[{\"type\": \"hackbench\"")).startsWith(QStringLiteral("workloads: not JSON")));
    const QString bad = w.applyWorkloads(QStringLiteral(R"([{"type": "hackbench", "grups": 2}])"));
    EXPECT_TRUE(bad.contains(QStringLiteral("grups"))) << bad.toStdString();
    EXPECT_EQ(w.applyWorkloads(QStringLiteral(R"([{"type": "hackbench", "groups": 1, "fds": 4, "loops": 50}])")), QString());
    bool reached = false;
    w.runUntil(2000000, [&] { reached = true; });
    ASSERT_TRUE(waitFor([&] { return reached || (w.frame() && w.frame()->done); }));
    ASSERT_TRUE(w.frame());
    ASSERT_EQ(w.frame()->a->reports.size(), 1u);
    EXPECT_NE(w.frame()->a->reports[0].command.find("hackbench -g 1 -f 4"), std::string::npos);
    EXPECT_TRUE(w.caption().contains(QStringLiteral("hackbench -g 1 -f 4")));
}

TEST(MainWindow, ARecordedTraceIsShownInTheViewsAtTheCursorAndAScenarioLeavesIt) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    const std::string path = std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz";
    auto trace = std::make_shared<const sched::Trace>(sched::readFtraceText(path));
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    w.showTrace(trace, topo, QString::fromStdString(path));
    ASSERT_TRUE(w.traceMode());
    const auto [t0, t1] = sched::traceSpan(*trace);
    w.setTraceTime(8'983'600'000);  // CPU 7 runs rcu_preempt (pid 15) here
    auto* heat = static_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapA")));
    ASSERT_TRUE(heat->snapshot());
    EXPECT_EQ(heat->snapshot()->now, 8'983'600'000);
    EXPECT_EQ(heat->snapshot()->cpus.size(), 8u);
    EXPECT_EQ(heat->snapshot()->cpus[7].curr_pid, 15);
    EXPECT_FALSE(w.view(QStringLiteral("heatmapB"))->isVisible());
    EXPECT_TRUE(w.caption().contains(QStringLiteral("recorded trace trace.txt.gz")));
    EXPECT_TRUE(w.caption().contains(QStringLiteral("qemu-2s2c2t (8 CPUs)")));
    // A click on the trace bar's timeline moves the cursor, from one end of the trace to the other
    // (no event loop has run: the agreement has not reached the timeline, no tick is in the way).
    auto* tl = w.findChild<TraceTimeline*>(QStringLiteral("traceTimeline"));
    ASSERT_NE(tl, nullptr);
    const QRect strip = tl->stripRect();
    for (const auto& [x, t] : {std::pair<int, std::int64_t>{strip.right() + 1, t1}, {strip.left(), t0}}) {
        const QPointF p(x, strip.bottom() - 2);
        QMouseEvent press(QEvent::MouseButtonPress, p, tl->mapToGlobal(p), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(tl, &press);
        QMouseEvent release(QEvent::MouseButtonRelease, p, tl->mapToGlobal(p), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(tl, &release);
        EXPECT_EQ(heat->snapshot()->now, t) << x;
    }
    // Opening a scenario goes back to the simulation.
    w.openDefault(o);
    EXPECT_FALSE(w.traceMode());
}

TEST(MainWindow, ExportsTheRunAsFtraceTextAndTheRqLengthCsvAsTheCliWritesThem) {
    QTemporaryDir dir;
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    o.ab = false;
    const sched::Scenario s = smallScenario(3000);  // about 100 ms simulated: a few 20 ms rq samples
    w.openScenario(s, QStringLiteral("small.json"), o);
    w.show();
    bool reached = false;
    w.runUntil(3'000'000, [&] { reached = true; });
    ASSERT_TRUE(waitFor([&] { return reached || (w.frame() && w.frame()->done); }));
    const std::int64_t until = w.frame()->a->now;
    ASSERT_GT(until, 0);
    // The run to the shown time as ftrace text: the importer reads it back, nothing after the cursor.
    const QString txt = dir.filePath(QStringLiteral("run.txt"));
    ASSERT_EQ(w.exportRunTrace(txt), QString());
    const sched::Trace t = sched::readFtraceText(txt.toStdString());
    EXPECT_EQ(t.nr_cpus, 8);
    EXPECT_EQ(t.problem_count, 0u);
    ASSERT_GT(t.events.size(), 100u);
    EXPECT_LE(sched::traceSpan(t).second, until);
    std::uint64_t wakings = 0;
    for (const auto& e : t.events) wakings += e.kind == sched::EvKind::sched_waking;
    EXPECT_EQ(wakings, w.frame()->a->ttwu_count);  // the same run as the one shown
    // It carries each decision's untraced inputs as run --ftrace does: it replays at 100 %.
    EXPECT_GT(t.wake_inputs.size(), 100u);
    const sched::AgreeReport ag = sched::agree(t, s.topo, sched::Knobs{});
    EXPECT_EQ(ag.inputs.decisions, ag.decisions);
    EXPECT_EQ(ag.agree, ag.decisions) << ag.text();
    // Cancelled: no file, no temporary left behind.
    const QString cancelled = dir.filePath(QStringLiteral("cancelled.txt"));
    EXPECT_EQ(w.exportRunTrace(cancelled, [](qint64) { return false; }), QStringLiteral("cancelled"));
    EXPECT_FALSE(QFile::exists(cancelled));
    EXPECT_EQ(QDir(dir.path()).entryList(QDir::Files).size(), 1);
    EXPECT_FALSE(w.exportRunTrace(QStringLiteral("/nonexistent/dir/x.txt")).isEmpty());

    // The rq-length CSV of the finished run is the CLI's (run --csv) byte for byte.
    reached = false;
    w.runUntil(std::int64_t(1) << 50, [&] { reached = true; });
    ASSERT_TRUE(waitFor([&] { return w.frame() && w.frame()->done; }));
    const QString csv = dir.filePath(QStringLiteral("rq.csv"));
    QString err = QStringLiteral("pending");
    w.exportRqCsv(csv, [&](const QString& e) { err = e; });
    ASSERT_TRUE(waitFor([&] { return err != QStringLiteral("pending"); }));
    ASSERT_EQ(err, QString());
    QFile f(csv);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    sched::RunOptions ro;
    ro.seed = s.seed;
    const std::string cli = sched::bpftraceRqlenCsv(sched::runScenario(s, sched::Variant{"baseline", sched::Knobs{}}, s.cost, ro));
    EXPECT_EQ(f.readAll().toStdString(), cli);
    EXPECT_TRUE(QString::fromStdString(cli).startsWith(QStringLiteral("[   Timestamp],")));
    EXPECT_GT(std::count(cli.begin(), cli.end(), '\n'), 2);  // samples, not only the header

    // A recorded trace: its runqueue lengths as schedlab-cli trace --rq-csv writes them.
    const std::string path = std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz";
    auto trace = std::make_shared<const sched::Trace>(sched::readFtraceText(path));
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    w.showTrace(trace, topo, QString::fromStdString(path));
    const QString tcsv = dir.filePath(QStringLiteral("trace-rq.csv"));
    err = QStringLiteral("pending");
    w.exportRqCsv(tcsv, [&](const QString& e) { err = e; });
    ASSERT_EQ(err, QString());
    QFile tf(tcsv);
    ASSERT_TRUE(tf.open(QIODevice::ReadOnly));
    EXPECT_EQ(tf.readAll().toStdString(), sched::traceRqLenCsv(*trace, topo));
    EXPECT_FALSE(w.exportRunTrace(dir.filePath(QStringLiteral("no.txt"))).isEmpty());  // a trace is not a run to export
}

namespace {

std::string sampleText() { return std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz"; }
std::string sampleDat() { return std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.dat"; }

/// The delta table's row `row` (1 = A, 2 = B) split into its values (the row's name left out).
QStringList deltaRow(const MainWindow& w, int row) {
    auto* l = w.findChild<QLabel*>(QStringLiteral("deltaTable"));
    if (!l) return {};
    const QStringList lines = l->text().split(QLatin1Char('\n'));
    if (row >= lines.size()) return {};
    QStringList v = lines[row].split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (!v.isEmpty()) v.removeFirst();
    return v;
}

/// The delta table's values for snapshot `s`: sched_waking, migrations, ctx switches, p50, p99.
QStringList deltaValues(const sched::Snapshot& s) {
    std::uint64_t mig = 0;
    for (std::size_t i = 0; i < s.migrations_by_cause.size(); ++i)
        if (i != std::size_t(sched::MigrationCause::fork)) mig += s.migrations_by_cause[i];
    return {QString::number(s.ttwu_count), QString::number(mig), QString::number(s.ctx_switches),
            QString::number(double(s.wakeup_latency.percentile(50)) / 1e3, 'f', 1),
            QString::number(double(s.wakeup_latency.percentile(99)) / 1e3, 'f', 1)};
}

}  // namespace

TEST(MainWindow, TwoTracesSideBySideAtOneCursorFromEachStartWithTheirAgreementsAndTheCompareTable) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    auto ta = std::make_shared<const sched::Trace>(sched::readTrace(sampleText()));
    auto tb = std::make_shared<const sched::Trace>(sched::readTrace(sampleDat()));
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    const QString pa = QString::fromStdString(sampleText()), pb = QString::fromStdString(sampleDat());
    // Without a trace A there is nothing to put B beside.
    EXPECT_FALSE(w.showTraceB(tb, pb).isEmpty());
    EXPECT_FALSE(w.traceBShown());
    w.showTrace(ta, topo, pa);
    EXPECT_FALSE(w.view(QStringLiteral("heatmapB"))->isVisible());
    ASSERT_EQ(w.showTraceB(tb, pb), QString());
    ASSERT_TRUE(w.traceBShown());
    EXPECT_TRUE(w.view(QStringLiteral("heatmapB"))->isVisible());
    const auto [a0, a1] = sched::traceSpan(*ta);
    const auto [b0, b1] = sched::traceSpan(*tb);
    ASSERT_NE(a0, b0);  // two recordings: different clocks, so the cursor is relative
    auto* ha = static_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapA")));
    auto* hb = static_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapB")));
    auto* rqB = static_cast<RqPlot*>(w.view(QStringLiteral("rqB")));
    auto* lat = static_cast<LatencyPlot*>(w.view(QStringLiteral("latency")));
    for (const std::int64_t rel : {std::int64_t(100'000'000), std::int64_t(250'000'000)}) {
        w.setTraceTime(a0 + rel);
        ASSERT_TRUE(ha->snapshot() && hb->snapshot());
        EXPECT_EQ(ha->snapshot()->now, a0 + rel);
        EXPECT_EQ(hb->snapshot()->now, b0 + rel);  // the same time since its own first event
        EXPECT_EQ(w.traceCursor(), rel);
        EXPECT_EQ(w.frame()->b, hb->snapshot());
        // The delta table under the heatmaps: traceSnapshot's counters of each trace.
        const sched::Snapshot sa = sched::traceSnapshot(*ta, topo, a0 + rel, "A");
        const sched::Snapshot sb = sched::traceSnapshot(*tb, topo, b0 + rel, "B");
        EXPECT_EQ(deltaRow(w, 1), deltaValues(sa)) << rel;
        EXPECT_EQ(deltaRow(w, 2), deltaValues(sb)) << rel;
        EXPECT_NE(sa.ttwu_count, sb.ttwu_count);
        // The latency view's table: B's column from trace B.
        QApplication::processEvents();  // the slow views refresh in the next turn of the event loop
        ASSERT_GE(lat->table()->columnCount(), 3);
        EXPECT_EQ(lat->table()->item(0, 1)->text(), LatencyPlot::formatUs(sb.wakeup_latency.percentile(50)));
        EXPECT_EQ(lat->table()->item(0, 0)->text(), LatencyPlot::formatUs(sa.wakeup_latency.percentile(50)));
    }
    EXPECT_TRUE(w.findChild<QLabel*>(QStringLiteral("deltaTable"))->text().contains(QStringLiteral("sched_waking")));
    // rq plot B (its tab shown) holds trace B's snapshot.
    ASSERT_EQ(w.exportView(rqB, QDir::temp().filePath(QStringLiteral("schedlab-rqB-test.png"))), QString());
    ASSERT_TRUE(rqB->snapshot());
    EXPECT_EQ(rqB->snapshot()->now, b0 + 250'000'000);
    // Past B's end: B stays at its end.
    w.setTraceTime(a1);
    EXPECT_EQ(hb->snapshot()->now, b1);
    w.setTraceTime(a0 + 100'000'000);
    // Both agreements replay; the caption names both files, the machine, both summaries and the cursor.
    bool agreed = false;
    w.whenAgreed([&] { agreed = true; });
    ASSERT_TRUE(waitFor([&] { return agreed; }));
    ASSERT_TRUE(w.agreement());
    ASSERT_TRUE(w.agreementB());
    const sched::AgreeReport cliB = sched::agree(*tb, topo, sched::Knobs{}, sched::AgreeOptions{});
    EXPECT_EQ(w.agreementB()->decisions, cliB.decisions);
    EXPECT_EQ(w.agreementB()->agree, cliB.agree);
    // The counters: schedlab's final reasons on each trace's decisions up to the cursor.
    ASSERT_TRUE(w.frame() && w.frame()->b);
    EXPECT_FALSE(w.frame()->a->reasons.empty());
    EXPECT_EQ(w.frame()->a->reasons, sched::AgreeReasonIndex(*w.agreement()).upTo(w.frame()->a->now));
    EXPECT_EQ(w.frame()->b->reasons, sched::AgreeReasonIndex(*w.agreementB()).upTo(w.frame()->b->now));
    EXPECT_FALSE(w.frame()->b->reasons.empty());
    auto* counters = static_cast<CountersPlot*>(w.view(QStringLiteral("counters")));
    EXPECT_EQ(counters->reasonsTitle(), QStringLiteral("schedlab's final reason on the trace's decisions"));
    const QString cap = w.caption();
    for (const QString& part :
         {QStringLiteral("A: recorded trace trace.txt.gz"), QStringLiteral("B: recorded trace trace.dat"), QStringLiteral("qemu-2s2c2t (8 CPUs)"),
          QStringLiteral("cursor t = 100.000 ms since each trace's first event"), w.agreementSummary(), w.agreementSummaryB()})
        EXPECT_TRUE(cap.contains(part)) << part.toStdString() << " in " << cap.toStdString();
    EXPECT_NE(w.agreementSummary(), w.agreementSummaryB());
    // B's disagreements in the timeline's second lane, on A's clock.
    TraceTimeline* tl = w.traceTimeline();
    ASSERT_TRUE(tl->hasSecondLane());
    EXPECT_EQ(tl->secondLane().size(), cliB.decisions - cliB.agree);
    EXPECT_GE(tl->secondLane().front().time, a0);
    // The index of B: the same state as a replay from its start.
    ASSERT_TRUE(waitFor([&] { return w.traceIndexedB(); }));
    w.setTraceTime(a0 + 150'000'000);
    const sched::Snapshot plainB = sched::traceSnapshot(*tb, topo, b0 + 150'000'000, "B");
    for (std::size_t c = 0; c < plainB.cpus.size(); ++c) {
        EXPECT_EQ(hb->snapshot()->cpus[c].curr_pid, plainB.cpus[c].curr_pid) << c;
        EXPECT_EQ(hb->snapshot()->cpus[c].nr_running, plainB.cpus[c].nr_running) << c;
    }
    // "Copy A/B table as text": schedlab-cli compare-traces' table.
    QString copied;
    QObject::connect(&w, &MainWindow::compareTextCopied, [&](const QString& t) { copied = t; });
    w.copyCompareText();
    ASSERT_TRUE(waitFor([&] { return !copied.isEmpty(); }));
    EXPECT_EQ(copied.toStdString(), sched::traceCompareTable(*ta, *tb, topo, sched::Knobs{}, sched::Knobs{}));
    EXPECT_EQ(QApplication::clipboard()->text(), copied);

    // A trace B with more CPUs than A's machine is refused with one line; the B shown stays.
    const std::string wide =
        "# tracer: nop\n#\n"
        "            bash-100   [015] d..2.   1.000000: sched_waking: comm=cat pid=200 prio=120 target_cpu=015\n"
        "            bash-100   [015] d..2.   1.000010: sched_wakeup: comm=cat pid=200 prio=120 target_cpu=015\n";
    auto tw = std::make_shared<const sched::Trace>(sched::parseFtraceText(wide, "wide.txt"));
    ASSERT_GT(tw->nr_cpus, 8);
    const QString why = w.showTraceB(tw, QStringLiteral("wide.txt"));
    EXPECT_TRUE(why.startsWith(QStringLiteral("wide.txt: has %1 CPUs, more than").arg(tw->nr_cpus))) << why.toStdString();
    EXPECT_FALSE(why.contains(QLatin1Char('\n')));
    EXPECT_EQ(w.traceB(), tb);
    // Leaving trace mode clears both sides.
    w.openDefault(o);
    EXPECT_FALSE(w.traceMode());
    EXPECT_FALSE(w.traceBShown());
    EXPECT_FALSE(w.agreementB());
}

TEST(MainWindow, ASimulationBesideATraceShowsItsFrameAtTheCursorsTimeSinceTheTracesStart) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    auto ta = std::make_shared<const sched::Trace>(sched::readTrace(sampleText()));
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    w.showTrace(ta, topo, QString::fromStdString(sampleText()));
    const auto [a0, a1] = sched::traceSpan(*ta);
    const sched::Scenario s = sched::parseScenario(
        nlohmann::json::parse(R"({"topology":"qemu-2s2c2t","seed":7,"workloads":[{"type":"hackbench","groups":2,"fds":4,"loops":2000}]})"),
        "beside.json", ".");
    // Another machine (not the trace's name, another CPU count) is refused with one line.
    const sched::Scenario other = sched::parseScenario(
        nlohmann::json::parse(R"({"topology":"x86-20c40t","seed":7,"workloads":[{"type":"hackbench","groups":2,"fds":4,"loops":20}]})"), "other.json",
        ".");
    const QString why = w.showSimulationBeside(other, QStringLiteral("other.json"));
    EXPECT_TRUE(why.startsWith(QStringLiteral("other.json: topology x86-20c40t (40 CPUs) is not the trace's qemu-2s2c2t (8 CPUs)")))
        << why.toStdString();
    EXPECT_FALSE(w.besideSimulation());
    ASSERT_EQ(w.showSimulationBeside(s, QStringLiteral("beside.json")), QString());
    ASSERT_TRUE(w.besideSimulation());
    auto* hb = static_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapB")));
    EXPECT_TRUE(hb->isVisible());
    // What a direct run of the scenario has done by `ns`.
    auto direct = [&](std::int64_t ns) {
        sched::SimOptions so;
        sched::Simulation sim(s, s.variants.front().knobs, "x", so, s.seed);
        sim.advance(ns);
        return sim.snapshot();
    };
    // Forwards, then backwards (a restart from t = 0).
    for (const std::int64_t rel : {std::int64_t(3'000'000), std::int64_t(6'000'000), std::int64_t(2'000'000)}) {
        w.setTraceTime(a0 + rel);
        EXPECT_EQ(w.besideTarget(), rel);
        bool ready = false;
        w.whenBesideReady([&] { ready = true; });
        ASSERT_TRUE(waitFor([&] { return ready; })) << rel;
        ASSERT_TRUE(hb->snapshot());
        EXPECT_EQ(hb->snapshot()->now, rel);
        EXPECT_EQ(hb->snapshot()->label, "simulated");
        const sched::Snapshot d = direct(rel);
        EXPECT_EQ(hb->snapshot()->ttwu_count, d.ttwu_count) << rel;
        EXPECT_EQ(hb->snapshot()->events, d.events) << rel;
        EXPECT_GT(d.ttwu_count, 0u);
        EXPECT_EQ(deltaRow(w, 2).value(0), QString::number(d.ttwu_count));
        EXPECT_EQ(static_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapA")))->snapshot()->now, a0 + rel);
    }
    EXPECT_TRUE(
        w.caption().contains(QStringLiteral("B: simulated beside.json (qemu-2s2c2t, 8 CPUs), knobs baseline, seed 7, t = 2.000 ms simulated")))
        << w.caption().toStdString();
    // The toolbar's clock: the time since the trace's first event, and the trace's own clock.
    EXPECT_EQ(w.findChild<QLabel*>(QStringLiteral("simClock"))->text(),
              QStringLiteral("t = 2.000 ms (trace clock %1 s)").arg(double(a0 + 2'000'000) / 1e9, 0, 'f', 6));
    // A second trace replaces the simulation; a scenario leaves trace mode.
    auto tb = std::make_shared<const sched::Trace>(sched::readTrace(sampleDat()));
    ASSERT_EQ(w.showTraceB(tb, QString::fromStdString(sampleDat())), QString());
    EXPECT_FALSE(w.besideSimulation());
    ASSERT_EQ(w.showSimulationBeside(s, QStringLiteral("beside.json")), QString());
    EXPECT_FALSE(w.traceBShown());
    w.openDefault(o);
    EXPECT_FALSE(w.besideSimulation());
    // The worker runs the scenario again (not stopped at the old cursor).
    bool reached = false;
    w.runUntil(4'000'000, [&] { reached = true; });
    ASSERT_TRUE(waitFor([&] { return reached; }));
    ASSERT_TRUE(w.frame()->b);
    EXPECT_EQ(w.frame()->a->now, 4'000'000);
}

TEST(MainWindow, ASimulationBesideATraceRunsTheChosenVariant) {
    MainWindow w;
    StartOptions o;
    o.autoplay = false;
    w.openDefault(o);
    w.show();
    auto ta = std::make_shared<const sched::Trace>(sched::readTrace(sampleText()));
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    w.showTrace(ta, topo, QString::fromStdString(sampleText()));
    const sched::Scenario s = sched::parseScenario(
        nlohmann::json::parse(R"({"topology":"qemu-2s2c2t","seed":3,"workloads":[{"type":"hackbench","groups":2,"fds":4,"loops":2000}],
                                  "variants":{"base":"baseline","patch":"idle-delay-v2"}})"),
        "two.json", ".");
    const QString why = w.showSimulationBeside(s, QStringLiteral("two.json"), QStringLiteral("nope"));
    EXPECT_EQ(why, QStringLiteral("two.json: no variant 'nope' (the scenario's: base, patch)")) << why.toStdString();
    EXPECT_FALSE(w.besideSimulation());
    ASSERT_EQ(w.showSimulationBeside(s, QStringLiteral("two.json"), QStringLiteral("patch")), QString());
    const auto [a0, a1] = sched::traceSpan(*ta);
    w.setTraceTime(a0 + 3'000'000);
    bool ready = false;
    w.whenBesideReady([&] { ready = true; });
    ASSERT_TRUE(waitFor([&] { return ready; }));
    auto* hb = static_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapB")));
    ASSERT_TRUE(hb->snapshot());
    // The patch's run, as a direct run of that variant gives it.
    sched::Simulation direct(s, s.variants[1].knobs, "x", sched::SimOptions{}, s.seed);
    direct.advance(3'000'000);
    const sched::Snapshot d = direct.snapshot();
    EXPECT_EQ(hb->snapshot()->knobs, d.knobs);
    EXPECT_EQ(hb->snapshot()->ttwu_count, d.ttwu_count);
    sched::Simulation first(s, s.variants[0].knobs, "x", sched::SimOptions{}, s.seed);
    EXPECT_NE(first.snapshot().knobs, d.knobs);
    EXPECT_TRUE(w.caption().contains(QStringLiteral("knobs %1").arg(QString::fromStdString(d.knobs)))) << w.caption().toStdString();
}

// Opens the scenario `json` (named `name`) paused in `w`, shows it and runs it to 3 ms.
bool openAndRunTo3ms(MainWindow& w, const char* json, const char* name) {
    const sched::Scenario s = sched::parseScenario(nlohmann::json::parse(json), name, ".");
    StartOptions o;
    o.autoplay = false;
    w.openScenario(s, QString::fromLatin1(name), o);
    w.show();
    bool reached = false;
    w.runUntil(3000000, [&] { reached = true; });
    return waitFor([&] { return reached; });
}

// A pinned workload (taskset -c): the heatmaps name the mask in their titles and dim the other
// CPUs; the caption's command says taskset.
TEST(MainWindow, APinnedRunNamesItsMaskAndDimsTheOtherCpus) {
    MainWindow w;
    ASSERT_TRUE(openAndRunTo3ms(
        w, R"({"topology":"i7-4790","seed":2,"workloads":[{"type":"hackbench","groups":1,"fds":4,"loops":2000,"cpus":"2-5"}]})", "pinned.json"));
    auto* heat = qobject_cast<TopologyHeatmap*>(w.view(QStringLiteral("heatmapA")));
    ASSERT_NE(heat, nullptr);
    EXPECT_TRUE(heat->title().endsWith(QStringLiteral(" · taskset -c 2-5 (other CPUs dimmed)"))) << heat->title().toStdString();
    std::string marks;
    for (const auto& v : w.frame()->a->cpus) marks += v.outside_masks ? 'x' : '.';
    EXPECT_EQ(marks, "xx....xx");
    EXPECT_TRUE(w.caption().contains(QStringLiteral("taskset -c 2-5 hackbench"))) << w.caption().toStdString();
    // A pinned A/B run shows A's and B's runqueue maps side by side, each with the 4 pinned CPUs as its rows.
    auto* dRq = w.findChild<QDockWidget*>(QStringLiteral("dockRq"));
    auto* dRqB = w.findChild<QDockWidget*>(QStringLiteral("dockRqB"));
    ASSERT_TRUE(dRq && dRqB);
    EXPECT_FALSE(w.tabifiedDockWidgets(dRq).contains(dRqB));
    EXPECT_TRUE(dRqB->isVisible());
    auto* rq = qobject_cast<RqPlot*>(w.view(QStringLiteral("rq")));
    ASSERT_NE(rq, nullptr);
    rq->setSnapshot(w.frame()->a);
    auto* map = qobject_cast<QCPColorMap*>(rq->mapPlot()->plottable(0));
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(map->data()->valueSize(), 4);
    EXPECT_EQ(rq->mapPlot()->yAxis->label(), QStringLiteral("CPU (taskset)"));
    // Unpinned views go back to tabs.
    w.setRqSideBySide(false);
    EXPECT_TRUE(w.tabifiedDockWidgets(dRq).contains(dRqB));
}

TEST(MainWindow, PickingProxyExecutionStartsBothSidesAgainFromTimeZero) {
    // proxy_exec is a boot parameter: picking the preset mid-run restarts the A/B run with it.
    MainWindow w;
    ASSERT_TRUE(
        openAndRunTo3ms(w, R"({"topology":"i7-4790","seed":2,"workloads":[{"type":"hackbench","groups":1,"fds":4,"loops":100000}]})", "px.json"));
    ASSERT_GE(w.frame()->a->now, 3000000);
    auto* panel = w.findChild<KnobPanel*>();
    ASSERT_NE(panel, nullptr);
    auto* combo = panel->findChild<QComboBox*>(QStringLiteral("presetB"));
    ASSERT_NE(combo, nullptr);
    combo->setCurrentText(QStringLiteral("proxy-exec-v6"));
    emit combo->textActivated(combo->currentText());  // as a user's pick
    ASSERT_TRUE(
        waitFor([&] { return w.frame() && w.frame()->b && w.frame()->b->now < 3000000 && w.frame()->b->knobs.find("proxy") != std::string::npos; }));
    EXPECT_LT(w.frame()->a->now, 3000000);  // A started again too
}

TEST(MainWindow, TheCompareTableCountsMutexContentionOfAPipeRunAndNoneOfASocketRun) {
    for (const bool pipe : {true, false}) {
        const sched::Scenario s = sched::parseScenario(
            nlohmann::json{
                {"topology", "i7-4790"},
                {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 2}, {"fds", 10}, {"loops", 2000}, {"pipe", pipe}}})}},
            "mx.json", ".");
        MainWindow w;
        StartOptions o;
        o.autoplay = false;
        w.openScenario(s, QStringLiteral("mx.json"), o);
        w.show();
        bool reached = false;
        w.runUntil(3000000, [&] { reached = true; });
        ASSERT_TRUE(waitFor([&] { return reached; }));
        const QString table = w.findChild<QLabel*>(QStringLiteral("deltaTable"))->text();
        EXPECT_EQ(table.contains(QStringLiteral("mutex contended %")), pipe) << table.toStdString();
        if (!pipe) continue;
        // A's figure is the workload's counters' share.
        double taken = 0, contended = 0;
        for (const auto& r : w.frame()->a->reports)
            for (const auto& c : r.counters) {
                if (c.key == "mutex_acquisitions") taken += c.value;
                if (c.key == "mutex_contended") contended += c.value;
            }
        ASSERT_GT(taken, 0);
        EXPECT_GT(contended, 0);
        EXPECT_TRUE(deltaRow(w, 1).contains(QString::number(100.0 * contended / taken, 'f', 1))) << table.toStdString();
    }
}

TEST(MainWindow, SavedScenarioReadsBackWithBothSidesKnobsAndTheSeed) {
    const sched::Scenario s = smallScenario();
    sched::Knobs a = sched::Knobs::preset("baseline");
    sched::Knobs b = sched::Knobs::preset("idle-delay-v2");
    b.idle_delay_max_running = 3;  // a knob moved off its preset
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("saved.json")).toStdString();
    ASSERT_EQ(saveFileAtomic(QString::fromStdString(path), scenarioWithVariants(s, a, &b, 77)), QString());
    const sched::Scenario back = sched::loadScenario(path);
    ASSERT_EQ(back.variants.size(), 2u);
    EXPECT_EQ(back.seed, 77u);
    EXPECT_EQ(back.variants[0].knobs.diffFromBaseline(), a.diffFromBaseline());
    EXPECT_EQ(back.variants[1].knobs.diffFromBaseline(), b.diffFromBaseline());
    EXPECT_EQ(back.variants[1].knobs.idle_delay_max_running, 3);
    EXPECT_EQ(back.workloads.size(), s.workloads.size());
    // A alone: one variant.
    const sched::Scenario one = sched::parseScenario(nlohmann::json::parse(scenarioWithVariants(s, b, nullptr, 5).toStdString()), "x.json", ".");
    ASSERT_EQ(one.variants.size(), 1u);
    EXPECT_EQ(one.variants[0].knobs.idle_delay_max_running, 3);
}

TEST(MainWindow, AJobBehindAProgressDialogReportsItsResultOrItsCancel) {
    QWidget parent;
    // Runs to its end: the result comes back on the GUI thread, not cancelled.
    int got = -1;
    bool cancelled = true;
    runWithProgress<int>(
        &parent, QStringLiteral("job"), 10,
        [](JobProgress& p) {
            for (int i = 0; i <= 10; ++i) p.value = i;
            return 42;
        },
        [&](int r, bool c) {
            got = r;
            cancelled = c;
        });
    ASSERT_TRUE(waitFor([&] { return got >= 0; }));
    EXPECT_EQ(got, 42);
    EXPECT_FALSE(cancelled);
    // Cancel pressed: the job sees the flag and stops; done hears it was cancelled.
    got = -1;
    QWidget parent2;  // (the first job's dialog may not be deleted yet)
    runWithProgress<int>(
        &parent2, QStringLiteral("job"), 0,
        [](JobProgress& p) {
            for (int i = 0; i < 20000 && !p.cancel.load(); ++i) QThread::msleep(1);  // bounded: a failing test still ends
            return p.cancel.load() ? 7 : 8;
        },
        [&](int r, bool c) {
            got = r;
            cancelled = c;
        });
    auto* dialog = parent2.findChild<QProgressDialog*>();
    ASSERT_NE(dialog, nullptr);
    auto* button = dialog->findChild<QPushButton*>();
    ASSERT_NE(button, nullptr);
    button->click();  // Cancel, as a user presses it
    ASSERT_TRUE(waitFor([&] { return got >= 0; }));
    EXPECT_EQ(got, 7);
    EXPECT_TRUE(cancelled);
}

TEST(MainWindow, RecentFilesAreNewestFirstOnceEachAtMostEightAndPickable) {
    QSettings().remove(QStringLiteral("recentFiles"));
    RecentMenu m(QStringLiteral("recent"), nullptr);
    EXPECT_FALSE(m.isEnabled());  // nothing yet
    for (int i = 0; i < 10; ++i) m.add(QStringLiteral("/x/s%1.json").arg(i));
    m.add(QStringLiteral("/x/s5.json"));  // again: moves to the front, not twice
    const QStringList r = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    ASSERT_EQ(r.size(), RecentMenu::kMax);
    EXPECT_EQ(r.front(), QStringLiteral("/x/s5.json"));
    EXPECT_EQ(r.count(QStringLiteral("/x/s5.json")), 1);
    EXPECT_EQ(r.back(), QStringLiteral("/x/s2.json"));  // s0 and s1 dropped off
    ASSERT_EQ(m.actions().size(), RecentMenu::kMax);
    EXPECT_EQ(m.actions().front()->text(), QStringLiteral("s5.json"));
    QString picked;
    QObject::connect(&m, &RecentMenu::picked, [&](const QString& p) { picked = p; });
    m.actions()[1]->trigger();
    EXPECT_EQ(picked, QStringLiteral("/x/s9.json"));
    RecentMenu again(QStringLiteral("recent"), nullptr);  // the next run's window
    EXPECT_EQ(again.actions().size(), RecentMenu::kMax);
    QSettings().remove(QStringLiteral("recentFiles"));
}

TEST(KnobPanel, ControlsMapToTheNamedKnobsOfTheEditedSide) {
    KnobPanel panel;
    panel.setKnobs(sched::Knobs::preset("baseline"), sched::Knobs::preset("idle-delay-v2"));
    std::vector<std::pair<int, sched::Knobs>> seen;
    QObject::connect(&panel, &KnobPanel::knobsChanged, [&](int side, const sched::Knobs& k) { seen.emplace_back(side, k); });
    // The controls show B (idle-delay-v2: 1 ms, nr_running <= 4).
    ASSERT_EQ(panel.editedSide(), 1);
    EXPECT_EQ(panel.idleDelaySlider()->value(), 10);
    EXPECT_EQ(panel.maxRunningSlider()->value(), 4);
    // "No limit" is -1; 2.5 ms.
    panel.maxRunningSlider()->setValue(KnobPanel::kNoLimit);
    panel.idleDelaySlider()->setValue(25);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen.back().first, 1);
    EXPECT_EQ(seen.back().second.idle_delay_max_running, -1);
    EXPECT_EQ(seen.back().second.idle_delay_ns, 2500000);
    EXPECT_EQ(panel.knobs(0), sched::Knobs::preset("baseline"));  // A untouched
    // A feature toggle on A.
    panel.setEditedSide(0);
    EXPECT_EQ(panel.idleDelaySlider()->value(), 0);
    auto* cb = panel.findChild<QCheckBox*>(QStringLiteral("SIS_UTIL"));
    ASSERT_NE(cb, nullptr);
    EXPECT_TRUE(cb->isChecked());
    cb->setChecked(false);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen.back().first, 0);
    EXPECT_FALSE(seen.back().second.SIS_UTIL);
    EXPECT_EQ(seen.back().second.diffFromBaseline(), std::vector<std::string>{"SIS_UTIL=0"});
    // Picking a preset replaces the side's knobs.
    panel.presetCombo(0)->textActivated(QStringLiteral("claim-wakeup"));
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_EQ(seen.back().second.claim, sched::ClaimMode::Sis);
    EXPECT_TRUE(seen.back().second.SIS_UTIL);
}

int main(int argc, char** argv) { return schedlab::test::runWidgetTests(argc, argv); }

// The frame budget: painting at 60 frames a second costs A and B a core's worth on a 2-core
// machine, so as fast as possible there gets 30; paced runs, and machines with cores to
// spare for the GUI thread and the heatmaps' pool, keep 60.
TEST(SimWorker, FramesAre30ASecondOnlyWhenRunningFlatOutOnFewCores) {
    EXPECT_EQ(SimWorker::frameIntervalNs(0, 2), 33'333'333);
    EXPECT_EQ(SimWorker::frameIntervalNs(0, 3), 33'333'333);
    EXPECT_EQ(SimWorker::frameIntervalNs(0, 4), 16'666'667);
    EXPECT_EQ(SimWorker::frameIntervalNs(1.0, 2), 16'666'667);   // real time
    EXPECT_EQ(SimWorker::frameIntervalNs(1e-3, 2), 16'666'667);  // slow motion
}

namespace {

/// The image of the flow view (its full size, as the dock's scroll area gives it).
QImage grabFlow(FlowView* v) { return v->grab().toImage(); }

/// `w` on the small scenario, paused, run to simulated time `ns` and shown.
void runSmallTo(MainWindow& w, qint64 ns) {
    StartOptions o;
    o.autoplay = false;
    w.openScenario(smallScenario(), QStringLiteral("small.json"), o);
    w.show();
    bool reached = false;
    w.runUntil(ns, [&] { reached = true; });
    ASSERT_TRUE(waitFor([&] { return reached; }));
}

}  // namespace

TEST(FlowView, CountsFollowTheFramesAndTheTracedWakeupIsLitInStepWithTheInspector) {
    MainWindow w;
    runSmallTo(w, 3000000);
    if (HasFatalFailure()) return;
    FlowView* v = w.flowView();
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(w.view(QStringLiteral("flow")), v);
    ASSERT_TRUE(waitFor([&] { return v->rows().size() > 5; }));
    const auto& flow = sched::DecisionFlow::get();
    // The rows drawn: every node a decision of A or B reached, each once.
    const auto& fa = w.frame()->a->flow;
    const auto& fb = w.frame()->b->flow;
    for (std::size_t n = 0; n < flow.nodes().size(); ++n) {
        if (fa.node(int(n)) || fb.node(int(n))) {
            EXPECT_FALSE(v->rowRect(int(n)).isEmpty()) << flow.nodes()[n].key;
        }
    }
    // B (idle-delay-v2) leaves at SIS_TARGET_IDLE more than A: its connector there is wider.
    const int target = flow.exitOf(sched::Stage2::SIS_TARGET_IDLE);
    EXPECT_GT(v->connectorWidth(target, 1), v->connectorWidth(target, 0));
    EXPECT_TRUE(v->toolTipFor(target).contains(QStringLiteral("available_idle_cpu(target)")));

    // Step into the next wakeup: the inspector shows it and the flow view lights its path.
    bool traced = false;
    w.stepWakeupThen([&] { traced = true; });
    ASSERT_TRUE(waitFor([&] { return traced; }));
    ASSERT_TRUE(w.frame()->traced);
    const std::vector<int> lit = flow.lit(w.frame()->traced->d);
    ASSERT_TRUE(waitFor([&] { return v->litNodes() == lit; }));
    // Pixels: a lit box is filled with the lit colour, an unlit one is not.
    const QImage img = grabFlow(v);
    int litBox = -1, darkBox = -1;
    for (int n : v->rows()) {
        const bool on = std::find(lit.begin(), lit.end(), n) != lit.end();
        if (on && flow.nodes()[std::size_t(n)].kind != sched::FlowKind::Entry && litBox < 0) litBox = n;
        if (!on && flow.nodes()[std::size_t(n)].kind == sched::FlowKind::Exit && darkBox < 0) darkBox = n;
    }
    ASSERT_GE(litBox, 0);
    ASSERT_GE(darkBox, 0);
    const QRect lb = v->boxRect(litBox), db = v->boxRect(darkBox);
    const QColor litPx = img.pixelColor(lb.right() - 3, lb.center().y());
    EXPECT_EQ(litPx, QColor(0xFF, 0xD5, 0x4F)) << flow.nodes()[std::size_t(litBox)].key;
    EXPECT_NE(img.pixelColor(db.right() - 3, db.center().y()), QColor(0xFF, 0xD5, 0x4F));
    // A decision shown in the inspector (picked in its list) lights its own path.
    const auto& recent = w.frame()->a->decisions;
    ASSERT_FALSE(recent.empty());
    auto other = std::find_if(recent.begin(), recent.end(), [&](const sched::DecisionRecord& r) { return flow.lit(r.d) != lit; });
    ASSERT_NE(other, recent.end());
    w.findChild<DecisionInspector*>()->show(*other);
    EXPECT_EQ(v->litNodes(), flow.lit(other->d));
}

TEST(FlowView, AClickedRowListsTheDecisionsBehindItsEdgeInTheInspector) {
    MainWindow w;
    runSmallTo(w, 3000000);
    if (HasFatalFailure()) return;
    FlowView* v = w.flowView();
    const auto& flow = sched::DecisionFlow::get();
    // The busiest exit of select_idle_sibling() on side A.
    int pick = -1;
    for (int c : flow.children(flow.node("select_idle_sibling")))
        if (flow.nodes()[std::size_t(c)].kind == sched::FlowKind::Exit && (pick < 0 || w.frame()->a->flow.node(c) > w.frame()->a->flow.node(pick)))
            pick = c;
    ASSERT_GE(pick, 0);
    ASSERT_TRUE(waitFor([&] { return !v->rowRect(pick).isEmpty(); }));
    int clicked = -1;
    QObject::connect(v, &FlowView::edgeClicked, [&](int e) { clicked = e; });
    QMouseEvent press(QEvent::MouseButtonPress, QPointF(v->boxRect(pick).center()), v->mapToGlobal(v->boxRect(pick).center()), Qt::LeftButton,
                      Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(v, &press);
    const int edge = flow.edge(flow.nodes()[std::size_t(pick)].parent, pick);
    EXPECT_EQ(clicked, edge);
    EXPECT_EQ(w.flowEdgeFilter(), edge);
    QListWidget* list = w.findChild<DecisionInspector*>()->list();
    // Every decision listed (once the list is refreshed) took that edge: its final reason is the clicked exit.
    const QString code = QString::fromStdString(flow.nodes()[std::size_t(pick)].key);
    auto allThrough = [&] {
        int n = 0;
        for (int i = 0; i < list->count(); ++i) n += list->item(i)->text().contains(code);
        return list->count() > 0 && n == list->count();
    };
    EXPECT_TRUE(waitFor(allThrough, 5000));
    // Clicked again: all decisions again.
    w.filterDecisionsByEdge(edge);
    EXPECT_EQ(w.flowEdgeFilter(), -1);
}

TEST(FlowView, LayoutAtTwoWindowSizesKeepsEveryRowWholeAndApart) {
    for (const QSize size : {QSize(1280, 800), QSize(1920, 1080)}) {
        MainWindow w;
        w.resize(size);
        runSmallTo(w, 2000000);
        if (HasFatalFailure()) return;
        FlowView* v = w.flowView();
        v->setShowAll(true);  // every node of the graph
        ASSERT_EQ(v->rows().size(), sched::DecisionFlow::get().nodes().size());
        auto* dock = w.findChild<QDockWidget*>(QStringLiteral("dockFlow"));
        ASSERT_NE(dock, nullptr);
        dock->raise();  // its tab, beside the knobs
        // The scroll area gives the view at least its size hint: nothing is cut.
        EXPECT_TRUE(waitFor([&] { return v->isVisible() && v->width() >= v->sizeHint().width() && v->height() >= v->sizeHint().height(); }, 5000))
            << v->width() << "x" << v->height() << " for " << v->sizeHint().width() << "x" << v->sizeHint().height();
        const QFontMetrics fm(v->font());
        int lastBottom = -1;
        for (int n : v->rows()) {
            const QRect r = v->rowRect(n), b = v->boxRect(n);
            EXPECT_GE(r.top(), lastBottom) << "rows overlap";
            lastBottom = r.bottom() + 1;
            EXPECT_TRUE(r.contains(b)) << sched::DecisionFlow::get().nodes()[std::size_t(n)].key;
            EXPECT_GE(b.width(), fm.horizontalAdvance(QString::fromStdString(sched::DecisionFlow::get().nodes()[std::size_t(n)].label)));
            EXPECT_LT(b.right(), v->sizeHint().width());
        }
        EXPECT_LE(lastBottom, v->sizeHint().height());
    }
}

TEST(FlowView, TheLastMillisecondsCountOnlyTheNewestDecisionsInThatWindow) {
    MainWindow w;
    runSmallTo(w, 4000000);
    if (HasFatalFailure()) return;
    FlowView* v = w.flowView();
    ASSERT_TRUE(waitFor([&] { return v->counts(0).total == w.frame()->a->flow.total; }));
    w.setFlowWindow(1000000);  // the last 1 ms
    const auto& a = *w.frame()->a;
    std::uint64_t inWindow = 0;
    for (const auto& r : a.decisions) inWindow += r.time >= a.now - 1000000;
    ASSERT_GT(inWindow, 0u);
    EXPECT_EQ(v->counts(0).total, inWindow);
    EXPECT_LT(v->counts(0).total, a.flow.total);
    w.setFlowWindow(0);
    EXPECT_EQ(v->counts(0).total, a.flow.total);
}

TEST(FlowView, ARecordedTraceShowsSchedlabsDecisionsWithTheDisagreementsMarked) {
    MainWindow w;
    auto trace = std::make_shared<const sched::Trace>(
        sched::readTrace(std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz"));
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    w.show();
    w.showTrace(trace, topo, QStringLiteral("trace.txt.gz"));
    bool agreed = false;
    w.whenAgreed([&] { agreed = true; });
    ASSERT_TRUE(waitFor([&] { return agreed; }, 120000));
    ASSERT_TRUE(w.agreement());
    FlowView* v = w.flowView();
    ASSERT_TRUE(waitFor([&] { return v->counts(0).total > 0; }, 10000));
    // One count per replayed decision; the disagreements are the rows' ✕ marks, and the first one opened is lit.
    std::uint64_t withDecision = 0, disagree = 0;
    for (const auto& row : w.agreement()->rows) {
        withDecision += row.decision != nullptr;
        disagree += row.decision && row.sim != row.kernel;
    }
    EXPECT_EQ(v->counts(0).total, withDecision);
    EXPECT_EQ(withDecision, w.agreement()->decisions);
    ASSERT_GT(disagree, 0u);
    ASSERT_TRUE(w.openDisagreement(0));
    const auto* row = w.disagreement(0);
    ASSERT_TRUE(row && row->decision);
    EXPECT_EQ(v->litNodes(), sched::DecisionFlow::get().lit(*row->decision));
    EXPECT_TRUE(v->toolTipFor(sched::DecisionFlow::get().node("select_idle_sibling")).contains(QStringLiteral("disagree with the kernel")));
}

TEST(KnobPanel, TheFollowUpPatchesAreGroupedKnobs) {
    KnobPanel panel;
    panel.setKnobs(sched::Knobs::preset("baseline"), sched::Knobs::preset("sis-current"));
    auto* group = panel.findChild<QGroupBox*>(QStringLiteral("followUps"));
    ASSERT_NE(group, nullptr);
    // Every part of every follow-up patch is a control in the group, with the patch's date in its tooltip.
    for (const char* name : {"WA_ALMOST_IDLE_PREV", "ttwu_queue_l2c", "migration_ratelimit_adaptive", "UTIL_FITS_CAPACITY", "SELECT_BIAS_PREV",
                             "SIS_CURRENT", "SIS_CACHE"}) {
        auto* cb = group->findChild<QCheckBox*>(QString::fromLatin1(name));
        ASSERT_NE(cb, nullptr) << name;
        EXPECT_TRUE(cb->toolTip().contains(QStringLiteral("2023-"))) << name;
    }
    panel.setEditedSide(1);
    EXPECT_TRUE(group->findChild<QCheckBox*>(QStringLiteral("SIS_CURRENT"))->isChecked()) << "B's preset shows";
    int changes = 0;
    QObject::connect(&panel, &KnobPanel::knobsChanged, [&](int side, const sched::Knobs&) { changes += side == 1; });
    group->findChild<QCheckBox*>(QStringLiteral("UTIL_FITS_CAPACITY"))->click();
    EXPECT_TRUE(panel.knobs(1).UTIL_FITS_CAPACITY);
    EXPECT_TRUE(panel.knobs(1).SIS_CURRENT);
    auto* window = group->findChild<QDoubleSpinBox*>(QStringLiteral("migration_ratelimit_ns"));
    ASSERT_NE(window, nullptr);
    window->setValue(2.0);
    EXPECT_EQ(panel.knobs(1).migration_ratelimit_ns, 2000000);
    auto* load = group->findChild<QSpinBox*>(QStringLiteral("almost_idle_load"));
    ASSERT_NE(load, nullptr);
    EXPECT_EQ(load->value(), 5);
    load->setValue(8);
    EXPECT_EQ(panel.knobs(1).almost_idle_load, 8);
    // E: the tg->load_avg ratelimit window, off in both presets.
    auto* tg = group->findChild<QDoubleSpinBox*>(QStringLiteral("tg_load_avg_ratelimit_ns"));
    ASSERT_NE(tg, nullptr);
    EXPECT_EQ(tg->value(), 0.0);
    EXPECT_TRUE(tg->toolTip().contains(QStringLiteral("2023-08-23")));
    tg->setValue(1.0);
    EXPECT_EQ(panel.knobs(1).tg_load_avg_ratelimit_ns, 1000000);
    EXPECT_EQ(changes, 4);
    EXPECT_FALSE(panel.knobs(0).UTIL_FITS_CAPACITY) << "A untouched";
    // The caption's description names the parts.
    const std::string d = panel.knobs(1).describe();
    for (const char* part :
         {"sis-current", "UTIL_FITS_CAPACITY=1", "migration_ratelimit_ns=2000000", "almost_idle_load=8", "tg_load_avg_ratelimit_ns=1000000"})
        EXPECT_NE(d.find(part), std::string::npos) << part << " in " << d;
}
