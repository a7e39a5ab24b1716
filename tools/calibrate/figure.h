// SPDX-License-Identifier: GPL-2.0-or-later
// figure.h: one figure of schedlab-calibrate (a JSON key under "figures"): its samples, what was
// timed, or why it could not be measured; and the order statistics the report prints.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sched::calibrate {

/// One measured (or unmeasurable) figure.
struct Figure {
    std::string name;  ///< the JSON key, e.g. "pipe_write_nowake"
    bool available = false;
    std::string reason;  ///< why it is unavailable (empty when available)
    std::string method;  ///< one line saying exactly what was timed, how, on which CPUs
    std::string label;   ///< a few words for the table
    /// Per-run ns per operation (a run figure), or one value per event (a distribution figure).
    std::vector<double> samples;
    /// false: samples are the R runs, the table's spread is p25-p75. true: samples are single
    /// events (ttwu windows), "runs" is their count and the spread is p10-p90.
    bool distribution = false;
    std::uint64_t iterations = 0;  ///< iterations per run (distribution figures: the recordings' count)
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();  ///< more keys for the JSON (counts, CPUs)

    /// An unavailable figure.
    static Figure unavailable(std::string name, std::string reason);
};

/// Order statistics of a sample (linear interpolation between closest ranks, as numpy's default).
struct Summary {
    double min = 0, p10 = 0, p25 = 0, median = 0, p75 = 0, p90 = 0, p99 = 0, max = 0;
    std::size_t count = 0;
};

/// The summary of `v` (count 0 and all zero when `v` is empty).
Summary summarize(std::vector<double> v);

/// The q-quantile (0 <= q <= 1) of a sorted, non-empty sample.
double quantileSorted(const std::vector<double>& sorted, double q);

}  // namespace sched::calibrate
