// SPDX-License-Identifier: GPL-2.0-or-later
// outcome_plot.h: the workload's own rate over simulated time (hackbench's messages/s,
// tbench's MB/s, schbench's RPS), with busy CPUs and migrations per second below it, A and B
// overlaid, the steady-state verdicts and every live knob change marked.
#pragma once

#include <QWidget>

#include <memory>

class QCustomPlot;
class QCPAxisRect;
class QLabel;

namespace sched {
struct Snapshot;
}

namespace schedlab {

/// Three stacked plots sharing the time axis (simulated seconds), each with A's and B's line
/// (graph 0 A, graph 1 B, in LatencyPlot::sideColor()s): the first workload's rate
/// (Snapshot::outcome, smoothed over `smoothPoints()` periods), busy CPUs, migrations per
/// second. A dashed vertical line in a side's colour marks where the steady-state detector
/// says that side settled ("steady"); a solid grey line labelled with the change marks each
/// live knob change (Snapshot::knob_marks). The legend above names the sides with their knobs.
class OutcomePlot : public QWidget {
    Q_OBJECT

public:
    explicit OutcomePlot(QWidget* parent = nullptr);
    ~OutcomePlot() override;

    /// Shows `a` and, when not null, `b`; both null clears the view.
    void setSnapshots(std::shared_ptr<const sched::Snapshot> a, std::shared_ptr<const sched::Snapshot> b);

    QCustomPlot* plot() const { return m_plot; }
    /// The rate plot's, busy CPUs' and migrations' axis rects, top to bottom.
    QCPAxisRect* rateRect() const { return m_rects[0]; }
    QCPAxisRect* busyRect() const { return m_rects[1]; }
    QCPAxisRect* migrationsRect() const { return m_rects[2]; }
    /// Periods the rate is averaged over (a centred moving average; 10 ms periods: 50 ms).
    static constexpr int smoothPoints() { return 5; }
    /// The knob-change labels drawn (for tests): "t = 1.200 s: idle_delay_ns=1000000", ...
    QStringList markLabels() const;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void redraw();

    QCustomPlot* m_plot = nullptr;
    QCPAxisRect* m_rects[3] = {};
    QLabel* m_legend = nullptr;
    std::shared_ptr<const sched::Snapshot> m_a, m_b;
    QStringList m_marks;
};

}  // namespace schedlab
