// SPDX-License-Identifier: GPL-2.0-or-later
// histogram.cpp: bucket arithmetic, percentiles and merging for LatencyHistogram.
#include "util/histogram.h"

#include "util/state_archive.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace sched {

// For v >= 128 with top bit e (v in [2^e, 2^(e+1))), shift = e - 7 and the index is
// shift*128 + (v >> shift), the second term in [128, 256). Below 256 this is simply v.
std::size_t LatencyHistogram::bucketIndex(std::int64_t v) {
    if (v < 256) return v < 0 ? 0 : std::size_t(v);
    const int shift = int(std::bit_width(std::uint64_t(v))) - 1 - kSubBits;
    return std::size_t(shift) * 128 + std::size_t(std::uint64_t(v) >> shift);
}

std::int64_t LatencyHistogram::bucketLow(std::size_t index) {
    if (index < 256) return std::int64_t(index);
    const std::size_t shift = index / 128 - 1;
    return std::int64_t((index % 128 + 128) << shift);
}

std::int64_t LatencyHistogram::bucketHigh(std::size_t index) {
    if (index + 1 >= kBucketCount) return std::numeric_limits<std::int64_t>::max();
    return bucketLow(index + 1);
}

void LatencyHistogram::record(std::int64_t v, std::uint64_t n) {
    if (n == 0) return;
    v = std::max<std::int64_t>(v, 0);
    const std::size_t i = bucketIndex(v);
    if (i >= m_counts.size()) m_counts.resize(i + 1);
    m_counts[i] += n;
    m_min = m_count ? std::min(m_min, v) : v;
    m_max = m_count ? std::max(m_max, v) : v;
    m_count += n;
    m_sum += Sum(v) * n;
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
    if (!o.m_count) return;
    if (o.m_counts.size() > m_counts.size()) m_counts.resize(o.m_counts.size());
    for (std::size_t i = 0; i < o.m_counts.size(); ++i) m_counts[i] += o.m_counts[i];
    m_min = m_count ? std::min(m_min, o.m_min) : o.m_min;
    m_max = m_count ? std::max(m_max, o.m_max) : o.m_max;
    m_count += o.m_count;
    m_sum += o.m_sum;
}

void LatencyHistogram::clear() { *this = LatencyHistogram{}; }

double LatencyHistogram::mean() const { return m_count ? double(static_cast<long double>(m_sum) / static_cast<long double>(m_count)) : 0.0; }

std::int64_t LatencyHistogram::percentile(double p) const {
    if (!m_count) return 0;
    p = std::clamp(p, 0.0, 100.0);
    const auto rank = std::clamp<std::uint64_t>(std::uint64_t(std::ceil(p / 100.0 * double(m_count))), 1, m_count);
    if (rank == 1) return m_min;
    if (rank == m_count) return m_max;
    std::uint64_t cum = 0;
    for (std::size_t i = 0; i < m_counts.size(); ++i) {
        cum += m_counts[i];
        if (cum >= rank) {
            const std::int64_t lo = bucketLow(i), hi = bucketHigh(i);
            return std::clamp(lo + (hi - lo) / 2, m_min, m_max);
        }
    }
    return m_max;  // unreachable: the counts sum to m_count
}

std::vector<LatencyHistogram::Bucket> LatencyHistogram::buckets() const {
    std::vector<Bucket> out;
    for (std::size_t i = 0; i < m_counts.size(); ++i)
        if (m_counts[i]) out.push_back({bucketLow(i), bucketHigh(i), m_counts[i]});
    return out;
}

}  // namespace sched

namespace sched {

void LatencyHistogram::state(StateArchive& ar) {
    ar.vec(m_counts);
    ar(m_count, m_min, m_max);
    auto lo = std::uint64_t(m_sum), hi = std::uint64_t(m_sum >> 64);
    ar(lo, hi);
    m_sum = Sum(hi) << 64 | lo;
}

}  // namespace sched
