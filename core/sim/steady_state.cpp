// SPDX-License-Identifier: GPL-2.0-or-later
// steady_state.cpp: see steady_state.h.
#include "sim/steady_state.h"

#include "util/state_archive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sched {

namespace {
/// The largest deviation from the mean of windows [from, end), relative to that mean.
double spread(const std::vector<SteadyWindow>& w, std::size_t from, double SteadyWindow::*f) {
    double sum = 0;
    for (std::size_t i = from; i < w.size(); ++i) sum += w[i].*f;
    const double mean = sum / double(w.size() - from);
    double dev = 0;
    for (std::size_t i = from; i < w.size(); ++i) dev = std::max(dev, std::abs(w[i].*f - mean));
    if (mean <= 0) return dev > 0 ? 1.0 : 0.0;
    return dev / mean;
}
/// The change from window `from` to the last, relative to their mean (signed).
double trend(const std::vector<SteadyWindow>& w, std::size_t from, double SteadyWindow::*f) {
    const double a = w[from].*f, b = w.back().*f, mean = (a + b) / 2;
    return mean > 0 ? (b - a) / mean : 0.0;
}
}  // namespace

void SteadyState::windDown(std::int64_t t) {
    if (m_windDown < 0) m_windDown = t;
}

void SteadyState::sample(const SteadyCounters& c) {
    if (m_windDown >= 0) return;  // the job is winding down: not steady state any more
    if (!m_have) {
        m_start = m_last = c;
        m_have = true;
        return;
    }
    m_last = c;
    if (c.idle_scan >= 0) m_scanSum += c.idle_scan, m_zeroSum += c.idle_scan_zero, m_scanN++;
    const std::int64_t dt = c.t - m_start.t;
    if (dt < m_o.window_ns) return;
    SteadyWindow w;
    w.t0 = m_start.t;
    w.t1 = c.t;
    const double secs = double(dt) / 1e9;
    w.busy_cpus = (c.busy_cpu_ns - m_start.busy_cpu_ns) / double(dt);
    w.rq_len = (c.rq_len_area - m_start.rq_len_area) / double(dt);
    w.migrations_per_s = double(c.migrations - m_start.migrations) / secs;
    w.switches_per_s = double(c.ctx_switches - m_start.ctx_switches) / secs;
    if (c.progress >= 0 && m_start.progress >= 0) w.progress_per_s = (c.progress - m_start.progress) / secs;
    if (m_scanN > 0) w.nr_idle_scan = m_scanSum / m_scanN, w.scan_zero = m_zeroSum / m_scanN;
    w.placements = c.placements - m_start.placements;
    w.aborts = c.sis_util_aborts - m_start.sis_util_aborts;
    if (w.placements > 0) w.sis_skip = double(w.aborts) / double(w.placements);
    m_scanSum = m_zeroSum = 0;
    m_scanN = 0;
    m_windows.push_back(w);
    m_start = c;
    // Settled already: does this window leave the settled state (well outside its band)? The
    // band is the settling run's means, fixed when it settled: measured against the mean of all
    // settled windows so far, a slow drift moved its own band along and was never left (the seed
    // hackbench's baseline at -l 120000: "steady" from 0.82 s while its migrations fell from 6.0
    // to 2.2 M/s and its busy CPUs rose from 296 to 343 over the next 3.5 s).
    if (m_steadyFrom >= 0) {
        const double band = 1.5 * m_o.tolerance, migrBand = 1.5 * m_o.migration_tolerance;
        const bool out = (m_bandBusy > 0 && std::abs(w.busy_cpus - m_bandBusy) > band * m_bandBusy) ||
                         (m_bandRq > 0 && std::abs(w.rq_len - m_bandRq) > band * m_bandRq) ||
                         (m_bandMigr >= m_o.migration_floor && std::abs(w.migrations_per_s - m_bandMigr) > migrBand * m_bandMigr);
        m_outside = out ? m_outside + 1 : 0;
        if (m_outside >= std::max(1, m_o.leave_windows)) {
            const std::size_t first = m_windows.size() - std::size_t(m_outside);
            m_plateausLeft++;
            m_plateauFrom = m_windows[std::size_t(m_steadyFrom)].t0;
            m_plateauLeft = m_windows[first].t0;
            m_steadyFrom = -1;
            m_searchFrom = first;
            m_outside = 0;
        }
    }
    // Is the run of the last K windows stable? The first such run fixes the start.
    const std::size_t k = std::size_t(std::max(1, m_o.windows));
    if (m_steadyFrom < 0 && m_windows.size() >= m_searchFrom + k) {
        const std::size_t from = m_windows.size() - k;
        double migrMean = 0;
        for (std::size_t i = from; i < m_windows.size(); ++i) migrMean += m_windows[i].migrations_per_s;
        migrMean /= double(k);
        const bool busyOk = spread(m_windows, from, &SteadyWindow::busy_cpus) <= m_o.tolerance;
        const bool rqOk = spread(m_windows, from, &SteadyWindow::rq_len) <= m_o.tolerance;
        const bool migrOk = migrMean < m_o.migration_floor || spread(m_windows, from, &SteadyWindow::migrations_per_s) <= m_o.migration_tolerance;
        // No trend either: a slow ramp stays within the band for a while (first vs last window).
        const bool flat = std::abs(trend(m_windows, from, &SteadyWindow::busy_cpus)) <= m_o.tolerance / 2 &&
                          std::abs(trend(m_windows, from, &SteadyWindow::rq_len)) <= m_o.tolerance / 2;
        if (busyOk && rqOk && migrOk && flat) {
            m_steadyFrom = int(from);
            m_bandBusy = m_bandRq = 0;
            for (std::size_t i = from; i < m_windows.size(); ++i) m_bandBusy += m_windows[i].busy_cpus, m_bandRq += m_windows[i].rq_len;
            m_bandBusy /= double(k);
            m_bandRq /= double(k);
            m_bandMigr = migrMean;
        }
    }
}

