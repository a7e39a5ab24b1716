// SPDX-License-Identifier: GPL-2.0-or-later
// main_window_trace.cpp: the window's trace mode (see main_window.h): a recorded trace as side A
// with its timeline and disagreements, and side B beside it, a second trace or a simulation. The
// traces and their background work are two TraceSessions; this file only shows them.
#include "main_window.h"

#include "counters_plot.h"
#include "decision_inspector.h"
#include "rq_plot.h"
#include "text_util.h"
#include "topology_heatmap.h"
#include "trace_bar.h"
#include "trace_session.h"
#include "trace_timeline.h"

#include "replay/trace_compare.h"
#include "topology/topology_json.h"
#include "util/input_error.h"
#include "util/install_paths.h"

#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QProgressDialog>
#include <QStatusBar>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <fmt/format.h>

#include <algorithm>

namespace schedlab {

const TraceSide& MainWindow::traceA() const { return m_ta->side(); }
const TraceSide& MainWindow::traceSideB() const { return m_tb->side(); }
bool MainWindow::traceMode() const { return m_ta->isOpen(); }
bool MainWindow::traceBShown() const { return m_tb->isOpen(); }
std::shared_ptr<const sched::Trace> MainWindow::traceB() const { return m_tb->side().trace; }
std::shared_ptr<const sched::AgreeReport> MainWindow::agreementB() const { return m_tb->side().agree; }
bool MainWindow::agreementBRunning() const { return m_tb->side().agreeRunning; }
bool MainWindow::traceIndexedB() const { return bool(m_tb->side().index); }
std::shared_ptr<const sched::AgreeReport> MainWindow::agreement() const { return m_ta->side().agree; }
bool MainWindow::agreementRunning() const { return m_ta->side().agreeRunning; }
bool MainWindow::traceIndexed() const { return bool(m_ta->side().index); }
QString MainWindow::agreementError() const { return m_ta->side().agreeError; }
int MainWindow::disagreementCount() const { return int(m_ta->side().disagreements.size()); }
const sched::AgreeRow* MainWindow::disagreement(int index) const { return m_ta->side().disagreement(index); }
QString MainWindow::agreementSummary() const { return m_ta->agreementSummary(); }
QString MainWindow::agreementSummaryB() const { return m_tb->agreementSummary(); }

void MainWindow::createTraceSessions() {
    m_ta = new TraceSession(this);
    m_tb = new TraceSession(this);
    connect(m_ta, &TraceSession::agreementFinished, this, &MainWindow::onAgreementA);
    connect(m_tb, &TraceSession::agreementFinished, this, &MainWindow::onAgreementB);
    for (TraceSession* s : {m_ta, m_tb}) connect(s, &TraceSession::agreementProgress, this, &MainWindow::updateAgreeProgress);
}

void MainWindow::createTraceBar() {
    m_traceBar = new TraceBar(this);
    addToolBarBreak(Qt::BottomToolBarArea);
    addToolBar(Qt::BottomToolBarArea, m_traceBar);
    m_timeline = m_traceBar->timeline();
    connect(m_timeline, &TraceTimeline::cursorRequested, this, [this](qint64 ns) { setTraceTime(ns); });
    connect(m_timeline, &TraceTimeline::markClicked, this, [this](int k) { openDisagreement(k); });
    connect(m_traceBar, &TraceBar::stepRequested, this, [this](int direction) { stepDisagreement(direction); });
}

void MainWindow::showSideB(bool on) {
    m_heatB->setVisible(on);
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->setVisible(on);
    m_heatA->setTitle(QStringLiteral("%1recorded: %2").arg(on ? QStringLiteral("A: ") : QString(), traceA().fileName()));
}

void MainWindow::showTrace(std::shared_ptr<const sched::Trace> trace, std::shared_ptr<const sched::Topology> topo, const QString& path,
                           std::shared_ptr<const sched::AgreeReport> agreed) {
    setRunning(false);
    const bool wasTrace = traceMode();
    clearSideB();                                         // B is compared with the trace it was opened beside
    m_ta->open(std::move(trace), std::move(topo), path);  // the previous trace's replay and index stop
    const TraceSide& a = traceA();
    showSideB(false);
    // The knobs drive the simulation, not the trace: their room goes to the inspector, which
    // shows the disagreements (back when the simulation is).
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockKnobs")); d && !wasTrace) {
        m_knobsHiddenForTrace = d->isVisible();
        d->hide();
    }
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockInspector")); d && !wasTrace && d->isVisible() && d->width() < 460)
        resizeDocks({d}, {460}, Qt::Horizontal);  // room for a disagreement's two answers side by side
    if (!m_traceBar) createTraceBar();
    m_traceBar->show();
    m_traceBar->setStepsEnabled(true);
    m_openTraceBAct->setEnabled(true);  // (the File menu refreshes them too; this is for the shortcut)
    m_besideAct->setEnabled(true);
    m_timeline->setSpan(a.t0, a.t1);
    std::vector<std::pair<std::int64_t, std::int64_t>> gaps;
    for (const auto& gp : a.trace->gaps) gaps.emplace_back(gp.from < 0 ? a.t0 : gp.from, gp.to < 0 ? a.t1 : gp.to);
    m_timeline->setGaps(std::move(gaps));
    m_timeline->setDecisions({}, {});
    m_inspector->setDisagreements({});
    clearDisagreementMarks();
    m_counters->setReasonsTitle(tr("schedlab's final reason on the trace's decisions"));
    m_openedDis = -1;
    setTraceTime(a.t1);
    // The replay and the cursor index start once the first frame is painted, the histograms
    // included: the paint is a posted event, showFrame's zero timer for the slow views comes
    // after it and posts their paint, and this timer posts the start after that paint (two turns),
    // so that on a small machine the threads do not slow the first drawing down.
    QTimer::singleShot(0, this, [this, trace = a.trace, agreed = std::move(agreed)]() mutable {
        QTimer::singleShot(0, this, [this, trace = std::move(trace), agreed = std::move(agreed)]() mutable {
            if (traceA().trace != trace) return;  // another trace (or none) since
            if (!agreed) m_timeline->setMessage(tr("replaying the trace's wakeup decisions through schedlab's path…"));
            m_ta->start(std::move(agreed));
            updateAgreeProgress();
        });
    });
}

