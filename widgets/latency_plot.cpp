// SPDX-License-Identifier: GPL-2.0-or-later
// latency_plot.cpp: wakeup latency histograms (log µs axis, 8 bins per decade) and percentile table.
// Core headers before any Qt header: engine.h has a member named emit, which Qt defines as a macro.
#include "util/histogram.h"
#include "sim/snapshot.h"

#include "latency_plot.h"
#include "plot_style.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QShowEvent>
#include <QTableWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace schedlab {

namespace {

constexpr const char* kFullNameProperty = "schedlabFullName";  // graph name before eliding
constexpr int kFillAlpha = 80;                                 // fills overlap: A shows through B

/// Log ticker whose labels carry their unit ("100 ns", "10 µs", "1 ms") instead of "10^4".
class LatencyTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tickUs, const QLocale& locale, QChar, int) override {
        if (tickUs >= 1e6) return locale.toString(tickUs / 1e6, 'g', 3) + QStringLiteral(" s");
        if (tickUs >= 1e3) return locale.toString(tickUs / 1e3, 'g', 3) + QStringLiteral(" ms");
        if (tickUs >= 1) return locale.toString(tickUs, 'g', 3) + QStringLiteral(" µs");
        return locale.toString(tickUs * 1e3, 'g', 3) + QStringLiteral(" ns");
    }
};

/// (bin index k, count) with bin k = [10^(k/perDecade), 10^((k+1)/perDecade)) µs.
std::map<int, std::uint64_t> binCounts(const sched::LatencyHistogram& h, int perDecade) {
    std::map<int, std::uint64_t> bins;
    for (const auto& b : h.buckets()) {
        // A bucket holds the integers lo .. hi-1; its width is <= 1/128 of lo, far below a display bin,
        // so the whole bucket goes to the bin of its midpoint.
        const double midNs = std::max((double(b.lo) + double(b.hi) - 1.0) / 2.0, 1.0);
        const int k = int(std::floor(std::log10(midNs / 1e3) * perDecade + 1e-9));
        bins[k] += b.count;
    }
    return bins;
}

double binEdge(int k, int perDecade) { return std::pow(10.0, double(k) / perDecade); }

QString sideName(const sched::Snapshot& s, const QString& fallback) { return s.label.empty() ? fallback : QString::fromStdString(s.label); }

}  // namespace

std::vector<std::pair<double, double>> LatencyPlot::displayBins(const sched::LatencyHistogram& h, int perDecade) {
    std::vector<std::pair<double, double>> out;
    if (h.count() == 0 || perDecade < 1) return out;
    const double total = double(h.count());
    for (const auto& [k, n] : binCounts(h, perDecade)) out.emplace_back(binEdge(k, perDecade), 100.0 * double(n) / total);
    return out;
}

QColor LatencyPlot::sideColor(int side) { return side == 0 ? QColor(0x00, 0x72, 0xB2) : QColor(0xD5, 0x5E, 0x00); }

QString LatencyPlot::formatUs(std::int64_t ns) { return QString::number(double(ns) / 1e3, 'f', 1); }

const std::vector<double>& LatencyPlot::tablePercentiles() {
    static const std::vector<double> kPercentiles = {50, 75, 90, 95, 99, 99.5, 99.9};
    return kPercentiles;
}

