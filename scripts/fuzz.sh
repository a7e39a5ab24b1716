#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz.sh: builds the libFuzzer targets (the "fuzz" preset: clang, ASan + UBSan) and runs each for
# MINUTES (default 1), as many at once as the machine has cores (GNU parallel), then prints the
# executions per target and any crash, leak, timeout or out-of-memory input found.
#
#   scripts/fuzz.sh [MINUTES] [TARGET...]     e.g. scripts/fuzz.sh 10, scripts/fuzz.sh 2 fuzz_scenario
#
# Targets (tests/bench/fuzz): ftrace text, rq-length CSV, scenario, state (and decide() on it),
# topology JSON, hwloc XML, trace.dat record decoding, schedlab-cli's command line. Seed corpora
# come from tests/data, resources and tests/bench/fuzz/corpus; each target's corpus grows in
# build/fuzz/corpus/TARGET from run to run; findings go to build/fuzz/findings/TARGET/.
# Exit status: 0 when nothing was found, 1 when something was, 2 on bad usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
minutes="${1:-1}"
[[ $# -gt 0 ]] && shift
if ! [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "fuzz.sh: MINUTES '$minutes': not a number" >&2
  exit 2
fi
all=(fuzz_scenario fuzz_state fuzz_topology_json fuzz_hwloc_xml fuzz_trace_dat_record fuzz_cli_args fuzz_ftrace_text fuzz_rq_csv)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (${all[*]})" >&2; exit 2; }
done
for tool in clang++ parallel; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: needs $tool (Debian: apt-get install clang parallel)" >&2; exit 2; }
done

# Leaks inside Debian's libtracecmd (see the file) are not schedlab's; the same list the asan preset uses.
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
cmake --preset fuzz >/dev/null
build_targets=("${targets[@]}")
[[ " ${targets[*]} " == *" fuzz_hwloc_xml "* ]] && build_targets+=(schedlab-cli schedlab-hwloc-reader)
cmake --build --preset fuzz --target "${build_targets[@]}"

out=build/fuzz
secs="$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')"
mkdir -p "$out/logs" "$out/findings"

# Seeds: copied into each target's corpus (files already there are kept).
seed() {
  local t="$1" c="$out/corpus/$1"
  mkdir -p "$c"
  case "$t" in
  fuzz_scenario) cp -n resources/scenarios/*.json resources/examples/*.json tests/bench/fuzz/corpus/formats/*.json "$c"/ ;;
  fuzz_state) cp -n resources/examples/explain/*.json "$c"/ ;;
  fuzz_topology_json) cp -n tests/bench/fuzz/corpus/topology/*.json "$c"/ ;;
  fuzz_hwloc_xml) cp -n tests/data/hwloc/*.xml "$c"/ ;;
  fuzz_trace_dat_record) SCHEDLAB_FUZZ_SEEDS="$c" "$out/tests/bench/fuzz/$t" >/dev/null ;;
  fuzz_cli_args) cp -n tests/bench/fuzz/corpus/cli/* "$c"/ ;;
  fuzz_ftrace_text) cp -n tests/bench/fuzz/corpus/ftrace/* "$c"/ ;;
  fuzz_rq_csv) cp -n tests/bench/fuzz/corpus/rqcsv/* "$c"/ ;;
  esac
}
for t in "${targets[@]}"; do seed "$t"; done

# A dictionary for the JSON targets: the syntax and every key the shipped files use.
{
  printf '"{"\n"}"\n"["\n"]"\n":"\n","\n"true"\n"false"\n"null"\n"-1"\n"1e400"\n"0.5"\n"18446744073709551616"\n'
  cat resources/scenarios/*.json resources/examples/*.json resources/examples/explain/*.json tests/bench/fuzz/corpus/topology/*.json |
    grep -o '"[A-Za-z_][A-Za-z0-9_.-]*"' | sort -u | sed 's/"/\\"/g; s/^/"/; s/$/"/'
} > "$out/json.dict"

run_one() {
  local t="$1" secs="$2" out="$3" len=8192 extra=()
  case "$t" in
  fuzz_scenario | fuzz_state | fuzz_topology_json) extra=(-dict="$out/json.dict") ;;
  # hwloc 2.9 crashes on some inconsistent files itself (why schedlab reads XML in a child
  # process): fork mode goes on after a crash; each one is checked below.
  fuzz_hwloc_xml) len=16384 extra=(-fork=1 -ignore_crashes=1) ;;
  fuzz_trace_dat_record | fuzz_ftrace_text | fuzz_rq_csv) len=4096 ;;
  fuzz_cli_args) len=1024 ;;
  esac
  mkdir -p "$out/findings/$t"
  # -close_fd_mask=3: the targets' own output (help texts, hwloc's complaints) is dropped;
  # libFuzzer's and the sanitizers' reports are kept.
  "$out/tests/bench/fuzz/$t" -max_total_time="$secs" -max_len="$len" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
    -print_final_stats=1 -artifact_prefix="$out/findings/$t/" "${extra[@]}" "$out/corpus/$t" > "$out/logs/$t.log" 2>&1 || true
}
export -f run_one
before="$(find "$out/findings" -path '*/contained' -prune -o -type f -print | wc -l)"
echo "fuzz.sh: ${#targets[@]} targets, ${minutes} min each, $(nproc) at once (logs in $out/logs)"
parallel -j "$(nproc)" run_one {} "$secs" "$out" ::: "${targets[@]}"

# hwloc's own crashes, leaks and slow loads (in hwloc_topology_load, on this target's in-process
# path): contained when schedlab-cli, which reads XML in a child process, refuses the file with one
# line and exit 2 within 60 s; moved to findings/fuzz_hwloc_xml/contained/.
contained=0
if [[ -d "$out/findings/fuzz_hwloc_xml" ]]; then
  mkdir -p "$out/findings/fuzz_hwloc_xml/contained"
  for f in "$out"/findings/fuzz_hwloc_xml/{crash,leak,timeout,slow-unit,oom}-*; do
    [[ -f "$f" ]] || continue
    x="$(mktemp --suffix=.xml)"
    cp "$f" "$x"
    s=0
    msg="$(timeout 60 "$out/app/schedlab-cli" topology "$x" 2>&1 >/dev/null)" || s=$?
    rm -f "$x"
    if [[ "$s" -eq 2 && "$(printf '%s\n' "$msg" | wc -l)" -eq 1 && "$msg" == "schedlab-cli: "* ]]; then
      mv "$f" "$out/findings/fuzz_hwloc_xml/contained/"
      contained=$((contained + 1))
    fi
  done
fi

total=0
printf '%-24s %14s %10s %8s %s\n' target executions 'exec/s' corpus findings
for t in "${targets[@]}"; do
  log="$out/logs/$t.log"
  n="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  if [[ -z "$n" ]]; then  # fork mode: the last progress line, "#N: cov: ... exec/s: R ..."
    n="$(sed -n 's/^#\([0-9][0-9]*\): cov:.*/\1/p' "$log" | tail -1)"
    rate="$(sed -n 's/^#[0-9]*: cov:.* exec\/s: \([0-9]*\).*/\1/p' "$log" | tail -1)"
  fi
  found="$(find "$out/findings/$t" -maxdepth 1 -type f | wc -l)"
  printf '%-24s %14s %10s %8s %s\n' "$t" "${n:-?}" "${rate:-?}" "$(find "$out/corpus/$t" -type f | wc -l)" "$found"
  total=$((total + ${n:-0}))
done
after="$(find "$out/findings" -path '*/contained' -prune -o -type f -print | wc -l)"
echo "fuzz.sh: $total executions in all; $((after - before)) new findings; $contained crashes, leaks or slow loads in hwloc's own code, contained (schedlab-cli refuses each file with one line, exit 2)"
if [[ "$after" -gt "$before" ]]; then
  find "$out/findings" -path '*/contained' -prune -o -type f -newer "$out/json.dict" -print | sed 's/^/  /'
  exit 1
fi