void MainWindow::onAgreementA() {
    const TraceSide& a = traceA();
    std::vector<std::int64_t> times;
    std::vector<TimelineMark> marks;
    std::vector<AgreementItem> items;
    if (a.agree) {
        times.reserve(a.agree->rows.size());
        for (const auto& row : a.agree->rows) times.push_back(row.time);
        marks.reserve(a.disagreements.size());
        items.reserve(a.disagreements.size());
        for (std::size_t i = 0; i < a.disagreements.size(); ++i) {
            const sched::AgreeRow& row = *a.disagreements[i];
            marks.push_back({row.time, std::max(row.cls, 0)});
            AgreementItem it;
            it.row = row;
            it.index = int(i);
            it.total = int(a.disagreements.size());
            it.t0 = a.t0;
            it.file = a.fileName();
            it.comm = q(a.trace->commOf(row.pid));
            it.wakerComm = q(a.trace->commOf(row.waker));
            items.push_back(std::move(it));
        }
        m_timeline->setMessage({});
    } else {
        m_timeline->setMessage(tr("no agreement: %1").arg(a.agreeError));
    }
    m_timeline->setDecisions(std::move(times), std::move(marks));
    m_inspector->setDisagreements(std::move(items));
    agreementsChanged();
}

void MainWindow::onAgreementB() {
    const TraceSide& b = traceSideB();
    std::vector<TimelineMark> marks;
    marks.reserve(b.disagreements.size());
    for (const sched::AgreeRow* row : b.disagreements) marks.push_back({traceA().t0 + (row->time - b.t0), std::max(row->cls, 0)});  // on A's clock
    if (m_timeline) m_timeline->setSecondLane(std::move(marks), true);
    agreementsChanged();
}

