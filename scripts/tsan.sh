#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tsan.sh: builds the "tsan" preset (ThreadSanitizer) and runs what has threads under it: the
# simulation worker and the main window (widgets_window_test), the trace session's background
# jobs (widgets_trace_session_test), the heatmap's render jobs (widgets_heatmap_test), and
# schedlab-cli compare and sweep with two simulations at once. First a canary with a deliberate
# race, which ThreadSanitizer must report. Exit status 0 when every run is clean; not part of
# ctest (the window tests take minutes under TSan).
#
# Debian's Qt and GLib are not built with ThreadSanitizer: their own locks (QMutex, GMutex) are
# bare futexes TSan cannot see, so every queued signal (a QMetaCallEvent allocated by the sender,
# deleted by the receiver's event loop) and GLib's eventfd wakeup would be reported as races
# inside Qt and GLib. ignore_noninstrumented_modules=1 makes TSan ignore the memory accesses those
# uninstrumented libraries make; every access of schedlab's own (instrumented) code is checked,
# and there are no suppressions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cmake --preset tsan >/dev/null
cmake --build --preset tsan --target tsan_canary widgets_window_test widgets_trace_session_test widgets_heatmap_test schedlab-cli
export QT_QPA_PLATFORM=offscreen
export TSAN_OPTIONS="ignore_noninstrumented_modules=1:halt_on_error=0:exitcode=66:second_deadlock_stack=1"
b=build/tsan
log="$(mktemp --suffix=.tsan.log)"
trap 'rm -f "$log"' EXIT
rc=0
if "$b/tests/tsan_canary" >"$log" 2>&1 || ! grep -q "WARNING: ThreadSanitizer: data race" "$log"; then
  echo "tsan.sh: the canary's race was not reported: ThreadSanitizer is not checking, its silence below would prove nothing" >&2
  exit 1
fi
echo "tsan.sh: canary reported (TSan is on)"
run() {
  local name="$1"; shift
  local s=0 t0=$SECONDS
  "$@" >"$log" 2>&1 || s=$?
  local n
  n="$(grep -c "WARNING: ThreadSanitizer" "$log" || true)"
  printf 'tsan.sh: %-28s exit %s, %s reports, %d s\n' "$name" "$s" "$n" $((SECONDS - t0))
  if [[ "$s" -ne 0 || "$n" -ne 0 ]]; then
    grep -A30 "WARNING: ThreadSanitizer" "$log" | head -60 || tail -20 "$log"
    rc=1
  fi
}
run widgets_window_test "$b/tests/widgets_window_test"
run widgets_trace_session_test "$b/tests/widgets_trace_session_test"
run widgets_heatmap_test "$b/tests/widgets_heatmap_test"
run "cli compare -j 2" "$b/app/schedlab-cli" compare resources/scenarios/i7-4790-hackbench-small.json -j 2
run "cli sweep -j 2" "$b/app/schedlab-cli" sweep resources/scenarios/i7-4790-hackbench-small.json --vary idle_delay_ns=0,500000,1000000 -j 2
exit "$rc"
