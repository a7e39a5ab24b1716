// SPDX-License-Identifier: GPL-2.0-or-later
// test_scenarios.h: small scenarios several core test files run.
#pragma once

#include "sim/scenario.h"

#include <nlohmann/json.hpp>

#include <string>

/// hackbench --threads --pipe, `groups` groups of 4 fds, `loops` loops, on the preset `topo`.
inline sched::Scenario hackbenchOn(const char* topo, int groups, int loops) {
    return sched::parseScenario(
        nlohmann::json{
            {"topology", topo},
            {"workloads",
             nlohmann::json::array({{{"type", "hackbench"}, {"groups", groups}, {"fds", 4}, {"threads", true}, {"pipe", true}, {"loops", loops}}})}},
        "nohz.json", ".");
}

/// One task that never sleeps (a hog; its workload's setCpus() pins it).
class TestHog : public sched::Workload {
public:
    std::string name() const override { return "hog"; }
    std::string commandLine() const override { return "hog"; }
    void start(sched::Engine& e) override { id = e.spawn(0, "hog", 1, -1, 0, 0, 0); }
    sched::Action step(sched::Engine&, sched::SimTask&) override { return sched::Action::run(1000000); }
    bool finished() const override { return false; }
    void report(const sched::Engine&, sched::WorkloadReport&) const override {}
    int id = -1;
};

/// A scenario from JSON text (file name "test.json").
inline sched::Scenario scenario(const std::string& text) { return sched::parseScenario(nlohmann::json::parse(text), "test.json", "."); }

/// A hackbench scenario's JSON text: `g` groups of `f` fds, `loops` loops, threads or processes, pipes or sockets.
inline std::string hb(const std::string& topo, int g, int f, int loops, bool threads = true, bool pipe = true) {
    return nlohmann::json(
               {{"topology", topo},
                {"workloads", nlohmann::json::array(
                                  {{{"type", "hackbench"}, {"groups", g}, {"fds", f}, {"loops", loops}, {"threads", threads}, {"pipe", pipe}}})}})
        .dump();
}
