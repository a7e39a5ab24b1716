// SPDX-License-Identifier: GPL-2.0-or-later
// trace_timeline.cpp: see trace_timeline.h. Binning happens when the view or the width changes,
// never per paint: a cursor move repaints the cached bins.
#include "trace_timeline.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

namespace schedlab {
namespace {

__extension__ using Wide = __int128;  // (t - from) x columns overflows 64 bits for spans of weeks

constexpr int kMargin = 6;  ///< left and right of the strip
constexpr int kStripTop = 2;
constexpr int kTickBandPx = 12;  ///< the disagreement ticks, at the top of the strip
constexpr int kDensityPx = 22;   ///< the decision density, below them
constexpr int kAxisPx = 14;
constexpr int kLegendPx = 15;
constexpr int kLanePx = 5;  ///< the second lane (another trace's disagreements), under the strip

/// ceil(a * b / c) for a, b, c >= 0, c > 0.
std::int64_t mulDivCeil(std::int64_t a, std::int64_t b, std::int64_t c) { return std::int64_t((Wide(a) * b + c - 1) / c); }

/// Trace time (from the first event) as the axis writes it, with as many decimals as `stepNs` needs.
QString axisText(std::int64_t ns, std::int64_t stepNs) {
    int dec = 0;
    for (std::int64_t s = 1'000'000; s > stepNs && dec < 6; s /= 10) ++dec;
    return QStringLiteral("%1 ms").arg(double(ns) / 1e6, 0, 'f', dec);
}

QString msText(std::int64_t ns) { return QStringLiteral("%1 ms").arg(double(ns) / 1e6, 0, 'f', 3); }

}  // namespace

int timelineColumn(std::int64_t t, std::int64_t from, std::int64_t to, int columns) {
    if (columns <= 0 || t < from || t > to) return -1;
    if (to <= from) return 0;
    const Wide c = Wide(t - from) * columns / (to - from);
    return int(std::min<Wide>(c, columns - 1));
}

TimelineBins binTimeline(const std::vector<std::int64_t>& decisionTimes, const std::vector<TimelineMark>& marks, std::int64_t from, std::int64_t to,
                         int columns) {
    TimelineBins b;
    if (columns <= 0) return b;
    b.decisions.assign(std::size_t(columns), 0);
    b.disagreements.assign(std::size_t(columns), {});
    const std::int64_t span = std::max<std::int64_t>(to - from, 1);
    // Column c holds [edge(c), edge(c + 1)), the last one up to `to` included: edge(c) is the first
    // time whose timelineColumn() is c, so both agree on every item.
    auto edge = [&](int c) { return c >= columns ? to + 1 : from + mulDivCeil(c, span, columns); };
    auto lo = std::lower_bound(decisionTimes.begin(), decisionTimes.end(), from);
    auto mlo = std::lower_bound(marks.begin(), marks.end(), from, [](const TimelineMark& m, std::int64_t t) { return m.time < t; });
    for (int c = 0; c < columns; ++c) {
        const std::int64_t e = edge(c + 1);
        const auto hi = std::lower_bound(lo, decisionTimes.end(), e);
        b.decisions[std::size_t(c)] = std::uint32_t(hi - lo);
        b.maxDecisions = std::max(b.maxDecisions, b.decisions[std::size_t(c)]);
        lo = hi;
        for (; mlo != marks.end() && mlo->time < e; ++mlo)
            if (mlo->cls >= 0 && mlo->cls < kDisagreeClasses) ++b.disagreements[std::size_t(c)][std::size_t(mlo->cls)];
    }
    return b;
}

QColor disagreeColor(int cls) {
    switch (sched::DisagreeClass(cls)) {
    case sched::DisagreeClass::different_idle: return QColor(0, 114, 178);   // blue
    case sched::DisagreeClass::sis_util_cutoff: return QColor(230, 159, 0);  // orange
    case sched::DisagreeClass::wake_wide: return QColor(0, 158, 115);        // bluish green
    case sched::DisagreeClass::wake_affine: return QColor(213, 94, 0);       // vermillion
    case sched::DisagreeClass::unexplained: return QColor(204, 121, 167);    // reddish purple
    case sched::DisagreeClass::count_: break;
    }
    return QColor(Qt::black);
}

TraceTimeline::TraceTimeline(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("traceTimeline"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setFocusPolicy(Qt::ClickFocus);  // a click gives the arrow keys to the cursor
    m_scroll = new QScrollBar(Qt::Horizontal, this);
    m_scroll->setObjectName(QStringLiteral("traceTimelineScroll"));
    m_scroll->setToolTip(tr("Pan the zoomed timeline"));
    connect(m_scroll, &QScrollBar::valueChanged, this, [this](int v) {
        const std::int64_t span = m_to - m_from;
        setView(m_t0 + std::int64_t(v) * m_scrollUnit, m_t0 + std::int64_t(v) * m_scrollUnit + span);
    });
    syncScrollBar();
}

QSize TraceTimeline::sizeHint() const {
    return {700, kStripTop + kTickBandPx + kDensityPx + laneExtra() + kAxisPx + kLegendPx + m_scroll->sizeHint().height() + 2};
}

int TraceTimeline::laneExtra() const { return m_laneShown ? kLanePx + 2 : 0; }

void TraceTimeline::setSecondLane(std::vector<TimelineMark> marks, bool shown) {
    std::stable_sort(marks.begin(), marks.end(), [](const TimelineMark& a, const TimelineMark& b) { return a.time < b.time; });
    m_lane = std::move(marks);
    if (m_laneShown != shown) {
        m_laneShown = shown;
        updateGeometry();
    }
    update();
}

QSize TraceTimeline::minimumSizeHint() const { return {300, sizeHint().height()}; }

void TraceTimeline::setSpan(std::int64_t t0, std::int64_t t1) {
    m_t0 = t0;
    m_t1 = std::max(t1, t0 + 1);
    m_times.clear();
    m_marks.clear();
    m_classTotals = {};
    m_gaps.clear();
    m_selected = -1;
    m_cursor = std::clamp(m_cursor, m_t0, m_t1);
    m_from = m_t0;
    m_to = m_t1;
    m_binsValid = false;
    syncScrollBar();
    update();
}

void TraceTimeline::setDecisions(std::vector<std::int64_t> times, std::vector<TimelineMark> marks) {
    std::sort(times.begin(), times.end());  // file order: times may go back across CPUs
    std::stable_sort(marks.begin(), marks.end(), [](const TimelineMark& a, const TimelineMark& b) { return a.time < b.time; });
    m_times = std::move(times);
    m_marks = std::move(marks);
    m_classTotals = {};
    for (const auto& m : m_marks)
        if (m.cls >= 0 && m.cls < kDisagreeClasses) ++m_classTotals[std::size_t(m.cls)];
    m_selected = -1;
    m_binsValid = false;
    update();
}

void TraceTimeline::setGaps(std::vector<std::pair<std::int64_t, std::int64_t>> gaps) {
    m_gaps = std::move(gaps);
    update();
}

void TraceTimeline::setMessage(const QString& text) {
    m_message = text;
    update();
}

void TraceTimeline::setCursorTime(std::int64_t ns) {
    m_cursor = std::clamp(ns, m_t0, m_t1);
    update();
}

void TraceTimeline::setSelectedMark(int index) {
    m_selected = index >= 0 && index < int(m_marks.size()) ? index : -1;
    update();
}

void TraceTimeline::setView(std::int64_t from, std::int64_t to) {
    const std::int64_t full = m_t1 - m_t0;
    const std::int64_t span = std::clamp(to - from, std::min(kMinViewNs, full), full);
    from = std::clamp(from, m_t0, m_t1 - span);
    if (from == m_from && from + span == m_to) return;
    m_from = from;
    m_to = from + span;
    m_binsValid = false;
    syncScrollBar();
    update();
}

void TraceTimeline::zoomAt(double x, double factor) {
    const QRect s = stripRect();
    if (s.width() <= 0 || factor <= 0) return;
    const double frac = std::clamp((x - s.left()) / double(s.width()), 0.0, 1.0);
    const double span = double(m_to - m_from);
    const double anchor = double(m_from) + frac * span;
    const double full = double(m_t1 - m_t0);
    const double next = std::clamp(span / factor, std::min(double(kMinViewNs), full), full);
    const auto from = std::int64_t(std::llround(anchor - frac * next));
    setView(from, from + std::int64_t(std::llround(next)));
}

void TraceTimeline::syncScrollBar() {
    const std::int64_t full = m_t1 - m_t0, span = m_to - m_from;
    m_scrollUnit = std::max<std::int64_t>(1, (full + 999'999'999) / 1'000'000'000);
    const QSignalBlocker block(m_scroll);
    m_scroll->setRange(0, int((full - span) / m_scrollUnit));
    m_scroll->setPageStep(int(std::max<std::int64_t>(1, span / m_scrollUnit)));
    m_scroll->setSingleStep(std::max(1, m_scroll->pageStep() / 10));
    m_scroll->setValue(int((m_from - m_t0) / m_scrollUnit));
    m_scroll->setEnabled(span < full);
}

QRect TraceTimeline::stripRect() const { return QRect(kMargin, kStripTop, std::max(1, width() - 2 * kMargin), kTickBandPx + kDensityPx); }

double TraceTimeline::xForTime(std::int64_t t) const {
    const QRect s = stripRect();
    const int c = timelineColumn(t, m_from, m_to, s.width());
    if (c < 0) return std::numeric_limits<double>::quiet_NaN();
    return s.left() + c + 0.5;
}

std::int64_t TraceTimeline::timeAtX(double x) const {
    const QRect s = stripRect();
    const double frac = std::clamp((x - s.left()) / double(s.width()), 0.0, 1.0);
    return std::clamp(m_from + std::int64_t(std::llround(frac * double(m_to - m_from))), m_from, m_to);
}

int TraceTimeline::markNear(double x, double tolerancePx) const {
    int best = -1;
    double bestD = tolerancePx + 1e-9;
    // Marks are sorted by time and x grows with time: look around the time under x.
    const std::int64_t t = timeAtX(x);
    auto it = std::lower_bound(m_marks.begin(), m_marks.end(), t, [](const TimelineMark& m, std::int64_t v) { return m.time < v; });
    auto consider = [&](std::ptrdiff_t i) {
        const double mx = xForTime(m_marks[std::size_t(i)].time);
        if (std::isnan(mx)) return false;
        const double d = std::abs(mx - x);
        if (d > tolerancePx + 1.0) return false;  // past the tolerance: stop walking this way
        if (d < bestD) {
            bestD = d;
            best = int(i);
        }
        return true;
    };
    for (std::ptrdiff_t i = it - m_marks.begin(); i < std::ptrdiff_t(m_marks.size()); ++i)
        if (!consider(i)) break;
    for (std::ptrdiff_t i = (it - m_marks.begin()) - 1; i >= 0; --i)
        if (!consider(i)) break;
    return best;
}

const TimelineBins& TraceTimeline::bins() const {
    const int cols = stripRect().width();
    const std::array<std::int64_t, 3> key{m_from, m_to, cols};
    if (!m_binsValid || key != m_binsKey) {
        m_bins = binTimeline(m_times, m_marks, m_from, m_to, cols);
        m_binsKey = key;
        m_binsValid = true;
    }
    return m_bins;
}

void TraceTimeline::resizeEvent(QResizeEvent*) {
    const int h = m_scroll->sizeHint().height();
    m_scroll->setGeometry(kMargin, height() - h, std::max(1, width() - 2 * kMargin), h);
    m_binsValid = false;
}

void TraceTimeline::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QPalette& pal = palette();
    const QRect s = stripRect();
    const int tickTop = s.top(), densTop = s.top() + kTickBandPx, bottom = s.bottom() + 1;
    p.fillRect(s, pal.color(QPalette::Base));

    // Gaps: the trace does not know what happened there.
    for (const auto& [a, b] : m_gaps) {
        if (b < m_from || a > m_to) continue;
        const int c0 = timelineColumn(std::max(a, m_from), m_from, m_to, s.width());
        const int c1 = timelineColumn(std::min(b, m_to), m_from, m_to, s.width());
        p.fillRect(QRect(s.left() + c0, s.top(), std::max(1, c1 - c0 + 1), s.height()), QBrush(pal.color(QPalette::Mid), Qt::BDiagPattern));
    }

    const TimelineBins& b = bins();
    const QColor dens = pal.color(QPalette::Base).lightness() < 128 ? QColor(150, 160, 175) : QColor(118, 128, 142);
    for (int c = 0; c < int(b.decisions.size()); ++c) {
        const std::uint32_t n = b.decisions[std::size_t(c)];
        if (!n) continue;
        // sqrt: a column with a few decisions stays visible beside the busiest one.
        const int h = std::max(1, int(std::lround(std::sqrt(double(n) / double(b.maxDecisions)) * (kDensityPx - 1))));
        p.fillRect(QRect(s.left() + c, bottom - h, 1, h), dens);
    }
    // One tick per column holding a disagreement, coloured by its most frequent class; three pixels
    // wide so that a single one shows, the column itself in the middle.
    for (int c = 0; c < int(b.disagreements.size()); ++c) {
        const auto& k = b.disagreements[std::size_t(c)];
        const auto top = std::max_element(k.begin(), k.end());
        if (*top == 0) continue;
        p.fillRect(QRect(s.left() + c - 1, tickTop, 3, kTickBandPx), disagreeColor(int(top - k.begin())));
    }
    if (m_selected >= 0) {
        const double x = xForTime(m_marks[std::size_t(m_selected)].time);
        if (!std::isnan(x)) {
            p.setPen(QPen(pal.color(QPalette::WindowText), 1));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(std::floor(x) - 2.5, tickTop - 0.5, 5, kTickBandPx));
        }
    }
    p.setPen(pal.color(QPalette::Mid));
    p.setBrush(Qt::NoBrush);
    p.drawRect(s.adjusted(0, 0, -1, -1));
    p.drawLine(s.left(), densTop - 1, s.right(), densTop - 1);

    if (m_times.empty() && !m_message.isEmpty()) {
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(s, Qt::AlignCenter, m_message);
    }

    // Cursor.
    const double cx = xForTime(m_cursor);
    if (!std::isnan(cx)) {
        p.setRenderHint(QPainter::Antialiasing, true);
        p.setPen(QPen(QColor(200, 0, 0), 2));
        p.drawLine(QPointF(cx, s.top()), QPointF(cx, bottom));
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(200, 0, 0));
        const QPointF tri[3] = {{cx - 4, double(s.top())}, {cx + 4, double(s.top())}, {cx, double(s.top()) + 5}};
        p.drawPolygon(tri, 3);
        p.setRenderHint(QPainter::Antialiasing, false);
    }

