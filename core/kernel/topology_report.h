// SPDX-License-Identifier: GPL-2.0-or-later
// topology_report.h: a machine and its sched domains as text, in the layout of
// the kernel's sched_domain debug output (shared by schedlab-cli and the GUI).
#pragma once

#include "kernel/sched_domain.h"
#include "topology/topology.h"

#include <string>

namespace sched {

/// `onlyCpu` < 0: every CPU; else that CPU's domains only.
std::string topologyReport(const Topology& t, const SchedDomains& sd, int onlyCpu);

}  // namespace sched
