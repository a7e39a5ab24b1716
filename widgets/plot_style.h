// SPDX-License-Identifier: GPL-2.0-or-later
// plot_style.h: the look the QCustomPlot views share (axis fonts, colours, grid).
#pragma once

class QCPAxis;
class QFont;

namespace schedlab {

/// Dark tick and label text in the given fonts, and a light dotted grid.
void styleAxis(QCPAxis* axis, const QFont& tickFont, const QFont& labelFont);

}  // namespace schedlab
