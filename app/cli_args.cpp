// SPDX-License-Identifier: GPL-2.0-or-later
// cli_args.cpp: see cli_args.h.
#include "cli_args.h"

#include <cstdio>
#include <regex>

namespace sched {
namespace {

// A regular expression std::regex takes (ECMAScript, as the replay compiles it).
const CLI::Validator kRegex(
    [](std::string& s) {
        try {
            std::regex re(s);
        } catch (const std::regex_error& e) {
            return std::string("not a regular expression: ") + e.what();
        }
        return std::string();
    },
    "REGEX");
// A whole number >= 0 (CLI11 would wrap a negative one into an unsigned option).
const CLI::Validator kNonNegative(
    [](std::string& s) {
        std::size_t i = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        return !s.empty() && i == s.size() ? std::string() : "must be a whole number, 0 or more, not '" + s + "'";
    },
    "UINT");
// The trace clocks tracefs offers (trace_clock), as a trace file may name them.
const CLI::IsMember kTraceClocks({"local", "global", "counter", "uptime", "perf", "mono", "mono_raw", "boot", "tai", "x86-tsc"});

void addTopologyCommand(CLI::App& app, Cli& o) {
    auto* topo = app.add_subcommand("topology", "print a machine's CPUs and sched domains (like the kernel's sched_domain debug)");
    topo->add_option("topology", o.topoName, "preset name, topology .json, or lstopo --of xml file");
    topo->add_flag("--json", o.topoJson, "print JSON");
    topo->add_flag("--list", o.topoList, "list the presets");
    topo->add_option("--cpu", o.topoCpu, "only this CPU's domains")->check(kNonNegative);
    o.topo = topo;
}

void addExplainCommand(CLI::App& app, Cli& o) {
    auto* explain = app.add_subcommand("explain", "explain one wakeup decision from a state file");
    explain->add_option("state", o.statePath, "state JSON (docs/state-format.md)")->required();
    explain->add_flag("--json", o.explainJson, "print the decision as JSON");
    explain->add_option("--knobs", o.knobPreset, "knob preset, replacing the file's knobs");
    explain->add_option("--set", o.sets, "override a knob: name=value (repeatable)");
    o.explain = explain;
}

// The options run, compare and sweep share.
void addScenarioOptions(CLI::App* c, SimArgs& sim) {
    c->add_option("scenario", sim.scenario,
                  "scenario JSON (docs/scenario-format.md), or the name of a shipped one (e.g. mathieu-hackbench-epyc-9654; "
                  "schedlab-cli scenarios lists them)")
        ->required();
    c->add_option("--cost", sim.cost, "cost model override: name=ns, scale.TERM=x, off=TERM (repeatable)");
    c->add_option("--seed", sim.seed, "RNG seed (default: the scenario's)")->check(kNonNegative);
    c->add_option("--until-steady", sim.untilSteady,
                  "stop once the simulated machine has been at steady state this many simulated seconds (the figures at the steady rate "
                  "are then the run's result; a run that never settles runs to its end)")
        ->check(CLI::Range(0.0, 3600.0));
    c->add_option("--until", sim.until,
                  "stop at simulated time T (e.g. 2s, 500ms): required for an endless scenario (hackbench loops 0, a runtime_s of 0), "
                  "a hard stop for any other");
    c->add_option("--json", sim.jsonOut, "write every metric as JSON to FILE");
    c->add_flag("--check", sim.check, "run the invariant checker after every event (slow)");
    if (c->get_name() != "sweep")
        c->add_flag("--flow", sim.flow,
                    "also print the wakeup path as a tree: the decisions that reached each function and reason code (compare: A, B and the "
                    "change in share)");
    c->add_flag("--coalesce,!--no-coalesce", sim.coalesce,
                "--no-coalesce: one event per workload step (the slow path; the default coalesces steps that change no scheduler state, "
                "bit-identical results)");
}

void addRunCommand(CLI::App& app, Cli& o) {
    SimArgs& sim = o.sim;
    auto* run = app.add_subcommand("run", "simulate a scenario and report what the scheduler did");
    addScenarioOptions(run, sim);
    run->add_option("--variant", sim.variant, "which of the scenario's variants (default: the first)");
    run->add_option("--knobs", sim.knobs, "knob preset and/or name=value overrides")->expected(1, -1);
    run->add_option("--set", sim.sets, "override a knob: name=value (repeatable)");
    run->add_option("--csv", sim.csvDir, "write CSV timelines into DIR (rqlen.csv, rqlen50-bpftrace.csv, ...)");
    run->add_option("--decisions", sim.decisions, "write every wakeup decision as JSON lines to FILE");
    run->add_flag("--digest", sim.digestOnly, "print only the run's digest (determinism checks)");
    run->add_option("--ftrace", sim.ftrace, "write the run's scheduler events as ftrace text to FILE (tracefs layout)");
    run->add_flag("--ftrace-usecs", sim.ftraceUsecs, "--ftrace timestamps in µs (6 decimals, as tracefs) instead of ns");
    run->add_option("--trace-dat", sim.traceDat, "write the run's scheduler events as a trace-cmd trace.dat (version 6) to FILE");
    run->add_option("--save-state", sim.saveState,
                    "write a checkpoint of the run at its --until stop to FILE: the whole simulation state, which run --from-state goes on from");
    run->add_option("--from-state", sim.fromState,
                    "go on from a checkpoint (run --save-state, or the window's File > Save state) to --until T, instead of a scenario from "
                    "t = 0: the same results as the uninterrupted run");
    run->get_option("scenario")->required(false);
    run->add_flag("--no-wake-inputs", sim.noWakeInputs,
                  "--ftrace / --trace-dat without the schedlab_wake marks of each decision's untraced inputs: the events a kernel's trace has "
                  "(agree then reconstructs the inputs, as for a recording)");
    o.run = run;
}

void addAgreeCommand(CLI::App& app, Cli& o) {
    AgreeArgs& ag = o.ag;
    auto* agreeCmd = app.add_subcommand("agree", "replay a recorded trace's wakeups through schedlab's path: agreement with the kernel");
    agreeCmd->add_option("trace", ag.trace, "ftrace text (.txt/.gz) or trace-cmd trace.dat")->required();
    agreeCmd->add_option("--topology", ag.topology, "the machine it was recorded on: a preset or an hwloc XML");
    agreeCmd->add_option("--knobs", ag.knobs, "knob preset and/or name=value overrides (default: baseline)")->expected(1, -1);
    agreeCmd->add_option("--set", ag.sets, "override a knob: name=value (repeatable)");
    agreeCmd->add_flag("--json", ag.json, "print the whole report as JSON");
    agreeCmd->add_option("--decisions", ag.decisions, "write every decision with both answers as JSON lines to FILE");
    agreeCmd->add_option("--sync", ag.sync, "WF_SYNC (not traced): comm (wakers matching --sync-comm), task (every task-context waking), none");
    agreeCmd->add_option("--sync-comm", ag.syncComm, "regex of waker names whose task-context wakings are sync")->check(kRegex);
    agreeCmd->add_flag("--workload-only", ag.workloadOnly, "only decisions between WORKLOAD_START and WORKLOAD_END");
    agreeCmd->add_option("--examples", ag.examples, "disagreements listed per class (default 5)")->check(CLI::Range(0, 1000000));
    agreeCmd->add_option("--clock", ag.clock, "the trace clock, when the file does not say")->check(kTraceClocks);
    agreeCmd->add_option("--wake-inputs", ag.wakeInputs,
                         "schedlab's own exports carry each decision's untraced inputs (loads, WF_SYNC, nr_idle_scan, jiffies): use (default) or "
                         "ignore them (reconstruct as for a kernel trace)");
    agreeCmd->add_option("--nr-idle-scan-at", ag.nrIdleScanAt,
                         "SIS_UTIL's nr_idle_scan: recomputed at each decision, or at modelled LLC balances (balance)");
    o.agree = agreeCmd;
}

void addCompareTracesCommand(CLI::App& app, Cli& o) {
    CompareTracesArgs& ct = o.ct;
    auto* compareTraces = app.add_subcommand(
        "compare-traces", "two recorded traces (before/after a patch, or a kernel trace beside schedlab's export) as a compare table");
    compareTraces->add_option("base", ct.base, "the base trace (ftrace text or trace.dat)")->required();
    compareTraces->add_option("patch", ct.patch, "the patched kernel's trace")->required();
    compareTraces->add_option("--topology", ct.topology, "the machine both were recorded on: a preset or an hwloc XML");
    compareTraces->add_option("--knobs", ct.knobs, "knobs of schedlab's path for the agreement rows (default: baseline)")->expected(1, -1);
    compareTraces->add_option("--patch-knobs", ct.patchKnobs, "knobs for the patch trace's agreement (default: as --knobs)")->expected(1, -1);
    compareTraces->add_flag("--workload-only", ct.workloadOnly, "only between WORKLOAD_START and WORKLOAD_END");
    compareTraces->add_flag("--no-agree", ct.noAgree, "leave out the agreement rows (no replay through schedlab's path)");
    o.compareTraces = compareTraces;
}

void addTraceCommand(CLI::App& app, Cli& o) {
    auto* trace = app.add_subcommand("trace", "read an ftrace text trace (.txt or .gz) and say what it holds");
    trace->add_option("file", o.tracePath, "trace text as tracefs or trace-cmd report write it")->required();
    trace->add_option("--clock", o.traceClock, "the trace clock, when the file does not say (local, global, mono, counter, ...)")
        ->check(kTraceClocks);
    trace->add_flag("--queued-only", o.traceQueued, "rq-length CSV: values count queued tasks only (stock runqlen), not rq->nr_running");
    trace->add_option("--rq-csv", o.traceCsv, "write the trace's runqueue lengths every 20 ms as the seed's bpftrace CSV to FILE");
    o.trace = trace;
}

void addCompareCommand(CLI::App& app, Cli& o) {
    SimArgs& sim = o.sim;
    auto* compare = app.add_subcommand("compare", "base vs patch: a plain-text table ready for a mail");
    addScenarioOptions(compare, sim);
    compare->add_option("--a", sim.a, "base: a variant of the scenario or a knob preset (default: the scenario's first)");
    compare->add_option("--b", sim.b, "patch: a variant of the scenario or a knob preset (default: the scenario's second)");
    compare->add_option("--set-a", sim.setsA, "knob override for the base (repeatable)");
    compare->add_option("--set-b", sim.setsB, "knob override for the patch (repeatable)");
    compare->add_option("--set", sim.sets, "knob override for both (repeatable)");
    compare->add_option("--jobs,-j", sim.jobs, "simulations at once (default: the machine's cores; each one single-threaded and deterministic)");
    o.compare = compare;
}

void addSweepCommand(CLI::App& app, Cli& o) {
    SimArgs& sim = o.sim;
    auto* sweep = app.add_subcommand("sweep", "one table row per value of a knob or cost parameter");
    addScenarioOptions(sweep, sim);
    sweep->add_option("--vary", sim.vary, "NAME=v1,v2,... (a knob, a cost parameter, or scale.TERM)")->required();
    sweep->add_option("--variant", sim.variant, "which of the scenario's variants to start from");
    sweep->add_option("--knobs", sim.knobs, "knob preset and/or name=value overrides")->expected(1, -1);
    sweep->add_option("--set", sim.sets, "override a knob: name=value (repeatable)");
    sweep->add_option("--jobs,-j", sim.jobs, "simulations at once (default: the machine's cores; each one single-threaded and deterministic)");
    sweep->add_option("--emit-jobs", sim.emitJobs,
                      "run nothing: write DIR with one job per point for GNU parallel (parallel < DIR/jobs.txt) or Slurm (sbatch DIR/sweep.sbatch)");
    sweep->add_option("--merge", sim.merge, "print the table of a sweep emitted into DIR from its points' results (instead of a scenario)");
    sweep->get_option("scenario")->required(false);
    sweep->get_option("--vary")->required(false);
    o.sweep = sweep;
}

void addReproduceCommand(CLI::App& app, Cli& o) {
    auto* reproduce = app.add_subcommand("reproduce", "the seed threads' published claims beside schedlab's figures, direction by direction");
    ReproduceArgs& rep = o.rep;
    reproduce->add_option("claims", rep.names, "claims or prefixes (mathieu, aaron-g10, mathieu-v2-k4, ...; default: all; --list)");
    reproduce->add_option("--jobs,-j", rep.jobs, "simulations at once (default: the machine's cores; each one single-threaded and deterministic)");
    reproduce->add_flag("--quick", rep.quick, "shorter runs (start-up only, marked as such): a few minutes instead of half an hour");
    reproduce->add_flag("--list", rep.list, "list the claims and exit");
    reproduce->add_option("--json", rep.jsonOut, "write the table as JSON to FILE");
    reproduce->add_option("--markdown", rep.markdownOut,
                          "write the table as a Markdown page to FILE with the command, the date, the version and the machine it ran on "
                          "(docs/results.md)");
    reproduce
        ->add_option("--seed", rep.seeds,
                     "RNG seed of every run, or a list (1,2,3): each claim runs with each seed and matches only when all go the published way "
                     "(default: each scenario's own, 1 in the shipped ones)")
        ->delimiter(',')
        ->check(kNonNegative);
    reproduce
        ->add_option("--steady-hold", rep.steadyHold,
                     "hackbench claims: stop each run once it has been at steady state this many simulated seconds and compare the job "
                     "time at the steady rate (default 1; 0: run each to its end and compare whole-run times)")
        ->check(CLI::Range(0.0, 3600.0));
    reproduce->add_option("--scenarios", rep.scenarios,
                          "the shipped scenarios' directory (default: the installed ones, or the source tree's resources/scenarios)");
    o.reproduce = reproduce;
}

}  // namespace

// Every subcommand, in the order --help lists them.
void addSubcommands(CLI::App& app, Cli& o) {
    addTopologyCommand(app, o);
    addExplainCommand(app, o);
    o.knobs = app.add_subcommand("knobs", "list knob presets and knobs");
    addRunCommand(app, o);
    addAgreeCommand(app, o);
    addCompareTracesCommand(app, o);
    addTraceCommand(app, o);
    addCompareCommand(app, o);
    addSweepCommand(app, o);
    addReproduceCommand(app, o);
    o.demo = app.add_subcommand("demo", "explain a few wakeups on a 2-socket machine");
    o.scenarios = app.add_subcommand("scenarios", "list the shipped scenarios (run, compare and sweep take their names)");
}

int parseCommandLine(CLI::App& app, Cli& o, int argc, char** argv) {
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("schedlab-cli ") + SCHEDLAB_VERSION);
    addSubcommands(app, o);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        const std::string msg = e.what();
        std::fprintf(stderr, "schedlab-cli: %s\n", (msg.empty() ? std::string("bad command line (see --help)") : msg + " (see --help)").c_str());
        return 2;
    }
    return -1;
}

}  // namespace sched
