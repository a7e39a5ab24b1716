// SPDX-License-Identifier: GPL-2.0-or-later
// main_window.cpp: see main_window.h. The window only paints frames the worker publishes and
// sends it commands; it never touches a simulation directly.
#include "main_window.h"

#include "counters_plot.h"
#include "decision_inspector.h"
#include "knob_panel.h"
#include "latency_plot.h"
#include "rq_plot.h"
#include "topology_heatmap.h"
#include "trace_timeline.h"

#include "util/input_error.h"
#include "util/install_paths.h"
#include "kernel/knobs.h"
#include "sim/report.h"
#include "run_export.h"
#include "topology/topology_json.h"
#include "replay/trace_compare.h"
#include "replay/trace_snapshot.h"

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>
#include <QHBoxLayout>
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

QString q(const std::string& s) { return QString::fromStdString(s); }

/// Simulated time as the clock shows it.
QString simTime(std::int64_t ns) { return QStringLiteral("%1 ms").arg(double(ns) / 1e6, 0, 'f', 3); }

struct SpeedChoice {
    const char* label;
    double simPerWall;  ///< simulated s per wall s; <= 0: as fast as possible
};
constexpr SpeedChoice kSpeeds[] = {
    {"1 µs/s", 1e-6}, {"10 µs/s", 1e-5}, {"100 µs/s", 1e-4}, {"1 ms/s", 1e-3},
    {"10 ms/s", 1e-2}, {"100 ms/s", 1e-1}, {"real time", 1.0}, {"as fast as possible", 0},
};
constexpr int kDefaultSpeed = 7;

constexpr int kMaxRecent = 8;

/// "2089 decisions · agreement 96.8 % · moved 120: 61.9 % · stay-on-prev 95.5 % · 67 disagreements".
QString summarizeAgreement(const sched::AgreeReport& r, std::size_t disagreements) {
    auto pct = [](std::uint64_t a, std::uint64_t n) { return n ? QString::number(100.0 * double(a) / double(n), 'f', 1) : QStringLiteral("-"); };
    return MainWindow::tr("%1 decisions · agreement %2 % · moved %3: %4 % · stay-on-prev %5 % · %6 disagreements")
        .arg(r.decisions)
        .arg(pct(r.agree, r.decisions))
        .arg(r.moved)
        .arg(pct(r.agree_moved, r.moved), pct(r.stay_prev, r.decisions))
        .arg(disagreements);
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
    connect(m_sim->worker(), &SimWorker::fastForwardProgress, this, [this](qint64 now, qint64 target, double rate, bool done) {
        emit fastForwardProgress(now, target, rate, done);
        if (done) {
            statusBar()->showMessage(tr("Fast-forwarded to %1 s simulated (%2 simulated ms per second)")
                                         .arg(double(now) / 1e9, 0, 'f', 3)
                                         .arg(rate / 1e6, 0, 'f', 1),
                                     8000);
            return;
        }
        statusBar()->showMessage(tr("Fast-forward: %1 of %2 s simulated (%3 %), %4 simulated ms per second; Space stops")
                                     .arg(double(now) / 1e9, 0, 'f', 3)
                                     .arg(double(target) / 1e9, 0, 'f', 3)
                                     .arg(target > 0 ? 100.0 * double(now) / double(target) : 0.0, 0, 'f', 0)
                                     .arg(rate / 1e6, 0, 'f', 1));
    });
    createViews();
    createActions();
    createMenus();
    m_agreeTimer = new QTimer(this);
    m_agreeTimer->setInterval(200);
    connect(m_agreeTimer, &QTimer::timeout, this, [this] { updateAgreeProgress(); });
    QSettings st;
    restoreGeometry(st.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(st.value(QStringLiteral("window/state")).toByteArray());
    updateRecentMenu();
}

MainWindow::~MainWindow() {
    // A trace index or an agreement replay still being made stops early.
    for (const auto& c : {m_indexCancel, m_agreeCancel, m_b.indexCancel, m_b.agreeCancel})
        if (c) *c = true;
    m_sim->shutdown();
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockKnobs")); d && m_knobsHiddenForTrace)
        d->show();  // hidden for a trace only: the saved layout keeps it
    QSettings st;
    st.setValue(QStringLiteral("window/geometry"), saveGeometry());
    st.setValue(QStringLiteral("window/state"), saveState());
    for (const auto& c : {m_indexCancel, m_agreeCancel, m_b.indexCancel, m_b.agreeCancel})
        if (c) *c = true;  // replays and indexes on the thread pool stop
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
    cl->addWidget(m_delta);
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
    m_knobs = new KnobPanel(this);
    m_inspector = new DecisionInspector(this);
    m_inspector->setObjectName(QStringLiteral("inspector"));
    auto* dRq = dock(tr("Runqueue lengths (A)"), QStringLiteral("dockRq"), m_rq, Qt::BottomDockWidgetArea);
    auto* dRqB = dock(tr("Runqueue lengths (B)"), QStringLiteral("dockRqB"), m_rqB, Qt::BottomDockWidgetArea);
    auto* dLat = dock(tr("Wakeup latency"), QStringLiteral("dockLatency"), m_latency, Qt::BottomDockWidgetArea);
    auto* dCnt = dock(tr("Counters"), QStringLiteral("dockCounters"), m_counters, Qt::BottomDockWidgetArea);
    auto* knobScroll = new QScrollArea(this);
    knobScroll->setWidget(m_knobs);
    knobScroll->setWidgetResizable(true);
    knobScroll->setFrameShape(QFrame::NoFrame);
    auto* dKnob = dock(tr("Knobs"), QStringLiteral("dockKnobs"), knobScroll, Qt::RightDockWidgetArea);
    auto* dIns = dock(tr("Decision inspector (A)"), QStringLiteral("dockInspector"), m_inspector, Qt::RightDockWidgetArea);
    splitDockWidget(dRq, dLat, Qt::Horizontal);
    tabifyDockWidget(dRq, dRqB);
    dRq->raise();
    tabifyDockWidget(dLat, dCnt);
    dLat->raise();
    splitDockWidget(dKnob, dIns, Qt::Vertical);
    // Default proportions, once the window has its size (a saved layout replaces them).
    QTimer::singleShot(20, this, [this, dRq, dLat, dKnob, dIns] {
        if (QSettings().contains(QStringLiteral("window/state"))) return;
        resizeDocks({dRq}, {height() * 36 / 100}, Qt::Vertical);
        if (m_trace) resizeDocks({dIns}, {460}, Qt::Horizontal);  // a trace from the command line: see showTrace()
        else resizeDocks({dKnob}, {340}, Qt::Horizontal);
        resizeDocks({dKnob}, {height() * 46 / 100}, Qt::Vertical);
        resizeDocks({dRq, dLat}, {width() * 45 / 100, width() * 55 / 100}, Qt::Horizontal);
    });
    m_viewMenu = new QMenu(tr("&View"), this);
    for (QDockWidget* d : {dRq, dRqB, dLat, dCnt, dKnob, dIns}) m_viewMenu->addAction(d->toggleViewAction());

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
        m_sim->post([side, k](SimWorker& w) { w.setKnobs(side, k); });
    });
    connect(m_knobs, &KnobPanel::abToggled, this, [this](bool) { restart(); });
    connect(m_knobs, &KnobPanel::workloadsApplied, this, [this](const QString& text) {
        const QString err = applyWorkloads(text);
        m_knobs->setWorkloadError(err);
    });
}

