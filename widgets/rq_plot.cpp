// SPDX-License-Identifier: GPL-2.0-or-later
// rq_plot.cpp: runqueue length lines and time x CPU colour map, binned to the plots' pixel width.
// Core headers before any Qt header: engine.h has a member named emit, which Qt defines as a macro.
#include "sim/snapshot.h"

#include "rq_plot.h"
#include "plot_style.h"

#include <QResizeEvent>
#include <QShowEvent>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace schedlab {

namespace {

// Fixed margins so the two stacked plots share one x geometry: same left margin, same side column
// (legend above, colour scale below).
constexpr int kLeftMargin = 58;
constexpr int kRightMargin = 8;
constexpr int kSideWidth = 150;
constexpr int kMaxLegendItems = 12;
constexpr double kMinScaleMax = 4;  // colour scale spans at least 0..4 so a quiet machine is not all yellow

// Okabe-Ito (colour-blind safe), yellow left out (unreadable on white); black is the mean line.
constexpr std::array<QRgb, 6> kLineColours = {0x0072B2, 0xE69F00, 0x009E73, 0xD55E00, 0xCC79A7, 0x56B4E9};
constexpr QRgb kMeanColour = 0x000000;

QCPColorGradient viridis() {
    // matplotlib's viridis at nine anchor points (QCustomPlot 2.1 has no viridis preset).
    static constexpr std::array<QRgb, 9> kAnchors = {0x440154, 0x472D7B, 0x3B528B, 0x2C728E, 0x21918C, 0x28AE80, 0x5EC962, 0xADDC30, 0xFDE725};
    QCPColorGradient g;
    g.clearColorStops();
    for (std::size_t i = 0; i < kAnchors.size(); ++i) g.setColorStopAt(double(i) / double(kAnchors.size() - 1), QColor(kAnchors[i]));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setLevelCount(256);
    return g;
}

void stylePlot(QCustomPlot* plot, const QFont& base) {
    QFont tickFont = base;
    tickFont.setPointSizeF(std::max(base.pointSizeF(), 9.0));
    QFont labelFont = tickFont;
    labelFont.setPointSizeF(tickFont.pointSizeF() + 1);
    plot->setBackground(Qt::white);
    plot->setNoAntialiasingOnDrag(true);
    for (QCPAxis* a : plot->axisRect()->axes()) styleAxis(a, tickFont, labelFont);
    plot->legend->setFont(tickFont);
    auto* rect = plot->axisRect();
    rect->setAutoMargins(QCP::msTop | QCP::msBottom);
    rect->setMargins(QMargins(kLeftMargin, 0, kRightMargin, 0));
}

QSharedPointer<QCPAxisTickerFixed> integerTicker() {
    // nr_running and CPU numbers are integers: steps of 1, 2, 5, 10, ... never 0.5.
    auto t = QSharedPointer<QCPAxisTickerFixed>::create();
    t->setTickStep(1);
    t->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    t->setTickCount(6);
    return t;
}

/// The rows of the snapshot's buffer in the window and how they fold into pixel columns.
struct Window {
    std::size_t ncpus = 0;
    std::size_t first = 0, rows = 0;  // rows [first, first + rows) of the buffer
    double periodMs = 1;
    double xLo = 0, xHi = 1;          // axis range, ms
    double tFirstMs = 0, tEndMs = 0;  // start of the first row, end of the last row
    std::int64_t originNs = 0;        // the axis' 0: a recorded trace's first event, else the run's start
    int columns = 0;                  // number of bins (<= rows)
    std::size_t binBegin(int j) const { return first + std::size_t(double(j) * double(rows) / columns); }
};

bool isRecorded(const sched::Snapshot& s) { return s.knobs.rfind("recorded:", 0) == 0; }

Window makeWindow(const sched::Snapshot& s, double windowMs, int pixelColumns) {
    Window w;
    w.ncpus = s.cpus.size();
    if (w.ncpus == 0) return w;
    std::size_t total = std::min(s.sample_t.size(), s.sample_len.size() / w.ncpus);
    if (total == 0) return w;
    w.periodMs = s.sample_period_ns > 0 ? double(s.sample_period_ns) / 1e6 : 1.0;
    // A recorded trace (traceSnapshot) is shown in time since its first event, as the trace
    // bar's timeline and cursor are.
    w.originNs = isRecorded(s) ? s.measure_start : 0;
    const double t0 = double(s.sample_t.front() - w.originNs) / 1e6;
    w.tEndMs = double(s.sample_t[total - 1] - w.originNs) / 1e6 + w.periodMs;
    if (windowMs > 0) {
        w.xLo = std::max(w.tEndMs - windowMs, t0);
        w.xHi = w.xLo + windowMs;
        const auto lo = std::int64_t(std::llround((w.tEndMs - windowMs) * 1e6)) + w.originNs;
        w.first = std::size_t(std::lower_bound(s.sample_t.begin(), s.sample_t.begin() + std::ptrdiff_t(total), lo) - s.sample_t.begin());
    } else {
        w.xLo = t0;
        w.xHi = w.tEndMs;
    }
    w.rows = total - w.first;
    if (w.rows == 0) return w;
    w.tFirstMs = double(s.sample_t[w.first] - w.originNs) / 1e6;
    w.columns = int(std::min<std::size_t>(w.rows, std::size_t(std::max(pixelColumns, 1))));
    return w;
}

}  // namespace

