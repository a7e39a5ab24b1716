// SPDX-License-Identifier: GPL-2.0-or-later
// topology_heatmap.cpp: painting and interaction of the topology heatmap. The geometry (boxes,
// label fonts, pre-laid-out CPU numbers) is cached per target size and topology, so a paint only
// fills rectangles, draws cached text and strokes the arrows.
#include "topology_heatmap.h"

#include "sim/simulation.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QImage>
#include <QMouseEvent>
#include <QElapsedTimer>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace schedlab {
namespace {

constexpr int kMarginPx = 4;             ///< around the map, left and right
constexpr int kLegendBarPx = 10;         ///< height of the colour bar
constexpr int kLegendBarMaxPx = 280;     ///< widest colour bar
constexpr int kMinCountLabelLenPx = 36;  ///< arrows shorter than this get no count label
constexpr int kCountLabels = 40;         ///< only the most counted arrows get a count label
constexpr double kPillFade = 0.75;       ///< a count label's fade at the end of the arrow span
constexpr int kPillFadeSteps = 16;       ///< count labels fade in this many steps (cached images)

QColor toQColor(Rgb c) { return QColor(c.r, c.g, c.b); }

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

QString msText(std::int64_t ns) { return QString::number(double(ns) / 1e6, 'f', 3) + QStringLiteral(" ms"); }

constexpr double kArrowPickPx = 3;  ///< clicks and tooltips within this of an arrow go to the arrow

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

/// How a distance class reads in a sentence.
QString distSentenceName(sched::DistClass d) {
    switch (d) {
    case sched::DistClass::same_cpu: return QStringLiteral("same CPU");
    case sched::DistClass::smt: return QStringLiteral("SMT siblings");
    case sched::DistClass::llc: return QStringLiteral("same LLC");
    case sched::DistClass::cross_llc: return QStringLiteral("cross-LLC");
    case sched::DistClass::cross_node: return QStringLiteral("cross-node");
    case sched::DistClass::cross_socket: return QStringLiteral("cross-socket");
    case sched::DistClass::count_: break;
    }
    return QStringLiteral("?");
}

}  // namespace

TopologyHeatmap::TopologyHeatmap(QWidget* parent) : QWidget(parent) {
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::ClickFocus);
    m_pal = palette();
    m_font = font();
}

TopologyHeatmap::~TopologyHeatmap() { finishRender(); }

void TopologyHeatmap::finishRender() const {
    if (m_job.isValid()) m_job.waitForFinished();
}

void TopologyHeatmap::beginChange() {
    finishRender();
    m_frameValid = false;
}

void TopologyHeatmap::setAsyncRender(bool on) {
    beginChange();
    m_async = on;
    update();
}

void TopologyHeatmap::setSnapshot(std::shared_ptr<const sched::Snapshot> s) {
    beginChange();
    const sched::Topology* before = m_snapshot ? m_snapshot->topo.get() : nullptr;
    m_snapshot = std::move(s);
    const sched::Topology* after = m_snapshot ? m_snapshot->topo.get() : nullptr;
    if (before != after) {
        m_geomValid = m_otherGeomValid = false;
        // A different machine: CPU numbers of the old selection may not exist any more.
        const int n = after ? after->nrCpus() : 0;
        m_selection.erase(std::remove_if(m_selection.begin(), m_selection.end(), [n](int c) { return c >= n; }), m_selection.end());
    }
    const QRect r = rect();
    const double dpr = devicePixelRatioF();
    if (m_async && isVisible() && !r.isEmpty() && updatesEnabled()) {
        // Aggregating the arrows and painting the frame, off the GUI thread; paintEvent blits it.
        m_job = QtConcurrent::run([this, r, dpr] {
            QElapsedTimer t;
            t.start();
            rebuildArrows();
            const QSize px(int(std::ceil(r.width() * dpr)), int(std::ceil(r.height() * dpr)));
            if (m_frame.size() != px || m_frame.devicePixelRatio() != dpr) {
                m_frame = QImage(px, QImage::Format_RGB32);  // opaque: the widget paints every pixel
                m_frame.setDevicePixelRatio(dpr);
            }
            QPainter p(&m_frame);
            renderImpl(p, r, true);
            m_lastPaintMs.store(double(t.nsecsElapsed()) / 1e6, std::memory_order_relaxed);
        });
        m_frameValid = true;
    } else {
        rebuildArrows();
    }
    update();
}

void TopologyHeatmap::setMetric(Metric m) {
    if (m == m_metric) return;
    beginChange();
    m_metric = m;
    update();
}

void TopologyHeatmap::setScaleMax(double v) {
    if (!(v > 0) || v == m_scaleMax) return;
    beginChange();
    m_scaleMax = v;
    update();
}

