// SPDX-License-Identifier: GPL-2.0-or-later
// hwloc_reader_main.cpp: `schedlab-hwloc-reader`, started by topologyFromHwloc() (see topology_hwloc.cpp).
#include "topology/topology_hwloc.h"

int main(int argc, char** argv) { return sched::hwlocReaderMain(argc, argv); }