void MainWindow::createActions() {
    auto* tb = addToolBar(tr("Run"));
    tb->setObjectName(QStringLiteral("runToolbar"));
    m_playAct = tb->addAction(tr("▶ Play"), this, [this] { setRunning(!m_running); });
    m_playAct->setShortcut(Qt::Key_Space);
    m_playAct->setToolTip(tr("Play / pause (Space)"));
    auto* ev = tb->addAction(tr("Step event"), this, [this] {
        setRunning(false);
        m_sim->post([](SimWorker& w) { w.stepEvent(); });
    });
    ev->setShortcut(Qt::Key_Period);
    ev->setToolTip(tr("Run one event (.)"));
    auto* wk = tb->addAction(tr("Step wakeup"), this, [this] {
        setRunning(false);
        m_sim->post([](SimWorker& w) { w.stepWakeup(); });
    });
    wk->setShortcut(Qt::Key_W);
    wk->setToolTip(tr("Run to the next wakeup and trace it in the decision inspector (W)"));
    auto* ms = tb->addAction(tr("Step 1 ms"), this, [this] {
        setRunning(false);
        m_sim->post([](SimWorker& w) { w.stepTime(1000000); });
    });
    ms->setShortcut(Qt::Key_M);
    ms->setToolTip(tr("Advance 1 ms of simulated time (M)"));
    auto* ff = tb->addAction(tr("» Fast-forward…"), this, [this] {
        const double nowS = m_frame ? double(m_frame->a->now) / 1e9 : 0.0;
        bool ok = false;
        const QString t = QInputDialog::getText(this, tr("Fast-forward"),
                                                tr("Run without drawing to simulated time (e.g. 500ms, 2s; now %1 s):").arg(nowS, 0, 'f', 3),
                                                QLineEdit::Normal, QStringLiteral("%1s").arg(nowS + 0.5, 0, 'f', 3), &ok);
        if (!ok) return;
        const auto ns = sched::parseDurationNs(t.trimmed().toStdString());
        if (!ns || *ns <= 0) {
            statusBar()->showMessage(tr("Fast-forward: '%1' is not a duration (e.g. 500ms, 2s)").arg(t), 6000);
            return;
        }
        fastForward(*ns);
    });
    ff->setObjectName(QStringLiteral("fastForward"));
    ff->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    ff->setToolTip(tr("Run both sides without frames to a simulated time, then show them there (Ctrl+G): reach the steady state quickly"));
    auto* rs = tb->addAction(tr("⟲ Restart"), this, [this] { restart(); });
    rs->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    rs->setToolTip(tr("Rerun both sides from t = 0 with the same seed (Ctrl+R)"));
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" speed "), tb));
    m_speed = new QComboBox(tb);
    for (const auto& s : kSpeeds) m_speed->addItem(QString::fromUtf8(s.label), s.simPerWall);
    m_speed->setCurrentIndex(kDefaultSpeed);
    connect(m_speed, &QComboBox::currentIndexChanged, this, [this] {
        const double v = m_speed->currentData().toDouble() * 1e9;  // ns per s
        m_sim->post([v](SimWorker& w) { w.setSpeed(v / 1e9); });
    });
    tb->addWidget(m_speed);
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" colour "), tb));
    m_metric = new QComboBox(tb);
    m_metric->addItem(tr("runqueue length"));
    m_metric->addItem(tr("utilisation"));
    m_metric->addItem(tr("idle / busy / idle-delay"));
    connect(m_metric, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_heatA->setMetric(TopologyHeatmap::Metric(i));
        m_heatB->setMetric(TopologyHeatmap::Metric(i));
    });
    tb->addWidget(m_metric);
    auto* cmap = new QComboBox(tb);
    cmap->setObjectName(QStringLiteral("colormap"));
    cmap->addItem(QStringLiteral("viridis"));
    cmap->addItem(QStringLiteral("cividis"));
    cmap->setToolTip(tr("Colormap (both perceptually uniform and colour-blind safe)"));
    connect(cmap, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_heatA->setColormap(Colormap(i));
        m_heatB->setColormap(Colormap(i));
    });
    tb->addWidget(cmap);
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" arrows "), tb));
    auto* span = new QComboBox(tb);
    span->setObjectName(QStringLiteral("arrowSpan"));
    span->setToolTip(tr("Migrations drawn as arrows: those of the last N ms of simulated time, fading with age"));
    for (const auto& [label, ns] : std::vector<std::pair<QString, qint64>>{{tr("off"), 0},
                                                                          {tr("last 1 ms"), 1000000},
                                                                          {tr("last 5 ms"), 5000000}})
        span->addItem(label, ns);
    span->setCurrentIndex(2);
    connect(span, &QComboBox::currentIndexChanged, this, [this, span] {
        const qint64 ns = span->currentData().toLongLong();
        for (TopologyHeatmap* h : {m_heatA, m_heatB}) {
            h->setShowArrows(ns > 0);
            if (ns > 0) h->setArrowSpanNs(ns);
        }
    });
    tb->addWidget(span);
    tb->addSeparator();
    m_clock = new QLabel(tb);
    m_clock->setObjectName(QStringLiteral("simClock"));
    m_clock->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_clock->setMinimumWidth(160);
    tb->addWidget(m_clock);
    m_status = new QLabel(this);
    statusBar()->addPermanentWidget(m_status, 1);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open scenario…"), QKeySequence::Open, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString::fromStdString(sched::shippedScenariosDir()),
                                                       tr("Scenarios (*.json)"));
        if (p.isEmpty()) return;
        const QString err = openScenario(p);
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Cannot open scenario"), err);
    });
    file->addAction(tr("Open &default scenario"), this, [this] { openDefault(); });
    file->addAction(tr("Open &trace…"), QKeySequence(Qt::CTRL | Qt::Key_T), this, [this] { openTraceDialog(); });
    m_openTraceBAct = file->addAction(tr("Open trace as &B…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T), this,
                                      [this] { openTraceBDialog(); });
    m_openTraceBAct->setToolTip(tr("A second recording on the same machine beside the shown trace (before/after a patch)"));
    m_openTraceBAct->setEnabled(false);
    m_besideAct = file->addAction(tr("Si&mulate beside the trace…"), this, [this] { besideSimDialog(); });
    m_besideAct->setToolTip(tr("Side B: a scenario on the trace's machine, run to the cursor's time"));
    m_besideAct->setEnabled(false);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addAction(tr("&Save scenario as…"), QKeySequence::Save, this, [this] { saveScenario(); });
    file->addSeparator();
    file->addAction(tr("&Export window…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] { exportDialog(nullptr); });
    QMenu* ev = file->addMenu(tr("Export &view"));
    for (const auto& [name, label] : std::vector<std::pair<QString, QString>>{{QStringLiteral("heatmapA"), tr("Heatmap A")},
                                                                            {QStringLiteral("heatmapB"), tr("Heatmap B")},
                                                                            {QStringLiteral("rq"), tr("Runqueue lengths A")},
                                                                            {QStringLiteral("rqB"), tr("Runqueue lengths B")},
                                                                            {QStringLiteral("latency"), tr("Wakeup latency")},
                                                                            {QStringLiteral("counters"), tr("Counters")}})
        ev->addAction(label, this, [this, n = name] { exportDialog(view(n)); });
    m_exportTraceAct = file->addAction(tr("Export &trace (ftrace text)…"), this, [this] { exportTraceDialog(); });
    m_exportTraceAct->setToolTip(tr("Side A's run from t = 0 to the shown time as ftrace text, as schedlab-cli run --ftrace writes it"));
    file->addAction(tr("Export rq-length &CSV…"), this, [this] { exportRqCsvDialog(); });
    connect(file, &QMenu::aboutToShow, this, [this] {
        m_exportTraceAct->setEnabled(!m_trace && m_scenario && m_frame);
        m_openTraceBAct->setEnabled(bool(m_trace));
        m_besideAct->setEnabled(bool(m_trace));
    });
    file->addAction(tr("&Copy A/B table as text"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C), this, [this] { copyCompareText(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    menuBar()->addMenu(m_viewMenu);
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

QWidget* MainWindow::view(const QString& name) const {
    if (name == QLatin1String("heatmapA")) return m_heatA;
    if (name == QLatin1String("heatmapB")) return m_heatB;
    if (name == QLatin1String("rq")) return m_rq;
    if (name == QLatin1String("rqB")) return m_rqB;
    if (name == QLatin1String("latency")) return m_latency;
    if (name == QLatin1String("counters")) return m_counters;
    if (name == QLatin1String("inspector")) return m_inspector;
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
    addRecent(QFileInfo(path).absoluteFilePath());
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
    leaveTrace();
    m_scenario = s;
    m_seed = o.seed ? o.seed : s.seed;
    sched::Knobs a = o.a ? *o.a : s.variants.front().knobs;
    sched::Knobs b = o.b ? *o.b : (s.variants.size() > 1 ? s.variants[1].knobs : sched::Knobs::preset("idle-delay-v2"));
    m_knobs->blockSignals(true);
    m_knobs->setAbEnabled(o.ab);
    m_knobs->blockSignals(false);
    m_knobs->setKnobs(a, b);
    m_knobs->setEditedSide(o.ab ? 1 : 0);
    if (o.speed >= 0) {
        int best = kDefaultSpeed;
        for (int i = 0; i < int(std::size(kSpeeds)); ++i)
            if (std::abs(kSpeeds[i].simPerWall - o.speed) < 1e-12) best = i;
        m_speed->setCurrentIndex(best);
    }
    setWindowTitle(QStringLiteral("schedlab — %1").arg(q(s.name.empty() ? s.file : s.name)));
    QStringList cmds;
    for (const auto& w : s.workloads) cmds << QStringLiteral("<tt>%1</tt>").arg(q(sched::workloadCommand(w)).toHtmlEscaped());
    m_knobs->setWorkloads(q(s.doc.contains("workloads") ? s.doc["workloads"].dump(1) : std::string("[]")), cmds.join(QStringLiteral("<br>")));
    restart();
    if (o.autoplay) setRunning(true);
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
    const quint64 seed = m_seed;
    const double speed = m_speed->currentData().toDouble();
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
    m_playAct->setText(on ? tr("❚❚ Pause") : tr("▶ Play"));
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

void MainWindow::fastForward(qint64 ns, std::function<void()> done) {
    m_runUntil = ns;
    m_whenDone = std::move(done);
    m_running = true;
    m_playAct->setText(tr("❚❚ Pause"));
    m_sim->post([ns](SimWorker& w) { w.fastForward(ns); });
}

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
    if (m_trace) {  // a trace is shown: the (paused) simulation's frames wait, unless it runs beside the trace
        if (!m_beside || !m_frame || f->b || f->a->topo != m_beside->topo) return;  // not (yet) the run beside the trace
        m_besideSnap = f->a;
        m_besideRunning = f->running;
        auto g = std::make_shared<Frame>(*m_frame);
        g->b = f->a;
        showFrame(g);
        if (besideReady()) {
            auto cbs = std::move(m_whenBeside);
            m_whenBeside.clear();
            for (auto& cb : cbs) QTimer::singleShot(0, this, std::move(cb));
        }
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
    if (m_trace && (m_b.trace || m_beside))  // two sides at one cursor: each one's time since its start
        m_heatA->setTitle(QStringLiteral("A: %1 · %2 since its first event").arg(q(a->knobs), simTime(a->now - m_traceT0)));
    else
        m_heatA->setTitle(QStringLiteral("A: %1").arg(q(a->knobs)));
    if (f->traced) m_heatA->setHighlightTarget(f->traced->d.cpu);
    // setSnapshot last: it starts the heatmap's render on the thread pool (a later setter would wait for it).
    m_heatA->setSnapshot(a);
    if (b) {
        if (m_trace && m_beside)
            m_heatB->setTitle(QStringLiteral("B: simulated, %1 · %2%3")
                                  .arg(q(b->knobs), simTime(b->now),
                                       b->now >= m_besideTarget ? QString()
                                       : b->done                ? tr(" (its run ended)")
                                                                : tr(" (running to %1)").arg(simTime(m_besideTarget))));
        else if (m_trace && m_b.trace)
            m_heatB->setTitle(QStringLiteral("B: %1 · %2 since its first event").arg(q(b->knobs), simTime(b->now - m_b.t0)));
        else
            m_heatB->setTitle(QStringLiteral("B: %1").arg(q(b->knobs)));
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
            if (!m_trace) m_inspector->setDecisions(a->decisions, f->traced);  // a trace lists its disagreements
        });
    }
    if (m_trace)  // time since the trace's first event, as the trace bar; and the trace's clock, as trace-cmd report prints it
        m_clock->setText(QStringLiteral("t = %1 (trace clock %2 s)").arg(simTime(a->now - m_traceT0)).arg(double(a->now) / 1e9, 0, 'f', 6));
    else
        m_clock->setText(QStringLiteral("t = %1").arg(simTime(a->now)));
    // A vs B delta table (metrics as columns, so it stays four lines high): what a reader of the
    // thread asks first.
    QString delta;
    if (b) {
        struct Col {
            QString label;
            double a, b;
            int decimals;
        };
        std::vector<Col> cols;
        auto mig = [](const sched::Snapshot& s) {
            std::uint64_t n = 0;
            for (std::size_t i = 0; i < s.migrations_by_cause.size(); ++i)
                if (i != std::size_t(sched::MigrationCause::fork)) n += s.migrations_by_cause[i];
            return double(n);
        };
        // The workloads' own headline numbers once both sides have finished (mid-run they are partial).
        if (f->done)
            for (std::size_t w = 0; w < a->reports.size() && w < b->reports.size(); ++w)
                for (std::size_t i = 0; i < a->reports[w].headline.size() && i < b->reports[w].headline.size() && i < 3; ++i)
                    cols.push_back({q(a->reports[w].headline[i].label), a->reports[w].headline[i].value,
                                    b->reports[w].headline[i].value, a->reports[w].headline[i].decimals});
        // A recorded trace counts its sched_waking records (the wakeups the views show).
        cols.push_back({m_trace ? QStringLiteral("sched_waking") : tr("wakeups"), double(a->ttwu_count), double(b->ttwu_count), 0});
        cols.push_back({tr("migrations"), mig(*a), mig(*b), 0});
        cols.push_back({tr("ctx switches"), double(a->ctx_switches), double(b->ctx_switches), 0});
        cols.push_back({tr("wakeup p50 µs"), double(a->wakeup_latency.percentile(50)) / 1e3, double(b->wakeup_latency.percentile(50)) / 1e3, 1});
        cols.push_back({tr("wakeup p99 µs"), double(a->wakeup_latency.percentile(99)) / 1e3, double(b->wakeup_latency.percentile(99)) / 1e3, 1});
        if (!m_trace || a->idle_delay_hits || b->idle_delay_hits)  // a trace has none
            cols.push_back({tr("idle-delay hits"), double(a->idle_delay_hits), double(b->idle_delay_hits), 0});
        QStringList rows(4);
        rows[0] = QStringLiteral("%1").arg(QString(), -7);
        rows[1] = QStringLiteral("%1").arg(QStringLiteral("A"), -7);
        rows[2] = QStringLiteral("%1").arg(QStringLiteral("B"), -7);
        rows[3] = QStringLiteral("%1").arg(QStringLiteral("B vs A"), -7);
        for (const Col& c : cols) {
            const QString va = QString::number(c.a, 'f', c.decimals), vb = QString::number(c.b, 'f', c.decimals);
            const QString ch = c.a != 0 ? QStringLiteral("%1%2%").arg(c.b >= c.a ? "+" : "").arg((c.b - c.a) / c.a * 100, 0, 'f', 1)
                                        : QStringLiteral("-");
            const int w = int(std::max({c.label.size(), va.size(), vb.size(), ch.size()})) + 3;
            rows[0] += QStringLiteral("%1").arg(c.label, w);
            rows[1] += QStringLiteral("%1").arg(va, w);
            rows[2] += QStringLiteral("%1").arg(vb, w);
            rows[3] += QStringLiteral("%1").arg(ch, w);
        }
        delta = rows.join(QLatin1Char('\n'));
    }
    m_delta->setText(delta);
    m_delta->setVisible(!delta.isEmpty());
    if (m_trace) {
        m_status->setText(traceStatus());
    } else if (m_scenario) {
        const QString wl = a->reports.empty() ? QString() : q(a->reports.front().command);
        m_status->setText(QStringLiteral("%1 · %2 (%3 CPUs) · %4 · seed %5 · %6 events · %7")
                              .arg(m_scenarioPath.isEmpty() ? QStringLiteral("default scenario") : QFileInfo(m_scenarioPath).fileName())
                              .arg(q(m_scenario->topo->name()))
                              .arg(m_scenario->topo->nrCpus())
                              .arg(wl)
                              .arg(m_seed)
                              .arg(a->events + (b ? b->events : 0))
                              .arg(f->running ? QStringLiteral("%1 M events/s, %2 simulated ms/s")
                                                    .arg(f->eventsPerWallS / 1e6, 0, 'f', 2)
                                                    .arg(f->simNsPerWallS / 1e6, 0, 'f', 1)
                                              : (f->done ? tr("finished") : tr("paused"))));
    }
    if (!f->running && m_running && (f->done || (m_runUntil > 0 && a->now >= m_runUntil))) {
        m_running = false;
        m_playAct->setText(tr("▶ Play"));
    }
    if (m_whenTraced && f->traced && f->traced->time >= m_tracedAfter) {
        auto cb = std::move(m_whenTraced);
        m_whenTraced = nullptr;
        cb();
    }
    if (m_whenDone && !f->running && (f->done || a->now >= m_runUntil)) {
        auto cb = std::move(m_whenDone);
        m_whenDone = nullptr;
        cb();
    }
}

QString MainWindow::caption() const {
    if (m_trace && m_frame && m_b.trace) {
        // Two traces: both files, the machine, the shared cursor (time since each one's first event).
        QString c = QStringLiteral("schedlab %1 · A: recorded trace %2 (%3 events, %4) · B: recorded trace %5 (%6 events, %7) · %8 (%9 CPUs)")
                        .arg(QStringLiteral(SCHEDLAB_VERSION), QFileInfo(m_tracePath).fileName())
                        .arg(m_trace->events.size())
                        .arg(simTime(m_traceT1 - m_traceT0), QFileInfo(m_b.path).fileName())
                        .arg(m_b.trace->events.size())
                        .arg(simTime(m_b.t1 - m_b.t0), q(m_traceTopo->name()))
                        .arg(m_traceTopo->nrCpus());
        c += QStringLiteral(" · cursor t = %1 since each trace's first event").arg(simTime(traceCursor()));
        auto agreeText = [](const QString& side, const sched::AgreeReport* r, const QString& summary, bool failed) {
            if (r) return QStringLiteral(" · agree %1 (knobs %2, sync %3): %4").arg(side, q(r->knobs), q(r->sync), summary);
            return failed ? QStringLiteral(" · %1: %2").arg(side, summary) : QString();
        };
        c += agreeText(QStringLiteral("A"), m_agree.get(), agreementSummary(), !m_agreeError.isEmpty());
        c += agreeText(QStringLiteral("B"), m_b.agree.get(), agreementSummaryB(), !m_b.agreeError.isEmpty());
        if (const sched::AgreeRow* r = disagreement(m_openedDis))
            c += QStringLiteral(" · A's disagreement %1 (line %2, pid %3): kernel CPU %4, schedlab CPU %5, %6")
                     .arg(m_openedDis + 1)
                     .arg(r->line)
                     .arg(r->pid)
                     .arg(r->kernel)
                     .arg(r->sim)
                     .arg(QString::fromLatin1(sched::toString(sched::DisagreeClass(r->cls))));
        return c;
    }
    if (m_trace && m_frame) {
        QString c = QStringLiteral("schedlab %1 · recorded trace %2 · %3 (%4 CPUs) · %5 events · cursor t = %6 of %7 from the first event")
                        .arg(QStringLiteral(SCHEDLAB_VERSION), QFileInfo(m_tracePath).fileName(), q(m_traceTopo->name()))
                        .arg(m_traceTopo->nrCpus())
                        .arg(m_trace->events.size())
                        .arg(simTime(m_frame->a->now - m_traceT0), simTime(m_traceT1 - m_traceT0));
        if (m_agree) c += QStringLiteral(" · agree (knobs %1, sync %2): %3").arg(q(m_agree->knobs), q(m_agree->sync), agreementSummary());
        else if (!m_agreeError.isEmpty()) c += QStringLiteral(" · ") + agreementSummary();
        if (const sched::AgreeRow* r = disagreement(m_openedDis))
            c += QStringLiteral(" · disagreement %1 (line %2, pid %3): kernel CPU %4, schedlab CPU %5, %6")
                     .arg(m_openedDis + 1)
                     .arg(r->line)
                     .arg(r->pid)
                     .arg(r->kernel)
                     .arg(r->sim)
                     .arg(QString::fromLatin1(sched::toString(sched::DisagreeClass(r->cls))));
        if (m_beside) {
            const auto& b = m_frame->b;
            c += QStringLiteral(" · B: simulated %1 (%2, %3 CPUs), knobs %4, seed %5, t = %6 simulated (the cursor's time since the trace's first event%7)")
                     .arg(QFileInfo(m_besidePath).fileName(), q(m_beside->topo->name()))
                     .arg(m_beside->topo->nrCpus())
                     .arg(b ? q(b->knobs) : QStringLiteral("-"))
                     .arg(m_besideSeed)
                     .arg(simTime(b ? b->now : 0),
                          b && b->now < m_besideTarget ? (b->done ? tr("; the run ended first") : tr("; still running")) : QString());
        }
        return c;
    }
    if (!m_frame || !m_scenario) return QStringLiteral("schedlab");
    const auto& a = m_frame->a;
    const auto& b = m_frame->b;
    QString wl;
    for (const auto& r : a->reports) wl += (wl.isEmpty() ? QString() : QStringLiteral(" + ")) + q(r.command);
    QString c = QStringLiteral("schedlab %1 · %2 (%3 CPUs) · %4 · A: %5")
                    .arg(QStringLiteral(SCHEDLAB_VERSION), q(m_scenario->topo->name()))
                    .arg(m_scenario->topo->nrCpus())
                    .arg(wl, q(a->knobs));
    if (b) c += QStringLiteral(" · B: %1").arg(q(b->knobs));
    const auto diff = m_scenario->cost.diffFrom(sched::CostModel::forTopology(*m_scenario->topo));
    QString cost = diff.empty() ? QStringLiteral("defaults") : QString();
    for (const auto& d : diff) cost += (cost.isEmpty() ? QString() : QStringLiteral(", ")) + q(d);
    c += QStringLiteral(" · seed %1 · t = %2 simulated · cost: %3 (%4)")
             .arg(m_seed)
             .arg(simTime(a->now), cost, q(m_scenario->cost.machine));
    if (!m_scenarioPath.isEmpty()) c += QStringLiteral(" · %1").arg(QFileInfo(m_scenarioPath).fileName());
    return c;
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
    for (QCustomPlot* plot : w->findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);
    const QString suffix = QFileInfo(path).suffix().toLower();
    const QString cap = caption();
    const QSize sz = w->size();
    QFont capFont = font();
    capFont.setPointSizeF(std::max(7.0, capFont.pointSizeF() * 0.9));
    const QFontMetrics fm(capFont);
    // Wrap the caption to the view's width.
    const QRect capRect = fm.boundingRect(QRect(0, 0, sz.width() - 16, 10000), Qt::TextWordWrap, cap);
    const int capH = capRect.height() + 12;
    auto paint = [&](QPainter& p) {
        p.fillRect(QRect(0, 0, sz.width(), sz.height() + capH), Qt::white);
        w->render(&p, QPoint(0, 0), QRegion(), QWidget::DrawChildren);
        p.setFont(capFont);
        p.setPen(Qt::black);
        p.drawText(QRect(8, sz.height() + 6, sz.width() - 16, capH - 6), Qt::TextWordWrap, cap);
    };
    const QString tmp = path + QStringLiteral(".part");
    QFile::remove(tmp);
    bool ok = false;
    if (suffix == QLatin1String("png")) {
        QImage img(sz.width(), sz.height() + capH, QImage::Format_ARGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            paint(p);
        }
        ok = img.save(tmp, "PNG");
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator gen;
        gen.setFileName(tmp);
        gen.setSize(QSize(sz.width(), sz.height() + capH));
        gen.setViewBox(QRect(0, 0, sz.width(), sz.height() + capH));
        gen.setTitle(QStringLiteral("schedlab"));
        gen.setDescription(cap);
        {
            QPainter p(&gen);
            paint(p);
        }
        ok = QFileInfo(tmp).size() > 0;
    } else if (suffix == QLatin1String("pdf")) {
        QPdfWriter pdf(tmp);
        pdf.setTitle(cap);
        pdf.setResolution(96);
        pdf.setPageSize(QPageSize(QSizeF(sz.width(), sz.height() + capH), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        {
            QPainter p(&pdf);
            const double k = double(pdf.width()) / double(sz.width());
            p.scale(k, k);
            paint(p);
        }
        ok = QFileInfo(tmp).size() > 0;
    } else {
        return tr("%1: unknown export format '%2' (use .png, .svg or .pdf)").arg(path, suffix);
    }
    if (!ok) {
        QFile::remove(tmp);
        return tr("%1: cannot write the file").arg(path);
    }
    QFile::remove(path);
    if (!QFile::rename(tmp, path)) {
        QFile::remove(tmp);
        return tr("%1: cannot rename the temporary file into place").arg(path);
    }
    return {};
}

void MainWindow::exportDialog(QWidget* w) {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export"), QStringLiteral("schedlab.png"),
                                                   tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
    if (p.isEmpty()) return;
    const QString err = exportView(w, p);
    if (!err.isEmpty()) QMessageBox::warning(this, tr("Export failed"), err);
    else statusBar()->showMessage(tr("Exported %1").arg(p), 4000);
}

QString MainWindow::exportRunTrace(const QString& path, const std::function<bool(qint64)>& keepGoing) const {
    if (m_trace || !m_scenario || !m_frame) return tr("no simulated run is shown");
    return exportRunFtrace(*m_scenario, m_knobs->knobs(0), m_seed, m_frame->a->now, path, keepGoing);
}

void MainWindow::exportTraceDialog() {
    if (m_trace || !m_scenario || !m_frame) return;
    const QString p = QFileDialog::getSaveFileName(this, tr("Export trace"), QStringLiteral("schedlab-trace.txt"),
                                                   tr("ftrace text (*.txt);;All files (*)"));
    if (p.isEmpty()) return;
    setRunning(false);
    // The run is replayed from t = 0 on the thread pool (runs are deterministic); Cancel drops the file.
    const qint64 until = m_frame->a->now;
    auto* progress = new QProgressDialog(tr("Writing %1…").arg(QFileInfo(p).fileName()), tr("Cancel"), 0,
                                         int(std::max<qint64>(1, until / 1'000'000)), this);
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(300);
    auto state = std::make_shared<std::pair<std::atomic<bool>, std::atomic<qint64>>>(false, 0);
    connect(progress, &QProgressDialog::canceled, this, [state] { state->first = true; });
    auto* poll = new QTimer(progress);
    connect(poll, &QTimer::timeout, progress, [progress, state] { progress->setValue(int(state->second / 1'000'000)); });
    poll->start(100);
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, progress, p] {
        const QString err = watcher->result();
        watcher->deleteLater();
        progress->deleteLater();
        if (err == QLatin1String("cancelled")) return;
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Export trace"), err);
        else statusBar()->showMessage(tr("Exported side A's run as ftrace text to %1").arg(p), 6000);
    });
    watcher->setFuture(QtConcurrent::run([s = *m_scenario, k = m_knobs->knobs(0), seed = m_seed, until, p, state] {
        return exportRunFtrace(s, k, seed, until, p, [state](std::int64_t now) {
            state->second = now;
            return !state->first.load();
        });
    }));
}

void MainWindow::exportRqCsvDialog() {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export runqueue lengths"), QStringLiteral("rqlen50-bpftrace.csv"),
                                                   tr("CSV (*.csv);;All files (*)"));
    if (p.isEmpty()) return;
    exportRqCsv(p, [this, p](const QString& err) {
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Export rq-length CSV"), err);
        else statusBar()->showMessage(tr("Exported the runqueue lengths to %1").arg(p), 6000);
    });
}

void MainWindow::exportRqCsv(const QString& path, std::function<void(const QString&)> done) {
    if (m_trace) {  // the recorded trace's runqueue lengths every 20 ms, as schedlab-cli trace --rq-csv
        done(saveFileAtomic(path, QByteArray::fromStdString(sched::traceRqLenCsv(*m_trace, m_traceTopo))));
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
        QMetaObject::invokeMethod(qApp, [self, path, done, csv] {
            if (!self) return;
            done(csv.isEmpty() ? tr("no run is shown") : saveFileAtomic(path, csv));
        }, Qt::QueuedConnection);
    });
}

void MainWindow::saveScenario() {
    if (!m_scenario) return;
    const QString p = QFileDialog::getSaveFileName(this, tr("Save scenario"), QStringLiteral("scenario.json"),
                                                   tr("Scenarios (*.json)"));
    if (p.isEmpty()) return;
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(m_scenario->doc.dump());
    nlohmann::ordered_json v;
    const auto side = [](const sched::Knobs& k) {
        nlohmann::ordered_json j;
        j["preset"] = k.presetName;
        for (const auto& d : k.diffFromBaseline()) {
            const auto eq = d.find('=');
            const std::string key = d.substr(0, eq), val = d.substr(eq + 1);
            char* end = nullptr;
            const long long n = std::strtoll(val.c_str(), &end, 10);
            if (!val.empty() && end && *end == 0) j[key] = n;
            else j[key] = val;
        }
        return j;
    };
    v["A"] = side(m_knobs->knobs(0));
    if (m_knobs->abEnabled()) v["B"] = side(m_knobs->knobs(1));
    doc["variants"] = v;
    doc["seed"] = m_seed;
    QSaveFile f(p);  // temp file + rename
    if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(doc.dump(2) + "\n")) < 0 || !f.commit()) {
        QMessageBox::warning(this, tr("Save failed"), tr("%1: cannot write the file").arg(p));
        return;
    }
    m_scenarioPath = p;
    addRecent(p);
}

void MainWindow::addRecent(const QString& path) {
    QSettings st;
    QStringList r = st.value(QStringLiteral("recentFiles")).toStringList();
    r.removeAll(path);
    r.prepend(path);
    while (r.size() > kMaxRecent) r.removeLast();
    st.setValue(QStringLiteral("recentFiles"), r);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    if (!m_recentMenu) return;
    m_recentMenu->clear();
    const QStringList r = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& p : r)
        m_recentMenu->addAction(QFileInfo(p).fileName(), this, [this, p] {
            const QString err = openScenario(p);
            if (!err.isEmpty()) QMessageBox::warning(this, tr("Cannot open scenario"), err);
        });
    m_recentMenu->setEnabled(!r.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// Recorded traces

void MainWindow::createTraceBar() {
    m_traceBar = new QToolBar(tr("Trace"), this);
    m_traceBar->setObjectName(QStringLiteral("traceBar"));
    m_traceBar->setAllowedAreas(Qt::TopToolBarArea | Qt::BottomToolBarArea);  // a timeline is horizontal
    addToolBarBreak(Qt::BottomToolBarArea);
    addToolBar(Qt::BottomToolBarArea, m_traceBar);
    m_timeline = new TraceTimeline(m_traceBar);
    m_traceBar->addWidget(m_timeline);
    connect(m_timeline, &TraceTimeline::cursorRequested, this, [this](qint64 ns) { setTraceTime(ns); });
    connect(m_timeline, &TraceTimeline::markClicked, this, [this](int k) { openDisagreement(k); });
    // Beside the strip: the cursor, previous / next disagreement, the agreement in numbers.
    auto* side = new QWidget(m_traceBar);
    auto* g = new QGridLayout(side);
    g->setContentsMargins(6, 0, 4, 0);
    g->setVerticalSpacing(2);
    m_traceLabel = new QLabel(side);
    m_traceLabel->setObjectName(QStringLiteral("traceCursor"));
    m_traceLabel->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_agreeLabel = new QLabel(side);
    m_agreeLabel->setObjectName(QStringLiteral("agreeSummary"));
    m_agreeLabel->setWordWrap(true);
    m_agreeLabel->setFixedWidth(360);
    m_agreeLabel->setToolTip(tr("schedlab's wakeup path (baseline knobs) replayed on every placement decision of the trace, "
                                "as schedlab-cli agree does: how often it picks the kernel's CPU, overall and on the "
                                "decisions the kernel moved away from prev, against always staying on prev"));
    m_prevDisAct = new QAction(tr("◀"), this);
    m_prevDisAct->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_N));
    m_prevDisAct->setToolTip(tr("Previous disagreement (Shift+N)"));
    connect(m_prevDisAct, &QAction::triggered, this, [this] { stepDisagreement(-1); });
    m_nextDisAct = new QAction(tr("▶"), this);
    m_nextDisAct->setShortcut(Qt::Key_N);
    m_nextDisAct->setToolTip(tr("Next disagreement (N)"));
    connect(m_nextDisAct, &QAction::triggered, this, [this] { stepDisagreement(+1); });
    addAction(m_prevDisAct);  // shortcuts work wherever the focus is
    addAction(m_nextDisAct);
    auto button = [side](QAction* act) {
        auto* b = new QToolButton(side);
        b->setDefaultAction(act);
        b->setAutoRaise(true);
        return b;
    };
    g->addWidget(m_traceLabel, 0, 0);
    g->addWidget(new QLabel(tr("disagreement"), side), 0, 1, Qt::AlignRight);
    g->addWidget(button(m_prevDisAct), 0, 2);
    g->addWidget(button(m_nextDisAct), 0, 3);
    g->addWidget(m_agreeLabel, 1, 0, 1, 4);
    g->setColumnStretch(0, 1);
    side->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);  // the timeline takes the rest of the bar
    m_traceBar->addWidget(side);
}

