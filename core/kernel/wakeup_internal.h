// SPDX-License-Identifier: GPL-2.0-or-later
// wakeup_internal.h: what core_wakeup.cpp and fair_wakeup.cpp share and nobody else includes:
// the trace-step macro, "no CPU", and how the path looks at a CPU (idle-ish, claimed).
#pragma once

#include "kernel/wakeup_path.h"

namespace sched {

// Trace text is built only when a trace was asked for (formatting costs more than the decision).
#define SCHED_STEP(ctx, ...)                      \
    do {                                          \
        if ((ctx).trace) (ctx).step(__VA_ARGS__); \
    } while (0)

inline constexpr int NR = kMaxCpus;  // "no CPU" (nr_cpumask_bits)
inline bool valid(int cpu) { return unsigned(cpu) < unsigned(NR); }

// available_idle_cpu() as seen: plain idle or idle by the idle-delay knob.
inline bool availableIdle(Seen s) { return s == Seen::Idle || s == Seen::IdleByDelay; }
// "idle-ish": available_idle_cpu(c) || sched_idle_cpu(c).
inline bool idleishSeen(Seen s) { return availableIdle(s) || s == Seen::SchedIdle; }
// The same, recorded in the examined list.
inline bool idleish(WakeCtx& c, int cpu, Fn fn) {
    Seen s = seenAs(c.st, c.k, cpu);
    c.seen(cpu, fn, s);
    return idleishSeen(s);
}
inline const char* seenText(Seen s) { return toString(s); }
// Claim `cpu` for this wakeup (docs/patch-variants.md: Claims): idle_cpu() reads 0 until it next goes idle.
inline void claim_cpu(WakeCtx& c, int cpu) {
    c.rq(cpu).claimed = true;
    c.d.claim_set = true;
}

}  // namespace sched
