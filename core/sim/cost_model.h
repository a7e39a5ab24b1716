// SPDX-License-Identifier: GPL-2.0-or-later
// cost_model.h: what things cost on the simulated machine (docs/workloads.md: Cost-model figures and their sources).
// Every term is a named parameter with a per-machine default and its source;
// every term can be scaled or switched off ("scale.TERM=0.5", "off=TERM") so a
// user can ask which cost explains a speedup.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sched {

class Topology;

struct CostError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A C-state of the idle driver: exit latency and target residency (ns).
struct CState {
    std::string name;
    std::int64_t exit_ns = 0;
    std::int64_t residency_ns = 0;
    /// TIF_POLLING_NRFLAG is set while a CPU is in this state: poll_idle(), and every state
    /// entered with MWAIT (mwait_idle_with_hints() sets it and monitors the flags word). A
    /// wakeup or resched_curr() then writes the flag (set_nr_if_polling() /
    /// set_nr_and_not_polling()) instead of sending an IPI (sched_wake_idle_without_ipi): the
    /// CPU leaves the state after its exit latency alone.
    bool polling = false;
};

/// The cost terms. Each has a scale (1.0 default, 0 = off).
enum class CostTerm : std::uint8_t {
    ctx_switch,    ///< context switch (thread or process)
    syscall,       ///< pipe/socket read and write
    wakeup,        ///< local / remote-direct / remote-queued wakeup, on the waker
    ipi,           ///< IPI delivery until the target runs its handler
    idle_exit,     ///< C-state exit latency
    cache_refill,  ///< refilling the hot set after a migration, by distance
    smt,           ///< busy-SMT-sibling slowdown
    tg_load_avg,   ///< tg->load_avg cache-line contention
    rq_lock,       ///< runqueue-lock contention on remote enqueues
    sis_scan,      ///< per-CPU cost of the idle scans
    load_balance,  ///< newidle load_balance(): the CPU going idle pays it before running what it pulled
    pipe_lock,     ///< the part of a pipe read or write under pipe->mutex (off: no pipe mutex at all)
    msg_trip,      ///< a message read on another core than the one that wrote it: its lines pulled across
    count_
};
inline constexpr int kCostTerms = int(CostTerm::count_);
const char* toString(CostTerm t);

struct CostModel {
    std::string machine = "generic";  ///< which default table this came from

