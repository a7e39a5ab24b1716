// SPDX-License-Identifier: GPL-2.0-or-later
// flow_view.cpp: see flow_view.h.
#include "flow_view.h"

#include "latency_plot.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QTextDocument>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace schedlab {
namespace {

const sched::DecisionFlow& flow() { return sched::DecisionFlow::get(); }

QString cell(std::uint64_t n, std::uint64_t total) {
    return QStringLiteral("%1 (%2%)").arg(n).arg(total ? 100.0 * double(n) / double(total) : 0.0, 0, 'f', 1);
}

/// The thickest connector (a share of 100 %), in pixels, per side.
constexpr double kMaxStroke = 9.0;

}  // namespace

FlowView::FlowView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    relayout();
}

void FlowView::setCounts(const sched::FlowCounts& a, const sched::FlowCounts* b, const QString& nameA, const QString& nameB) {
    m_a = a;
    m_hasB = b != nullptr;
    if (b) m_b = *b;
    else m_b = {};
    m_nameA = nameA;
    m_nameB = nameB;
    relayout();
}

void FlowView::setDisagreements(const sched::FlowCounts* d) {
    m_hasDis = d != nullptr;
    m_dis = d ? *d : sched::FlowCounts{};
    update();
}

void FlowView::setLit(const std::optional<sched::Decision>& d) {
    m_lit = d ? flow().lit(*d) : std::vector<int>{};
    relayout();  // a lit node is drawn even where no counted decision went
}

void FlowView::setShowAll(bool on) {
    m_showAll = on;
    relayout();
}

void FlowView::setDescription(const QString& text) {
    m_description = text;
    relayout();
}

double FlowView::share(int node, int side) const {
    const sched::FlowCounts& c = side == 0 ? m_a : m_b;
    return c.total ? double(c.node(node)) / double(c.total) : 0.0;
}

double FlowView::connectorWidth(int node, int side) const {
    if (side == 1 && !m_hasB) return 0;
    const double s = share(node, side);
    return s > 0 ? std::max(1.0, kMaxStroke * s) : 0.0;
}

void FlowView::relayout() {
    const auto& nodes = flow().nodes();
    const QFontMetrics fm(font());
    m_rowH = fm.height() + 9;
    m_indent = fm.horizontalAdvance(QLatin1Char('M')) * 3;  // room for the connectors' widths to be seen
    // The description: wrapped to the width the tree and columns take.
    m_rows.clear();
    m_rowOf.assign(nodes.size(), -1);
    m_boxWidth.assign(nodes.size(), 0);
    auto reached = [&](int n) { return m_a.node(n) || (m_hasB && m_b.node(n)) || std::binary_search(m_lit.begin(), m_lit.end(), n); };
    // A node is drawn when reached (or all are asked for); its ancestors then too (they are reached anyway).
    std::vector<char> shown(nodes.size(), 0);
    for (std::size_t n = 0; n < nodes.size(); ++n)
        if (m_showAll || reached(int(n)))
            for (int k = int(n); k >= 0 && !shown[std::size_t(k)]; k = nodes[std::size_t(k)].parent) shown[std::size_t(k)] = 1;
    // The entries always: the diagram starts somewhere even before the first decision.
    for (std::size_t n = 0; n < nodes.size(); ++n)
        if (nodes[n].kind == sched::FlowKind::Entry) shown[n] = 1;
    m_treeW = 0;
    for (int n : flow().order()) {
        if (!shown[std::size_t(n)]) continue;
        m_rowOf[std::size_t(n)] = int(m_rows.size());
        m_rows.push_back(n);
        QString label = QString::fromStdString(nodes[std::size_t(n)].label);
        if (nodes[std::size_t(n)].kind == sched::FlowKind::Entry && n != flow().node("try_to_wake_up"))
            label += QStringLiteral("  → select_task_rq()");
        m_boxWidth[std::size_t(n)] = fm.horizontalAdvance(label) + 14;
        m_treeW = std::max(m_treeW, kMargin + nodes[std::size_t(n)].depth * m_indent + m_boxWidth[std::size_t(n)] + 40);
    }
    const int width = m_treeW + kColW * (m_hasB ? 2 : 1) + (m_hasB ? kChangeW : 0) + kMargin;
    m_descH = 0;
    if (!m_description.isEmpty()) {
        QTextDocument doc;
        doc.setDefaultFont(font());
        doc.setPlainText(m_description);
        doc.setTextWidth(std::max(300, width - 2 * kMargin));
        m_descH = int(std::ceil(doc.size().height())) + 8;
    }
    m_top = kMargin + m_descH + m_rowH;  // the description, then the column heads
    updateGeometry();
    update();
}

QSize FlowView::sizeHint() const {
    const int width = m_treeW + kColW * (m_hasB ? 2 : 1) + (m_hasB ? kChangeW : 0) + kMargin;
    return {width, m_top + int(m_rows.size()) * m_rowH + 2 * m_rowH + kMargin};  // the legend: up to two lines
}

