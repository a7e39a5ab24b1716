// SPDX-License-Identifier: GPL-2.0-or-later
// main_window.cpp: see main_window.h. The window only paints frames the worker publishes and
// sends it commands; it never touches a simulation directly. Its widgets, actions and menus are
// built in main_window_layout.cpp; its files (states, exports) are main_window_files.cpp.
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

}  // namespace schedlab

namespace schedlab {

std::shared_ptr<const sched::Trace> MainWindow::traceB() const { return m_trace->sideB().trace; }

void MainWindow::copyCompareText() {
    // Two traces: compare-traces, made on the thread pool. A run: made by the worker from the run
    // as it is now (running or not); the answer comes back queued (compareTextReady).
    if (!m_trace->copyCompareText([this](const QString& t) { emit compareTextCopied(t); })) m_sim->post([](SimWorker& w) { w.requestCompareText(); });
}

}  // namespace schedlab
