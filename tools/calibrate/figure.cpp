// SPDX-License-Identifier: GPL-2.0-or-later
// figure.cpp: unavailable figures and order statistics.
#include "figure.h"

#include <algorithm>
#include <cmath>

namespace sched::calibrate {

Figure Figure::unavailable(std::string name, std::string reason) {
    Figure f;
    f.name = std::move(name);
    f.reason = std::move(reason);
    return f;
}

double quantileSorted(const std::vector<double>& sorted, double q) {
    const double pos = q * double(sorted.size() - 1);
    const std::size_t lo = std::size_t(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - double(lo);
    // Clamped: rounding must not put a quantile past its neighbours (min <= p25 <= median ...).
    return std::clamp(sorted[lo] + (sorted[hi] - sorted[lo]) * frac, sorted[lo], sorted[hi]);
}

Summary summarize(std::vector<double> v) {
    Summary s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.count = v.size();
    s.min = v.front();
    s.max = v.back();
    s.p10 = quantileSorted(v, 0.10);
    s.p25 = quantileSorted(v, 0.25);
    s.median = quantileSorted(v, 0.50);
    s.p75 = quantileSorted(v, 0.75);
    s.p90 = quantileSorted(v, 0.90);
    s.p99 = quantileSorted(v, 0.99);
    return s;
}

}  // namespace sched::calibrate