QRect FlowView::rowRect(int node) const {
    if (node < 0 || std::size_t(node) >= m_rowOf.size() || m_rowOf[std::size_t(node)] < 0) return {};
    return {0, m_top + m_rowOf[std::size_t(node)] * m_rowH, width(), m_rowH};
}

QRect FlowView::boxRect(int node) const {
    const QRect r = rowRect(node);
    if (r.isEmpty()) return {};
    const int x = kMargin + flow().nodes()[std::size_t(node)].depth * m_indent;
    return {x, r.top() + 3, m_boxWidth[std::size_t(node)], r.height() - 6};
}

int FlowView::nodeAt(const QPoint& p) const {
    if (p.y() < m_top) return -1;
    const int row = (p.y() - m_top) / m_rowH;
    return row >= 0 && std::size_t(row) < m_rows.size() ? m_rows[std::size_t(row)] : -1;
}

QString FlowView::toolTipFor(int n) const {
    if (n < 0) return {};
    const sched::FlowNode& node = flow().nodes()[std::size_t(n)];
    QString t = QStringLiteral("<b>%1</b><br>%2<br><tt>%3</tt><br>")
                    .arg(QString::fromStdString(node.label).toHtmlEscaped(), QString::fromStdString(node.function).toHtmlEscaped(),
                         QString::fromStdString(node.condition).toHtmlEscaped());
    t += QStringLiteral("%1: %2").arg(m_nameA.toHtmlEscaped(), cell(m_a.node(n), m_a.total));
    if (m_hasB) t += QStringLiteral("<br>%1: %2").arg(m_nameB.toHtmlEscaped(), cell(m_b.node(n), m_b.total));
    if (m_hasDis && m_dis.node(n))
        t += QStringLiteral("<br><span style='color:#b00020'>%1 of them disagree with the kernel</span>").arg(m_dis.node(n));
    if (node.parent >= 0) t += QStringLiteral("<br><i>Click: the decisions behind this edge in the inspector</i>");
    return t;
}

bool FlowView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int n = nodeAt(he->pos());
        if (n >= 0) QToolTip::showText(he->globalPos(), toolTipFor(n), this, rowRect(n));
        else QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

