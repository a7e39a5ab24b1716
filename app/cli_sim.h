// SPDX-License-Identifier: GPL-2.0-or-later
// cli_sim.h: the simulation subcommands of schedlab-cli (run, compare, sweep).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sched {

struct SimArgs {
    std::string scenario;
    std::string variant;             ///< run/sweep: which of the scenario's variants (default: the first)
    std::vector<std::string> knobs;  ///< --knobs PRESET and/or name=value items
    std::vector<std::string> sets;   ///< --set name=value
    std::vector<std::string> cost;   ///< --cost name=value | scale.TERM=x | off=TERM
    std::optional<std::uint64_t> seed;
    std::string jsonOut, csvDir, decisions;
    std::string ftrace;         ///< run: write the run's events as ftrace text to FILE
    bool ftraceUsecs = false;   ///< run: 6-decimal timestamps (µs) instead of ns
    bool noWakeInputs = false;  ///< run: --ftrace / --trace-dat without the schedlab_wake marks (as a kernel's trace)
    std::string traceDat;       ///< run: write the run's events as a trace-cmd trace.dat to FILE
    bool digestOnly = false;
    bool check = false;
    bool flow = false;     ///< run/compare: also print the decision-flow tree with its counts (--flow)
    bool coalesce = true;  ///< exact coalescing of plain workload steps (same results; --no-coalesce)
    std::string a, b;      ///< compare
    std::vector<std::string> setsA, setsB;
    std::string vary;        ///< sweep
    unsigned jobs = 0;       ///< compare/sweep: simulations at once (0 = the machine's cores)
    std::string emitJobs;    ///< sweep: write DIR (scenario copy, jobs.txt, sweep.sbatch) instead of running
    std::string merge;       ///< sweep: the table from DIR's point results
    double untilSteady = 0;  ///< run/compare: stop once the run has been at steady state this many simulated seconds (0: to the end)
    std::string until;       ///< run/compare/sweep: stop at this simulated time ("2s"); required for an endless scenario
    std::string saveState;   ///< run: write a checkpoint of the run at its --until stop to FILE
    std::string fromState;   ///< run: start from this checkpoint instead of t = 0 (no scenario)
};

int cliRun(const SimArgs& a);
/// schedlab-cli trace FILE: what an ftrace text trace (events, CPUs, gaps, problems) or the
/// seed's bpftrace rq-length CSV holds. `queuedOnly`: the CSV counts queued tasks only.
int cliTrace(const std::string& path, const std::string& clock, bool queuedOnly, const std::string& rqCsv = {});

struct AgreeArgs {
    std::string trace, topology, clock, decisions, sync = "comm", syncComm, nrIdleScanAt = "decision", wakeInputs = "use";
    std::vector<std::string> knobs, sets;
    bool json = false, workloadOnly = false;
    std::size_t examples = 5;
};
/// schedlab-cli agree TRACE: replays every wakeup decision of a recorded trace through
/// schedlab's wakeup path and reports the agreement (docs/replay.md: Disagreement classes).
int cliAgree(const AgreeArgs& a);
struct CompareTracesArgs {
    std::string base, patch, topology;
    std::vector<std::string> knobs, patchKnobs;
    bool workloadOnly = false, noAgree = false;
};
/// schedlab-cli compare-traces BASE PATCH: two traces side by side (trace_compare.h).
int cliCompareTraces(const CompareTracesArgs& a);
int cliCompare(const SimArgs& a);
struct ReproduceArgs {
    std::vector<std::string> names;  ///< claims (or prefixes: "mathieu", "aaron-g10"); empty = all
    unsigned jobs = 0;
    bool quick = false, list = false;
    std::string jsonOut, scenarios;
    std::string markdownOut;           ///< --markdown: the table as a page (docs/results.md)
    std::vector<std::uint64_t> seeds;  ///< every claim runs with each (default: each scenario's own seed)
    /// Fixed-work claims (hackbench) stop once their run has been at steady state this long and
    /// give the job time at the steady rate (0: every run to its end, whole-run figures).
    double steadyHold = 1.0;
};
/// schedlab-cli reproduce: the seed threads' claims beside schedlab's figures (reproduce.h).
int cliReproduce(const ReproduceArgs& a);
int cliSweep(const SimArgs& a);
/// `scenarios`: the shipped scenarios, one line each (name, machine, the description's first sentence).
int cliScenarios();

}  // namespace sched
