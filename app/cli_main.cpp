// SPDX-License-Identifier: GPL-2.0-or-later
// cli_main.cpp: schedlab-cli, the core without Qt: topology, explain, knobs, demo.
#include "cli_args.h"
#include "cli_sim.h"
#include "explain/explain_format.h"
#include "util/install_paths.h"
#include "util/output_files.h"
#include "kernel/knobs.h"
#include "kernel/sched_domain.h"
#include "kernel/state_json.h"
#include "topology/topology.h"
#include "topology/topology_json.h"
#include "kernel/topology_report.h"
#include "kernel/wakeup_path.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <iostream>

using namespace sched;
using nlohmann::json;

namespace {

int fail(const std::string& line) {
    std::fprintf(stderr, "schedlab-cli: %s\n", line.c_str());
    return 2;
}

json topologyJson(const Topology& t, const SchedDomains& sd, int onlyCpu) {
    json j;
    j["name"] = t.name();
    j["arch"] = archName(t.arch());
    j["nr_cpus"] = t.nrCpus();
    j["nr_nodes"] = t.nrNodes();
    j["distances"] = t.distances();
    j["smt_active"] = sd.smtActive();
    j["asym_cpucap_active"] = sd.asymCpucapActive();
    json cpus = json::array();
    for (const auto& c : t.cpus()) {
        if (onlyCpu >= 0 && c.cpu != onlyCpu) continue;
        json cj = {{"cpu", c.cpu},
                   {"thread", c.thread},
                   {"core", c.core},
                   {"cluster", c.cluster},
                   {"llc", c.llc},
                   {"die", c.die},
                   {"package", c.package},
                   {"node", c.node},
                   {"capacity", c.capacity},
                   {"sd_llc_id", sd.sd_llc_id(c.cpu)},
                   {"sd_llc_size", sd.sd_llc_size(c.cpu)},
                   {"smt_siblings", t.smtMask(c.cpu).toList()}};
        json doms = json::array();
        for (const auto& d : sd.domains(c.cpu)) {
            json groups = json::array();
            for (const auto& g : d.groups) groups.push_back(g.toList());
            doms.push_back({{"level", d.level},
                            {"name", d.name},
                            {"span", d.span.toList()},
                            {"span_weight", d.span_weight},
                            {"flags", sdFlagsToString(d.flags)},
                            {"flags_value", d.flags},
                            {"imbalance_pct", d.imbalance_pct},
                            {"cache_nice_tries", d.cache_nice_tries},
                            {"min_interval", d.min_interval},
                            {"max_interval", d.max_interval},
                            {"busy_factor", d.busy_factor},
                            {"balance_interval", d.balance_interval},
                            {"imb_numa_nr", d.imb_numa_nr},
                            {"groups", groups}});
        }
        cj["domains"] = doms;
        cpus.push_back(cj);
    }
    j["cpus"] = cpus;
    return j;
}

int runExplain(const std::string& path, bool asJson, const std::vector<std::string>& knobOverrides, const std::string& knobPreset) {
    ExplainInput in = loadExplainState(path);
    if (!knobPreset.empty()) {
        try {
            in.knobs = Knobs::preset(knobPreset);
        } catch (const KnobError& e) {
            return fail(std::string("--knobs: ") + e.what());
        }
    }
    for (const auto& kv : knobOverrides) {
        auto eq = kv.find('=');
        if (eq == std::string::npos) return fail(fmt::format("--set {}: expected name=value", kv));
        try {
            in.knobs.set(kv.substr(0, eq), kv.substr(eq + 1));
        } catch (const KnobError& e) {
            return fail(std::string("--set: ") + e.what());
        }
    }
    Decision d = decide(*in.state, in.knobs, in.task, in.waker, in.wake_flags, /*trace=*/true);
    if (asJson) {
        json j = decisionToJson(d);
        j["knobs"] = in.knobs.describe();
        j["topology"] = in.topo->name();
        fmt::print("{}\n", j.dump(2));
    } else {
        fmt::print("{}", decisionToText(d, in));
    }
    return 0;
}

// The main job until the GUI lands: a few wakeups on a 2-socket machine, explained.
int runDemo() {
    struct Case {
        const char* title;
        const char* state;
    };
    const Case cases[] = {
        {"A sync wakeup (pipe write) from a busy CPU pulls the wakee into the waker's LLC",
         R"({"topology": "x86-20c40t", "wake_flags": ["SYNC"],
             "waker": {"cpu": 3}, "task": {"prev_cpu": 14},
             "cpus": [{"cpu": 14, "curr": "normal"}, {"cpu": 4, "curr": "normal"}, {"cpu": 23, "curr": "normal"}]})"},
        {"A waker with many wakees goes wide: the wakee stays in prev's LLC and takes an idle SMT sibling",
         R"({"topology": "x86-20c40t", "waker": {"cpu": 0, "wakee_flips": 600}, "task": {"prev_cpu": 12, "wakee_flips": 25},
             "default_cpu": {"curr": "normal"}, "cpus": [{"cpu": 32, "curr": "idle"}]})"},
        {"Baseline: prev (CPU 5) left idle 0.3 ms ago and now has 2 tasks, so it reads busy: the wakee goes to an idle SMT sibling",
         R"({"topology": "x86-20c40t", "now_ns": 5000000000, "waker": {"cpu": 1}, "task": {"prev_cpu": 5},
             "cpus": [{"cpu": 5, "curr": "normal", "nr_running": 2, "idle_exit_ns": 4999700000, "load_avg": 2048},
                      {"cpu": 6, "curr": "normal"}, {"cpu": 7, "curr": "normal"}]})"},
        {"idle-delay-v2, same state: prev still counts as idle (left idle < 1 ms ago, nr_running 2 <= 4), so the wakee stacks on it",
         R"({"topology": "x86-20c40t", "knobs": "idle-delay-v2", "now_ns": 5000000000, "waker": {"cpu": 1}, "task": {"prev_cpu": 5},
             "cpus": [{"cpu": 5, "curr": "normal", "nr_running": 2, "idle_exit_ns": 4999700000, "load_avg": 2048},
                      {"cpu": 6, "curr": "normal"}, {"cpu": 7, "curr": "normal"}]})"},
    };
    int i = 0;
    for (const auto& c : cases) {
        ExplainInput in = parseExplainState(json::parse(c.state), "demo", "");
        Decision d = decide(*in.state, in.knobs, in.task, in.waker, in.wake_flags, true);
        fmt::print("==== {}. {}\n\n{}\n", ++i, c.title, decisionToText(d, in));
    }
    fmt::print("Explain your own: schedlab-cli explain resources/examples/explain/<file>.json (see docs/state-format.md)\n");
    return 0;
}

