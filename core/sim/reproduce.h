// SPDX-License-Identifier: GPL-2.0-or-later
// reproduce.h: the seed threads' published claims (docs/workloads.md: Published claims) as
// runs of the shipped scenarios, and the table that puts schedlab's figure beside
// each published one: whether the direction matches, and the counters that explain
// it. No claim has a parameter of its own: every run uses the scenario's machine,
// cost model and seed, and a claim that does not reproduce is printed as such.
#pragma once

#include "sim/scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sched {

/// One side of a claim: a knob preset, knob overrides and cost overrides (name=value).
struct ClaimSide {
    std::string preset = "baseline";
    std::vector<std::string> knobs;
    std::vector<std::string> cost;
    std::string label() const;  ///< "idle-delay-v2 idle_delay_max_running=1", "baseline tg_ratelimit_ns=1000000"
};

struct Claim {
    std::string id;        ///< "mathieu-v1"
    std::string source;    ///< who, when, which machine
    std::string scenario;  ///< a file of resources/scenarios/
    int loops = 0;         ///< hackbench -l of the full run (0: as shipped)
    int quick_loops = 0;   ///< --quick (0: as the full run)
    /// The first workload's keys as the claim's row needs them (name=value, a JSON value:
    /// "pairs=128", "message_threads=4"), for the full run and for --quick (empty: as the full run).
    std::vector<std::string> set, quick_set;
    ClaimSide base, patch;
    std::string metric = "Time (s)";  ///< a headline label of the scenario's first workload
    bool lower_is_better = true;
    /// The job is a fixed amount of work (hackbench), so its time at the steady rate means
    /// something; a run for a fixed time (tbench, schbench) has none.
    bool fixed_work = true;
    double published_base = 0, published_patch = 0;
};

/// A claim of the threads that `reproduce` does not run yet, and why.
struct ClaimNotRun {
    std::string id, source, why;
};

const std::vector<Claim>& seedClaims();
const std::vector<ClaimNotRun>& claimsNotRun();

/// The simulation one side of a claim needs (claims share runs: one per distinct key).
struct ClaimRun {
    std::string scenario;
    int loops = 0;
    std::vector<std::string> set;  ///< the first workload's overrides (Claim::set)
    ClaimSide side;
    std::string key() const;
};
ClaimRun claimRun(const Claim& c, bool patch, bool quick);

/// The scenario and variant of a run: the shipped file with the loop count, the workload
/// overrides and the side's knobs and cost overrides applied. Errors are InputErrors naming the file or the knob.
struct PreparedRun {
    Scenario scenario;
    Variant variant;
    CostModel cost;
};
PreparedRun prepareClaimRun(const ClaimRun& r, const std::string& scenariosDir);

/// One seed's figures of a claim (reproduce --seed 1,2,3).
struct SeedOutcome {
    std::uint64_t seed = 0;
    double base = 0, patch = 0;  ///< the metric
    double change() const;       ///< %
};

