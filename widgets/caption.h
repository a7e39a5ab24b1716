// SPDX-License-Identifier: GPL-2.0-or-later
// caption.h: the one-line caption under an exported view (and the window's caption()): every
// parameter a reader of the mailing-list thread needs to reproduce the picture.
#pragma once

#include "sim/scenario.h"
#include "sim/snapshot.h"

#include <QString>

namespace schedlab {

struct TraceSide;

/// "schedlab 0.x · epyc-9654-2s (384 CPUs) · hackbench … · A: baseline · B: idle-delay-v2 ·
/// seed 1 · t = 12.000 ms simulated · cost: defaults (…) · file.json".
QString runCaption(const sched::Scenario& s, const QString& scenarioPath, quint64 seed, const sched::Snapshot& a, const sched::Snapshot* b);

/// What a recorded trace's caption names.
struct TraceCaption {
    const TraceSide* a = nullptr;
    QString aSummary;              ///< its agreement in words (TraceSide::agreementSummary())
    qint64 cursor = 0;             ///< ns since A's first event
    int openedDisagreement = -1;   ///< A's disagreement shown, -1 none
    const TraceSide* b = nullptr;  ///< a second trace, or null
    QString bSummary;
    /// Or a simulation beside the trace:
    const sched::Scenario* beside = nullptr;
    QString besidePath;
    quint64 besideSeed = 0;
    qint64 besideTarget = 0;                      ///< the simulated time asked for
    const sched::Snapshot* besideSnap = nullptr;  ///< its frame, if any yet
};
QString traceCaption(const TraceCaption& c);

}  // namespace schedlab
