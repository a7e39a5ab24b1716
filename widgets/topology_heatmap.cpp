// SPDX-License-Identifier: GPL-2.0-or-later
// topology_heatmap.cpp: the topology heatmap's widget: its scene (replaced by every setter), the
// background render of new snapshots, clicks, selection and tooltips. Painting is HeatmapRenderer's.
#include "topology_heatmap.h"

#include "sim/snapshot.h"
#include "text_util.h"

#include <QElapsedTimer>
#include <QEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace schedlab {
namespace {

constexpr double kArrowPickPx = 3;  ///< clicks and tooltips within this of an arrow go to the arrow

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
    auto sc = std::make_shared<HeatmapScene>();
    sc->pal = palette();
    sc->font = font();
    m_scene = std::move(sc);
}

TopologyHeatmap::~TopologyHeatmap() { finishRender(); }

void TopologyHeatmap::finishRender() const { m_render.wait(); }

template <class F>
void TopologyHeatmap::edit(F&& change) {
    finishRender();  // the background render reads the scene being copied (its arrows are made lazily)
    auto sc = std::make_shared<HeatmapScene>(*m_scene);
    change(*sc);
    m_scene = std::move(sc);
    update();
}

void TopologyHeatmap::setAsyncRender(bool on) {
    m_async = on;
    update();
}

void TopologyHeatmap::setSnapshot(std::shared_ptr<const sched::Snapshot> s) {
    finishRender();  // the previous frame's job writes m_frame
    auto sc = std::make_shared<HeatmapScene>(*m_scene);
    const sched::Topology* before = sc->snapshot ? sc->snapshot->topo.get() : nullptr;
    sc->snapshot = std::move(s);
    sc->resetArrows();
    const sched::Topology* after = sc->snapshot ? sc->snapshot->topo.get() : nullptr;
    if (before != after) {
        // A different machine: CPU numbers of the old selection may not exist any more.
        const int n = after ? after->nrCpus() : 0;
        sc->selection.erase(std::remove_if(sc->selection.begin(), sc->selection.end(), [n](int c) { return c >= n; }), sc->selection.end());
    }
    const QRect r = rect();
    const double dpr = devicePixelRatioF();
    if (m_async && isVisible() && !r.isEmpty() && updatesEnabled()) {
        // Aggregating the arrows and painting the frame, off the GUI thread; paintEvent blits it.
        m_scene = sc;
        m_frameScene = sc;
        m_render.run([this, sc, r, dpr] {
            QElapsedTimer t;
            t.start();
            sc->arrows();  // aggregated here, off the GUI thread (it may ask for them too: call_once)
            const QSize px(int(std::ceil(r.width() * dpr)), int(std::ceil(r.height() * dpr)));
            if (m_frame.size() != px || m_frame.devicePixelRatio() != dpr) {
                m_frame = QImage(px, QImage::Format_RGB32);  // opaque: the widget paints every pixel
                m_frame.setDevicePixelRatio(dpr);
            }
            QPainter p(&m_frame);
            m_renderer.render(p, r, true, *sc);
            m_lastPaintMs.store(double(t.nsecsElapsed()) / 1e6, std::memory_order_relaxed);
        });
    } else {
        m_scene = std::move(sc);
    }
    update();
}

void TopologyHeatmap::setMetric(Metric m) {
    if (m != m_scene->metric) edit([m](HeatmapScene& s) { s.metric = m; });
}

void TopologyHeatmap::setScaleMax(double v) {
    if (v > 0 && v != m_scene->scaleMax) edit([v](HeatmapScene& s) { s.scaleMax = v; });
}

void TopologyHeatmap::setColormap(Colormap cm) {
    if (cm != m_scene->colormap) edit([cm](HeatmapScene& s) { s.colormap = cm; });
}

void TopologyHeatmap::setTitle(const QString& title) {
    if (title != m_scene->title) edit([&title](HeatmapScene& s) { s.title = title; });
}

