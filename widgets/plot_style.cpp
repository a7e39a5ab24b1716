// SPDX-License-Identifier: GPL-2.0-or-later
// plot_style.cpp: see plot_style.h.
#include "plot_style.h"
#include "latency_plot.h"

#include <QLabel>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace schedlab {

namespace {

class SiTicker : public QCPAxisTicker {
protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar, int) override {
        const double a = std::abs(tick);
        if (a >= 1e9) return locale.toString(tick / 1e9, 'g', 3) + QLatin1Char('G');
        if (a >= 1e6) return locale.toString(tick / 1e6, 'g', 3) + QLatin1Char('M');
        if (a >= 1e3) return locale.toString(tick / 1e3, 'g', 3) + QLatin1Char('k');
        return locale.toString(tick, 'g', 3);
    }
};

}  // namespace

QSharedPointer<QCPAxisTicker> siTicker() { return QSharedPointer<SiTicker>::create(); }

QLabel* makeLegendLabel(QWidget* parent) {
    auto* l = new QLabel(parent);
    QFont f = parent->font();
    f.setPointSizeF(std::max(f.pointSizeF(), 9.0));
    l->setFont(f);
    l->setTextFormat(Qt::RichText);
    l->setAlignment(Qt::AlignCenter);
    l->setWordWrap(true);
    return l;
}

QString sideLegend(int side, const QString& name, const QString& knobs, const QString& extra) {
    return QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2%3")
        .arg(LatencyPlot::sideColor(side).name(), (knobs.isEmpty() ? name : name + QStringLiteral(": ") + knobs).toHtmlEscaped(), extra);
}

void styleAxis(QCPAxis* axis, const QFont& tickFont, const QFont& labelFont) {
    axis->setTickLabelFont(tickFont);
    axis->setLabelFont(labelFont);
    axis->setTickLabelColor(Qt::black);
    axis->setLabelColor(Qt::black);
    axis->grid()->setPen(QPen(QColor(0xD0, 0xD0, 0xD0), 0, Qt::DotLine));
}

}  // namespace schedlab