LatencyPlot::LatencyPlot(QWidget* parent) : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot, 1);

    QFont tickFont = font();
    tickFont.setPointSizeF(std::max(tickFont.pointSizeF(), 9.0));
    QFont labelFont = tickFont;
    labelFont.setPointSizeF(tickFont.pointSizeF() + 1);
    m_plot->setBackground(Qt::white);
    styleAxis(m_plot->xAxis, tickFont, labelFont);
    styleAxis(m_plot->yAxis, tickFont, labelFont);
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<LatencyTicker>::create();
    ticker->setLogBase(10);
    ticker->setSubTickCount(8);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setLabel(QStringLiteral("wakeup latency (log scale)"));
    m_plot->yAxis->setLabel(QStringLiteral("share of wakeups (%)"));
    // Room on the right for the last decade's label (no right axis reserves it).
    m_plot->axisRect()->setAutoMargins(QCP::msLeft | QCP::msTop | QCP::msBottom);
    m_plot->axisRect()->setMargins(QMargins(0, 0, 28, 0));
    // Legend in a row above the axis rect: inside, it would cover the bars.
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(tickFont);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setIconSize(24, 16);
    // Legend names are elided to the space a legend column really has, known only at replot time.
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this] {
        const int n = m_plot->graphCount();
        const int available = m_plot->width() - 20 - n * 60;  // minus icons and paddings
        QString key = QString::number(available);
        for (int i = 0; i < n; ++i) key += QLatin1Char('\n') + m_plot->graph(i)->property(kFullNameProperty).toString();
        if (key == m_elidedFor) return;  // text measuring is a large part of a replot: only when needed
        m_elidedFor = key;
        const QFontMetrics fm(m_plot->legend->font());
        int shortest = available, total = 0;
        for (int i = 0; i < n; ++i) {
            const int w = fm.horizontalAdvance(m_plot->graph(i)->property(kFullNameProperty).toString());
            shortest = std::min(shortest, w);
            total += w;
        }
        // Elide only the long names, to what the short ones leave.
        const int textPx = total <= available ? available : std::max(120, n > 1 ? available - shortest : available);
        for (int i = 0; i < n; ++i) {
            QCPGraph* g = m_plot->graph(i);
            g->setName(fm.elidedText(g->property(kFullNameProperty).toString(), Qt::ElideRight, textPx));
        }
    });
    // The legend is centred between two spacers: alone in the cell, an empty legend's maximum size
    // (its margins) would squeeze the whole column, axis rect included.
    m_plot->plotLayout()->insertRow(0);
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(0, 0, legendRow);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    legendRow->addElement(0, 0, new QCPLayoutElement(m_plot));
    legendRow->addElement(0, 1, m_plot->legend);
    legendRow->addElement(0, 2, new QCPLayoutElement(m_plot));
    legendRow->setColumnStretchFactor(0, 1);
    legendRow->setColumnStretchFactor(1, 0.001);
    legendRow->setColumnStretchFactor(2, 1);

    m_table = new QTableWidget(int(tablePercentiles().size()) + 1, 3, this);
    QStringList rows;
    for (double p : tablePercentiles()) rows << QStringLiteral("p%1").arg(p);
    rows << QStringLiteral("max");
    m_table->setVerticalHeaderLabels(rows);
    m_table->setHorizontalHeaderLabels({QStringLiteral("A (µs)"), QStringLiteral("B (µs)"), QStringLiteral("change")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setFocusPolicy(Qt::NoFocus);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_table->setFont(tickFont);
    m_table->horizontalHeader()->setFont(tickFont);
    m_table->verticalHeader()->setFont(tickFont);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(QFontMetrics(tickFont).height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    const int colWidth = QFontMetrics(tickFont).horizontalAdvance(QStringLiteral("000000.0")) + 16;
    for (int c = 0; c < 3; ++c) m_table->setColumnWidth(c, colWidth);
    m_table->setToolTip(QStringLiteral("wakeup latency percentiles in µs; change = (B - A) / A"));
    m_count = new QLabel(this);
    m_count->setFont(tickFont);
    m_count->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    auto* side = new QVBoxLayout;
    side->setContentsMargins(0, 0, 0, 0);
    side->addWidget(m_table);
    side->addWidget(m_count);
    side->addStretch(1);
    layout->addLayout(side, 0);

    setSnapshots(nullptr, nullptr);
}

LatencyPlot::~LatencyPlot() = default;

void LatencyPlot::setSnapshots(std::shared_ptr<const sched::Snapshot> a, std::shared_ptr<const sched::Snapshot> b) {
    const std::array<const sched::Snapshot*, 2> sides = {a.get(), b.get()};
    // One graph per side present, kept from frame to frame (with their legend items): a frame
    // only replaces the data.
    const int want = (a ? 1 : 0) + (b ? 1 : 0);
    if (m_plot->graphCount() != want) {
        m_plot->clearGraphs();
        for (int i = 0; i < want; ++i) {
            QCPGraph* g = m_plot->addGraph();
            g->setLineStyle(QCPGraph::lsStepLeft);
            // Step graphs have only horizontal and vertical edges: antialiasing changes no pixel, but
            // the antialiased translucent fill takes the raster engine's slow path (~2 ms a replot).
            g->setAntialiased(false);
            g->setAntialiasedFill(false);
        }
    }
    int gi = 0;
    double lo = 1, hi = 1000, top = 1;  // at least 1 µs .. 1 ms, so runs compare at a glance
    for (int s = 0; s < 2; ++s) {
        const sched::Snapshot* snap = sides[std::size_t(s)];
        if (!snap) continue;
        const auto bins = binCounts(snap->wakeup_latency, kBinsPerDecade);
        const double total = double(snap->wakeup_latency.count());
        QVector<QCPGraphData> points;
        if (!bins.empty()) {
            const int k0 = bins.begin()->first, k1 = bins.rbegin()->first;
            // Step-left graph over consecutive bins (empty ones at 0), opened and closed at 0 so the
            // outline and the fill have vertical edges.
            points.append(QCPGraphData(binEdge(k0, kBinsPerDecade) * 0.9999, 0));
            for (int k = k0; k <= k1; ++k) {
                auto it = bins.find(k);
                const double share = it == bins.end() ? 0.0 : 100.0 * double(it->second) / total;
                points.append(QCPGraphData(binEdge(k, kBinsPerDecade), share));
                top = std::max(top, share);
            }
            points.append(QCPGraphData(binEdge(k1 + 1, kBinsPerDecade), 0));
            lo = std::min(lo, binEdge(k0, kBinsPerDecade));
            hi = std::max(hi, binEdge(k1 + 1, kBinsPerDecade));
        }
        QCPGraph* g = m_plot->graph(gi++);
        g->data()->set(points, true);
        QColor c = sideColor(s);
        g->setPen(QPen(c, 1.6));
        c.setAlpha(kFillAlpha);
        g->setBrush(c);
        const QString name = sideName(*snap, s == 0 ? QStringLiteral("A") : QStringLiteral("B"));
        const QString knobs = QString::fromStdString(snap->knobs);
        const QString fullName = knobs.isEmpty() ? name : name + QStringLiteral(": ") + knobs;
        if (g->property(kFullNameProperty).toString() != fullName) {
            g->setProperty(kFullNameProperty, fullName);
            g->setName(fullName);
            m_elidedFor.clear();
        }
    }
    m_plot->legend->setVisible(m_plot->graphCount() > 0);
    m_plot->xAxis->setRange(std::pow(10.0, std::floor(std::log10(lo) + 1e-9)), std::pow(10.0, std::ceil(std::log10(hi) - 1e-9)));
    m_plot->yAxis->setRange(0, top * 1.12);

    fillTable(a.get(), b.get());
    if (isVisible()) m_plot->replot(QCustomPlot::rpQueuedRefresh);
}

void LatencyPlot::fillTable(const sched::Snapshot* a, const sched::Snapshot* b) {
    const auto& ps = tablePercentiles();
    const int nrows = int(ps.size()) + 1;
    auto value = [&](const sched::Snapshot* s, int row) -> std::int64_t {
        return row < int(ps.size()) ? s->wakeup_latency.percentile(ps[std::size_t(row)]) : s->wakeup_latency.max();
    };
    auto setCell = [&](int row, int col, const QString& text, const QColor& fg = Qt::black) {
        QTableWidgetItem* item = m_table->item(row, col);  // reused: no allocation or relayout per frame
        if (!item) {
            item = new QTableWidgetItem;
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, col, item);
        }
        if (item->text() != text) item->setText(text);
        if (item->foreground().color() != fg) item->setForeground(fg);
    };
    const bool hasA = a && a->wakeup_latency.count() > 0;
    const bool hasB = b && b->wakeup_latency.count() > 0;
    const QString dash = QStringLiteral("–");
    for (int row = 0; row < nrows; ++row) {
        setCell(row, 0, hasA ? formatUs(value(a, row)) : dash);
        setCell(row, 1, hasB ? formatUs(value(b, row)) : dash);
        if (hasA && hasB && value(a, row) > 0) {
            const double va = double(value(a, row)), vb = double(value(b, row));
            const double change = 100.0 * (vb - va) / va;
            // Latency: higher is worse (dark vermillion), lower is better (dark blue).
            const QColor fg = change > 0.5 ? QColor(0xA0, 0x3C, 0x00) : change < -0.5 ? QColor(0x00, 0x50, 0x80) : Qt::black;
            setCell(row, 2, QString::asprintf("%+.1f%%", change), fg);
        } else {
            setCell(row, 2, dash);
        }
    }
    // Header items, hidden columns and sizes change only with the sides: setting them anyway would
    // relayout the dock on every frame.
    auto setHeader = [&](int col, const QString& text, const QString& tip) {
        QTableWidgetItem* item = m_table->horizontalHeaderItem(col);
        if (!item) {
            item = new QTableWidgetItem;
            m_table->setHorizontalHeaderItem(col, item);
        }
        if (item->text() != text) item->setText(text);
        if (item->toolTip() != tip) item->setToolTip(tip);
    };
    setHeader(0, a ? sideName(*a, QStringLiteral("A")) + QStringLiteral(" (µs)") : QStringLiteral("A (µs)"),
              a ? QString::fromStdString(a->knobs) : QString());
    setHeader(1, b ? sideName(*b, QStringLiteral("B")) + QStringLiteral(" (µs)") : QStringLiteral("B (µs)"),
              b ? QString::fromStdString(b->knobs) : QString());
    if (m_table->isColumnHidden(1) != !b) m_table->setColumnHidden(1, !b);
    if (m_table->isColumnHidden(2) != !b) m_table->setColumnHidden(2, !b);
    // Fit the table to its visible columns so the plot gets the rest of the width.
    int width = m_table->verticalHeader()->sizeHint().width() + 2 * m_table->frameWidth() + 2;
    for (int c = 0; c < 3; ++c)
        if (!m_table->isColumnHidden(c)) width += m_table->columnWidth(c);
    m_table->setFixedWidth(width);
    m_table->setFixedHeight(m_table->horizontalHeader()->sizeHint().height() + nrows * m_table->verticalHeader()->defaultSectionSize() +
                            2 * m_table->frameWidth() + 2);
    // Fixed in both directions: a new count then repaints the label without relayouting the dock.
    m_count->setFixedSize(width, 2 * m_count->fontMetrics().lineSpacing() + 4);
    QStringList counts;
    if (a) counts << QStringLiteral("%1: %L2 wakeups").arg(sideName(*a, QStringLiteral("A"))).arg(a->wakeup_latency.count());
    if (b) counts << QStringLiteral("%1: %L2 wakeups").arg(sideName(*b, QStringLiteral("B"))).arg(b->wakeup_latency.count());
    m_count->setText(counts.join(QLatin1Char('\n')));
}

void LatencyPlot::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    m_plot->replot(QCustomPlot::rpQueuedRefresh);
}

}  // namespace schedlab
