// SPDX-License-Identifier: GPL-2.0-or-later
// main_window.h: the schedlab main window: A and B topology heatmaps side by side, runqueue
// plots, latency histograms, counters, the knob panel and the decision inspector, run controls,
// export with a reproducible caption, and the headless screenshot mode.
#pragma once

#include "replay/replay.h"
#include "trace/trace.h"
#include "replay/trace_snapshot.h"

#include "kernel/knobs.h"
#include "sim/scenario.h"
#include "sim_worker.h"
#include "trace_mode.h"

#include <QMainWindow>

#include <functional>
#include <memory>
#include <optional>

class QAction;
class QTimer;
class QComboBox;
class QProgressBar;
class QToolButton;
class QLabel;
class QMenu;
class QSplitter;
class QToolBar;
class QDockWidget;

namespace schedlab {

class CountersPlot;
class DecisionInspector;
class KnobPanel;
class LatencyPlot;
class OutcomePlot;
class RecentMenu;
class RqPlot;
class RunBar;
class TopologyHeatmap;
class TraceTimeline;
class FlowView;

/// Options from the command line.
struct StartOptions {
    std::optional<sched::Knobs> a, b;  ///< override the scenario's variants
    bool ab = true;
    quint64 seed = 0;   ///< 0: the scenario's
    double speed = -1;  ///< simulated s per wall s; <= 0 as fast as possible; -1: default
    bool autoplay = true;
};

/// Top-level window of the `schedlab` GUI.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Loads a scenario file; on error returns the one-line message (and keeps the current run).
    QString openScenario(const QString& path, const StartOptions& o = {});
    /// Starts an already loaded scenario read from `path`.
    void openScenario(const sched::Scenario& s, const QString& path, const StartOptions& o = {});
    /// Starts the built-in default scenario.
    void openDefault(const StartOptions& o = {});
    /// A scenario (nullopt: the built-in default) at its steady state: restored from the cache of
    /// an earlier start (steadyCachePath()) when there is one, else from t = 0 fast-forwarded to
    /// the steady state (status bar; Pause stops it; the window works meanwhile), whose state is
    /// then cached for the next start. `done` once the steady state is shown.
    /// True when it opens the cache.
    bool openSteady(const std::optional<sched::Scenario>& s, std::function<void()> done = {});
    /// Where the default scenario's steady state is cached: the user's cache directory, keyed
    /// by the scenario document, seed, both sides' knobs, the state format and this build.
    QString steadyCachePath() const;
    /// Opens a state file (File > Open state, --state): a checkpoint of this window (both sides)
    /// or of `schedlab-cli run --save-state` (side A; B from there with the scenario's second
    /// variant). Returns the one-line problem ("" when it is being restored); `done` once shown.
    QString openSimState(const QString& path, std::function<void()> done = {});
    /// Play (true) or pause, as the run bar's button.
    void setRunning(bool on);
    /// File > Save state: both sides' whole state to `path` (atomically); `done` with "" or the
    /// one-line error, on the GUI thread.
    void saveSimState(const QString& path, std::function<void(const QString&)> done = {});

    /// Caption naming topology, workload, knobs of A and B, seed and simulated time.
    QString caption() const;
    /// Exports `w` (nullptr: the whole window) to PNG, SVG or PDF (by suffix) with the caption
    /// below it; writes a temporary file and renames it. Returns an error message or "".
    QString exportView(QWidget* w, const QString& path);
    /// A's and B's runqueue plots side by side in one picture, with the caption (--view rqAB).
    QString exportRqPair(const QString& path);
    /// The A and B runqueue docks next to each other (true) or in tabs.
    void setRqSideBySide(bool on);

    /// File > Export trace: side A's run from t = 0 to the shown time as ftrace text (the knobs A
    /// has now, the run's seed), through a temporary file. "" or the one-line error ("cancelled"
    /// when `keepGoing` said stop). Blocks; the menu runs it on the thread pool.
    QString exportRunTrace(const QString& path, const std::function<bool(qint64)>& keepGoing = {}) const;
    /// File > Export rq-length CSV: the seed's bpftrace CSV of side A's run so far, or of the shown
    /// recorded trace (every 20 ms). Calls `done` with "" or the one-line error, on the GUI thread.
    void exportRqCsv(const QString& path, std::function<void(const QString&)> done);

