// SPDX-License-Identifier: GPL-2.0-or-later
// knobs.h: every sched feature and tunable the wakeup path reads, plus the
// patch variants under discussion, as one value type. A patch is a knob
// setting (a preset), never a fork of the code.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sched {

/// Which kernel's behaviour to follow where 6.1 and 6.5 differ: fair.c select_idle_smt(), newidle balancing, core.c ttwu_runnable().
enum class KernelVersion { V6_1, V6_5 };
/// Which clock the idle delay reads: v1/v2 rq->idle_end_time (set when the idle
/// task leaves its loop), v3 rq->clock_idle.
enum class IdleDelayClock { IdleEndTime, ClockIdle };
/// Claim an idle CPU when a waker picks it (docs/patch-variants.md: Claims).
enum class ClaimMode { Off, Sis, SelectTaskRq };

struct KnobError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Knobs {
    std::string presetName = "baseline";  ///< name of the preset these knobs started from

    // sched_features (kernel/sched/features.h, Debian 6.1.192 defaults)
    bool GENTLE_FAIR_SLEEPERS = true;
    bool START_DEBIT = true;
    bool NEXT_BUDDY = false;
    bool LAST_BUDDY = true;
    bool CACHE_HOT_BUDDY = true;
    bool WAKEUP_PREEMPTION = true;
    bool TTWU_QUEUE = true;
    bool SIS_PROP = false;
    bool SIS_UTIL = true;
    bool WA_IDLE = true;
    bool WA_WEIGHT = true;
    bool LB_MIN = false;  ///< detach_tasks(): skip tasks of load < 16 until balancing fails
    /// The cpuidle governor keeps the tick on an idle CPU whose predicted idle time is shorter
    /// than a tick (menu's stop_tick = false), so the CPU balances at its idle ticks and stays
    /// out of nohz.idle_cpus_mask; off: the tick stops at every idle entry.
    bool idle_retain_tick = true;
    bool WA_BIAS = true;
    bool UTIL_EST = true;
    bool UTIL_EST_FASTUP = true;  ///< util_est's ewma jumps up to a larger enqueued value (6.1)
    bool NI_RANDOM = true;        ///< 6.1.y newidle dice
    bool ALT_PERIOD = true;
    bool BASE_SLICE = true;
    /// /proc/sys/kernel/timer_migration (default 1): a task's (non-pinned) hrtimer goes where
    /// get_nohz_timer_target() says when its CPU is idle_cpu(); 0: every timer stays on the CPU
    /// that arms it. Not a sched feature, but a reader of idle_cpu() that the patches reach.
    bool timer_migration = true;
    /// Energy-aware scheduling (find_energy_efficient_cpu). Not modelled: must stay off.
    bool EAS = false;

    // tunables
    int hz = 250;                             ///< CONFIG_HZ; jiffy = 1e9/hz ns
    std::int64_t migration_cost_ns = 500000;  ///< sysctl_sched_migration_cost
    /// Cost charged per CPU examined by select_idle_cpu, for SIS_PROP's avg_scan_cost (ns).
    std::int64_t sis_scan_cost_ns = 60;

    // patch variants
    std::int64_t idle_delay_ns = 0;   ///< 0 = off; v1..v3 use 1 ms
    int idle_delay_max_running = -1;  ///< -1 = no limit (v1); v2/v3: 4
    IdleDelayClock idle_delay_clock = IdleDelayClock::IdleEndTime;
    ClaimMode claim = ClaimMode::Off;
    bool SIS_DEBOUNCE = false;
    /// Proxy execution as John Stultz's v6 series has it (docs/patch-variants.md: Proxy
    /// execution): mutexes hand off instead of spinning, a task blocked on a mutex stays on its
    /// runqueue as a donor, and picking it runs the owner in its place, migrating it to the
    /// owner's CPU first. A boot parameter (proxy_exec=): fixed for a run.
    bool proxy_exec = false;

