// SPDX-License-Identifier: GPL-2.0-or-later
// heatmap_legend.cpp: the heatmap's legend (see heatmap_renderer.h): the colour bar or the state
// swatches, its caption, the arrow key, where each goes as the width allows, and the legend's
// queries (the bar's rectangle, a value's position on it).
#include "heatmap_renderer.h"

#include "sim/snapshot.h"
#include "text_util.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace schedlab {

namespace {
// The arrow kinds' key: a run with proxy execution has a third kind, one with moved timers a fourth.
QString arrowNote(const HeatmapScene& sc) {
    QString s = sc.proxyRun() ? QStringLiteral("solid wakeup, hollow balance, dotted proxy") : QStringLiteral("solid wakeup, hollow balance");
    if (sc.hasTimerArrows()) s += QStringLiteral(", dashed timer");
    return s;
}
// Where the full note does not fit: a dashed sample and "timer" (the style no other view explains).
constexpr double kTimerSamplePx = 16;
double compactTimerKeyWidth(const QFontMetricsF& fm) { return kTimerSamplePx + 4 + fm.horizontalAdvance(QStringLiteral("timer")) + 8; }
}  // namespace

HeatmapRenderer::LegendGeom HeatmapRenderer::legendGeometry(const Geometry& g, const HeatmapScene& sc) const {
    LegendGeom lg;
    if (g.legend.height() <= 0) return lg;
    const QFontMetricsF fm(g.smallFont);
    const QString caption = sc.metric == Metric::RqLength      ? QStringLiteral("nr_running")
                            : sc.metric == Metric::Utilisation ? QStringLiteral("util_avg")
                                                               : QStringLiteral("state");
    const double capW = fm.horizontalAdvance(caption) + 8;
    lg.caption = QRectF(g.legend.left(), g.legend.top() + 2, capW, kLegendBarPx + 2);
    const double left = std::round(lg.caption.right());
    double barW;
    if (sc.metric == Metric::State) {
        barW = 0;
        for (auto k : {sched::CpuKind::idle, sched::CpuKind::busy, sched::CpuKind::idle_by_delay})
            barW += 14 + fm.horizontalAdvance(QString::fromLatin1(kindName(k))) + 12;
    } else {
        barW = std::min<double>(kLegendBarMaxPx, g.legend.right() - left - 16);
    }
    // The arrow key goes right of the bar when there is room for it.
    double keyW = 0;
    if (sc.showArrows) {
        keyW = fm.horizontalAdvance(QStringLiteral("arrows:")) + 6;
        for (int d = int(sched::DistClass::smt); d < sched::kDistClasses; ++d)
            keyW += 20 + fm.horizontalAdvance(QString::fromLatin1(distShortName(sched::DistClass(d)))) + 8;
    }
    const double room = g.legend.right() - left;
    // The "solid wakeup, hollow balance" note when it fits next to a bar of 150 px.
    const double noteW = fm.horizontalAdvance(arrowNote(sc));
    // Moved timers' dashed arrows need their key more than the bar needs its width: for the
    // dashed sample the bar may shrink to 110 px.
    double barFloor = 150.0;
    if (keyW > 0 && room - keyW - noteW - 24 >= (sc.metric == Metric::State ? barW : barFloor)) {
        keyW += noteW;
        lg.note = LegendGeom::Note::Full;
    } else if (keyW > 0 && sc.hasTimerArrows() && room - keyW - compactTimerKeyWidth(fm) - 24 >= (sc.metric == Metric::State ? barW : 110.0)) {
        keyW += compactTimerKeyWidth(fm);
        lg.note = LegendGeom::Note::TimerSample;
        barFloor = 110.0;
    }
    if (sc.metric != Metric::State && keyW > 0 && room - keyW - 24 < std::min(barW, barFloor)) {
        // Shrink the bar first (down to barFloor), then drop the key.
        barW = std::max(std::min(barW, barFloor), room - keyW - 24);
        if (room - keyW - 24 < barFloor) keyW = 0;
        barW = std::min(barW, room - 16);
    } else if (sc.metric == Metric::State && barW + keyW + 24 > room) {
        keyW = 0;
    } else if (sc.metric != Metric::State && keyW > 0) {
        barW = std::min(barW, room - keyW - 24);
    }
    barW = std::max(10.0, std::floor(barW));
    lg.bar = QRectF(left, std::round(g.legend.top() + 3), barW, kLegendBarPx);
    if (keyW > 0) lg.arrows = QRectF(g.legend.right() - keyW, lg.bar.top() - 1, keyW, kLegendBarPx + 2);
    return lg;
}