    // Axis: 1-2-5 steps, about 100 px apart, in ms from the first event.
    QFont small = font();
    small.setPixelSize(10);
    p.setFont(small);
    const QFontMetrics fm(small);
    const std::int64_t span = m_to - m_from;
    const double raw = double(span) * 100.0 / std::max(1, s.width());
    const double pow10 = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
    std::int64_t step = std::int64_t(pow10);
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * pow10 >= raw) {
            step = std::max<std::int64_t>(1, std::int64_t(m * pow10));
            break;
        }
    // The second lane: one thin tick per column holding another trace's disagreement.
    if (m_laneShown) {
        const QRect lane(s.left(), bottom + 1, s.width(), kLanePx);
        p.fillRect(lane, pal.color(QPalette::Base));
        int lastCol = -1;
        for (const TimelineMark& m : m_lane) {
            const int c = timelineColumn(m.time, m_from, m_to, s.width());
            if (c < 0 || c == lastCol) continue;
            lastCol = c;
            p.fillRect(QRect(s.left() + c, lane.top(), 2, kLanePx), disagreeColor(m.cls));
        }
        p.setPen(pal.color(QPalette::Mid));
        p.setBrush(Qt::NoBrush);
        p.drawRect(lane.adjusted(0, 0, -1, -1));
    }
    p.setPen(pal.color(QPalette::WindowText));
    const int axisY = bottom + laneExtra();
    const std::int64_t firstRel = ((m_from - m_t0) + step - 1) / step * step;
    int lastRight = -1000;
    for (std::int64_t rel = firstRel; m_t0 + rel <= m_to; rel += step) {
        const double x = xForTime(m_t0 + rel);
        if (std::isnan(x)) continue;
        p.drawLine(QPointF(x, axisY), QPointF(x, axisY + 3));
        const QString t = axisText(rel, step);
        const int w = fm.horizontalAdvance(t);
        int left = int(x) - w / 2;
        left = std::clamp(left, 0, width() - w);
        if (left < lastRight + 6) continue;
        p.drawText(QRect(left, axisY + 2, w, kAxisPx - 2), Qt::AlignCenter, t);
        lastRight = left + w;
    }

    // Legend: what the strip shows, the classes with their counts.
    int x = s.left();
    const int ly = axisY + kAxisPx + 1;
    auto swatch = [&](const QColor& c, const QString& text) {
        p.fillRect(QRect(x, ly + 3, 9, 9), c);
        x += 12;
        p.setPen(pal.color(QPalette::WindowText));
        const int w = fm.horizontalAdvance(text);
        p.drawText(QRect(x, ly, w + 2, kLegendPx - 1), Qt::AlignLeft | Qt::AlignVCenter, text);
        x += w + 12;
    };
    swatch(dens, tr("%1 decisions (density)").arg(m_times.size()));
    for (int c = 0; c < kDisagreeClasses; ++c)
        swatch(disagreeColor(c),
               QStringLiteral("%1 %2").arg(QString::fromLatin1(sched::toString(sched::DisagreeClass(c)))).arg(m_classTotals[std::size_t(c)]));
    if (m_laneShown) {
        p.setPen(pal.color(QPalette::WindowText));
        const QString t = tr("thin lane: B's %1 disagreements").arg(m_lane.size());
        const int w = fm.horizontalAdvance(t);
        p.drawText(QRect(x, ly, w + 2, kLegendPx - 1), Qt::AlignLeft | Qt::AlignVCenter, t);
        x += w + 12;
    }
    if (span < m_t1 - m_t0 && x + 150 < width())
        p.drawText(QRect(x, ly, width() - x - kMargin, kLegendPx - 1), Qt::AlignRight | Qt::AlignVCenter,
                   tr("zoom %1× (double-click: whole trace)").arg(double(m_t1 - m_t0) / double(span), 0, 'f', 1));
}