SteadyResult SteadyState::result() const {
    SteadyResult r;
    r.windows = int(m_windows.size());
    r.end_ns = m_last.t;
    r.wind_down_ns = m_windDown;
    if (m_windows.empty()) return r;
    r.window_len_ns = m_windows.front().t1 - m_windows.front().t0;
    const std::size_t k = std::min<std::size_t>(m_windows.size(), std::size_t(std::max(1, m_o.windows)));
    const std::size_t lastFrom = m_windows.size() - k;
    r.spread_busy = spread(m_windows, lastFrom, &SteadyWindow::busy_cpus);
    r.spread_rq = spread(m_windows, lastFrom, &SteadyWindow::rq_len);
    r.spread_migr = spread(m_windows, lastFrom, &SteadyWindow::migrations_per_s);
    r.trend_busy = trend(m_windows, lastFrom, &SteadyWindow::busy_cpus);
    r.trend_rq = trend(m_windows, lastFrom, &SteadyWindow::rq_len);
    r.reached = m_steadyFrom >= 0;
    if (r.reached) {  // settled, but does it still drift inside its band?
        const std::size_t from = std::size_t(m_steadyFrom), n = m_windows.size() - from, third = n / 3;
        if (third >= 2) {
            const auto mean = [&](std::size_t a, double SteadyWindow::*f) {
                double sum = 0;
                for (std::size_t i = a; i < a + third; ++i) sum += m_windows[i].*f;
                return sum / double(third);
            };
            const auto drift = [&](double SteadyWindow::*f) {
                const double a = mean(from, f), b = mean(m_windows.size() - third, f);
                return a > 0 ? (b - a) / a : 0.0;
            };
            r.drift_busy = drift(&SteadyWindow::busy_cpus);
            r.drift_rq = drift(&SteadyWindow::rq_len);
            r.drift_migr = drift(&SteadyWindow::migrations_per_s);
            const bool migrCounts = mean(from, &SteadyWindow::migrations_per_s) >= m_o.migration_floor;
            if (std::abs(r.drift_busy) > m_o.tolerance / 2 || std::abs(r.drift_rq) > m_o.tolerance / 2 ||
                (migrCounts && std::abs(r.drift_migr) > m_o.migration_tolerance)) {
                r.drifting = true;
                r.drift_from_ns = m_windows[from].t0;
                r.reached = false;
            }
        }
    }
    r.plateaus_left = m_plateausLeft;
    r.plateau_from_ns = m_plateauFrom;
    r.plateau_left_ns = m_plateauLeft;
    const std::size_t from = r.reached ? std::size_t(m_steadyFrom) : lastFrom;
    r.from_ns = r.reached ? m_windows[from].t0 : -1;
    // Time-weighted averages over the windows from `from` on (the partial window at the end
    // is left out: its length is below the window).
    double T = 0, busy = 0, rq = 0, migr = 0, sw = 0, prog = 0, scan = 0, zero = 0, scanT = 0;
    std::uint64_t pl = 0, ab = 0;  // placements and SIS_UTIL aborts: a ratio of counts, not a mean of ratios
    bool haveProg = true;
    for (std::size_t i = from; i < m_windows.size(); ++i) {
        const SteadyWindow& w = m_windows[i];
        const double d = double(w.t1 - w.t0) / 1e9;
        T += d;
        busy += w.busy_cpus * d;
        rq += w.rq_len * d;
        migr += w.migrations_per_s * d;
        sw += w.switches_per_s * d;
        if (w.progress_per_s < 0) haveProg = false;
        else prog += w.progress_per_s * d;
        if (w.nr_idle_scan >= 0) scan += w.nr_idle_scan * d, zero += w.scan_zero * d, scanT += d;
        pl += w.placements;
        ab += w.aborts;
    }
    if (T > 0) {
        r.busy_cpus = busy / T;
        r.rq_len = rq / T;
        r.migrations_per_s = migr / T;
        r.switches_per_s = sw / T;
        r.progress_per_s = haveProg ? prog / T : -1;
        if (scanT > 0) r.nr_idle_scan = scan / scanT, r.scan_zero = zero / scanT;
    }
    if (pl > 0) r.sis_skip = double(ab) / double(pl);
    return r;
}