QRectF HeatmapRenderer::legendRect(const QRect& target, const HeatmapScene& sc) const {
    std::lock_guard lock(m_mutex);
    return legendGeometry(geometryFor(target, true, sc), sc).bar;
}

double HeatmapRenderer::legendValueToX(const QRect& target, double v, const HeatmapScene& sc) const {
    std::lock_guard lock(m_mutex);
    const Geometry& g = geometryFor(target, true, sc);
    const LegendGeom lg = legendGeometry(g, sc);
    if (lg.bar.isEmpty()) return 0;
    if (sc.metric == Metric::State) {
        const QFontMetricsF fm(g.smallFont);
        double x = lg.bar.left();
        const int want = std::clamp(int(v), 0, 2);
        for (int k = 0; k < want; ++k) x += 14 + fm.horizontalAdvance(QString::fromLatin1(kindName(sched::CpuKind(k)))) + 12;
        return x + 5;  // centre of the 10 px swatch
    }
    const double top = sc.metric == Metric::RqLength ? sc.scaleMax : 1024.0;
    return lg.bar.left() + lg.bar.width() * std::clamp(v / top, 0.0, 1.0);
}

void HeatmapRenderer::paintLegend(QPainter& p, const Geometry& g, const HeatmapScene& sc) const {
    const LegendGeom lg = legendGeometry(g, sc);
    if (lg.bar.isEmpty()) return;
    const QColor fg = sc.pal.color(QPalette::WindowText);
    const QFontMetricsF fm(g.smallFont);
    p.setFont(g.smallFont);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(fg);
    const QString caption = sc.metric == Metric::RqLength      ? QStringLiteral("nr_running")
                            : sc.metric == Metric::Utilisation ? QStringLiteral("util_avg")
                                                               : QStringLiteral("state");
    p.drawText(lg.caption, Qt::AlignLeft | Qt::AlignVCenter, caption);

    if (sc.metric == Metric::State) {
        double x = lg.bar.left();
        for (auto k : {sched::CpuKind::idle, sched::CpuKind::busy, sched::CpuKind::idle_by_delay}) {
            const QRectF sw(x, lg.bar.top(), 10, kLegendBarPx);
            p.fillRect(sw, toQColor(kindColor(k)));
            p.setPen(fg);
            p.drawRect(sw.adjusted(0, 0, -1, -1).adjusted(-1, -1, 1, 1));
            const QString name = QString::fromLatin1(kindName(k));
            p.drawText(QRectF(x + 14, lg.bar.top() - 2, fm.horizontalAdvance(name) + 2, kLegendBarPx + 4), Qt::AlignLeft | Qt::AlignVCenter, name);
            x += 14 + fm.horizontalAdvance(name) + 12;
        }
    } else {
        // The colour bar: one column per pixel, coloured at the column's centre.
        const int w = int(lg.bar.width());
        QImage strip(w, 1, QImage::Format_RGB32);
        for (int i = 0; i < w; ++i) {
            const Rgb c = colormapAt(sc.colormap, (i + 0.5) / w);
            strip.setPixel(i, 0, qRgb(c.r, c.g, c.b));
        }
        p.drawImage(lg.bar, strip);
        p.setPen(QPen(fg, 1));
        p.drawRect(lg.bar.adjusted(-1, -1, 0, 0));
        // Ticks: integers for nr_running (the top one "N+", the scale clamps), quarters of 1024 for util.
        std::vector<std::pair<double, QString>> ticks;
        if (sc.metric == Metric::RqLength) {
            const int top = int(std::floor(sc.scaleMax));
            const int step = std::max(1, int(std::ceil(top / 8.0)));
            for (int v = 0; v <= top; v += step) ticks.push_back({double(v), QString::number(v) + (v == top && v == sc.scaleMax ? "+" : "")});
        } else {
            for (int v = 0; v <= 1024; v += 256) ticks.push_back({double(v), QString::number(v)});
        }
        const double top = sc.metric == Metric::RqLength ? sc.scaleMax : 1024.0;
        // Right to left, so that the top one ("N+") always shows; a label that would touch the one
        // to its right is left out (its tick stays).
        double rightLimit = 1e9;
        for (auto it = ticks.rbegin(); it != ticks.rend(); ++it) {
            const auto& [v, label] = *it;
            const double x = std::round(lg.bar.left() + lg.bar.width() * std::clamp(v / top, 0.0, 1.0));
            p.drawLine(QPointF(x, lg.bar.bottom()), QPointF(x, lg.bar.bottom() + 3));
            const double tw = fm.horizontalAdvance(label);
            const double tx = std::clamp(x - tw / 2, lg.bar.left() - 2, lg.bar.right() + 8 - tw);
            if (tx + tw + 3 > rightLimit) continue;
            p.drawText(QRectF(tx, lg.bar.bottom() + 3, tw + 2, fm.height()), Qt::AlignLeft | Qt::AlignTop, label);
            rightLimit = tx;
        }
    }

    if (!lg.arrows.isEmpty()) {
        p.setRenderHint(QPainter::Antialiasing, true);
        double x = lg.arrows.left();
        const double y = lg.arrows.center().y();
        p.setPen(fg);
        const QString lead = QStringLiteral("arrows:");
        p.drawText(QRectF(x, lg.arrows.top() - 2, fm.horizontalAdvance(lead) + 2, lg.arrows.height() + 4), Qt::AlignLeft | Qt::AlignVCenter, lead);
        x += fm.horizontalAdvance(lead) + 6;
        for (int d = int(sched::DistClass::smt); d < sched::kDistClasses; ++d) {
            const QColor col = toQColor(distColor(sched::DistClass(d)));
            p.setPen(QPen(QColor(0, 0, 0, 115), 5, Qt::SolidLine, Qt::FlatCap));
            p.drawLine(QPointF(x, y), QPointF(x + 16, y));
            p.setPen(QPen(col, 3, Qt::SolidLine, Qt::FlatCap));
            p.drawLine(QPointF(x, y), QPointF(x + 16, y));
            x += 20;
            const QString name = QString::fromLatin1(distShortName(sched::DistClass(d)));
            p.setPen(fg);
            p.drawText(QRectF(x, lg.arrows.top() - 2, fm.horizontalAdvance(name) + 2, lg.arrows.height() + 4), Qt::AlignLeft | Qt::AlignVCenter,
                       name);
            x += fm.horizontalAdvance(name) + 8;
        }
        if (lg.note == LegendGeom::Note::Full && lg.arrows.right() - x > 20) {
            p.drawText(QRectF(x, lg.arrows.top() - 2, lg.arrows.right() - x + 2, lg.arrows.height() + 4), Qt::AlignLeft | Qt::AlignVCenter,
                       arrowNote(sc));
        } else if (lg.note == LegendGeom::Note::TimerSample) {
            // The heatmap's timer arrow: a thin dashed line.
            p.setPen(QPen(fg, 1.5, Qt::DashLine, Qt::FlatCap));
            p.drawLine(QPointF(x, y), QPointF(x + kTimerSamplePx, y));
            x += kTimerSamplePx + 4;
            p.setPen(fg);
            const QString name = QStringLiteral("timer");
            p.drawText(QRectF(x, lg.arrows.top() - 2, fm.horizontalAdvance(name) + 2, lg.arrows.height() + 4), Qt::AlignLeft | Qt::AlignVCenter,
                       name);
        }
    }
}

}  // namespace schedlab
