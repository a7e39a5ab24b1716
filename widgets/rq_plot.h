// SPDX-License-Identifier: GPL-2.0-or-later
// rq_plot.h: runqueue length over simulated time: step lines for selected CPUs and a time x CPU colour map.
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;
class QCPLayoutGrid;

namespace sched {
struct Snapshot;
}

namespace schedlab {

/// Live view of `Snapshot::sample_len` (rq->nr_running sampled every `sample_period_ns`).
///
/// Top: step lines of nr_running over simulated time (ms) for the selected CPUs, or one line with
/// the machine mean when none is selected. Bottom: a colour map, x = time, y = CPU (CPU 0 at the
/// top), colour = nr_running (see setScaleMax). Both show the last `windowMs()` of the buffer and are binned to the
/// plot's pixel width: the lines show the mean of the rows in a pixel column, the map the maximum. With more
/// CPUs than the map has pixel rows, a map row is the maximum over a group of adjacent CPUs.
class RqPlot : public QWidget {
    Q_OBJECT

public:
    explicit RqPlot(QWidget* parent = nullptr);
    ~RqPlot() override;

    /// Shows `snapshot`'s rq-length buffer; nullptr clears both plots.
    void setSnapshot(std::shared_ptr<const sched::Snapshot> snapshot);
    const std::shared_ptr<const sched::Snapshot>& snapshot() const { return m_snapshot; }
    /// CPUs drawn as lines (CPU indices; out-of-range ones are ignored). Empty: the machine mean.
    void setSelectedCpus(const QList<int>& cpus);
    /// CPUs currently selected (as given to setSelectedCpus).
    QList<int> selectedCpus() const { return m_selected; }
    /// Span of simulated time shown, in ms, ending at the newest sample; <= 0 shows the whole buffer (default).
    void setWindowMs(double windowMs);
    /// Span of simulated time shown in ms; <= 0 means the whole buffer.
    double windowMs() const { return m_windowMs; }
    /// Top of the colour scale (nr_running drawn in the top colour and above); <= 0 (default) picks
    /// max(4, largest value shown) capped at kAutoScaleCap, so one long runqueue does not wash out the rest.
    /// Set the same value as the topology heatmaps' scale to make the colours comparable.
    void setScaleMax(double scaleMax);
    /// The value given to setScaleMax (<= 0: automatic).
    double scaleMax() const { return m_scaleMax; }
    /// Title above the line plot (e.g. "A: baseline"); empty hides it.
    void setTitle(const QString& title);

    /// Largest automatic colour scale top.
    static constexpr double kAutoScaleCap = 16;

    /// The nr_running line plot (one QCPGraph per line, in selection order).
    QCustomPlot* linePlot() const { return m_linePlot; }
    /// The time x CPU colour map plot (plottable 0 is the QCPColorMap).
    QCustomPlot* mapPlot() const { return m_mapPlot; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void rebuild();
    bool m_rowsPinned = false;  ///< the map's y axis shows a pinned run's CPUs (its own ticker)
    void replotIfVisible();
    int pixelColumns() const;
    int pixelRows() const;

    QCustomPlot* m_linePlot = nullptr;
    QCustomPlot* m_mapPlot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPLayoutGrid* m_legendCell = nullptr;
    QCPColorMap* m_colorMap = nullptr;
    QCPColorScale* m_colorScale = nullptr;
    std::shared_ptr<const sched::Snapshot> m_snapshot;
    QList<int> m_selected;
    double m_windowMs = 0;
    double m_scaleMax = 0;
    int m_binnedColumns = 0;  // pixel columns the current data was binned for
    int m_binnedRows = 0;     // pixel rows of the map the current data was binned for
};

}  // namespace schedlab