int runTopology(const std::string& topoName, bool topoJson, bool topoList, int topoCpu) {
    if (topoList) {
        for (const auto& n : Topology::presetNames()) fmt::print("{:<18} {}\n", n, Topology::presetDescription(n));
        return 0;
    }
    if (topoName.empty()) return fail("topology: give a preset name or a file (or --list)");
    Topology t = loadTopology(topoName);
    SchedDomains sd(t);
    if (topoCpu >= t.nrCpus()) return fail(fmt::format("--cpu {}: outside the machine (0-{})", topoCpu, t.nrCpus() - 1));
    if (topoJson) fmt::print("{}\n", topologyJson(t, sd, topoCpu).dump(2));
    else fmt::print("{}", topologyReport(t, sd, topoCpu));
    return 0;
}

int printKnobs() {
    fmt::print("presets:\n");
    for (const auto& n : Knobs::presetNames()) fmt::print("  {:<18} {}\n", n, Knobs::presetDescription(n));
    fmt::print("knobs (baseline value):\n");
    Knobs b;
    for (const auto& n : Knobs::names()) fmt::print("  {:<24} {}\n", n, b.get(n));
    return 0;
}

// Runs the subcommand given (the command line parsed into `o`).
int dispatch(Cli& o) {
    SimArgs& sim = o.sim;
    if (*o.topo) return runTopology(o.topoName, o.topoJson, o.topoList, o.topoCpu);
    if (*o.explain) return runExplain(o.statePath, o.explainJson, o.sets, o.knobPreset);
    if (*o.knobs) return printKnobs();
    if (*o.demo) return runDemo();
    if (*o.scenarios) return cliScenarios();
    sim.scenario = resolveScenarioPath(sim.scenario);  // a shipped scenario's bare name -> its file
    if (!sim.scenario.empty() && sim.scenario.find('/') == std::string::npos && !std::filesystem::exists(sim.scenario))
        return fail(fmt::format("{}: no such file, nor a shipped scenario of that name (schedlab-cli scenarios lists them)", sim.scenario));
    if (*o.run) return cliRun(sim);
    if (*o.trace) return cliTrace(o.tracePath, o.traceClock, o.traceQueued, o.traceCsv);
    if (*o.agree) return cliAgree(o.ag);
    if (*o.compareTraces) return cliCompareTraces(o.ct);
    if (*o.compare) return cliCompare(sim);
    if (*o.reproduce) return cliReproduce(o.rep);
    if (*o.sweep) return cliSweep(sim);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    installInterruptCleanup("schedlab-cli");  // Ctrl+C: no temporaries left, one line, exit 2
    CLI::App app{"schedlab-cli: the Linux 6.1 CFS wakeup path, explained"};
    Cli cli;
    if (const int rc = parseCommandLine(app, cli, argc, argv); rc >= 0) return rc;

    try {
        return dispatch(cli);
    } catch (const InputError& e) {
        return fail(e.what());
    } catch (const TopologyError& e) {
        return fail(e.what());
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
}
