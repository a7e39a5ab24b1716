// SPDX-License-Identifier: GPL-2.0-or-later
// delta_table.h: the A vs B table under the heatmaps, metrics as columns so that it stays four
// lines high (a header, A, B, B vs A in %), in a fixed-width font.
#pragma once

#include "sim/simulation.h"

#include <QString>

namespace schedlab {

/// The workloads' headline numbers once `finished` (mid-run they are partial), then wakeups
/// ("sched_waking" for a `recorded` trace), migrations (fork placements left out), context
/// switches, wakeup latency p50 / p99 and the idle-delay hits (left out for two traces, which
/// have none).
QString deltaTable(const sched::Snapshot& a, const sched::Snapshot& b, bool finished, bool recorded);

}  // namespace schedlab