void MainWindow::showTrace(std::shared_ptr<const sched::Trace> trace, std::shared_ptr<const sched::Topology> topo, const QString& path,
                           std::shared_ptr<const sched::AgreeReport> agreed) {
    setRunning(false);
    const bool wasTrace = bool(m_trace);
    clearSideB();  // B is compared with the trace it was opened beside
    m_trace = std::move(trace);
    m_traceTopo = std::move(topo);
    m_tracePath = path;
    std::tie(m_traceT0, m_traceT1) = sched::traceSpan(*m_trace);
    m_heatB->hide();
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->hide();
    m_heatA->setTitle(QStringLiteral("recorded: %1").arg(QFileInfo(path).fileName()));
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
    m_openTraceBAct->setEnabled(true);  // (the File menu refreshes them too; this is for the shortcut)
    m_besideAct->setEnabled(true);
    m_nextDisAct->setEnabled(true);
    m_prevDisAct->setEnabled(true);
    m_timeline->setSpan(m_traceT0, m_traceT1);
    std::vector<std::pair<std::int64_t, std::int64_t>> gaps;
    for (const auto& gp : m_trace->gaps) gaps.emplace_back(gp.from < 0 ? m_traceT0 : gp.from, gp.to < 0 ? m_traceT1 : gp.to);
    m_timeline->setGaps(std::move(gaps));
    m_inspector->setDisagreements({});
    clearDisagreementMarks();
    m_agree.reset();
    m_agreeReasons.reset();
    m_counters->setReasonsTitle(tr("schedlab's final reason on the trace's decisions"));
    m_disagreements.clear();
    m_openedDis = -1;
    m_agreeError.clear();
    m_agreeRunning = true;
    if (m_indexCancel) *m_indexCancel = true;  // the previous trace's index, if still being made
    if (m_agreeCancel) *m_agreeCancel = true;  // and its replay
    m_traceIndex.reset();
    setTraceTime(m_traceT1);
    // The replay and the cursor index start once the first frame is painted, the histograms
    // included: the paint is a posted event, showFrame's zero timer for the slow views comes
    // after it and posts their paint, and this timer posts the start after that paint (two turns),
    // so that on a small machine the threads do not slow the first drawing down.
    QTimer::singleShot(0, this, [this, trace = m_trace, agreed = std::move(agreed)]() mutable {
        QTimer::singleShot(0, this, [this, trace = std::move(trace), agreed = std::move(agreed)]() mutable {
            if (m_trace != trace) return;  // another trace (or none) since
            startAgreement(std::move(agreed));
            startTraceIndex();
        });
    });
}