    /// Replaces the scenario's workloads with `json` (a "workloads" array) and restarts both sides;
    /// returns the one-line problem, or "" when applied.
    QString applyWorkloads(const QString& json);
    /// Runs until the simulated time reaches `ns`, then calls `done` on the GUI thread (headless mode).
    void runUntil(qint64 ns, std::function<void()> done);
    /// Sets one knob of side `side` (0 = A, 1 = B) live, as its control in the knob panel would
    /// (the panel shows it; the outcome view marks it); returns the one-line problem, or "".
    QString changeKnob(int side, const QString& knob, const QString& value);
    /// Run → B from here (`into` 1) / A from here (0): that side starts again from the other
    /// side's state now with its own knobs (SimWorker::branch); `done` once it is shown.
    void branchHere(int into, std::function<void()> done = {});
    /// Fast-forward: both sides run as fast as they can to simulated time `ns` without drawing
    /// (progress in the status bar), then the window shows them there, paused; `done` (optional)
    /// is called then, on the GUI thread. Pause (Space) stops it where it is.
    /// `untilSteady`: fastForwardToSteady()'s stop as well.
    void fastForward(qint64 ns, std::function<void()> done = {}, bool untilSteady = false);
    /// Fast-forward until side A's steady-state detector says it has been settled for a second (at most `maxNs`),
    /// then `done` once that frame is shown (Run → Fast-forward to the steady state).
    void fastForwardToSteady(qint64 maxNs, std::function<void()> done = {});

    /// Steps to the next wakeup (traced; shown in the inspector and on heatmap A), then calls `done`.
    void stepWakeupThen(std::function<void()> done);

    /// Shows a recorded trace on `topo` in the views (side A; the simulation pauses): heatmap,
    /// arrows, rq plot, latency and counters at a cursor time moved on the trace bar's timeline.
    /// Starts the agreement replay (sched::agree with baseline knobs, as `schedlab-cli agree`)
    /// in the background; its decisions and disagreements then appear on the timeline.
    /// `agreed`: its agreement, already replayed (by TraceSession::replayAgreement()): not run again.
    void showTrace(std::shared_ptr<const sched::Trace> trace, std::shared_ptr<const sched::Topology> topo, const QString& path,
                   std::shared_ptr<const sched::AgreeReport> agreed = nullptr) {
        m_trace->showTrace(std::move(trace), std::move(topo), path, std::move(agreed));
    }
    /// Moves the trace cursor to `ns` (trace A's time, clamped to the trace). Side B (a second
    /// trace, or a simulation beside the trace) shows the same time since its own start.
    void setTraceTime(qint64 ns) { m_trace->setTraceTime(ns); }
    /// The cursor as time since trace A's first event (what B is shown at, from its own start).
    qint64 traceCursor() const { return m_trace->traceCursor(); }

    /// A second recorded trace as side B beside the shown trace A, on A's topology (before/after a
    /// patch): heatmap B, rq plot B, latency, counters and the delta table show it at the same time
    /// since its first event as A's cursor. Its own TraceIndex and agreement replay are made in the
    /// background (`agreed`: already replayed). "" or the one-line reason it is refused (no trace A,
    /// more CPUs than the topology). Replaces a simulation beside the trace.
    QString showTraceB(std::shared_ptr<const sched::Trace> trace, const QString& path, std::shared_ptr<const sched::AgreeReport> agreed = nullptr) {
        return m_trace->showTraceB(std::move(trace), path, std::move(agreed));
    }
    bool traceBShown() const { return m_trace->traceBShown(); }
    std::shared_ptr<const sched::Trace> traceB() const;
    std::shared_ptr<const sched::AgreeReport> agreementB() const { return m_trace->agreementB(); }
    bool agreementBRunning() const { return m_trace->agreementBRunning(); }
    bool traceIndexedB() const { return m_trace->traceIndexedB(); }
    /// Trace B's agreement in the words of agreementSummary() ("" without a trace B).
    QString agreementSummaryB() const { return m_trace->agreementSummaryB(); }
    /// File > Open trace as B: pick a file, read it in the background (progress, cancellable).
    void openTraceBDialog() { m_trace->openTraceBDialog(); }

