// SPDX-License-Identifier: GPL-2.0-or-later
// view_export.cpp: see view_export.h.
#include "view_export.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QWidget>

namespace schedlab {

QString exportWithCaption(QWidget* w, const QString& cap, const QFont& capFont, const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    const QSize sz = w->size();
    const QFontMetrics fm(capFont);
    // Wrap the caption to the view's width.
    const QRect capRect = fm.boundingRect(QRect(0, 0, sz.width() - 16, 10000), Qt::TextWordWrap, cap);
    const int capH = capRect.height() + 12;
    auto paint = [&](QPainter& p) {
        p.fillRect(QRect(0, 0, sz.width(), sz.height() + capH), Qt::white);
        w->render(&p, QPoint(0, 0), QRegion(), QWidget::DrawChildren);
        p.setFont(capFont);
        p.setPen(Qt::black);
        p.drawText(QRect(8, sz.height() + 6, sz.width() - 16, capH - 6), Qt::TextWordWrap, cap);
    };
    const QString tmp = path + QStringLiteral(".part");
    QFile::remove(tmp);
    bool ok = false;
    if (suffix == QLatin1String("png")) {
        QImage img(sz.width(), sz.height() + capH, QImage::Format_ARGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            paint(p);
        }
        ok = img.save(tmp, "PNG");
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator gen;
        gen.setFileName(tmp);
        gen.setSize(QSize(sz.width(), sz.height() + capH));
        gen.setViewBox(QRect(0, 0, sz.width(), sz.height() + capH));
        gen.setTitle(QStringLiteral("schedlab"));
        gen.setDescription(cap);
        {
            QPainter p(&gen);
            paint(p);
        }
        ok = QFileInfo(tmp).size() > 0;
    } else if (suffix == QLatin1String("pdf")) {
        QPdfWriter pdf(tmp);
        pdf.setTitle(cap);
        pdf.setResolution(96);
        pdf.setPageSize(QPageSize(QSizeF(sz.width(), sz.height() + capH), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        {
            QPainter p(&pdf);
            const double k = double(pdf.width()) / double(sz.width());
            p.scale(k, k);
            paint(p);
        }
        ok = QFileInfo(tmp).size() > 0;
    } else {
        return QCoreApplication::translate("MainWindow", "%1: unknown export format '%2' (use .png, .svg or .pdf)").arg(path, suffix);
    }
    if (!ok) {
        QFile::remove(tmp);
        return QCoreApplication::translate("MainWindow", "%1: cannot write the file").arg(path);
    }
    QFile::remove(path);
    if (!QFile::rename(tmp, path)) {
        QFile::remove(tmp);
        return QCoreApplication::translate("MainWindow", "%1: cannot rename the temporary file into place").arg(path);
    }
    return {};
}

}  // namespace schedlab
