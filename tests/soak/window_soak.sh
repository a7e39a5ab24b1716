#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# window_soak.sh: the window, headless, driven for MINUTES (default 60) on the default scenario:
# knob sliders moved, the run restarted, a recorded trace read and opened again and again
# (schedlab --soak). Its resident memory is sampled every 10 s; the growth from the first sample
# at or after one minute to the last one must stay under 5 %. Not part of ctest (it takes an hour).
# Usage: tests/soak/window_soak.sh [MINUTES] [BUILD_DIR, default build/release]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
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
awk '
  $1 == "soak" && $3 == "s" { t = $2 + 0; r = $5 + 0; if (t >= 60 && base == 0) { base = r; bt = t } if (r > max) max = r; last = r; lt = t }
  END {
    if (base == 0) { print "window_soak.sh: shorter than a minute: no growth figure"; exit 0 }
    g = 100 * (last - base) / base
    printf "window_soak.sh: RSS %d KiB at %.0f s, %d KiB at %.0f s (peak %d KiB): growth %.2f %%\n", base, bt, last, lt, max, g
    exit (g < 5 ? 0 : 1)
  }' "$log"