void MainWindow::agreementsChanged() {
    updateAgreeProgress();
    if (m_frame && traceMode()) setTraceTime(m_frame->a->now);  // the counters' reasons; the status line names the agreement
    else if (m_frame) showFrame(m_frame);
    fireWhenAgreed();
}

void MainWindow::fireWhenAgreed() {
    if (traceA().agreeRunning || traceSideB().agreeRunning) return;
    auto cbs = std::move(m_whenAgreed);
    m_whenAgreed.clear();
    for (auto& cb : cbs) QTimer::singleShot(0, this, std::move(cb));  // from the event loop, as whenAgreed() says
}

void MainWindow::whenAgreed(std::function<void()> done) {
    if (traceMode() && (traceA().agreeRunning || traceSideB().agreeRunning)) m_whenAgreed.push_back(std::move(done));
    else QTimer::singleShot(0, this, std::move(done));  // always from the event loop, as when it has to wait
}

void MainWindow::updateAgreeProgress() {
    if (!m_traceBar) return;
    QString text = agreementSummary();
    if (traceBShown()) text = QStringLiteral("A: %1\nB: %2").arg(text, agreementSummaryB());
    m_traceBar->setAgreementText(text);
    if (traceMode() && m_frame) m_status->setText(traceStatus());
}

bool MainWindow::openDisagreement(int index) {
    const sched::AgreeRow* r = disagreement(index);
    if (!r || !traceMode()) return false;
    m_openedDis = index;  // before the cursor moves, so that setTraceTime keeps it
    m_timeline->setSelectedMark(index);
    // Keep it in view when zoomed.
    const std::int64_t span = m_timeline->viewTo() - m_timeline->viewFrom();
    if (r->time < m_timeline->viewFrom() || r->time > m_timeline->viewTo()) m_timeline->setView(r->time - span / 2, r->time - span / 2 + span);
    setTraceTime(r->time);
    m_inspected = m_heatA;
    m_inspector->showDisagreement(index);
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockInspector"))) {
        d->show();
        d->raise();
    }
    statusBar()->showMessage(tr("Disagreement %1 of %2 at line %3: kernel CPU %4, schedlab CPU %5 (%6)")
                                 .arg(index + 1)
                                 .arg(disagreementCount())
                                 .arg(r->line)
                                 .arg(r->kernel)
                                 .arg(r->sim)
                                 .arg(QString::fromLatin1(sched::toString(sched::DisagreeClass(std::max(r->cls, 0))))),
                             8000);
    return true;
}

void MainWindow::stepDisagreement(int direction) {
    const auto& dis = traceA().disagreements;
    if (!traceMode() || dis.empty()) {
        statusBar()->showMessage(agreementRunning() ? tr("The agreement is still being replayed") : tr("No disagreements"), 4000);
        return;
    }
    int k = -1;
    if (m_openedDis >= 0) {
        k = m_openedDis + (direction > 0 ? 1 : -1);
    } else {
        const qint64 now = m_timeline->cursorTime();
        if (direction > 0)
            k = int(std::upper_bound(dis.begin(), dis.end(), now, [](qint64 t, const sched::AgreeRow* r) { return t < r->time; }) - dis.begin());
        else k = int(std::lower_bound(dis.begin(), dis.end(), now, [](const sched::AgreeRow* r, qint64 t) { return r->time < t; }) - dis.begin()) - 1;
    }
    if (!openDisagreement(k))
        statusBar()->showMessage(direction > 0 ? tr("No disagreement after the cursor") : tr("No disagreement before the cursor"), 4000);
}

void MainWindow::clearDisagreementMarks() {
    if (m_timeline) m_timeline->setSelectedMark(-1);
    m_heatA->setHighlight({});
    m_heatA->setKernelChoice(-1);
}

