// SPDX-License-Identifier: GPL-2.0-or-later
// explain_format.h: a Decision rendered for people and programs: the text of
// `schedlab-cli explain` (one line per step, the CPUs examined, the result) and its JSON.
#pragma once

#include "kernel/decision.h"
#include "kernel/state_json.h"

#include <nlohmann/json.hpp>

#include <string>

namespace sched {

/// The decision as the JSON `schedlab-cli explain --json` prints.
nlohmann::json decisionToJson(const Decision& d);
/// The decision as text: one line per step, then the result.
std::string decisionToText(const Decision& d, const ExplainInput& in);

}  // namespace sched
