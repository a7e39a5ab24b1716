// SPDX-License-Identifier: GPL-2.0-or-later
// report.h: schedlab-calibrate's outputs: the plain-text table on stdout and the JSON file
// (format "schedlab-calibrate/1"), written under a temporary name and renamed into place.
#pragma once

#include "figure.h"
#include "machine_info.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sched::calibrate {

/// What the report says besides the figures.
struct RunInfo {
    std::string toolVersion;
    std::string dateUtc;        ///< ISO 8601, e.g. "2025-05-01T12:00:00Z"
    std::vector<int> cpusUsed;  ///< [cpuA] or [cpuA, cpuB]
    bool shortMode = false;
    int runs = 0;  ///< R
    double clockReadCostNs = 0;
    double seconds = 0;          ///< the whole program's wall time
    std::string loadavgAtStart;  ///< /proc/loadavg's first three fields before measuring (other load distorts)
    /// Over the microbenchmarks (intervalSeconds 0: none ran): the share of the used CPUs' time that
    /// other tasks took (busy time in /proc/stat minus this process's CPU time; approximate, tick
    /// based), and the share stolen by the hypervisor.
    double intervalSeconds = 0, otherShare = 0, stealShare = 0;
};

/// /proc/loadavg's 1, 5 and 15 minute load averages ("" when unreadable).
std::string loadavg();

/// The current time as ISO 8601 UTC with a Z.
std::string isoDateUtc();

/// The table, one line per figure, with a header naming the machine.
std::string formatTable(const MachineInfo& m, const RunInfo& run, const std::vector<Figure>& figures);

/// The JSON document.
nlohmann::ordered_json toJson(const MachineInfo& m, const RunInfo& run, const std::vector<Figure>& figures);

/// Fails (returns the reason) when `path` cannot be written: creates and removes its temporary.
/// Empty string: writable.
std::string checkWritable(const std::string& path);

/// Writes `text` to PATH.tmp.PID beside `path`, then renames it to `path`; the temporary is removed
/// on failure. Throws std::runtime_error with the reason.
void writeFileAtomically(const std::string& path, const std::string& text);

}  // namespace sched::calibrate
