// SPDX-License-Identifier: GPL-2.0-or-later
// heatmap_layout.cpp: fitting the machine's nested boxes to a rectangle, the colour tables and the
// arrow aggregation behind the topology heatmap (no Qt, see heatmap_layout.h).
#include "heatmap_layout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

namespace schedlab {
namespace {

// ---------------------------------------------------------------------------------------------
// Layout

/// The machine as a tree, children ordered by id (threads by their index in the core). Presets
/// number SMT siblings far apart on x86 (N and N + ncores), so the tree is built from the CpuInfo
/// ids, never from CPU-number ranges.
struct CoreNode {
    int id = 0;
    std::vector<int> cpus;
};
struct LlcNode {
    int id = 0;
    std::vector<CoreNode> cores;
};
struct PackageNode {
    int id = 0;
    std::vector<LlcNode> llcs;
};

std::vector<PackageNode> buildTree(const sched::Topology& topo) {
    std::map<int, std::map<int, std::map<int, std::vector<std::pair<int, int>>>>> m;
    for (const sched::CpuInfo& c : topo.cpus()) m[c.package][c.llc][c.core].push_back({c.thread, c.cpu});
    std::vector<PackageNode> tree;
    for (auto& [pid, llcs] : m) {
        PackageNode p{pid, {}};
        for (auto& [lid, cores] : llcs) {
            LlcNode l{lid, {}};
            for (auto& [cid, threads] : cores) {
                std::sort(threads.begin(), threads.end());
                CoreNode c{cid, {}};
                for (auto& t : threads) c.cpus.push_back(t.second);
                l.cores.push_back(std::move(c));
            }
            p.llcs.push_back(std::move(l));
        }
        tree.push_back(std::move(p));
    }
    return tree;
}

/// Gaps between siblings and insets inside boxes, per level, in pixels. The first entries are
/// the roomy ones with label strips; later ones trade decoration for cell size.
struct Spacing {
    double pkgGap, pkgPad, pkgHeader;
    double llcGap, llcPad, llcHeader;
    double coreGap, threadGap;
};
constexpr std::array<Spacing, 6> kSpacings{{
    {10, 3, 16, 6, 2, 13, 3, 1},
    {8, 3, 14, 4, 2, 0, 2, 1},
    {6, 2, 13, 3, 1, 0, 2, 1},
    {4, 1, 0, 2, 1, 0, 1, 1},
    {2, 1, 0, 1, 0, 0, 1, 0},
    {0, 0, 0, 0, 0, 0, 0, 0},
}};

/// CPU boxes at least this wide and high are comfortable: the first spacing that reaches it (or
/// comes within 80% of the best any spacing reaches) is taken.
constexpr double kComfortPx = 16;

/// Boxes with a label strip must be this wide for the label ("S1", "LLC 23" in a 10-11 px font);
/// narrower ones would waste the strip, so such grids are not taken with that spacing.
constexpr double kPackageLabelMinPx = 24;
constexpr double kLlcLabelMinPx = 44;

/// Maximal children per level: packages, LLCs per package, cores per LLC, threads per core.
struct Shape {
    std::array<int, 4> n{1, 1, 1, 1};
};

Shape shapeOf(const std::vector<PackageNode>& tree) {
    Shape s;
    s.n[0] = int(tree.size());
    for (const auto& p : tree) {
        s.n[1] = std::max(s.n[1], int(p.llcs.size()));
        for (const auto& l : p.llcs) {
            s.n[2] = std::max(s.n[2], int(l.cores.size()));
            for (const auto& c : l.cores) s.n[3] = std::max(s.n[3], int(c.cpus.size()));
        }
    }
    return s;
}

/// The distinct grid shapes for n children: for every row count, the fewest columns.
std::vector<int> columnChoices(int n) {
    std::vector<int> cols;
    for (int rows = 1; rows <= n; ++rows) {
        int c = (n + rows - 1) / rows;
        if (cols.empty() || cols.back() != c) cols.push_back(c);
    }
    return cols;
}

int rowsFor(int n, int cols) { return (n + cols - 1) / cols; }

/// Largest and squarest wins: the side of the inscribed square, with a small bonus for squareness
/// so that equal squares prefer the less elongated cell.
double cellScore(double w, double h) {
    if (w <= 0 || h <= 0) return -1;
    const double s = std::min(w, h);
    return s * (1 + 0.1 * s / std::max(w, h));
}

struct Fit {
    double score = -1;
    double cw = 0, ch = 0;
    std::array<int, 4> cols{1, 1, 1, 1};
};

/// Gaps and insets actually used for one machine (levels with a single child lose theirs).
struct Levels {
    std::array<double, 4> gap{};     ///< between siblings of level L
    std::array<double, 4> pad{};     ///< inside a level-L box, each side
    std::array<double, 4> header{};  ///< label strip at the top of a level-L box
};

Levels levelsFor(const Spacing& s, const Shape& shape) {
    Levels l;
    l.gap = {s.pkgGap, s.llcGap, s.coreGap, s.threadGap};
    l.pad = {s.pkgPad, s.llcPad, 0, 0};
    l.header = {s.pkgHeader, s.llcHeader, 0, 0};
    if (shape.n[1] == 1) l.pad[1] = l.header[1] = 0;  // the only LLC fills its package: nothing to outline
    return l;
}

/// Best grid choice for the boxes of `level` and below, for children placed in a W x H area.
Fit fitLevel(int level, double W, double H, const Shape& shape, const Levels& lv) {
    Fit best;
    const int n = shape.n[level];
    for (int cols : columnChoices(n)) {
        const int rows = rowsFor(n, cols);
        const double cw = (W - (cols - 1) * lv.gap[level]) / cols;
        const double ch = (H - (rows - 1) * lv.gap[level]) / rows;
        if (cw <= 0 || ch <= 0) continue;
        if (level == 0 && lv.header[0] > 0 && cw < kPackageLabelMinPx) continue;
        if (level == 1 && lv.header[1] > 0 && cw < kLlcLabelMinPx) continue;
        Fit f;
        if (level == 3) {
            f.score = cellScore(cw, ch);
            f.cw = cw;
            f.ch = ch;
        } else {
            f = fitLevel(level + 1, cw - 2 * lv.pad[level], ch - 2 * lv.pad[level] - lv.header[level], shape, lv);
            if (f.score < 0) continue;
        }
        f.cols[level] = cols;
        if (f.score > best.score + 1e-9) best = f;
    }
    return best;
}

bool integral(double v) { return std::abs(v - std::round(v)) < 1e-9; }

/// n boxes in a grid of `cols` columns filling `a` row-major with `gap` between them. Snapped to
/// whole pixels when `a` and `gap` are whole and the boxes are at least 2 px: rounding both edges
/// of every box keeps them ordered (no overlap) and inside `a`.
void placeGrid(const RectF& a, int n, int cols, int count, double gap, std::vector<RectF>& out) {
    const int rows = rowsFor(n, cols);
    const double cw = (a.w - (cols - 1) * gap) / cols;
    const double ch = (a.h - (rows - 1) * gap) / rows;
    const bool snap = integral(a.x) && integral(a.y) && integral(a.w) && integral(a.h) && integral(gap) && cw >= 2 && ch >= 2;
    out.clear();
    for (int i = 0; i < count; ++i) {
        const int c = i % cols, r = i / cols;
        const double x = a.x + c * (cw + gap), y = a.y + r * (ch + gap);
        if (snap) {
            const double x0 = std::round(x), x1 = std::round(x + cw);
            const double y0 = std::round(y), y1 = std::round(y + ch);
            out.push_back({x0, y0, x1 - x0, y1 - y0});
        } else {
            out.push_back({x, y, cw, ch});
        }
    }
}

RectF inset(const RectF& r, double pad, double header) {
    RectF o{r.x + pad, r.y + pad + header, r.w - 2 * pad, r.h - 2 * pad - header};
    if (o.w <= 0 || o.h <= 0) return r;  // never: the fit only accepts positive insides
    return o;
}

int digits(int v) {
    int d = 1;
    while (v >= 10) {
        v /= 10;
        ++d;
    }
    return d;
}

}  // namespace

HeatmapLayout layoutTopology(const sched::Topology& topo, double width, double height) { return layoutTopology(topo, RectF{0, 0, width, height}); }

HeatmapLayout layoutTopology(const sched::Topology& topo, const RectF& areaIn) {
    HeatmapLayout out;
    out.cpu.assign(std::size_t(topo.nrCpus()), RectF{});
    if (topo.nrCpus() == 0 || areaIn.w <= 0 || areaIn.h <= 0) return out;

    // Whole pixels when the area has room for it, so that cells have crisp edges.
    RectF area = areaIn;
    {
        const double x0 = std::ceil(area.x - 1e-9), y0 = std::ceil(area.y - 1e-9);
        const double x1 = std::floor(area.right() + 1e-9), y1 = std::floor(area.bottom() + 1e-9);
        if (x1 - x0 >= 1 && y1 - y0 >= 1) area = {x0, y0, x1 - x0, y1 - y0};
    }

    const std::vector<PackageNode> tree = buildTree(topo);
    const Shape shape = shapeOf(tree);

    // Try every spacing; take the roomiest one whose cells are comfortable, or nearly as large
    // as the best any spacing gives.
    std::array<Fit, kSpacings.size()> fits;
    double bestSide = 0;
    for (std::size_t i = 0; i < kSpacings.size(); ++i) {
        fits[i] = fitLevel(0, area.w, area.h, shape, levelsFor(kSpacings[i], shape));
        if (fits[i].score > 0) bestSide = std::max(bestSide, std::min(fits[i].cw, fits[i].ch));
    }
    std::size_t pick = kSpacings.size() - 1;
    for (std::size_t i = 0; i < kSpacings.size(); ++i) {
        if (fits[i].score <= 0) continue;
        if (std::min(fits[i].cw, fits[i].ch) >= std::min(kComfortPx, 0.8 * bestSide)) {
            pick = i;
            break;
        }
    }
    const Fit& fit = fits[pick];
    const Levels lv = levelsFor(kSpacings[pick], shape);
    out.packageCols = fit.cols[0];
    out.llcCols = fit.cols[1];
    out.coreCols = fit.cols[2];
    out.threadCols = fit.cols[3];
    out.packageHeaderPx = lv.header[0];
    out.llcHeaderPx = lv.header[1];
    out.llcOutlines = shape.n[1] > 1;
    out.coreOutlines = shape.n[3] > 1;

    std::vector<RectF> pkgRects, llcRects, coreRects, cpuRects;
    out.boxes.reserve(tree.size() + std::size_t(topo.nrLlcs() + topo.nrCores() + topo.nrCpus()));
    placeGrid(area, shape.n[0], fit.cols[0], int(tree.size()), lv.gap[0], pkgRects);
    for (std::size_t p = 0; p < tree.size(); ++p) {
        const int pIdx = int(out.boxes.size());
        out.boxes.push_back({LayoutBox::Kind::Package, tree[p].id, pkgRects[p], -1});
        placeGrid(inset(pkgRects[p], lv.pad[0], lv.header[0]), shape.n[1], fit.cols[1], int(tree[p].llcs.size()), lv.gap[1], llcRects);
        for (std::size_t l = 0; l < tree[p].llcs.size(); ++l) {
            const LlcNode& llc = tree[p].llcs[l];
            const int lIdx = int(out.boxes.size());
            out.boxes.push_back({LayoutBox::Kind::Llc, llc.id, llcRects[l], pIdx});
            placeGrid(inset(llcRects[l], lv.pad[1], lv.header[1]), shape.n[2], fit.cols[2], int(llc.cores.size()), lv.gap[2], coreRects);
            for (std::size_t c = 0; c < llc.cores.size(); ++c) {
                const CoreNode& core = llc.cores[c];
                const int cIdx = int(out.boxes.size());
                out.boxes.push_back({LayoutBox::Kind::Core, core.id, coreRects[c], lIdx});
                placeGrid(coreRects[c], shape.n[3], fit.cols[3], int(core.cpus.size()), lv.gap[3], cpuRects);
                for (std::size_t t = 0; t < core.cpus.size(); ++t) {
                    out.boxes.push_back({LayoutBox::Kind::Cpu, core.cpus[t], cpuRects[t], cIdx});
                    out.cpu[std::size_t(core.cpus[t])] = cpuRects[t];
                }
            }
        }
    }

    // The CPU-number font: as large as the smallest box allows (14 px at most), "0.6 em per digit".
    double minW = 1e300, minH = 1e300;
    for (const RectF& r : out.cpu) {
        minW = std::min(minW, r.w);
        minH = std::min(minH, r.h);
    }
    out.cellW = minW;
    out.cellH = minH;
    const int d = digits(topo.nrCpus() - 1);
    const double px = std::min({14.0, minH * 0.6, (minW - 2) / (d * 0.62)});
    out.cpuLabels = px >= 6.5;
    out.labelPx = out.cpuLabels ? px : 0;
    return out;
}

// ---------------------------------------------------------------------------------------------
// Colours

namespace {

// Every 8th entry (0, 8, ..., 248) and the last (255) of the 256-entry tables, rounded to 8 bits.
// viridis: matplotlib's _viridis_data (lib/matplotlib/_cm_listed.py).
constexpr std::array<Rgb, 33> kViridis{{
    {68, 1, 84},    {71, 13, 96},   {72, 24, 106},  {72, 35, 116},  {71, 45, 123},  {69, 55, 129},  {66, 64, 134},  {62, 73, 137},  {59, 82, 139},
    {55, 91, 141},  {51, 99, 141},  {47, 107, 142}, {44, 114, 142}, {41, 122, 142}, {38, 130, 142}, {35, 137, 142}, {33, 145, 140}, {31, 152, 139},
    {31, 160, 136}, {34, 167, 133}, {40, 174, 128}, {50, 182, 122}, {63, 188, 115}, {78, 195, 107}, {94, 201, 98},  {112, 207, 87}, {132, 212, 75},
    {152, 216, 62}, {173, 220, 48}, {194, 223, 35}, {216, 226, 25}, {236, 229, 27}, {253, 231, 37},
}};
// cividis: the table published with Nuñez, Anderton & Renslow, "Optimizing colormaps with
// consideration for color vision deficiency", PLOS ONE 13(7) 2018 (S1 file).
constexpr std::array<Rgb, 33> kCividis{{
    {0, 32, 77},     {0, 38, 90},     {0, 44, 105},    {0, 48, 111},    {6, 54, 110},    {31, 60, 109},   {45, 66, 108},
    {56, 72, 107},   {65, 77, 107},   {74, 83, 107},   {82, 89, 108},   {89, 95, 109},   {97, 100, 111},  {104, 106, 113},
    {111, 112, 115}, {118, 118, 118}, {125, 124, 120}, {132, 130, 121}, {140, 136, 121}, {148, 142, 120}, {156, 149, 119},
    {164, 155, 118}, {173, 162, 116}, {181, 169, 113}, {190, 175, 111}, {198, 182, 107}, {207, 189, 103}, {216, 197, 99},
    {225, 204, 93},  {234, 211, 87},  {243, 219, 79},  {253, 227, 70},  {255, 234, 70},
}};
/// Table position of each anchor: 0, 8, ..., 248, then 255 (the last step is 7 entries).
constexpr double anchorPos(int i) { return i < 32 ? i * 8.0 : 255.0; }

// Okabe & Ito (2008), "Color Universal Design": the eight colours distinguishable under the
// common colour-vision deficiencies.
constexpr Rgb kBlack{0, 0, 0};
constexpr Rgb kOrange{230, 159, 0};
constexpr Rgb kSkyBlue{86, 180, 233};
constexpr Rgb kBluishGreen{0, 158, 115};
constexpr Rgb kYellow{240, 228, 66};
constexpr Rgb kBlue{0, 114, 178};
constexpr Rgb kVermillion{213, 94, 0};
constexpr Rgb kReddishPurple{204, 121, 167};

}  // namespace

Rgb colormapAt(Colormap cm, double t) {
    const auto& lut = cm == Colormap::Cividis ? kCividis : kViridis;
    if (!(t > 0)) return lut.front();  // also NaN
    if (t >= 1) return lut.back();
    const double pos = t * 255.0;
    int i = std::min(31, int(pos / 8.0));
    const double f = (pos - anchorPos(i)) / (anchorPos(i + 1) - anchorPos(i));
    auto mix = [f](std::uint8_t a, std::uint8_t b) { return std::uint8_t(std::lround(a + (b - a) * f)); };
    return {mix(lut[i].r, lut[i + 1].r), mix(lut[i].g, lut[i + 1].g), mix(lut[i].b, lut[i + 1].b)};
}

double relativeLuminance(Rgb c) {
    auto lin = [](std::uint8_t v) {
        const double s = v / 255.0;
        return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

Rgb distColor(sched::DistClass d) {
    switch (d) {
    case sched::DistClass::same_cpu: return kBlack;
    case sched::DistClass::smt: return kBluishGreen;
    case sched::DistClass::llc: return kSkyBlue;
    case sched::DistClass::cross_llc: return kOrange;
    case sched::DistClass::cross_node: return kReddishPurple;
    case sched::DistClass::cross_socket: return kVermillion;
    case sched::DistClass::count_: break;
    }
    return kBlack;
}

Rgb kindColor(sched::CpuKind k) {
    switch (k) {
    case sched::CpuKind::idle: return kBlue;
    case sched::CpuKind::busy: return kYellow;
    case sched::CpuKind::idle_by_delay: return kReddishPurple;
    }
    return kBlack;
}

const char* distShortName(sched::DistClass d) {
    switch (d) {
    case sched::DistClass::same_cpu: return "same";
    case sched::DistClass::smt: return "smt";
    case sched::DistClass::llc: return "llc";
    case sched::DistClass::cross_llc: return "x-llc";
    case sched::DistClass::cross_node: return "x-node";
    case sched::DistClass::cross_socket: return "x-socket";
    case sched::DistClass::count_: break;
    }
    return "?";
}

const char* kindName(sched::CpuKind k) {
    switch (k) {
    case sched::CpuKind::idle: return "idle";
    case sched::CpuKind::busy: return "busy";
    case sched::CpuKind::idle_by_delay: return "idle by delay";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------
// Arrows

std::vector<ArrowAgg> aggregateArrows(const std::vector<sched::MigrationView>& migrations, std::int64_t now, std::int64_t spanNs,
                                      std::size_t maxArrows) {
    std::vector<ArrowAgg> out;
    if (spanNs <= 0 || maxArrows == 0) return out;
    struct Acc {
        ArrowAgg a;
        std::int64_t newest = 0;
    };
    // One record per move in the span, sorted by (from, to, wakeup) and then by input order, so
    // that each group's newest move (ties: the later one in the input) is its last record.
    struct Move {
        std::uint64_t key;
        std::uint32_t index;
    };
    std::vector<Move> moves;
    moves.reserve(migrations.size());
    for (std::size_t i = 0; i < migrations.size(); ++i) {
        const sched::MigrationView& m = migrations[i];
        if (m.time > now || m.time < now - spanNs || m.from == m.to || m.from < 0 || m.to < 0) continue;
        // Placement through select_task_rq (wakeups and forks) vs moves by the load balancer.
        // Kind: 1 placement, 2 proxy execution's chain and return migrations, 3 sleep timers
        // armed elsewhere, 0 load balance.
        const std::uint64_t kind = m.timer                                                                              ? 3
                                   : m.cause == sched::MigrationCause::wakeup || m.cause == sched::MigrationCause::fork ? 1
                                   : m.cause == sched::MigrationCause::proxy                                            ? 2
                                                                                                                        : 0;
        moves.push_back({(std::uint64_t(std::uint32_t(m.from)) << 34) | (std::uint64_t(std::uint32_t(m.to)) << 2) | kind, std::uint32_t(i)});
    }
    std::sort(moves.begin(), moves.end(), [](const Move& x, const Move& y) { return x.key != y.key ? x.key < y.key : x.index < y.index; });
    std::vector<Acc> acc;
    for (std::size_t i = 0; i < moves.size();) {
        Acc a;
        const sched::MigrationView& first = migrations[moves[i].index];
        a.a.from = first.from;
        a.a.to = first.to;
        const std::uint64_t key = moves[i].key;
        a.a.wakeup = (key & 3) == 1;
        a.a.proxy = (key & 3) == 2;
        a.a.timer = (key & 3) == 3;
        for (; i < moves.size() && moves[i].key == key; ++i) {
            const sched::MigrationView& m = migrations[moves[i].index];
            if (a.a.count == 0 || m.time >= a.newest) {
                a.newest = m.time;
                a.a.dist = m.dist;
            }
            ++a.a.count;
        }
        acc.push_back(a);
    }
    std::vector<Acc>& v = acc;
    std::sort(v.begin(), v.end(), [](const Acc& x, const Acc& y) {
        if (x.a.count != y.a.count) return x.a.count > y.a.count;
        if (x.newest != y.newest) return x.newest > y.newest;
        return std::tie(x.a.from, x.a.to, x.a.wakeup, x.a.proxy, x.a.timer) < std::tie(y.a.from, y.a.to, y.a.wakeup, y.a.proxy, y.a.timer);
    });
    if (v.size() > maxArrows) v.resize(maxArrows);
    out.reserve(v.size());
    for (Acc& a : v) {
        a.a.age = std::clamp(double(now - a.newest) / double(spanNs), 0.0, 1.0);
        out.push_back(a.a);
    }
    return out;
}

}  // namespace schedlab
