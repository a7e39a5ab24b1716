// SPDX-License-Identifier: GPL-2.0-or-later
// snapshot.h: the views' contract: one simulated (or replayed) machine at one instant as a plain
// value (Snapshot) with what the heatmap draws of each CPU (CpuView), its recent migrations
// (MigrationView) and the outcome series (OutcomePoint, KnobMark). It depends on the metrics'
// records and histograms only: a view reads a frame without the engine.
#pragma once

#include "sim/metrics.h"
#include "topology/topology.h"
#include "util/histogram.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sched {

/// What the heatmap shows of one CPU.
enum class CpuKind : std::uint8_t {
    idle,           ///< running the idle task, idle_cpu() true
    busy,           ///< running a task, idle_cpu() false
    idle_by_delay,  ///< running a task, but idle_cpu() says idle (idle-delay knob) or claimed idle
};

/// One CPU at the snapshot's instant.
struct CpuView {
    std::int32_t curr_pid = 0;     ///< pid of rq->curr; 0 = swapper (idle)
    std::uint16_t nr_running = 0;  ///< rq->nr_running (curr included)
    CpuKind kind = CpuKind::idle;
    bool claimed = false;             ///< claim-wakeup flag set
    bool outside_masks = false;       ///< no workload's taskset mask (`cpus`) has this CPU: nothing of the run may use it
    std::int8_t cstate = -1;          ///< cpuidle state index while idle, -1 when busy
    std::int64_t idle_since_ns = -1;  ///< when it entered idle, -1 when busy
    std::int32_t util = 0;            ///< cfs.avg.util_avg (0..1024)
    float rq_avg = 0;                 ///< time-weighted average nr_running over the measured phase
    float busy_frac = 0;              ///< busy fraction over the measured phase (htop %)
};

/// A migration as the heatmap draws it.
struct MigrationView {
    std::int64_t time = 0;  ///< ns
    std::int32_t pid = 0;
    std::int16_t from = 0, to = 0;
    MigrationCause cause = MigrationCause::wakeup;
    DistClass dist = DistClass::llc;
    bool timer = false;  ///< not a task's move: a sleep timer armed on `from` that get_nohz_timer_target() put on `to`
};

/// The workload's outcome over one period of simulated time (Simulation's outcome series): the
/// rate of its own figure (Workload::work(), e.g. hackbench's messages/s), and beside it the
/// busy CPUs and migrations per second of the machine over the same period.
struct OutcomePoint {
    std::int64_t t = 0;  ///< the period's end (ns)
    float rate = 0;      ///< work per second over the period (the first workload's unit)
    float busy_cpus = 0;
    float migrations_per_s = 0;    ///< fork placements left out
    float wakeups_per_s = 0;       ///< try_to_wake_up() calls
    float ctx_switches_per_s = 0;  ///< context switches
};

/// A live knob change (Simulation::setKnobs): when, and what changed ("idle_delay_ns=1000000").
struct KnobMark {
    std::int64_t t = 0;
    std::string change;
};

/// Immutable view of one simulation at one instant; a plain value.
struct Snapshot {
    std::string label;  ///< "A" or "B"
    std::string knobs;  ///< Knobs::describe()
    std::shared_ptr<const Topology> topo;
    std::int64_t now = 0;  ///< simulated ns
    std::int64_t measure_start = 0;
    std::uint64_t events = 0;
    bool done = false;
    std::uint64_t digest = 0;

    std::vector<CpuView> cpus;              ///< indexed by CPU
    std::vector<MigrationView> migrations;  ///< within the arrow span before `now`, oldest first

    /// Runqueue lengths sampled every `sample_period_ns` of simulated time: `sample_t[i]`
    /// and `sample_len[i * nr_cpus + cpu]`, oldest first, at most `SimOptions::sample_rows` rows.
    std::int64_t sample_period_ns = 0;
    std::vector<std::int64_t> sample_t;
    std::vector<std::uint16_t> sample_len;

    LatencyHistogram wakeup_latency;
    LatencyHistogram ttwu_window;  ///< sched_waking -> sched_wakeup (Metrics::ttwu_window)
    std::uint64_t ttwu_count = 0, ttwu_local = 0, ttwu_wakelist = 0, ctx_switches = 0, idle_delay_hits = 0, claims = 0;
    std::uint64_t ttwu_races = 0;  ///< wakeups stacked by a race (Metrics::ttwu_races)
    /// Who woke the sleepers (Metrics::wake_by_*), and the sleep timers get_nohz_timer_target() moved.
    std::uint64_t wake_by_task = 0, wake_by_timer_local = 0, wake_by_timer_remote = 0, timers_armed = 0, timers_moved = 0;
    /// Wakeups by final reason (stage 2 code name, count), non-zero ones, in code order.
    std::vector<std::pair<std::string, std::uint64_t>> reasons;
    FlowCounts flow;  ///< decisions per edge of the wakeup path's graph (the flow view)
    std::array<std::uint64_t, kMigrationCauses> migrations_by_cause{};
    std::vector<DecisionRecord> decisions;  ///< the most recent ones, oldest first
    std::vector<WorkloadReport> reports;    ///< workloads' headline results so far

    /// The outcome over time, oldest first, one point per `outcome_period_ns` (at most
    /// SimOptions::outcome_rows: the newest), in `outcome_unit` ("" when the first workload
    /// has no rate of its own: the points then carry busy CPUs and migrations only).
    std::string outcome_unit;
    std::int64_t outcome_period_ns = 0;
    std::vector<OutcomePoint> outcome;
    std::vector<KnobMark> knob_marks;  ///< live knob changes, oldest first
    SteadyResult steady;               ///< the steady-state detector's verdict so far (Metrics::steady)
};

/// Views of a CPU's kind for the legend ("idle", "busy", "idle by idle-delay").
const char* toString(CpuKind k);

}  // namespace sched
