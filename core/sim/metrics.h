// SPDX-License-Identifier: GPL-2.0-or-later
// metrics.h: what a simulation measures: schedstat-like counters, decisions by
// reason code, migrations by cause and distance, wakeup latency, per-CPU
// runqueue length (time-weighted and a bounded sampled timeline), busy time,
// idle-while-overloaded time per LLC, and a bounded ring of decision records.
#pragma once

#include "kernel/decision.h"
#include "kernel/decision_flow.h"
#include "topology/topology.h"
#include "util/histogram.h"
#include "sim/steady_state.h"
#include "kernel/sched_event.h"
#include "sim/timeline.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sched {

class StateArchive;

/// One placement decision as kept for the GUI and written by `run --decisions`.
struct DecisionRecord {
    std::int64_t time = 0;
    std::int32_t pid = 0;
    Decision d;  ///< steps empty (no text trace in runs)
};

/// A headline number of a workload ("Time", "p99 wakeup latency", "RPS").
struct HeadlineValue {
    std::string key;    ///< stable id: "time_s", "wakeup_p99_us", ...
    std::string label;  ///< as printed in tables
    double value = 0;
    bool lower_is_better = true;
    int decimals = 3;
};

/// The results of one workload.
struct WorkloadReport {
    std::string name;
    std::string command;
    std::string cpus;                 ///< its taskset -c cpulist (`cpus`), "" = every CPU
    std::vector<std::string> output;  ///< lines as the real tool prints them
    std::vector<HeadlineValue> headline;
    /// What schedlab saw inside the workload that the real tool does not print (compare shows
    /// them under the headline values, the JSON as "counters"; not a result in themselves).
    std::vector<HeadlineValue> counters;
    std::vector<std::pair<std::string, LatencyHistogram>> histograms;  ///< name, values in ns
};

struct Metrics {
    explicit Metrics(int ncpus = 0, int nllcs = 0, std::int64_t sample_period = 20000000, std::size_t rows = 4096, std::size_t ring = 4096);

    std::int64_t measure_start = 0;  ///< when the measured phase began (e.g. hackbench GO)
    std::int64_t end_time = 0;

    // schedstat-like
    std::uint64_t ttwu_count = 0;     ///< wakeups (try_to_wake_up calls that woke a task, ttwu_runnable's included)
    std::uint64_t decisions = 0;      ///< wakeups and forks that went through the placement path (recordDecision)
    std::uint64_t ttwu_local = 0;     ///< woken on the waker's CPU
    std::uint64_t ttwu_wakelist = 0;  ///< queued through the wakelist (IPI)
    std::uint64_t ttwu_remote_direct = 0;
    std::uint64_t wakeup_new = 0;    ///< fork placements
    std::uint64_t wake_preempt = 0;  ///< wakeups that preempted curr
    std::uint64_t idle_delay_hits = 0;
    std::uint64_t claims = 0;
    std::uint64_t ctx_switches = 0;
    std::uint64_t involuntary_switches = 0;
    std::uint64_t ipis = 0;
    std::uint64_t wake_idle_without_ipi = 0;  ///< an idle CPU in a polling state woken by its flag (sched_wake_idle_without_ipi)
    std::uint64_t lb_calls = 0, lb_balanced = 0, lb_failed = 0, lb_moved_tasks = 0;
    std::uint64_t newidle_calls = 0;
    std::uint64_t nohz_kicks = 0;
    std::uint64_t newilb_runs = 0;  ///< nohz_run_idle_balance() updated the idle CPUs' blocked load on the way into idle
    std::uint64_t idle_ticks = 0;   ///< ticks on idle CPUs whose tick the governor kept
    // Proxy execution (knob proxy_exec).
    std::uint64_t proxy_runs = 0;               ///< picks of a donor that ran its lock's owner in its place
    std::uint64_t proxy_migrations = 0;         ///< donors moved to their lock owner's CPU (proxy_migrate_task())
    std::uint64_t proxy_return_migrations = 0;  ///< woken donors moved back to a CPU they may run on
    std::uint64_t proxy_deactivations = 0;      ///< donors whose lock owner was asleep: dequeued (proxy_deactivate())
    std::uint64_t buddy_picks = 0;              ///< pick_next_entity() chose a next/last buddy over the leftmost
    std::uint64_t tick_preempt = 0;
    // Who woke the tasks that try_to_wake_up() found asleep: a task, or an hrtimer's
    // interrupt on the wakee's own CPU (task_cpu(p), "local") or on another CPU ("remote").
    std::uint64_t wake_by_task = 0, wake_by_timer_local = 0, wake_by_timer_remote = 0;
    std::uint64_t timers_armed = 0;       ///< sleep timers armed (nanosleep, usleep, clock_nanosleep)
    std::uint64_t timers_moved = 0;       ///< of those, put on another CPU by get_nohz_timer_target()
    std::uint64_t timers_kept_local = 0;  ///< a target was found, but hrtimer_check_target() kept the timer on its CPU
    std::uint64_t timers_by_delay = 0;    ///< armed on a CPU that idle_cpu() called idle only because of the idle delay
    std::uint64_t timer_irqs_idle = 0;    ///< timer interrupts that took an idle CPU out of its C-state
    FlowCounts flow;                      ///< decisions per edge of the wakeup path's graph (decision_flow.h): the flow view, --flow
    std::array<std::uint64_t, 16> stage0{};
    std::array<std::uint64_t, 32> stage1{};
    std::array<std::uint64_t, 16> idlest{};
    std::array<std::uint64_t, 32> stage2{};
    std::array<std::uint64_t, kMigrationCauses> migrations{};
    std::array<std::array<std::uint64_t, kDistClasses>, kMigrationCauses> migration_matrix{};
    // Time spent in cost terms (ns of CPU), to see what a variant saved.
    std::int64_t cost_ctx_switch = 0, cost_wakeup = 0, cost_refill = 0, cost_tg = 0, cost_lock_wait = 0, cost_scan = 0, cost_lb = 0;
    std::int64_t cost_msg_trip = 0;      ///< messages read on another core than their writer's (term msg_trip)
    std::int64_t idle_exit_latency = 0;  ///< summed C-state exit latency (ns of delay)
    /// Accesses to tg->load_avg: update_tg_load_avg()'s writes, update_cfs_group()'s reads.
    std::uint64_t tg_updates = 0, tg_reads = 0;

