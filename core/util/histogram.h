// SPDX-License-Identifier: GPL-2.0-or-later
// histogram.h: a log-linear latency histogram (HdrHistogram style) for non-negative
// int64 nanosecond values: exact below 256, then 128 sub-buckets per power of two (<= 0.4% error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sched {

class StateArchive;

class LatencyHistogram {
public:
    static constexpr int kSubBits = 7;                                  ///< 128 sub-buckets per power of two
    static constexpr std::size_t kBucketCount = (64 - kSubBits) * 128;  ///< index of INT64_MAX is the last

    struct Bucket {
        std::int64_t lo, hi;
        std::uint64_t count;
    };  ///< [lo, hi); the top bucket's hi saturates at INT64_MAX

    void record(std::int64_t v, std::uint64_t n = 1);  ///< negative values count as 0
    void merge(const LatencyHistogram& o);
    void clear();
    /// Saves or restores the whole histogram (checkpoints: util/state_archive.h).
    void state(StateArchive& ar);

    [[nodiscard]] std::uint64_t count() const { return m_count; }
    [[nodiscard]] std::int64_t min() const { return m_count ? m_min : 0; }  ///< exact; 0 when empty
    [[nodiscard]] std::int64_t max() const { return m_count ? m_max : 0; }  ///< exact; 0 when empty
    [[nodiscard]] double mean() const;                                      ///< exact sum / count; 0 when empty
    /// p in [0, 100]: the rank-th smallest value, rank = ceil(p% * count) (at least 1), estimated as
    /// the midpoint of its bucket clamped into [min, max]; ranks 1 and count give min and max exactly,
    /// so p0 == min and p100 == max. 0 when empty.
    [[nodiscard]] std::int64_t percentile(double p) const;
    [[nodiscard]] std::vector<Bucket> buckets() const;                           ///< the non-empty buckets, ascending
    [[nodiscard]] std::size_t storedBuckets() const { return m_counts.size(); }  ///< storage size (<= kBucketCount)

    static std::int64_t bucketLow(std::size_t index);
    static std::size_t bucketIndex(std::int64_t v);

private:
    static std::int64_t bucketHigh(std::size_t index);

    std::vector<std::uint64_t> m_counts;  // grown lazily up to the highest bucket used
    std::uint64_t m_count = 0;
    std::int64_t m_min = 0, m_max = 0;
    __extension__ using Sum = unsigned __int128;
    Sum m_sum = 0;  // exact sum of recorded values (2^128 range)
};

}  // namespace sched
