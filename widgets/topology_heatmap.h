// SPDX-License-Identifier: GPL-2.0-or-later
// topology_heatmap.h: the machine as nested package > LLC > core > thread boxes coloured by a
// per-CPU metric, with recent migrations as arrows, a legend, hover tooltips, CPU selection and
// the highlight of the CPUs a wakeup decision examined.
#pragma once

#include "job_thread.h"
#include "heatmap_renderer.h"
#include "heatmap_scene.h"

#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace schedlab {

/// Shows one `sched::Snapshot` as a topology heatmap. The widget keeps the events (clicks,
/// tooltips, the selection) and an immutable HeatmapScene that every setter replaces; a
/// HeatmapRenderer paints a scene into any painter (widget, QImage, SVG, PDF).
///
/// A visible heatmap renders each new snapshot's scene into an image on the global thread pool,
/// started by setSnapshot(), so that heatmaps A and B and the GUI thread's other views work in
/// parallel; paintEvent() blits that image while it shows the current scene, and paints the
/// current scene itself otherwise. A render holds its own scene: setters never wait for it.
class TopologyHeatmap : public QWidget {
    Q_OBJECT

public:
    using Metric = HeatmapMetric;
    using ArrowHit = HeatmapArrowHit;

    explicit TopologyHeatmap(QWidget* parent = nullptr);
    ~TopologyHeatmap() override;

    /// Shows `s` (nullptr = nothing). The layout is recomputed only when the topology changes.
    void setSnapshot(std::shared_ptr<const sched::Snapshot> s);
    const std::shared_ptr<const sched::Snapshot>& snapshot() const { return m_scene->snapshot; }
    /// What the heatmap shows now.
    std::shared_ptr<const HeatmapScene> scene() const { return m_scene; }

    void setMetric(Metric m);
    Metric metric() const { return m_scene->metric; }
    /// Top of the RqLength scale (default 4): two heatmaps (A and B) set the same value to be comparable.
    void setScaleMax(double v);
    double scaleMax() const { return m_scene->scaleMax; }
    void setColormap(Colormap cm);
    Colormap colormap() const { return m_scene->colormap; }
    /// Text at the top-left, e.g. "A: baseline".
    void setTitle(const QString& title);
    QString title() const { return m_scene->title; }

    /// Migrations this old (ns before the snapshot's `now`) or newer are drawn; default 5 ms.
    void setArrowSpanNs(std::int64_t ns);
    std::int64_t arrowSpanNs() const { return m_scene->arrowSpanNs; }
    /// At most this many arrows (aggregated per (from, to, kind)); default 200.
    void setMaxArrows(int n);
    int maxArrows() const { return m_scene->maxArrows; }
    void setShowArrows(bool on);
    bool showArrows() const { return m_scene->showArrows; }

    /// Selected CPUs (drawn with a thick outline). Does not emit selectionChanged.
    void setSelection(const QList<int>& cpus);
    QList<int> selection() const { return m_scene->selection; }

    /// The CPUs a wakeup decision examined, in order; drawn outlined with their order number. The
    /// last one becomes the highlight target (the chosen CPU) unless setHighlightTarget() says otherwise.
    void setHighlight(const std::vector<int>& cpusInOrder);
    /// The chosen CPU, drawn in a distinct style; -1 = none.
    void setHighlightTarget(int cpu);
    int highlightTarget() const { return m_scene->target; }
    /// The CPU the kernel chose for the same wakeup (a replayed trace's decision), drawn with a
    /// sky-blue frame and a "K" badge; -1 = none. setHighlight() leaves it alone.
    void setKernelChoice(int cpu);
    int kernelChoice() const { return m_scene->kernel; }

    /// CPU whose box contains `p` (widget coordinates), or -1.
    int cpuAt(QPointF p) const;

    /// The topmost arrow (painted last: the most counted / newest) whose shaft or head, as painted
    /// (shaft stroke width and the sideways offset of two-way pairs included), lies within
    /// `tolerancePx` of `p` (widget coordinates, the widget's own geometry). from = -1 when there
    /// is none or arrows are hidden.
    ArrowHit arrowAt(QPointF p, double tolerancePx = 4) const;
    /// Tooltip text of a CPU: its place in the topology and its current state ("" for an unknown CPU).
    QString tooltipFor(int cpu) const;
    /// Tooltip text of an arrow, e.g. "12 wakeup migrations CPU 3 → CPU 17 (same LLC) in the last
    /// 5.0 ms" ("" when hit.from < 0).
    QString arrowTooltip(const ArrowHit& hit) const;
    /// Centre of a CPU's box in widget coordinates (a null point for an unknown CPU).
    QPointF cpuCenter(int cpu) const;
    /// The CPU's box in widget coordinates (empty for an unknown CPU).
    QRectF cpuRect(int cpu) const;
    /// The legend's colour bar (or categorical swatch row) in widget coordinates; empty when hidden.
    QRectF legendRect() const;
    /// x in widget coordinates of metric value `v` on the legend's colour bar (clamped to the bar);
    /// for State, the centre of the swatch of CpuKind(int(v)).
    double legendValueToX(double v) const;
    /// The colour a CPU with this view gets under the current metric and colormap.
    QColor colorFor(const sched::CpuView& v) const;

    /// Paints everything into `p` within `target` (which need not be the widget's rect).
    void render(QPainter& p, const QRect& target);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    /// Wall time (ms) of the last full render of the widget (in the pool or in paintEvent), for
    /// the window's frame pacing.
    double lastPaintMs() const { return m_lastPaintMs.load(std::memory_order_relaxed); }
    /// Render new snapshots on the thread pool (default on); off, paintEvent renders them.
    void setAsyncRender(bool on);

signals:
    /// The user changed the selection (click, ctrl-click, shift-click); CPUs in ascending order.
    void selectionChanged(const QList<int>& cpus);
    /// The user clicked an arrow (within 3 px of its shaft or head); the selection is left alone.
    void arrowClicked(int from, int to, bool wakeup);

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void changeEvent(QEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    bool event(QEvent* e) override;

private:
    /// Replaces the scene with a copy changed by `change`, and repaints.
    template <class F>
    void edit(F&& change);
    /// Waits for the background render in flight, if any (before the next one writes m_frame).
    void finishRender() const;

    std::shared_ptr<const HeatmapScene> m_scene;
    HeatmapRenderer m_renderer;
    int m_anchor = -1;  ///< last clicked CPU, the start of a shift-click range
    std::atomic<double> m_lastPaintMs{0};
    bool m_async = true;
    mutable JobThread m_render;                        ///< renders m_frameScene into m_frame, off the GUI thread
    QImage m_frame;                                    ///< the whole widget as the background render left it
    std::shared_ptr<const HeatmapScene> m_frameScene;  ///< the scene m_frame shows (null: none)
};

}  // namespace schedlab
