// SPDX-License-Identifier: GPL-2.0-or-later
// test_scenarios.h: small scenarios several core test files run.
#pragma once

#include "sim/scenario.h"

#include <nlohmann/json.hpp>

/// hackbench --threads --pipe, `groups` groups of 4 fds, `loops` loops, on the preset `topo`.
inline sched::Scenario hackbenchOn(const char* topo, int groups, int loops) {
    return sched::parseScenario(
        nlohmann::json{
            {"topology", topo},
            {"workloads",
             nlohmann::json::array({{{"type", "hackbench"}, {"groups", groups}, {"fds", 4}, {"threads", true}, {"pipe", true}, {"loops", loops}}})}},
        "nohz.json", ".");
}
