// SPDX-License-Identifier: GPL-2.0-or-later
// bench_hackbench.h: the benchmarks' hackbench scenario (-f 20 --threads --pipe), shared by
// bench_engine and steady_window so both time the same run.
#pragma once

#include "sim/scenario.h"

#include <nlohmann/json.hpp>

#include <string>

namespace sched::bench {

inline Scenario hackbench(const std::string& topo, int groups, int loops) {
    const nlohmann::json doc = {
        {"topology", topo},
        {"workloads",
         nlohmann::json::array({{{"type", "hackbench"}, {"groups", groups}, {"fds", 20}, {"loops", loops}, {"threads", true}, {"pipe", true}}})}};
    return parseScenario(doc, "bench.json", ".");
}

}  // namespace sched::bench