void TraceTimeline::wheelEvent(QWheelEvent* e) {
    const int d = e->angleDelta().y() ? e->angleDelta().y() : e->angleDelta().x();
    if (!d) return;
    zoomAt(e->position().x(), std::pow(2.0, d / 240.0));  // one notch: x sqrt(2)
    e->accept();
}

void TraceTimeline::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return;
    m_pressed = true;
    m_dragging = false;
    m_pressX = e->position().x();
    m_pressFrom = m_from;
}

void TraceTimeline::mouseMoveEvent(QMouseEvent* e) {
    if (!m_pressed) return;
    const double dx = e->position().x() - m_pressX;
    if (!m_dragging && std::abs(dx) < 4) return;
    if (!m_dragging) setCursor(Qt::ClosedHandCursor);
    m_dragging = true;
    const std::int64_t span = m_to - m_from;
    const auto shift = std::int64_t(std::llround(dx * double(span) / std::max(1, stripRect().width())));
    setView(m_pressFrom - shift, m_pressFrom - shift + span);
}

void TraceTimeline::mouseReleaseEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !m_pressed) return;
    m_pressed = false;
    if (m_dragging) {
        m_dragging = false;
        unsetCursor();
        return;
    }
    const double x = e->position().x();
    if (const int k = markNear(x); k >= 0) emit markClicked(k);
    else emit cursorRequested(timeAtX(x));
}

