// SPDX-License-Identifier: GPL-2.0-or-later
// trace_mode.h: the window's trace mode. A recorded trace is side A, with its timeline (the trace
// bar), its agreement with schedlab's path and its disagreements; side B beside it is a second
// trace or a simulation run to the cursor's time. The traces and their background work are two
// TraceSessions; TraceMode shows them in the window's views and owns side B's simulation state.
// MainWindow forwards its trace API here and asks it for titles, the caption and frames.
#pragma once

#include "replay/replay.h"
#include "sim/scenario.h"
#include "sim_worker.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QAction;
class QLabel;
class QMainWindow;

namespace schedlab {

class CountersPlot;
class DecisionInspector;
class TopologyHeatmap;
class TraceBar;
class TraceSession;
struct TraceSide;
class TraceTimeline;

/// Trace mode inside a main window: everything about recorded traces the window shows.
class TraceMode : public QObject {
    Q_OBJECT

public:
    /// The window's parts trace mode shows in (all owned by the window, which outlives this).
    struct Host {
        QMainWindow* window = nullptr;
        TopologyHeatmap* heatA = nullptr;
        TopologyHeatmap* heatB = nullptr;
        DecisionInspector* inspector = nullptr;
        CountersPlot* counters = nullptr;
        QLabel* status = nullptr;  ///< the status bar's permanent line
        SimController* sim = nullptr;
        QAction* openTraceB = nullptr;                           ///< File > Open trace as B (enabled in trace mode)
        QAction* beside = nullptr;                               ///< File > Simulate beside the trace
        std::function<std::shared_ptr<const Frame>()> frame;     ///< the frame the views show now
        std::function<void(std::shared_ptr<const Frame>)> show;  ///< shows a frame in every view
        std::function<void()> pause;                             ///< pauses the simulation (setRunning(false))
        std::function<void(TopologyHeatmap*)> setInspected;      ///< the heatmap the inspector marks CPUs on
    };

    TraceMode(Host host, QObject* parent);
    ~TraceMode() override;

    // ---- side A: the recorded trace (see MainWindow's declarations of the same names)
    void showTrace(std::shared_ptr<const sched::Trace> trace, std::shared_ptr<const sched::Topology> topo, const QString& path,
                   std::shared_ptr<const sched::AgreeReport> agreed = nullptr);
    /// Back to the simulation: traces closed, jobs cancelled, the views' trace marks dropped.
    void leave();
    void setTraceTime(qint64 ns);
    qint64 traceCursor() const;
    bool active() const;
    void openTraceDialog();
    std::shared_ptr<const sched::AgreeReport> agreement() const;
    bool agreementRunning() const;
    bool traceIndexed() const;
    QString agreementError() const;
    void whenAgreed(std::function<void()> done);
    QString agreementSummary() const;
    int disagreementCount() const;
    const sched::AgreeRow* disagreement(int index) const;
    bool openDisagreement(int index);
    int openedDisagreement() const { return m_openedDis; }
    void stepDisagreement(int direction);
    TraceTimeline* timeline() const { return m_timeline; }
    const TraceSide& sideA() const;

    // ---- side B: a second trace
    QString showTraceB(std::shared_ptr<const sched::Trace> trace, const QString& path, std::shared_ptr<const sched::AgreeReport> agreed = nullptr);
    bool traceBShown() const;
    const TraceSide& sideB() const;
    std::shared_ptr<const sched::AgreeReport> agreementB() const;
    bool agreementBRunning() const;
    bool traceIndexedB() const;
    QString agreementSummaryB() const;
    void openTraceBDialog();

    // ---- side B: a simulation beside the trace
    QString showSimulationBeside(const sched::Scenario& s, const QString& path, const QString& variant = {});
    QString showSimulationBeside(const QString& path, const QString& variant = {});
    bool besideSimulation() const { return m_beside.has_value(); }
    qint64 besideTarget() const { return m_beside ? m_besideTarget : -1; }
    void whenBesideReady(std::function<void()> done);
    void besideSimDialog();
    /// A frame of the simulation while a trace is shown: true when it was taken (it is the
    /// simulation beside the trace and went into side B), false when it waits (paused run).
    bool offerSimFrame(const std::shared_ptr<const Frame>& f);

    // ---- what the window shows for a trace
    /// Heatmap titles for a frame of trace mode (side B's: a second trace or the simulation).
    QString titleA(const sched::Snapshot& a) const;
    QString titleB(const sched::Snapshot& b) const;
    /// The permanent status line.
    QString status() const;
    /// The caption of an export.
    QString caption() const;
    /// File > Copy A/B table as text with two traces shown (compare-traces); false when it is not
    /// trace mode (the simulation's table is the window's).
    bool copyCompareText(std::function<void(const QString&)> copied);
    /// Closing the window: the jobs stop; the knobs dock is shown again if trace mode hid it.
    void shutdown();

private:
    void createSessions();
    void createTraceBar();
    void showSideB(bool on);
    void readTraceAsync(const QString& path, std::function<void(std::shared_ptr<const sched::Trace>, QString)> done);
    void clearSideB();
    void onAgreementA();
    void onAgreementB();
    void agreementsChanged();
    void fireWhenAgreed();
    void updateAgreeProgress();
    void requestBesideFrame();
    bool besideReady() const;
    void clearDisagreementMarks();
    std::shared_ptr<const Frame> frame() const { return m_host.frame(); }
    void message(const QString& text, int ms) const;

    Host m_host;
    TraceSession* m_ta = nullptr;  ///< the trace shown instead of the simulation, if any
    TraceSession* m_tb = nullptr;  ///< a second trace as side B
    TraceBar* m_traceBar = nullptr;
    TraceTimeline* m_timeline = nullptr;  ///< the trace bar's
    std::vector<std::function<void()>> m_whenAgreed;
    int m_openedDis = -1;
    bool m_knobsHiddenForTrace = false;  ///< showTrace hid the knobs dock; leave() shows it again
    // Side B: a simulation beside the trace.
    std::optional<sched::Scenario> m_beside;
    QString m_besidePath;
    quint64 m_besideSeed = 0;
    sched::Knobs m_besideKnobs;                           ///< the chosen variant's
    qint64 m_besideTarget = 0;                            ///< the simulated time asked for (the cursor's relative time)
    std::shared_ptr<const sched::Snapshot> m_besideSnap;  ///< its newest frame's side A
    bool m_besideRunning = false;                         ///< its newest frame is still on its way to the target
    std::vector<std::function<void()>> m_whenBeside;
};

}  // namespace schedlab
