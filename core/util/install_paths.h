// SPDX-License-Identifier: GPL-2.0-or-later
// install_paths.h: where the shipped scenarios are, for a binary run from the build tree and
// for one installed by `cmake --install` or the .deb (PREFIX/bin/schedlab-cli finds
// PREFIX/share/schedlab/scenarios), and a scenario named by its file name alone.
#pragma once

#include <string>

namespace sched {

/// The shipped scenarios: DATADIR/schedlab/scenarios beside an installed executable (found
/// from /proc/self/exe), else the source tree's resources/scenarios this binary was built
/// from, else "" when neither exists.
std::string shippedScenariosDir();

/// A scenario argument as given when it names a file; otherwise, when it is a bare name
/// ("mathieu-hackbench-epyc-9654", with or without ".json") of a shipped scenario, that file.
/// Anything else is returned unchanged (loadScenario() then says what is wrong with it).
std::string resolveScenarioPath(const std::string& arg);

/// The program the trace.dat reader starts (`schedlab-trace-reader`): SCHEDLAB_TRACE_READER when
/// set (set and empty: none, the reader forks instead), else LIBEXECDIR/schedlab/ beside an
/// installed executable, else this build tree's libexec/; "" when none of them is there.
std::string traceReaderPath();
/// The same for the program that reads hwloc topologies, `schedlab-hwloc-reader`
/// (SCHEDLAB_HWLOC_READER).
std::string hwlocReaderPath();

}  // namespace sched