    /// Side B runs scenario `s` (its topology named as the trace's, or with as many CPUs) beside
    /// the shown trace: at every cursor move the simulation is run to the cursor's time since the
    /// trace's first event (paused there; a move backwards restarts it from t = 0) and its frame
    /// is shown as side B. `variant`: which of the scenario's variants (its knobs; "" the first).
    /// "" or the one-line reason it is refused. Replaces a trace B.
    QString showSimulationBeside(const sched::Scenario& s, const QString& path, const QString& variant = {}) {
        return m_trace->showSimulationBeside(s, path, variant);
    }
    QString showSimulationBeside(const QString& path, const QString& variant = {}) { return m_trace->showSimulationBeside(path, variant); }
    bool besideSimulation() const { return m_trace->besideSimulation(); }
    /// The simulation's time the cursor asks for (ns since t = 0), -1 without one.
    qint64 besideTarget() const { return m_trace->besideTarget(); }
    /// Calls `done` (from the event loop) once side B's simulated frame has reached the cursor's time.
    void whenBesideReady(std::function<void()> done) { m_trace->whenBesideReady(std::move(done)); }
    /// File > Simulate beside the trace: pick a scenario.
    void besideSimDialog() { m_trace->besideSimDialog(); }
    /// File > Copy A/B table as text: the CLI's compare table of the run (schedlab-cli compare), or
    /// of the two traces shown (schedlab-cli compare-traces), made in the background; the result
    /// goes to the clipboard and compareTextCopied().
    void copyCompareText();
    bool traceMode() const { return m_trace->active(); }
    /// File > Open trace: pick a file and a topology, read it in the background (cancellable).
    void openTraceDialog() { m_trace->openTraceDialog(); }

    /// The shown trace's agreement report (null while it runs, after an error, or without a trace).
    std::shared_ptr<const sched::AgreeReport> agreement() const { return m_trace->agreement(); }
    bool agreementRunning() const { return m_trace->agreementRunning(); }
    /// The cursor of the shown trace uses its TraceIndex (made in the background after showTrace()).
    bool traceIndexed() const { return m_trace->traceIndexed(); }
    /// Why the agreement could not run ("" when it did or still runs).
    QString agreementError() const { return m_trace->agreementError(); }
    /// Calls `done` from the GUI thread's event loop once the shown traces' agreements (A's, and
    /// B's when shown) have finished or failed (in the next turn when they already have).
    void whenAgreed(std::function<void()> done) { m_trace->whenAgreed(std::move(done)); }
    /// "2089 decisions · agreement 96.8 % · moved: 61.9 % · stay-on-prev 95.5 % · 67 disagreements".
    QString agreementSummary() const { return m_trace->agreementSummary(); }
    /// Disagreements of the shown trace, in time order.
    int disagreementCount() const { return m_trace->disagreementCount(); }
    const sched::AgreeRow* disagreement(int index) const { return m_trace->disagreement(index); }
    /// Opens disagreement `index` (0-based, time order): the cursor moves to its waking, the
    /// timeline selects it, the inspector shows schedlab's path and the kernel's choice, and the
    /// heatmap marks both CPUs. False when there is no such disagreement.
    bool openDisagreement(int index) { return m_trace->openDisagreement(index); }
    /// The one being shown, -1 none (a cursor move elsewhere drops it).
    int openedDisagreement() const { return m_trace->openedDisagreement(); }
    /// Next (+1) or previous (-1) disagreement from the opened one or from the cursor.
    void stepDisagreement(int direction) { m_trace->stepDisagreement(direction); }
    TraceTimeline* traceTimeline() const { return m_trace->timeline(); }

