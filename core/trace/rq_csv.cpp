// SPDX-License-Identifier: GPL-2.0-or-later
// rq_csv.cpp: the seed's bpftrace runqueue-length CSV.
#include "trace/rq_csv.h"

#include "util/input_error.h"
#include "util/text_scan.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace sched {

namespace {

using text::toInt;
using text::trim;

/// Splits on commas; a trailing comma (the script prints one after every value) ends the row.
std::vector<std::string_view> cells(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t pos = 0;
    while (pos <= line.size()) {
        const std::size_t c = line.find(',', pos);
        if (c == std::string_view::npos) {
            if (!trim(line.substr(pos)).empty()) out.push_back(trim(line.substr(pos)));
            break;
        }
        out.push_back(trim(line.substr(pos, c - pos)));
        pos = c + 1;
    }
    return out;
}

}  // namespace

int RqLenCsv::nrRunning(std::size_t row, std::size_t col) const {
    const int v = value(row, col);
    if (v < 0 || counts_running_task) return v;
    return v > 0 ? v + 1 : 0;
}

bool looksLikeRqLenCsv(std::string_view firstLine) {
    const std::string_view t = trim(firstLine);
    const std::size_t close = t.find(']');
    return t.starts_with("[") && close != std::string_view::npos && trim(t.substr(1, close - 1)) == "Timestamp";
}

RqLenCsv parseRqLenCsv(std::string_view text, const std::string& name, bool countsRunningTask) {
    RqLenCsv r;
    r.file = name;
    r.counts_running_task = countsRunningTask;
    std::uint32_t lineNo = 0;
    bool header = false;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        const bool complete = nl != std::string_view::npos;
        if (!complete) nl = text.size();
        const std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++lineNo;
        if (trim(line).empty()) continue;
        if (!header) {
            if (!looksLikeRqLenCsv(line))
                throw InputError(name, fmt::format("line {}", lineNo),
                                 "not a runqueue-length CSV: the first line must be \"[   Timestamp],CPU  0,...\"");
            const auto c = cells(line);
            for (std::size_t i = 1; i < c.size(); ++i) {
                int cpu = -1;
                if (!c[i].starts_with("CPU") || !toInt(c[i].substr(3), cpu) || cpu < 0 || cpu >= 4096)
                    throw InputError(name, fmt::format("line {}, column {}", lineNo, i + 1), fmt::format("expected \"CPU<n>\", got \"{}\"", c[i]));
                for (std::size_t j = 0; j < r.cpus.size(); ++j)
                    if (r.cpus[j] == cpu)
                        throw InputError(name, fmt::format("line {}, column {}", lineNo, i + 1), fmt::format("CPU{} is also column {}", cpu, j + 2));
                r.cpus.push_back(cpu);
            }
            if (r.cpus.empty()) throw InputError(name, fmt::format("line {}", lineNo), "no CPU columns");
            header = true;
            continue;
        }
        const auto c = cells(line);
        auto bad = [&](const std::string& why) {
            if (!complete) {
                r.truncated_line = lineNo;
                return;
            }
            ++r.problem_count;
            if (r.problems.size() < Trace::kMaxProblems) r.problems.push_back({lineNo, why});
        };
        std::int64_t t = 0;
        if (c.empty() || !c[0].starts_with("[") || !c[0].ends_with("]") || !toInt(c[0].substr(1, c[0].size() - 2), t)) {
            bad("expected \"[<elapsed ns>]\" first");
            continue;
        }
        if (c.size() - 1 > r.cpus.size()) {
            bad(fmt::format("{} values for {} CPUs", c.size() - 1, r.cpus.size()));
            continue;
        }
        std::vector<std::int16_t> row(r.cpus.size(), -1);  // missing trailing values: no sample
        bool ok = true;
        for (std::size_t i = 1; i < c.size() && ok; ++i) {
            int v = 0;
            if (c[i].empty()) continue;
            if (!toInt(c[i], v) || v < 0 || v > 30000) {
                bad(fmt::format("column {}: \"{}\" is not a runqueue length", i + 1, c[i]));
                ok = false;
            } else {
                row[i - 1] = std::int16_t(v);
            }
        }
        if (!ok) continue;
        if (!complete && c.size() - 1 < r.cpus.size()) {  // cut short mid-row
            r.truncated_line = lineNo;
            continue;
        }
        if (!r.time.empty() && t < r.time.back()) {
            bad(fmt::format("timestamp {} is before the previous row's {}", t, r.time.back()));
            continue;
        }
        r.time.push_back(t);
        r.values.insert(r.values.end(), row.begin(), row.end());
    }
    if (!header) throw InputError(name, "", "empty file, not a runqueue-length CSV");
    // A header alone is a run shorter than the sampling period (schedlab writes those too); rows
    // that are all bad are not a CSV of this kind.
    if (r.time.empty() && r.problem_count > 0) {
        throw InputError(name, fmt::format("line {}", r.problems.front().line),
                         fmt::format("{} (and no row of the {} was good)", r.problems.front().what, r.problem_count));
    }
    return r;
}

RqLenCsv readRqLenCsv(const std::string& path, bool countsRunningTask) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open");
    std::ostringstream s;
    s << in.rdbuf();  // 50 Hz x CPUs: a long run is a few MB
    return parseRqLenCsv(s.str(), path, countsRunningTask);
}

}  // namespace sched
