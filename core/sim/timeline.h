// SPDX-License-Identifier: GPL-2.0-or-later
// timeline.h: a bounded-memory sampled timeline of per-CPU runqueue lengths. When full it
// halves its resolution (pairs of rows merge by per-CPU max, so spikes survive).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sched {

class StateArchive;

/// Rows are nominally period() ns apart. Each stored row covers `stride` pushes (starting at 1)
/// and holds the per-CPU max over them, timed at its first push. Pushes fold into the last row
/// until it is complete, so the last row may be partial. Starting a new row when max_rows rows are
/// stored first compacts: adjacent pairs merge (max, first time), rows halve, stride and period double.
class RqTimeline {
public:
    /// ncpus >= 1, period_ns > 0, max_rows even and >= 2 (else std::invalid_argument).
    RqTimeline(int ncpus, std::int64_t period_ns, std::size_t max_rows);

    /// One sample of ncpus values taken at t_ns (times should increase).
    void push(std::int64_t t_ns, const std::uint16_t* values);
    /// Saves or restores the rows (checkpoints); the shape (CPUs, period, rows) must match.
    void state(StateArchive& ar);

    [[nodiscard]] int ncpus() const { return m_ncpus; }
    [[nodiscard]] std::size_t rows() const { return m_rows; }
    [[nodiscard]] std::size_t maxRows() const { return m_maxRows; }
    [[nodiscard]] std::int64_t period() const { return m_period * std::int64_t(m_stride); }  ///< ns per stored row
    [[nodiscard]] std::int64_t time(std::size_t r) const { return m_times[r]; }
    [[nodiscard]] std::uint16_t at(std::size_t r, int cpu) const { return m_data[r * std::size_t(m_ncpus) + std::size_t(cpu)]; }
    [[nodiscard]] std::span<const std::uint16_t> row(std::size_t r) const { return {m_data.data() + r * std::size_t(m_ncpus), std::size_t(m_ncpus)}; }

private:
    void compact();

    int m_ncpus;
    std::int64_t m_period;
    std::size_t m_maxRows;
    std::size_t m_rows = 0;
    std::uint64_t m_stride = 1;         // pushes per stored row
    std::uint64_t m_pending = 0;        // pushes folded into the last row so far (== m_stride: complete)
    std::vector<std::uint16_t> m_data;  // max_rows * ncpus, allocated up front
    std::vector<std::int64_t> m_times;  // max_rows
};

}  // namespace sched