void TopologyHeatmap::setArrowSpanNs(std::int64_t ns) {
    edit([ns](HeatmapScene& s) {
        s.arrowSpanNs = ns;
        s.resetArrows();
    });
}

void TopologyHeatmap::setMaxArrows(int n) {
    edit([n](HeatmapScene& s) {
        s.maxArrows = std::max(0, n);
        s.resetArrows();
    });
}

void TopologyHeatmap::setShowArrows(bool on) {
    if (on != m_scene->showArrows) edit([on](HeatmapScene& s) { s.showArrows = on; });
}

void TopologyHeatmap::setSelection(const QList<int>& cpus) {
    QList<int> sel = cpus;
    std::sort(sel.begin(), sel.end());
    sel.erase(std::unique(sel.begin(), sel.end()), sel.end());
    if (sel != m_scene->selection) edit([&sel](HeatmapScene& s) { s.selection = sel; });
}

void TopologyHeatmap::setHighlight(const std::vector<int>& cpusInOrder) {
    edit([&cpusInOrder](HeatmapScene& s) {
        s.highlight = cpusInOrder;
        s.target = cpusInOrder.empty() ? -1 : cpusInOrder.back();
    });
}

void TopologyHeatmap::setHighlightTarget(int cpu) {
    edit([cpu](HeatmapScene& s) { s.target = cpu; });
}

void TopologyHeatmap::setKernelChoice(int cpu) {
    edit([cpu](HeatmapScene& s) { s.kernel = cpu; });
}

void TopologyHeatmap::resizeEvent(QResizeEvent*) { update(); }

void TopologyHeatmap::changeEvent(QEvent* e) {
    if (e->type() == QEvent::FontChange || e->type() == QEvent::PaletteChange) {
        finishRender();  // the background render uses the renderer's caches
        m_renderer.invalidate();
        edit([this](HeatmapScene& s) {
            s.pal = palette();
            s.font = font();
        });
    }
    QWidget::changeEvent(e);
}

// ---------------------------------------------------------------------------------------------
// Queries: the renderer's geometry for the widget's own rect. The renderer's caches are mutable
// and the background render of the last frame writes them: each query waits for that render first
// (ThreadSanitizer found a mouse hit-test racing with it).

int TopologyHeatmap::cpuAt(QPointF p) const {
    finishRender();
    return m_renderer.cpuAt(rect(), p, *m_scene);
}

TopologyHeatmap::ArrowHit TopologyHeatmap::arrowAt(QPointF p, double tolerancePx) const {
    finishRender();
    return m_renderer.arrowAt(rect(), p, tolerancePx, *m_scene);
}

QPointF TopologyHeatmap::cpuCenter(int cpu) const {
    finishRender();
    return m_renderer.cpuCenter(rect(), cpu, *m_scene);
}

QRectF TopologyHeatmap::cpuRect(int cpu) const {
    finishRender();
    return m_renderer.cpuRect(rect(), cpu, *m_scene);
}

QRectF TopologyHeatmap::legendRect() const {
    finishRender();
    return m_renderer.legendRect(rect(), *m_scene);
}

double TopologyHeatmap::legendValueToX(double v) const {
    finishRender();
    return m_renderer.legendValueToX(rect(), v, *m_scene);
}

QColor TopologyHeatmap::colorFor(const sched::CpuView& v) const { return m_scene->colorFor(v); }

QSize TopologyHeatmap::sizeHint() const { return {600, 400}; }
QSize TopologyHeatmap::minimumSizeHint() const { return {160, 110}; }

// ---------------------------------------------------------------------------------------------
// Painting

void TopologyHeatmap::paintEvent(QPaintEvent*) {
    finishRender();
    QPainter p(this);
    const double dpr = devicePixelRatioF();
    if (m_frameScene == m_scene && m_frame.devicePixelRatio() == dpr &&
        m_frame.size() == QSize(int(std::ceil(width() * dpr)), int(std::ceil(height() * dpr)))) {
        p.drawImage(QPointF(0, 0), m_frame);
        return;
    }
    QElapsedTimer t;
    t.start();
    m_renderer.render(p, rect(), true, *m_scene);
    m_lastPaintMs.store(double(t.nsecsElapsed()) / 1e6, std::memory_order_relaxed);
}