void MainWindow::startTraceIndex() {
    const int gen = m_traceGeneration;
    m_indexCancel = std::make_shared<std::atomic<bool>>(false);
    using Index = std::shared_ptr<const sched::TraceIndex>;
    auto* watcher = new QFutureWatcher<Index>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        Index idx = watcher->result();
        watcher->deleteLater();
        if (gen != m_traceGeneration || !idx || idx->cancelled()) return;
        m_traceIndex = std::move(idx);
    });
    watcher->setFuture(QtConcurrent::run([trace = m_trace, topo = m_traceTopo, cancel = m_indexCancel]() -> Index {
        // The index refers to its trace: one allocation holds both, the pointer is the index.
        struct Held {
            std::shared_ptr<const sched::Trace> trace;
            std::unique_ptr<sched::TraceIndex> index;
        };
        auto h = std::make_shared<Held>();
        h->trace = trace;
        sched::TraceIndexOptions o;
        o.progress = [cancel](double) { return !cancel->load(); };
        h->index = std::make_unique<sched::TraceIndex>(*trace, topo, o);
        return Index(h, h->index.get());
    }));
}

std::pair<std::shared_ptr<const sched::AgreeReport>, QString> MainWindow::replayAgreement(const sched::Trace& trace,
                                                                                         std::shared_ptr<const sched::Topology> topo,
                                                                                         const std::function<bool(double)>& progress) {
    try {
        if (!trace.ns_timestamps)
            return {nullptr, tr("timestamps are not in ns (counter/uptime/tsc clock): PELT and wakee_flips decay cannot be rebuilt")};
        // Baseline knobs and the default options, as `schedlab-cli agree TRACE --topology T` uses
        // them; every Decision is kept, the disagreeing ones with their steps for the inspector.
        sched::AgreeOptions o;
        o.keep_decisions = true;
        o.trace_disagreements = true;
        o.progress = progress;
        auto r = std::make_shared<const sched::AgreeReport>(sched::agree(trace, std::move(topo), sched::Knobs{}, o));
        if (r->cancelled) return {nullptr, tr("cancelled")};
        return {std::move(r), QString()};
    } catch (const std::exception& e) {
        return {nullptr, QString::fromUtf8(e.what())};
    }
}