RqPlot::RqPlot(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_linePlot = new QCustomPlot(this);
    m_mapPlot = new QCustomPlot(this);
    layout->addWidget(m_linePlot, 1);
    layout->addWidget(m_mapPlot, 1);
    stylePlot(m_linePlot, font());
    stylePlot(m_mapPlot, font());

    // Line plot: legend outside on the right, in a column as wide as the map's colour scale column.
    m_linePlot->yAxis->setLabel(QStringLiteral("nr_running"));
    m_linePlot->yAxis->setTicker(integerTicker());
    m_linePlot->legend->setVisible(true);
    m_linePlot->legend->setBorderPen(QPen(QColor(0xB0, 0xB0, 0xB0)));
    m_linePlot->legend->setIconSize(20, 10);
    m_legendCell = new QCPLayoutGrid;
    m_linePlot->plotLayout()->addElement(0, 1, m_legendCell);
    m_linePlot->axisRect()->insetLayout()->take(m_linePlot->legend);
    m_legendCell->addElement(0, 0, m_linePlot->legend);
    m_legendCell->addElement(1, 0, new QCPLayoutElement(m_linePlot));
    m_legendCell->setRowStretchFactor(0, 0.001);
    m_legendCell->setRowStretchFactor(1, 1);
    m_legendCell->setSizeConstraintRect(QCPLayoutElement::scrOuterRect);
    m_legendCell->setMinimumSize(kSideWidth, 0);
    m_legendCell->setMaximumSize(kSideWidth, QWIDGETSIZE_MAX);
    m_linePlot->plotLayout()->setColumnStretchFactor(1, 0.001);

    // Map plot: CPU 0 at the top like a trace viewer's rows; colour scale on the right.
    m_mapPlot->xAxis->setLabel(QStringLiteral("simulated time (ms)"));
    m_mapPlot->yAxis->setLabel(QStringLiteral("CPU"));
    m_mapPlot->yAxis->setTicker(integerTicker());
    m_mapPlot->yAxis->setRangeReversed(true);
    m_mapPlot->xAxis->grid()->setVisible(false);
    m_mapPlot->yAxis->grid()->setVisible(false);
    m_colorMap = new QCPColorMap(m_mapPlot->xAxis, m_mapPlot->yAxis);
    m_colorMap->setName(QStringLiteral("nr_running"));
    m_colorMap->setInterpolate(false);
    m_colorMap->setTightBoundary(false);
    // The scale sits in a fixed-width cell (scale, then a spacer) like the line plot's legend cell.
    auto* scaleCell = new QCPLayoutGrid;
    m_mapPlot->plotLayout()->addElement(0, 1, scaleCell);
    m_mapPlot->plotLayout()->setColumnStretchFactor(1, 0.001);
    scaleCell->setSizeConstraintRect(QCPLayoutElement::scrOuterRect);
    scaleCell->setMinimumSize(kSideWidth, 0);
    scaleCell->setMaximumSize(kSideWidth, QWIDGETSIZE_MAX);
    m_colorScale = new QCPColorScale(m_mapPlot);
    scaleCell->addElement(0, 0, m_colorScale);
    scaleCell->addElement(0, 1, new QCPLayoutElement(m_mapPlot));
    scaleCell->setColumnStretchFactor(0, 0.001);
    scaleCell->setColumnStretchFactor(1, 1);
    m_colorScale->setType(QCPAxis::atRight);
    m_colorScale->setBarWidth(12);
    m_colorScale->axis()->setLabel(QStringLiteral("nr_running"));
    m_colorScale->axis()->setTicker(integerTicker());
    styleAxis(m_colorScale->axis(), m_mapPlot->xAxis->tickLabelFont(), m_mapPlot->xAxis->labelFont());
    m_colorMap->setColorScale(m_colorScale);
    m_colorScale->setGradient(viridis());  // after setColorScale: the scale's gradient wins
    auto* group = new QCPMarginGroup(m_mapPlot);
    m_mapPlot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    m_colorScale->setMarginGroup(QCP::msTop | QCP::msBottom, group);

    rebuild();
}

