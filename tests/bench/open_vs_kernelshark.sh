#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# open_vs_kernelshark.sh: schedlab and KernelShark opening the same trace.dat, alternately, on the
# same machine (the aim: schedlab in half KernelShark's time or less). Not part of ctest.
#   tests/bench/open_vs_kernelshark.sh FILE [RUNS] [TOPOLOGY] [SCHEDLAB]
# Both are timed from their launch, under an Xvfb: KernelShark until its window exists and its CPU
# time has stopped growing (kernelshark_open.sh), schedlab until its window has drawn the trace
# (SCHEDLAB_TIMING=exit: it prints the moment every view is painted once, then quits; the
# agreement replay and the cursor index it starts in the background are not waited for).
# Needs kernelshark, xvfb, x11-utils. SCHEDLAB defaults to build/release/app/schedlab.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
f="$(readlink -f "$1")"; runs="${2:-3}"; topo="${3:-qemu-2s2c2t}"
app="${4:-$here/../../build/release/app/schedlab}"
[[ -x "$app" ]] || { echo "open_vs_kernelshark.sh: $app: not built (bash scripts/setup.sh release)" >&2; exit 1; }
disp=:$((80 + RANDOM % 9))
Xvfb "$disp" -screen 0 1920x1080x24 >/dev/null 2>&1 & xv=$!
trap 'kill $xv 2>/dev/null || true' EXIT
sleep 1
ks=() sl=()
for ((r = 1; r <= runs; r++)); do
  k=$("$here/kernelshark_open.sh" "$f" 1 | sed -n 's/.*loaded and drawn after \([0-9]*\) ms.*/\1/p')
  t0=$(date +%s%N)
  line=$(DISPLAY="$disp" SCHEDLAB_TIMING=exit "$app" --trace "$f" --topology "$topo" 2>&1 >/dev/null | grep '^schedlab-timing: drawn' || true)
  [[ -n "$line" ]] || { echo "open_vs_kernelshark.sh: schedlab printed no timing line" >&2; exit 1; }
  s=$(( ($(awk '{print $3}' <<<"$line") - t0) / 1000000 ))
  echo "run $r: KernelShark $k ms, schedlab $s ms"
  ks+=("$k"); sl+=("$s")
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mk=$(med "${ks[@]}"); ms=$(med "${sl[@]}")
echo "median: KernelShark $mk ms, schedlab $ms ms ($(awk -v a="$ms" -v b="$mk" 'BEGIN {printf "%.2f", a / b}') of KernelShark's time)"
