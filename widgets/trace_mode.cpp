// SPDX-License-Identifier: GPL-2.0-or-later
// main_window_trace.cpp: the window's trace mode (see main_window.h): a recorded trace as side A
// with its timeline and disagreements, and side B beside it, a second trace or a simulation. The
// traces and their background work are two TraceSessions; this file only shows them.
#include "trace_mode.h"

#include "caption.h"
#include "counters_plot.h"
#include "progress_job.h"
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
#include <QInputDialog>
#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>
#include <QTimer>

#include <fmt/format.h>

#include <algorithm>

namespace schedlab {

TraceMode::TraceMode(Host host, QObject* parent) : QObject(parent), m_host(std::move(host)) { createSessions(); }

TraceMode::~TraceMode() = default;  // the sessions cancel their jobs

const TraceSide& TraceMode::sideA() const { return m_ta->side(); }
const TraceSide& TraceMode::sideB() const { return m_tb->side(); }
bool TraceMode::active() const { return m_ta->isOpen(); }
bool TraceMode::traceBShown() const { return m_tb->isOpen(); }
std::shared_ptr<const sched::AgreeReport> TraceMode::agreementB() const { return m_tb->side().agree; }
bool TraceMode::agreementBRunning() const { return m_tb->side().agreeRunning; }
bool TraceMode::traceIndexedB() const { return bool(m_tb->side().index); }
std::shared_ptr<const sched::AgreeReport> TraceMode::agreement() const { return m_ta->side().agree; }
bool TraceMode::agreementRunning() const { return m_ta->side().agreeRunning; }
bool TraceMode::traceIndexed() const { return bool(m_ta->side().index); }
QString TraceMode::agreementError() const { return m_ta->side().agreeError; }
int TraceMode::disagreementCount() const { return int(m_ta->side().disagreements.size()); }
const sched::AgreeRow* TraceMode::disagreement(int index) const { return m_ta->side().disagreement(index); }
QString TraceMode::agreementSummary() const { return m_ta->agreementSummary(); }
QString TraceMode::agreementSummaryB() const { return m_tb->agreementSummary(); }

void TraceMode::message(const QString& text, int ms) const { m_host.window->statusBar()->showMessage(text, ms); }

void TraceMode::shutdown() {
    m_ta->cancel();  // replays and indexes on the thread pool stop
    m_tb->cancel();
    if (auto* d = m_host.window->findChild<QDockWidget*>(QStringLiteral("dockKnobs")); d && m_knobsHiddenForTrace)
        d->show();  // hidden for a trace only: the saved layout keeps it
}

void TraceMode::createSessions() {
    m_ta = new TraceSession(this);
    m_tb = new TraceSession(this);
    connect(m_ta, &TraceSession::agreementFinished, this, &TraceMode::onAgreementA);
    connect(m_tb, &TraceSession::agreementFinished, this, &TraceMode::onAgreementB);
    for (TraceSession* s : {m_ta, m_tb}) connect(s, &TraceSession::agreementProgress, this, &TraceMode::updateAgreeProgress);
}

void TraceMode::createTraceBar() {
    m_traceBar = new TraceBar(m_host.window);
    m_host.window->addToolBarBreak(Qt::BottomToolBarArea);
    m_host.window->addToolBar(Qt::BottomToolBarArea, m_traceBar);
    m_timeline = m_traceBar->timeline();
    connect(m_timeline, &TraceTimeline::cursorRequested, this, [this](qint64 ns) { setTraceTime(ns); });
    connect(m_timeline, &TraceTimeline::markClicked, this, [this](int k) { openDisagreement(k); });
    connect(m_traceBar, &TraceBar::stepRequested, this, [this](int direction) { stepDisagreement(direction); });
}

void TraceMode::showSideB(bool on) {
    m_host.heatB->setVisible(on);
    if (auto* d = m_host.window->findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->setVisible(on);
    m_host.heatA->setTitle(QStringLiteral("%1recorded: %2").arg(on ? QStringLiteral("A: ") : QString(), sideA().fileName()));
}

void TraceMode::showTrace(std::shared_ptr<const sched::Trace> trace, std::shared_ptr<const sched::Topology> topo, const QString& path,
                          std::shared_ptr<const sched::AgreeReport> agreed) {
    m_host.pause();
    const bool wasTrace = active();
    clearSideB();                                         // B is compared with the trace it was opened beside
    m_ta->open(std::move(trace), std::move(topo), path);  // the previous trace's replay and index stop
    const TraceSide& a = sideA();
    showSideB(false);
    // The knobs drive the simulation, not the trace: their room goes to the inspector, which
    // shows the disagreements (back when the simulation is).
    if (auto* d = m_host.window->findChild<QDockWidget*>(QStringLiteral("dockKnobs")); d && !wasTrace) {
        m_knobsHiddenForTrace = d->isVisible();
        d->hide();
    }
    if (auto* d = m_host.window->findChild<QDockWidget*>(QStringLiteral("dockInspector")); d && !wasTrace && d->isVisible() && d->width() < 460)
        m_host.window->resizeDocks({d}, {460}, Qt::Horizontal);  // room for a disagreement's two answers side by side
    if (!m_traceBar) createTraceBar();
    m_traceBar->show();
    m_traceBar->setStepsEnabled(true);
    m_host.openTraceB->setEnabled(true);  // (the File menu refreshes them too; this is for the shortcut)
    m_host.beside->setEnabled(true);
    m_timeline->setSpan(a.t0, a.t1);
    std::vector<std::pair<std::int64_t, std::int64_t>> gaps;
    for (const auto& gp : a.trace->gaps) gaps.emplace_back(gp.from < 0 ? a.t0 : gp.from, gp.to < 0 ? a.t1 : gp.to);
    m_timeline->setGaps(std::move(gaps));
    m_timeline->setDecisions({}, {});
    m_host.inspector->setDisagreements({});
    clearDisagreementMarks();
    m_host.counters->setReasonsTitle(tr("schedlab's final reason on the trace's decisions"));
    m_openedDis = -1;
    setTraceTime(a.t1);
    // The replay and the cursor index start once the first frame is painted, the histograms
    // included: the paint is a posted event, showFrame's zero timer for the slow views comes
    // after it and posts their paint, and this timer posts the start after that paint (two turns),
    // so that on a small machine the threads do not slow the first drawing down.
    QTimer::singleShot(0, this, [this, trace = a.trace, agreed = std::move(agreed)]() mutable {
        QTimer::singleShot(0, this, [this, trace = std::move(trace), agreed = std::move(agreed)]() mutable {
            if (sideA().trace != trace) return;  // another trace (or none) since
            if (!agreed) m_timeline->setMessage(tr("replaying the trace's wakeup decisions through schedlab's path…"));
            m_ta->start(std::move(agreed));
            updateAgreeProgress();
        });
    });
}

void TraceMode::onAgreementA() {
    const TraceSide& a = sideA();
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
    m_host.inspector->setDisagreements(std::move(items));
    agreementsChanged();
}

void TraceMode::onAgreementB() {
    const TraceSide& b = sideB();
    std::vector<TimelineMark> marks;
    marks.reserve(b.disagreements.size());
    for (const sched::AgreeRow* row : b.disagreements) marks.push_back({sideA().t0 + (row->time - b.t0), std::max(row->cls, 0)});  // on A's clock
    if (m_timeline) m_timeline->setSecondLane(std::move(marks), true);
    agreementsChanged();
}

void TraceMode::agreementsChanged() {
    updateAgreeProgress();
    if (frame() && active()) setTraceTime(frame()->a->now);  // the counters' reasons; the status line names the agreement
    else if (frame()) m_host.show(frame());
    fireWhenAgreed();
}

void TraceMode::fireWhenAgreed() {
    if (sideA().agreeRunning || sideB().agreeRunning) return;
    auto cbs = std::move(m_whenAgreed);
    m_whenAgreed.clear();
    for (auto& cb : cbs) QTimer::singleShot(0, this, std::move(cb));  // from the event loop, as whenAgreed() says
}

void TraceMode::whenAgreed(std::function<void()> done) {
    if (active() && (sideA().agreeRunning || sideB().agreeRunning)) m_whenAgreed.push_back(std::move(done));
    else QTimer::singleShot(0, this, std::move(done));  // always from the event loop, as when it has to wait
}

void TraceMode::updateAgreeProgress() {
    if (!m_traceBar) return;
    QString text = agreementSummary();
    if (traceBShown()) text = QStringLiteral("A: %1\nB: %2").arg(text, agreementSummaryB());
    m_traceBar->setAgreementText(text);
    if (active() && frame()) m_host.status->setText(status());
}

bool TraceMode::openDisagreement(int index) {
    const sched::AgreeRow* r = disagreement(index);
    if (!r || !active()) return false;
    m_openedDis = index;  // before the cursor moves, so that setTraceTime keeps it
    m_timeline->setSelectedMark(index);
    // Keep it in view when zoomed.
    const std::int64_t span = m_timeline->viewTo() - m_timeline->viewFrom();
    if (r->time < m_timeline->viewFrom() || r->time > m_timeline->viewTo()) m_timeline->setView(r->time - span / 2, r->time - span / 2 + span);
    setTraceTime(r->time);
    m_host.setInspected(m_host.heatA);
    m_host.inspector->showDisagreement(index);
    if (auto* d = m_host.window->findChild<QDockWidget*>(QStringLiteral("dockInspector"))) {
        d->show();
        d->raise();
    }
    message(tr("Disagreement %1 of %2 at line %3: kernel CPU %4, schedlab CPU %5 (%6)")
                .arg(index + 1)
                .arg(disagreementCount())
                .arg(r->line)
                .arg(r->kernel)
                .arg(r->sim)
                .arg(QString::fromLatin1(sched::toString(sched::DisagreeClass(std::max(r->cls, 0))))),
            8000);
    return true;
}

void TraceMode::stepDisagreement(int direction) {
    const auto& dis = sideA().disagreements;
    if (!active() || dis.empty()) {
        message(agreementRunning() ? tr("The agreement is still being replayed") : tr("No disagreements"), 4000);
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
    if (!openDisagreement(k)) message(direction > 0 ? tr("No disagreement after the cursor") : tr("No disagreement before the cursor"), 4000);
}

void TraceMode::clearDisagreementMarks() {
    if (m_timeline) m_timeline->setSelectedMark(-1);
    m_host.heatA->setHighlight({});
    m_host.heatA->setKernelChoice(-1);
}

void TraceMode::setTraceTime(qint64 ns) {
    if (!active()) return;
    const TraceSide& ta = sideA();
    const TraceSide& tb = sideB();
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
    m_host.show(f);
    if (m_beside && m_besideTarget != rel) {
        m_besideTarget = rel;
        requestBesideFrame();
    }
}

qint64 TraceMode::traceCursor() const { return active() && frame() ? frame()->a->now - sideA().t0 : 0; }

void TraceMode::leave() {
    if (!active()) return;
    clearSideB();
    m_ta->close();  // a replay or an index still being made stops and is dropped
    m_host.counters->setReasonsTitle(tr("wakeups by final reason"));
    m_openedDis = -1;
    clearDisagreementMarks();
    m_host.inspector->setDecisions({}, std::nullopt);
    m_host.openTraceB->setEnabled(false);
    m_host.beside->setEnabled(false);
    if (m_traceBar) {
        m_traceBar->hide();
        m_traceBar->setStepsEnabled(false);  // N is free again outside a trace
    }
    if (auto* d = m_host.window->findChild<QDockWidget*>(QStringLiteral("dockKnobs")); d && m_knobsHiddenForTrace) d->show();
    m_knobsHiddenForTrace = false;
    auto cbs = std::move(m_whenAgreed);  // nothing more to wait for
    m_whenAgreed.clear();
    for (auto& cb : cbs) cb();
}

void TraceMode::readTraceAsync(const QString& path, std::function<void(std::shared_ptr<const sched::Trace>, QString)> done) {
    // Read on the thread pool; text traces report the share read (a percentage in the dialog) and
    // stop when Cancel is pressed. A trace.dat is read in one piece (the dialog stays busy).
    using Result = std::pair<std::shared_ptr<const sched::Trace>, QString>;
    runWithProgress<Result>(
        m_host.window, tr("Reading %1…").arg(QFileInfo(path).fileName()), 0,
        [path](JobProgress& p) -> Result {
            try {
                sched::TraceReadOptions o;
                o.progress = [&p](double share) {
                    p.value = int(share * 100);
                    return !p.cancel.load();
                };
                return {std::make_shared<const sched::Trace>(sched::readTrace(path.toStdString(), o)), QString()};
            } catch (const sched::TraceReadCancelled&) {
                return {nullptr, QString()};
            } catch (const std::exception& e) {
                return {nullptr, QString::fromUtf8(e.what())};
            }
        },
        [done = std::move(done)](Result r, bool cancelled) {
            if (cancelled) return done(nullptr, QString());
            done(std::move(r.first), r.second);
        });
}

void TraceMode::openTraceDialog() {
    const QString path =
        QFileDialog::getOpenFileName(m_host.window, tr("Open trace"), QString(), tr("Scheduler traces (*.txt *.gz *.dat *.trace);;All files (*)"));
    if (path.isEmpty()) return;
    readTraceAsync(path, [this, path](std::shared_ptr<const sched::Trace> trace, const QString& err) {
        if (!trace) {
            if (!err.isEmpty()) QMessageBox::warning(m_host.window, tr("Open trace"), err);
            return;
        }
        // The machine it was recorded on: presets with its CPU count, or an hwloc XML.
        QStringList items;
        for (const auto& n : sched::Topology::presetsWithCpus(trace->nr_cpus)) items << QString::fromStdString(n);
        const QString other = tr("hwloc XML file…");
        items << other;
        bool ok = false;
        const QString pick =
            QInputDialog::getItem(m_host.window, tr("Machine of the trace"),
                                  tr("The trace has %1 CPUs. Which machine was it recorded on?").arg(trace->nr_cpus), items, 0, false, &ok);
        if (!ok) return;
        QString topoName = pick;
        if (pick == other) {
            topoName = QFileDialog::getOpenFileName(m_host.window, tr("hwloc XML"), QString(), tr("hwloc XML (*.xml)"));
            if (topoName.isEmpty()) return;
        }
        try {
            auto topo = std::make_shared<const sched::Topology>(sched::loadTopology(topoName.toStdString()));
            if (topo->nrCpus() < trace->nr_cpus)
                throw sched::InputError(topoName.toStdString(), "", fmt::format("has {} CPUs, the trace {}", topo->nrCpus(), trace->nr_cpus));
            showTrace(trace, topo, path);
        } catch (const std::exception& e) {
            QMessageBox::warning(m_host.window, tr("Open trace"), QString::fromUtf8(e.what()));
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Side B beside a recorded trace: a second trace, or a simulation

void TraceMode::openTraceBDialog() {
    if (!active()) {
        message(tr("Open a trace first: B is shown beside it"), 6000);
        return;
    }
    const QString path = QFileDialog::getOpenFileName(m_host.window, tr("Open trace as B"), QString(),
                                                      tr("Scheduler traces (*.txt *.gz *.dat *.trace);;All files (*)"));
    if (path.isEmpty()) return;
    const auto forA = sideA().trace;
    readTraceAsync(path, [this, path, forA](std::shared_ptr<const sched::Trace> trace, const QString& err) {
        if (!trace) {
            if (!err.isEmpty()) QMessageBox::warning(m_host.window, tr("Open trace as B"), err);
            return;
        }
        if (sideA().trace != forA) return;  // A was replaced (or left) while B was read
        const QString why = showTraceB(std::move(trace), path);
        if (!why.isEmpty()) QMessageBox::warning(m_host.window, tr("Open trace as B"), why);
    });
}

QString TraceMode::showTraceB(std::shared_ptr<const sched::Trace> trace, const QString& path, std::shared_ptr<const sched::AgreeReport> agreed) {
    if (!active()) return tr("%1: no trace is shown as A (open one first)").arg(path);
    if (!trace) return tr("%1: no trace").arg(path);
    const auto& topo = sideA().topo;
    if (trace->nr_cpus > topo->nrCpus())
        return tr("%1: has %2 CPUs, more than trace A's machine %3 (%4 CPUs)").arg(path).arg(trace->nr_cpus).arg(q(topo->name())).arg(topo->nrCpus());
    clearSideB();
    m_tb->open(std::move(trace), topo, path);
    showSideB(true);
    setTraceTime(frame() ? frame()->a->now : sideA().t1);
    m_tb->start(std::move(agreed));
    updateAgreeProgress();
    return {};
}

void TraceMode::clearSideB() {
    const bool had = traceBShown() || m_beside;
    m_tb->close();  // a replay or an index still being made for the old B stops and is dropped
    if (m_timeline) m_timeline->setSecondLane({}, false);
    if (m_beside) {
        m_beside.reset();
        m_besideSnap.reset();
        m_besidePath.clear();
        m_host.sim->post([](SimWorker& w) {
            w.pause();
            w.setStopAt(0);
        });
    }
    auto cbs = std::move(m_whenBeside);  // nothing more to wait for
    m_whenBeside.clear();
    for (auto& cb : cbs) QTimer::singleShot(0, this, std::move(cb));
    if (had && active()) showSideB(false);
    fireWhenAgreed();
}

QString TraceMode::showSimulationBeside(const QString& path, const QString& variant) {
    try {
        return showSimulationBeside(sched::loadScenario(path.toStdString()), path, variant);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

QString TraceMode::showSimulationBeside(const sched::Scenario& s, const QString& path, const QString& variant) {
    if (!active()) return tr("%1: no trace is shown (open one first: the simulation runs beside it)").arg(path);
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
    const auto& topo = sideA().topo;
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
    m_host.sim->post([s, k](SimWorker& w) {
        w.pause();
        w.restart(s, k, k, false, s.seed, "simulated");
    });
    m_besideTarget = traceCursor();
    requestBesideFrame();
    return {};
}

void TraceMode::requestBesideFrame() {
    if (!m_beside) return;
    m_besideRunning = true;
    m_host.sim->post([s = *m_beside, k = m_besideKnobs, seed = m_besideSeed, ns = m_besideTarget](SimWorker& w) { w.runTo(s, k, seed, ns); });
}

bool TraceMode::besideReady() const {
    // The worker stops exactly at the asked time (or earlier when the run ends); an older frame
    // still on its way (running, or paused at the previous cursor) does not count.
    return m_besideSnap && !m_besideRunning && (m_besideSnap->now == m_besideTarget || (m_besideSnap->done && m_besideSnap->now < m_besideTarget));
}

void TraceMode::whenBesideReady(std::function<void()> done) {
    if (m_beside && !besideReady()) m_whenBeside.push_back(std::move(done));
    else QTimer::singleShot(0, this, std::move(done));
}

void TraceMode::besideSimDialog() {
    if (!active()) {
        message(tr("Open a trace first: the simulation runs beside it"), 6000);
        return;
    }
    const QString p = QFileDialog::getOpenFileName(m_host.window, tr("Simulate beside the trace"),
                                                   QString::fromStdString(sched::shippedScenariosDir()), tr("Scenarios (*.json)"));
    if (p.isEmpty()) return;
    // A scenario of several variants (baseline, a patch): which one runs beside the trace.
    QString variant;
    try {
        const sched::Scenario s = sched::loadScenario(p.toStdString());
        if (s.variants.size() > 1) {
            QStringList items;
            for (const auto& v : s.variants) items << QStringLiteral("%1 (%2)").arg(q(v.name), q(v.knobs.presetName));
            bool ok = false;
            const QString pick = QInputDialog::getItem(m_host.window, tr("Simulate beside the trace"),
                                                       tr("Variant of %1:").arg(QFileInfo(p).fileName()), items, 0, false, &ok);
            if (!ok) return;
            variant = q(s.variants[std::size_t(items.indexOf(pick))].name);
        }
    } catch (const std::exception&) {
        // showSimulationBeside says what is wrong with the file
    }
    const QString err = showSimulationBeside(p, variant);
    if (!err.isEmpty()) QMessageBox::warning(m_host.window, tr("Simulate beside the trace"), err);
}

bool TraceMode::copyCompareText(std::function<void(const QString&)> copied) {
    if (!active()) return false;
    if (!traceBShown()) {
        message(m_beside ? tr("The A/B table compares two traces (schedlab-cli compare-traces): open a second trace as B")
                         : tr("Open a second trace as B: the table compares the two traces"),
                6000);
        return true;
    }
    // schedlab-cli compare-traces A B --topology T: baseline knobs for both agreement rows.
    message(tr("Making the A/B table of the two traces…"), 4000);
    const auto a = sideA().trace, b = sideB().trace;
    auto* mail = new Mailbox(this);
    progressJobThreads().start([a, b, topo = sideA().topo, box = mail->handle(), mail, this, copied = std::move(copied)]() mutable {
        QString t;
        try {
            sched::TraceCompareOptions o;
            o.agreement = a->ns_timestamps && b->ns_timestamps;
            t = QString::fromStdString(sched::traceCompareTable(*a, *b, topo, sched::Knobs{}, sched::Knobs{}, o));
        } catch (const std::exception& e) {
            t = QStringLiteral("error: ") + QString::fromUtf8(e.what());
        }
        box.post([this, mail, a, b, t, copied = std::move(copied)] {
            mail->deleteLater();
            if (a != sideA().trace || b != sideB().trace) return;  // the traces changed meanwhile
            if (t.startsWith(QLatin1String("error: "))) {
                message(t.mid(7), 8000);
                return;
            }
            QApplication::clipboard()->setText(t);
            message(tr("A/B table of the two traces copied (%1 lines)").arg(t.count(QLatin1Char('\n'))), 4000);
            if (copied) copied(t);
        });
    });
    return true;
}

QString TraceMode::status() const {
    if (!active() || !frame()) return {};
    const TraceSide& ta = sideA();
    const TraceSide& tb = sideB();
    const qint64 rel = frame()->a->now - ta.t0;
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
        const auto& b = frame()->b;
        st += QStringLiteral(" · B: %1 simulated to %2").arg(QFileInfo(m_besidePath).fileName(), simTime(b ? b->now : 0));
        if (b && b->now < m_besideTarget) st += b->done ? tr(" (its run ended)") : tr(" (running to %1)").arg(simTime(m_besideTarget));
    }
    return st + QStringLiteral(" · ") + agreementSummary();
}

bool TraceMode::offerSimFrame(const std::shared_ptr<const Frame>& f) {
    const auto shown = frame();
    if (!m_beside || !shown || f->b || f->a->topo != m_beside->topo) return false;  // not (yet) the run beside the trace
    m_besideSnap = f->a;
    m_besideRunning = f->running;
    auto g = std::make_shared<Frame>(*shown);
    g->b = f->a;
    m_host.show(g);
    if (besideReady()) {
        auto cbs = std::move(m_whenBeside);
        m_whenBeside.clear();
        for (auto& cb : cbs) QTimer::singleShot(0, this, std::move(cb));
    }
    return true;
}

QString TraceMode::titleA(const sched::Snapshot& a) const {
    if (traceBShown() || m_beside)  // two sides at one cursor: each one's time since its start
        return QStringLiteral("A: %1 · %2 since its first event").arg(q(a.knobs), simTime(a.now - sideA().t0));
    return QStringLiteral("A: %1").arg(q(a.knobs));
}

QString TraceMode::titleB(const sched::Snapshot& b) const {
    if (m_beside)
        return QStringLiteral("B: simulated, %1 · %2%3")
            .arg(q(b.knobs), simTime(b.now),
                 b.now >= m_besideTarget ? QString()
                 : b.done                ? tr(" (its run ended)")
                                         : tr(" (running to %1)").arg(simTime(m_besideTarget)));
    if (traceBShown()) return QStringLiteral("B: %1 · %2 since its first event").arg(q(b.knobs), simTime(b.now - sideB().t0));
    return QStringLiteral("B: %1").arg(q(b.knobs));
}

QString TraceMode::caption() const {
    TraceCaption c;
    c.a = &sideA();
    c.aSummary = agreementSummary();
    c.cursor = traceCursor();
    c.openedDisagreement = m_openedDis;
    if (traceBShown()) {
        c.b = &sideB();
        c.bSummary = agreementSummaryB();
    } else if (m_beside) {
        c.beside = &*m_beside;
        c.besidePath = m_besidePath;
        c.besideSeed = m_besideSeed;
        c.besideTarget = m_besideTarget;
        c.besideSnap = frame() ? frame()->b.get() : nullptr;
    }
    return traceCaption(c);
}

}  // namespace schedlab
