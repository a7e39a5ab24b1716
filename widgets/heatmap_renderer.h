// SPDX-License-Identifier: GPL-2.0-or-later
// heatmap_renderer.h: paints a HeatmapScene (nested package > LLC > core > thread boxes coloured
// by a per-CPU metric, migration arrows, the marks of a decision, the legend) into any painter,
// and answers what lies under a point. The geometry (boxes, label fonts, pre-laid-out CPU numbers)
// is cached per target size and topology; on a raster painter the boxes, the CPU numbers and the
// cells are cached pixel layers, so a frame repaints only the cells whose colour changed, blits
// the labels and strokes the arrows. Thread-safe: one render or query at a time (a mutex), so a
// render on the thread pool and the GUI thread's hit tests can share one renderer.
#pragma once

#include "heatmap_scene.h"

#include <QFont>
#include <QHash>
#include <QImage>
#include <QRectF>
#include <QStaticText>

#include <mutex>
#include <vector>

class QPainter;

namespace schedlab {

class HeatmapRenderer {
public:
    using Metric = HeatmapMetric;
    using ArrowHit = HeatmapArrowHit;

    /// Paints `sc` into `p` within `target`. `own`: `target` is the widget's own rect (its
    /// geometry and layers are kept apart from those of other targets: exports, benchmarks).
    void render(QPainter& p, const QRect& target, bool own, const HeatmapScene& sc);
    /// Drops every cache (the font or the palette changed).
    void invalidate();

    // What lies where, for a scene painted into the widget's own `target`.
    int cpuAt(const QRect& target, QPointF p, const HeatmapScene& sc) const;
    /// The topmost arrow (painted last) whose shaft or head, as painted, lies within `tolerancePx` of `p`.
    ArrowHit arrowAt(const QRect& target, QPointF p, double tolerancePx, const HeatmapScene& sc) const;
    QPointF cpuCenter(const QRect& target, int cpu, const HeatmapScene& sc) const;
    QRectF cpuRect(const QRect& target, int cpu, const HeatmapScene& sc) const;
    QRectF legendRect(const QRect& target, const HeatmapScene& sc) const;
    double legendValueToX(const QRect& target, double v, const HeatmapScene& sc) const;

private:
    static constexpr int kLegendBarPx = 10;      ///< height of the colour bar
    static constexpr int kLegendBarMaxPx = 280;  ///< widest colour bar
    static QColor toQColor(Rgb c) { return QColor(c.r, c.g, c.b); }

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
        /// After the key: the whole "solid wakeup, hollow balance, dashed timer" note, or where
        /// it does not fit and timer arrows are drawn, a dashed sample and "timer", or nothing.
        enum class Note : std::uint8_t { None, Full, TimerSample } note = Note::None;
    };

    void computeGeometry(Geometry& g, const QRect& target, const QFont& base, const HeatmapScene& sc) const;
    /// Cached geometry for `target` (see render()'s `own`).
    const Geometry& geometryFor(const QRect& target, bool own, const HeatmapScene& sc) const;
    LegendGeom legendGeometry(const Geometry& g, const HeatmapScene& sc) const;
    /// Builds g's raster caches for device pixel ratio `dpr` (no-op when current).
    void buildCaches(const Geometry& g, double dpr, const HeatmapScene& sc) const;
    void paintTitle(QPainter& p, const Geometry& g, const HeatmapScene& sc) const;
    void paintBoxes(QPainter& p, const Geometry& g, const HeatmapScene& sc) const;
    /// Brings g.cells up to date with the snapshot (raster paints with cached layers only).
    void updateCellLayer(const Geometry& g, const HeatmapScene& sc) const;
    void paintCells(QPainter& p, const Geometry& g, const HeatmapScene& sc) const;
    /// Count label of an aggregated arrow, pre-rendered per (count, fade step, dpr).
    const QImage& countPill(int count, int fadeStep, double dpr, const HeatmapScene& sc) const;
    void paintArrows(QPainter& p, const Geometry& g, const HeatmapScene& sc) const;
    void paintMarks(QPainter& p, const Geometry& g, const HeatmapScene& sc) const;
    void paintLegend(QPainter& p, const Geometry& g, const HeatmapScene& sc) const;

    mutable std::mutex m_mutex;
    mutable bool m_cellsDone = false;  ///< this paint blitted cells and numbers from g.cells
    mutable QHash<quint64, QImage> m_pills;
    mutable Geometry m_geom;  ///< for the widget's own rect
    mutable bool m_geomValid = false;
    mutable Geometry m_otherGeom;  ///< for the last other target
    mutable bool m_otherGeomValid = false;
};

}  // namespace schedlab
