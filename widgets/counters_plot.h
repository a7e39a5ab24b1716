// SPDX-License-Identifier: GPL-2.0-or-later
// counters_plot.h: bar charts of A vs B counters: wakeups by final reason code, migrations by cause, who woke.
#pragma once

#include <QWidget>

#include <memory>

class QCustomPlot;
class QLabel;

namespace sched {
struct Snapshot;
}

namespace schedlab {

/// Three grouped horizontal bar charts side by side under one A/B legend, A and B next to each
/// other in each category.
///
/// Left: wakeups by final reason code (`Snapshot::reasons`): the kMaxReasons reasons with the
/// largest A + B count, largest first, the rest summed as "other" (shown only when non-zero).
/// Right: migrations by cause (`Snapshot::migrations_by_cause`: wakeup, periodic, newidle, nohz,
/// active, fork, in that order). Third: who woke (a task, a local timer, a remote timer) and the
/// wakelist (IPI) count. In every plot plottable 0 is A's QCPBars and plottable 1 B's (when
/// B is present); the category of a bar is its key, named by the key axis' (yAxis, first category at the top)
/// QCPAxisTickerText.
class CountersPlot : public QWidget {
    Q_OBJECT

public:
    explicit CountersPlot(QWidget* parent = nullptr);
    ~CountersPlot() override;

    /// Shows `a` and, when not null, `b`. Either may be null; both null clears the view.
    void setSnapshots(std::shared_ptr<const sched::Snapshot> a, std::shared_ptr<const sched::Snapshot> b);

    /// Wakeups by final reason code.
    QCustomPlot* reasonsPlot() const { return m_reasons; }
    /// The reasons plot's title ("wakeups by final reason"; a trace's are schedlab's reasons on
    /// the trace's decisions, from the agreement replay).
    void setReasonsTitle(const QString& title);
    QString reasonsTitle() const;
    /// Migrations by cause.
    QCustomPlot* causesPlot() const { return m_causes; }
    /// Who woke the sleepers: a task, a timer on the wakee's own CPU, a timer on another CPU; and
    /// the wakeups that went through a wakelist (IPI).
    QCustomPlot* wakersPlot() const { return m_wakers; }

    /// Reasons shown by name before the rest is summed as "other".
    static constexpr int kMaxReasons = 8;

protected:
    void showEvent(QShowEvent* event) override;

private:
    QCustomPlot* m_reasons = nullptr;
    QCustomPlot* m_causes = nullptr;
    QCustomPlot* m_wakers = nullptr;
    QLabel* m_legend = nullptr;  // A and B colours with their knobs, above both plots
};

}  // namespace schedlab