std::string describeSteady(const SteadyResult& r, const SteadyStateOptions& o) {
    const std::int64_t winMs = (r.window_len_ns > 0 ? r.window_len_ns : o.window_ns) / 1000000;  // the windows as cut
    // Short enough for a mail's 80 columns after "# patch: ".
    if (r.reached && r.plateaus_left > 0)
        return fmt::format("steady from {:.3f} s (after a plateau {:.2f}-{:.2f} s that it left)", double(r.from_ns) / 1e9,
                           double(r.plateau_from_ns) / 1e9, double(r.plateau_left_ns) / 1e9);
    if (r.reached)
        return fmt::format("steady from {:.3f} s ({} stable {} ms windows: +-{:.0f} %, migr. +-{:.0f} %)", double(r.from_ns) / 1e9, o.windows, winMs,
                           o.tolerance * 100, o.migration_tolerance * 100);
    if (r.drifting)
        return fmt::format("NOT steady: settled at {:.2f} s but drifts: busy CPUs {:+.0f} %, rq {:+.0f} %, migr. {:+.0f} % first to last third",
                           double(r.drift_from_ns) / 1e9, r.drift_busy * 100, r.drift_rq * 100, r.drift_migr * 100);
    if (r.plateaus_left > 0)
        return fmt::format("NOT steady: left its plateau ({:.2f}-{:.2f} s), not settled again", double(r.plateau_from_ns) / 1e9,
                           double(r.plateau_left_ns) / 1e9);
    if (r.windows < o.windows && r.wind_down_ns >= 0)
        return fmt::format("NOT steady: wind-down after {} windows of {} ms ({} stable needed)", r.windows, winMs, o.windows);
    if (r.windows < o.windows) return fmt::format("NOT steady: ended after {} windows of {} ms; {} stable ones needed", r.windows, winMs, o.windows);
    const bool inBand = r.spread_busy <= o.tolerance && r.spread_rq <= o.tolerance &&
                        (r.migrations_per_s < o.migration_floor || r.spread_migr <= o.migration_tolerance);
    if (inBand)  // within the band, but still moving: the trend check failed
        return fmt::format("NOT steady: last {} windows still drift: busy CPUs {:+.0f} %, rq {:+.0f} % first to last (+-{:.0f} % allowed)", o.windows,
                           r.trend_busy * 100, r.trend_rq * 100, o.tolerance / 2 * 100);
    return fmt::format("NOT steady: last {} windows vary: busy CPUs {:.0f} %, rq {:.0f} %, migr. {:.0f} %", o.windows, r.spread_busy * 100,
                       r.spread_rq * 100, r.spread_migr * 100);
}

}  // namespace sched

namespace sched {

namespace {
void countersState(StateArchive& ar, SteadyCounters& c) {
    ar(c.t, c.busy_cpu_ns, c.rq_len_area, c.migrations, c.ctx_switches, c.progress, c.idle_scan, c.idle_scan_zero, c.placements, c.sis_util_aborts);
}
}  // namespace

void SteadyState::state(StateArchive& ar) {
    ar(m_have);
    countersState(ar, m_start);
    countersState(ar, m_last);
    ar.each(m_windows, [](StateArchive& a, SteadyWindow& w) {
        a(w.t0, w.t1, w.busy_cpus, w.rq_len, w.migrations_per_s, w.switches_per_s, w.progress_per_s, w.nr_idle_scan, w.sis_skip, w.scan_zero,
          w.placements, w.aborts);
    });
    ar(m_steadyFrom, m_searchFrom, m_outside, m_bandBusy, m_bandRq, m_bandMigr, m_plateausLeft, m_plateauFrom, m_plateauLeft, m_windDown, m_scanSum,
       m_zeroSum, m_scanN);
}

}  // namespace sched
