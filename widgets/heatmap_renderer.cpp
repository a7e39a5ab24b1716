// SPDX-License-Identifier: GPL-2.0-or-later
// heatmap_renderer.cpp: see heatmap_renderer.h.
#include "heatmap_renderer.h"

#include "sim/snapshot.h"
#include "text_util.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QImage>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace schedlab {
namespace {

constexpr int kMarginPx = 4;             ///< around the map, left and right
constexpr int kMinCountLabelLenPx = 36;  ///< arrows shorter than this get no count label
constexpr int kCountLabels = 40;         ///< only the most counted arrows get a count label
constexpr double kPillFade = 0.75;       ///< a count label's fade at the end of the arrow span
constexpr int kPillFadeSteps = 16;       ///< count labels fade in this many steps (cached images)

/// Black or white, whichever reads better on `bg`.
QColor textOn(const QColor& bg) {
    const Rgb c{std::uint8_t(bg.red()), std::uint8_t(bg.green()), std::uint8_t(bg.blue())};
    return relativeLuminance(c) > 0.28 ? QColor(0, 0, 0) : QColor(255, 255, 255);
}

/// `a` moved towards `b` by `f` (0 = a, 1 = b), opaque.
QColor mix(const QColor& a, const QColor& b, double f) {
    return QColor(int(std::lround(a.red() + (b.red() - a.red()) * f)), int(std::lround(a.green() + (b.green() - a.green()) * f)),
                  int(std::lround(a.blue() + (b.blue() - a.blue()) * f)));
}

QRectF toQRect(const RectF& r) { return QRectF(r.x, r.y, r.w, r.h); }

/// Raster targets (the widget, images) without scaling or rotation take cached pixel layers;
/// vector ones (SVG, PDF) and transformed painters get vectors.
bool blitsCachedImages(const QPainter& p) {
    return p.paintEngine() && p.paintEngine()->type() == QPaintEngine::Raster && !p.transform().isScaling() && !p.transform().isRotating();
}

/// Where one arrow is painted: the one computation shared by paintArrows() and arrowAt().
struct ArrowShape {
    bool visible = false;  ///< false when the two centres are too close for an arrow
    QPointF p1;            ///< shaft start: the source centre, pushed sideways for two-way pairs
    QPointF shaftEnd;      ///< shaft end, half a pixel into the head
    QPointF base, tip;     ///< head: centre of its base, and its tip
    QPointF u, n;          ///< unit direction and its normal
    double width = 0;      ///< nominal shaft width (the pen is round(width) wide)
    double len = 0;        ///< centre-to-centre length
    QPointF headPts[3];    ///< the filled head triangle
};

ArrowShape arrowShape(const HeatmapLayout& L, const ArrowAgg& a, bool twoWay) {
    ArrowShape s;
    const double cell = std::min(L.cellW, L.cellH);
    QPointF p1(L.cpu[std::size_t(a.from)].centerX(), L.cpu[std::size_t(a.from)].centerY());
    QPointF p2(L.cpu[std::size_t(a.to)].centerX(), L.cpu[std::size_t(a.to)].centerY());
    const QPointF d = p2 - p1;
    s.len = std::hypot(d.x(), d.y());
    if (s.len < 2) return s;
    s.u = d / s.len;
    s.n = QPointF(-s.u.y(), s.u.x());
    // Wider with log(count), but never much wider than a third of a cell on dense machines.
    s.width = std::min({6.0, std::max(1.2, cell * 0.35), 1.8 + 1.2 * std::log2(double(std::max(1, a.count)))});
    // Pairs drawn in both directions are pushed apart sideways so that both stay visible.
    if (twoWay) {
        const double off = s.width / 2 + 1;
        p1 += s.n * off;
        p2 += s.n * off;
    }
    // Stop short of the destination's centre so its number stays readable.
    const double back = std::min(s.len * 0.25, cell * 0.3);
    s.tip = p2 - s.u * back;
    const double head = std::min(s.len * 0.4, 4 + 2 * s.width);
    s.base = s.tip - s.u * head;
    s.p1 = p1;
    s.shaftEnd = s.base + s.u * 0.5;
    s.headPts[0] = s.tip;
    s.headPts[1] = s.base + s.n * (head * 0.55);
    s.headPts[2] = s.base - s.n * (head * 0.55);
    s.visible = true;
    return s;
}

double distanceToSegment(QPointF p, QPointF a, QPointF b) {
    const QPointF ab = b - a, ap = p - a;
    const double l2 = QPointF::dotProduct(ab, ab);
    const double t = l2 > 0 ? std::clamp(QPointF::dotProduct(ap, ab) / l2, 0.0, 1.0) : 0.0;
    const QPointF q = a + ab * t - p;
    return std::hypot(q.x(), q.y());
}

/// Distance from `p` to the filled triangle `t` (0 inside).
double distanceToTriangle(QPointF p, const QPointF (&t)[3]) {
    auto cross = [](QPointF o, QPointF a, QPointF b) { return (a.x() - o.x()) * (b.y() - o.y()) - (a.y() - o.y()) * (b.x() - o.x()); };
    const double c0 = cross(t[0], t[1], p), c1 = cross(t[1], t[2], p), c2 = cross(t[2], t[0], p);
    if ((c0 >= 0 && c1 >= 0 && c2 >= 0) || (c0 <= 0 && c1 <= 0 && c2 <= 0)) return 0;
    return std::min({distanceToSegment(p, t[0], t[1]), distanceToSegment(p, t[1], t[2]), distanceToSegment(p, t[2], t[0])});
}

QString trText(const char* s) { return QCoreApplication::translate("TopologyHeatmap", s); }

// A round-ended badge holding `t` (the examined CPUs' order, the kernel's "K"), its top left at
// `at`, or, with `fromBottomRight`, its bottom right there: `fill` with a black outline.
void drawBadge(QPainter& p, const QFontMetricsF& fm, QPointF at, bool fromBottomRight, const QColor& fill, const QString& t) {
    const double bw = std::max(fm.height(), fm.horizontalAdvance(t) + 4), bh = fm.height();
    const QRectF box(fromBottomRight ? at.x() - bw : at.x(), fromBottomRight ? at.y() - bh : at.y(), bw, bh);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(QPen(Qt::black, 1));
    p.setBrush(fill);
    p.drawRoundedRect(box, bh / 2, bh / 2);
    p.setBrush(Qt::NoBrush);
    p.drawText(box, Qt::AlignCenter, t);
}

// A heavy frame: `color` 3 px wide over a black one 5 px wide, readable on every cell colour.
void drawHeavyFrame(QPainter& p, const QRectF& rect, const QColor& color) {
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(QPen(Qt::black, 5, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
    p.drawRect(rect);
    p.setPen(QPen(color, 3, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
    p.drawRect(rect);
}

}  // namespace

void HeatmapRenderer::invalidate() {
    std::lock_guard lock(m_mutex);
    m_geomValid = m_otherGeomValid = false;
    m_pills.clear();
}

void HeatmapRenderer::computeGeometry(Geometry& g, const QRect& target, const QFont& base, const HeatmapScene& sc) const {
    g = Geometry{};
    g.target = target;
    g.topo = sc.snapshot ? sc.snapshot->topo.get() : nullptr;

    g.boxFont = base;
    g.boxFont.setPixelSize(11);
    g.boxFont.setBold(true);
    g.smallFont = base;
    g.smallFont.setPixelSize(10);
    QFont titleFont = base;
    titleFont.setPixelSize(13);
    titleFont.setBold(true);

    const double titleH = target.height() >= 80 ? QFontMetricsF(titleFont).height() + 6 : 0;
    const double legendH = target.height() >= 140 ? QFontMetricsF(g.smallFont).height() + kLegendBarPx + 12 : 0;
    const QRectF t(target);
    g.title = QRectF(t.left() + kMarginPx, t.top(), t.width() - 2 * kMarginPx, titleH);
    g.legend = QRectF(t.left() + kMarginPx, t.bottom() + 1 - legendH, t.width() - 2 * kMarginPx, legendH);
    g.map = QRectF(t.left() + kMarginPx, t.top() + titleH, t.width() - 2 * kMarginPx, t.height() - titleH - legendH - (legendH > 0 ? 2 : 0));
    if (!g.topo || g.map.width() <= 1 || g.map.height() <= 1) return;

    g.layout = layoutTopology(*g.topo, RectF{g.map.x(), g.map.y(), g.map.width(), g.map.height()});
    if (g.layout.cpuLabels) {
        g.labelFont = base;
        g.labelFont.setPixelSize(std::max(6, int(std::floor(g.layout.labelPx))));
        g.cpuText.resize(std::size_t(g.topo->nrCpus()));
        for (int c = 0; c < g.topo->nrCpus(); ++c) {
            QStaticText& st = g.cpuText[std::size_t(c)];
            st.setText(QString::number(c));
            st.setTextFormat(Qt::PlainText);
            st.setPerformanceHint(QStaticText::AggressiveCaching);
            st.prepare(QTransform(), g.labelFont);
        }
    }
}

const HeatmapRenderer::Geometry& HeatmapRenderer::geometryFor(const QRect& target, bool own, const HeatmapScene& sc) const {
    const sched::Topology* topo = sc.snapshot ? sc.snapshot->topo.get() : nullptr;
    if (own) {
        if (!m_geomValid || m_geom.target != target || m_geom.topo != topo) {
            computeGeometry(m_geom, target, sc.font, sc);
            m_geomValid = true;
        }
        return m_geom;
    }
    if (!m_otherGeomValid || m_otherGeom.target != target || m_otherGeom.topo != topo) {
        computeGeometry(m_otherGeom, target, sc.font, sc);
        m_otherGeomValid = true;
    }
    return m_otherGeom;
}

// ---------------------------------------------------------------------------------------------
// Queries

int HeatmapRenderer::cpuAt(const QRect& target, QPointF p, const HeatmapScene& sc) const {
    std::lock_guard lock(m_mutex);
    const Geometry& g = geometryFor(target, true, sc);
    const auto& cpus = g.layout.cpu;
    for (std::size_t c = 0; c < cpus.size(); ++c)
        if (cpus[c].w > 0 && cpus[c].contains(p.x(), p.y())) return int(c);
    return -1;
}

HeatmapRenderer::ArrowHit HeatmapRenderer::arrowAt(const QRect& target, QPointF p, double tolerancePx, const HeatmapScene& sc) const {
    std::lock_guard lock(m_mutex);
    if (!sc.showArrows || !sc.snapshot || !sc.snapshot->topo || sc.arrows().list.empty()) return {};
    const Geometry& g = geometryFor(target, true, sc);
    if (g.layout.cpu.empty()) return {};
    // The arrows are in importance order and painted back to front: the first hit is the topmost.
    for (std::size_t i = 0; i < sc.arrows().list.size(); ++i) {
        const ArrowAgg& a = sc.arrows().list[i];
        const ArrowShape sh = arrowShape(g.layout, a, sc.arrows().twoWay[i]);
        if (!sh.visible) continue;
        const double halfPen = std::round(sh.width) / 2;
        if (distanceToSegment(p, sh.p1, sh.shaftEnd) <= halfPen + tolerancePx || distanceToTriangle(p, sh.headPts) <= tolerancePx)
            return {a.from, a.to, a.wakeup, a.proxy, a.count, a.timer};
    }
    return {};
}

QPointF HeatmapRenderer::cpuCenter(const QRect& target, int cpu, const HeatmapScene& sc) const {
    std::lock_guard lock(m_mutex);
    const Geometry& g = geometryFor(target, true, sc);
    if (cpu < 0 || std::size_t(cpu) >= g.layout.cpu.size()) return {};
    return {g.layout.cpu[std::size_t(cpu)].centerX(), g.layout.cpu[std::size_t(cpu)].centerY()};
}

QRectF HeatmapRenderer::cpuRect(const QRect& target, int cpu, const HeatmapScene& sc) const {
    std::lock_guard lock(m_mutex);
    const Geometry& g = geometryFor(target, true, sc);
    if (cpu < 0 || std::size_t(cpu) >= g.layout.cpu.size()) return {};
    return toQRect(g.layout.cpu[std::size_t(cpu)]);
}

// ---------------------------------------------------------------------------------------------
// Painting

void HeatmapRenderer::render(QPainter& p, const QRect& target, bool own, const HeatmapScene& sc) {
    std::lock_guard lock(m_mutex);
    const Geometry& g = geometryFor(target, own, sc);
    p.save();
    p.setClipRect(target);
    const bool raster = blitsCachedImages(p);
    const double dpr = p.device() ? p.device()->devicePixelRatioF() : 1.0;
    if (raster) buildCaches(g, dpr, sc);
    const bool haveSnapshot = sc.snapshot && sc.snapshot->topo && !g.layout.cpu.empty();
    // Raster: one opaque blit of boxes, cells and CPU numbers, kept up to date cell by cell.
    const bool layered = raster && haveSnapshot && !g.boxes.isNull() && (!g.layout.cpuLabels || !g.labels[0].isNull());
    if (layered) {
        updateCellLayer(g, sc);
        p.drawImage(QPointF(target.topLeft()), g.cells);
    } else if (raster && !g.boxes.isNull()) {
        p.drawImage(QPointF(target.topLeft()), g.boxes);
    } else {
        p.fillRect(target, sc.pal.color(QPalette::Window));
    }
    paintTitle(p, g, sc);
    if (!haveSnapshot) {
        p.setPen(sc.pal.color(QPalette::WindowText));
        p.drawText(g.map.isValid() ? g.map : QRectF(target), Qt::AlignCenter, trText("no snapshot"));
        p.restore();
        return;
    }
    if (!raster || g.boxes.isNull()) paintBoxes(p, g, sc);
    m_cellsDone = layered;
    paintCells(p, g, sc);
    if (sc.showArrows) paintArrows(p, g, sc);
    paintMarks(p, g, sc);
    if (!layered) paintLegend(p, g, sc);
    p.restore();
}

void HeatmapRenderer::buildCaches(const Geometry& g, double dpr, const HeatmapScene& sc) const {
    if (g.cacheDpr == dpr && !g.boxes.isNull()) return;
    const QSize px(int(std::ceil(g.target.width() * dpr)), int(std::ceil(g.target.height() * dpr)));
    if (px.isEmpty() || g.layout.cpu.empty()) return;
    g.cacheDpr = dpr;
    g.cells = QImage();
    g.boxes = QImage(px, QImage::Format_RGB32);  // opaque: blitted with a plain copy
    g.boxes.setDevicePixelRatio(dpr);
    g.boxes.fill(sc.pal.color(QPalette::Window));
    {
        QPainter bp(&g.boxes);
        bp.translate(-g.target.x(), -g.target.y());
        paintBoxes(bp, g, sc);
    }
    for (int k = 0; k < 2; ++k) {
        QImage& img = g.labels[k];
        if (!g.layout.cpuLabels || g.cpuText.size() != g.layout.cpu.size()) {
            img = QImage();
            continue;
        }
        img = QImage(px, QImage::Format_ARGB32_Premultiplied);
        img.setDevicePixelRatio(dpr);
        img.fill(Qt::transparent);
        QPainter lp(&img);
        lp.translate(-g.target.x(), -g.target.y());
        lp.setRenderHint(QPainter::Antialiasing, true);
        lp.setFont(g.labelFont);
        lp.setPen(k == 0 ? QColor(Qt::white) : QColor(Qt::black));
        for (std::size_t c = 0; c < g.layout.cpu.size(); ++c) {
            const QStaticText& st = g.cpuText[c];
            const QSizeF sz = st.size();
            const RectF& r = g.layout.cpu[c];
            lp.drawStaticText(QPointF(r.centerX() - sz.width() / 2, r.centerY() - sz.height() / 2), st);
        }
    }
}

void HeatmapRenderer::paintTitle(QPainter& p, const Geometry& g, const HeatmapScene& sc) const {
    if (g.title.height() <= 0) return;
    QFont f = sc.font;
    f.setPixelSize(13);
    QFont bold = f;
    bold.setBold(true);
    const QColor fg = sc.pal.color(QPalette::WindowText);
    p.setPen(fg);
    QString right;
    if (sc.snapshot) right = QStringLiteral("t = ") + simTime(sc.snapshot->now);
    const double rightW = right.isEmpty() ? 0 : QFontMetricsF(f).horizontalAdvance(right) + 12;
    p.setFont(bold);
    const QRectF tr(g.title.left(), g.title.top(), g.title.width() - rightW, g.title.height());
    p.drawText(tr, Qt::AlignLeft | Qt::AlignVCenter, QFontMetricsF(bold).elidedText(sc.title, Qt::ElideRight, std::max(0.0, tr.width())));
    if (!right.isEmpty() && rightW < g.title.width() / 2) {
        p.setFont(f);
        p.drawText(g.title, Qt::AlignRight | Qt::AlignVCenter, right);
    }
}

void HeatmapRenderer::paintBoxes(QPainter& p, const Geometry& g, const HeatmapScene& sc) const {
    const QColor bg = sc.pal.color(QPalette::Window);
    const bool dark = bg.lightness() < 128;
    const QColor pkgFill = dark ? bg.lighter(125) : bg.darker(110);
    const QColor llcFill = dark ? bg.lighter(150) : bg.darker(122);
    const QColor coreFill = dark ? bg.lighter(190) : bg.darker(150);
    const QColor outline = dark ? QColor(170, 170, 170) : QColor(110, 110, 110);
    const QColor fg = sc.pal.color(QPalette::WindowText);
    const HeatmapLayout& L = g.layout;

    p.setRenderHint(QPainter::Antialiasing, false);
    for (const LayoutBox& b : L.boxes) {
        const QRectF r = toQRect(b.r);
        switch (b.kind) {
        case LayoutBox::Kind::Package:
            p.fillRect(r, pkgFill);
            p.setPen(QPen(outline, 1));
            p.drawRect(r.adjusted(0, 0, -1, -1));
            if (L.packageHeaderPx > 0) {
                p.setFont(g.boxFont);
                p.setPen(fg);
                QString text = QStringLiteral("S%1").arg(b.id);
                if (g.topo->nrNodes() > 1 && g.topo->nrNodes() == g.topo->nrPackages()) text += QStringLiteral("  (node %1)").arg(b.id);
                p.drawText(QRectF(r.left() + 4, r.top() + 1, r.width() - 8, L.packageHeaderPx + 2), Qt::AlignLeft | Qt::AlignVCenter, text);
            }
            break;
        case LayoutBox::Kind::Llc:
            if (!L.llcOutlines) break;
            p.fillRect(r, llcFill);
            if (L.llcHeaderPx > 0) {
                p.setFont(g.smallFont);
                p.setPen(fg);
                // "LLC 3", or just "3" in a narrow box.
                QString text = QStringLiteral("LLC %1").arg(b.id);
                const QFontMetricsF fm(g.smallFont);
                if (fm.horizontalAdvance(text) > r.width() - 6) text = QString::number(b.id);
                if (fm.horizontalAdvance(text) <= r.width() - 6)
                    p.drawText(QRectF(r.left() + 3, r.top() + 1, r.width() - 6, L.llcHeaderPx + 1), Qt::AlignLeft | Qt::AlignVCenter, text);
            }
            break;
        case LayoutBox::Kind::Core:
            // Filled so that the thin gap between SMT siblings differs from the gap between cores.
            if (L.coreOutlines) p.fillRect(r, coreFill);
            break;
        case LayoutBox::Kind::Cpu: break;
        }
    }
}

void HeatmapRenderer::updateCellLayer(const Geometry& g, const HeatmapScene& sc) const {
    const HeatmapLayout& L = g.layout;
    const auto& cpus = sc.snapshot->cpus;
    if (g.cells.isNull() || g.cells.size() != g.boxes.size()) {
        g.cells = g.boxes.copy();
        g.cells.setDevicePixelRatio(g.boxes.devicePixelRatio());
        g.cellRgb.assign(L.cpu.size(), 0);  // 0 has alpha 0: never a painted (opaque) colour
        g.legendKey.clear();
    }
    const QColor missing = sc.pal.color(QPalette::Mid);
    QPainter cp;
    auto begin = [&] {
        if (cp.isActive()) return;
        cp.begin(&g.cells);
        cp.translate(-g.target.x(), -g.target.y());
        cp.setRenderHint(QPainter::Antialiasing, false);
    };
    // The legend changes only with the metric, the colormap, the scale and the arrow kinds it
    // names (proxy moves, timers moved by get_nohz_timer_target()).
    const QString legendKey = QStringLiteral("%1/%2/%3/%4%5")
                                  .arg(int(sc.metric))
                                  .arg(int(sc.colormap))
                                  .arg(sc.scaleMax)
                                  .arg(int(sc.hasTimerArrows()))
                                  .arg(int(sc.proxyRun()));
    if (legendKey != g.legendKey) {
        begin();
        cp.fillRect(g.legend, sc.pal.color(QPalette::Window));
        paintLegend(cp, g, sc);
        cp.setRenderHint(QPainter::Antialiasing, false);
        g.legendKey = legendKey;
    }
    const double k = g.cacheDpr;
    for (std::size_t c = 0; c < L.cpu.size(); ++c) {
        const QColor col = c < cpus.size() ? sc.colorFor(cpus[c]) : missing;
        if (col.rgb() == g.cellRgb[c]) continue;
        begin();
        g.cellRgb[c] = col.rgb();
        const RectF& r = L.cpu[c];
        cp.fillRect(toQRect(r), col);
        if (!L.cpuLabels) continue;
        // The cell's number from the cached layer in the colour readable on that cell.
        const QImage& layer = g.labels[textOn(col) == QColor(Qt::white) ? 0 : 1];
        const QRectF src((r.x - g.target.x()) * k, (r.y - g.target.y()) * k, r.w * k, r.h * k);
        cp.drawImage(toQRect(r), layer, src);
    }
}

void HeatmapRenderer::paintCells(QPainter& p, const Geometry& g, const HeatmapScene& sc) const {
    const HeatmapLayout& L = g.layout;
    const auto& cpus = sc.snapshot->cpus;
    const QColor missing = sc.pal.color(QPalette::Mid);
    p.setRenderHint(QPainter::Antialiasing, false);
    if (!m_cellsDone) {
        for (std::size_t c = 0; c < L.cpu.size(); ++c) {
            const QColor col = c < cpus.size() ? sc.colorFor(cpus[c]) : missing;
            p.fillRect(toQRect(L.cpu[c]), col);
        }
    }
    // Claimed CPUs (claim-wakeup flag): a small corner triangle, like a dog-ear.
    if (L.cellW >= 8 && L.cellH >= 8) {
        p.setRenderHint(QPainter::Antialiasing, true);
        p.setPen(Qt::NoPen);
        const double s = std::min(7.0, std::min(L.cellW, L.cellH) / 3);
        for (std::size_t c = 0; c < L.cpu.size() && c < cpus.size(); ++c) {
            if (!cpus[c].claimed) continue;
            const RectF& r = L.cpu[c];
            const QPointF tri[3] = {{r.right() - s, r.y}, {r.right(), r.y}, {r.right(), r.y + s}};
            p.setBrush(textOn(sc.colorFor(cpus[c])));
            p.drawPolygon(tri, 3);
        }
        p.setBrush(Qt::NoBrush);
    }
    if (!L.cpuLabels || g.cpuText.size() != L.cpu.size() || m_cellsDone) return;
    p.setFont(g.labelFont);
    p.setRenderHint(QPainter::Antialiasing, true);
    QColor current;
    for (std::size_t c = 0; c < L.cpu.size(); ++c) {
        const QColor col = c < cpus.size() ? sc.colorFor(cpus[c]) : missing;
        const QColor fg = textOn(col);
        if (fg != current) {
            p.setPen(fg);
            current = fg;
        }
        const QStaticText& st = g.cpuText[c];
        const QSizeF sz = st.size();
        const RectF& r = L.cpu[c];
        p.drawStaticText(QPointF(r.centerX() - sz.width() / 2, r.centerY() - sz.height() / 2), st);
    }
}

const QImage& HeatmapRenderer::countPill(int count, int fadeStep, double dpr, const HeatmapScene& sc) const {
    const quint64 key = (quint64(quint32(count)) << 24) | (quint64(fadeStep & 0xff) << 16) | quint64(std::lround(dpr * 100) & 0xffff);
    auto it = m_pills.constFind(key);
    if (it != m_pills.constEnd()) return *it;
    if (m_pills.size() > 1024) m_pills.clear();  // counts churn while running: keep the cache bounded
    const QColor bg = sc.pal.color(QPalette::Window);
    const double fade = kPillFade * fadeStep / kPillFadeSteps;
    QFont f = sc.font;
    f.setPixelSize(10);
    const QFontMetricsF fm(f);
    const QString t = QString::number(count);
    const QSizeF sz(fm.horizontalAdvance(t) + 6, fm.height());
    QImage img(QSize(int(std::ceil(sz.width() * dpr)) + 1, int(std::ceil(sz.height() * dpr)) + 1), QImage::Format_ARGB32_Premultiplied);
    img.setDevicePixelRatio(dpr);
    img.fill(Qt::transparent);
    {
        QPainter ip(&img);
        ip.setRenderHint(QPainter::Antialiasing, true);
        ip.setFont(f);
        const QRectF box(0.5, 0.5, sz.width() - 1, sz.height() - 1);
        ip.setPen(QPen(mix(QColor(0, 0, 0), bg, 0.35 + 0.5 * fade), 1));
        ip.setBrush(mix(QColor(255, 255, 255), bg, fade));
        ip.drawRoundedRect(box, 3, 3);
        ip.setPen(mix(QColor(0, 0, 0), bg, fade));
        ip.drawText(QRectF(QPointF(0, 0), sz), Qt::AlignCenter, t);
    }
    return *m_pills.insert(key, img);
}

void HeatmapRenderer::paintArrows(QPainter& p, const Geometry& g, const HeatmapScene& sc) const {
    if (sc.arrows().list.empty()) return;
    const HeatmapLayout& L = g.layout;
    const double cell = std::min(L.cellW, L.cellH);
    const QColor bg = sc.pal.color(QPalette::Window);

    // Least important first, so the most counted / newest end up on top.
    struct Drawn {
        ArrowShape sh;
        QColor col;
        double fade;
        std::size_t i;
    };
    std::vector<Drawn> drawn;
    drawn.reserve(sc.arrows().list.size());
    for (std::size_t i = sc.arrows().list.size(); i-- > 0;) {
        const ArrowAgg& a = sc.arrows().list[i];
        ArrowShape sh = arrowShape(L, a, sc.arrows().twoWay[i]);
        if (!sh.visible) continue;
        // Age fades the colour towards the background in kPillFadeSteps steps, so that arrows share
        // a few colours. Opaque colours on purpose: translucent fills and strokes take the raster
        // engine's slow paths.
        const int step = int(std::lround(0.75 * std::clamp(a.age, 0.0, 1.0) / kPillFade * kPillFadeSteps));
        const double fade = kPillFade * step / kPillFadeSteps;
        drawn.push_back({sh, mix(toQColor(distColor(a.dist)), bg, fade), fade, i});
    }

    // Shafts unantialiased: wakeup shafts as filled quads (the aliased polygon rasterizer, much
    // cheaper than stroking a wide pen), load-balance shafts as two 1-px rails, a hollow arrow
    // (1-px pens take the cosmetic fast path; a wide dashed pen goes through the dash stroker,
    // 2-3 ms for 200 arrows). Heads and labels stay smooth. One pass per kind of primitive:
    // switching render hints per arrow costs the raster engine a state change each time.
    // (Merging each colour's arrows into one path, tried, is slower: 4.2 vs 2.5 ms a heatmap.)
    p.setRenderHint(QPainter::Antialiasing, false);
    for (const Drawn& d : drawn) {
        const QLineF shaft(d.sh.p1, d.sh.shaftEnd);
        if (sc.arrows().list[d.i].wakeup) {
            const QPointF h = d.sh.n * (std::round(d.sh.width) / 2);
            const QPointF quad[4] = {d.sh.p1 + h, d.sh.shaftEnd + h, d.sh.shaftEnd - h, d.sh.p1 - h};
            p.setPen(Qt::NoPen);
            p.setBrush(d.col);
            p.drawPolygon(quad, 4);
        } else if (sc.arrows().list[d.i].timer) {
            // Sleep timers get_nohz_timer_target() moved: one dashed line (no task moved).
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(d.col, std::max(1.0, std::round(d.sh.width / 2)), Qt::DashLine, Qt::FlatCap));
            p.drawLine(shaft);
        } else {
            // Load balance: two solid rails; proxy execution's moves: two dotted ones.
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(d.col, 1, sc.arrows().list[d.i].proxy ? Qt::DotLine : Qt::SolidLine, Qt::FlatCap));
            const QPointF off = d.sh.n * std::max(1.0, d.sh.width / 2);
            const QLineF rails[2] = {shaft.translated(off), shaft.translated(-off)};
            p.drawLines(rails, 2);
        }
    }

    // Filled heads without an outline stroke (stroking the outline costs as much as the fill).
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(Qt::NoPen);
    for (const Drawn& d : drawn) {
        p.setBrush(d.col);
        p.drawPolygon(d.sh.headPts, 3);
    }
    p.setBrush(Qt::NoBrush);

    // Count labels on the most counted arrows: pre-rendered pills on raster targets, vectors otherwise.
    if (cell < 12) return;
    const bool raster = blitsCachedImages(p);
    const double dpr = p.device() ? p.device()->devicePixelRatioF() : 1.0;
    const QFontMetricsF fm(g.smallFont);
    p.setFont(g.smallFont);
    for (const Drawn& d : drawn) {
        const ArrowAgg& a = sc.arrows().list[d.i];
        if (a.count <= 1 || int(d.i) >= kCountLabels || d.sh.len < kMinCountLabelLenPx) continue;
        const int step = int(std::lround(d.fade / kPillFade * kPillFadeSteps));
        const double fade = d.fade;
        const QString t = QString::number(a.count);
        const double tw = fm.horizontalAdvance(t) + 6, th = fm.height();
        const QPointF mid = (d.sh.p1 + d.sh.base) / 2 + d.sh.n * (d.sh.width / 2 + th / 2 + 1);
        const QRectF box(mid.x() - tw / 2, mid.y() - th / 2, tw, th);
        if (raster) {
            p.drawImage(QPointF(std::round(box.x()), std::round(box.y())), countPill(a.count, step, dpr, sc));
            continue;
        }
        p.setPen(QPen(mix(QColor(0, 0, 0), bg, 0.35 + 0.5 * fade), 1));
        p.setBrush(mix(QColor(255, 255, 255), bg, fade));
        p.drawRoundedRect(box, 3, 3);
        p.setBrush(Qt::NoBrush);
        p.setPen(mix(QColor(0, 0, 0), bg, fade));
        p.drawText(box, Qt::AlignCenter, t);
    }
}

void HeatmapRenderer::paintMarks(QPainter& p, const Geometry& g, const HeatmapScene& sc) const {
    const HeatmapLayout& L = g.layout;
    const int n = int(L.cpu.size());
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setBrush(Qt::NoBrush);
    auto inner = [](const RectF& r, double by) { return QRectF(r.x + by, r.y + by, r.w - 2 * by, r.h - 2 * by); };

    // Selection: a thick black frame with a white inner line, readable on every colour.
    for (int c : sc.selection) {
        if (c < 0 || c >= n) continue;
        const RectF& r = L.cpu[std::size_t(c)];
        p.setPen(QPen(Qt::black, 3, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
        p.drawRect(inner(r, 1.5));
        if (r.w > 8 && r.h > 8) {
            p.setPen(QPen(Qt::white, 1));
            p.drawRect(inner(r, 3.5));
        }
    }

    // The CPUs a wakeup examined: "marching ants" frame and the order number in a badge; the
    // chosen one in orange (Okabe–Ito) with a heavier frame.
    const bool badges = L.cellW >= 14 && L.cellH >= 14;
    QFont badgeFont = g.smallFont;
    badgeFont.setBold(true);
    badgeFont.setPixelSize(std::clamp(int(std::min(L.cellW, L.cellH) * 0.4), 7, 10));
    const QFontMetricsF bfm(badgeFont);
    p.setFont(badgeFont);
    const QColor chosen = toQColor(Rgb{230, 159, 0});
    for (std::size_t i = 0; i < sc.highlight.size(); ++i) {
        const int c = sc.highlight[i];
        if (c < 0 || c >= n || c == sc.target) continue;
        const RectF& r = L.cpu[std::size_t(c)];
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setPen(QPen(Qt::black, 2));
        p.drawRect(inner(r, 1));
        p.setPen(QPen(Qt::white, 2, Qt::DashLine));
        p.drawRect(inner(r, 1));
        if (badges) drawBadge(p, bfm, QPointF(r.x + 2, r.y + 2), false, Qt::white, QString::number(i + 1));
    }
    if (sc.target >= 0 && sc.target < n) {
        const RectF& r = L.cpu[std::size_t(sc.target)];
        drawHeavyFrame(p, inner(r, 0.5), chosen);
        if (badges) {
            const auto it = std::find(sc.highlight.begin(), sc.highlight.end(), sc.target);
            const QString t = it == sc.highlight.end() ? QStringLiteral("\u2713") : QString::number(int(it - sc.highlight.begin()) + 1);
            drawBadge(p, bfm, QPointF(r.x + 3, r.y + 3), false, chosen, t);
        }
    }
    // The kernel's choice for a replayed decision: sky blue (Okabe–Ito), inside the chosen frame
    // when both picked the same CPU, with a "K" badge at the bottom right.
    if (sc.kernel >= 0 && sc.kernel < n) {
        const RectF& r = L.cpu[std::size_t(sc.kernel)];
        const QColor kernel = toQColor(Rgb{86, 180, 233});
        const double in = sc.kernel == sc.target ? 4.5 : 0.5;
        if (r.w > 2 * in + 4 && r.h > 2 * in + 4) drawHeavyFrame(p, inner(r, in), kernel);
        if (badges) drawBadge(p, bfm, QPointF(r.x + r.w - 3, r.y + r.h - 3), true, kernel, QStringLiteral("K"));
    }
}

}  // namespace schedlab
