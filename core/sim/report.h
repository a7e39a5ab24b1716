// SPDX-License-Identifier: GPL-2.0-or-later
// report.h: what a run prints and writes: the human report, the JSON with every
// metric and the scenario/knobs that produced it, CSV timelines (including the
// seed's bpftrace rq-length format), and the LKML-ready compare and sweep tables.
#pragma once

#include "util/output_files.h"  // writeFileAtomic()

#include "sim/scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sched {

/// The human-readable report of one run.
std::string runReportText(const Scenario& s, const RunResult& r);
/// Messages per context switch at the steady rate (the steady work rate times the job's
/// messages over the steady switch rate; the seed thread's perf stat gives about 14), or -1
/// when the run's one measured workload does not count messages (or several do).
double steadyMessagesPerSwitch(const RunResult& r);
/// Every metric, with the scenario document, all knobs and the cost model.
nlohmann::json runReportJson(const Scenario& s, const RunResult& r);
/// The steady-state detector's windows, one CSV row each (t0_s, t1_s, busy CPUs, rq length,
/// migrations and switches per second, progress per second, messages per switch, SIS_UTIL's
/// nr_idle_scan, share of LLCs at 0 and share of placements that skipped the scan, and
/// steady = 1 from the steady state on); an unknown figure is an empty cell.
std::string steadyWindowsCsv(const RunResult& r);
/// CSV files of one run: {file name, contents}.
std::vector<std::pair<std::string, std::string>> runCsvFiles(const RunResult& r);
/// The seed's `rqlen.bt` output: "[   Timestamp],CPU  0,..." then one row per 50 Hz sample.
/// Its columns are the CPUs the workloads may use when every workload has a taskset mask
/// (`cpus`; the script of the proxy-execution thread printed CPUs 0-7 and 128-135 of a run pinned
/// to them), else every CPU.
std::string bpftraceRqlenCsv(const RunResult& r);
/// The same layout from sample times (ns) and row-major values, `ncpus` per row; `columns`: the
/// CPUs to print, in order (empty: all).
std::string bpftraceRqlenCsv(const std::vector<std::int64_t>& times, const std::vector<std::uint16_t>& values, int ncpus,
                             const std::vector<int>& columns = {});
/// The CPUs some workload may use when every workload has a taskset mask (their union), else empty.
std::vector<int> workloadCpuColumns(const Engine& e);

/// One table row: a metric and its value in each run.
struct CompareRow {
    std::string label;
    std::vector<double> values;
    int decimals = 0;
    int direction = 0;     ///< -1 lower is better, +1 higher is better, 0 neutral
    bool section = false;  ///< a heading line
};
/// The rows compare and sweep print, for any number of runs of one scenario.
std::vector<CompareRow> compareRows(const std::vector<const RunResult*>& runs);
/// Two-column rows as compare prints them: metric, base, patch, change in % with (+)/(-).
std::string compareRowsText(const std::vector<CompareRow>& rows, const std::string& base, const std::string& patch);
/// `compare`: base vs patch, fixed width, ready to paste into an email.
std::string compareTable(const Scenario& s, const RunResult& a, const RunResult& b);
/// `sweep`: one row per value of `what`, the headline columns.
std::string sweepTable(const Scenario& s, const std::string& what, const std::vector<std::string>& values, const std::vector<const RunResult*>& runs);
/// What a sweep table is made of: its `#` header, the knobs line, the rows of every run. A
/// sweep run point by point elsewhere (`sweep --emit-jobs`) keeps these in each point's JSON,
/// and `sweep --merge` builds the same table from them.
struct SweepParts {
    std::string header;  ///< the `#` lines of the first run
    std::string knobs;   ///< the first run's knobs line, the swept knob left out
    std::vector<CompareRow> rows;
};
SweepParts sweepParts(const Scenario& s, const std::string& what, const std::vector<const RunResult*>& runs);
std::string sweepTable(const SweepParts& parts, const std::string& what, const std::vector<std::string>& values);
nlohmann::json sweepPartsJson(const SweepParts& parts);
/// Throws std::runtime_error naming the field when `j` is not what sweepPartsJson writes.
SweepParts sweepPartsFromJson(const nlohmann::json& j);

}  // namespace sched
