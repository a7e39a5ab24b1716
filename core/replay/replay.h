// SPDX-License-Identifier: GPL-2.0-or-later
// replay.h: decision agreement between a recorded trace and schedlab's wakeup path
// (docs/replay.md, which writes the rules down). For every waking that was a placement decision, the
// state the kernel saw is rebuilt from the trace, schedlab's try_to_wake_up() decides on it,
// and the two CPUs are compared.
#pragma once

#include "kernel/decision.h"
#include "kernel/knobs.h"
#include "topology/topology.h"
#include "replay/wakeup_window.h"
#include "trace/trace.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sched {

struct AgreeOptions {
    /// WF_SYNC is not traced (docs/replay.md: WF_SYNC and context): "comm" = task-context wakings by wakers whose comm matches
    /// sync_comm are sync; "task" = every task-context waking by a non-idle task; "none".
    std::string sync = "comm";
    std::string sync_comm = "hackbench|sched-messaging|perf|tbench|netperf";
    std::size_t examples_per_class = 5;  ///< listed per disagreement class
    bool workload_only = false;          ///< only decisions between WORKLOAD_START and WORKLOAD_END
    int hz = 250;                        ///< CONFIG_HZ for jiffies (wakee_flips decay)
    /// nr_idle_scan (docs/replay.md: State at the decision instant): "decision" recomputes it at every decision from the LLC's utilisation;
    /// "balance" only at modelled LLC-level balances (every llc_weight ms while a CPU of the LLC
    /// idles, 16 x llc_weight ms when all are busy), as the kernel does.
    std::string nr_idle_scan_at = "decision";
    /// Keep each decision's Decision in AgreeRow::decision; with trace_disagreements, the
    /// disagreeing ones are re-decided with their steps traced (for the GUI's inspector).
    /// schedlab's own exports carry each decision's untraced inputs (sched_event.h WakeInputs):
    /// "use" takes them instead of the reconstruction (PELT loads, WF_SYNC, nr_idle_scan,
    /// jiffies); "ignore" reconstructs as for a kernel trace. Both compare the two.
    std::string wake_inputs = "use";
    bool keep_decisions = false;
    bool trace_disagreements = false;
    /// Called with the share of the trace replayed (0..1) about every 1 % (at most every 16384 events); false stops the
    /// replay (AgreeReport::cancelled, counts so far).
    std::function<bool(double)> progress;
};

/// Why a disagreement happened (docs/replay.md: Disagreement classes), in the order they are tried.
enum class DisagreeClass : std::uint8_t { different_idle, sis_util_cutoff, wake_wide, wake_affine, unexplained, count_ };
const char* toString(DisagreeClass c);

/// One decision with both answers.
struct AgreeRow {
    std::uint32_t line = 0;  ///< the waking's line (text) or record (trace.dat)
    std::int64_t time = 0;
    std::int32_t pid = 0, waker = 0;
    int this_cpu = -1, prev = -1, kernel = -1, sim = -1;
    bool sync = false, cold = false, late = false;
    bool racy = false;                         ///< a candidate CPU changed between the waking and the choice (docs/replay.md: Racy decisions)
    std::string reasons;                       ///< schedlab's stage reasons ("AFFINE_SYNC -> SIS_IDLE_CPU")
    Stage2 stage2 = Stage2::NONE;              ///< schedlab's final reason (the counters' "by final reason")
    int cls = -1;                              ///< DisagreeClass when sim != kernel
    std::string cpus;                          ///< per CPU: I idle, i curr idle but runnable/pending, B busy; then nr_running
    std::shared_ptr<const Decision> decision;  ///< schedlab's Decision (AgreeOptions::keep_decisions)
};

