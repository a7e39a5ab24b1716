// SPDX-License-Identifier: GPL-2.0-or-later
// state_json.h: the `schedlab-cli explain` state file: one machine state and one
// wakeup (documented in docs/state-format.md). Every problem becomes an
// InputError naming the file, the key and the problem.
#pragma once

#include "kernel/decision.h"
#include "util/input_error.h"
#include "kernel/knobs.h"
#include "kernel/sched_state.h"
#include "kernel/wakeup_path.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace sched {

struct ExplainInput {
    std::shared_ptr<const Topology> topo;
    std::unique_ptr<MachineState> state;
    Knobs knobs;
    Task task;
    Waker waker;
    std::uint32_t wake_flags = 0;
};

/// Parses a state document. `file` is used in messages, `baseDir` resolves
/// relative topology paths.
ExplainInput parseExplainState(const nlohmann::json& doc, const std::string& file, const std::string& baseDir);
/// Reads and parses a state file.
ExplainInput loadExplainState(const std::string& path);

/// Knobs from a JSON value (preset name, or object with "preset" and overrides).
Knobs knobsFromJson(const nlohmann::json& v, const std::string& file, const std::string& key);

}  // namespace sched