void MainWindow::setTraceTime(qint64 ns) {
    if (!traceMode()) return;
    const TraceSide& ta = traceA();
    const TraceSide& tb = traceSideB();
    auto f = std::make_shared<Frame>();
    f->a = std::make_shared<const sched::Snapshot>(ta.snapshot(ns, tb.trace ? "trace A" : "trace"));
    f->done = true;
    const qint64 rel = f->a->now - ta.t0;  // B is shown at the same time since its own first event
    if (tb.trace) f->b = std::make_shared<const sched::Snapshot>(tb.snapshot(tb.t0 + rel, "trace B"));
    else if (m_beside && m_besideSnap) f->b = m_besideSnap;  // until the simulation reaches the new time
    if (const sched::AgreeRow* r = disagreement(m_openedDis); r && r->time != f->a->now) {
        m_openedDis = -1;  // the heatmap's marks belong to the disagreement's instant
        clearDisagreementMarks();
    }
    if (m_traceBar) m_traceBar->setCursorText(QStringLiteral("%1 of %2").arg(simTime(rel), simTime(ta.span())));
    if (m_timeline) m_timeline->setCursorTime(f->a->now);
    showFrame(f);
    if (m_beside && m_besideTarget != rel) {
        m_besideTarget = rel;
        requestBesideFrame();
    }
}

qint64 MainWindow::traceCursor() const { return traceMode() && m_frame ? m_frame->a->now - traceA().t0 : 0; }

void MainWindow::leaveTrace() {
    if (!traceMode()) return;
    clearSideB();
    m_ta->close();  // a replay or an index still being made stops and is dropped
    m_counters->setReasonsTitle(tr("wakeups by final reason"));
    m_openedDis = -1;
    clearDisagreementMarks();
    m_inspector->setDecisions({}, std::nullopt);
    m_openTraceBAct->setEnabled(false);
    m_besideAct->setEnabled(false);
    if (m_traceBar) {
        m_traceBar->hide();
        m_traceBar->setStepsEnabled(false);  // N is free again outside a trace
    }
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockKnobs")); d && m_knobsHiddenForTrace) d->show();
    m_knobsHiddenForTrace = false;
    auto cbs = std::move(m_whenAgreed);  // nothing more to wait for
    m_whenAgreed.clear();
    for (auto& cb : cbs) cb();
}

void MainWindow::readTraceAsync(const QString& path, std::function<void(std::shared_ptr<const sched::Trace>, QString)> done) {
    // Read on the thread pool; text traces report the share read (a percentage in the dialog) and
    // stop when Cancel is pressed. A trace.dat is read in one piece (the dialog stays busy).
    auto* progress = new QProgressDialog(tr("Reading %1…").arg(QFileInfo(path).fileName()), tr("Cancel"), 0, 0, this);
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(300);
    struct State {
        std::atomic<bool> cancel{false};
        std::atomic<int> permille{-1};
    };
    auto state = std::make_shared<State>();
    connect(progress, &QProgressDialog::canceled, this, [state] { state->cancel = true; });
    auto* poll = new QTimer(progress);
    connect(poll, &QTimer::timeout, progress, [progress, state] {
        const int p = state->permille.load();
        if (p < 0) return;
        if (progress->maximum() == 0) progress->setRange(0, 100);
        progress->setValue(p / 10);
    });
    poll->start(100);
    using Result = std::pair<std::shared_ptr<const sched::Trace>, QString>;
    auto* watcher = new QFutureWatcher<Result>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [watcher, progress, state, done = std::move(done)] {
        const auto [trace, err] = watcher->result();
        watcher->deleteLater();
        progress->deleteLater();
        if (state->cancel) return done(nullptr, QString());
        done(trace, err);
    });
    watcher->setFuture(QtConcurrent::run([path, state]() -> Result {
        try {
            sched::TraceReadOptions o;
            o.progress = [state](double share) {
                state->permille = int(share * 1000);
                return !state->cancel.load();
            };
            return {std::make_shared<const sched::Trace>(sched::readTrace(path.toStdString(), o)), QString()};
        } catch (const sched::TraceReadCancelled&) {
            return {nullptr, QString()};
        } catch (const std::exception& e) {
            return {nullptr, QString::fromUtf8(e.what())};
        }
    }));
}