RqPlot::~RqPlot() = default;

void RqPlot::setSnapshot(std::shared_ptr<const sched::Snapshot> snapshot) {
    m_snapshot = std::move(snapshot);
    // A recorded trace (traceSnapshot) runs on the trace's clock, not the simulator's.
    const bool recorded = m_snapshot && isRecorded(*m_snapshot);
    const QString xLabel = recorded ? QStringLiteral("time since the trace's first event (ms)") : QStringLiteral("simulated time (ms)");
    if (m_mapPlot->xAxis->label() != xLabel) m_mapPlot->xAxis->setLabel(xLabel);
    rebuild();
    replotIfVisible();
}

void RqPlot::setSelectedCpus(const QList<int>& cpus) {
    m_selected = cpus;
    rebuild();
    replotIfVisible();
}

void RqPlot::setWindowMs(double windowMs) {
    m_windowMs = windowMs;
    rebuild();
    replotIfVisible();
}

void RqPlot::setScaleMax(double scaleMax) {
    m_scaleMax = scaleMax;
    rebuild();
    replotIfVisible();
}

void RqPlot::setTitle(const QString& title) {
    QCPLayoutGrid* layout = m_linePlot->plotLayout();
    if (title.isEmpty()) {
        if (m_title) {
            layout->remove(m_title);
            layout->simplify();
            m_title = nullptr;
        }
    } else if (!m_title) {
        layout->insertRow(0);
        QFont f = m_linePlot->xAxis->labelFont();
        f.setBold(true);
        m_title = new QCPTextElement(m_linePlot, title, f);
        m_title->setTextColor(Qt::black);
        layout->addElement(0, 0, m_title);
    } else {
        m_title->setText(title);
    }
    replotIfVisible();
}

int RqPlot::pixelColumns() const {
    // From our own width, not the axis rect's: that one is only laid out on the next replot, and
    // the plots fill this widget's width.
    return std::max(32, width() - kLeftMargin - kRightMargin - kSideWidth - m_linePlot->plotLayout()->columnSpacing());
}

int RqPlot::pixelRows() const {
    // The map gets half our height, less its x axis (ticks and label) and a small top margin.
    return std::max(32, height() / 2 - 55);
}

void RqPlot::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (m_snapshot && (pixelColumns() != m_binnedColumns || pixelRows() != m_binnedRows)) rebuild();
}

void RqPlot::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    m_linePlot->replot(QCustomPlot::rpQueuedRefresh);
    m_mapPlot->replot(QCustomPlot::rpQueuedRefresh);
}

void RqPlot::replotIfVisible() {
    if (!isVisible()) return;
    m_linePlot->replot(QCustomPlot::rpQueuedRefresh);
    m_mapPlot->replot(QCustomPlot::rpQueuedRefresh);
}

