// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_state.cpp: libFuzzer target for the state parser (core/kernel/state_json.h) and the wakeup
// path on what it accepts: JSON text to an ExplainInput, then decide() (traced) and the
// explanation in text and JSON, as `schedlab-cli explain` does. Any input must give a decision
// or an InputError / TopologyError; never another exception, a crash or a sanitizer report.
#include "explain/explain_format.h"
#include "kernel/state_json.h"
#include "kernel/wakeup_path.h"
#include "topology/topology.h"
#include "topology/topology_json.h"
#include "util/input_error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const std::string text(reinterpret_cast<const char*>(data), size);
        sched::ExplainInput in = sched::parseExplainState(sched::parseJsonOrThrow(text, "fuzz.json"), "fuzz.json", SCHEDLAB_FUZZ_BASE_DIR);
        const sched::Decision d = sched::decide(*in.state, in.knobs, in.task, in.waker, in.wake_flags, true);
        // The chosen CPU is one of the machine's, and one the task may run on.
        if (d.cpu < 0 || d.cpu >= in.topo->nrCpus()) __builtin_trap();
        (void)sched::decisionToText(d, in);
        (void)sched::decisionToJson(d).dump();
    } catch (const sched::InputError&) {
    } catch (const sched::TopologyError&) {
    }
    return 0;
}
