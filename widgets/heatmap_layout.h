// SPDX-License-Identifier: GPL-2.0-or-later
// heatmap_layout.h: the Qt-free maths of the topology heatmap: nested package > LLC > core > thread
// boxes fitted to a rectangle, colormaps and categorical colours, and migration-arrow aggregation.
#pragma once

#include "sim/metrics.h"
#include "sim/snapshot.h"
#include "topology/topology.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace schedlab {

/// A point in pixels (x right, y down).
struct PointF {
    double x = 0, y = 0;
};

/// An axis-aligned rectangle in pixels (x right, y down); `w` and `h` >= 0.
struct RectF {
    double x = 0, y = 0, w = 0, h = 0;

    double right() const { return x + w; }
    double bottom() const { return y + h; }
    /// True when the point lies in the closed rectangle (edges included).
    bool contains(double px, double py) const { return px >= x && px <= x + w && py >= y && py <= y + h; }
    bool contains(PointF p) const { return contains(p.x, p.y); }
    /// True when `o` lies inside this rectangle, edges may touch; `eps` absorbs rounding.
    bool containsRect(const RectF& o, double eps = 1e-6) const {
        return o.x >= x - eps && o.y >= y - eps && o.right() <= right() + eps && o.bottom() <= bottom() + eps;
    }
    /// True when the interiors overlap (rectangles that only share an edge do not intersect).
    bool intersects(const RectF& o, double eps = 1e-6) const {
        return o.x < right() - eps && x < o.right() - eps && o.y < bottom() - eps && y < o.bottom() - eps;
    }
    double centerX() const { return x + w / 2; }
    double centerY() const { return y + h / 2; }
    PointF center() const { return {centerX(), centerY()}; }
};

/// One box of the nested layout.
struct LayoutBox {
    enum class Kind { Package, Llc, Core, Cpu };
    Kind kind = Kind::Cpu;
    int id = 0;       ///< global id of the object (package, llc, core id from CpuInfo; CPU number)
    RectF r;          ///< the box, in the coordinates of the area given to layoutTopology()
    int parent = -1;  ///< index into HeatmapLayout::boxes, -1 = none (packages)
};

/// Where every CPU and every containing hardware object is drawn.
struct HeatmapLayout {
    std::vector<RectF> cpu;                                          ///< indexed by CPU number
    std::vector<LayoutBox> boxes;                                    ///< parents before children: packages, then per package its LLCs, cores, CPUs
    bool cpuLabels = false;                                          ///< CPU numbers fit in the CPU boxes at `labelPx`
    double labelPx = 0;                                              ///< pixel size of the CPU-number font (0 when !cpuLabels)
    double packageHeaderPx = 0;                                      ///< strip at the top of each package box for its label ("S0"); 0 = no room
    double llcHeaderPx = 0;                                          ///< strip at the top of each LLC box for its label ("LLC 3"); 0 = no room
    bool llcOutlines = false;                                        ///< LLC boxes are worth outlining (more than one LLC in some package)
    bool coreOutlines = false;                                       ///< core boxes group several threads (SMT)
    double cellW = 0, cellH = 0;                                     ///< the (largest) CPU box size
    int packageCols = 1, llcCols = 1, coreCols = 1, threadCols = 1;  ///< chosen grid columns per level
};

/// Fits the machine into `area`: packages in a grid, LLCs in a grid inside each package, cores in a
/// grid inside each LLC, SMT threads side by side / stacked / in a grid inside each core. The grid
/// shapes are chosen to make CPU boxes as large and square as possible; gaps, paddings and label
/// strips shrink (down to none) when the machine is large for the area. Every CPU box has positive
/// size when `area` has, no two CPU boxes overlap, and every box lies inside its parent and `area`.
/// Coordinates are snapped to whole pixels when the boxes are at least a few pixels wide.
HeatmapLayout layoutTopology(const sched::Topology& topo, const RectF& area);
/// Same, for the area (0, 0, width, height).
HeatmapLayout layoutTopology(const sched::Topology& topo, double width, double height);

/// An 8-bit sRGB colour.
struct Rgb {
    std::uint8_t r = 0, g = 0, b = 0;
    friend bool operator==(const Rgb&, const Rgb&) = default;
};

/// Perceptually uniform, colour-vision-deficiency friendly sequential colormaps.
enum class Colormap {
    Viridis,  ///< matplotlib's viridis (van der Walt & Smith), dark purple -> yellow
    Cividis,  ///< cividis (Nuñez, Anderton & Renslow 2018, PLOS ONE), dark blue -> yellow
};

/// Colour of `cm` at `t` in [0, 1] (clamped; NaN gives the low end), interpolated linearly
/// between 33 anchors taken every 8th entry of the published 256-entry tables.
Rgb colormapAt(Colormap cm, double t);

/// Relative luminance (Rec. 709 weights on linearised sRGB), 0 (black) .. 1 (white).
double relativeLuminance(Rgb c);

/// Okabe–Ito colour of a migration distance class: smt bluish green, llc sky blue, cross_llc
/// orange, cross_node reddish purple, cross_socket vermillion; same_cpu (never drawn) black.
Rgb distColor(sched::DistClass d);

/// Okabe–Ito colour of a CPU state: idle blue, busy yellow, idle_by_delay reddish purple.
Rgb kindColor(sched::CpuKind k);

/// Short name of a distance class for legends ("smt", "llc", "x-llc", "x-node", "x-socket").
const char* distShortName(sched::DistClass d);
/// Name of a CPU state for legends ("idle", "busy", "idle by delay").
const char* kindName(sched::CpuKind k);

/// Migrations between one (from, to) pair of one kind, as one arrow.
struct ArrowAgg {
    int from = 0, to = 0;
    int count = 0;                                  ///< migrations aggregated
    double age = 0;                                 ///< of the newest one: 0 = at `now` .. 1 = `spanNs` old
    sched::DistClass dist = sched::DistClass::llc;  ///< of the newest one
    bool wakeup = true;                             ///< placement (wakeup or fork, select_task_rq) vs load balance (periodic, newidle, nohz, active)
    bool proxy = false;                             ///< proxy execution moved a donor (cause proxy; wakeup is false): drawn dotted
    bool timer = false;                             ///< sleep timers get_nohz_timer_target() put on `to` (wakeup is false): drawn dashed
};

/// Aggregates the migrations with now - spanNs <= time <= now by (from, to, wakeup), skipping
/// from == to. Returns at most `maxArrows`, most migrations first, then newest first, then by
/// (from, to, wakeup): the order is deterministic. spanNs <= 0 gives none.
std::vector<ArrowAgg> aggregateArrows(const std::vector<sched::MigrationView>& migrations, std::int64_t now, std::int64_t spanNs,
                                      std::size_t maxArrows);

}  // namespace schedlab
