// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_hwloc_xml.cpp: libFuzzer target for the hwloc XML import (core/topology/topology_hwloc.h):
// the bytes as an `lstopo --of xml` file, read by hwloc in this process (no child: a crash is
// seen), walked into per-CPU records, sent through the child's reply format and made a Topology
// with its sched domains. Any input must give a Topology or a TopologyError / InputError.
//
// hwloc 2.9 itself dereferences NULL on some inconsistent files (why schedlab reads XML in a
// child process); tests/bench/fuzz/run.sh runs this target with -fork and -ignore_crashes, keeps
// each crash, and checks that `schedlab-cli topology` refuses it with one line (the child
// contains it). A crash whose stack is in schedlab's code is a finding.
#include "kernel/sched_domain.h"
#include "topology/topology.h"
#include "topology/topology_hwloc.h"
#include "util/input_error.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // hwloc reads a file: a memfd, named by its /proc path.
    static const int fd = ::memfd_create("fuzz-hwloc.xml", 0);
    if (fd < 0) __builtin_trap();
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != ssize_t(size)) __builtin_trap();
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        const sched::Topology t = sched::topologyFromHwlocInProcess(path, "fuzz");
        if (t.nrCpus() <= 0) __builtin_trap();
        const sched::SchedDomains sd(t);
        if (sd.nrCpus() != t.nrCpus()) __builtin_trap();
    } catch (const sched::TopologyError&) {
    } catch (const sched::InputError&) {
    }
    return 0;
}
