// report.h: what a run prints and writes: the human report, the JSON with every
// metric and the scenario/knobs that produced it, CSV timelines (including the
// seed's bpftrace rq-length format), and the LKML-ready compare and sweep tables.
#pragma once

#include "scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sched {

/// The human-readable report of one run.
std::string runReportText(const Scenario& s, const RunResult& r);
/// Every metric, with the scenario document, all knobs and the cost model.
nlohmann::json runReportJson(const Scenario& s, const RunResult& r);
/// CSV files of one run: {file name, contents}.
std::vector<std::pair<std::string, std::string>> runCsvFiles(const RunResult& r);
/// The seed's `rqlen.bt` output: "[   Timestamp],CPU  0,..." then one row per 50 Hz sample.
std::string bpftraceRqlenCsv(const RunResult& r);
/// The same layout from sample times (ns) and row-major values, `ncpus` per row.
std::string bpftraceRqlenCsv(const std::vector<std::int64_t>& times, const std::vector<std::uint16_t>& values, int ncpus);

/// One table row: a metric and its value in each run.
struct CompareRow {
    std::string label;
    std::vector<double> values;
    int decimals = 0;
    int direction = 0;  ///< -1 lower is better, +1 higher is better, 0 neutral
    bool section = false;  ///< a heading line
};
/// The rows compare and sweep print, for any number of runs of one scenario.
std::vector<CompareRow> compareRows(const std::vector<const RunResult*>& runs);
/// Two-column rows as compare prints them: metric, base, patch, change in % with (+)/(-).
std::string compareRowsText(const std::vector<CompareRow>& rows, const std::string& base, const std::string& patch);
/// `compare`: base vs patch, fixed width, ready to paste into an email.
std::string compareTable(const Scenario& s, const RunResult& a, const RunResult& b);
/// `sweep`: one row per value of `what`, the headline columns.
std::string sweepTable(const Scenario& s, const std::string& what, const std::vector<std::string>& values,
                       const std::vector<const RunResult*>& runs);

/// Writes `content` to `path` through a temporary file and a rename (never a half file).
/// Throws InputError(path, "", problem) on failure.
void writeFileAtomic(const std::string& path, const std::string& content);

}  // namespace sched
