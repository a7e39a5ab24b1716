// SPDX-License-Identifier: GPL-2.0-or-later
// steady_state.h: when has the simulated machine settled? The engine feeds the
// cumulative counters at each rq-length sample; they are cut into windows of at
// least `window_ns`, and the machine is at steady state from the first window of
// the first run of `windows` consecutive windows whose busy-CPU count, mean
// runqueue length and migration rate each stay within a tolerance of that run's
// mean, with no trend (first and last window within half the tolerance). A state the
// machine then leaves (a plateau: windows well outside its band) was not the steady state:
// the search starts again after it. The headline figures are then measured from there: busy CPUs, migrations
// and context switches per second, and the work rate (the workloads' progress per
// second), whose inverse is the time the whole job takes at the steady rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sched {

class StateArchive;

struct SteadyStateOptions {
    std::int64_t window_ns = 50000000;  ///< 50 ms: about 12 ticks, several balance intervals of an LLC
    int windows = 4;                    ///< consecutive stable windows (200 ms)
    double tolerance = 0.10;            ///< busy CPUs and rq length: within +-10 % of the run's mean
    double migration_tolerance = 0.20;  ///< migrations per second (counts are noisier): +-20 %
    double migration_floor = 1000;      ///< below this many migrations per second the rate counts as stable
    /// After the machine settled, this many consecutive windows whose busy CPUs or rq length lie
    /// more than 1.5 x `tolerance` (migrations: 1.5 x `migration_tolerance`) from the means of
    /// the windows it settled on mean it left that state (a plateau, e.g. one socket busy before
    /// balancing spreads the job over the other, or a slow drift): the search starts again from
    /// the first of them.
    int leave_windows = 2;
};

/// Cumulative counters at one instant.
struct SteadyCounters {
    std::int64_t t = 0;
    double busy_cpu_ns = 0;  ///< sum over CPUs of busy time
    double rq_len_area = 0;  ///< mean over CPUs of nr_running x time
    std::uint64_t migrations = 0;
    std::uint64_t ctx_switches = 0;
    double progress = -1;  ///< fraction of the work done (0..1), -1 unknown
    /// SIS_UTIL (not a stability criterion, reported from the steady state on): the mean over
    /// LLCs of nr_idle_scan at this instant (-1: SIS_UTIL off or no LLC domain), and the
    /// cumulative placements (select_task_rq_fair calls) and those that found it 0 (SIS_UTIL_ABORT).
    double idle_scan = -1;
    double idle_scan_zero = -1;  ///< the fraction of LLCs whose nr_idle_scan is 0 (no scan at all)
    std::uint64_t placements = 0, sis_util_aborts = 0;
};

struct SteadyWindow {
    std::int64_t t0 = 0, t1 = 0;
    double busy_cpus = 0, rq_len = 0, migrations_per_s = 0, switches_per_s = 0;
    double progress_per_s = -1;  ///< -1: no progress counter
    /// Mean of the window's nr_idle_scan samples (-1: none); placements that skipped the scan
    /// for SIS_UTIL, as a fraction of the window's placements (-1: no placement).
    double nr_idle_scan = -1, sis_skip = -1;
    double scan_zero = -1;                     ///< mean of the samples' fraction of LLCs with nr_idle_scan 0
    std::uint64_t placements = 0, aborts = 0;  ///< the window's placements and SIS_UTIL aborts
};

