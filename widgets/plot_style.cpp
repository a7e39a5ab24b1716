// SPDX-License-Identifier: GPL-2.0-or-later
// plot_style.cpp: see plot_style.h.
#include "plot_style.h"

#include <qcustomplot.h>

namespace schedlab {

void styleAxis(QCPAxis* axis, const QFont& tickFont, const QFont& labelFont) {
    axis->setTickLabelFont(tickFont);
    axis->setLabelFont(labelFont);
    axis->setTickLabelColor(Qt::black);
    axis->setLabelColor(Qt::black);
    axis->grid()->setPen(QPen(QColor(0xD0, 0xD0, 0xD0), 0, Qt::DotLine));
}

}  // namespace schedlab
