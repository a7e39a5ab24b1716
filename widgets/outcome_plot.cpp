// SPDX-License-Identifier: GPL-2.0-or-later
// outcome_plot.cpp: the workload's rate, busy CPUs and migrations/s over simulated time, A and B.
// Core headers before any Qt header: engine.h has a member named emit, which Qt defines as a macro.
#include "sim/snapshot.h"

#include "latency_plot.h"
#include "outcome_plot.h"
#include "plot_style.h"

#include <QLabel>
#include <QShowEvent>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace schedlab {

namespace {

QString sideHtml(const sched::Snapshot& s, int side) {
    const QString name = QString::fromStdString(s.label.empty() ? (side == 0 ? "A" : "B") : s.label);
    const QString knobs = QString::fromStdString(s.knobs);
    QString verdict;
    if (s.steady.reached && s.steady.from_ns >= 0) verdict = QStringLiteral(" (steady from %1 s)").arg(double(s.steady.from_ns) / 1e9, 0, 'f', 2);
    return sideLegend(side, name, knobs, verdict);
}

/// A vertical line at time `x` (s) across `rect`, clipped to it.
QCPItemStraightLine* vline(QCustomPlot* plot, QCPAxisRect* rect, double x, const QPen& pen) {
    auto* l = new QCPItemStraightLine(plot);
    l->setClipAxisRect(rect);
    for (QCPItemPosition* p : {l->point1, l->point2}) {
        p->setAxisRect(rect);
        p->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    }
    l->point1->setCoords(x, 0);
    l->point2->setCoords(x, 1);
    l->setPen(pen);
    return l;
}

}  // namespace

OutcomePlot::OutcomePlot(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    m_legend = makeLegendLabel(this);
    layout->addWidget(m_legend, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("outcomePlot"));
    m_plot->setBackground(Qt::white);
    m_plot->setMinimumHeight(240);
    layout->addWidget(m_plot, 1);

    QFont tickFont = font();
    tickFont.setPointSizeF(std::max(tickFont.pointSizeF(), 9.0));
    QFont labelFont = tickFont;
    labelFont.setPointSizeF(tickFont.pointSizeF() + 1);
    m_rects[0] = m_plot->axisRect();
    for (int i = 1; i < 3; ++i) {
        m_rects[i] = new QCPAxisRect(m_plot);
        m_plot->plotLayout()->addElement(i, 0, m_rects[i]);
    }
    // One left margin for the three, so that their time axes line up.
    auto* margins = new QCPMarginGroup(m_plot);
    const char* labels[3] = {"rate", "busy CPUs", "migrations/s"};
    for (int i = 0; i < 3; ++i) {
        QCPAxisRect* r = m_rects[i];
        r->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
        for (QCPAxis* a : {r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft)}) styleAxis(a, tickFont, labelFont);
        r->axis(QCPAxis::atLeft)->setLabel(QString::fromLatin1(labels[i]));
        r->axis(QCPAxis::atLeft)->setTicker(siTicker());
        r->axis(QCPAxis::atLeft)->ticker()->setTickCount(3);
        r->axis(QCPAxis::atBottom)->setTickLabels(i == 2);
        if (i == 2) r->axis(QCPAxis::atBottom)->setLabel(tr("simulated time (s)"));
        for (int side = 0; side < 2; ++side) {
            QCPGraph* g = m_plot->addGraph(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
            g->setPen(QPen(LatencyPlot::sideColor(side), 1.4));
        }
        // Every rect shows the same time span.
        if (i > 0)
            connect(m_rects[0]->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged), r->axis(QCPAxis::atBottom),
                    qOverload<const QCPRange&>(&QCPAxis::setRange));
    }
    m_plot->legend->setVisible(false);  // the sides are named above
}

OutcomePlot::~OutcomePlot() = default;

void OutcomePlot::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    redraw();
}

void OutcomePlot::setSnapshots(std::shared_ptr<const sched::Snapshot> a, std::shared_ptr<const sched::Snapshot> b) {
    m_a = std::move(a);
    m_b = std::move(b);
    redraw();
}

QStringList OutcomePlot::markLabels() const { return m_marks; }