    LatencyHistogram wakeup_latency;  ///< sched_waking -> sched_switch in (ns)
    /// sched_waking -> sched_wakeup (ns): the wakeup's window, until its task is on the runqueue.
    LatencyHistogram ttwu_window;
    /// Wakeups stacked by a race: the chosen CPU looked idle while another waker's wakee was on its way there (Decision::raced).
    std::uint64_t ttwu_races = 0;

    // per CPU
    std::vector<std::int64_t> busy_ns;
    std::vector<std::int64_t> rqlen_area;  ///< integral of nr_running dt (ns * tasks)
    std::vector<std::int64_t> last_change;
    std::vector<std::uint16_t> cur_len;
    std::vector<std::uint8_t> cur_busy;
    std::vector<std::uint16_t> bpf_len;  ///< the seed bpftrace script's view (tick / cpu_idle)
    // per LLC (index = dense LLC number)
    std::vector<std::int64_t> idle_while_overloaded_ns;
    std::vector<std::int32_t> llc_idle, llc_over;
    std::vector<std::int64_t> llc_last;

    RqTimeline timeline;      ///< nr_running sampled
    SteadyState steady;       ///< fed at each sample: when the machine settled, and the figures from there
    RqTimeline bpf_timeline;  ///< the bpftrace script's @runqlen sampled at 50 Hz

    /// The last ring_cap decisions, oldest first via recent(i); storage reused (no allocation per wakeup).
    std::vector<DecisionRecord> ring;
    std::size_t ring_cap = 4096;
    std::size_t ring_next = 0;
    std::size_t ring_size = 0;
    const DecisionRecord& recent(std::size_t i) const { return ring[(ring_next + ring_cap - ring_size + i) % ring_cap]; }
    std::function<void(const DecisionRecord&)> decision_sink;  ///< every decision (run --decisions)

    /// Zeroes counters, histograms and integrals: the measured phase starts at t.
    void resetCounters(std::int64_t t);
    /// Saves or restores every count, integral, histogram and series (checkpoints). The rings
    /// keep their capacity: the newest records that fit are restored. Sinks are not state.
    void state(StateArchive& ar);
    void recordDecision(std::int64_t t, std::int32_t pid, const Decision& d);

    /// The kernel-style event stream: the last event_ring_cap events (for the GUI's
    /// migration arrows and timelines) and a sink that sees every event (exporters).
    std::vector<SchedEvent> event_ring;
    std::size_t event_ring_cap = 0;
    std::size_t event_next = 0;
    std::size_t event_size = 0;
    std::uint64_t events_emitted = 0;
    std::function<void(const SchedEvent&)> event_sink;
    bool wantEvents() const { return event_ring_cap != 0 || bool(event_sink); }
    void recordEvent(const SchedEvent& e);
    const SchedEvent& recentEvent(std::size_t i) const { return event_ring[(event_next + event_ring_cap - event_size + i) % event_ring_cap]; }

    std::uint64_t migrationsTotal() const;
    double busyFraction(std::int64_t t0, std::int64_t t1) const;
    double avgRqLen(int cpu, std::int64_t t0, std::int64_t t1) const;
    /// CPU time `cpu` has been busy in the measured phase, the open interval up to `now` included.
    std::int64_t busyNs(int cpu, std::int64_t now) const;
};

}  // namespace sched