    // Context switch (ns of CPU on the CPU switching).
    std::int64_t ctx_switch_thread = 1200;   ///< same mm
    std::int64_t ctx_switch_process = 2500;  ///< different mm
    // System calls, per 100-byte message (ns of CPU).
    std::int64_t pipe_write = 350;
    std::int64_t pipe_read = 350;
    std::int64_t socket_send = 600;
    std::int64_t socket_recv = 500;
    std::int64_t futex_wake = 300;  ///< futex syscall entry/exit around a wakeup
    // The waker's tail: what a waker runs after the wakeup it made, until it sleeps itself (ns
    // of CPU, inside the per-message or per-transaction figures). A loopback send: the rest of
    // send() after the softirq receive woke the peer, the syscall return, recv() until it sleeps;
    // a pipe write: the rest of pipe_write() and read() until it sleeps (context_switch1).
    std::int64_t socket_wake_tail = 1500;
    std::int64_t pipe_wake_tail = 600;
    // The part of pipe_write / pipe_read between __pipe_lock() and __pipe_unlock() (ns of CPU,
    // inside the figures above): the pipe->mutex hold. Scaled by the `pipe_lock` term, not `syscall`.
    std::int64_t pipe_write_locked = 150;
    std::int64_t pipe_read_locked = 120;
    // Wakeups, on the waker's CPU (ns of CPU).
    std::int64_t wakeup_local = 400;          ///< select_task_rq + enqueue + check_preempt on this CPU
    std::int64_t wakeup_remote_direct = 700;  ///< lock the remote rq, enqueue (+ lock wait)
    std::int64_t wakeup_remote_queued = 600;  ///< wakelist + IPI send
    std::int64_t sis_scan_per_cpu = 20;       ///< per CPU examined by the wakeup path
    /// The part of each of the three above from sched_waking to ttwu_queue(): select_task_rq()'s
    /// fixed part and set_task_cpu(). The wakeup's window: the chosen CPU sees nothing of the
    /// wakee (no ttwu_pending, no nr_running) for this long plus the scan (docs/workloads.md).
    std::int64_t ttwu_select = 200;
    // IPI delivery until the target CPU runs the handler (ns of latency).
    std::int64_t ipi_same_socket = 1500;
    std::int64_t ipi_cross_socket = 3000;
    // Cache refill after a migration: per 64-byte line of the task's hot set (ns of CPU).
    std::int64_t refill_smt_line = 0;         ///< SMT sibling: shares L1/L2
    std::int64_t refill_llc_line = 12;        ///< same LLC: L2 miss, L3 hit
    std::int64_t refill_cross_llc_line = 90;  ///< other LLC, same socket
    std::int64_t refill_cross_socket_line = 140;
    std::int64_t hot_set_bytes = 16384;  ///< default hot set (a workload may set its own)
    /// A message read on another core than its writer's pulls this many lines from the writer's
    /// cache (a 100-byte payload's two, the socket's or pipe's head and its wait queue), each at
    /// the refill_*_line figure of that distance (term msg_trip).
    std::int64_t msg_lines = 4;
    // SMT: speed of a thread while another thread of its core is busy, per 1024.
    std::int64_t smt_busy_speed = 614;  ///< 0.6
    // tg->load_avg contention (ns of CPU per access to the line: update_tg_load_avg()'s
    // writes and update_cfs_group()'s reads).
    std::int64_t tg_update_base = 50;
    std::int64_t tg_update_per_cpu = 150;  ///< per update of the line within the window
    std::int64_t tg_update_window = 1000;
    std::int64_t tg_update_cap = 5000;
    std::int64_t tg_ratelimit_ns = 0;  ///< Aaron Lu's ratelimit (1 ms); 0 = off (6.1)
    // Runqueue lock.
    std::int64_t rq_lock_hold = 300;  ///< hold time of a remote enqueue
    // Idle driver.
    std::vector<CState> cstates;  ///< shallowest first; [0] is POLL
    /// A cpuidle driver picks the states (its governor honours the PM QoS latency limit,
    /// /dev/cpu_dma_latency); false: none (a qemu guest: "cpuidle driver: none"), the idle loop's
    /// default_idle_call() ignores the limit.
    bool cpuidle_driver = true;
    // Fork / thread creation (ns of CPU on the parent) and exit.
    std::int64_t fork_thread = 15000;
    std::int64_t fork_process = 60000;
    std::int64_t exit_cost = 10000;
    std::int64_t timer_slack = 50000;  ///< current->timer_slack_ns (SCHED_OTHER default): the range of a sleep's hrtimer
    // Newidle balancing: one load_balance() of a domain, measured (sd->max_newidle_lb_cost).
    std::int64_t lb_newidle_base = 2160;
    std::int64_t lb_newidle_per_cpu = 51;  ///< per CPU of the domain's span

    std::array<double, kCostTerms> scale{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

    /// Defaults for a machine (by topology preset name / vendor); documented sources in cost_model.cpp.
    static CostModel forTopology(const Topology& t);
    /// "NAME=VALUE", "scale.TERM=X", "off=TERM[,TERM]": throws CostError naming the key.
    void set(const std::string& assignment);
    void set(const std::string& name, const std::string& value);
    std::string get(const std::string& name) const;
    static std::vector<std::string> names();
    static std::vector<std::string> termNames();
    /// "name=value" for everything that differs from the machine's default.
    std::vector<std::string> diffFrom(const CostModel& base) const;

    /// A cost scaled by its term.
    std::int64_t c(CostTerm t, std::int64_t ns) const {
        const double s = scale[int(t)];
        return s == 1.0 ? ns : std::int64_t(double(ns) * s + 0.5);
    }
    double s(CostTerm t) const { return scale[int(t)]; }
};

}  // namespace sched
