#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Where a recorded cyclictest's latency goes (docs/experiments.md: Timers): for each thread of COMM in an
ftrace text trace (.txt or .gz), the time from its sched_waking to the switch to it (median, by
what ran on the target CPU: the idle task or another task), and the gaps between its consecutive
timer wakings (sched_waking in hard-interrupt context). Usage:

    scripts/recording-timer-latency.py tests/data/traces/qemu-6.1-2s2c2t-cyclictest-hogs/trace.txt.gz [COMM]
"""
import collections
import gzip
import re
import statistics
import sys

LINE = re.compile(r"\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)")


def main():
    path = sys.argv[1]
    comm = sys.argv[2] if len(sys.argv) > 2 else "cyclictest"
    opener = gzip.open if path.endswith(".gz") else open
    cur = {}
    pending = {}
    lat = collections.defaultdict(lambda: collections.defaultdict(list))  # pid -> idle/busy -> us
    timer_wakes = collections.defaultdict(list)
    with opener(path, "rt") as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            cpu, flags, t, name, rest = int(m[1]), m[2], float(m[3]), m[4], m[5]
            kv = dict(re.findall(r"(\w+)=(\S+)", rest))
            if name == "sched_switch":
                nxt = int(kv["next_pid"])
                if nxt in pending:
                    t0, occ = pending.pop(nxt)
                    lat[nxt][occ].append((t - t0) * 1e6)
                cur[cpu] = nxt
            elif name == "sched_waking" and kv.get("comm") == comm:
                pid, target = int(kv["pid"]), int(kv["target_cpu"])
                pending[pid] = (t, "idle" if cur.get(target, -1) == 0 else "busy")
                if len(flags) >= 3 and flags[2] in "hH":
                    timer_wakes[pid].append(t)
    print(f"{'pid':>7} {'timer wakings':>13} {'gap p50 us':>10} {'gap p90 us':>10} {'gap max us':>10}"
          f" {'wake->run idle: n, median us':>30} {'behind a task: n, median us':>28}")
    for pid in sorted(timer_wakes):
        ts = timer_wakes[pid]
        if len(ts) < 10:
            continue
        gaps = sorted((b - a) * 1e6 for a, b in zip(ts, ts[1:]))
        idle, busy = lat[pid]["idle"], lat[pid]["busy"]
        med = lambda l: f"{len(l)}, {statistics.median(l):.0f}" if l else "0, -"
        print(f"{pid:>7} {len(ts):>13} {gaps[len(gaps) // 2]:>10.0f} {gaps[9 * len(gaps) // 10]:>10.0f} {gaps[-1]:>10.0f}"
              f" {med(idle):>30} {med(busy):>28}")


if __name__ == "__main__":
    main()
