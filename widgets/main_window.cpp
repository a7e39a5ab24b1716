// SPDX-License-Identifier: GPL-2.0-or-later
// main_window.cpp: see main_window.h. The window only paints frames the worker publishes and
// sends it commands; it never touches a simulation directly.
#include "main_window.h"

#include "caption.h"
#include "counters_plot.h"
#include "outcome_plot.h"
#include "delta_table.h"
#include "decision_inspector.h"
#include "flow_view.h"
#include "knob_panel.h"
#include "progress_job.h"
#include "recent_menu.h"
#include "latency_plot.h"
#include "rq_plot.h"
#include "run_bar.h"
#include "view_export.h"
#include "text_util.h"
#include "topology_heatmap.h"
#include "trace_session.h"
#include "trace_mode.h"

#include "util/input_error.h"
#include "util/install_paths.h"
#include "kernel/knobs.h"
#include "sim/checkpoint.h"
#include "sim/report.h"
#include "run_export.h"
#include "topology/topology_json.h"
#include "replay/trace_compare.h"
#include "replay/trace_snapshot.h"

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QStandardPaths>
#include <QGridLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QProgressDialog>
#include <QHBoxLayout>
#include <QProgressBar>
#include <QImage>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QPointer>
#include <QSaveFile>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>

namespace schedlab {
namespace {

// A run whose workloads are pinned (taskset -c): the CPUs they may use, for the heatmap's title
// (the others are dimmed). "" when they may use every CPU.
QString pinnedNote(const sched::Snapshot& s) {
    sched::CpuMask usable;
    bool pinned = false;
    for (std::size_t c = 0; c < s.cpus.size(); ++c) {
        if (s.cpus[c].outside_masks) pinned = true;
        else usable.set(int(c));
    }
    return pinned ? QStringLiteral(" · taskset -c %1 (other CPUs dimmed)").arg(q(usable.toList())) : QString();
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(QStringLiteral("schedlab"));
    setObjectName(QStringLiteral("MainWindow"));
    resize(1600, 1000);
    m_sim = new SimController(this);
    connect(m_sim, &SimController::frameReady, this, &MainWindow::onFrame);
    connect(m_sim->worker(), &SimWorker::compareTextReady, this, [this](const QString& t) {
        if (t.isEmpty()) {
            statusBar()->showMessage(tr("Turn A/B on: the table compares the two sides."), 6000);
            return;
        }
        QApplication::clipboard()->setText(t);
        statusBar()->showMessage(tr("A/B table copied (%1 lines)").arg(t.count(QLatin1Char('\n'))), 4000);
        emit compareTextCopied(t);
    });
    connect(m_sim->worker(), &SimWorker::error, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    connect(m_sim->worker(), &SimWorker::branched, this, [this](quint64 seq, bool ok) {
        if (!ok) m_whenBranched = nullptr;
        m_branchSeq = seq;
        if (m_frame && m_frame->seq >= seq && m_whenBranched) std::exchange(m_whenBranched, nullptr)();
    });
    connect(m_sim->worker(), &SimWorker::stateRestored, this, [this](bool ok, const QString& err, quint64 seq) {
        if (!ok) {
            m_whenRestored = nullptr;
            statusBar()->showMessage(tr("Cannot restore the state: %1").arg(err), 10000);
            emit stateFailed(err);
            return;
        }
        m_restoreSeq = seq;
        if (m_frame && m_frame->seq >= seq && m_whenRestored) std::exchange(m_whenRestored, nullptr)();
    });
    connect(m_sim->worker(), &SimWorker::stateSaved, this, [this](const QString& path, const QString& err) {
        statusBar()->showMessage(err.isEmpty() ? tr("State saved to %1").arg(path) : tr("Cannot save the state: %1").arg(err), 8000);
        if (m_whenSaved) std::exchange(m_whenSaved, nullptr)(err);
    });
    connect(m_sim->worker(), &SimWorker::fastForwardProgress, this, [this](qint64 now, qint64 target, double rate, bool done, qint64 steadyFrom) {
        showFastForward(now, target, done, steadyFrom);
        statusBar()->showMessage(RunBar::fastForwardText(now, target, rate, done, m_ffToSteady), done ? 8000 : 0);
        // A fast-forward to the steady state ends where A settled: the frame at that time is the one.
        if (done && m_ffToSteady) {
            m_ffToSteady = false;
            m_runUntil = now;
        }
        emit fastForwardProgress(now, target, rate, done);
    });
    createViews();
    createActions();
    createMenus();
    TraceMode::Host host;
    host.window = this;
    host.heatA = m_heatA;
    host.heatB = m_heatB;
    host.inspector = m_inspector;
    host.counters = m_counters;
    host.status = m_status;
    host.sim = m_sim;
    host.openTraceB = m_openTraceBAct;
    host.beside = m_besideAct;
    host.frame = [this] { return m_frame; };
    host.show = [this](std::shared_ptr<const Frame> f) { showFrame(std::move(f)); };
    host.pause = [this] { setRunning(false); };
    host.setInspected = [this](TopologyHeatmap* h) { m_inspected = h; };
    m_trace = new TraceMode(std::move(host), this);
    QSettings st;
    restoreGeometry(st.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(st.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow() {
    m_trace->shutdown();  // a trace index or an agreement replay still being made stops early
    m_sim->shutdown();
}

void MainWindow::closeEvent(QCloseEvent* e) {
    m_trace->shutdown();  // replays and indexes on the thread pool stop; a knobs dock hidden for a trace is shown (the saved layout keeps it)
    QSettings st;
    st.setValue(QStringLiteral("window/geometry"), saveGeometry());
    st.setValue(QStringLiteral("window/state"), saveState());
    m_sim->shutdown();  // stops mid-run cleanly: abort flag, quit, wait
    e->accept();
}

void MainWindow::createViews() {
    m_heatA = new TopologyHeatmap(this);
    m_heatA->setObjectName(QStringLiteral("heatmapA"));
    m_heatB = new TopologyHeatmap(this);
    m_heatB->setObjectName(QStringLiteral("heatmapB"));
    auto* heatSplit = new QSplitter(Qt::Horizontal, this);
    heatSplit->addWidget(m_heatA);
    heatSplit->addWidget(m_heatB);
    auto* central = new QWidget(this);
    auto* cl = new QVBoxLayout(central);
    cl->setContentsMargins(2, 2, 2, 2);
    cl->addWidget(heatSplit, 1);
    m_delta = new QLabel(central);
    m_delta->setObjectName(QStringLiteral("deltaTable"));
    m_delta->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_delta->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_delta->setToolTip(
        tr("A vs B, counted since the time in the \"since\" column: totals since t = 0, or rates over the last 100 ms of "
           "simulated time (the machine as it is now, without the start-up)"));
    m_deltaSince = new QComboBox(central);
    m_deltaSince->setObjectName(QStringLiteral("deltaSince"));
    m_deltaSince->addItem(tr("Totals, then the last 100 ms once steady"), int(DeltaSince::steady));
    m_deltaSince->addItem(tr("Totals since t = 0"), int(DeltaSince::start));
    m_deltaSince->addItem(tr("Rates over the last 100 ms"), int(DeltaSince::window));
    m_deltaSince->setToolTip(tr("What the A/B table counts from"));
    m_deltaSince->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_deltaSince, &QComboBox::currentIndexChanged, this, [this] { updateDeltaTable(); });
    auto* deltaRow = new QHBoxLayout;
    deltaRow->addWidget(m_delta, 1);
    deltaRow->addWidget(m_deltaSince, 0, Qt::AlignTop);
    cl->addLayout(deltaRow);
    setCentralWidget(central);

    auto dock = [this](const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    m_rq = new RqPlot(this);
    m_rq->setObjectName(QStringLiteral("rq"));
    m_rqB = new RqPlot(this);
    m_rqB->setObjectName(QStringLiteral("rqB"));
    m_latency = new LatencyPlot(this);
    m_latency->setObjectName(QStringLiteral("latency"));
    m_counters = new CountersPlot(this);
    m_counters->setObjectName(QStringLiteral("counters"));
    m_outcome = new OutcomePlot(this);
    m_outcome->setObjectName(QStringLiteral("outcome"));
    m_knobs = new KnobPanel(this);
    m_inspector = new DecisionInspector(this);
    m_inspector->setObjectName(QStringLiteral("inspector"));
    auto* dRq = dock(tr("Runqueue lengths (A)"), QStringLiteral("dockRq"), m_rq, Qt::BottomDockWidgetArea);
    auto* dRqB = dock(tr("Runqueue lengths (B)"), QStringLiteral("dockRqB"), m_rqB, Qt::BottomDockWidgetArea);
    auto* dLat = dock(tr("Wakeup latency"), QStringLiteral("dockLatency"), m_latency, Qt::BottomDockWidgetArea);
    auto* dCnt = dock(tr("Counters"), QStringLiteral("dockCounters"), m_counters, Qt::BottomDockWidgetArea);
    auto* dOut = dock(tr("Outcome over time"), QStringLiteral("dockOutcome"), m_outcome, Qt::BottomDockWidgetArea);
    auto* knobScroll = new QScrollArea(this);
    knobScroll->setWidget(m_knobs);
    knobScroll->setWidgetResizable(true);
    knobScroll->setFrameShape(QFrame::NoFrame);
    auto* dKnob = dock(tr("Knobs"), QStringLiteral("dockKnobs"), knobScroll, Qt::RightDockWidgetArea);
    auto* dIns = dock(tr("Decision inspector (A)"), QStringLiteral("dockInspector"), m_inspector, Qt::RightDockWidgetArea);
    m_flow = new FlowView(this);
    m_flow->setObjectName(QStringLiteral("flow"));
    auto* flowScroll = new QScrollArea(this);
    flowScroll->setWidget(m_flow);
    flowScroll->setWidgetResizable(true);
    flowScroll->setFrameShape(QFrame::NoFrame);
    auto* dFlow = dock(tr("Decision flow"), QStringLiteral("dockFlow"), flowScroll, Qt::RightDockWidgetArea);
    splitDockWidget(dRq, dLat, Qt::Horizontal);
    tabifyDockWidget(dRq, dRqB);
    dRq->raise();
    tabifyDockWidget(dLat, dCnt);
    tabifyDockWidget(dLat, dOut);
    dLat->raise();
    splitDockWidget(dKnob, dIns, Qt::Vertical);
    tabifyDockWidget(dKnob, dFlow);  // beside the knobs: the decision flow a tab away
    dKnob->raise();
    // Default proportions, once the window has its size (a saved layout replaces them).
    QTimer::singleShot(20, this, [this, dRq, dLat, dKnob, dIns] {
        if (QSettings().contains(QStringLiteral("window/state"))) return;
        resizeDocks({dRq}, {height() * 36 / 100}, Qt::Vertical);
        if (traceMode()) resizeDocks({dIns}, {460}, Qt::Horizontal);  // a trace from the command line: see showTrace()
        else resizeDocks({dKnob}, {340}, Qt::Horizontal);
        resizeDocks({dKnob}, {height() * 46 / 100}, Qt::Vertical);
        resizeDocks({dRq, dLat}, {width() * 45 / 100, width() * 55 / 100}, Qt::Horizontal);
    });
    m_viewMenu = new QMenu(tr("&View"), this);
    for (QDockWidget* d : {dRq, dRqB, dLat, dCnt, dOut, dKnob, dIns, dFlow}) m_viewMenu->addAction(d->toggleViewAction());
    m_viewMenu->addSeparator();
    auto* flowAll = m_viewMenu->addAction(tr("Decision flow: every branch, also those never taken"));
    flowAll->setCheckable(true);
    connect(flowAll, &QAction::toggled, m_flow, &FlowView::setShowAll);
    m_flowWindowAct = m_viewMenu->addAction(tr("Decision flow: the last 5 ms only (else the whole run)"));
    m_flowWindowAct->setCheckable(true);
    m_flowWindowAct->setToolTip(tr("Count the decisions of the last 5 ms of simulated time, among the newest ones kept (a few hundred)"));
    connect(m_flowWindowAct, &QAction::toggled, this, [this](bool on) { setFlowWindow(on ? 5000000 : 0); });
    connect(m_flow, &FlowView::edgeClicked, this, &MainWindow::filterDecisionsByEdge);
    connect(m_inspector, &DecisionInspector::decisionShown, m_flow, [this](const sched::Decision& d) { m_flow->setLit(d); });
    m_viewMenu->addSeparator();
    m_rqSideAct = m_viewMenu->addAction(tr("Runqueue maps A | B side by side"));
    m_rqSideAct->setCheckable(true);
    m_rqSideAct->setToolTip(tr("A's and B's runqueue lengths next to each other instead of in tabs (on by default for a pinned run)"));
    connect(m_rqSideAct, &QAction::toggled, this, [this](bool on) { setRqSideBySide(on); });

    auto syncSelection = [this](const QList<int>& cpus) {
        m_heatA->setSelection(cpus);
        m_heatB->setSelection(cpus);
        m_rq->setSelectedCpus(cpus);
        m_rqB->setSelectedCpus(cpus);
    };
    connect(m_heatA, &TopologyHeatmap::selectionChanged, this, syncSelection);
    connect(m_heatB, &TopologyHeatmap::selectionChanged, this, syncSelection);
    m_inspected = m_heatA;
    connect(m_inspector, &DecisionInspector::highlight, this, [this](const std::vector<int>& cpus, int chosen, int kernel) {
        m_inspected->setHighlight(cpus);
        m_inspected->setHighlightTarget(chosen);
        m_inspected->setKernelChoice(kernel);
    });
    connect(m_inspector, &DecisionInspector::disagreementPicked, this, [this](int k) { openDisagreement(k); });
    connect(m_inspector, &DecisionInspector::nextDisagreementRequested, this, [this] { stepDisagreement(+1); });
    // A click on a wakeup arrow shows the newest decision behind it (that side's decision ring).
    auto arrowClicked = [this](int side, int from, int to, bool wakeup) {
        if (!m_frame) return;
        const auto& snap = side == 0 ? m_frame->a : m_frame->b;
        if (!wakeup || !snap) {
            statusBar()->showMessage(tr("CPU %1 → CPU %2: load-balance migrations; no wakeup decision behind them").arg(from).arg(to), 6000);
            return;
        }
        for (auto it = snap->decisions.rbegin(); it != snap->decisions.rend(); ++it)
            if (it->d.prev_cpu == from && it->d.cpu == to) {
                m_inspected = side == 0 ? m_heatA : m_heatB;  // the CPUs it examined go on that side's heatmap
                m_inspector->show(*it);
                m_inspected = m_heatA;
                return;
            }
        statusBar()->showMessage(tr("CPU %1 → CPU %2: the decision is older than the %3 kept").arg(from).arg(to).arg(snap->decisions.size()), 6000);
    };
    connect(m_heatA, &TopologyHeatmap::arrowClicked, this, [arrowClicked](int f, int t, bool w) { arrowClicked(0, f, t, w); });
    connect(m_heatB, &TopologyHeatmap::arrowClicked, this, [arrowClicked](int f, int t, bool w) { arrowClicked(1, f, t, w); });
    connect(m_inspector, &DecisionInspector::stepWakeupRequested, this, [this] {
        setRunning(false);
        m_sim->post([](SimWorker& w) { w.stepWakeup(); });
    });
    connect(m_knobs, &KnobPanel::knobsChanged, this, [this](int side, const sched::Knobs& k) {
        if (k.proxy_exec != m_proxyRun[side ? 1 : 0]) {
            // proxy_exec is a boot parameter (donors sit on the runqueues): a new machine from t = 0.
            statusBar()->showMessage(tr("proxy_exec is a boot parameter: both sides start again from t = 0"), 6000);
            restart();
            return;
        }
        m_sim->post([side, k](SimWorker& w) { w.setKnobs(side, k); });
    });
    connect(m_knobs, &KnobPanel::abToggled, this, [this](bool) { restart(); });
    connect(m_knobs, &KnobPanel::workloadsApplied, this, [this](const QString& text) {
        const QString err = applyWorkloads(text);
        m_knobs->setWorkloadError(err);
    });
}

void MainWindow::createActions() {
    m_runBar = new RunBar(this);
    addToolBar(m_runBar);
    connect(m_runBar, &RunBar::playToggled, this, [this] { setRunning(!m_running); });
    connect(m_runBar, &RunBar::stepEventRequested, this, [this] {
        setRunning(false);
        m_sim->post([](SimWorker& w) { w.stepEvent(); });
    });
    connect(m_runBar, &RunBar::stepWakeupRequested, this, [this] {
        setRunning(false);
        m_sim->post([](SimWorker& w) { w.stepWakeup(); });
    });
    connect(m_runBar, &RunBar::stepTimeRequested, this, [this](qint64 ns) {
        setRunning(false);
        m_sim->post([ns](SimWorker& w) { w.stepTime(ns); });
    });
    connect(m_runBar, &RunBar::fastForwardRequested, this, [this](qint64 ns) { fastForward(ns); });
    connect(m_runBar, &RunBar::restartRequested, this, [this] { restart(); });
    connect(m_runBar, &RunBar::speedChanged, this,
            [this](double simPerWall) { m_sim->post([simPerWall](SimWorker& w) { w.setSpeed(simPerWall); }); });
    connect(m_runBar, &RunBar::metricChanged, this, [this](int i) {
        for (TopologyHeatmap* h : {m_heatA, m_heatB}) h->setMetric(TopologyHeatmap::Metric(i));
    });
    connect(m_runBar, &RunBar::colormapChanged, this, [this](int i) {
        for (TopologyHeatmap* h : {m_heatA, m_heatB}) h->setColormap(Colormap(i));
    });
    connect(m_runBar, &RunBar::arrowSpanChanged, this, [this](qint64 ns) {
        for (TopologyHeatmap* h : {m_heatA, m_heatB}) {
            h->setShowArrows(ns > 0);
            if (ns > 0) h->setArrowSpanNs(ns);
        }
    });
    connect(m_runBar, &RunBar::message, this, [this](const QString& text) { statusBar()->showMessage(text, 6000); });
    m_status = new QLabel(this);
    // A normal widget: a temporary message (a fast-forward's progress, an error) takes its place
    // while it shows; the progress bar and Stop stay.
    statusBar()->addWidget(m_status, 1);
    // A fast-forward's progress, and its Stop (the window stays usable meanwhile).
    m_ffBar = new QProgressBar(this);
    m_ffBar->setObjectName(QStringLiteral("fastForwardProgress"));
    m_ffBar->setRange(0, 1000);
    m_ffBar->setMinimumWidth(260);
    m_ffBar->hide();
    statusBar()->addPermanentWidget(m_ffBar);
    m_ffStop = new QToolButton(this);
    m_ffStop->setObjectName(QStringLiteral("fastForwardStop"));
    m_ffStop->setText(tr("Stop"));
    m_ffStop->setToolTip(tr("Stop the fast-forward here (Space)"));
    m_ffStop->hide();
    connect(m_ffStop, &QToolButton::clicked, this, [this] { setRunning(false); });
    statusBar()->addPermanentWidget(m_ffStop);
}

void MainWindow::showFastForward(qint64 now, qint64 target, bool done, qint64 steadyFrom) {
    m_ffBar->setVisible(!done);
    m_ffStop->setVisible(!done);
    if (done) return;
    if (!m_ffToSteady) {
        m_ffBar->setValue(target > 0 ? int(std::clamp(1000.0 * double(now) / double(target), 0.0, 1000.0)) : 0);
        m_ffBar->setFormat(tr("to t = %1 s: %p %").arg(double(target) / 1e9, 0, 'f', 3));
        return;
    }
    // To the steady state: its end is not known ahead, so the bar shows how long A has held the
    // steady state its detector sees (SimWorker::kSteadyHoldNs ends the way there).
    if (steadyFrom < 0) {
        m_ffBar->setValue(0);
        m_ffBar->setFormat(tr("start-up: t = %1 s").arg(double(now) / 1e9, 0, 'f', 2));
        return;
    }
    const double held = double(now - steadyFrom) / double(SimWorker::kSteadyHoldNs);
    m_ffBar->setValue(int(std::clamp(1000.0 * held, 0.0, 999.0)));  // full only at the end (the detector's next sample)
    m_ffBar->setFormat(tr("steady since t = %1 s: held %2 of %3 s")
                           .arg(double(steadyFrom) / 1e9, 0, 'f', 2)
                           .arg(double(now - steadyFrom) / 1e9, 0, 'f', 2)
                           .arg(double(SimWorker::kSteadyHoldNs) / 1e9, 0, 'f', 1));
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open scenario…"), QKeySequence::Open, this, [this] {
        const QString p =
            QFileDialog::getOpenFileName(this, tr("Open scenario"), QString::fromStdString(sched::shippedScenariosDir()), tr("Scenarios (*.json)"));
        if (p.isEmpty()) return;
        const QString err = openScenario(p);
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Cannot open scenario"), err);
    });
    file->addAction(tr("Open &default scenario"), this, [this] { openDefault(); });
    file->addAction(tr("Open &trace…"), QKeySequence(Qt::CTRL | Qt::Key_T), this, [this] { openTraceDialog(); });
    m_openTraceBAct = file->addAction(tr("Open trace as &B…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T), this, [this] { openTraceBDialog(); });
    m_openTraceBAct->setToolTip(tr("A second recording on the same machine beside the shown trace (before/after a patch)"));
    m_openTraceBAct->setEnabled(false);
    m_besideAct = file->addAction(tr("Si&mulate beside the trace…"), this, [this] { besideSimDialog(); });
    m_besideAct->setToolTip(tr("Side B: a scenario on the trace's machine, run to the cursor's time"));
    m_besideAct->setEnabled(false);
    m_recentMenu = new RecentMenu(tr("Open &recent"), this);
    file->addMenu(m_recentMenu);
    connect(m_recentMenu, &RecentMenu::picked, this, [this](const QString& p) {
        const QString err = openScenario(p);
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Cannot open scenario"), err);
    });
    file->addAction(tr("&Save scenario as…"), QKeySequence::Save, this, [this] { saveScenario(); });
    file->addAction(tr("Save s&tate…"), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S), this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, tr("Save state"), QStringLiteral("schedlab.state"), tr("schedlab states (*.state)"));
        if (!p.isEmpty()) saveSimState(p);
    });
    file->addAction(tr("Open st&ate…"), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_O), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Open state"), QString(), tr("schedlab states (*.state);;All files (*)"));
        if (p.isEmpty()) return;
        if (const QString err = openSimState(p); !err.isEmpty()) QMessageBox::warning(this, tr("Cannot open state"), err);
    });
    file->addSeparator();
    file->addAction(tr("&Export window…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] { exportDialog(nullptr); });
    QMenu* ev = file->addMenu(tr("Export &view"));
    for (const auto& [name, label] : std::vector<std::pair<QString, QString>>{{QStringLiteral("heatmapA"), tr("Heatmap A")},
                                                                              {QStringLiteral("heatmapB"), tr("Heatmap B")},
                                                                              {QStringLiteral("rq"), tr("Runqueue lengths A")},
                                                                              {QStringLiteral("rqB"), tr("Runqueue lengths B")},
                                                                              {QStringLiteral("latency"), tr("Wakeup latency")},
                                                                              {QStringLiteral("counters"), tr("Counters")},
                                                                              {QStringLiteral("outcome"), tr("Outcome over time")}})
        ev->addAction(label, this, [this, n = name] { exportDialog(view(n)); });
    ev->addAction(tr("Runqueue lengths A | B side by side"), this, [this] {
        const QString p =
            QFileDialog::getSaveFileName(this, tr("Export"), QStringLiteral("schedlab-rq-ab.png"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
        if (p.isEmpty()) return;
        const QString err = exportRqPair(p);
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Export failed"), err);
        else statusBar()->showMessage(tr("Exported %1").arg(p), 4000);
    });
    m_exportTraceAct = file->addAction(tr("Export &trace (ftrace text)…"), this, [this] { exportTraceDialog(); });
    m_exportTraceAct->setToolTip(tr("Side A's run from t = 0 to the shown time as ftrace text, as schedlab-cli run --ftrace writes it"));
    file->addAction(tr("Export rq-length &CSV…"), this, [this] { exportRqCsvDialog(); });
    connect(file, &QMenu::aboutToShow, this, [this] {
        m_exportTraceAct->setEnabled(!traceMode() && m_scenario && m_frame);
        m_openTraceBAct->setEnabled(traceMode());
        m_besideAct->setEnabled(traceMode());
    });
    file->addAction(tr("&Copy A/B table as text"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C), this, [this] { copyCompareText(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    menuBar()->addMenu(m_viewMenu);
    QMenu* run = menuBar()->addMenu(tr("&Run"));
    auto* toSteady = run->addAction(tr("Fast-forward to the &steady state"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G), this,
                                    [this] { fastForwardToSteady(std::int64_t(60) * 1000000000); });
    toSteady->setToolTip(
        tr("Run both sides without drawing until A's steady-state detector says it has been settled for a second (at most 60 s simulated)"));
    auto* bHere = run->addAction(tr("&B from here (A's state, B's knobs)"), QKeySequence(Qt::CTRL | Qt::Key_B), this, [this] { branchHere(1); });
    bHere->setToolTip(tr("Side B starts again from side A's state now, with B's knobs: what the patch does from this point on"));
    auto* aHere = run->addAction(tr("&A from here (B's state, A's knobs)"), this, [this] { branchHere(0); });
    aHere->setToolTip(tr("Side A starts again from side B's state now, with A's knobs"));
    connect(run, &QMenu::aboutToShow, this, [this, bHere, aHere, toSteady] {
        const bool ok = !traceMode() && m_scenario && m_knobs->abEnabled();
        bHere->setEnabled(ok);
        aHere->setEnabled(ok);
        toSteady->setEnabled(!traceMode() && m_scenario);
    });
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About schedlab"), this, [this] {
        QMessageBox::about(this, tr("About schedlab"),
                           tr("<h3>schedlab</h3><p>A laboratory for the Linux CFS wakeup path "
                              "(<tt>select_task_rq_fair()</tt> and everything it calls, as in Linux 6.1).</p>"
                              "<p>Space play/pause · . one event · W next wakeup (traced) · M 1 ms · Ctrl+R restart · "
                              "Ctrl+E export · Ctrl+Shift+C copy the A/B table · Ctrl+T open a trace; on its timeline N / Shift+N "
                              "next / previous disagreement with the kernel</p>"));
    });
}

void MainWindow::filterDecisionsByEdge(int edge) {
    m_flowEdge = edge == m_flowEdge ? -1 : edge;
    if (m_flowEdge >= 0) {
        const auto& f = sched::DecisionFlow::get();
        const auto& e = f.edges()[std::size_t(m_flowEdge)];
        statusBar()->showMessage(tr("Decision inspector: side A's recent decisions through %1 → %2 (click the row again for all)")
                                     .arg(q(f.nodes()[std::size_t(e.from)].label), q(f.nodes()[std::size_t(e.to)].label)),
                                 8000);
    }
    if (m_frame) {
        m_lastSlowMs = 0;
        showFrame(m_frame);
    }
}

void MainWindow::setFlowWindow(qint64 ns) {
    m_flowWindowNs = std::max<qint64>(0, ns);
    if (m_flowWindowAct && m_flowWindowAct->isChecked() != (m_flowWindowNs > 0)) {
        const QSignalBlocker block(m_flowWindowAct);
        m_flowWindowAct->setChecked(m_flowWindowNs > 0);
    }
    if (m_frame) updateFlow(*m_frame);
}

void MainWindow::updateFlow(const Frame& f) {
    if (!f.a) return;
    if (traceMode()) {
        // A recorded trace: schedlab's decisions on it (the agreement replay), the disagreements marked.
        const auto ag = agreement();
        if (m_flowTrace && ag.get() == m_flowAgreement) return;
        m_flowTrace = true;
        m_flowAgreement = ag.get();
        sched::FlowCounts mine, dis;
        if (ag)
            for (const auto& row : ag->rows)
                if (row.decision) {
                    mine.add(*row.decision);
                    if (row.sim != row.kernel) dis.add(*row.decision);
                }
        m_flow->setCounts(mine, nullptr, tr("schedlab on the trace"), {});
        m_flow->setDisagreements(&dis);
        m_flow->setDescription(tr("Recorded trace %1: schedlab's decision for each of its wakeups (the agreement replay), "
                                  "and per row (✕) those where the kernel chose another CPU.")
                                   .arg(QFileInfo(m_trace->sideA().path).fileName()));
        return;
    }
    m_flowAgreement = nullptr;
    m_flowTrace = false;
    m_flow->setDisagreements(nullptr);
    if (m_flowWindowNs > 0) {
        // The last m_flowWindowNs of each side, from the newest decisions its snapshot keeps.
        auto recent = [this](const sched::Snapshot& s) {
            sched::FlowCounts c;
            for (const auto& r : s.decisions)
                if (r.time >= s.now - m_flowWindowNs) c.add(r.d);
            return c;
        };
        const sched::FlowCounts ra = recent(*f.a), rb = f.b ? recent(*f.b) : sched::FlowCounts{};
        const QString last = tr(" (last %1 ms)").arg(double(m_flowWindowNs) / 1e6);
        m_flow->setCounts(ra, f.b ? &rb : nullptr, q(f.a->knobs) + last, f.b ? q(f.b->knobs) + last : QString());
    } else {
        m_flow->setCounts(f.a->flow, f.b ? &f.b->flow : nullptr, q(f.a->knobs), f.b ? q(f.b->knobs) : QString());
    }
    if (f.traced) m_flow->setLit(f.traced->d);
}

QWidget* MainWindow::view(const QString& name) const {
    if (name == QLatin1String("heatmapA")) return m_heatA;
    if (name == QLatin1String("heatmapB")) return m_heatB;
    if (name == QLatin1String("rq")) return m_rq;
    if (name == QLatin1String("rqB")) return m_rqB;
    if (name == QLatin1String("latency")) return m_latency;
    if (name == QLatin1String("counters")) return m_counters;
    if (name == QLatin1String("outcome")) return m_outcome;
    if (name == QLatin1String("inspector")) return m_inspector;
    if (name == QLatin1String("flow")) return m_flow;
    if (name == QLatin1String("knobs")) return m_knobs;
    if (name == QLatin1String("window")) return const_cast<MainWindow*>(this);
    return nullptr;
}

QString MainWindow::openScenario(const QString& path, const StartOptions& o) {
    try {
        openScenario(sched::loadScenario(path.toStdString()), path, o);
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

void MainWindow::openScenario(const sched::Scenario& s, const QString& path, const StartOptions& o) {
    m_scenarioPath = path;
    m_recentMenu->add(QFileInfo(path).absoluteFilePath());
    start(s, o);
}

void MainWindow::openDefault(const StartOptions& o) {
    QFile f(QStringLiteral(":/scenarios/default.json"));
    if (!f.open(QIODevice::ReadOnly)) return;
    const QByteArray text = f.readAll();
    sched::Scenario s = sched::parseScenario(nlohmann::json::parse(text.toStdString()), "default.json", ".");
    m_scenarioPath.clear();
    start(s, o);
}

void MainWindow::start(const sched::Scenario& s, const StartOptions& o) {
    present(s, o);
    restart();
    if (o.autoplay) setRunning(true);
}

void MainWindow::present(const sched::Scenario& s, const StartOptions& o) {
    m_trace->leave();
    m_scenario = s;
    m_seed = o.seed ? o.seed : s.seed;
    sched::Knobs a = o.a ? *o.a : s.variants.front().knobs;
    sched::Knobs b = o.b ? *o.b : (s.variants.size() > 1 ? s.variants[1].knobs : sched::Knobs::preset("idle-delay-v2"));
    m_knobs->blockSignals(true);
    m_knobs->setAbEnabled(o.ab);
    m_knobs->blockSignals(false);
    m_knobs->setKnobs(a, b);
    m_knobs->setEditedSide(o.ab ? 1 : 0);
    if (o.speed >= 0) m_runBar->setSpeed(o.speed);
    setWindowTitle(QStringLiteral("schedlab — %1").arg(q(s.name.empty() ? s.file : s.name)));
    m_flow->setDescription(q(s.description));
    m_flow->setLit(std::nullopt);
    m_flowEdge = -1;
    QStringList cmds;
    for (const auto& w : s.workloads) cmds << QStringLiteral("<tt>%1</tt>").arg(q(sched::workloadCommand(w)).toHtmlEscaped());
    m_knobs->setWorkloads(q(s.doc.contains("workloads") ? s.doc["workloads"].dump(1) : std::string("[]")), cmds.join(QStringLiteral("<br>")));
    // A pinned run (taskset -c, as in the proxy-execution thread) has few CPUs per map: A and B side by side.
    bool pinned = !s.workloads.empty();
    for (const auto& w : s.workloads) pinned = pinned && !sched::workloadCpus(w).empty();
    m_rqSideAct->setChecked(pinned && o.ab);
}

QString MainWindow::openSimState(const QString& path, std::function<void()> done) {
    std::shared_ptr<const sched::Checkpoint> a, b;
    try {
        auto ca = std::make_shared<sched::Checkpoint>(sched::loadCheckpoint(path.toStdString()));
        const std::string companion = sched::Simulation::companionOf(*ca);
        if (!companion.empty()) b = std::make_shared<const sched::Checkpoint>(sched::decodeCheckpoint(companion, path.toStdString() + " (side B)"));
        a = ca;
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    const sched::Scenario& s = a->scenario;
    StartOptions o;
    o.a = a->knobs;
    if (b) o.b = b->knobs;
    o.ab = b || s.variants.size() > 1;
    o.seed = a->seed;
    o.autoplay = false;
    setRunning(false);
    present(s, o);
    m_scenarioPath.clear();
    m_heatB->setVisible(o.ab);
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->setVisible(o.ab);
    const sched::Knobs bKnobs = m_knobs->knobs(1);
    const bool ab = o.ab;
    m_proxyRun[0] = a->knobs.proxy_exec;
    m_proxyRun[1] = bKnobs.proxy_exec;
    m_frame.reset();
    m_whenRestored = std::move(done);
    m_restoreSeq = std::numeric_limits<quint64>::max();
    m_sim->post([a, b, bKnobs, ab](SimWorker& w) { w.restoreState(a, b, bKnobs, ab); });
    return {};
}

void MainWindow::saveSimState(const QString& path, std::function<void(const QString&)> done) {
    if (traceMode() || !m_scenario) {
        if (done) done(tr("no simulated run to save"));
        return;
    }
    m_whenSaved = std::move(done);
    m_sim->post([p = path.toStdString()](SimWorker& w) { w.saveState(p); });
}

QString MainWindow::steadyCachePath() const {
    // Keyed by what makes the state: the scenario document, the seed, both sides' knobs, the state
    // format, and this build (a schedlab built again may move results with the format unchanged).
    const QFileInfo exe(QCoreApplication::applicationFilePath());
    std::string key = m_scenario ? m_scenario->doc.dump() : std::string();
    key += fmt::format("|seed {}|A {}|B {}|format {:016x}|build {} {} {}", m_seed, m_knobs->knobs(0).describe(), m_knobs->knobs(1).describe(),
                       sched::stateFormatHash(), exe.size(), exe.lastModified().toMSecsSinceEpoch(), SCHEDLAB_VERSION);
    for (const std::string& n : sched::Knobs::names()) key += "|" + m_knobs->knobs(0).get(n) + "," + m_knobs->knobs(1).get(n);
    const QByteArray h = QCryptographicHash::hash(QByteArray::fromStdString(key), QCryptographicHash::Sha256).toHex().left(20);
    return QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/steady-%1.state").arg(QString::fromLatin1(h));
}

bool MainWindow::openSteady(const std::optional<sched::Scenario>& s, std::function<void()> done) {
    StartOptions o;
    o.autoplay = false;
    if (s) start(*s, o);
    else openDefault(o);
    const QString cache = steadyCachePath();
    const sched::Scenario scenario = *m_scenario;
    // From t = 0 to the steady state; cached once there (`done` after the cache is written: a
    // window closed at once still leaves it for the next start).
    auto fastForwardThere = [this, done, cache] {
        fastForwardToSteady(std::int64_t(60) * 1000000000, [this, done, cache] {
            const auto f = m_frame;
            if (!(f && f->a && f->a->steady.reached)) {
                if (done) done();
                return;
            }
            QDir().mkpath(QFileInfo(cache).absolutePath());
            saveSimState(cache, [this, done](const QString& err) {
                if (!err.isEmpty()) statusBar()->showMessage(tr("The steady state could not be cached: %1").arg(err), 8000);
                if (done) done();
            });
        });
    };
    if (QFileInfo::exists(cache)) {
        // A cache that does not restore (damaged, or its state refused) is made again.
        auto failed = std::make_shared<QMetaObject::Connection>();
        *failed = connect(this, &MainWindow::stateFailed, this, [this, failed, cache, scenario, fastForwardThere](const QString& err) {
            disconnect(*failed);
            statusBar()->showMessage(tr("The cached steady state did not restore (%1): to the steady state from t = 0").arg(err), 10000);
            QFile::remove(cache);
            StartOptions o2;
            o2.autoplay = false;
            start(scenario, o2);
            fastForwardThere();
        });
        const QString err = openSimState(cache, [this, done, cache, failed] {
            disconnect(*failed);
            statusBar()->showMessage(tr("The steady state, from the cache of an earlier start (%1). Ctrl+R: from t = 0").arg(cache), 10000);
            if (done) done();
        });
        if (err.isEmpty()) return true;
        disconnect(*failed);
        statusBar()->showMessage(tr("The cached steady state cannot be read (%1): to the steady state from t = 0").arg(err), 10000);
        QFile::remove(cache);
        start(scenario, o);
    }
    fastForwardThere();
    return false;
}

QString MainWindow::applyWorkloads(const QString& json) {
    if (!m_scenario) return tr("no scenario");
    try {
        nlohmann::json doc = m_scenario->doc;
        nlohmann::json w;
        try {
            w = nlohmann::json::parse(json.toStdString());
        } catch (const nlohmann::json::parse_error& e) {
            return tr("workloads: not JSON (%1)").arg(QString::fromUtf8(e.what()));
        }
        doc["workloads"] = w;
        const std::string base = m_scenarioPath.isEmpty() ? "." : QFileInfo(m_scenarioPath).absolutePath().toStdString();
        sched::Scenario s = sched::parseScenario(doc, m_scenario->file, base);
        const StartOptions o{m_knobs->knobs(0), m_knobs->knobs(1), m_knobs->abEnabled(), m_seed, -1, m_running};
        start(s, o);
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

void MainWindow::restart() {
    if (!m_scenario) return;
    const bool ab = m_knobs->abEnabled();
    m_heatB->setVisible(ab);
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->setVisible(ab);
    const sched::Scenario s = *m_scenario;
    const sched::Knobs a = m_knobs->knobs(0), b = m_knobs->knobs(1);
    m_proxyRun[0] = a.proxy_exec;
    m_proxyRun[1] = b.proxy_exec;
    const quint64 seed = m_seed;
    const double speed = m_runBar->speed();
    const bool wasRunning = m_running;
    m_frame.reset();
    m_sim->post([s, a, b, ab, seed, speed, wasRunning](SimWorker& w) {
        w.setSpeed(speed);
        w.restart(s, a, b, ab, seed);
        if (wasRunning) w.play();
    });
}

void MainWindow::setRunning(bool on) {
    m_running = on;
    m_runBar->setPlaying(on);
    if (on) m_sim->post([](SimWorker& w) { w.play(); });
    else m_sim->post([](SimWorker& w) { w.pause(); });
}

void MainWindow::runUntil(qint64 ns, std::function<void()> done) {
    m_runUntil = ns;
    m_whenDone = std::move(done);
    if (ns <= 0) {
        m_sim->post([](SimWorker& w) { w.publishNow(); });
        return;
    }
    m_sim->post([ns](SimWorker& w) {
        w.setSpeed(0);
        w.setStopAt(ns);
        w.play();
    });
    m_running = true;
}

void MainWindow::branchHere(int into, std::function<void()> done) {
    if (traceMode() || !m_scenario || !m_knobs->abEnabled()) {
        statusBar()->showMessage(tr("B from here: needs a simulated A/B run"), 6000);
        return;
    }
    setRunning(false);
    // Reported like a fast-forward (its progress signal), then one paused frame; `done` once
    // the window shows that frame (SimWorker::branched names it).
    m_whenBranched = std::move(done);
    m_branchSeq = std::numeric_limits<quint64>::max();
    m_sim->post([into](SimWorker& w) { w.branch(into); });
}

QString MainWindow::changeKnob(int side, const QString& knob, const QString& value) {
    sched::Knobs k = m_knobs->knobs(side);
    try {
        k.set(knob.toStdString(), value.toStdString());
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    if (k.proxy_exec != m_knobs->knobs(side).proxy_exec) return tr("proxy_exec is a boot parameter: it cannot change live");
    m_knobs->setKnobs(side == 0 ? k : m_knobs->knobs(0), side == 1 ? k : m_knobs->knobs(1));
    m_sim->post([side, k](SimWorker& w) { w.setKnobs(side, k); });
    return {};
}

void MainWindow::fastForward(qint64 ns, std::function<void()> done, bool untilSteady) {
    m_runUntil = ns;
    m_ffToSteady = untilSteady;
    m_whenDone = std::move(done);
    m_running = true;
    m_runBar->setPlaying(true);
    m_sim->post([ns, untilSteady](SimWorker& w) { w.fastForward(ns, untilSteady); });
}

void MainWindow::fastForwardToSteady(qint64 maxNs, std::function<void()> done) { fastForward(maxNs, std::move(done), true); }

void MainWindow::stepWakeupThen(std::function<void()> done) {
    m_whenTraced = std::move(done);
    m_tracedAfter = m_frame ? m_frame->a->now : 0;
    setRunning(false);
    m_sim->post([](SimWorker& w) { w.stepWakeup(); });
}

void MainWindow::onFrame() {
    // Frame pacing: painting may take at most about a third of the GUI thread's time, so that on a
    // small machine the simulation keeps its speed (the heatmaps dominate; their paint is measured).
    const qint64 nowWallMs = QDateTime::currentMSecsSinceEpoch();
    const double paintMs = m_heatA->lastPaintMs() + (m_heatB->isVisible() ? m_heatB->lastPaintMs() : 0.0);
    const qint64 minInterval = std::clamp<qint64>(qint64(3 * paintMs), 16, 100);
    if (m_running && nowWallMs - m_lastFrameMs < minInterval) {
        if (!m_framePending) {
            m_framePending = true;
            QTimer::singleShot(int(minInterval - (nowWallMs - m_lastFrameMs)), this, [this] {
                m_framePending = false;
                onFrame();
            });
        }
        return;
    }
    m_lastFrameMs = nowWallMs;
    auto f = m_sim->take();
    if (!f) return;
    if (traceMode()) {  // a trace is shown: the (paused) simulation's frames wait, unless it runs beside the trace
        m_trace->offerSimFrame(f);
        return;
    }
    showFrame(f);
}

void MainWindow::showFrame(std::shared_ptr<const Frame> f) {
    m_frame = f;
    const auto& a = f->a;
    const auto& b = f->b;
    double scale = 4;
    for (const auto* s : {a.get(), b.get()}) {
        if (!s) continue;
        for (const auto& c : s->cpus) scale = std::max(scale, double(c.nr_running));
    }
    scale = std::min(scale, 16.0);
    m_heatA->setScaleMax(scale);
    m_heatB->setScaleMax(scale);
    m_rq->setScaleMax(scale);  // one colour scale for the heatmaps and the time x CPU map
    m_rqB->setScaleMax(scale);
    m_heatA->setTitle(m_trace->titleA(*a) + pinnedNote(*a));
    if (f->traced) m_heatA->setHighlightTarget(f->traced->d.cpu);
    // setSnapshot last: it starts the heatmap's render on the thread pool (a later setter would wait for it).
    m_heatA->setSnapshot(a);
    if (b) {
        m_heatB->setTitle(m_trace->titleB(*b) + pinnedNote(*b));
        m_heatB->setSnapshot(b);
    }
    m_rq->setSnapshot(a);
    if (b && m_rqB->isVisible()) m_rqB->setSnapshot(b);
    // Heatmaps and the runqueue plot follow every frame; the slow-moving views (histograms,
    // counters, the decision list) refresh at most every 100 ms of wall time while running, and
    // always on a paused, stepped or finished frame.
    const qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    if (!f->running || nowMs - m_lastSlowMs >= 100) {
        m_lastSlowMs = nowMs;
        // In a later turn of the event loop, after the heatmaps have painted, so that one turn never
        // carries every view's work (the GUI thread's longest stall).
        QTimer::singleShot(0, this, [this, f] {
            if (m_frame != f && f->running) return;  // a newer frame is already shown; it will refresh them
            const auto& a = f->a;
            const auto& b = f->b;
            if (m_latency->isVisible() || !f->running) m_latency->setSnapshots(a, b);
            if (m_counters->isVisible() || !f->running) m_counters->setSnapshots(a, b);
            if (m_outcome->isVisible() || !f->running) m_outcome->setSnapshots(a, b);
            if (!traceMode()) {  // a trace lists its disagreements
                if (m_flowEdge >= 0) {
                    std::vector<sched::DecisionRecord> through;
                    std::vector<int> path;
                    for (const auto& r : a->decisions) {
                        path.clear();
                        sched::DecisionFlow::get().path(r.d, path);
                        if (std::find(path.begin(), path.end(), m_flowEdge) != path.end()) through.push_back(r);
                    }
                    m_inspector->setDecisions(through, f->traced);
                } else {
                    m_inspector->setDecisions(a->decisions, f->traced);
                }
            }
            updateFlow(*f);
        });
    }
    if (traceMode())  // time since the trace's first event, as the trace bar; and the trace's clock, as trace-cmd report prints it
        m_runBar->setClock(
            QStringLiteral("t = %1 (trace clock %2 s)").arg(simTime(a->now - m_trace->sideA().t0)).arg(double(a->now) / 1e9, 0, 'f', 6), a->now);
    else m_runBar->setClock(QStringLiteral("t = %1").arg(simTime(a->now)), a->now);
    updateDeltaTable();
    if (traceMode()) {
        m_status->setText(m_trace->status());
    } else if (m_scenario) {
        const QString wl = a->reports.empty() ? QString() : q(a->reports.front().command);
        // The steady-state detector's verdict per side: what a figure read off the window is.
        auto verdict = [](const sched::Snapshot& s) {
            if (s.done) return tr("ended");
            // With the detector's figures since then: those of `schedlab-cli run` stopped at the same time.
            if (s.steady.reached && s.steady.from_ns >= 0)
                return tr("steady since t = %1 s (%2 busy CPUs, %3 M migrations/s)")
                    .arg(double(s.steady.from_ns) / 1e9, 0, 'f', 2)
                    .arg(s.steady.busy_cpus, 0, 'f', 1)
                    .arg(s.steady.migrations_per_s / 1e6, 0, 'f', 2);
            return tr("start-up");
        };
        QString state = b ? QStringLiteral("A %1, B %2").arg(verdict(*a), verdict(*b)) : verdict(*a);
        if (!a->done && !(a->steady.reached && a->steady.from_ns >= 0))  // the way there, for a newcomer
            state += tr(" (Ctrl+Shift+G: to the steady state)");
        m_status->setText(QStringLiteral("%1 · %2 (%3 CPUs) · %4 · seed %5 · %6 · %7 events · %8")
                              .arg(m_scenarioPath.isEmpty() ? QStringLiteral("default scenario") : QFileInfo(m_scenarioPath).fileName())
                              .arg(q(m_scenario->topo->name()))
                              .arg(m_scenario->topo->nrCpus())
                              .arg(wl)
                              .arg(m_seed)
                              .arg(state)
                              .arg(a->events + (b ? b->events : 0))
                              .arg(f->running ? QStringLiteral("%1 M events/s, %2 simulated ms/s")
                                                    .arg(f->eventsPerWallS / 1e6, 0, 'f', 2)
                                                    .arg(f->simNsPerWallS / 1e6, 0, 'f', 1)
                                              : (f->done ? tr("finished") : tr("paused"))));
    }
    if (!f->running && m_running && (f->done || (m_runUntil > 0 && a->now >= m_runUntil))) {
        m_running = false;
        m_runBar->setPlaying(false);
    }
    // A step into the next wakeup ends with one, or with the run's end (no wakeup left to step into).
    if (m_whenTraced && ((f->traced && f->traced->time >= m_tracedAfter) || f->done)) {
        if (!(f->traced && f->traced->time >= m_tracedAfter)) statusBar()->showMessage(tr("The run has ended: no wakeup left to step into"), 6000);
        auto cb = std::move(m_whenTraced);
        m_whenTraced = nullptr;
        cb();
    }
    if (m_whenBranched && f->seq >= m_branchSeq) std::exchange(m_whenBranched, nullptr)();
    if (m_whenRestored && f->seq >= m_restoreSeq) std::exchange(m_whenRestored, nullptr)();
    if (m_whenDone && !f->running && (f->done || a->now >= m_runUntil)) {
        auto cb = std::move(m_whenDone);
        m_whenDone = nullptr;
        cb();
    }
}

void MainWindow::updateDeltaTable() {
    // A vs B delta table: what a reader of the thread asks first.
    const auto f = m_frame;
    const auto since = DeltaSince(m_deltaSince->currentData().toInt());
    const QString delta = f && f->a && f->b ? deltaTable(*f->a, *f->b, f->done, traceMode(), since) : QString();
    m_delta->setText(delta);
    m_delta->setVisible(!delta.isEmpty());
    m_deltaSince->setVisible(!delta.isEmpty() && !traceMode());
}

QString MainWindow::caption() const {
    if (traceMode() && m_frame) return m_trace->caption();
    if (!m_frame || !m_scenario) return QStringLiteral("schedlab");
    return runCaption(*m_scenario, m_scenarioPath, m_seed, *m_frame->a, m_frame->b.get());
}

QString MainWindow::exportView(QWidget* w, const QString& path) {
    if (!w) w = this;
    // A view in a hidden tab has no size of its own and QCustomPlot only refreshes its buffers when
    // shown: give it a readable size and refresh the plots before painting.
    if (w != this) {
        for (QWidget* up = w->parentWidget(); up; up = up->parentWidget())
            if (auto* dock = qobject_cast<QDockWidget*>(up)) {
                dock->show();
                dock->raise();  // its tab comes to the front
                break;
            }
        QApplication::processEvents();  // lay it out at its real size
    }
    if (w == m_rqB && m_frame && m_frame->b) m_rqB->setSnapshot(m_frame->b);  // not fed while its tab is hidden
    if (w == m_outcome && m_frame) m_outcome->setSnapshots(m_frame->a, m_frame->b);
    for (QCustomPlot* plot : w->findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);
    QFont capFont = font();
    capFont.setPointSizeF(std::max(7.0, capFont.pointSizeF() * 0.9));
    return exportWithCaption(w, caption(), capFont, path);
}

void MainWindow::setRqSideBySide(bool on) {
    auto* dRq = findChild<QDockWidget*>(QStringLiteral("dockRq"));
    auto* dRqB = findChild<QDockWidget*>(QStringLiteral("dockRqB"));
    auto* dLat = findChild<QDockWidget*>(QStringLiteral("dockLatency"));
    auto* dCnt = findChild<QDockWidget*>(QStringLiteral("dockCounters"));
    auto* dOut = findChild<QDockWidget*>(QStringLiteral("dockOutcome"));
    if (!dRq || !dRqB || !dLat || !dCnt || !dOut) return;
    if (on && !m_knobs->abEnabled()) on = false;
    // The bottom area is laid out again from scratch: splitDockWidget() adds a dock as a tab when
    // its neighbour is (or was) in a tab group.
    const bool latShown = !dLat->isHidden() || !dCnt->isHidden();
    const bool outShown = !dOut->isHidden();
    for (QDockWidget* d : {dRq, dRqB, dLat, dCnt, dOut}) removeDockWidget(d);
    addDockWidget(Qt::BottomDockWidgetArea, dRq);
    if (on) {
        splitDockWidget(dRq, dRqB, Qt::Horizontal);
        splitDockWidget(dRqB, dLat, Qt::Horizontal);
    } else {
        splitDockWidget(dRq, dLat, Qt::Horizontal);
        tabifyDockWidget(dRq, dRqB);
    }
    tabifyDockWidget(dLat, dCnt);
    tabifyDockWidget(dLat, dOut);
    for (QDockWidget* d : {dRq, dRqB, dLat, dCnt, dOut}) d->show();
    if (!m_knobs->abEnabled()) dRqB->hide();
    if (!latShown) dLat->hide(), dCnt->hide();
    if (!outShown) dOut->hide();
    dRq->raise();
    dLat->raise();
    if (on) resizeDocks({dRq, dRqB, dLat}, {width() * 36 / 100, width() * 36 / 100, width() * 28 / 100}, Qt::Horizontal);
    else resizeDocks({dRq, dLat}, {width() * 45 / 100, width() * 55 / 100}, Qt::Horizontal);
    resizeDocks({dRq}, {height() * 36 / 100}, Qt::Vertical);
    if (on && m_frame && m_frame->b) m_rqB->setSnapshot(m_frame->b);
    if (m_rqSideAct->isChecked() != on) {
        const QSignalBlocker block(m_rqSideAct);
        m_rqSideAct->setChecked(on);
    }
}

QString MainWindow::exportRqPair(const QString& path) {
    if (!m_knobs->abEnabled() || !m_frame || !m_frame->b) return tr("--view rqAB: needs an A/B run");
    setRqSideBySide(true);
    QApplication::processEvents();  // lay them out side by side at their real sizes
    m_rq->setSnapshot(m_frame->a);
    m_rqB->setSnapshot(m_frame->b);
    for (RqPlot* r : {m_rq, m_rqB})
        for (QCustomPlot* plot : r->findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);
    // One picture: A's plots, then B's, each with its variant above it.
    const QPixmap pa = m_rq->grab(), pb = m_rqB->grab();
    QFont titleFont = font();
    titleFont.setBold(true);
    const int titleH = QFontMetrics(titleFont).height() + 6;
    QPixmap pair(pa.width() + pb.width() + 12, std::max(pa.height(), pb.height()) + titleH);
    pair.fill(Qt::white);
    {
        QPainter p(&pair);
        p.setFont(titleFont);
        const auto& fa = *m_frame->a;
        const auto& fb = *m_frame->b;
        p.drawText(QRect(0, 0, pa.width(), titleH), Qt::AlignCenter, QStringLiteral("A: %1").arg(q(fa.knobs)));
        p.drawText(QRect(pa.width() + 12, 0, pb.width(), titleH), Qt::AlignCenter, QStringLiteral("B: %1").arg(q(fb.knobs)));
        p.drawPixmap(0, titleH, pa);
        p.drawPixmap(pa.width() + 12, titleH, pb);
    }
    QLabel holder;
    holder.setPixmap(pair);
    holder.resize(pair.size());
    QFont capFont = font();
    capFont.setPointSizeF(std::max(7.0, capFont.pointSizeF() * 0.9));
    return exportWithCaption(&holder, caption(), capFont, path);
}

void MainWindow::exportDialog(QWidget* w) {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export"), QStringLiteral("schedlab.png"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
    if (p.isEmpty()) return;
    const QString err = exportView(w, p);
    if (!err.isEmpty()) QMessageBox::warning(this, tr("Export failed"), err);
    else statusBar()->showMessage(tr("Exported %1").arg(p), 4000);
}

QString MainWindow::exportRunTrace(const QString& path, const std::function<bool(qint64)>& keepGoing) const {
    if (traceMode() || !m_scenario || !m_frame) return tr("no simulated run is shown");
    return exportRunFtrace(*m_scenario, m_knobs->knobs(0), m_seed, m_frame->a->now, path, keepGoing);
}

void MainWindow::exportTraceDialog() {
    if (traceMode() || !m_scenario || !m_frame) return;
    const QString p =
        QFileDialog::getSaveFileName(this, tr("Export trace"), QStringLiteral("schedlab-trace.txt"), tr("ftrace text (*.txt);;All files (*)"));
    if (p.isEmpty()) return;
    setRunning(false);
    // The run is replayed from t = 0 on the thread pool (runs are deterministic); Cancel drops the file.
    const qint64 until = m_frame->a->now;
    runWithProgress<QString>(
        this, tr("Writing %1…").arg(QFileInfo(p).fileName()), int(std::max<qint64>(1, until / 1'000'000)),
        [s = *m_scenario, k = m_knobs->knobs(0), seed = m_seed, until, p](JobProgress& jp) {
            return exportRunFtrace(s, k, seed, until, p, [&jp](std::int64_t now) {
                jp.value = int(now / 1'000'000);
                return !jp.cancel.load();
            });
        },
        [this, p](const QString& err, bool) {
            if (err == QLatin1String("cancelled")) return;
            if (!err.isEmpty()) QMessageBox::warning(this, tr("Export trace"), err);
            else statusBar()->showMessage(tr("Exported side A's run as ftrace text to %1").arg(p), 6000);
        });
}

void MainWindow::exportRqCsvDialog() {
    const QString p =
        QFileDialog::getSaveFileName(this, tr("Export runqueue lengths"), QStringLiteral("rqlen50-bpftrace.csv"), tr("CSV (*.csv);;All files (*)"));
    if (p.isEmpty()) return;
    exportRqCsv(p, [this, p](const QString& err) {
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Export rq-length CSV"), err);
        else statusBar()->showMessage(tr("Exported the runqueue lengths to %1").arg(p), 6000);
    });
}

void MainWindow::exportRqCsv(const QString& path, std::function<void(const QString&)> done) {
    if (traceMode()) {  // the recorded trace's runqueue lengths every 20 ms, as schedlab-cli trace --rq-csv
        done(saveFileAtomic(path, QByteArray::fromStdString(sched::traceRqLenCsv(*m_trace->sideA().trace, m_trace->sideA().topo))));
        return;
    }
    if (!m_scenario) {
        done(tr("no run is shown"));
        return;
    }
    // The worker owns the simulation: it makes the CSV of side A's run so far; the answer comes back queued.
    QPointer<MainWindow> self(this);
    m_sim->post([self, path, done](SimWorker& w) {
        const QByteArray csv = QByteArray::fromStdString(w.rqlenCsv(0));
        QMetaObject::invokeMethod(
            qApp,
            [self, path, done, csv] {
                if (!self) return;
                done(csv.isEmpty() ? tr("no run is shown") : saveFileAtomic(path, csv));
            },
            Qt::QueuedConnection);
    });
}

void MainWindow::saveScenario() {
    if (!m_scenario) return;
    const QString p = QFileDialog::getSaveFileName(this, tr("Save scenario"), QStringLiteral("scenario.json"), tr("Scenarios (*.json)"));
    if (p.isEmpty()) return;
    const sched::Knobs b = m_knobs->knobs(1);
    const QString err = saveFileAtomic(p, scenarioWithVariants(*m_scenario, m_knobs->knobs(0), m_knobs->abEnabled() ? &b : nullptr, m_seed));
    if (!err.isEmpty()) {
        QMessageBox::warning(this, tr("Save failed"), err);
        return;
    }
    m_scenarioPath = p;
    m_recentMenu->add(p);
}

}  // namespace schedlab

namespace schedlab {

std::shared_ptr<const sched::Trace> MainWindow::traceB() const { return m_trace->sideB().trace; }

void MainWindow::copyCompareText() {
    // Two traces: compare-traces, made on the thread pool. A run: made by the worker from the run
    // as it is now (running or not); the answer comes back queued (compareTextReady).
    if (!m_trace->copyCompareText([this](const QString& t) { emit compareTextCopied(t); })) m_sim->post([](SimWorker& w) { w.requestCompareText(); });
}

}  // namespace schedlab
