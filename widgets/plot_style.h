// SPDX-License-Identifier: GPL-2.0-or-later
// plot_style.h: the look the QCustomPlot views share (axis fonts, colours, grid).
#pragma once

#include <QSharedPointer>
#include <QString>

class QCPAxis;
class QCPAxisTicker;
class QFont;
class QLabel;
class QWidget;

namespace schedlab {

/// Dark tick and label text in the given fonts, and a light dotted grid.
void styleAxis(QCPAxis* axis, const QFont& tickFont, const QFont& labelFont);
/// A ticker whose labels carry SI suffixes ("250k", "1.5M"): exponents like 2.5·10^5 are hard
/// to compare at a glance.
QSharedPointer<QCPAxisTicker> siTicker();
/// The centred rich-text label above an A/B plot that names the sides (sideLegend()).
QLabel* makeLegendLabel(QWidget* parent);
/// One side's entry in such a legend: a square in LatencyPlot::sideColor(side), then
/// "NAME: KNOBS" (`name` alone without knobs) and `extra` (rich text, unescaped).
QString sideLegend(int side, const QString& name, const QString& knobs, const QString& extra = {});

}  // namespace schedlab