void MainWindow::startAgreement(std::shared_ptr<const sched::AgreeReport> agreed) {
    const int gen = ++m_traceGeneration;
    if (agreed) {
        agreementDone(std::move(agreed), QString());
        return;
    }
    m_timeline->setMessage(tr("replaying the trace's wakeup decisions through schedlab's path…"));
    m_agreeCancel = std::make_shared<std::atomic<bool>>(false);
    m_agreeProgress = std::make_shared<std::atomic<int>>(0);
    m_agreeLabel->setText(agreementSummary());
    m_agreeTimer->start();
    using Result = std::pair<std::shared_ptr<const sched::AgreeReport>, QString>;
    auto* watcher = new QFutureWatcher<Result>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        const auto [r, err] = watcher->result();
        watcher->deleteLater();
        if (gen != m_traceGeneration) return;  // another trace is shown by now
        agreementDone(r, err);
    });
    watcher->setFuture(QtConcurrent::run([trace = m_trace, topo = m_traceTopo, cancel = m_agreeCancel, done = m_agreeProgress] {
        return replayAgreement(*trace, topo, [cancel, done](double share) {
            *done = int(share * 1000);
            return !cancel->load();
        });
    }));
}

void MainWindow::agreementDone(std::shared_ptr<const sched::AgreeReport> r, const QString& err) {
    m_agreeRunning = false;
    m_agree = std::move(r);
    m_agreeError = err;
    std::vector<std::int64_t> times;
    std::vector<TimelineMark> marks;
    std::vector<AgreementItem> items;
    if (m_agree) {
        times.reserve(m_agree->rows.size());
        for (const auto& row : m_agree->rows) {
            times.push_back(row.time);
            if (row.sim != row.kernel) m_disagreements.push_back(&row);
        }
        std::stable_sort(m_disagreements.begin(), m_disagreements.end(),
                         [](const sched::AgreeRow* a, const sched::AgreeRow* b) { return a->time < b->time; });
        marks.reserve(m_disagreements.size());
        items.reserve(m_disagreements.size());
        const QString file = QFileInfo(m_tracePath).fileName();
        for (std::size_t i = 0; i < m_disagreements.size(); ++i) {
            const sched::AgreeRow& row = *m_disagreements[i];
            marks.push_back({row.time, std::max(row.cls, 0)});
            AgreementItem it;
            it.row = row;
            it.index = int(i);
            it.total = int(m_disagreements.size());
            it.t0 = m_traceT0;
            it.file = file;
            it.comm = q(m_trace->commOf(row.pid));
            it.wakerComm = q(m_trace->commOf(row.waker));
            items.push_back(std::move(it));
        }
        m_timeline->setMessage({});
    } else {
        m_timeline->setMessage(tr("no agreement: %1").arg(err));
    }
    m_timeline->setDecisions(std::move(times), std::move(marks));
    m_inspector->setDisagreements(std::move(items));
    m_agreeReasons = m_agree ? std::make_shared<const sched::AgreeReasonIndex>(*m_agree) : nullptr;
    updateAgreeProgress();
    if (m_frame && m_trace) setTraceTime(m_frame->a->now);  // the counters' reasons; the status line names the agreement
    else if (m_frame) showFrame(m_frame);
    fireWhenAgreed();
}

