#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh: build the libFuzzer targets with the "fuzz" preset (clang, ASan + UBSan) and run each
# for a bounded time on its seed corpus. Usage: tests/bench/fuzz/run.sh [SECONDS per target, default 60]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
secs="${1:-60}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_ftrace_text fuzz_rq_csv
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for t in ftrace_text:ftrace rq_csv:rqcsv; do
  name="${t%%:*}"; corpus="${t##*:}"
  mkdir -p "$work/$corpus"
  cp tests/bench/fuzz/corpus/"$corpus"/* "$work/$corpus"/
  echo "== fuzz_$name for ${secs}s"
  build/fuzz/tests/bench/fuzz/fuzz_"$name" -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 "$work/$corpus" 2>&1 | tail -12
done
