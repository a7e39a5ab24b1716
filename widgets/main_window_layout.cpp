// SPDX-License-Identifier: GPL-2.0-or-later
// main_window_layout.cpp: the window's widgets and docks (createViews), its actions and
// toolbars (createActions) and its menus (createMenus). The rest of MainWindow is main_window.cpp.
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

}  // namespace schedlab