void TraceTimeline::mouseDoubleClickEvent(QMouseEvent* e) {
    if (e->button() == Qt::LeftButton) resetView();
}

void TraceTimeline::keyPressEvent(QKeyEvent* e) {
    const std::int64_t column = std::max<std::int64_t>(1, (m_to - m_from) / std::max(1, stripRect().width()));
    const std::int64_t step = column * (e->modifiers() & Qt::ShiftModifier ? 10 : 1);
    switch (e->key()) {
    case Qt::Key_Left: emit cursorRequested(std::max(m_t0, m_cursor - step)); break;
    case Qt::Key_Right: emit cursorRequested(std::min(m_t1, m_cursor + step)); break;
    case Qt::Key_Home: emit cursorRequested(m_from); break;
    case Qt::Key_End: emit cursorRequested(m_to); break;
    default: QWidget::keyPressEvent(e); return;
    }
    e->accept();
}

bool TraceTimeline::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const QString t = tooltipAt(he->pos());
        if (t.isEmpty()) QToolTip::hideText();
        else QToolTip::showText(he->globalPos(), t, this);
        return true;
    }
    return QWidget::event(e);
}

QString TraceTimeline::tooltipAt(QPoint pos) const {
    const QRect s = stripRect();
    if (pos.y() > s.bottom() + kAxisPx + kLegendPx) return {};
    QString legend;
    for (int c = 0; c < kDisagreeClasses; ++c)
        legend += QStringLiteral("<br><span style='color:%1'>■</span> %2: %3")
                      .arg(disagreeColor(c).name(), QString::fromLatin1(sched::toString(sched::DisagreeClass(c))))
                      .arg(m_classTotals[std::size_t(c)]);
    const QString help =
        tr("<br><i>Ticks: disagreements with the kernel, by class. Click moves the cursor or opens the "
           "disagreement; wheel zooms, drag pans, double-click shows the whole trace.</i>");
    if (const int k = markNear(pos.x()); k >= 0) {
        const TimelineMark& m = m_marks[std::size_t(k)];
        return tr("<b>disagreement %1 of %2</b> at %3: %4%5")
            .arg(k + 1)
            .arg(m_marks.size())
            .arg(msText(m.time - m_t0), QString::fromLatin1(sched::toString(sched::DisagreeClass(m.cls))), help);
    }
    const int c = pos.x() - s.left();
    const TimelineBins& b = bins();
    if (c < 0 || c >= int(b.decisions.size())) return {};
    const std::int64_t span = std::max<std::int64_t>(m_to - m_from, 1);
    const std::int64_t a = m_from + mulDivCeil(c, span, s.width()), z = m_from + mulDivCeil(c + 1, span, s.width());
    std::uint32_t dis = 0;
    for (auto n : b.disagreements[std::size_t(c)]) dis += n;
    return tr("%1 – %2: %3 decisions, %4 disagreements%5%6")
        .arg(msText(a - m_t0), msText(z - m_t0))
        .arg(b.decisions[std::size_t(c)])
        .arg(dis)
        .arg(legend, help);
}

}  // namespace schedlab
