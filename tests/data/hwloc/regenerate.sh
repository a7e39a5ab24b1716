#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerates the hwloc XML fixtures of tests/core_topology_hwloc_test.cpp with
# hwloc 2.9's lstopo / hwloc-annotate (see README.md for what each one checks).
# this-machine.xml is only rewritten when REGEN_THIS_MACHINE=1 (its expected
# values in the test are those of the 2-CPU VM it was captured on).
set -eu
cd "$(dirname "$0")"

synth() {  # synth <description> <output>
    lstopo -f --input "$1" --of xml "$2" 2>/dev/null
}

# Synthetic topologies number PUs P#0..N-1 in logical order (SMT siblings
# adjacent: CPU 2k and 2k+1 share a core).
synth "pack:2 l3:2 core:4 pu:2" 2s-2llc-4c-2t.xml

# Same machine with x86 (ACPI MADT) numbering: CPU N and N+16 are siblings.
# "indexes=2*16:1*2" lists (stride*count) loops going from the physical to the
# logical index: the 16 first physical indexes are logical 0,2,..,30.
synth "pack:2 l3:2 core:4 pu:2(indexes=2*16:1*2)" 2s-2llc-4c-2t-x86num.xml

# 4 NUMA nodes (one per L3, Linux node numbers 3,2,1,0 in CPU order), L2 shared
# by pairs of cores, x86 numbering, plus an OS-like (kind 5 = FROM_OS|LATENCY)
# "NUMALatency" matrix. By node os_index the distances are
#   0-1: 13, 2-3: 12, 0-2 and 1-3: 30, 0-3 and 1-2: 32;
# the matrix lists the nodes as logical 1,3,0,2 = os 2,0,3,1, an order that is
# neither the os, the logical nor the dense one, so that a reader must map
# through the matrix's object array.
synth "pack:2 l3:2 [numa(indexes=3,2,1,0)] l2:2 core:2 pu:2(indexes=2*16:1*2)" 2s-4numa-2l2-2c-2t.xml
cat > /tmp/schedlab-hwloc-dist.$$ <<'DIST'
name=NUMALatency
5
4
numa:1
numa:3
numa:0
numa:2
10
30
12
32
30
10
32
13
12
32
10
30
32
13
30
10
DIST
hwloc-annotate 2s-4numa-2l2-2c-2t.xml 2s-4numa-2l2-2c-2t.xml root distances /tmp/schedlab-hwloc-dist.$$
rm -f /tmp/schedlab-hwloc-dist.$$

# arm64: 2 "Cluster" groups of 4 cores (private L2s, shared L3); the first
# cluster is a LITTLE CPU kind (efficiency 0), the second a big one.
synth "pack:1 l3:1 group:2 l2:4 core:1 pu:1" arm64-2cluster-biglittle.xml
hwloc-annotate arm64-2cluster-biglittle.xml arm64-2cluster-biglittle.xml root info Architecture aarch64
hwloc-annotate arm64-2cluster-biglittle.xml arm64-2cluster-biglittle.xml group:all subtype Cluster
hwloc-annotate arm64-2cluster-biglittle.xml arm64-2cluster-biglittle.xml root cpukind 0x0f 0 0 CoreType LITTLE
hwloc-annotate arm64-2cluster-biglittle.xml arm64-2cluster-biglittle.xml root cpukind 0xf0 1 0 CoreType big

# POWER-like: 2 packages x 2 dies x 2 L3 x 2 SMT4 cores, adjacent numbering.
synth "pack:2 die:2 l3:2 core:2 pu:4" ppc-2s-2die-2llc-2c-4t.xml
hwloc-annotate ppc-2s-2die-2llc-2c-4t.xml ppc-2s-2die-2llc-2c-4t.xml root info Architecture ppc64le

# No Package object at all: one package.
synth "l3:2 core:2 pu:1" nopkg-2l3-2c.xml

# CPUs 6 and 7 removed (offline-like gap in the CPU numbers): must be refused.
lstopo -f --input 2s-2llc-4c-2t.xml --restrict 0xffffff3f --of xml gap-cpu6-7.xml 2>/dev/null

# Well-formed XML that crashes hwloc 2.9 (NULL dereference in
# hwloc_topology_load): PU 5 without its complete_cpuset attribute.
sed '/type="PU" os_index="5"/s/ complete_cpuset="[^"]*"//' 2s-2llc-4c-2t.xml > pu-without-complete-cpuset.xml

# Broken inputs.
head -c 2000 2s-2llc-4c-2t.xml > truncated.xml
printf 'This is not XML at all.\nJust some text.\n' > not-xml.txt
printf '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>\n' > not-hwloc.xml

if [ "${REGEN_THIS_MACHINE:-0}" = 1 ]; then
    lstopo -f --no-io --of xml this-machine.xml
fi