    /// Widgets by name for tests and exports: "window", "heatmapA", "heatmapB", "rq", "rqB", "latency",
    /// "counters", "inspector", "flow".
    QWidget* view(const QString& name) const;
    SimController* controller() const { return m_sim; }
    KnobPanel* knobPanel() const { return m_knobs; }
    FlowView* flowView() const { return m_flow; }
    /// The flow view's edge whose decisions the inspector lists (-1: all of them).
    int flowEdgeFilter() const { return m_flowEdge; }
    /// Lists in the inspector side A's recent decisions that took `edge` (DecisionFlow index), or all
    /// of them again (-1, or the same edge clicked twice).
    void filterDecisionsByEdge(int edge);
    /// The flow view counts the decisions of the last `ns` of simulated time (among the newest ones a
    /// snapshot keeps), or of the whole run (0).
    void setFlowWindow(qint64 ns);
    qint64 flowWindow() const { return m_flowWindowNs; }
    std::shared_ptr<const Frame> frame() const { return m_frame; }

signals:
    /// A fast-forward's progress (side A's simulated time, the target, simulated ns per wall second; `done` at its end).
    void fastForwardProgress(qint64 now, qint64 target, double simNsPerWallS, bool done);
    /// "Copy A/B table as text" put this on the clipboard.
    void compareTextCopied(const QString& text);
    /// openSimState()'s state did not restore (one line).
    void stateFailed(const QString& error);

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    void createViews();
    void createActions();
    void createMenus();
    void restart();
    void start(const sched::Scenario& s, const StartOptions& o);
    /// start() without the run: the scenario, knobs and views set up for it.
    void present(const sched::Scenario& s, const StartOptions& o);
    void onFrame();
    /// Shows a frame in every view (from the simulation or from the trace cursor).
    void showFrame(std::shared_ptr<const Frame> f);
    void updateFlow(const Frame& f);
    /// The A/B table from the shown frame, counted as the "since" box says.
    void updateDeltaTable();
    /// The status bar's progress bar and Stop for a fast-forward's progress report (hidden when `done`).
    void showFastForward(qint64 now, qint64 target, bool done, qint64 steadyFrom);
    void exportDialog(QWidget* w);
    void exportTraceDialog();
    void exportRqCsvDialog();
    void saveScenario();

    SimController* m_sim = nullptr;
    std::optional<sched::Scenario> m_scenario;
    QString m_scenarioPath;
    quint64 m_seed = 0;
    std::shared_ptr<const Frame> m_frame;
    std::function<void()> m_whenDone;
    bool m_ffToSteady = false;             ///< fastForwardToSteady() is under way
    std::function<void()> m_whenBranched;  ///< branchHere()'s `done`, once frame m_branchSeq is shown
    std::function<void()> m_whenRestored;  ///< openSimState()'s `done`, once frame m_restoreSeq is shown
    quint64 m_restoreSeq = 0;
    std::function<void(const QString&)> m_whenSaved;
    quint64 m_branchSeq = 0;
    std::function<void()> m_whenTraced;
    std::int64_t m_tracedAfter = -1;
    qint64 m_runUntil = 0;
    bool m_running = false;
    qint64 m_lastSlowMs = 0;   ///< wall ms of the last refresh of the slow views
    qint64 m_lastFrameMs = 0;  ///< wall ms of the last frame taken
    bool m_framePending = false;

    TopologyHeatmap* m_heatA = nullptr;
    TopologyHeatmap* m_heatB = nullptr;
    RqPlot* m_rq = nullptr;
    RqPlot* m_rqB = nullptr;
    QAction* m_rqSideAct = nullptr;
    bool m_proxyRun[2] = {false, false};  ///< proxy_exec of the running A and B (a boot parameter: changing it restarts)
    LatencyPlot* m_latency = nullptr;
    CountersPlot* m_counters = nullptr;
    OutcomePlot* m_outcome = nullptr;
    FlowView* m_flow = nullptr;
    int m_flowEdge = -1;                    ///< the flow view's clicked edge: the inspector lists the decisions through it (-1: all)
    const void* m_flowAgreement = nullptr;  ///< the agreement whose decisions the flow view shows (trace mode)
    bool m_flowTrace = false;               ///< the flow view shows a recorded trace
    qint64 m_flowWindowNs = 0;              ///< the flow view's window: the last ns of the run, 0 the whole run
    QAction* m_flowWindowAct = nullptr;
    DecisionInspector* m_inspector = nullptr;
    TopologyHeatmap* m_inspected = nullptr;  ///< the heatmap that shows the inspected decision's CPUs
    KnobPanel* m_knobs = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_delta = nullptr;
    QComboBox* m_deltaSince = nullptr;  ///< what the A/B table counts from (DeltaSince)
    QProgressBar* m_ffBar = nullptr;    ///< a fast-forward's progress (hidden otherwise)
    QToolButton* m_ffStop = nullptr;
    RunBar* m_runBar = nullptr;
    QAction* m_exportTraceAct = nullptr;
    RecentMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QAction* m_openTraceBAct = nullptr;
    QAction* m_besideAct = nullptr;

    /// Trace mode (trace_mode.cpp): side A a recorded trace, side B a second trace or a
    /// simulation beside it. The trace API above forwards to it.
    TraceMode* m_trace = nullptr;
};

}  // namespace schedlab
