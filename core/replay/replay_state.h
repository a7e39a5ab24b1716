// SPDX-License-Identifier: GPL-2.0-or-later
// replay_state.h: the agreement replay's own state (replay.cpp): PELT from run intervals, the
// tasks and CPUs as rebuilt from the trace, and the first pass over the whole trace
// (docs/replay.md: Two passes). Internal to replay/.
#pragma once

#include "replay/replay.h"

#include "kernel/pelt.h"
#include "kernel/sched_state.h"
#include "kernel/wakeup_path.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

namespace sched::replay_detail {

constexpr std::int64_t kColdNs = 128'000'000;         ///< PELT-cold for 4 half-lives after a CPU's first event
constexpr std::int64_t kFlipsColdNs = 1'000'000'000;  ///< wakee_flips unknown for 1 s after a task appears
constexpr std::int64_t kEpsilonNs = 20'000;           ///< mid-switch window (docs/replay.md: Which wakings are decisions), not applied yet
constexpr std::uint32_t kNone = ~0u;

/// Per-CPU kthreads (docs/replay.md: Which wakings are decisions): kworker/N:M[H], ksoftirqd/N, migration/N, cpuhp/N, idle_inject/N,
/// watchdog/N, rcuc/N, ktimers/N. Not kworker/uN:M (unbound).
inline bool perCpuKthread(const std::string& comm) {
    static const std::regex re(
        R"(^(kworker/[0-9]+:[0-9]+H?|ksoftirqd/[0-9]+|migration/[0-9]+|cpuhp/[0-9]+|idle_inject/[0-9]+|watchdog/[0-9]+|rcuc/[0-9]+|ktimers/[0-9]+)$)");
    return std::regex_match(comm, re);
}
inline bool looksKthread(const std::string& comm) {
    static const std::regex re(
        R"(^(kworker/|ksoftirqd/|migration/|cpuhp/|rcu_|kthreadd|kcompactd|khugepaged|kswapd|watchdog|idle_inject|jbd2/|kblockd|writeback))");
    return std::regex_search(comm, re);
}

/// PELT from run intervals (docs/replay.md): avg <- avg*y^d + v*(1-y^d), d in 1024-µs periods, y^32 = 1/2.
struct Pelt {
    double util = 0, load = 0;
    std::int64_t last = -1;
    void advance(std::int64_t t, bool running, bool runnable) {
        if (last < 0) {
            last = t;
            return;
        }
        if (t <= last) return;
        const double d = double(t - last) / 1'024'000.0;
        const double f = std::pow(0.5, d / 32.0);
        util = util * f + (running ? 1024.0 : 0.0) * (1 - f);
        load = load * f + (runnable ? 1024.0 : 0.0) * (1 - f);
        last = t;
    }
};

struct RTask {
    bool runnable = false, running = false, exited = false;
    int cpu = -1;  ///< task_cpu as replayed (-1 unknown)
    Pelt pelt;
    std::int64_t first_seen = -1;
    std::int64_t exec_start = 0;  ///< se.exec_start: when it last ran (update_curr), 0 after a migration (ENQUEUE_MIGRATED)
    std::int64_t ran_from = -1;   ///< when it was last switched in (-1: not running); sum_exec's clock
    std::int64_t sum_exec = 0;    ///< se.sum_exec_runtime as replayed (for SIS_CURRENT's se.dur_avg)
    bool forked = false;          ///< forked inside the trace: its wakee_flips are known (copied from the parent)
    SchedAvg ue;                  ///< util_est (enqueued, ewma), updated when it dequeues to sleep
    Task sim;                     ///< what schedlab's path reads and mutates (flips, recent_used_cpu)
    bool have_sim = false;
    bool recent_known = false;  ///< sim.recent_used_cpu was set at fork (CPU 0 is a CPU too)
};

struct RCpu {
    std::int32_t curr = 0;
    int nr = 0;       ///< runnable tasks on the CPU, curr included, every class
    int cfs = 0;      ///< the CFS ones
    int pending = 0;  ///< wakeups in flight to this CPU (ttwu_pending)
    std::int64_t idle_stamp = 0, clock_idle = 0, idle_end = 0, first = -1;
    bool claimed = false;                ///< claim variants: set by the path's own calls, cleared when the CPU goes idle
    std::int64_t cache_hot_timeout = 0;  ///< SIS_CACHE: set when a short sleeper leaves the CPU empty
};

struct Pass1 {
    std::uint32_t wakeup = kNone;   ///< p's next sched_wakeup
    std::uint32_t migrate = kNone;  ///< p's first migrate recorded on the waker CPU before it
    std::uint32_t sleep = kNone;    ///< p's first sleeping switch-out before it
};

/// Pass 1 and pinning from behaviour (docs/replay.md: Two passes), over the whole trace before the replay: for
/// each waking, p's wakeup, the migrate on the waker CPU before it, and whether p switched out
/// sleeping in between; which tasks sched_setaffinity() pinned; each task's last wakeup.
struct FirstPass {
    std::unordered_map<std::int32_t, std::vector<std::uint32_t>> byPid;  ///< each task's switch, waking, wakeup, migrate events
    std::vector<Pass1> p1;                                               ///< per event: a waking's outcome
    /// pid -> {first event index, the index of its next migrate or end} of a pinned stretch.
    std::unordered_map<std::int32_t, std::pair<std::uint32_t, std::uint32_t>> pinnedFrom;
    std::unordered_map<std::int32_t, std::uint32_t> lastWakeup;  ///< each pid's last sched_wakeup

