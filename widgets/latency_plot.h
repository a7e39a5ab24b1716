// SPDX-License-Identifier: GPL-2.0-or-later
// latency_plot.h: wakeup latency histograms of A and B on a log time axis, with a percentile table.
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace sched {
class LatencyHistogram;
struct Snapshot;
}  // namespace sched

namespace schedlab {

/// Wakeup latency (`Snapshot::wakeup_latency`) of A and B overlaid.
///
/// Left: share of wakeups (%) per display bin over a logarithmic latency axis (µs), one step-filled
/// graph per side (graph 0 = A, graph 1 = B when present). Right: a table of p50, p75, p90, p95, p99,
/// p99.5, p99.9 and max in µs (rows in that order), columns A, B and B's change relative to A in %
/// (the last two hidden when B is absent).
class LatencyPlot : public QWidget {
    Q_OBJECT

public:
    explicit LatencyPlot(QWidget* parent = nullptr);
    ~LatencyPlot() override;

    /// Shows `a` and, when not null, `b` overlaid. Either may be null; both null clears the view.
    void setSnapshots(std::shared_ptr<const sched::Snapshot> a, std::shared_ptr<const sched::Snapshot> b);

    /// The histogram plot: graph(0) is A, graph(1) is B (absent when B is null).
    QCustomPlot* plot() const { return m_plot; }
    /// The percentile table: rows p50 ... max, columns A, B, change.
    QTableWidget* table() const { return m_table; }

    /// Rebins `h`'s log-linear buckets into `perDecade` bins per decade of µs, bin k covering
    /// [10^(k/perDecade), 10^((k+1)/perDecade)) µs; a bucket goes to the bin of its midpoint, and
    /// values below 1 ns count as 1 ns. Returns the non-empty bins ascending as (lower edge in µs,
    /// share of all values in %); the shares sum to 100. Empty when `h` is empty or perDecade < 1.
    static std::vector<std::pair<double, double>> displayBins(const sched::LatencyHistogram& h, int perDecade);
    /// Colour of side A (0) or B (1) in the A/B views (Okabe-Ito blue and vermillion).
    static QColor sideColor(int side);
    /// How the table writes a latency: µs with one decimal ("20.1").
    static QString formatUs(std::int64_t ns);
    /// Percentiles shown in the table, in row order; the last row (max) is not in this list.
    static const std::vector<double>& tablePercentiles();

    /// Display bins per decade used by the plot.
    static constexpr int kBinsPerDecade = 8;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void fillTable(const sched::Snapshot* a, const sched::Snapshot* b);

    QCustomPlot* m_plot = nullptr;
    QTableWidget* m_table = nullptr;
    QLabel* m_count = nullptr;  // wakeups per side, under the table
    QString m_elidedFor;        // legend names and width the names were last elided for
};

}  // namespace schedlab
