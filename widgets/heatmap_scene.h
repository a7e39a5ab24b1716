// SPDX-License-Identifier: GPL-2.0-or-later
// heatmap_scene.h: everything one picture of the topology heatmap shows, as an immutable value:
// the snapshot, how CPUs are coloured, the title, the arrows (aggregated from the snapshot's
// migrations), the selection, the marks of an inspected decision, palette and font. The widget
// makes a new scene for every change and a renderer paints a scene, so a render on the thread
// pool never sees a change under it.
#pragma once

#include "heatmap_layout.h"

#include <QColor>
#include <QFont>
#include <QList>
#include <QPalette>
#include <QString>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace sched {
struct Snapshot;
struct CpuView;
}  // namespace sched

namespace schedlab {

/// What colours a CPU box.
enum class HeatmapMetric {
    RqLength,     ///< nr_running on the colormap over 0..scaleMax (clamped above)
    Utilisation,  ///< util_avg on the colormap over 0..1024
    State,        ///< idle / busy / idle_by_delay as categorical kindColor()
};

/// One aggregated migration arrow under a point (see HeatmapRenderer::arrowAt()); from = -1: none.
struct HeatmapArrowHit {
    int from = -1, to = -1;
    bool wakeup = true;  ///< placement (wakeup, fork) vs load balance
    bool proxy = false;  ///< proxy execution's chain or return migration
    int count = 0;       ///< migrations aggregated into the arrow
    bool timer = false;  ///< sleep timers armed on `from` that fire on `to` (get_nohz_timer_target())
};

class HeatmapScene {
public:
    std::shared_ptr<const sched::Snapshot> snapshot;  ///< null: "no snapshot"
    HeatmapMetric metric = HeatmapMetric::RqLength;
    double scaleMax = 4;  ///< top of the RqLength scale
    Colormap colormap = Colormap::Viridis;
    QString title;
    std::int64_t arrowSpanNs = 5'000'000;  ///< migrations this old or newer are drawn
    int maxArrows = 200;
    bool showArrows = true;
    QList<int> selection;        ///< ascending
    std::vector<int> highlight;  ///< the CPUs a decision examined, in order
    int target = -1;             ///< the chosen CPU
    int kernel = -1;             ///< the kernel's choice for the same wakeup
    QPalette pal;
    QFont font;

    /// The colour a CPU with this view gets under the metric and colormap.
    QColor colorFor(const sched::CpuView& v) const;

    /// The arrows, aggregated from the snapshot's migrations in the span (at most maxArrows, in
    /// importance order), with for each whether the reverse arrow of the same kind exists too
    /// (drawn pushed sideways). Computed once, on first use, from any thread (the pooled render
    /// usually); a copy of the scene shares them until resetArrows().
    struct Arrows {
        std::vector<ArrowAgg> list;
        std::vector<bool> twoWay;
    };
    const Arrows& arrows() const;
    /// After a change of snapshot, arrowSpanNs or maxArrows: the arrows are aggregated anew.
    void resetArrows();
    /// The arrow kinds the legend names beyond wakeup and balance: timers moved by
    /// get_nohz_timer_target() among the arrows, and a run with proxy execution.
    bool hasTimerArrows() const;
    bool proxyRun() const;

private:
    struct LazyArrows {
        std::once_flag once;
        Arrows a;
    };
    std::shared_ptr<LazyArrows> m_arrows = std::make_shared<LazyArrows>();
};

}  // namespace schedlab
