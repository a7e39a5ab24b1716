// SPDX-License-Identifier: GPL-2.0-or-later
// delta_table.h: the A vs B table under the heatmaps, metrics as columns so that it stays four
// lines high (a header, A, B, B vs A in %), in a fixed-width font.
#pragma once

#include "sim/snapshot.h"

#include <QString>

namespace schedlab {

/// What the table counts from: totals since t = 0, or rates over the last 100 ms of simulated
/// time (the machine as it is now, without the start-up the totals mix in); `steady` is the
/// last window once both sides have reached their steady state, totals before.
enum class DeltaSince { steady, start, window };

/// The last window's length: the outcome series' last 10 points.
inline constexpr std::size_t kDeltaWindowPoints = 10;

/// Whether deltaTable() shows the last window (true) or totals since t = 0 in `since` mode for
/// these snapshots: totals when a side has no window yet; in `steady` mode also while a side
/// is not steady over the whole window (start-up, wind-down) and once both have `finished`
/// (the workloads' final figures).
bool deltaShowsWindow(const sched::Snapshot& a, const sched::Snapshot& b, DeltaSince since, bool finished = false);

/// Totals: the workloads' headline numbers once `finished` (mid-run they are partial), then
/// wakeups ("sched_waking" for a `recorded` trace), migrations (fork placements left out),
/// context switches, wakeup latency p50 / p99 and the idle-delay hits (left out for two traces,
/// which have none). The last window: the workload's rate (hackbench's messages/s, ...), busy
/// CPUs, migrations, wakeups and context switches per second. A simulated run's table leads
/// with the "since" column.
QString deltaTable(const sched::Snapshot& a, const sched::Snapshot& b, bool finished, bool recorded, DeltaSince since = DeltaSince::steady);

}  // namespace schedlab