void TopologyHeatmap::setColormap(Colormap cm) {
    if (cm == m_colormap) return;
    beginChange();
    m_colormap = cm;
    update();
}

void TopologyHeatmap::setTitle(const QString& title) {
    if (title == m_title) return;
    beginChange();
    m_title = title;
    update();
}

void TopologyHeatmap::setArrowSpanNs(std::int64_t ns) {
    beginChange();
    m_arrowSpanNs = ns;
    rebuildArrows();
    update();
}

void TopologyHeatmap::setMaxArrows(int n) {
    beginChange();
    m_maxArrows = std::max(0, n);
    rebuildArrows();
    update();
}

void TopologyHeatmap::setShowArrows(bool on) {
    if (on == m_showArrows) return;
    beginChange();
    m_showArrows = on;
    update();
}

void TopologyHeatmap::setSelection(const QList<int>& cpus) {
    QList<int> s = cpus;
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    if (s == m_selection) return;
    beginChange();
    m_selection = s;
    update();
}

void TopologyHeatmap::setHighlight(const std::vector<int>& cpusInOrder) {
    beginChange();
    m_highlight = cpusInOrder;
    m_target = cpusInOrder.empty() ? -1 : cpusInOrder.back();
    update();
}

void TopologyHeatmap::setHighlightTarget(int cpu) {
    beginChange();
    m_target = cpu;
    update();
}

void TopologyHeatmap::setKernelChoice(int cpu) {
    beginChange();
    m_kernel = cpu;
    update();
}

void TopologyHeatmap::rebuildArrows() {
    m_arrows.clear();
    m_arrowTwoWay.clear();
    if (!m_snapshot) return;
    m_arrows = aggregateArrows(m_snapshot->migrations, m_snapshot->now, m_arrowSpanNs, std::size_t(m_maxArrows));
    const int n = m_snapshot->topo ? m_snapshot->topo->nrCpus() : 0;
    m_arrows.erase(
        std::remove_if(m_arrows.begin(), m_arrows.end(), [n](const ArrowAgg& a) { return a.from < 0 || a.to < 0 || a.from >= n || a.to >= n; }),
        m_arrows.end());
    std::vector<std::tuple<int, int, bool>> present;
    present.reserve(m_arrows.size());
    for (const ArrowAgg& a : m_arrows) present.emplace_back(a.from, a.to, a.wakeup);
    std::sort(present.begin(), present.end());
    m_arrowTwoWay.reserve(m_arrows.size());
    for (const ArrowAgg& a : m_arrows)
        m_arrowTwoWay.push_back(std::binary_search(present.begin(), present.end(), std::make_tuple(a.to, a.from, a.wakeup)));
}

// ---------------------------------------------------------------------------------------------
// Geometry