    FirstPass(const Trace& t, AgreeReport& rep) {
        const auto& ev = t.events;
        const auto& rec = t.records;
        for (std::uint32_t i = 0; i < ev.size(); ++i) {
            const SchedEvent& e = ev[i];
            if (e.kind == EvKind::sched_switch) {
                if (e.pid) byPid[e.pid].push_back(i);
            } else if (e.kind == EvKind::sched_waking || e.kind == EvKind::sched_wakeup || e.kind == EvKind::sched_migrate_task) {
                byPid[e.pid].push_back(i);
            }
        }
        p1.resize(ev.size());
        for (auto& [pid, list] : byPid) {
            for (std::size_t k = 0; k < list.size(); ++k) {
                const std::uint32_t i = list[k];
                if (ev[i].kind != EvKind::sched_waking) continue;
                Pass1& r = p1[i];
                for (std::size_t m = k + 1; m < list.size(); ++m) {
                    const SchedEvent& e = ev[list[m]];
                    if (e.kind == EvKind::sched_wakeup) {
                        r.wakeup = list[m];
                        break;
                    }
                    if (e.kind == EvKind::sched_waking) break;  // a second waking before any wakeup: give up on this one
                    if (e.kind == EvKind::sched_migrate_task && r.migrate == kNone && e.cpu == ev[i].cpu) r.migrate = list[m];
                    if (e.kind == EvKind::sched_switch && e.pid == pid && e.prev_state != 'R' && r.sleep == kNone) r.sleep = list[m];
                }
            }
        }

        // Pinning from behaviour (docs/replay.md): sched_setaffinity() moves a running task through the stopper
        // (a migrate recorded with migration/N current). Pinned from there if it never migrates
        // again over >= 20 later wakings (active balancing also uses the stopper; those tasks move
        // again).
        constexpr int kPinWakings = 20;
        static const std::regex stopperRe(R"(^migration/[0-9]+$)");
        for (auto& [pid, list] : byPid) {
            for (std::size_t k = 0; k < list.size(); ++k) {
                const std::uint32_t m = list[k];
                if (ev[m].kind != EvKind::sched_migrate_task || !std::regex_match(t.commOf(rec[m].current), stopperRe)) continue;
                int wakings = 0;
                std::uint32_t until = std::uint32_t(ev.size());
                for (std::size_t q = k + 1; q < list.size(); ++q) {
                    if (ev[list[q]].kind == EvKind::sched_waking) ++wakings;
                    if (ev[list[q]].kind == EvKind::sched_migrate_task) {
                        until = list[q];
                        break;
                    }
                }
                if (wakings >= kPinWakings) {
                    pinnedFrom[pid] = {m, until};
                    rep.pinned_pids[pid] = rec[m].line;
                    break;
                }
            }
        }
        for (const auto& [pid, list] : byPid)
            for (auto it = list.rbegin(); it != list.rend(); ++it)
                if (ev[*it].kind == EvKind::sched_wakeup) {
                    lastWakeup[pid] = *it;
                    break;
                }
    }
    bool pinned(std::int32_t pid, std::uint32_t i) const {
        const auto it = pinnedFrom.find(pid);
        return it != pinnedFrom.end() && i > it->second.first && i < it->second.second;
    }
    bool wokenLater(std::int32_t pid, std::uint32_t i) const {
        const auto it = lastWakeup.find(pid);
        return it != lastWakeup.end() && it->second > i;
    }
};

}  // namespace sched::replay_detail
