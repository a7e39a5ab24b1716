#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# window_soak.sh: the window, headless, driven for MINUTES (default 60) on the default scenario:
# knob sliders moved, the run restarted, a recorded trace read and opened again and again
# (schedlab --soak). Its resident memory is sampled every 10 s and swings by several per cent from
# sample to sample (allocator caches, the views' images), so single samples are not compared: the
# median of the samples from 60 s to 180 s against the median of the last 120 s must grow less
# than 5 %. Not part of ctest (it takes an hour).
# Usage: tests/soak/window_soak.sh [MINUTES] [BUILD_DIR, default build/release]
#        tests/soak/window_soak.sh --judge LOG   (the verdict on a saved run's output)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# The verdict on a run's output: medians of the RSS samples (KiB) early on and at the end.
judge() {
  local log="$1" end early late
  median() { sort -n | awk '{a[NR] = $1} END { if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
  end="$(awk '$1 == "soak" && $3 == "s" { t = $2 } END { print t + 0 }' "$log")"
  if awk -v e="$end" 'BEGIN { exit !(e < 300) }'; then
    echo "window_soak.sh: shorter than 5 minutes: no growth figure"
    return 0
  fi
  early="$(awk '$1 == "soak" && $3 == "s" && $2 >= 60 && $2 < 180 { print $5 }' "$log" | median)"
  late="$(awk -v e="$end" '$1 == "soak" && $3 == "s" && $2 >= e - 120 { print $5 }' "$log" | median)"
  awk -v a="$early" -v b="$late" -v e="$end" -v lo="$(awk '$1 == "soak" && $3 == "s" && $2 >= 60 { print $5 }' "$log" | sort -n | head -1)" \
      -v hi="$(awk '$1 == "soak" && $3 == "s" && $2 >= 60 { print $5 }' "$log" | sort -n | tail -1)" 'BEGIN {
    g = 100 * (b - a) / a
    printf "window_soak.sh: RSS median %d KiB over 60-180 s, %d KiB over the last 120 s of %.0f s (samples %d-%d KiB after the first minute): growth %.2f %%\n", a, b, e, lo, hi, g
    exit (g < 5 ? 0 : 1)
  }'
}
if [[ "${1:-}" == "--judge" ]]; then
  [[ -f "${2:-}" ]] || { echo "window_soak.sh: --judge LOG: no such file" >&2; exit 2; }
  judge "$2"
  exit
fi

minutes="${1:-60}"
build="${2:-build/release}"
if ! [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "window_soak.sh: MINUTES '$minutes': not a number" >&2
  exit 2
fi
app="$build/app/schedlab"
[[ -x "$app" ]] || { echo "window_soak.sh: $app: not built (cmake --preset release && cmake --build --preset release)" >&2; exit 2; }
log="$(mktemp --suffix=.soak.log)"
trap 'rm -f "$log"' EXIT
secs="$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')"
trace=tests/data/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.dat
echo "window_soak.sh: $minutes min: schedlab --soak $secs --trace $trace (samples every 10 s)"
QT_QPA_PLATFORM=offscreen "$app" --soak "$secs" --trace "$trace" --topology qemu-2s2c2t | tee "$log"
judge "$log"