void OutcomePlot::redraw() {
    const std::array<const sched::Snapshot*, 2> sides{m_a.get(), m_b.get()};
    m_plot->clearItems();
    m_marks.clear();
    QStringList legend;
    QString unit;
    double t0 = std::numeric_limits<double>::max(), t1 = 0;
    std::array<double, 3> top{};
    for (int s = 0; s < 2; ++s) {
        const sched::Snapshot* snap = sides[std::size_t(s)];
        for (int i = 0; i < 3; ++i) m_plot->graph(2 * i + s)->data()->clear();
        if (!snap) continue;
        legend << sideHtml(*snap, s);
        if (unit.isEmpty()) unit = QString::fromStdString(snap->outcome_unit);
        const auto& pts = snap->outcome;
        QVector<double> x(qsizetype(pts.size())), rate(x.size()), busy(x.size()), migr(x.size());
        // The rate, a centred moving average over smoothPoints() periods (a 10 ms period of a
        // job with few wakeups is mostly noise); busy CPUs and migrations as they are.
        const int h = smoothPoints() / 2;
        double sum = 0;
        int n = 0;
        std::size_t lo = 0, hi = 0;  // the window [lo, hi)
        for (std::size_t k = 0; k < pts.size(); ++k) {
            const std::size_t want_lo = k >= std::size_t(h) ? k - std::size_t(h) : 0, want_hi = std::min(pts.size(), k + std::size_t(h) + 1);
            while (hi < want_hi) sum += pts[hi++].rate, ++n;
            while (lo < want_lo) sum -= pts[lo++].rate, --n;
            x[qsizetype(k)] = double(pts[k].t) / 1e9;
            rate[qsizetype(k)] = n ? sum / n : 0;
            busy[qsizetype(k)] = pts[k].busy_cpus;
            migr[qsizetype(k)] = pts[k].migrations_per_s;
            top[0] = std::max(top[0], rate[qsizetype(k)]);
            top[1] = std::max(top[1], busy[qsizetype(k)]);
            top[2] = std::max(top[2], migr[qsizetype(k)]);
        }
        if (!pts.empty()) {
            t0 = std::min(t0, x.front() - double(snap->outcome_period_ns) / 1e9);
            t1 = std::max(t1, x.back());
        }
        m_plot->graph(0 + s)->setData(x, rate, true);
        m_plot->graph(2 + s)->setData(x, busy, true);
        m_plot->graph(4 + s)->setData(x, migr, true);
        // Where the detector says this side settled.
        if (snap->steady.reached && snap->steady.from_ns >= 0) {
            QPen pen(LatencyPlot::sideColor(s), 1.2, Qt::DashLine);
            for (QCPAxisRect* r : m_rects) vline(m_plot, r, double(snap->steady.from_ns) / 1e9, pen);
        }
        // Live knob changes, labelled at the top of the rate plot (the changes of one instant,
        // such as a branch and its knobs, in one label).
        for (std::size_t m = 0; m < snap->knob_marks.size(); ++m) {
            const std::int64_t t = snap->knob_marks[m].t;
            QString change = QString::fromStdString(snap->knob_marks[m].change);
            while (m + 1 < snap->knob_marks.size() && snap->knob_marks[m + 1].t == t)
                change += QStringLiteral("; ") + QString::fromStdString(snap->knob_marks[++m].change);
            const double x0 = double(t) / 1e9;
            for (QCPAxisRect* r : m_rects) vline(m_plot, r, x0, QPen(QColor(0x55, 0x55, 0x55), 1.2));
            const QString text = QStringLiteral("%1: %2").arg(QString::fromStdString(snap->label.empty() ? (s ? "B" : "A") : snap->label), change);
            auto* label = new QCPItemText(m_plot);
            label->setClipToAxisRect(false);
            label->position->setAxisRect(m_rects[0]);
            label->position->setAxes(m_rects[0]->axis(QCPAxis::atBottom), m_rects[0]->axis(QCPAxis::atLeft));
            label->position->setTypeX(QCPItemPosition::ptPlotCoords);
            label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            label->position->setCoords(x0, 0.04 + 0.14 * double(m_marks.size() % 4));
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
            label->setPadding(QMargins(3, 0, 3, 0));
            label->setBrush(QBrush(QColor(255, 255, 255, 210)));
            label->setColor(LatencyPlot::sideColor(s).darker(130));
            label->setText(text);
            m_marks << QStringLiteral("t = %1 s: %2").arg(x0, 0, 'f', 3).arg(text);
        }
    }
    m_legend->setText(legend.join(QStringLiteral("&nbsp;&nbsp;&nbsp;&nbsp;")));
    m_rects[0]->axis(QCPAxis::atLeft)->setLabel(unit.isEmpty() ? tr("rate") : unit);
    if (t1 <= 0 || t0 >= t1) t0 = 0, t1 = std::max(t1, 0.01);
    m_rects[0]->axis(QCPAxis::atBottom)->setRange(t0, t1);
    // Headroom above the lines: the knob-change labels sit at the top of the rate plot.
    const double head = m_marks.isEmpty() ? 1.08 : 1.35 + 0.2 * double(std::min<qsizetype>(m_marks.size(), 4));
    for (int i = 0; i < 3; ++i)
        m_rects[i]->axis(QCPAxis::atLeft)->setRange(0, top[std::size_t(i)] > 0 ? top[std::size_t(i)] * (i == 0 ? head : 1.08) : 1);
    if (isVisible()) m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace schedlab