void MainWindow::openTraceDialog() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open trace"), QString(), tr("Scheduler traces (*.txt *.gz *.dat *.trace);;All files (*)"));
    if (path.isEmpty()) return;
    readTraceAsync(path, [this, path](std::shared_ptr<const sched::Trace> trace, const QString& err) {
        if (!trace) {
            if (!err.isEmpty()) QMessageBox::warning(this, tr("Open trace"), err);
            return;
        }
        // The machine it was recorded on: presets with its CPU count, or an hwloc XML.
        QStringList items;
        for (const auto& n : sched::Topology::presetsWithCpus(trace->nr_cpus)) items << QString::fromStdString(n);
        const QString other = tr("hwloc XML file…");
        items << other;
        bool ok = false;
        const QString pick =
            QInputDialog::getItem(this, tr("Machine of the trace"),
                                  tr("The trace has %1 CPUs. Which machine was it recorded on?").arg(trace->nr_cpus), items, 0, false, &ok);
        if (!ok) return;
        QString topoName = pick;
        if (pick == other) {
            topoName = QFileDialog::getOpenFileName(this, tr("hwloc XML"), QString(), tr("hwloc XML (*.xml)"));
            if (topoName.isEmpty()) return;
        }
        try {
            auto topo = std::make_shared<const sched::Topology>(sched::loadTopology(topoName.toStdString()));
            if (topo->nrCpus() < trace->nr_cpus)
                throw sched::InputError(topoName.toStdString(), "", fmt::format("has {} CPUs, the trace {}", topo->nrCpus(), trace->nr_cpus));
            showTrace(trace, topo, path);
        } catch (const std::exception& e) {
            QMessageBox::warning(this, tr("Open trace"), QString::fromUtf8(e.what()));
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Side B beside a recorded trace: a second trace, or a simulation

void MainWindow::openTraceBDialog() {
    if (!traceMode()) {
        statusBar()->showMessage(tr("Open a trace first: B is shown beside it"), 6000);
        return;
    }
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open trace as B"), QString(), tr("Scheduler traces (*.txt *.gz *.dat *.trace);;All files (*)"));
    if (path.isEmpty()) return;
    const auto forA = traceA().trace;
    readTraceAsync(path, [this, path, forA](std::shared_ptr<const sched::Trace> trace, const QString& err) {
        if (!trace) {
            if (!err.isEmpty()) QMessageBox::warning(this, tr("Open trace as B"), err);
            return;
        }
        if (traceA().trace != forA) return;  // A was replaced (or left) while B was read
        const QString why = showTraceB(std::move(trace), path);
        if (!why.isEmpty()) QMessageBox::warning(this, tr("Open trace as B"), why);
    });
}

QString MainWindow::showTraceB(std::shared_ptr<const sched::Trace> trace, const QString& path, std::shared_ptr<const sched::AgreeReport> agreed) {
    if (!traceMode()) return tr("%1: no trace is shown as A (open one first)").arg(path);
    if (!trace) return tr("%1: no trace").arg(path);
    const auto& topo = traceA().topo;
    if (trace->nr_cpus > topo->nrCpus())
        return tr("%1: has %2 CPUs, more than trace A's machine %3 (%4 CPUs)").arg(path).arg(trace->nr_cpus).arg(q(topo->name())).arg(topo->nrCpus());
    clearSideB();
    m_tb->open(std::move(trace), topo, path);
    showSideB(true);
    setTraceTime(m_frame ? m_frame->a->now : traceA().t1);
    m_tb->start(std::move(agreed));
    updateAgreeProgress();
    return {};
}

void MainWindow::clearSideB() {
    const bool had = traceBShown() || m_beside;
    m_tb->close();  // a replay or an index still being made for the old B stops and is dropped
    if (m_timeline) m_timeline->setSecondLane({}, false);
    if (m_beside) {
        m_beside.reset();
        m_besideSnap.reset();
        m_besidePath.clear();
        m_sim->post([](SimWorker& w) {
            w.pause();
            w.setStopAt(0);
        });
    }
    auto cbs = std::move(m_whenBeside);  // nothing more to wait for
    m_whenBeside.clear();
    for (auto& cb : cbs) QTimer::singleShot(0, this, std::move(cb));
    if (had && traceMode()) showSideB(false);
    fireWhenAgreed();
}

QString MainWindow::showSimulationBeside(const QString& path, const QString& variant) {
    try {
        return showSimulationBeside(sched::loadScenario(path.toStdString()), path, variant);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

QString MainWindow::showSimulationBeside(const sched::Scenario& s, const QString& path, const QString& variant) {
    if (!traceMode()) return tr("%1: no trace is shown (open one first: the simulation runs beside it)").arg(path);
    if (s.variants.empty()) return tr("%1: the scenario has no variant").arg(path);
    const sched::Variant* v = &s.variants.front();
    if (!variant.isEmpty()) {
        v = nullptr;
        QStringList names;
        for (const auto& x : s.variants) {
            names << q(x.name);
            if (q(x.name) == variant) v = &x;
        }
        if (!v) return tr("%1: no variant '%2' (the scenario's: %3)").arg(path, variant, names.join(QStringLiteral(", ")));
    }
    const auto& topo = traceA().topo;
    if (s.topo->name() != topo->name() && s.topo->nrCpus() != topo->nrCpus())
        return tr("%1: topology %2 (%3 CPUs) is not the trace's %4 (%5 CPUs)")
            .arg(path, q(s.topo->name()))
            .arg(s.topo->nrCpus())
            .arg(q(topo->name()))
            .arg(topo->nrCpus());
    clearSideB();
    m_beside = s;
    m_besidePath = path;
    m_besideSeed = s.seed;
    m_besideKnobs = v->knobs;
    m_besideSnap.reset();
    showSideB(true);
    // A fresh run of this scenario (side A of the worker, shown as B), then to the cursor's time.
    const sched::Knobs k = m_besideKnobs;
    m_sim->post([s, k](SimWorker& w) {
        w.pause();
        w.restart(s, k, k, false, s.seed, "simulated");
    });
    m_besideTarget = traceCursor();
    requestBesideFrame();
    return {};
}

void MainWindow::requestBesideFrame() {
    if (!m_beside) return;
    m_besideRunning = true;
    m_sim->post([s = *m_beside, k = m_besideKnobs, seed = m_besideSeed, ns = m_besideTarget](SimWorker& w) { w.runTo(s, k, seed, ns); });
}

bool MainWindow::besideReady() const {
    // The worker stops exactly at the asked time (or earlier when the run ends); an older frame
    // still on its way (running, or paused at the previous cursor) does not count.
    return m_besideSnap && !m_besideRunning && (m_besideSnap->now == m_besideTarget || (m_besideSnap->done && m_besideSnap->now < m_besideTarget));
}

void MainWindow::whenBesideReady(std::function<void()> done) {
    if (m_beside && !besideReady()) m_whenBeside.push_back(std::move(done));
    else QTimer::singleShot(0, this, std::move(done));
}

void MainWindow::besideSimDialog() {
    if (!traceMode()) {
        statusBar()->showMessage(tr("Open a trace first: the simulation runs beside it"), 6000);
        return;
    }
    const QString p = QFileDialog::getOpenFileName(this, tr("Simulate beside the trace"), QString::fromStdString(sched::shippedScenariosDir()),
                                                   tr("Scenarios (*.json)"));
    if (p.isEmpty()) return;
    // A scenario of several variants (baseline, a patch): which one runs beside the trace.
    QString variant;
    try {
        const sched::Scenario s = sched::loadScenario(p.toStdString());
        if (s.variants.size() > 1) {
            QStringList items;
            for (const auto& v : s.variants) items << QStringLiteral("%1 (%2)").arg(q(v.name), q(v.knobs.presetName));
            bool ok = false;
            const QString pick =
                QInputDialog::getItem(this, tr("Simulate beside the trace"), tr("Variant of %1:").arg(QFileInfo(p).fileName()), items, 0, false, &ok);
            if (!ok) return;
            variant = q(s.variants[std::size_t(items.indexOf(pick))].name);
        }
    } catch (const std::exception&) {
        // showSimulationBeside says what is wrong with the file
    }
    const QString err = showSimulationBeside(p, variant);
    if (!err.isEmpty()) QMessageBox::warning(this, tr("Simulate beside the trace"), err);
}

void MainWindow::copyCompareText() {
    if (!traceMode()) {
        // Made by the worker from the run as it is now (running or not); the answer comes back queued.
        m_sim->post([](SimWorker& w) { w.requestCompareText(); });
        return;
    }
    if (!traceBShown()) {
        statusBar()->showMessage(m_beside ? tr("The A/B table compares two traces (schedlab-cli compare-traces): open a second trace as B")
                                          : tr("Open a second trace as B: the table compares the two traces"),
                                 6000);
        return;
    }
    // schedlab-cli compare-traces A B --topology T: baseline knobs for both agreement rows.
    statusBar()->showMessage(tr("Making the A/B table of the two traces…"), 4000);
    auto* watcher = new QFutureWatcher<QString>(this);
    const auto a = traceA().trace, b = traceSideB().trace;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, a, b] {
        const QString t = watcher->result();
        watcher->deleteLater();
        if (a != traceA().trace || b != traceSideB().trace) return;  // the traces changed meanwhile
        if (t.startsWith(QLatin1String("error: "))) {
            statusBar()->showMessage(t.mid(7), 8000);
            return;
        }
        QApplication::clipboard()->setText(t);
        statusBar()->showMessage(tr("A/B table of the two traces copied (%1 lines)").arg(t.count(QLatin1Char('\n'))), 4000);
        emit compareTextCopied(t);
    });
    watcher->setFuture(QtConcurrent::run([a, b, topo = traceA().topo]() -> QString {
        try {
            sched::TraceCompareOptions o;
            o.agreement = a->ns_timestamps && b->ns_timestamps;
            return QString::fromStdString(sched::traceCompareTable(*a, *b, topo, sched::Knobs{}, sched::Knobs{}, o));
        } catch (const std::exception& e) {
            return QStringLiteral("error: ") + QString::fromUtf8(e.what());
        }
    }));
}

QString MainWindow::traceStatus() const {
    if (!traceMode() || !m_frame) return {};
    const TraceSide& ta = traceA();
    const TraceSide& tb = traceSideB();
    const qint64 rel = m_frame->a->now - ta.t0;
    if (tb.trace) {
        // Short: the trace bar and the caption carry the whole agreement summaries.
        auto brief = [](const TraceSide& s, const QString& full) {
            if (!s.agree) return full;
            return tr("agreement %1 %, %2 disagreements")
                .arg(s.agree->decisions ? 100.0 * double(s.agree->agree) / double(s.agree->decisions) : 0.0, 0, 'f', 1)
                .arg(s.disagreements.size());
        };
        return QStringLiteral("A %1 · B %2 · %3 (%4 CPUs) · cursor %5 since each trace's first event (A 0 .. %6, B 0 .. %7) · A: %8 · B: %9")
            .arg(ta.fileName(), tb.fileName(), q(ta.topo->name()))
            .arg(ta.topo->nrCpus())
            .arg(simTime(rel), simTime(ta.span()), simTime(tb.span()), brief(ta, agreementSummary()), brief(tb, agreementSummaryB()));
    }
    QString st = QStringLiteral("trace %1 · %2 (%3 CPUs) · %4 events · cursor %5 (%6 .. %7)")
                     .arg(ta.fileName(), q(ta.topo->name()))
                     .arg(ta.topo->nrCpus())
                     .arg(ta.trace->events.size())
                     .arg(simTime(rel), simTime(0), simTime(ta.span()));
    if (m_beside) {
        const auto& b = m_frame->b;
        st += QStringLiteral(" · B: %1 simulated to %2").arg(QFileInfo(m_besidePath).fileName(), simTime(b ? b->now : 0));
        if (b && b->now < m_besideTarget) st += b->done ? tr(" (its run ended)") : tr(" (running to %1)").arg(simTime(m_besideTarget));
    }
    return st + QStringLiteral(" · ") + agreementSummary();
}

}  // namespace schedlab
