// SPDX-License-Identifier: GPL-2.0-or-later
// topology_hwloc.h: builds a Topology from hwloc (an `lstopo --of xml` file or
// the running machine).
#pragma once

#include "topology/topology.h"

#include <string>

namespace sched {

/// Loads a machine through the hwloc C API.
///
/// `xmlPath` empty: the running machine; otherwise an XML file written by
/// `lstopo --of xml` (hwloc 1.x or 2.x format). For every PU (CPU number =
/// PU os_index, i.e. the Linux CPU number):
///   - core    = Core ancestor (the PU itself when there is none);
///   - cluster = "Cluster" Group ancestor, else the L2 ancestor, when it spans
///               more than one core and fits in the LLC; else the core;
///   - llc     = L3 ancestor, else L2, else the package;
///   - die     = Die ancestor when it contains the LLC, else the package;
///   - package = Package ancestor (one package for the machine when none);
///   - node    = the NUMA node whose cpuset holds the PU (CPU-less memory
///               nodes such as HBM/NVM ones, which hwloc gives a subtype, lose
///               against plain ones).
/// Ids are renumbered densely in order of first appearance by ascending CPU
/// number. Distances come from the OS-provided NUMA latency matrix (SLIT), or
/// 10 local / 20 remote when there is none. The arch is taken from the root's
/// "Architecture" info ("ppc*" = Power, "aarch64"/"arm64" = Arm64, else X86).
/// Capacities are 1024, except on non-x86 machines with several ranked CPU
/// kinds, where every kind but the most performant one gets 512.
///
/// hwloc 2.9 crashes on some inconsistent XML files, so the hwloc work runs in
/// another process that sends the per-CPU records back through a pipe: the
/// program schedlab-hwloc-reader, started with posix_spawn(), or a fork()ed
/// child when it is not to be found (in-process only if fork() fails); the
/// child's stderr goes to /dev/null.
///
/// Throws TopologyError, whose message starts with `xmlPath` (or "hwloc" for
/// the running machine), when the file cannot be read, is not an hwloc XML
/// topology, hwloc fails, or the result is not a valid Topology (e.g. CPU
/// numbers with gaps because of offline CPUs).
Topology topologyFromHwloc(const std::string& xmlPath, const std::string& name);

/// topologyFromHwloc() with hwloc in this process, no child: for the fuzz target
/// (tests/bench/fuzz/fuzz_hwloc_xml.cpp), where a crash of hwloc's own is to be seen, not
/// contained. Everything else (the checks, the walk, the records, the Topology) is the same.
Topology topologyFromHwlocInProcess(const std::string& xmlPath, const std::string& name);

/// The main() of `schedlab-hwloc-reader`: argv = XML ("-": this machine) and the name for
/// messages; the records on stdout. Run by hand it says so and exits with status 2.
int hwlocReaderMain(int argc, char** argv);

}  // namespace sched
