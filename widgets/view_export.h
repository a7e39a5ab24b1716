// SPDX-License-Identifier: GPL-2.0-or-later
// view_export.h: a widget painted to PNG, SVG or PDF (by the path's suffix) with a caption
// wrapped below it, written through a temporary file renamed into place.
#pragma once

#include <QFont>
#include <QString>

class QWidget;

namespace schedlab {

/// Paints `w` at its current size and `caption` in `captionFont` below it. Returns "" or the
/// one-line error (unknown format, cannot write, cannot rename); never leaves the temporary file.
QString exportWithCaption(QWidget* w, const QString& caption, const QFont& captionFont, const QString& path);

}  // namespace schedlab