struct SteadyResult {
    bool reached = false;
    std::int64_t from_ns = -1;  ///< start of the steady period
    std::int64_t end_ns = 0;    ///< last sample
    int windows = 0;            ///< complete windows seen
    /// Their length: window_ns rounded up to whole sample periods (60 ms with 50 ms windows and
    /// the engine's 20 ms samples); 0 before the first.
    std::int64_t window_len_ns = 0;
    /// When the job's wind-down began (a task of a workload that holds the run open exited):
    /// no window closes after it. -1: the run ended before any did.
    std::int64_t wind_down_ns = -1;
    // Averages from from_ns to end_ns (when reached), else over the last `windows` windows.
    double busy_cpus = 0, rq_len = 0, migrations_per_s = 0, switches_per_s = 0;
    double progress_per_s = -1;
    /// SIS_UTIL over the same windows: the LLCs' mean nr_idle_scan (sampled at each feed, every
    /// 20 ms in the engine) and the fraction of placements that did not scan (-1: unknown).
    double nr_idle_scan = -1, sis_skip = -1;
    double scan_zero = -1;  ///< the fraction of LLC samples with nr_idle_scan 0
    /// The largest deviation from the mean over the last run of windows, relative to the mean,
    /// per metric (why a run that ended early is not settled).
    double spread_busy = 0, spread_rq = 0, spread_migr = 0;
    /// The change from the first to the last of those windows, relative to their mean (a run
    /// within the band that still drifts is not settled either).
    double trend_busy = 0, trend_rq = 0;
    /// Over the steady windows (at least 6): the last third's mean against the first third's,
    /// relative and signed. A run whose busy CPUs or rq length move more than tolerance / 2, or
    /// whose migration rate moves more than migration_tolerance, between them still drifts
    /// inside its band: it is not settled (`reached` false, `drifting` true, the figures are the
    /// last windows'). The seed hackbench's baseline at -l 30000: migrations -24 % over 0.6 s.
    bool drifting = false;
    double drift_busy = 0, drift_rq = 0, drift_migr = 0;
    std::int64_t drift_from_ns = -1;  ///< where the drifting run had settled
    /// Plateaus the machine settled on and then left (see SteadyStateOptions::leave_windows):
    /// how many, and the last one's start and the time it was left (-1: none).
    int plateaus_left = 0;
    std::int64_t plateau_from_ns = -1, plateau_left_ns = -1;
    /// Time the whole job takes at the steady work rate (1 / progress_per_s), or -1.
    double steadyJobTime() const { return progress_per_s > 0 ? 1.0 / progress_per_s : -1; }
};

class SteadyState {
public:
    explicit SteadyState(SteadyStateOptions o = {}) : m_o(o) {}
    void reset() { *this = SteadyState(m_o); }
    /// Feed cumulative counters (time never goes back).
    void sample(const SteadyCounters& c);
    /// The job's wind-down begins at `t` (its first worker exits): steady state is over, and
    /// the open window and every later sample are left out (idempotent).
    void windDown(std::int64_t t);
    const std::vector<SteadyWindow>& windows() const { return m_windows; }
    SteadyResult result() const;
    const SteadyStateOptions& options() const { return m_o; }
    /// Saves or restores what it has seen (checkpoints); the options stay as constructed.
    void state(StateArchive& ar);

private:
    SteadyStateOptions m_o;
    bool m_have = false;
    SteadyCounters m_start;  ///< the open window's start
    SteadyCounters m_last;
    std::vector<SteadyWindow> m_windows;
    int m_steadyFrom = -1;                                ///< index of the first steady window, -1 none yet
    std::size_t m_searchFrom = 0;                         ///< the first window a steady run may start at (after a plateau left)
    int m_outside = 0;                                    ///< consecutive windows outside the settled band
    double m_bandBusy = 0, m_bandRq = 0, m_bandMigr = 0;  ///< the settling run's means: the band's centre
    int m_plateausLeft = 0;
    std::int64_t m_plateauFrom = -1, m_plateauLeft = -1;
    std::int64_t m_windDown = -1;
    double m_scanSum = 0, m_zeroSum = 0;  ///< the open window's nr_idle_scan samples: their sums and count
    int m_scanN = 0;
};

/// "steady from 0.850 s (4 stable 50 ms windows: ...)" or "NOT steady: ..." (at most 70 columns)..
std::string describeSteady(const SteadyResult& r, const SteadyStateOptions& o);

}  // namespace sched
