#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trace_dat_big.sh: a long hackbench run written as a ~150 MB trace.dat (schedlab-cli run
# --trace-dat), then how long reading it takes: `schedlab-cli trace` (readTraceDat() in its
# forked child, plus the summary) and, for comparison, `trace-cmd report` to /dev/null.
# Not part of ctest. Usage: tests/bench/trace_dat_big.sh [BUILD_DIR] [LOOPS]
#   BUILD_DIR default build/release; LOOPS default 33000 (about 150 MB on qemu-2s2c2t; the size follows the engine's behaviour).
set -euo pipefail
build="${1:-build/release}"
loops="${2:-33000}"
cli="$build/app/schedlab-cli"
[[ -x "$cli" ]] || { echo "trace_dat_big.sh: $cli not built" >&2; exit 1; }
dir="$(mktemp -d "${TMPDIR:-/tmp}/schedlab-dat-big.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
cat > "$dir/s.json" <<JSON
{"topology":"qemu-2s2c2t","seed":1,
 "workloads":[{"type":"hackbench","groups":4,"fds":4,"loops":$loops,"threads":true,"pipe":true}],
 "variants":{"A":"baseline"}}
JSON
secs() {  # wall seconds of a command, 3 decimals
  local t0 t1 ms
  t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 )); printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}
w=$(secs "$cli" run "$dir/s.json" --trace-dat "$dir/big.dat")
mb=$(( $(stat -c %s "$dir/big.dat") / 1000000 ))
r=$(secs "$cli" trace "$dir/big.dat")
summary=$("$cli" trace "$dir/big.dat" | head -1)
echo "written: $dir/big.dat, $mb MB, run + write $w s"
echo "read:    schedlab-cli trace (readTraceDat) $r s: $summary"
if command -v trace-cmd >/dev/null; then
  echo "report:  trace-cmd report $(secs trace-cmd report -i "$dir/big.dat") s"
fi
