// SPDX-License-Identifier: GPL-2.0-or-later
// counters_plot.cpp: grouped A/B bar charts of wakeup reasons, migration causes and who woke.
// Core headers before any Qt header: engine.h has a member named emit, which Qt defines as a macro.
#include "sim/metrics.h"
#include "sim/snapshot.h"

#include "counters_plot.h"
#include "latency_plot.h"
#include "plot_style.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QShowEvent>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <map>
#include <string>

namespace schedlab {

namespace {

/// One category: its label and the A and B counts.
struct Category {
    QString name;
    std::array<double, 2> count{};
};

void setUp(QCustomPlot* plot, const QString& title, const QString& valueLabel, const QFont& base) {
    QFont tickFont = base;
    tickFont.setPointSizeF(std::max(base.pointSizeF(), 9.0));
    QFont labelFont = tickFont;
    labelFont.setPointSizeF(tickFont.pointSizeF() + 1);
    plot->setBackground(Qt::white);
    for (QCPAxis* a : {plot->xAxis, plot->yAxis}) styleAxis(a, tickFont, labelFont);
    // Horizontal bars: category names (long reason codes) read left to right on the key axis
    // (yAxis, first category at the top), counts on the bottom axis.
    plot->yAxis->grid()->setVisible(false);
    plot->yAxis->setTickLength(0, 3);
    plot->yAxis->setSubTicks(false);
    plot->yAxis->setRangeReversed(true);
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    plot->xAxis->setLabel(valueLabel);
    auto ticker = siTicker();
    ticker->setTickCount(3);  // the narrow plots' labels ("1.5k 2k 2.5k") would run into each other with more
    plot->xAxis->setTicker(ticker);
    plot->legend->setVisible(false);  // one legend for both plots, above them
    // Room on the right for the last count label (no right axis reserves it).
    plot->axisRect()->setAutoMargins(QCP::msLeft | QCP::msTop | QCP::msBottom);
    plot->axisRect()->setMargins(QMargins(0, 0, 18, 0));
    auto* group = new QCPBarsGroup(plot);  // reused by every update
    group->setSpacingType(QCPBarsGroup::stAbsolute);
    group->setSpacing(1);
    plot->plotLayout()->insertRow(0);
    QFont titleFont = labelFont;
    titleFont.setBold(true);
    auto* t = new QCPTextElement(plot, title, titleFont);
    t->setTextColor(Qt::black);
    plot->plotLayout()->addElement(0, 0, t);
}

/// Draws `cats` as grouped horizontal bars of the present sides.
void showCategories(QCustomPlot* plot, const std::vector<Category>& cats, const std::array<const sched::Snapshot*, 2>& sides) {
    // The category names (the ticker) and one QCPBars per side present are kept from frame to
    // frame; a frame replaces only the values.
    auto ticker = qSharedPointerCast<QCPAxisTickerText>(plot->yAxis->ticker());
    bool sameNames = ticker->ticks().size() == int(cats.size());
    for (std::size_t i = 0; sameNames && i < cats.size(); ++i) sameNames = ticker->ticks().value(double(i + 1)) == cats[i].name;
    if (!sameNames) {
        ticker->clear();
        for (std::size_t i = 0; i < cats.size(); ++i) ticker->addTick(double(i + 1), cats[i].name);
    }
    const int nsides = (sides[0] ? 1 : 0) + (sides[1] ? 1 : 0);
    if (plot->plottableCount() != nsides) {
        plot->clearPlottables();
        auto* group = plot->findChild<QCPBarsGroup*>();
        for (int i = 0; i < nsides; ++i) {
            auto* bars = new QCPBars(plot->yAxis, plot->xAxis);
            bars->setWidth(nsides == 2 ? 0.4 : 0.65);
            bars->setBarsGroup(group);
        }
    }
    double top = 1;
    int pi = 0;
    for (int s = 0; s < 2; ++s) {
        const sched::Snapshot* snap = sides[std::size_t(s)];
        if (!snap) continue;
        auto* bars = static_cast<QCPBars*>(plot->plottable(pi++));
        const QColor c = LatencyPlot::sideColor(s);
        bars->setPen(QPen(c.darker(130), 1));
        bars->setBrush(c);
        QVector<double> keys, values;
        for (std::size_t i = 0; i < cats.size(); ++i) {
            keys << double(i + 1);
            values << cats[i].count[std::size_t(s)];
            top = std::max(top, cats[i].count[std::size_t(s)]);
        }
        bars->setData(keys, values, true);
        const QString name = QString::fromStdString(snap->label.empty() ? (s == 0 ? "A" : "B") : snap->label);
        if (bars->name() != name) bars->setName(name);
    }
    plot->yAxis->setRange(0.45, double(std::max<std::size_t>(cats.size(), 1)) + 0.55);
    plot->xAxis->setRange(0, top * 1.05);
}

QString legendHtml(const std::array<const sched::Snapshot*, 2>& sides) {
    QStringList parts;
    for (int s = 0; s < 2; ++s) {
        const sched::Snapshot* snap = sides[std::size_t(s)];
        if (!snap) continue;
        const QString name = QString::fromStdString(snap->label.empty() ? (s == 0 ? "A" : "B") : snap->label);
        const QString knobs = QString::fromStdString(snap->knobs);
        parts << sideLegend(s, name, knobs);
    }
    return parts.join(QStringLiteral("&nbsp;&nbsp;&nbsp;&nbsp;"));
}

}  // namespace

CountersPlot::CountersPlot(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    m_legend = makeLegendLabel(this);
    layout->addWidget(m_legend, 0);
    auto* plots = new QHBoxLayout;
    plots->setSpacing(4);
    m_reasons = new QCustomPlot(this);
    m_causes = new QCustomPlot(this);
    m_wakers = new QCustomPlot(this);
    plots->addWidget(m_reasons, 3);
    plots->addWidget(m_causes, 2);
    plots->addWidget(m_wakers, 2);
    layout->addLayout(plots, 1);
    setUp(m_reasons, QStringLiteral("wakeups by final reason"), QStringLiteral("wakeups"), font());
    setUp(m_causes, QStringLiteral("migrations by cause"), QStringLiteral("migrations"), font());
    setUp(m_wakers, QStringLiteral("who woke the sleepers"), QStringLiteral("wakeups"), font());
    setSnapshots(nullptr, nullptr);
}

CountersPlot::~CountersPlot() = default;

void CountersPlot::setReasonsTitle(const QString& title) {
    if (auto* t = qobject_cast<QCPTextElement*>(m_reasons->plotLayout()->element(0, 0)); t && t->text() != title) {
        t->setText(title);
        m_reasons->replot(QCustomPlot::rpQueuedReplot);
    }
}

QString CountersPlot::reasonsTitle() const {
    auto* t = qobject_cast<QCPTextElement*>(m_reasons->plotLayout()->element(0, 0));
    return t ? t->text() : QString();
}

void CountersPlot::setSnapshots(std::shared_ptr<const sched::Snapshot> a, std::shared_ptr<const sched::Snapshot> b) {
    const std::array<const sched::Snapshot*, 2> sides = {a.get(), b.get()};

    // Reasons: union of both sides' codes, largest A + B first (ties by name, so the order is stable).
    std::map<std::string, std::array<double, 2>> byName;
    for (int s = 0; s < 2; ++s)
        if (sides[std::size_t(s)])
            for (const auto& [name, n] : sides[std::size_t(s)]->reasons) byName[name][std::size_t(s)] += double(n);
    std::vector<Category> reasons;
    for (const auto& [name, n] : byName) reasons.push_back({QString::fromStdString(name), n});
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const Category& x, const Category& y) { return x.count[0] + x.count[1] > y.count[0] + y.count[1]; });
    if (reasons.size() > std::size_t(kMaxReasons)) {
        Category other{QStringLiteral("other"), {}};
        for (std::size_t i = kMaxReasons; i < reasons.size(); ++i)
            for (std::size_t s = 0; s < 2; ++s) other.count[s] += reasons[i].count[s];
        reasons.resize(kMaxReasons);
        reasons.push_back(other);
    }

    std::vector<Category> causes;
    for (int c = 0; c < sched::kMigrationCauses; ++c) {
        Category cat{QString::fromLatin1(sched::toString(sched::MigrationCause(c))), {}};
        for (std::size_t s = 0; s < 2; ++s)
            if (sides[s]) cat.count[s] = double(sides[s]->migrations_by_cause[std::size_t(c)]);
        causes.push_back(cat);
    }

    // Who woke: a task, or a sleep timer's interrupt on the wakee's CPU or another's; how many
    // wakeups went through a wakelist and its IPI, and how many were stacked by a race.
    std::vector<Category> wakers = {{QStringLiteral("a task"), {}},
                                    {QStringLiteral("a local timer"), {}},
                                    {QStringLiteral("a remote timer"), {}},
                                    {QStringLiteral("wakelist (IPI)"), {}},
                                    {QStringLiteral("stacked by a race"), {}}};
    for (std::size_t s = 0; s < 2; ++s) {
        if (!sides[s]) continue;
        wakers[0].count[s] = double(sides[s]->wake_by_task);
        wakers[1].count[s] = double(sides[s]->wake_by_timer_local);
        wakers[2].count[s] = double(sides[s]->wake_by_timer_remote);
        wakers[3].count[s] = double(sides[s]->ttwu_wakelist);
        // The wakeup's window: the chosen CPU looked idle while another wakee was on its way there.
        wakers[4].count[s] = double(sides[s]->ttwu_races);
    }

    showCategories(m_reasons, reasons, sides);
    showCategories(m_causes, causes, sides);
    showCategories(m_wakers, wakers, sides);
    m_legend->setText(legendHtml(sides));
    if (isVisible()) {
        m_reasons->replot(QCustomPlot::rpQueuedRefresh);
        m_causes->replot(QCustomPlot::rpQueuedRefresh);
        m_wakers->replot(QCustomPlot::rpQueuedRefresh);
    }
}

void CountersPlot::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    m_reasons->replot(QCustomPlot::rpQueuedRefresh);
    m_causes->replot(QCustomPlot::rpQueuedRefresh);
    m_wakers->replot(QCustomPlot::rpQueuedRefresh);
}

}  // namespace schedlab
