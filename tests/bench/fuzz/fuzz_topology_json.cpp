// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_topology_json.cpp: libFuzzer target for the topology JSON reader (core/topology/
// topology_json.h) and the sched domains built on what it accepts (SchedDomains, the
// `schedlab-cli topology` report). Any input must give a Topology or a TopologyError /
// InputError; never another exception, a crash or a sanitizer report.
#include "kernel/sched_domain.h"
#include "kernel/topology_report.h"
#include "topology/topology.h"
#include "topology/topology_json.h"
#include "util/input_error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const std::string text(reinterpret_cast<const char*>(data), size);
        const sched::Topology t = sched::topologyFromJson(sched::parseJsonOrThrow(text, "fuzz.json"), "fuzz.json", "", SCHEDLAB_FUZZ_BASE_DIR);
        if (t.nrCpus() <= 0) __builtin_trap();
        const sched::SchedDomains sd(t);
        if (sd.nrCpus() != t.nrCpus()) __builtin_trap();
        (void)sched::topologyReport(t, sd, -1);
    } catch (const sched::InputError&) {
    } catch (const sched::TopologyError&) {
    }
    return 0;
}
