#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test.sh: build the asan preset (AddressSanitizer + UBSan) and run the whole test suite on it, headless.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

bash scripts/setup.sh asan

export QT_QPA_PLATFORM=offscreen
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS="suppressions=$repo_root/tests/lsan.supp:print_suppressions=0"  # libtracecmd's own leaks

# ctest prints its own summary ("N% tests passed, M tests failed out of K" and the failed tests) last.
status=0
ctest --preset asan || status=$?
if ((status == 0)); then
  echo "test.sh: all tests passed (asan preset)"
else
  echo "test.sh: ctest failed with status $status (asan preset)" >&2
fi
exit "$status"