/// What one claim came to.
struct ClaimOutcome {
    const Claim* claim = nullptr;
    double base = 0, patch = 0;  ///< the metric (whole run, as the tool prints it)
    bool base_steady = false, patch_steady = false;
    double base_steady_from = -1, patch_steady_from = -1;
    double base_job_at_steady = -1, patch_job_at_steady = -1;  ///< hackbench: the job time at the steady rate
    double base_busy = 0, patch_busy = 0;                      ///< busy CPUs (steady, or the last windows)
    double base_migr_s = 0, patch_migr_s = 0;                  ///< migrations per second (same)
    std::uint64_t base_migrations = 0, patch_migrations = 0;   ///< whole run
    std::uint64_t patch_idle_delay_hits = 0;
    std::uint64_t patch_claims = 0;                 ///< CPUs claimed (claim_wakeup)
    std::uint64_t base_races = 0, patch_races = 0;  ///< wakeups stacked by a race (Decision::raced)
    std::uint64_t patch_debounce = 0;               ///< SIS_DEBOUNCE placements (DEBOUNCE_PLACED + DEBOUNCE_COLD_LLC)
    /// The follow-up patches' own reason codes (B, D, G, H, F) that the patch run
    /// decided by, with their counts, in the enums' order: the mechanism a claim worked through.
    std::vector<std::pair<std::string, std::uint64_t>> patch_reasons;
    double base_tg_ms = 0, patch_tg_ms = 0;          ///< CPU time in tg->load_avg updates
    double base_refill_ms = 0, patch_refill_ms = 0;  ///< CPU time refilling caches after migrations
    /// The same two as shares of the run's busy CPU time (%): comparable between runs of
    /// different lengths (a run stopped at steady state, one run to its end).
    double base_tg_pct = 0, patch_tg_pct = 0, base_refill_pct = 0, patch_refill_pct = 0;
    double base_msgs_per_switch = -1, patch_msgs_per_switch = -1;  ///< hackbench: messages per context switch at the steady rate
    /// The figures are the job time at the steady rate (a fixed-work claim run with a steady
    /// hold), not the whole-run metric; base_stopped / patch_stopped: the run ended there.
    bool at_steady_rate = false, base_stopped = false, patch_stopped = false;
    double steady_hold_s = 0;                  ///< the hold those runs had (RunOptions::steady_hold_ns)
    double base_wall_s = 0, patch_wall_s = 0;  ///< what each run cost (wall seconds on its core)
    double base_sim_s = 0, patch_sim_s = 0;    ///< simulated seconds each run took
    double publishedChange() const;            ///< %
    double change() const;                     ///< %
    /// The same sign of change as published (a change under 1 % on either side counts as none).
    bool directionMatches() const;
    /// Every seed run, when the claim ran with several (--seed 1,2,3); the first is the one above.
    std::vector<SeedOutcome> seeds;
    int seedsMatching() const;      ///< seeds whose direction matches (of seeds.size(); 0 or 1 without seeds)
    bool matchesEverySeed() const;  ///< directionMatches() for every seed run (the first alone without seeds)
    bool flipsWithSeed() const;     ///< some seeds match and some do not: not a result
    /// The patch barely moves schedlab where it moved the machine: |change| <= kInertPct with
    /// every seed run while the published change is at least kMovedPct in size.
    bool inert() const;
};
/// A claim is inert when schedlab moves by at most this much (%)...
inline constexpr double kInertPct = 1.0;
/// ...where the machine moved by at least this much (%).
inline constexpr double kMovedPct = 5.0;
/// The same sign of change (in %) as published; a change under 1 % on either side counts as none.
bool sameDirection(double publishedPct, double changePct);
/// The claim's metric in one run (an InputError when the run does not report it).
double claimMetric(const Claim& c, const RunResult& r);
/// perf stat's figures as claim metrics (claimFigure computes them from the run's steady
/// state): events per second of task-clock, as perf prints them ("K/sec"), and CPUs utilized.
inline constexpr const char* kPerfMigrations = "cpu-migrations (K/s of task-clock)";
inline constexpr const char* kPerfSwitches = "context-switches (K/s of task-clock)";
inline constexpr const char* kPerfCpusUtilized = "CPUs utilized";
bool isPerfStatMetric(const std::string& metric);
/// The claim's figure: a perf stat metric from the steady state; with `steadyRate` and a fixed-work claim, the job time at the run's
/// steady rate (its last windows' when it never settled; SteadyResult::steadyJobTime()),
/// else claimMetric().
double claimFigure(const Claim& c, const RunResult& r, bool steadyRate);
/// `steadyHoldS` > 0: fixed-work claims compare the job time at the steady rate (their runs
/// stopped after that many seconds at steady state, RunOptions::steady_hold_ns), not the
/// whole-run metric.
ClaimOutcome evaluateClaim(const Claim& c, const RunResult& base, const RunResult& patch, double steadyHoldS = 0);

/// The table: one line per claim (published, schedlab, direction), then the counters that
/// explain each, then the claims not run. `quick`: shorter runs, marked as such.
/// `seeds`: the seeds every claim ran with (--seed), empty for each scenario's own. With
/// several, a claim matches only when every seed goes the published way.
std::string reproduceTable(const std::vector<ClaimOutcome>& out, bool quick, double wall_s, const std::vector<std::uint64_t>& seeds = {});
nlohmann::json reproduceJson(const std::vector<ClaimOutcome>& out, bool quick, double wall_s, const std::vector<std::uint64_t>& seeds = {});

}  // namespace sched
