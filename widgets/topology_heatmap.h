// SPDX-License-Identifier: GPL-2.0-or-later
// topology_heatmap.h: the machine as nested package > LLC > core > thread boxes coloured by a
// per-CPU metric, with recent migrations as arrows, a legend, hover tooltips, CPU selection and
// the highlight of the CPUs a wakeup decision examined.
#pragma once

#include "heatmap_layout.h"

#include <QFuture>
#include <QHash>
#include <QList>
#include <QPalette>
#include <QRectF>
#include <QStaticText>
#include <QString>
#include <QImage>
#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace sched {
struct Snapshot;
struct CpuView;
}  // namespace sched

namespace schedlab {

/// Paints one `sched::Snapshot` as a topology heatmap. Layout is computed when the topology or the
/// size changes, not per paint; render() paints into any painter (widget, QImage, SVG, PDF).
///
/// A visible heatmap renders each new snapshot into an image on the global thread pool, started
/// by setSnapshot(), so that heatmaps A and B and the GUI thread's other views work in parallel;
/// paintEvent() waits for that image and blits it. Every other entry point first waits for a
/// render in flight, so the render never sees a member change under it.
class TopologyHeatmap : public QWidget {
    Q_OBJECT

public:
    /// What colours a CPU box.
    enum class Metric {
        RqLength,     ///< nr_running on the colormap over 0..scaleMax() (clamped above)
        Utilisation,  ///< util_avg on the colormap over 0..1024
        State,        ///< idle / busy / idle_by_delay as categorical kindColor()
    };

    explicit TopologyHeatmap(QWidget* parent = nullptr);
    ~TopologyHeatmap() override;

    /// Shows `s` (nullptr = nothing). The layout is recomputed only when the topology changes.
    void setSnapshot(std::shared_ptr<const sched::Snapshot> s);
    const std::shared_ptr<const sched::Snapshot>& snapshot() const { return m_snapshot; }

    void setMetric(Metric m);
    Metric metric() const { return m_metric; }
    /// Top of the RqLength scale (default 4): two heatmaps (A and B) set the same value to be comparable.
    void setScaleMax(double v);
    double scaleMax() const { return m_scaleMax; }
    void setColormap(Colormap cm);
    Colormap colormap() const { return m_colormap; }
    /// Text at the top-left, e.g. "A: baseline".
    void setTitle(const QString& title);
    QString title() const { return m_title; }

    /// Migrations this old (ns before the snapshot's `now`) or newer are drawn; default 5 ms.
    void setArrowSpanNs(std::int64_t ns);
    std::int64_t arrowSpanNs() const { return m_arrowSpanNs; }
    /// At most this many arrows (aggregated per (from, to, kind)); default 200.
    void setMaxArrows(int n);
    int maxArrows() const { return m_maxArrows; }
    void setShowArrows(bool on);
    bool showArrows() const { return m_showArrows; }

    /// Selected CPUs (drawn with a thick outline). Does not emit selectionChanged.
    void setSelection(const QList<int>& cpus);
    QList<int> selection() const { return m_selection; }

    /// The CPUs a wakeup decision examined, in order; drawn outlined with their order number. The
    /// last one becomes the highlight target (the chosen CPU) unless setHighlightTarget() says otherwise.
    void setHighlight(const std::vector<int>& cpusInOrder);
    /// The chosen CPU, drawn in a distinct style; -1 = none.
    void setHighlightTarget(int cpu);
    int highlightTarget() const { return m_target; }
    /// The CPU the kernel chose for the same wakeup (a replayed trace's decision), drawn with a
    /// sky-blue frame and a "K" badge; -1 = none. setHighlight() leaves it alone.
    void setKernelChoice(int cpu);
    int kernelChoice() const { return m_kernel; }

    /// CPU whose box contains `p` (widget coordinates), or -1.
    int cpuAt(QPointF p) const;