    // The idle-extension thread's follow-up patches (docs/patch-variants.md: Follow-ups), Aug-Nov 2023.
    /// B. "Favor almost idle previously used CPUs for wake affine" (Desnoyers, 2023-08-10):
    /// wake_affine_idle() also takes prev when cpu_load_without(prev, p) <= almost_idle_load, and
    /// select_idle_sibling() is told its target is idle.
    bool WA_ALMOST_IDLE_PREV = false;
    std::int64_t almost_idle_load = 5;  ///< B's threshold (the patch's literal 5)
    /// C. "ttwu_queue_cond: skip queued wakeups across different L2 caches" (Desnoyers, v3
    /// 2023-08-22): a remote wakeup activates directly only when waker and target share an L2
    /// (cpus_share_l2c()); otherwise wakelist + IPI (6.1: share the LLC).
    bool ttwu_queue_l2c = false;
    /// D. "Rate limit task migration" (Desnoyers, RFC 2023-09-05): 1/2 keeps an affine wakeup on
    /// prev while sched_clock < se.next_migration_time (set to now + this window at each
    /// migration); 0 = off.
    std::int64_t migration_ratelimit_ns = 0;
    /// D 2/2: the adaptive form: a quota of migrations per window (10, halved when used up,
    /// replenished by one otherwise) instead of one.
    bool migration_ratelimit_adaptive = false;
    /// G. UTIL_FITS_CAPACITY (Desnoyers, v2 2023-10-19): select_idle_sibling() also accepts
    /// target / prev / recent_used_cpu when util_est.enqueued + task_util_est(p) fits the CPU's
    /// capacity with fits_capacity()'s 20 % margin. Needs UTIL_EST.
    bool UTIL_FITS_CAPACITY = false;
    /// G. SELECT_BIAS_PREV: prev is checked before target, and returned instead of target when
    /// the LLC scan finds nothing.
    bool SELECT_BIAS_PREV = false;
    /// H. SIS_CURRENT (Chen Yu, v8 2023-04-29): a short waker and a short wakee that wake each
    /// other (se.dur_avg < sysctl_sched_migration_cost, no wakee flips, each the other's
    /// last_wakee) go on the waking CPU.
    bool SIS_CURRENT = false;
    /// F. SIS_CACHE (Chen Yu, v2 2023-11-21): a short sleeper's CPU, left idle, is cache-hot for
    /// its average short sleep; select_idle_cpu() passes over cache-hot idle CPUs (at most half
    /// its SIS_UTIL depth) and takes one only when no other idle CPU is found.
    bool SIS_CACHE = false;
    /// E. Aaron Lu, "sched/fair: ratelimit update to tg->load_avg" (v1 2023-08-23, merged as
    /// afc1996859a2): update_tg_load_avg() at most once per this window per cfs_rq; 0 = off (6.1).
    /// The scenario cost parameter tg_ratelimit_ns does the same and stays for older scenarios;
    /// this knob wins when set.
    std::int64_t tg_load_avg_ratelimit_ns = 0;

    KernelVersion kernel = KernelVersion::V6_1;

    std::int64_t jiffyNs() const { return 1000000000LL / hz; }

    /// Preset by name (baseline, idle-delay-v1, idle-delay-v2, idle-delay-v3,
    /// claim-wakeup, claim-wakeup-str, sis-debounce); throws KnobError.
    static Knobs preset(const std::string& name);
    static std::vector<std::string> presetNames();
    static std::string presetDescription(const std::string& name);

    /// Sets one knob from text ("WA_IDLE=0", "idle_delay_ns=1000000", "claim=sis",
    /// "kernel=6.5"); throws KnobError naming the knob and the problem.
    void set(const std::string& name, const std::string& value);
    /// Current value of a knob as text; throws KnobError for an unknown name.
    std::string get(const std::string& name) const;
    /// All knob names, in a stable order.
    static std::vector<std::string> names();
    /// Knobs that differ from baseline, "name=value" each (for captions and reports).
    std::vector<std::string> diffFromBaseline() const;
    /// One line: preset plus overrides, e.g. "idle-delay-v2 (idle_delay_max_running=8)".
    std::string describe() const;

    friend bool operator==(const Knobs&, const Knobs&) = default;
};

/// A duration as text: a number (integer or decimal) with an optional unit ns, us, µs, ms or s
/// ("2ms", "500us", "1.5s"; no unit = ns), in ns rounded to the nearest; nullopt when malformed
/// or out of range. Used by the time knobs (`idle_delay_ns=2ms`) and the GUI's --run-for.
std::optional<std::int64_t> parseDurationNs(const std::string& text);

const char* kernelVersionName(KernelVersion v);
const char* claimModeName(ClaimMode m);
const char* idleDelayClockName(IdleDelayClock c);

}  // namespace sched
