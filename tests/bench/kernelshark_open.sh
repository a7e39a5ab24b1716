#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kernelshark_open.sh: how long KernelShark takes to open a trace.dat, for bench_gui's
# BM_OpenTraceDat (schedlab reading and showing the same file). Not part of ctest.
#   tests/bench/kernelshark_open.sh FILE [RUNS]
# KernelShark runs under its own Xvfb as an unprivileged user (as root it first shows a
# blocking warning dialog). The time is from its start until its window exists and its CPU
# time has stopped growing for 1 s: the file is loaded and drawn. Needs the Debian packages
# kernelshark, xvfb and x11-utils (xwininfo); creates the user `ksbench` if missing.
set -euo pipefail
f="$(readlink -f "$1")"; runs="${2:-3}"
command -v kernelshark >/dev/null || { echo "kernelshark_open.sh: kernelshark is not installed" >&2; exit 1; }
id ksbench >/dev/null 2>&1 || useradd -m ksbench
chmod o+r "$f"
rt="$(mktemp -d)"; chown ksbench "$rt"; chmod 700 "$rt"
disp=:$((90 + RANDOM % 9))
Xvfb "$disp" -screen 0 1920x1080x24 >/dev/null 2>&1 & xv=$!
trap 'pkill -u ksbench -x kernelshark 2>/dev/null || true; kill $xv 2>/dev/null || true; rm -rf "$rt"' EXIT
sleep 1
for ((r = 1; r <= runs; r++)); do
  t0=$(date +%s%N)
  runuser -u ksbench -- env DISPLAY="$disp" XDG_RUNTIME_DIR="$rt" kernelshark "$f" >/dev/null 2>&1 &
  pid=""; for _ in $(seq 100); do pid=$(pgrep -u ksbench -x kernelshark | head -1 || true); [[ -n "$pid" ]] && break; sleep 0.01; done
  mapped=0; last=-1; still=0; busy_end=$t0
  while [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; do
    now=$(date +%s%N)
    if [[ $mapped == 0 ]] && DISPLAY="$disp" xwininfo -root -tree 2>/dev/null | grep -qi kernelshark; then mapped=$now; fi
    cpu=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    if [[ "$cpu" == "$last" ]]; then still=$((still + 1)); else still=0; busy_end=$now; fi
    [[ $mapped != 0 && $still -ge 20 ]] && break
    last=$cpu; sleep 0.05
  done
  echo "run $r: window after $(( (mapped - t0) / 1000000 )) ms, loaded and drawn after $(( (busy_end - t0) / 1000000 )) ms ($last CPU ticks)"
  pkill -u ksbench -x kernelshark || true; sleep 0.5
done