    /// One aggregated migration arrow (see aggregateArrows()); from = -1 means "no arrow".
    struct ArrowHit {
        int from = -1, to = -1;
        bool wakeup = true;  ///< placement (wakeup, fork) vs load balance
        int count = 0;       ///< migrations aggregated into the arrow
    };
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
    /// Everything that depends only on the topology, the target size and the font.
    struct Geometry {
        QRect target;
        QRectF title, map, legend;         ///< strips
        HeatmapLayout layout;              ///< in target coordinates
        std::vector<QStaticText> cpuText;  ///< CPU numbers, laid out once
        QFont labelFont, boxFont, smallFont;
        const sched::Topology* topo = nullptr;
        // Raster caches, built on first raster paint (fill + boxes; CPU numbers in white and in
        // black), so a frame only fills the cells, blits labels and strokes the arrows.
        mutable QImage boxes;
        mutable QImage labels[2];
        mutable double cacheDpr = 0;
        /// boxes + the cells and numbers of the last raster frame; a frame repaints only the CPUs
        /// whose colour changed (cellRgb: the colour each cell has in it, 0 = not painted yet).
        mutable QImage cells;
        mutable std::vector<QRgb> cellRgb;
        mutable QString legendKey;  ///< the legend painted into cells (metric, colormap, scale)
    };
    /// Legend geometry for one target.
    struct LegendGeom {
        QRectF bar;      ///< colour bar or swatch row
        QRectF caption;  ///< metric name, left of the bar
        QRectF arrows;   ///< arrow-class key, right of the bar (empty when no room)
    };

    void computeGeometry(Geometry& g, const QRect& target, const QFont& base) const;
    /// Cached geometry for `target`: the widget's own, or the last other target (exports, benchmarks).
    /// `own`: the widget's geometry cache (the widget's rect, as captured by a pooled render).
    const Geometry& geometryFor(const QRect& target, bool own) const;
    /// Paints everything into `p` within `target`; `own` as in geometryFor(). No waiting.
    void renderImpl(QPainter& p, const QRect& target, bool own);
    /// Waits for the pooled render in flight, if any.
    void finishRender() const;
    /// Every state change goes through here first: waits for the render, drops its image.
    void beginChange();
    const Geometry& widgetGeometry() const {
        finishRender();
        return geometryFor(rect(), true);
    }
    LegendGeom legendGeometry(const Geometry& g) const;
    void rebuildArrows();

    void paintTitle(QPainter& p, const Geometry& g) const;
    void paintBoxes(QPainter& p, const Geometry& g) const;
    /// Builds g's raster caches for device pixel ratio `dpr` (no-op when current).
    void buildCaches(const Geometry& g, double dpr) const;
    mutable bool m_cellsDone = false;  ///< this paint blitted cells and numbers from g.cells
    std::atomic<double> m_lastPaintMs{0};
    bool m_async = true;
    mutable QFuture<void> m_job;  ///< the pooled render of m_frame
    QImage m_frame;               ///< the whole widget as the pooled render left it
    bool m_frameValid = false;    ///< m_frame shows the current state (once m_job finished)
    QPalette m_pal;               ///< palette and font as painted: copies, read by the pooled render
    QFont m_font;
    void paintCells(QPainter& p, const Geometry& g) const;
    /// Brings g.cells up to date with the snapshot (raster paints with cached layers only).
    void updateCellLayer(const Geometry& g) const;
    /// Count label of an aggregated arrow, pre-rendered per (count, fade step, dpr).
    const QImage& countPill(int count, int fadeStep, double dpr) const;
    mutable QHash<quint64, QImage> m_pills;
    void paintMarks(QPainter& p, const Geometry& g) const;
    void paintArrows(QPainter& p, const Geometry& g) const;
    void paintLegend(QPainter& p, const Geometry& g) const;

    std::shared_ptr<const sched::Snapshot> m_snapshot;
    Metric m_metric = Metric::RqLength;
    double m_scaleMax = 4;
    Colormap m_colormap = Colormap::Viridis;
    QString m_title;
    std::int64_t m_arrowSpanNs = 5'000'000;
    int m_maxArrows = 200;
    bool m_showArrows = true;
    QList<int> m_selection;
    int m_anchor = -1;  ///< last clicked CPU, the start of a shift-click range
    std::vector<int> m_highlight;
    int m_target = -1;
    int m_kernel = -1;

    std::vector<ArrowAgg> m_arrows;  ///< aggregated from the snapshot when it or the span changes
    /// Per m_arrows entry: the reverse arrow of the same kind exists too (drawn pushed sideways).
    std::vector<bool> m_arrowTwoWay;
    mutable Geometry m_geom;  ///< for the widget's own rect, rebuilt lazily
    mutable bool m_geomValid = false;
    mutable Geometry m_otherGeom;  ///< for the last render() target other than rect()
    mutable bool m_otherGeomValid = false;
};

}  // namespace schedlab