void FlowView::mousePressEvent(QMouseEvent* e) {
    const int n = nodeAt(e->pos());
    if (n < 0 || e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
    const int parent = flow().nodes()[std::size_t(n)].parent;
    if (parent >= 0) emit edgeClicked(flow().edge(parent, n));
}

void FlowView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    p.setRenderHint(QPainter::Antialiasing);
    const auto& nodes = flow().nodes();
    const QFontMetrics fm(font());
    const QColor colA = LatencyPlot::sideColor(0), colB = LatencyPlot::sideColor(1);
    const QColor litFill(0xFF, 0xD5, 0x4F), litEdge(0xF5, 0xA6, 0x23);
    auto isLit = [&](int n) { return std::binary_search(m_lit.begin(), m_lit.end(), n); };

    if (!m_description.isEmpty()) {
        QTextDocument doc;
        doc.setDefaultFont(font());
        doc.setPlainText(m_description);
        doc.setTextWidth(width() - 2 * kMargin);
        p.save();
        p.translate(kMargin, kMargin);
        doc.drawContents(&p);
        p.restore();
        p.setPen(palette().mid().color());
        p.drawLine(kMargin, kMargin + m_descH - 4, width() - kMargin, kMargin + m_descH - 4);
    }
    // Column heads.
    {
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        const int y = kMargin + m_descH;
        p.setPen(palette().text().color());
        p.drawText(QRect(kMargin, y, m_treeW, m_rowH), Qt::AlignVCenter | Qt::AlignLeft, tr("decisions that reached each step"));
        p.setPen(colA);
        p.drawText(QRect(m_treeW, y, kColW - 6, m_rowH), Qt::AlignVCenter | Qt::AlignRight, m_nameA);
        if (m_hasB) {
            p.setPen(colB);
            p.drawText(QRect(m_treeW + kColW, y, kColW - 6, m_rowH), Qt::AlignVCenter | Qt::AlignRight, m_nameB);
            p.setPen(palette().text().color());
            p.drawText(QRect(m_treeW + 2 * kColW, y, kChangeW - 4, m_rowH), Qt::AlignVCenter | Qt::AlignRight, tr("change"));
        }
        p.setFont(font());
    }
    // Zebra rows, lit rows.
    for (std::size_t r = 0; r < m_rows.size(); ++r) {
        const QRect rr(0, m_top + int(r) * m_rowH, width(), m_rowH);
        if (isLit(m_rows[r])) p.fillRect(rr, QColor(0xFF, 0xF4, 0xD0));
        else if (r % 2) p.fillRect(rr, palette().alternateBase());
    }
    // Connectors: a trunk down from each parent, then into each child as wide as its share.
    for (int n : m_rows) {
        const int parent = nodes[std::size_t(n)].parent;
        if (parent < 0 || m_rowOf[std::size_t(parent)] < 0) continue;
        const QRect pb = boxRect(parent), cb = boxRect(n);
        const double x0 = pb.left() + m_indent / 2.0, yc = cb.center().y() + 0.5;
        const bool lit = isLit(n) && isLit(parent);
        p.setPen(QPen(lit ? litEdge : palette().mid().color(), lit ? 3 : 1));
        p.drawLine(QPointF(x0, pb.bottom() + 1), QPointF(x0, yc));
        const double wa = connectorWidth(n, 0), wb = connectorWidth(n, 1);
        if (lit) p.fillRect(QRectF(x0, yc - wa - 3, cb.left() - x0, wa + wb + 6), litEdge);
        if (wa > 0) p.fillRect(QRectF(x0, yc - wa, cb.left() - x0, wa), colA);
        if (wb > 0) p.fillRect(QRectF(x0, yc, cb.left() - x0, wb), colB);
        if (wa == 0 && wb == 0) {
            p.setPen(QPen(palette().mid().color(), 1, Qt::DotLine));
            p.drawLine(QPointF(x0, yc), QPointF(cb.left(), yc));
        }
    }
    // The boxes, labels and counts.
    for (int n : m_rows) {
        const sched::FlowNode& node = nodes[std::size_t(n)];
        const QRect b = boxRect(n);
        const bool reached = m_a.node(n) || (m_hasB && m_b.node(n));
        QColor fill = palette().base().color(), border = palette().mid().color(), text = palette().text().color();
        Qt::PenStyle style = Qt::SolidLine;
        switch (node.kind) {
        case sched::FlowKind::Entry:
            fill = QColor(0x2E, 0x3B, 0x4E);
            text = Qt::white;
            border = fill;
            break;
        case sched::FlowKind::Function: fill = QColor(0xE8, 0xEC, 0xF1); break;
        case sched::FlowKind::Exit: border = QColor(0x55, 0x55, 0x55); break;
        case sched::FlowKind::Variant:
            fill = QColor(0xF3, 0xE8, 0xF8);
            border = QColor(0x7B, 0x3F, 0x98);
            style = Qt::DashLine;
            break;
        }
        if (!reached && !isLit(n) && node.kind != sched::FlowKind::Entry) text = palette().mid().color();
        if (isLit(n)) {
            fill = litFill;
            border = litEdge;
            text = Qt::black;
        }
        p.setPen(QPen(border, isLit(n) ? 2 : 1, style));
        p.setBrush(fill);
        p.drawRoundedRect(QRectF(b).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
        p.setPen(text);
        QString label = QString::fromStdString(node.label);
        if (node.kind == sched::FlowKind::Entry && n != flow().node("try_to_wake_up")) label += QStringLiteral("  → select_task_rq()");
        p.drawText(b.adjusted(7, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
        if (m_hasDis && m_dis.node(n)) {
            const QString badge = QStringLiteral("✕ %1").arg(m_dis.node(n));
            const QRect bb(b.right() + 6, b.top(), fm.horizontalAdvance(badge) + 8, b.height());
            p.setPen(Qt::NoPen);
            p.setBrush(QColor(0xB0, 0x00, 0x20));
            p.drawRoundedRect(bb, 3, 3);
            p.setPen(Qt::white);
            p.drawText(bb, Qt::AlignCenter, badge);
        }
        // Counts: a bar of the share under the number, per side.
        const QRect row = rowRect(n);
        auto column = [&](int x, const sched::FlowCounts& c, const QColor& col) {
            const double s = c.total ? double(c.node(n)) / double(c.total) : 0;
            const QRectF bar(x + 4, row.bottom() - 5, (kColW - 10) * s, 3);
            p.fillRect(bar, col);
            p.setPen(c.node(n) ? palette().text().color() : palette().mid().color());
            p.drawText(QRect(x, row.top(), kColW - 6, row.height() - 3), Qt::AlignVCenter | Qt::AlignRight, cell(c.node(n), c.total));
        };
        column(m_treeW, m_a, colA);
        if (m_hasB) {
            column(m_treeW + kColW, m_b, colB);
            const double d = 100.0 * (share(n, 1) - share(n, 0));
            p.setPen(d > 0.05 ? colB.darker(120) : d < -0.05 ? colA.darker(120) : palette().mid().color());
            p.drawText(QRect(m_treeW + 2 * kColW, row.top(), kChangeW - 4, row.height()), Qt::AlignVCenter | Qt::AlignRight,
                       QStringLiteral("%1%2 pp").arg(d >= 0 ? QStringLiteral("+") : QString()).arg(d, 0, 'f', 1));
        }
    }
    // The legend under the rows.
    const int y = m_top + int(m_rows.size()) * m_rowH + 4;
    p.setPen(palette().text().color());
    QString legend = m_hasB ? tr("connector: A above (blue), B below (orange), as wide as the share") : tr("connector: as wide as the share");
    legend += tr(" · lit: the traced decision · dashed: a patch's mark");
    if (m_hasDis) legend += tr(" · ✕ disagreements with the kernel");
    p.drawText(QRect(kMargin, y, width() - 2 * kMargin, 2 * m_rowH), Qt::AlignTop | Qt::AlignLeft | Qt::TextWordWrap, legend);
}

}  // namespace schedlab
