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
