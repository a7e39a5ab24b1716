// SPDX-License-Identifier: GPL-2.0-or-later
// scenario.h: a simulation scenario (JSON, documented in docs/scenario-format.md):
// topology, workloads, knob variants (A, B, ...), cost-model overrides, seed and
// stop condition; and running it. Every result carries the scenario and knobs
// that produced it.
#pragma once

#include "sim/cost_model.h"
#include "sim/engine.h"
#include "util/input_error.h"
#include "kernel/knobs.h"
#include "sim/workloads.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace sched {

struct Checkpoint;

using WorkloadParams = std::variant<HackbenchParams, SchbenchParams, StressParams, PingPongParams, LockTortureParams, CyclictestParams>;

struct Variant {
    std::string name;  ///< "A", "B", ... or the name given
    Knobs knobs;
};

struct Scenario {
    std::string file;  ///< where it came from (messages)
    std::string name;
    std::string description;
    std::shared_ptr<const Topology> topo;
    std::vector<WorkloadParams> workloads;
    std::vector<Variant> variants;  ///< at least one
    CostModel cost;                 ///< machine defaults plus the file's overrides
    std::uint64_t seed = 1;
    double stop_s = 0;  ///< simulated seconds; 0 = when the workloads finish
    std::int64_t max_events = 0;
    double uptime_s = 600;  ///< how long the machine has been up at t = 0 (jiffies, sd->last_balance)
    int hz = 250;
    nlohmann::json doc;  ///< the document as read
    /// What is legal but costly ("FILE: KEY: ..." lines the CLI and the window print before running).
    std::vector<std::string> warnings;
};

/// Parses a scenario document; every problem is an InputError("FILE: KEY: problem").
Scenario parseScenario(const nlohmann::json& doc, const std::string& file, const std::string& baseDir);
Scenario loadScenario(const std::string& path);

/// One workload's parameters from JSON (used by the scenario and the GUI).
WorkloadParams workloadFromJson(const nlohmann::json& v, const std::string& file, const std::string& key);
/// The workload's command line, e.g. "hackbench -g 32 -f 20 --threads --pipe -l 100 -s 100"
/// ("taskset -c 0-7 hackbench ..." with a `cpus` mask).
std::string workloadCommand(const WorkloadParams& w);
/// The most tasks a scenario may start, each workload and all together (every type counted as
/// it forks: hackbench's 2 x groups x fds, schbench's message threads and their workers, ...; a
/// workload's one main task is not counted).
inline constexpr std::int64_t kMaxScenarioTasks = 200000;
/// Above this many tasks per CPU a scenario is run with a warning: a workload's start-up (its main
/// task forks each one while the forked ones run and preempt it) costs about the square of it
/// (tbench on 8 CPUs: 256 per CPU 6 s of wall time, 1024 per CPU minutes, 16 384 per CPU hours).
inline constexpr std::int64_t kWarnTasksPerCpu = 1024;
/// The tasks `w` starts on a machine of `nrCpus` CPUs (the ones a 0 count sizes to the CPUs).
std::int64_t workloadTasks(const WorkloadParams& w, int nrCpus);
/// The workload's `cpus` cpulist (taskset -c), "" for every CPU.
const std::string& workloadCpus(const WorkloadParams& w);
/// Why the workload runs until the run is stopped ("loops 0", "runtime_s 0", ...), "" when it ends
/// by itself (stress, background, is never counted as endless).
std::string workloadEndless(const WorkloadParams& w);
/// Why the scenario would run forever without a stop ("workloads[0] (loops 0) runs until stopped",
/// "only background load ..."), "" when it ends by itself or has stop.sim_time_s or max_events. The
/// CLI refuses such a scenario without --until; the window runs it live.
std::string scenarioEndless(const Scenario& s);

struct RunOptions {
    std::uint64_t seed = 1;
    bool check_invariants = false;
    bool coalesce = true;  ///< exact coalescing of plain workload steps (same results either way; --no-coalesce turns it off)
    std::size_t decision_ring = 4096;
    std::function<void(const DecisionRecord&)> decision_sink;
    std::size_t event_ring = 0;                               ///< kernel-style events kept in the ring
    std::function<void(const SchedEvent&)> event_sink;        ///< every kernel-style event
    std::function<void(const WakeInputs&)> wake_inputs_sink;  ///< each wakeup decision's untraced inputs
    std::function<void(const Engine&)> progress;              ///< called every 10 ms of simulated time
    std::function<void(const Engine&)> on_start;              ///< called once the engine exists, before the first event
    /// Stop once the machine has been at steady state this long (simulated ns; 0: run to the
    /// end): the steady-state detector (metrics().steady) reached, not drifting, and its steady
    /// period at least this long. The results are those of the full run up to that instant
    /// (checked between 10-ms advances, so it stops at a 10-ms boundary); a run that never
    /// settles runs to the end. For figures taken at the steady rate (the job time at it).
    std::int64_t steady_hold_ns = 0;
    /// Called once the run reaches the scenario's stop time, between events, before the stop
    /// (the state a checkpoint of the run at its stop takes: sim/checkpoint.h). Not called when
    /// the run ends earlier or has no stop time.
    std::function<void(Engine&)> at_stop;
    /// Start from this checkpoint's state instead of t = 0 (the scenario then is the
    /// checkpoint's, with its stop time as the run's stop).
    const Checkpoint* from_state = nullptr;
};

/// The run has been at steady state for `hold_ns` (RunOptions::steady_hold_ns).
bool steadyHeld(const Engine& e, std::int64_t hold_ns);

struct RunResult {
    std::string variant;
    Knobs knobs;
    CostModel cost;
    std::uint64_t seed = 1;
    std::unique_ptr<Engine> engine;
    std::vector<WorkloadReport> reports;
    double wall_s = 0;
    std::uint64_t digest = 0;
    bool stopped_at_steady = false;   ///< RunOptions::steady_hold_ns ended it before the workloads did
    std::int64_t from_state_ns = -1;  ///< RunOptions::from_state: the checkpoint's time (-1: from t = 0)
};

/// A ready-to-run engine for the scenario (the GUI advances it itself).
std::unique_ptr<Engine> buildEngine(const Scenario& s, const Knobs& k, const CostModel& cost, const RunOptions& o);
/// Runs to completion and collects the reports.
RunResult runScenario(const Scenario& s, const Variant& v, const CostModel& cost, const RunOptions& o);
/// Every workload's report as it stands (finished or not).
std::vector<WorkloadReport> workloadReports(const Engine& e);

}  // namespace sched