void TopologyHeatmap::computeGeometry(Geometry& g, const QRect& target, const QFont& base) const {
    g = Geometry{};
    g.target = target;
    g.topo = m_snapshot ? m_snapshot->topo.get() : nullptr;

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

const TopologyHeatmap::Geometry& TopologyHeatmap::geometryFor(const QRect& target, bool own) const {
    const sched::Topology* topo = m_snapshot ? m_snapshot->topo.get() : nullptr;
    if (own) {
        if (!m_geomValid || m_geom.target != target || m_geom.topo != topo) {
            computeGeometry(m_geom, target, m_font);
            m_geomValid = true;
        }
        return m_geom;
    }
    if (!m_otherGeomValid || m_otherGeom.target != target || m_otherGeom.topo != topo) {
        computeGeometry(m_otherGeom, target, m_font);
        m_otherGeomValid = true;
    }
    return m_otherGeom;
}

void TopologyHeatmap::resizeEvent(QResizeEvent*) {
    beginChange();
    m_geomValid = false;
}

void TopologyHeatmap::changeEvent(QEvent* e) {
    if (e->type() == QEvent::FontChange || e->type() == QEvent::PaletteChange) {
        beginChange();
        m_pal = palette();
        m_font = font();
        m_geomValid = m_otherGeomValid = false;
        m_pills.clear();
    }
    QWidget::changeEvent(e);
}

TopologyHeatmap::LegendGeom TopologyHeatmap::legendGeometry(const Geometry& g) const {
    LegendGeom lg;
    if (g.legend.height() <= 0) return lg;
    const QFontMetricsF fm(g.smallFont);
    const QString caption = m_metric == Metric::RqLength      ? QStringLiteral("nr_running")
                            : m_metric == Metric::Utilisation ? QStringLiteral("util_avg")
                                                              : QStringLiteral("state");
    const double capW = fm.horizontalAdvance(caption) + 8;
    lg.caption = QRectF(g.legend.left(), g.legend.top() + 2, capW, kLegendBarPx + 2);
    const double left = std::round(lg.caption.right());
    double barW;
    if (m_metric == Metric::State) {
        barW = 0;
        for (auto k : {sched::CpuKind::idle, sched::CpuKind::busy, sched::CpuKind::idle_by_delay})
            barW += 14 + fm.horizontalAdvance(QString::fromLatin1(kindName(k))) + 12;
    } else {
        barW = std::min<double>(kLegendBarMaxPx, g.legend.right() - left - 16);
    }
    // The arrow key goes right of the bar when there is room for it.
    double keyW = 0;
    if (m_showArrows) {
        keyW = fm.horizontalAdvance(QStringLiteral("arrows:")) + 6;
        for (int d = int(sched::DistClass::smt); d < sched::kDistClasses; ++d)
            keyW += 20 + fm.horizontalAdvance(QString::fromLatin1(distShortName(sched::DistClass(d)))) + 8;
    }
    const double room = g.legend.right() - left;
    // The "solid wakeup, hollow balance" note when it fits next to a bar of 150 px.
    const double noteW = fm.horizontalAdvance(QStringLiteral("solid wakeup, hollow balance"));
    if (keyW > 0 && room - keyW - noteW - 24 >= (m_metric == Metric::State ? barW : 150.0)) keyW += noteW;
    if (m_metric != Metric::State && keyW > 0 && room - keyW - 24 < std::min(barW, 150.0)) {
        // Shrink the bar first (down to 150 px), then drop the key.
        barW = std::max(std::min(barW, 150.0), room - keyW - 24);
        if (room - keyW - 24 < 150) keyW = 0;
        barW = std::min(barW, room - 16);
    } else if (m_metric == Metric::State && barW + keyW + 24 > room) {
        keyW = 0;
    } else if (m_metric != Metric::State && keyW > 0) {
        barW = std::min(barW, room - keyW - 24);
    }
    barW = std::max(10.0, std::floor(barW));
    lg.bar = QRectF(left, std::round(g.legend.top() + 3), barW, kLegendBarPx);
    if (keyW > 0) lg.arrows = QRectF(g.legend.right() - keyW, lg.bar.top() - 1, keyW, kLegendBarPx + 2);
    return lg;
}

// ---------------------------------------------------------------------------------------------
// Queries

int TopologyHeatmap::cpuAt(QPointF p) const {
    const Geometry& g = widgetGeometry();
    const auto& cpus = g.layout.cpu;
    for (std::size_t c = 0; c < cpus.size(); ++c)
        if (cpus[c].w > 0 && cpus[c].contains(p.x(), p.y())) return int(c);
    return -1;
}

TopologyHeatmap::ArrowHit TopologyHeatmap::arrowAt(QPointF p, double tolerancePx) const {
    finishRender();
    if (!m_showArrows || !m_snapshot || !m_snapshot->topo || m_arrows.empty()) return {};
    const Geometry& g = widgetGeometry();
    if (g.layout.cpu.empty()) return {};
    // m_arrows is in importance order and painted back to front: the first hit is the topmost.
    for (std::size_t i = 0; i < m_arrows.size(); ++i) {
        const ArrowAgg& a = m_arrows[i];
        const ArrowShape sh = arrowShape(g.layout, a, m_arrowTwoWay[i]);
        if (!sh.visible) continue;
        const double halfPen = std::round(sh.width) / 2;
        if (distanceToSegment(p, sh.p1, sh.shaftEnd) <= halfPen + tolerancePx || distanceToTriangle(p, sh.headPts) <= tolerancePx)
            return {a.from, a.to, a.wakeup, a.count};
    }
    return {};
}

QPointF TopologyHeatmap::cpuCenter(int cpu) const {
    const Geometry& g = widgetGeometry();
    if (cpu < 0 || std::size_t(cpu) >= g.layout.cpu.size()) return {};
    return {g.layout.cpu[std::size_t(cpu)].centerX(), g.layout.cpu[std::size_t(cpu)].centerY()};
}

QRectF TopologyHeatmap::cpuRect(int cpu) const {
    const Geometry& g = widgetGeometry();
    if (cpu < 0 || std::size_t(cpu) >= g.layout.cpu.size()) return {};
    return toQRect(g.layout.cpu[std::size_t(cpu)]);
}

QRectF TopologyHeatmap::legendRect() const { return legendGeometry(widgetGeometry()).bar; }

double TopologyHeatmap::legendValueToX(double v) const {
    const Geometry& g = widgetGeometry();
    const LegendGeom lg = legendGeometry(g);
    if (lg.bar.isEmpty()) return 0;
    if (m_metric == Metric::State) {
        const QFontMetricsF fm(g.smallFont);
        double x = lg.bar.left();
        const int want = std::clamp(int(v), 0, 2);
        for (int k = 0; k < want; ++k) x += 14 + fm.horizontalAdvance(QString::fromLatin1(kindName(sched::CpuKind(k)))) + 12;
        return x + 5;  // centre of the 10 px swatch
    }
    const double top = m_metric == Metric::RqLength ? m_scaleMax : 1024.0;
    return lg.bar.left() + lg.bar.width() * std::clamp(v / top, 0.0, 1.0);
}

QColor TopologyHeatmap::colorFor(const sched::CpuView& v) const {
    switch (m_metric) {
    case Metric::RqLength: return toQColor(colormapAt(m_colormap, double(v.nr_running) / m_scaleMax));
    case Metric::Utilisation: return toQColor(colormapAt(m_colormap, double(v.util) / 1024.0));
    case Metric::State: return toQColor(kindColor(v.kind));
    }
    return {};
}

QSize TopologyHeatmap::sizeHint() const { return {600, 400}; }
QSize TopologyHeatmap::minimumSizeHint() const { return {160, 110}; }

// ---------------------------------------------------------------------------------------------
// Painting

void TopologyHeatmap::paintEvent(QPaintEvent*) {
    finishRender();
    QPainter p(this);
    const double dpr = devicePixelRatioF();
    if (m_frameValid && m_frame.devicePixelRatio() == dpr && m_frame.size() == QSize(int(std::ceil(width() * dpr)), int(std::ceil(height() * dpr)))) {
        p.drawImage(QPointF(0, 0), m_frame);
        return;
    }
    QElapsedTimer t;
    t.start();
    renderImpl(p, rect(), true);
    m_lastPaintMs.store(double(t.nsecsElapsed()) / 1e6, std::memory_order_relaxed);
}

void TopologyHeatmap::render(QPainter& p, const QRect& target) {
    finishRender();
    renderImpl(p, target, target == rect());
}

void TopologyHeatmap::renderImpl(QPainter& p, const QRect& target, bool own) {
    const Geometry& g = geometryFor(target, own);
    p.save();
    p.setClipRect(target);
    const bool raster = blitsCachedImages(p);
    const double dpr = p.device() ? p.device()->devicePixelRatioF() : 1.0;
    if (raster) buildCaches(g, dpr);
    const bool haveSnapshot = m_snapshot && m_snapshot->topo && !g.layout.cpu.empty();
    // Raster: one opaque blit of boxes, cells and CPU numbers, kept up to date cell by cell.
    const bool layered = raster && haveSnapshot && !g.boxes.isNull() && (!g.layout.cpuLabels || !g.labels[0].isNull());
    if (layered) {
        updateCellLayer(g);
        p.drawImage(QPointF(target.topLeft()), g.cells);
    } else if (raster && !g.boxes.isNull()) {
        p.drawImage(QPointF(target.topLeft()), g.boxes);
    } else {
        p.fillRect(target, m_pal.color(QPalette::Window));
    }
    paintTitle(p, g);
    if (!haveSnapshot) {
        p.setPen(m_pal.color(QPalette::WindowText));
        p.drawText(g.map.isValid() ? g.map : QRectF(target), Qt::AlignCenter, tr("no snapshot"));
        p.restore();
        return;
    }
    if (!raster || g.boxes.isNull()) paintBoxes(p, g);
    m_cellsDone = layered;
    paintCells(p, g);
    if (m_showArrows) paintArrows(p, g);
    paintMarks(p, g);
    if (!layered) paintLegend(p, g);
    p.restore();
}

void TopologyHeatmap::buildCaches(const Geometry& g, double dpr) const {
    if (g.cacheDpr == dpr && !g.boxes.isNull()) return;
    const QSize px(int(std::ceil(g.target.width() * dpr)), int(std::ceil(g.target.height() * dpr)));
    if (px.isEmpty() || g.layout.cpu.empty()) return;
    g.cacheDpr = dpr;
    g.cells = QImage();
    g.boxes = QImage(px, QImage::Format_RGB32);  // opaque: blitted with a plain copy
    g.boxes.setDevicePixelRatio(dpr);
    g.boxes.fill(m_pal.color(QPalette::Window));
    {
        QPainter bp(&g.boxes);
        bp.translate(-g.target.x(), -g.target.y());
        paintBoxes(bp, g);
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

void TopologyHeatmap::paintTitle(QPainter& p, const Geometry& g) const {
    if (g.title.height() <= 0) return;
    QFont f = m_font;
    f.setPixelSize(13);
    QFont bold = f;
    bold.setBold(true);
    const QColor fg = m_pal.color(QPalette::WindowText);
    p.setPen(fg);
    QString right;
    if (m_snapshot) right = QStringLiteral("t = ") + msText(m_snapshot->now);
    const double rightW = right.isEmpty() ? 0 : QFontMetricsF(f).horizontalAdvance(right) + 12;
    p.setFont(bold);
    const QRectF tr(g.title.left(), g.title.top(), g.title.width() - rightW, g.title.height());
    p.drawText(tr, Qt::AlignLeft | Qt::AlignVCenter, QFontMetricsF(bold).elidedText(m_title, Qt::ElideRight, std::max(0.0, tr.width())));
    if (!right.isEmpty() && rightW < g.title.width() / 2) {
        p.setFont(f);
        p.drawText(g.title, Qt::AlignRight | Qt::AlignVCenter, right);
    }
}

void TopologyHeatmap::paintBoxes(QPainter& p, const Geometry& g) const {
    const QColor bg = m_pal.color(QPalette::Window);
    const bool dark = bg.lightness() < 128;
    const QColor pkgFill = dark ? bg.lighter(125) : bg.darker(110);
    const QColor llcFill = dark ? bg.lighter(150) : bg.darker(122);
    const QColor coreFill = dark ? bg.lighter(190) : bg.darker(150);
    const QColor outline = dark ? QColor(170, 170, 170) : QColor(110, 110, 110);
    const QColor fg = m_pal.color(QPalette::WindowText);
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

void TopologyHeatmap::updateCellLayer(const Geometry& g) const {
    const HeatmapLayout& L = g.layout;
    const auto& cpus = m_snapshot->cpus;
    if (g.cells.isNull() || g.cells.size() != g.boxes.size()) {
        g.cells = g.boxes.copy();
        g.cells.setDevicePixelRatio(g.boxes.devicePixelRatio());
        g.cellRgb.assign(L.cpu.size(), 0);  // 0 has alpha 0: never a painted (opaque) colour
        g.legendKey.clear();
    }
    const QColor missing = m_pal.color(QPalette::Mid);
    QPainter cp;
    auto begin = [&] {
        if (cp.isActive()) return;
        cp.begin(&g.cells);
        cp.translate(-g.target.x(), -g.target.y());
        cp.setRenderHint(QPainter::Antialiasing, false);
    };
    // The legend changes only with the metric, the colormap and the scale.
    const QString legendKey = QStringLiteral("%1/%2/%3").arg(int(m_metric)).arg(int(m_colormap)).arg(m_scaleMax);
    if (legendKey != g.legendKey) {
        begin();
        cp.fillRect(g.legend, m_pal.color(QPalette::Window));
        paintLegend(cp, g);
        cp.setRenderHint(QPainter::Antialiasing, false);
        g.legendKey = legendKey;
    }
    const double k = g.cacheDpr;
    for (std::size_t c = 0; c < L.cpu.size(); ++c) {
        const QColor col = c < cpus.size() ? colorFor(cpus[c]) : missing;
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

void TopologyHeatmap::paintCells(QPainter& p, const Geometry& g) const {
    const HeatmapLayout& L = g.layout;
    const auto& cpus = m_snapshot->cpus;
    const QColor missing = m_pal.color(QPalette::Mid);
    p.setRenderHint(QPainter::Antialiasing, false);
    if (!m_cellsDone) {
        for (std::size_t c = 0; c < L.cpu.size(); ++c) {
            const QColor col = c < cpus.size() ? colorFor(cpus[c]) : missing;
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
            p.setBrush(textOn(colorFor(cpus[c])));
            p.drawPolygon(tri, 3);
        }
        p.setBrush(Qt::NoBrush);
    }
    if (!L.cpuLabels || g.cpuText.size() != L.cpu.size() || m_cellsDone) return;
    p.setFont(g.labelFont);
    p.setRenderHint(QPainter::Antialiasing, true);
    QColor current;
    for (std::size_t c = 0; c < L.cpu.size(); ++c) {
        const QColor col = c < cpus.size() ? colorFor(cpus[c]) : missing;
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

const QImage& TopologyHeatmap::countPill(int count, int fadeStep, double dpr) const {
    const quint64 key = (quint64(quint32(count)) << 24) | (quint64(fadeStep & 0xff) << 16) | quint64(std::lround(dpr * 100) & 0xffff);
    auto it = m_pills.constFind(key);
    if (it != m_pills.constEnd()) return *it;
    if (m_pills.size() > 1024) m_pills.clear();  // counts churn while running: keep the cache bounded
    const QColor bg = m_pal.color(QPalette::Window);
    const double fade = kPillFade * fadeStep / kPillFadeSteps;
    QFont f = m_font;
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

void TopologyHeatmap::paintArrows(QPainter& p, const Geometry& g) const {
    if (m_arrows.empty()) return;
    const HeatmapLayout& L = g.layout;
    const double cell = std::min(L.cellW, L.cellH);
    const QColor bg = m_pal.color(QPalette::Window);

    // Least important first, so the most counted / newest end up on top.
    struct Drawn {
        ArrowShape sh;
        QColor col;
        double fade;
        std::size_t i;
    };
    std::vector<Drawn> drawn;
    drawn.reserve(m_arrows.size());
    for (std::size_t i = m_arrows.size(); i-- > 0;) {
        const ArrowAgg& a = m_arrows[i];
        ArrowShape sh = arrowShape(L, a, m_arrowTwoWay[i]);
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
        if (m_arrows[d.i].wakeup) {
            const QPointF h = d.sh.n * (std::round(d.sh.width) / 2);
            const QPointF quad[4] = {d.sh.p1 + h, d.sh.shaftEnd + h, d.sh.shaftEnd - h, d.sh.p1 - h};
            p.setPen(Qt::NoPen);
            p.setBrush(d.col);
            p.drawPolygon(quad, 4);
        } else {
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(d.col, 1, Qt::SolidLine, Qt::FlatCap));
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
        const ArrowAgg& a = m_arrows[d.i];
        if (a.count <= 1 || int(d.i) >= kCountLabels || d.sh.len < kMinCountLabelLenPx) continue;
        const int step = int(std::lround(d.fade / kPillFade * kPillFadeSteps));
        const double fade = d.fade;
        const QString t = QString::number(a.count);
        const double tw = fm.horizontalAdvance(t) + 6, th = fm.height();
        const QPointF mid = (d.sh.p1 + d.sh.base) / 2 + d.sh.n * (d.sh.width / 2 + th / 2 + 1);
        const QRectF box(mid.x() - tw / 2, mid.y() - th / 2, tw, th);
        if (raster) {
            p.drawImage(QPointF(std::round(box.x()), std::round(box.y())), countPill(a.count, step, dpr));
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

void TopologyHeatmap::paintMarks(QPainter& p, const Geometry& g) const {
    const HeatmapLayout& L = g.layout;
    const int n = int(L.cpu.size());
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setBrush(Qt::NoBrush);
    auto inner = [](const RectF& r, double by) { return QRectF(r.x + by, r.y + by, r.w - 2 * by, r.h - 2 * by); };

    // Selection: a thick black frame with a white inner line, readable on every colour.
    for (int c : m_selection) {
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
    for (std::size_t i = 0; i < m_highlight.size(); ++i) {
        const int c = m_highlight[i];
        if (c < 0 || c >= n || c == m_target) continue;
        const RectF& r = L.cpu[std::size_t(c)];
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setPen(QPen(Qt::black, 2));
        p.drawRect(inner(r, 1));
        p.setPen(QPen(Qt::white, 2, Qt::DashLine));
        p.drawRect(inner(r, 1));
        if (badges) {
            const QString t = QString::number(i + 1);
            const double bw = std::max(bfm.height(), bfm.horizontalAdvance(t) + 4), bh = bfm.height();
            const QRectF box(r.x + 2, r.y + 2, bw, bh);
            p.setRenderHint(QPainter::Antialiasing, true);
            p.setPen(QPen(Qt::black, 1));
            p.setBrush(Qt::white);
            p.drawRoundedRect(box, bh / 2, bh / 2);
            p.setBrush(Qt::NoBrush);
            p.drawText(box, Qt::AlignCenter, t);
        }
    }
    if (m_target >= 0 && m_target < n) {
        const RectF& r = L.cpu[std::size_t(m_target)];
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setPen(QPen(Qt::black, 5, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
        p.drawRect(inner(r, 0.5));
        p.setPen(QPen(chosen, 3, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
        p.drawRect(inner(r, 0.5));
        if (badges) {
            const auto it = std::find(m_highlight.begin(), m_highlight.end(), m_target);
            const QString t = it == m_highlight.end() ? QStringLiteral("\u2713") : QString::number(int(it - m_highlight.begin()) + 1);
            const double bw = std::max(bfm.height(), bfm.horizontalAdvance(t) + 4), bh = bfm.height();
            const QRectF box(r.x + 3, r.y + 3, bw, bh);
            p.setRenderHint(QPainter::Antialiasing, true);
            p.setPen(QPen(Qt::black, 1));
            p.setBrush(chosen);
            p.drawRoundedRect(box, bh / 2, bh / 2);
            p.setBrush(Qt::NoBrush);
            p.drawText(box, Qt::AlignCenter, t);
        }
    }
    // The kernel's choice for a replayed decision: sky blue (Okabe–Ito), inside the chosen frame
    // when both picked the same CPU, with a "K" badge at the bottom right.
    if (m_kernel >= 0 && m_kernel < n) {
        const RectF& r = L.cpu[std::size_t(m_kernel)];
        const QColor kernel = toQColor(Rgb{86, 180, 233});
        const double in = m_kernel == m_target ? 4.5 : 0.5;
        if (r.w > 2 * in + 4 && r.h > 2 * in + 4) {
            p.setRenderHint(QPainter::Antialiasing, false);
            p.setPen(QPen(Qt::black, 5, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
            p.drawRect(inner(r, in));
            p.setPen(QPen(kernel, 3, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
            p.drawRect(inner(r, in));
        }
        if (badges) {
            const QString t = QStringLiteral("K");
            const double bw = std::max(bfm.height(), bfm.horizontalAdvance(t) + 4), bh = bfm.height();
            const QRectF box(r.x + r.w - bw - 3, r.y + r.h - bh - 3, bw, bh);
            p.setRenderHint(QPainter::Antialiasing, true);
            p.setPen(QPen(Qt::black, 1));
            p.setBrush(kernel);
            p.drawRoundedRect(box, bh / 2, bh / 2);
            p.setBrush(Qt::NoBrush);
            p.drawText(box, Qt::AlignCenter, t);
        }
    }
}

void TopologyHeatmap::paintLegend(QPainter& p, const Geometry& g) const {
    const LegendGeom lg = legendGeometry(g);
    if (lg.bar.isEmpty()) return;
    const QColor fg = m_pal.color(QPalette::WindowText);
    const QFontMetricsF fm(g.smallFont);
    p.setFont(g.smallFont);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(fg);
    const QString caption = m_metric == Metric::RqLength      ? QStringLiteral("nr_running")
                            : m_metric == Metric::Utilisation ? QStringLiteral("util_avg")
                                                              : QStringLiteral("state");
    p.drawText(lg.caption, Qt::AlignLeft | Qt::AlignVCenter, caption);

    if (m_metric == Metric::State) {
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
            const Rgb c = colormapAt(m_colormap, (i + 0.5) / w);
            strip.setPixel(i, 0, qRgb(c.r, c.g, c.b));
        }
        p.drawImage(lg.bar, strip);
        p.setPen(QPen(fg, 1));
        p.drawRect(lg.bar.adjusted(-1, -1, 0, 0));
        // Ticks: integers for nr_running (the top one "N+", the scale clamps), quarters of 1024 for util.
        std::vector<std::pair<double, QString>> ticks;
        if (m_metric == Metric::RqLength) {
            const int top = int(std::floor(m_scaleMax));
            const int step = std::max(1, int(std::ceil(top / 8.0)));
            for (int v = 0; v <= top; v += step) ticks.push_back({double(v), QString::number(v) + (v == top && v == m_scaleMax ? "+" : "")});
        } else {
            for (int v = 0; v <= 1024; v += 256) ticks.push_back({double(v), QString::number(v)});
        }
        const double top = m_metric == Metric::RqLength ? m_scaleMax : 1024.0;
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
        if (lg.arrows.right() - x > 20)
            p.drawText(QRectF(x, lg.arrows.top() - 2, lg.arrows.right() - x + 2, lg.arrows.height() + 4), Qt::AlignLeft | Qt::AlignVCenter,
                       QStringLiteral("solid wakeup, hollow balance"));
    }
}

// ---------------------------------------------------------------------------------------------
// Interaction

QString TopologyHeatmap::tooltipFor(int cpu) const {
    if (!m_snapshot || !m_snapshot->topo || cpu < 0 || cpu >= m_snapshot->topo->nrCpus()) return {};
    const sched::Topology& t = *m_snapshot->topo;
    const sched::CpuInfo& ci = t.cpu(cpu);
    QString s = QStringLiteral("CPU %1 (core %2, LLC %3, S%4").arg(cpu).arg(ci.core).arg(ci.llc).arg(ci.package);
    if (t.nrNodes() > 1) s += QStringLiteral(", node %1").arg(ci.node);
    s += QLatin1Char(')');
    if (std::size_t(cpu) >= m_snapshot->cpus.size()) return s;
    const sched::CpuView& v = m_snapshot->cpus[std::size_t(cpu)];
    QString curr;
    if (v.curr_pid != 0) {
        curr = QStringLiteral("pid %1").arg(v.curr_pid);
        if (v.kind == sched::CpuKind::idle_by_delay) curr += QStringLiteral(" (idle by delay)");
    } else {
        curr = QStringLiteral("idle");
        if (v.cstate >= 0) curr += QStringLiteral(" (C%1)").arg(v.cstate);
        if (v.idle_since_ns >= 0)
            curr += QStringLiteral(" since ") + msText(v.idle_since_ns) + QStringLiteral(" (for ") + msText(m_snapshot->now - v.idle_since_ns) +
                    QLatin1Char(')');
    }
    s += QStringLiteral("\ncurr: ") + curr;
    s += QStringLiteral("\nstate: ") + QString::fromLatin1(kindName(v.kind));
    s += QStringLiteral("\nnr_running: %1").arg(v.nr_running);
    s += QStringLiteral("\nutil: %1").arg(v.util);
    s += QStringLiteral("\nclaimed: ") + (v.claimed ? QStringLiteral("yes") : QStringLiteral("no"));
    s += QStringLiteral("\navg nr_running: %1, busy: %2%").arg(double(v.rq_avg), 0, 'f', 2).arg(double(v.busy_frac) * 100, 0, 'f', 1);
    return s;
}

QString TopologyHeatmap::arrowTooltip(const ArrowHit& hit) const {
    finishRender();
    if (hit.from < 0 || hit.to < 0) return {};
    QString s = QStringLiteral("%1 %2 migration%3 CPU %4 \u2192 CPU %5")
                    .arg(hit.count)
                    .arg(hit.wakeup ? QStringLiteral("wakeup") : QStringLiteral("load-balance"))
                    .arg(hit.count == 1 ? QString() : QStringLiteral("s"))
                    .arg(hit.from)
                    .arg(hit.to);
    const auto it = std::find_if(m_arrows.begin(), m_arrows.end(),
                                 [&](const ArrowAgg& a) { return a.from == hit.from && a.to == hit.to && a.wakeup == hit.wakeup; });
    if (it != m_arrows.end()) s += QStringLiteral(" (") + distSentenceName(it->dist) + QLatin1Char(')');
    s += QStringLiteral(" in the last %1 ms").arg(double(m_arrowSpanNs) / 1e6, 0, 'f', 1);
    return s;
}

bool TopologyHeatmap::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        // Arrows are drawn over the CPU boxes: the arrow wins, as for clicks.
        const ArrowHit hit = arrowAt(he->pos(), kArrowPickPx);
        const int cpu = cpuAt(he->pos());
        if (hit.from >= 0) {
            // A small rect: moving off the shaft (onto a CPU) asks for a new tooltip.
            const QRect pick(he->pos() - QPoint(3, 3), QSize(7, 7));
            QToolTip::showText(he->globalPos(), arrowTooltip(hit), this, pick);
        } else if (cpu >= 0) {
            // With arrows on screen, a small rect too, so that reaching an arrow inside the box
            // replaces the CPU's tooltip with the arrow's.
            const bool arrows = m_showArrows && !m_arrows.empty();
            const QRect r = arrows ? QRect(he->pos() - QPoint(3, 3), QSize(7, 7)) : cpuRect(cpu).toAlignedRect();
            QToolTip::showText(he->globalPos(), tooltipFor(cpu), this, r);
        } else {
            QToolTip::hideText();
            e->ignore();
        }
        return true;
    }
    return QWidget::event(e);
}

void TopologyHeatmap::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) {
        QWidget::mousePressEvent(e);
        return;
    }
    // Arrows are drawn over the CPU boxes: a click near one goes to the arrow, not the selection.
    const ArrowHit hit = arrowAt(e->position(), kArrowPickPx);
    if (hit.from >= 0) {
        e->accept();
        emit arrowClicked(hit.from, hit.to, hit.wakeup);
        return;
    }
    const int cpu = cpuAt(e->position());
    QList<int> sel = m_selection;
    if (e->modifiers() & Qt::ControlModifier) {
        if (cpu >= 0) {
            if (sel.contains(cpu)) sel.removeAll(cpu);
            else sel.append(cpu);
            m_anchor = cpu;
        }
    } else if (e->modifiers() & Qt::ShiftModifier) {
        // Extends by CPU number from the last clicked CPU (or adds the one CPU when none).
        if (cpu >= 0) {
            const int from = m_anchor >= 0 ? std::min(m_anchor, cpu) : cpu;
            const int to = m_anchor >= 0 ? std::max(m_anchor, cpu) : cpu;
            for (int c = from; c <= to; ++c)
                if (!sel.contains(c)) sel.append(c);
        }
    } else {
        sel.clear();
        if (cpu >= 0) sel.append(cpu);
        m_anchor = cpu;
    }
    std::sort(sel.begin(), sel.end());
    if (sel != m_selection) {
        m_selection = sel;
        update();
        emit selectionChanged(m_selection);
    }
    e->accept();
}

}  // namespace schedlab
