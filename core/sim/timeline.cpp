// SPDX-License-Identifier: GPL-2.0-or-later
// timeline.cpp: row folding and 2:1 compaction for RqTimeline.
#include "sim/timeline.h"

#include "util/state_archive.h"

#include <algorithm>
#include <stdexcept>

namespace sched {

RqTimeline::RqTimeline(int ncpus, std::int64_t period_ns, std::size_t max_rows) : m_ncpus(ncpus), m_period(period_ns), m_maxRows(max_rows) {
    if (ncpus < 1 || period_ns <= 0 || max_rows < 2 || max_rows % 2)
        throw std::invalid_argument("RqTimeline: need ncpus >= 1, period > 0 and an even max_rows >= 2");
    m_data.resize(max_rows * std::size_t(ncpus));
    m_times.resize(max_rows);
    m_pending = m_stride;  // no open row
}

void RqTimeline::push(std::int64_t t_ns, const std::uint16_t* values) {
    const auto n = std::size_t(m_ncpus);
    if (m_pending == m_stride) {  // start a new row
        if (m_rows == m_maxRows) compact();
        m_times[m_rows] = t_ns;
        std::copy_n(values, n, m_data.begin() + std::ptrdiff_t(m_rows * n));
        ++m_rows;
        m_pending = 1;
        return;
    }
    std::uint16_t* last = m_data.data() + (m_rows - 1) * n;
    for (std::size_t c = 0; c < n; ++c) last[c] = std::max(last[c], values[c]);
    ++m_pending;
}

void RqTimeline::compact() {
    const auto n = std::size_t(m_ncpus);
    for (std::size_t r = 0; r < m_rows / 2; ++r) {
        m_times[r] = m_times[2 * r];
        for (std::size_t c = 0; c < n; ++c) m_data[r * n + c] = std::max(m_data[2 * r * n + c], m_data[(2 * r + 1) * n + c]);
    }
    m_rows /= 2;
    m_stride *= 2;
    m_pending = m_stride;  // the merged last row is complete
}

}  // namespace sched

namespace sched {

void RqTimeline::state(StateArchive& ar) {
    ar.expect(m_ncpus, "the timeline's CPU count");
    ar.expect(m_maxRows, "the timeline's rows");
    ar(m_period, m_rows, m_stride, m_pending);
    ar.vec(m_data);
    ar.vec(m_times);
    if (ar.loading() && (m_data.size() != m_maxRows * std::size_t(m_ncpus) || m_times.size() != m_maxRows || m_rows > m_maxRows))
        ar.fail("a timeline of the wrong shape");
}

}  // namespace sched