void MainWindow::fireWhenAgreed() {
    if (m_agreeRunning || m_b.agreeRunning) return;
    auto cbs = std::move(m_whenAgreed);
    m_whenAgreed.clear();
    for (auto& cb : cbs) QTimer::singleShot(0, this, std::move(cb));  // from the event loop, as whenAgreed() says
}

void MainWindow::whenAgreed(std::function<void()> done) {
    if (m_trace && (m_agreeRunning || m_b.agreeRunning)) m_whenAgreed.push_back(std::move(done));
    else QTimer::singleShot(0, this, std::move(done));  // always from the event loop, as when it has to wait
}

void MainWindow::updateAgreeProgress() {
    if (!m_agreeRunning && !m_b.agreeRunning) m_agreeTimer->stop();
    if (!m_agreeLabel) return;
    QString text = agreementSummary();
    if (m_b.trace) text = QStringLiteral("A: %1\nB: %2").arg(text, agreementSummaryB());
    m_agreeLabel->setText(text);
    if (m_trace && m_frame) m_status->setText(traceStatus());
}

QString MainWindow::agreementSummary() const {
    if (!m_trace) return {};
    if (m_agreeRunning)
        return tr("agreement: replaying the decisions… %1 %").arg(m_agreeProgress ? m_agreeProgress->load() / 10 : 0);
    if (!m_agree) return tr("no agreement: %1").arg(m_agreeError);
    return summarizeAgreement(*m_agree, m_disagreements.size());
}

