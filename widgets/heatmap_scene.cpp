// SPDX-License-Identifier: GPL-2.0-or-later
// heatmap_scene.cpp: see heatmap_scene.h.
#include "heatmap_scene.h"

#include "sim/snapshot.h"

#include <algorithm>
#include <tuple>

namespace schedlab {

QColor HeatmapScene::colorFor(const sched::CpuView& v) const {
    auto q = [](Rgb c) { return QColor(c.r, c.g, c.b); };
    QColor col;
    switch (metric) {
    case HeatmapMetric::RqLength: col = q(colormapAt(colormap, double(v.nr_running) / scaleMax)); break;
    case HeatmapMetric::Utilisation: col = q(colormapAt(colormap, double(v.util) / 1024.0)); break;
    case HeatmapMetric::State: col = q(kindColor(v.kind)); break;
    }
    if (!v.outside_masks) return col;
    // Outside every workload's taskset mask: dimmed towards the window's background.
    const QColor bg = pal.color(QPalette::Window);
    return QColor((col.red() + 3 * bg.red()) / 4, (col.green() + 3 * bg.green()) / 4, (col.blue() + 3 * bg.blue()) / 4);
}

void HeatmapScene::resetArrows() { m_arrows = std::make_shared<LazyArrows>(); }

bool HeatmapScene::hasTimerArrows() const {
    const auto& l = arrows().list;
    return std::any_of(l.begin(), l.end(), [](const ArrowAgg& a) { return a.timer; });
}

bool HeatmapScene::proxyRun() const { return snapshot && snapshot->knobs.find("proxy") != std::string::npos; }

const HeatmapScene::Arrows& HeatmapScene::arrows() const {
    std::call_once(m_arrows->once, [this] {
        Arrows& out = m_arrows->a;
        if (!snapshot) return;
        out.list = aggregateArrows(snapshot->migrations, snapshot->now, arrowSpanNs, std::size_t(std::max(0, maxArrows)));
        const int n = snapshot->topo ? snapshot->topo->nrCpus() : 0;
        out.list.erase(
            std::remove_if(out.list.begin(), out.list.end(), [n](const ArrowAgg& a) { return a.from < 0 || a.to < 0 || a.from >= n || a.to >= n; }),
            out.list.end());
        std::vector<std::tuple<int, int, bool, bool, bool>> present;
        present.reserve(out.list.size());
        for (const ArrowAgg& a : out.list) present.emplace_back(a.from, a.to, a.wakeup, a.proxy, a.timer);
        std::sort(present.begin(), present.end());
        out.twoWay.reserve(out.list.size());
        for (const ArrowAgg& a : out.list)
            out.twoWay.push_back(std::binary_search(present.begin(), present.end(), std::make_tuple(a.to, a.from, a.wakeup, a.proxy, a.timer)));
    });
    return m_arrows->a;
}

}  // namespace schedlab
