// SPDX-License-Identifier: GPL-2.0-or-later
// run_export.h: a simulated run written to files for other tools. File > Export trace… writes a
// side's run as ftrace text with the same event sink and FtraceTextWriter as `schedlab-cli run
// --ftrace`; File > Export rq-length CSV… writes the seed's bpftrace CSV (bpftraceRqlenCsv).
// Every file goes through a temporary one renamed into place (QSaveFile).
#pragma once

#include "kernel/knobs.h"
#include "sim/scenario.h"

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <functional>

namespace schedlab {

/// Runs `s` with `knobs` and `seed` from t = 0 to `untilNs` of simulated time (or to its end,
/// whichever comes first: a run is deterministic, so this is the run the window showed when
/// its knobs were not changed mid-run) and writes every scheduler event as ftrace text (tracefs
/// layout, ns timestamps) to `path`. `keepGoing(now)` is asked every simulated ms; false
/// abandons the file. Returns "" or a one-line error. Any thread.
QString exportRunFtrace(const sched::Scenario& s, const sched::Knobs& knobs, std::uint64_t seed, std::int64_t untilNs, const QString& path,
                        const std::function<bool(std::int64_t)>& keepGoing = {});

/// The scenario file File > Save scenario as… writes: `s`'s document with variants A (and B when
/// given) as a preset plus the knobs that differ from baseline, and `seed`; indented JSON.
QByteArray scenarioWithVariants(const sched::Scenario& s, const sched::Knobs& a, const sched::Knobs* b, std::uint64_t seed);

/// Writes `data` to `path` through a temporary file renamed into place. Returns "" or a one-line error.
QString saveFileAtomic(const QString& path, const QByteArray& data);

}  // namespace schedlab
