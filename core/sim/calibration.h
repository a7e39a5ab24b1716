// SPDX-License-Identifier: GPL-2.0-or-later
// calibration.h: per-core cost figures measured by schedlab-calibrate (tools/calibrate/) and
// committed under resources/calibration/, built into the core, and how they become the cost
// model's defaults of a machine family (docs/workloads.md: Calibration).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sched {

struct CostModel;

/// One committed run of schedlab-calibrate: the CPU it measured and each figure's median.
struct Calibration {
    std::string file;    ///< calibration/NAME.json
    std::string cpu;     ///< "AuthenticAMD family 25 model 1 stepping 1 (Zen 3 (Milan)): AMD EPYC"
    std::string kernel;  ///< uname -r of the machine that ran it
    std::string date;    ///< when it ran (UTC)
    bool virtualized = false;
    std::string hypervisor;
    std::map<std::string, double> median_ns;  ///< the available figures' medians, by their JSON key
    /// Of the waker's tails: how many trace events the recording has inside a tail (median).
    std::map<std::string, double> events_inside;

    /// A figure's median, or -1 when the run has none.
    double figure(const std::string& key) const;
};

/// The committed run every x86 preset takes its per-core figures from (parsed once).
const Calibration& x86Calibration();

/// Parses a schedlab-calibrate JSON document (`file` names it in errors); throws InputError.
Calibration parseCalibration(const std::string& json, const std::string& file);

/// One cost parameter set from a calibration: its name, value and the figures it came from.
struct CalibratedCost {
    std::string param;
    std::int64_t ns = 0;
    std::string from;  ///< "pipe_write_wake_local - pipe_write_nowake"
};

/// Sets the per-core parameters of `m` from `c` (the mapping in docs/workloads.md: Calibration);
/// parameters whose figures the run lacks keep their estimates. Returns what was set.
std::vector<CalibratedCost> applyCalibration(CostModel& m, const Calibration& c);

}  // namespace sched