QString MainWindow::agreementSummaryB() const {
    if (!m_b.trace) return {};
    if (m_b.agreeRunning)
        return tr("agreement: replaying the decisions… %1 %").arg(m_b.agreeProgress ? m_b.agreeProgress->load() / 10 : 0);
    if (!m_b.agree) return tr("no agreement: %1").arg(m_b.agreeError);
    return summarizeAgreement(*m_b.agree, std::size_t(m_b.disagreements));
}

const sched::AgreeRow* MainWindow::disagreement(int index) const {
    return index >= 0 && index < int(m_disagreements.size()) ? m_disagreements[std::size_t(index)] : nullptr;
}

bool MainWindow::openDisagreement(int index) {
    const sched::AgreeRow* r = disagreement(index);
    if (!r || !m_trace) return false;
    m_openedDis = index;  // before the cursor moves, so that setTraceTime keeps it
    m_timeline->setSelectedMark(index);
    // Keep it in view when zoomed.
    const std::int64_t span = m_timeline->viewTo() - m_timeline->viewFrom();
    if (r->time < m_timeline->viewFrom() || r->time > m_timeline->viewTo())
        m_timeline->setView(r->time - span / 2, r->time - span / 2 + span);
    setTraceTime(r->time);
    m_inspected = m_heatA;
    m_inspector->showDisagreement(index);
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockInspector"))) {
        d->show();
        d->raise();
    }
    statusBar()->showMessage(tr("Disagreement %1 of %2 at line %3: kernel CPU %4, schedlab CPU %5 (%6)")
                                 .arg(index + 1)
                                 .arg(m_disagreements.size())
                                 .arg(r->line)
                                 .arg(r->kernel)
                                 .arg(r->sim)
                                 .arg(QString::fromLatin1(sched::toString(sched::DisagreeClass(std::max(r->cls, 0))))),
                             8000);
    return true;
}

void MainWindow::stepDisagreement(int direction) {
    if (!m_trace || m_disagreements.empty()) {
        statusBar()->showMessage(m_agreeRunning ? tr("The agreement is still being replayed") : tr("No disagreements"), 4000);
        return;
    }
    int k = -1;
    if (m_openedDis >= 0) {
        k = m_openedDis + (direction > 0 ? 1 : -1);
    } else {
        const qint64 now = m_timeline->cursorTime();
        const auto byTime = [](const sched::AgreeRow* r, qint64 t) { return r->time < t; };
        if (direction > 0)
            k = int(std::upper_bound(m_disagreements.begin(), m_disagreements.end(), now,
                                     [](qint64 t, const sched::AgreeRow* r) { return t < r->time; }) - m_disagreements.begin());
        else
            k = int(std::lower_bound(m_disagreements.begin(), m_disagreements.end(), now, byTime) - m_disagreements.begin()) - 1;
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
    if (!m_trace) return;
    auto f = std::make_shared<Frame>();
    const std::string label = m_b.trace ? "trace A" : "trace";
    {
        sched::Snapshot a = m_traceIndex ? m_traceIndex->snapshot(ns, label) : sched::traceSnapshot(*m_trace, m_traceTopo, ns, label);
        if (m_agreeReasons) a.reasons = m_agreeReasons->upTo(a.now);  // schedlab's path on the trace's decisions so far
        f->a = std::make_shared<const sched::Snapshot>(std::move(a));
    }
    f->done = true;
    const qint64 rel = f->a->now - m_traceT0;  // B is shown at the same time since its own first event
    if (m_b.trace) {
        sched::Snapshot b = m_b.index ? m_b.index->snapshot(m_b.t0 + rel, "trace B")
                                      : sched::traceSnapshot(*m_b.trace, m_traceTopo, m_b.t0 + rel, "trace B");
        if (m_b.reasons) b.reasons = m_b.reasons->upTo(b.now);
        f->b = std::make_shared<const sched::Snapshot>(std::move(b));
    }
    else if (m_beside && m_besideSnap)
        f->b = m_besideSnap;  // until the simulation reaches the new time
    if (const sched::AgreeRow* r = disagreement(m_openedDis); r && r->time != f->a->now) {
        m_openedDis = -1;  // the heatmap's marks belong to the disagreement's instant
        clearDisagreementMarks();
    }
    if (m_traceLabel)
        m_traceLabel->setText(QStringLiteral("%1 of %2").arg(simTime(f->a->now - m_traceT0), simTime(m_traceT1 - m_traceT0)));
    if (m_timeline) m_timeline->setCursorTime(f->a->now);
    showFrame(f);
    if (m_beside && m_besideTarget != rel) {
        m_besideTarget = rel;
        requestBesideFrame();
    }
}

qint64 MainWindow::traceCursor() const { return m_trace && m_frame ? m_frame->a->now - m_traceT0 : 0; }

void MainWindow::leaveTrace() {
    if (!m_trace) return;
    clearSideB();
    if (m_agreeCancel) *m_agreeCancel = true;
    m_trace.reset();
    m_traceTopo.reset();
    m_tracePath.clear();
    ++m_traceGeneration;  // a replay or an index still being made is dropped
    if (m_indexCancel) *m_indexCancel = true;
    m_traceIndex.reset();
    m_agree.reset();
    m_agreeReasons.reset();
    m_counters->setReasonsTitle(tr("wakeups by final reason"));
    m_disagreements.clear();
    m_openedDis = -1;
    m_agreeRunning = false;
    m_agreeError.clear();
    clearDisagreementMarks();
    m_inspector->setDecisions({}, std::nullopt);
    m_openTraceBAct->setEnabled(false);
    m_besideAct->setEnabled(false);
    if (m_traceBar) {
        m_traceBar->hide();
        m_nextDisAct->setEnabled(false);  // N is free again outside a trace
        m_prevDisAct->setEnabled(false);
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
    const QString path = QFileDialog::getOpenFileName(this, tr("Open trace"), QString(),
                                                      tr("Scheduler traces (*.txt *.gz *.dat *.trace);;All files (*)"));
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
        const QString pick = QInputDialog::getItem(this, tr("Machine of the trace"),
                                                   tr("The trace has %1 CPUs. Which machine was it recorded on?").arg(trace->nr_cpus),
                                                   items, 0, false, &ok);
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
    if (!m_trace) {
        statusBar()->showMessage(tr("Open a trace first: B is shown beside it"), 6000);
        return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Open trace as B"), QString(),
                                                      tr("Scheduler traces (*.txt *.gz *.dat *.trace);;All files (*)"));
    if (path.isEmpty()) return;
    const auto forA = m_trace;
    readTraceAsync(path, [this, path, forA](std::shared_ptr<const sched::Trace> trace, const QString& err) {
        if (!trace) {
            if (!err.isEmpty()) QMessageBox::warning(this, tr("Open trace as B"), err);
            return;
        }
        if (m_trace != forA) return;  // A was replaced (or left) while B was read
        const QString why = showTraceB(std::move(trace), path);
        if (!why.isEmpty()) QMessageBox::warning(this, tr("Open trace as B"), why);
    });
}

QString MainWindow::showTraceB(std::shared_ptr<const sched::Trace> trace, const QString& path,
                               std::shared_ptr<const sched::AgreeReport> agreed) {
    if (!m_trace) return tr("%1: no trace is shown as A (open one first)").arg(path);
    if (!trace) return tr("%1: no trace").arg(path);
    if (trace->nr_cpus > m_traceTopo->nrCpus())
        return tr("%1: has %2 CPUs, more than trace A's machine %3 (%4 CPUs)")
            .arg(path)
            .arg(trace->nr_cpus)
            .arg(q(m_traceTopo->name()))
            .arg(m_traceTopo->nrCpus());
    clearSideB();
    m_b.trace = std::move(trace);
    m_b.path = path;
    std::tie(m_b.t0, m_b.t1) = sched::traceSpan(*m_b.trace);
    m_b.agreeRunning = true;
    m_heatB->show();
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->show();
    m_heatA->setTitle(QStringLiteral("A: recorded: %1").arg(QFileInfo(m_tracePath).fileName()));
    setTraceTime(m_frame ? m_frame->a->now : m_traceT1);
    startAgreementB(std::move(agreed));
    startTraceIndexB();
    return {};
}

void MainWindow::startTraceIndexB() {
    const int gen = m_b.generation;
    m_b.indexCancel = std::make_shared<std::atomic<bool>>(false);
    using Index = std::shared_ptr<const sched::TraceIndex>;
    auto* watcher = new QFutureWatcher<Index>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        Index idx = watcher->result();
        watcher->deleteLater();
        if (gen != m_b.generation || !m_b.trace || !idx || idx->cancelled()) return;
        m_b.index = std::move(idx);
    });
    watcher->setFuture(QtConcurrent::run([trace = m_b.trace, topo = m_traceTopo, cancel = m_b.indexCancel]() -> Index {
        struct Held {  // as startTraceIndex(): the index and the trace it refers to in one allocation
            std::shared_ptr<const sched::Trace> trace;
            std::unique_ptr<sched::TraceIndex> index;
        };
        auto h = std::make_shared<Held>();
        h->trace = trace;
        sched::TraceIndexOptions o;
        o.progress = [cancel](double) { return !cancel->load(); };
        h->index = std::make_unique<sched::TraceIndex>(*trace, topo, o);
        return Index(h, h->index.get());
    }));
}