void RqPlot::rebuild() {
    m_linePlot->clearGraphs();
    m_binnedColumns = pixelColumns();
    m_binnedRows = pixelRows();
    const Window w = m_snapshot ? makeWindow(*m_snapshot, m_windowMs, m_binnedColumns) : Window{};
    if (w.columns == 0) {
        m_linePlot->legend->setVisible(false);
        m_colorMap->data()->clear();
        m_linePlot->xAxis->setRange(0, std::max(m_windowMs, 1.0));
        m_mapPlot->xAxis->setRange(0, std::max(m_windowMs, 1.0));
        m_linePlot->yAxis->setRange(0, kMinScaleMax);
        m_mapPlot->yAxis->setRange(-0.5, 0.5);
        m_colorScale->setDataRange(QCPRange(0, m_scaleMax > 0 ? m_scaleMax : kMinScaleMax));
        return;
    }
    // A pinned run (taskset -c): the map's rows and the mean line are the CPUs its workloads may
    // use, in CPU order, as the seed's rqlen.bt printed them; otherwise every CPU.
    std::vector<int> rowCpu;
    bool pinned = false;
    for (std::size_t c = 0; c < m_snapshot->cpus.size(); ++c) {
        if (m_snapshot->cpus[c].outside_masks) pinned = true;
        else rowCpu.push_back(int(c));
    }
    if (!pinned || rowCpu.empty()) rowCpu.clear();
    std::vector<std::uint16_t> sub;
    const std::uint16_t* len = m_snapshot->sample_len.data();
    std::size_t ncpus = w.ncpus;
    if (!rowCpu.empty()) {
        const std::size_t k = rowCpu.size();
        sub.assign((w.first + w.rows) * k, 0);
        for (std::size_t i = w.first; i < w.first + w.rows; ++i)
            for (std::size_t r = 0; r < k; ++r) sub[i * k + r] = len[i * w.ncpus + std::size_t(rowCpu[r])];
        len = sub.data();
        ncpus = k;
    }
    auto rowOf = [&](int cpu) -> int {
        if (rowCpu.empty()) return cpu >= 0 && std::size_t(cpu) < ncpus ? cpu : -1;
        const auto it = std::find(rowCpu.begin(), rowCpu.end(), cpu);
        return it == rowCpu.end() ? -1 : int(it - rowCpu.begin());
    };

    // Map: per pixel column the max over its rows, so a one-sample spike stays visible. With more CPUs
    // than pixel rows, one cell row holds the max of `group` adjacent CPUs: scaling the image down
    // instead would drop whole CPUs from view.
    auto* data = m_colorMap->data();
    const double cellMs = double(w.rows) * w.periodMs / w.columns;
    const std::size_t group = (ncpus + std::size_t(m_binnedRows) - 1) / std::size_t(m_binnedRows);
    const std::size_t cells = (ncpus + group - 1) / group;
    data->setSize(w.columns, int(cells));
    if (w.columns > 1) data->setKeyRange(QCPRange(w.tFirstMs + cellMs / 2, w.tFirstMs + double(w.rows) * w.periodMs - cellMs / 2));
    else data->setKeyRange(QCPRange(w.tFirstMs, w.tFirstMs + double(w.rows) * w.periodMs));
    // Cell row r is centred on its CPUs [r * group, (r + 1) * group); one cell is drawn over the whole range.
    const double half = double(group - 1) / 2;
    data->setValueRange(cells > 1 ? QCPRange(half, double((cells - 1) * group) + half) : QCPRange(-0.5, double(ncpus) - 0.5));
    std::vector<std::uint16_t> colMax(cells);
    std::uint16_t overallMax = 0;
    // Lines: the selected CPUs this machine has, else the machine's mean.
    QList<int> cpus;  // rows of `len`
    QList<int> cpuIds;
    for (int c : m_selected)
        if (const int r = rowOf(c); r >= 0 && !cpus.contains(r)) cpus.append(r), cpuIds.append(c);
    const bool mean = cpus.isEmpty();
    // The same pass keeps each sample row's total for the mean line (integer sums: a double
    // accumulator made this loop a chain of dependent additions through memory).
    std::vector<std::uint64_t> rowTotal(mean ? w.binBegin(w.columns) - w.binBegin(0) : 0);
    const std::size_t row0 = w.binBegin(0);
    for (int j = 0; j < w.columns; ++j) {
        std::fill(colMax.begin(), colMax.end(), 0);
        for (std::size_t i = w.binBegin(j), end = w.binBegin(j + 1); i < end; ++i) {
            const std::uint16_t* row = &len[i * ncpus];
            if (group == 1) {
                for (std::size_t c = 0; c < ncpus; ++c) colMax[c] = std::max(colMax[c], row[c]);
            } else {
                // Cell k holds CPUs [k * group, (k + 1) * group): no division per CPU.
                for (std::size_t k = 0, c0 = 0; k < cells; ++k, c0 += group) {
                    std::uint16_t m = colMax[k];
                    for (std::size_t c = c0, ce = std::min(c0 + group, ncpus); c < ce; ++c) m = std::max(m, row[c]);
                    colMax[k] = m;
                }
            }
            if (mean) {
                std::uint64_t sum = 0;
                for (std::size_t c = 0; c < ncpus; ++c) sum += row[c];
                rowTotal[i - row0] = sum;
            }
        }
        for (std::size_t c = 0; c < cells; ++c) {
            data->setCell(j, int(c), colMax[c]);
            overallMax = std::max(overallMax, colMax[c]);
        }
    }
    const double scaleTop = m_scaleMax > 0 ? m_scaleMax : std::clamp<double>(overallMax, kMinScaleMax, kAutoScaleCap);
    m_colorScale->setDataRange(QCPRange(0, scaleTop));  // values above get the top colour
    m_mapPlot->xAxis->setRange(w.xLo, w.xHi);
    m_mapPlot->yAxis->setRange(-0.5, double(ncpus) - 0.5);
    if (!rowCpu.empty()) {
        // Row r is CPU rowCpu[r]: label every row when they fit, else every few.
        auto t = QSharedPointer<QCPAxisTickerText>::create();
        const int rowsFit = std::max(1, m_mapPlot->axisRect()->height() / std::max(1, QFontMetrics(m_mapPlot->yAxis->tickLabelFont()).height()));
        const std::size_t every = std::max<std::size_t>(1, (rowCpu.size() + std::size_t(rowsFit) - 1) / std::size_t(rowsFit));
        for (std::size_t r = 0; r < rowCpu.size(); r += every) t->addTick(double(r), QString::number(rowCpu[r]));
        m_mapPlot->yAxis->setTicker(t);
        m_mapPlot->yAxis->setLabel(QStringLiteral("CPU (taskset)"));
    } else if (m_rowsPinned) {
        m_mapPlot->yAxis->setTicker(integerTicker());
        m_mapPlot->yAxis->setLabel(QStringLiteral("CPU"));
    }
    m_rowsPinned = !rowCpu.empty();

    // Lines: per pixel column the mean over its rows (for the machine line, over rows and CPUs).
    const int lines = mean ? 1 : int(cpus.size());
    double lineMax = 0;
    for (int l = 0; l < lines; ++l) {
        QVector<QCPGraphData> points(w.columns + 1);
        for (int j = 0; j < w.columns; ++j) {
            const std::size_t b = w.binBegin(j), e = w.binBegin(j + 1);
            std::uint64_t sum = 0;
            if (mean) {
                for (std::size_t i = b; i < e; ++i) sum += rowTotal[i - row0];
            } else {
                for (std::size_t i = b; i < e; ++i) sum += len[i * ncpus + std::size_t(cpus[l])];
            }
            const double v = double(sum) / double((e - b) * (mean ? ncpus : 1));
            points[j] = QCPGraphData(double(m_snapshot->sample_t[b] - w.originNs) / 1e6, v);
            lineMax = std::max(lineMax, v);
        }
        // lsStepLeft holds a value until the next key: close the last step at the end of its row.
        points[w.columns] = QCPGraphData(w.tEndMs, points[w.columns - 1].value);
        QCPGraph* g = m_linePlot->addGraph();
        g->data()->set(points, true);
        g->setLineStyle(QCPGraph::lsStepLeft);
        // Width 1: wider pens go through QPainter's stroker, ~30x slower with hundreds of steps per line.
        QPen pen(QColor(mean ? kMeanColour : kLineColours[std::size_t(l) % kLineColours.size()]), 1);
        static constexpr std::array<Qt::PenStyle, 3> kStyles = {Qt::SolidLine, Qt::DashLine, Qt::DotLine};
        pen.setStyle(kStyles[std::size_t(l) / kLineColours.size() % kStyles.size()]);
        g->setPen(pen);
        g->setAntialiased(false);  // all segments are horizontal or vertical
        g->setName(mean ? (rowCpu.empty() ? QStringLiteral("all CPUs (mean)") : QStringLiteral("taskset mean"))
                        : QStringLiteral("CPU %1").arg(cpuIds[l]));
        if (l >= kMaxLegendItems) g->removeFromLegend();
    }
    m_linePlot->legend->setVisible(true);
    m_linePlot->xAxis->setRange(w.xLo, w.xHi);
    const double top = std::max(lineMax, 1.0);
    m_linePlot->yAxis->setRange(-0.04 * top - 0.1, top * 1.08 + 0.2);
}

}  // namespace schedlab