void TopologyHeatmap::render(QPainter& p, const QRect& target) {
    finishRender();
    m_renderer.render(p, target, target == rect(), *m_scene);
}

// ---------------------------------------------------------------------------------------------
// Interaction

QString TopologyHeatmap::tooltipFor(int cpu) const {
    const auto& snap = m_scene->snapshot;
    if (!snap || !snap->topo || cpu < 0 || cpu >= snap->topo->nrCpus()) return {};
    const sched::Topology& t = *snap->topo;
    const sched::CpuInfo& ci = t.cpu(cpu);
    QString s = QStringLiteral("CPU %1 (core %2, LLC %3, S%4").arg(cpu).arg(ci.core).arg(ci.llc).arg(ci.package);
    if (t.nrNodes() > 1) s += QStringLiteral(", node %1").arg(ci.node);
    s += QLatin1Char(')');
    if (std::size_t(cpu) >= snap->cpus.size()) return s;
    const sched::CpuView& v = snap->cpus[std::size_t(cpu)];
    QString curr;
    if (v.curr_pid != 0) {
        curr = QStringLiteral("pid %1").arg(v.curr_pid);
        if (v.kind == sched::CpuKind::idle_by_delay) curr += QStringLiteral(" (idle by delay)");
    } else {
        curr = QStringLiteral("idle");
        if (v.cstate >= 0) curr += QStringLiteral(" (C%1)").arg(v.cstate);
        if (v.idle_since_ns >= 0)
            curr += QStringLiteral(" since ") + simTime(v.idle_since_ns) + QStringLiteral(" (for ") + simTime(snap->now - v.idle_since_ns) +
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
    const HeatmapScene& sc = *m_scene;
    if (hit.from < 0 || hit.to < 0) return {};
    if (hit.timer)
        return QStringLiteral(
                   "%1 sleep timer%2 armed on CPU %3 and fired by CPU %4 (get_nohz_timer_target(): CPU %3 was idle_cpu()) in the last %5 ms")
            .arg(hit.count)
            .arg(hit.count == 1 ? QString() : QStringLiteral("s"))
            .arg(hit.from)
            .arg(hit.to)
            .arg(double(sc.arrowSpanNs) / 1e6, 0, 'f', 1);
    QString s = QStringLiteral("%1 %2 migration%3 CPU %4 \u2192 CPU %5")
                    .arg(hit.count)
                    .arg(hit.wakeup  ? QStringLiteral("wakeup")
                         : hit.proxy ? QStringLiteral("proxy-execution")
                                     : QStringLiteral("load-balance"))
                    .arg(hit.count == 1 ? QString() : QStringLiteral("s"))
                    .arg(hit.from)
                    .arg(hit.to);
    const auto it = std::find_if(sc.arrows().list.begin(), sc.arrows().list.end(), [&](const ArrowAgg& a) {
        return a.from == hit.from && a.to == hit.to && a.wakeup == hit.wakeup && a.proxy == hit.proxy && !a.timer;
    });
    if (it != sc.arrows().list.end()) s += QStringLiteral(" (") + distSentenceName(it->dist) + QLatin1Char(')');
    s += QStringLiteral(" in the last %1 ms").arg(double(sc.arrowSpanNs) / 1e6, 0, 'f', 1);
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
            const bool arrows = m_scene->showArrows && !m_scene->arrows().list.empty();
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
    QList<int> sel = m_scene->selection;
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
    if (sel != m_scene->selection) {
        edit([&sel](HeatmapScene& s) { s.selection = sel; });
        emit selectionChanged(sel);
    }
    e->accept();
}

}  // namespace schedlab
