// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_scenario.cpp: libFuzzer target for the scenario parser (core/sim/scenario.h), JSON text to
// Scenario. Any input must give a Scenario or an InputError / TopologyError (the one line the
// CLI prints), never another exception ("internal error"), a crash, a hang or a sanitizer report.
#include "sim/scenario.h"
#include "topology/topology.h"
#include "topology/topology_json.h"
#include "util/input_error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const std::string text(reinterpret_cast<const char*>(data), size);
        const sched::Scenario s = sched::parseScenario(sched::parseJsonOrThrow(text, "fuzz.json"), "fuzz.json", SCHEDLAB_FUZZ_BASE_DIR);
        // What every accepted scenario keeps (a simulation and the window rely on them).
        if (!s.topo || s.topo->nrCpus() <= 0 || s.variants.empty()) __builtin_trap();
        std::int64_t tasks = 0;
        for (const auto& w : s.workloads) {
            const std::int64_t n = sched::workloadTasks(w, s.topo->nrCpus());
            if (n < 0) __builtin_trap();
            tasks += n;
            (void)sched::workloadCommand(w);
        }
        if (tasks > sched::kMaxScenarioTasks) __builtin_trap();
    } catch (const sched::InputError&) {
    } catch (const sched::TopologyError&) {
    }
    return 0;
}
