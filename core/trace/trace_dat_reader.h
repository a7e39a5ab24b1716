// SPDX-License-Identifier: GPL-2.0-or-later
// trace_dat_reader.h: the main() of `schedlab-trace-reader`, the program readTraceDat() starts
// (posix_spawn) to read a share of a trace.dat's CPUs. Its arguments and descriptors are
// readTraceDat()'s business; run by hand it says so and exits with status 2.
#pragma once

namespace sched {

int traceReaderMain(int argc, char** argv);

}  // namespace sched
