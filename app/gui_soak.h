// SPDX-License-Identifier: GPL-2.0-or-later
// gui_soak.h: `schedlab --soak SECONDS`: the window driven as a person would drive it for a long
// time (knob sliders moved, the run restarted, a recorded trace opened and browsed, back to the
// simulation), its resident memory sampled every 10 s on stdout. tests/soak/window_soak.sh runs
// it and judges the growth; not part of ctest.
#pragma once

#include <QString>

#include <memory>
#include <optional>

namespace sched {
struct Scenario;
class Topology;
}  // namespace sched

namespace schedlab {

class MainWindow;
struct StartOptions;

struct SoakOptions {
    double seconds = 60;                        ///< wall time to run, then the application exits with status 0
    int actionMs = 2000;                        ///< one action every this many wall ms
    const sched::Scenario* scenario = nullptr;  ///< null: the default scenario
    QString scenarioPath;
    QString tracePath;  ///< "": no trace opens (read again from the file at every open)
    std::shared_ptr<const sched::Topology> traceTopology;
};

/// Starts the soak on `window` (already showing the scenario): actions from a fixed cycle, one
/// every actionMs, and a line "soak T s rss KIB KiB actions N" every 10 s of wall time.
void startSoak(MainWindow& window, const SoakOptions& o, const StartOptions& so);

/// This process's resident set size in KiB (/proc/self/statm), 0 when it cannot be read.
long residentKiB();

}  // namespace schedlab