void MainWindow::startAgreementB(std::shared_ptr<const sched::AgreeReport> agreed) {
    const int gen = m_b.generation;
    auto done = [this](std::shared_ptr<const sched::AgreeReport> r, const QString& err) {
        m_b.agreeRunning = false;
        m_b.agree = std::move(r);
        m_b.agreeError = err;
        m_b.disagreements = 0;
        std::vector<TimelineMark> marks;
        if (m_b.agree)
            for (const auto& row : m_b.agree->rows)
                if (row.sim != row.kernel) {
                    ++m_b.disagreements;
                    marks.push_back({m_traceT0 + (row.time - m_b.t0), std::max(row.cls, 0)});  // on A's clock
                }
        if (m_timeline) m_timeline->setSecondLane(std::move(marks), true);
        m_b.reasons = m_b.agree ? std::make_shared<const sched::AgreeReasonIndex>(*m_b.agree) : nullptr;
        updateAgreeProgress();
        if (m_frame && m_trace) setTraceTime(m_frame->a->now);
        else if (m_frame) showFrame(m_frame);
        fireWhenAgreed();
    };
    if (agreed) {
        done(std::move(agreed), QString());
        return;
    }
    m_b.agreeCancel = std::make_shared<std::atomic<bool>>(false);
    m_b.agreeProgress = std::make_shared<std::atomic<int>>(0);
    m_agreeTimer->start();
    using Result = std::pair<std::shared_ptr<const sched::AgreeReport>, QString>;
    auto* watcher = new QFutureWatcher<Result>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen, done] {
        const auto [r, err] = watcher->result();
        watcher->deleteLater();
        if (gen != m_b.generation || !m_b.trace) return;  // B was replaced or dropped
        done(r, err);
    });
    watcher->setFuture(QtConcurrent::run([trace = m_b.trace, topo = m_traceTopo, cancel = m_b.agreeCancel, pr = m_b.agreeProgress] {
        return replayAgreement(*trace, topo, [cancel, pr](double share) {
            *pr = int(share * 1000);
            return !cancel->load();
        });
    }));
    updateAgreeProgress();
}

void MainWindow::clearSideB() {
    const bool had = m_b.trace || m_beside;
    for (const auto& c : {m_b.indexCancel, m_b.agreeCancel})
        if (c) *c = true;
    const int gen = m_b.generation + 1;
    m_b = TraceB{};
    m_b.generation = gen;  // a replay or an index still being made for the old B is dropped
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
    if (had && m_trace) {
        m_heatB->hide();
        if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->hide();
        m_heatA->setTitle(QStringLiteral("recorded: %1").arg(QFileInfo(m_tracePath).fileName()));
    }
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
    if (!m_trace) return tr("%1: no trace is shown (open one first: the simulation runs beside it)").arg(path);
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
    if (s.topo->name() != m_traceTopo->name() && s.topo->nrCpus() != m_traceTopo->nrCpus())
        return tr("%1: topology %2 (%3 CPUs) is not the trace's %4 (%5 CPUs)")
            .arg(path, q(s.topo->name()))
            .arg(s.topo->nrCpus())
            .arg(q(m_traceTopo->name()))
            .arg(m_traceTopo->nrCpus());
    clearSideB();
    m_beside = s;
    m_besidePath = path;
    m_besideSeed = s.seed;
    m_besideKnobs = v->knobs;
    m_besideSnap.reset();
    m_heatB->show();
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->show();
    m_heatA->setTitle(QStringLiteral("A: recorded: %1").arg(QFileInfo(m_tracePath).fileName()));
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
    m_sim->post([s = *m_beside, k = m_besideKnobs, seed = m_besideSeed, ns = m_besideTarget](SimWorker& w) {
        w.runTo(s, k, seed, ns);
    });
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
    if (!m_trace) {
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
            const QString pick = QInputDialog::getItem(this, tr("Simulate beside the trace"), tr("Variant of %1:").arg(QFileInfo(p).fileName()),
                                                       items, 0, false, &ok);
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
    if (!m_trace) {
        // Made by the worker from the run as it is now (running or not); the answer comes back queued.
        m_sim->post([](SimWorker& w) { w.requestCompareText(); });
        return;
    }
    if (!m_b.trace) {
        statusBar()->showMessage(m_beside ? tr("The A/B table compares two traces (schedlab-cli compare-traces): open a second trace as B")
                                          : tr("Open a second trace as B: the table compares the two traces"),
                                 6000);
        return;
    }
    // schedlab-cli compare-traces A B --topology T: baseline knobs for both agreement rows.
    statusBar()->showMessage(tr("Making the A/B table of the two traces…"), 4000);
    auto* watcher = new QFutureWatcher<QString>(this);
    const auto a = m_trace, b = m_b.trace;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, a, b] {
        const QString t = watcher->result();
        watcher->deleteLater();
        if (a != m_trace || b != m_b.trace) return;  // the traces changed meanwhile
        if (t.startsWith(QLatin1String("error: "))) {
            statusBar()->showMessage(t.mid(7), 8000);
            return;
        }
        QApplication::clipboard()->setText(t);
        statusBar()->showMessage(tr("A/B table of the two traces copied (%1 lines)").arg(t.count(QLatin1Char('\n'))), 4000);
        emit compareTextCopied(t);
    });
    watcher->setFuture(QtConcurrent::run([a, b, topo = m_traceTopo]() -> QString {
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
    if (!m_trace || !m_frame) return {};
    const qint64 rel = m_frame->a->now - m_traceT0;
    if (m_b.trace) {
        // Short: the trace bar and the caption carry the whole agreement summaries.
        auto brief = [](const sched::AgreeReport* r, int dis, const QString& full) {
            if (!r) return full;
            return tr("agreement %1 %, %2 disagreements").arg(r->decisions ? 100.0 * double(r->agree) / double(r->decisions) : 0.0, 0, 'f', 1).arg(dis);
        };
        return QStringLiteral("A %1 · B %2 · %3 (%4 CPUs) · cursor %5 since each trace's first event (A 0 .. %6, B 0 .. %7) · A: %8 · B: %9")
            .arg(QFileInfo(m_tracePath).fileName(), QFileInfo(m_b.path).fileName(), q(m_traceTopo->name()))
            .arg(m_traceTopo->nrCpus())
            .arg(simTime(rel), simTime(m_traceT1 - m_traceT0), simTime(m_b.t1 - m_b.t0),
                 brief(m_agree.get(), int(m_disagreements.size()), agreementSummary()),
                 brief(m_b.agree.get(), m_b.disagreements, agreementSummaryB()));
    }
    QString st = QStringLiteral("trace %1 · %2 (%3 CPUs) · %4 events · cursor %5 (%6 .. %7)")
                     .arg(QFileInfo(m_tracePath).fileName(), q(m_traceTopo->name()))
                     .arg(m_traceTopo->nrCpus())
                     .arg(m_trace->events.size())
                     .arg(simTime(rel), simTime(0), simTime(m_traceT1 - m_traceT0));
    if (m_beside) {
        const auto& b = m_frame->b;
        st += QStringLiteral(" · B: %1 simulated to %2").arg(QFileInfo(m_besidePath).fileName(), simTime(b ? b->now : 0));
        if (b && b->now < m_besideTarget) st += b->done ? tr(" (its run ended)") : tr(" (running to %1)").arg(simTime(m_besideTarget));
    }
    return st + QStringLiteral(" · ") + agreementSummary();
}

}  // namespace schedlab
