#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test.sh: build the asan preset (AddressSanitizer + UBSan) and run the whole test suite on it, headless.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

bash scripts/setup.sh asan

export QT_QPA_PLATFORM=offscreen
# intercept_tls_get_addr=0: GCC 12's sanitizer runtime (Debian 12; fixed after GCC 13 / LLVM 16)
# takes a malloc'd dynamic-TLS block that happens to sit at a certain page offset for a pre-2.25
# glibc header and reads garbage as its bounds, and LeakSanitizer's tracer then dies at exit
# ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error") after a test has
# passed: MainWindow.FramesReachTheViewsAndKnobsApplyLive failed so in a CI run (and
# probably in an earlier one whose output was cut off). The asan test preset sets the same options.
# Not intercepting __tls_get_addr avoids that heuristic (Mudlet's PR #9930 traced the mechanism).
export ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0
export LSAN_OPTIONS="suppressions=$repo_root/tests/lsan.supp:print_suppressions=0"  # libtracecmd's own leaks

# ctest prints its own summary ("N% tests passed, M tests failed out of K" and the failed tests) last.
status=0
ctest --preset asan || status=$?
if ((status == 0)); then
  echo "test.sh: all tests passed (asan preset)"
else
  # CI keeps only the tail of what a run prints, and a failed test's output is printed where it
  # failed, long before the end: repeat each failed test's failure lines (gtest's assertions and
  # the sanitizers' reports), at most 40 per test, after ctest's summary.
  log=build/asan/Testing/Temporary/LastTest.log
  if [[ -f "$log" ]]; then
    echo "test.sh: the failed tests' failure lines (from $log):" >&2
    awk '/^[0-9]+\/[0-9]+ Test: / { name = $3; n = 0; k = 0; buf = ""; next }
         /^<end of output>$/ { inout = 0 }
         /^Output:$/ { inout = 1; next }
         inout && n < 40 && (k > 0 || /Failure|ERROR: |runtime error|SUMMARY: |\[  FAILED|Segmentation|Aborted|terminate called/) {
           if (/Failure$|ERROR: |runtime error/) k = 8; else if (k > 0) k--
           buf = buf "  " $0 "\n"; n++ }
         /^Test Failed\.$/ && name != "" {
           printf "%s:\n%s", name, (buf == "" ? "  (no failure line in its output: a timeout or a silent exit, see ctest above)\n" : buf); name = "" }' "$log" >&2 || true
  fi
  echo "test.sh: ctest failed with status $status (asan preset)" >&2
fi
exit "$status"