struct AgreeReport {
    std::string file;
    std::string topology, knobs, sync, nr_idle_scan_at;
    std::uint64_t wakings = 0;                           ///< sched_waking records of CFS tasks
    std::map<std::string, std::uint64_t> not_decisions;  ///< by class (docs/replay.md: Which wakings are decisions)
    /// Pinning from behaviour (docs/replay.md): pid -> the line of the migration/N stopper's move after which
    /// it never migrated again over >= 20 wakings (its wakings from there are not decisions).
    std::map<std::int32_t, std::uint32_t> pinned_pids;
    std::uint64_t decisions = 0, moved = 0;  ///< moved: kernel choice != prev
    std::uint64_t agree = 0, agree_moved = 0;
    std::uint64_t stay_prev = 0;             ///< decisions where "stay on prev" is right
    std::uint64_t warm = 0, agree_warm = 0;  ///< without PELT/flips-cold decisions
    std::uint64_t racy = 0, agree_racy = 0;  ///< racy decisions (docs/replay.md: Racy decisions), and how many of them agree
    std::uint64_t late = 0;
    std::uint64_t prev_mismatch = 0, choice_mismatch = 0;  ///< the two cross-checks (docs/replay.md: Kernel choice and prev)
    std::uint64_t unknown_state = 0;                       ///< decisions during a gap (left out)
    std::uint64_t no_choice = 0;                           ///< waking without a wakeup later in the trace
    std::array<std::uint64_t, std::size_t(DisagreeClass::count_)> by_class{};
    /// Decisions whose inputs the trace carried (schedlab's exports), and how far the
    /// reconstruction was from them (docs/replay.md: Exported inputs).
    struct InputCheck {
        std::uint64_t decisions = 0;                                            ///< with a schedlab_wake line
        bool used = false;                                                      ///< AgreeOptions::wake_inputs == "use"
        std::uint64_t sync = 0, in_task = 0, scan = 0, cores = 0, jiffies = 0;  ///< mismatches
        std::uint64_t load_off = 0;         ///< decisions where this/prev cpu_load or a task_h_load was off by > 1/16
        double load_err = 0, task_err = 0;  ///< mean |reconstructed - exported| of cpu_load (this, prev) and task_h_load (p)
    } inputs;
    /// Sleep timers (hrtimer_wakeup) whose hrtimer_start and expiry are both in the trace:
    /// get_nohz_timer_target() on the rebuilt state against the CPU that expired each
    /// (docs/replay.md: Timer placement).
    struct TimerCheck {
        std::uint64_t checked = 0, agree = 0;
        std::uint64_t moved_by_kernel = 0, agree_moved = 0;  ///< expired away from the arming CPU
        std::uint64_t kept_local = 0;                        ///< schedlab moves it, the kernel kept it local (hrtimer_check_target() can)
        std::uint64_t disagree = 0;                          ///< expired on a third CPU, or moved where schedlab keeps it
        std::vector<std::string> examples;
    } timers;
    std::array<std::vector<AgreeRow>, std::size_t(DisagreeClass::count_)> examples;
    /// kernel vs schedlab choice as prev / waker / other, x idle / busy (3x2 each).
    std::map<std::string, std::array<std::uint64_t, 2>> choice_kinds;
    std::vector<AgreeRow> rows;  ///< every decision (for --decisions)
    /// The trace's wakeup windows, sched_waking to sched_wakeup (the kernel's, or the simulation's in an export).
    WakeupWindows windows;
    double seconds = 0;      ///< wall time of the replay
    bool cancelled = false;  ///< AgreeOptions::progress stopped it

    std::string text() const;
    nlohmann::json json() const;
};

/// Replays `t` on `topo` with `knobs`. The topology must have at least t.nr_cpus CPUs.
AgreeReport agree(const Trace& t, std::shared_ptr<const Topology> topo, const Knobs& knobs, const AgreeOptions& o = {});

/// schedlab's final reason (AgreeRow::stage2, named as a simulation's Snapshot::reasons) on a
/// replay's decisions up to a time: the counters view of a trace. Built once per report (rows by
/// time), then counted from a checkpoint every 1024 rows.
class AgreeReasonIndex {
public:
    explicit AgreeReasonIndex(const AgreeReport& r);
    /// Decisions at or before `t` by final reason (non-zero ones, by name).
    std::vector<std::pair<std::string, std::uint64_t>> upTo(std::int64_t t) const;
    std::size_t decisions() const { return m_rows.size(); }

private:
    static constexpr std::size_t kEvery = 1024;
    std::vector<std::string> m_names;                            ///< by id, sorted
    std::vector<std::pair<std::int64_t, std::uint16_t>> m_rows;  ///< (time, reason id), by time
    std::vector<std::vector<std::uint32_t>> m_cum;               ///< counts by id before row k * kEvery
};

}  // namespace sched
