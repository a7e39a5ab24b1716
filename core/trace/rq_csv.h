// SPDX-License-Identifier: GPL-2.0-or-later
// rq_csv.h: the runqueue-length CSV of the seed thread's bpftrace script (50 Hz samples of
// @runqlen per CPU; docs/trace-formats.md: Runqueue-length CSV), read for the same views as a trace.
// The writer is report.h's bpftraceRqlenCsv().
#pragma once

#include "trace/trace.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sched {

struct RqLenCsv {
    std::string file;
    std::vector<int> cpus;             ///< the CPU number of each column, from "CPU%3d" headers
    std::vector<std::int64_t> time;    ///< elapsed ns of each row
    std::vector<std::int16_t> values;  ///< rows x cpus, row-major; -1 = no sample (missing trailing value)
    /// true: values are rq->nr_running (the seed's script, the simulator's definition); false: the
    /// stock runqlen tool's queued-but-not-running count.
    bool counts_running_task = true;
    std::vector<TraceProblem> problems;  ///< the first Trace::kMaxProblems bad rows
    std::uint64_t problem_count = 0;
    std::uint32_t truncated_line = 0;  ///< the last row was cut short (its line), 0 = no

    std::size_t rows() const { return time.size(); }
    int value(std::size_t row, std::size_t col) const { return values[row * cpus.size() + col]; }
    /// nr_running as the simulator counts it (running task included), -1 = no sample. From a
    /// queued-only count this is a lower bound: queued > 0 means one more runs; 0 reads as 0.
    int nrRunning(std::size_t row, std::size_t col) const;
};

/// Reads the CSV; throws InputError ("FILE: problem") when the header is not the script's
/// ("[   Timestamp],CPU  0,...") or the file cannot be read. Bad rows are skipped and listed.
RqLenCsv readRqLenCsv(const std::string& path, bool countsRunningTask = true);
RqLenCsv parseRqLenCsv(std::string_view text, const std::string& name, bool countsRunningTask = true);
/// Whether `firstLine` is the script's header (to tell the CSV from a trace).
bool looksLikeRqLenCsv(std::string_view firstLine);

}  // namespace sched
