// SPDX-License-Identifier: GPL-2.0-or-later
// simulation.h: one scenario side (A or B) as the GUI drives it: an Engine plus the
// buffers a live view needs (rq-length samples at a fixed simulated period, recent
// migrations), stepping by time / event / wakeup, live knob changes, and immutable
// Snapshot values copied out for painting. No Qt: the GUI's worker thread owns these.
#pragma once

#include "sim/engine.h"
#include "util/histogram.h"
#include "kernel/knobs.h"
#include "sim/metrics.h"
#include "sim/scenario.h"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sched {

struct Checkpoint;
class StateArchive;

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
    float migrations_per_s = 0;
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

struct SimOptions {
    std::int64_t sample_period_ns = 1000000;  ///< live rq-length sampling (GUI side only)
    std::size_t sample_rows = 2000;
    std::int64_t arrow_span_ns = 5000000;       ///< migrations kept for arrows
    std::size_t max_migrations = 20000;         ///< cap of the kept migrations (oldest dropped)
    std::size_t decisions = 256;                ///< decisions copied into a snapshot
    std::int64_t outcome_period_ns = 10000000;  ///< the outcome series' period (10 ms)
    std::size_t outcome_rows = 6000;            ///< outcome points kept (60 s of simulated time at 10 ms)
};

/// One side of an A/B run.
class Simulation {
public:
    /// Builds the engine for `knobs` from the scenario (seed and cost from the scenario unless `seed` != 0).
    Simulation(const Scenario& s, Knobs knobs, std::string label, SimOptions o = {}, std::uint64_t seed = 0);

    /// Advances by `ns` of simulated time, sampling rq lengths on the way. False when done.
    bool advance(std::int64_t ns);
    /// Runs exactly one event (false when done).
    bool stepEvent();
    /// Runs until the next wakeup decision has been made, at most `limit_ns` ahead; the wakeup is
    /// traced step by step (lastTraced()). False when none came.
    bool stepWakeup(std::int64_t limit_ns = 1000000000);
    /// Applies new knobs from now on (hz cannot change live: it is kept); the change is marked
    /// in the outcome series (Snapshot::knob_marks).
    void setKnobs(const Knobs& k);
    /// A mark of its own at the current time in Snapshot::knob_marks ("branched from A").
    void addMark(std::string text) { m_knobMarks.push_back({now(), std::move(text)}); }
    /// The side's whole state as a checkpoint file's bytes (sim/checkpoint.h): the engine's, and
    /// the window's own buffers (samples, migrations, the outcome series, knob marks), and
    /// `companion`: bytes carried along (the window's file: side B's checkpoint inside A's).
    std::string checkpoint(std::string companion = {});
    /// A side in the state a checkpoint holds (the window's buffers too when it has them),
    /// labelled `label` ("": the checkpoint's). InputError when the file's state does not restore.
    static std::unique_ptr<Simulation> fromCheckpoint(const Checkpoint& c, std::string label = {}, SimOptions o = {},
                                                      std::string* companion = nullptr);
    /// The bytes a checkpoint of checkpoint(companion) carries along ("" for none: the CLI's).
    static std::string companionOf(const Checkpoint& c);
    /// "B from here": a new simulation in the state `src` is in now (through a checkpoint in
    /// memory: the same digest, outcome series, samples and marks), labelled `label`.
    static std::unique_ptr<Simulation> copyOf(Simulation& src, std::string label);
    /// Saves or restores the window's buffers (the engine's state is the checkpoint's).
    void state(StateArchive& ar);
    const Knobs& knobs() const { return m_engine->knobs(); }

    Snapshot snapshot() const;
    const Engine& engine() const { return *m_engine; }
    std::int64_t now() const { return m_engine->now(); }
    bool done() const { return m_engine->done(); }
    /// The run so far as the CLI's reports take it (reports and digest brought up to date).
    const RunResult& result() const;
    const Scenario& scenario() const { return m_scenario; }
    /// The last wakeup traced by stepWakeup (with its steps), or nullptr.
    const DecisionRecord* lastTraced() const { return m_engine->lastTraced(); }

private:
    Simulation(const Checkpoint& c, std::string label, SimOptions o);
    void attachSinks();
    void collect();

    Scenario m_scenario;
    std::string m_label;
    SimOptions m_opt;
    std::uint64_t m_seed = 0;                                   ///< as given (0: the scenario's)
    Knobs m_initialKnobs;                                       ///< at t = 0
    std::vector<std::pair<std::int64_t, Knobs>> m_knobHistory;  ///< every setKnobs(): when, and the knobs from then on
    mutable RunResult m_run;                                    ///< owns the engine
    Engine* m_engine = nullptr;
    std::int64_t m_nextSample = 0;
    std::deque<std::int64_t> m_sampleT;
    std::deque<std::uint16_t> m_sampleLen;
    std::deque<MigrationView> m_migrations;
    std::uint64_t m_seenEvents = 0;
    // The outcome series: the counters at the last point, and the points kept.
    struct OutcomeMark {
        double work = 0, busy_ns = 0, migrations = 0, wakeups = 0, ctx_switches = 0;
    };
    OutcomeMark outcomeNow() const;
    std::int64_t m_nextOutcome = 0;
    OutcomeMark m_lastOutcome;
    std::deque<OutcomePoint> m_outcome;
    std::vector<KnobMark> m_knobMarks;
    std::string m_companion;  ///< fromCheckpoint(): what the checkpoint carried along
};

/// Views of a CPU's kind for the legend ("idle", "busy", "idle by idle-delay").
const char* toString(CpuKind k);

}  // namespace sched
