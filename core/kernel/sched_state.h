// SPDX-License-Identifier: GPL-2.0-or-later
// sched_state.h: the runqueue, task and shared-domain state the wakeup path
// reads and writes (kernel/sched/sched.h: struct rq, struct sched_domain_shared; task_struct), with the kernel's field names.
#pragma once

#include "util/cpumask.h"
#include "kernel/pelt.h"
#include "kernel/sched_domain.h"
#include "topology/topology.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sched {

/// What rq->curr is.
enum class CurrKind : std::uint8_t {
    Idle,       ///< the idle task (swapper)
    Normal,     ///< a SCHED_NORMAL/BATCH fair task
    SchedIdle,  ///< a SCHED_IDLE fair task
    Kthread,    ///< a fair kernel thread (counts as a normal task)
};
const char* currKindName(CurrKind k);

enum class Policy : std::uint8_t { Normal, Batch, Idle };

/// struct rq (the parts the wakeup path and its observers read).
struct Rq {
    int cpu = 0;
    CurrKind curr = CurrKind::Idle;
    unsigned nr_running = 0;         ///< all classes
    unsigned h_nr_running = 0;       ///< cfs.h_nr_running
    unsigned idle_h_nr_running = 0;  ///< cfs.idle_h_nr_running (SCHED_IDLE tasks)
    bool ttwu_pending = false;
    bool active = true;                           ///< cpu_active() (and online)
    std::int64_t load_avg = 0;                    ///< cfs.avg.load_avg = cpu_load()
    std::int64_t util_avg = 0;                    ///< cfs.avg.util_avg
    std::int64_t runnable_avg = 0;                ///< cfs.avg.runnable_avg
    std::int64_t util_est = 0;                    ///< cfs.avg.util_est.enqueued
    std::int64_t cpu_capacity = 1024;             ///< capacity_of()
    std::int64_t avg_idle = 1000000;              ///< ns
    std::int64_t max_idle_balance_cost = 500000;  ///< ns
    std::int64_t idle_stamp = 0;                  ///< ns (rq_clock when it last went idle; 0 = cleared)
    std::int64_t wake_stamp = 0;                  ///< jiffies
    std::int64_t wake_avg_idle = 1000000;         ///< ns
    std::int64_t clock_idle = 0;                  ///< ns (pelt.h: _update_idle_rq_clock_pelt())
    std::int64_t idle_end_time = 0;               ///< ns, idle-delay v1/v2 (docs/patch-variants.md: Idle delay)
    bool claimed = false;                         ///< claim_wakeup flag (docs/patch-variants.md: Claims)
    std::int64_t cache_hot_timeout = 0;           ///< F (SIS_CACHE): rq->cache_hot_timeout, ns
    std::int64_t exit_latency_ns = -1;            ///< exit latency of the current cpuidle state; -1 = idle_get_state() NULL
    // For check_preempt_wakeup (old CFS).
    std::int64_t min_vruntime = 0;   ///< cfs_rq.min_vruntime (ns)
    std::int64_t curr_vruntime = 0;  ///< curr's vruntime (ns)
    bool curr_need_resched = false;
};

/// task_struct::comm: TASK_COMM_LEN (16) bytes, NUL-terminated; longer names are cut to
/// 15 characters as set_task_comm() cuts them.
class TaskComm {
public:
    static constexpr std::size_t kLen = 16;  // TASK_COMM_LEN
    explicit TaskComm(std::string_view s) { std::copy_n(s.data(), std::min(s.size(), kLen - 1), m_s.data()); }
    [[nodiscard]] std::string str() const { return std::string(m_s.data()); }

private:
    std::array<char, kLen> m_s{};
};

/// struct task_struct / sched_entity fields the path reads (comm is not one: the engine
/// keeps names apart, engine.h). Laid out by size so that the engine's per-task record
/// stays small (SimTask).
struct Task {
    int pid = 1000;
    int nr_cpus_allowed = 0;
    int cpu = 0;  ///< task_cpu(p)
    int wake_cpu = 0;
    int recent_used_cpu = 0;
    unsigned wakee_flips = 0;
    int last_wakee = -1;  ///< pid of the last task this one woke, -1 none
    int numa_preferred_nid = -1;
    int nr_migrations_per_window = 0;      ///< D 2/2 (migration ratelimit): migrations in the current window
    int quota_migrations_per_window = 10;  ///< D 2/2: SCHED_MIGRATION_QUOTA at fork
    /// p->cpus_ptr: points at an interned mask (CpuMask::intern), as the kernel's points at
    /// p->cpus_mask; set it with setAffinity().
    const CpuMask* cpus_ptr = &kNoCpus;
    std::int64_t wakee_flip_decay_ts = 0;  ///< jiffies
    /// se.avg, read where the kernel reads it: the engine keeps it as update_load_avg() leaves
    /// it (a sleeping task's is as of its dequeue until sync_entity_load_avg()); a snapshot
    /// gives it as read. last_update_time 0 = a new task not yet attached to a cfs_rq.
    SchedAvg avg{.last_update_time = 1};
    std::int64_t task_h_load = -1;            ///< -1: equals se.avg.load_avg (no cgroup hierarchy)
    std::int64_t exec_start = 0;              ///< ns
    std::int64_t vruntime = 0;                ///< ns, relative to its cfs_rq's min_vruntime when not queued
    std::int64_t wakee_placed = -1;           ///< SIS_DEBOUNCE: jiffies of the last placement, -1 never
    std::int64_t next_migration_time = 0;     ///< D (migration ratelimit): se.next_migration_time, ns
    std::int64_t dur_avg = 0;                 ///< H (SIS_CURRENT): se.dur_avg, the average run between voluntary sleeps, ns
    std::int64_t prev_sleep_sum_runtime = 0;  ///< H: se.prev_sleep_sum_runtime, ns
    std::int64_t last_dequeue_time = 0;       ///< F (SIS_CACHE): when it last dequeued to sleep, ns; 0 = its last dequeue was no sleep
    std::int64_t avg_hot_dur = 0;             ///< F: the average short sleep (its CPU's cache-hot time), ns
    bool migration_disabled = false;
    bool on_rq = false;
    bool on_cpu = false;
    bool kthread = false;  ///< PF_KTHREAD
    bool exiting = false;  ///< PF_EXITING
    Policy policy = Policy::Normal;

    std::int64_t h_load() const { return task_h_load >= 0 ? task_h_load : std::int64_t(avg.load_avg); }
    /// task_util(p)
    std::int64_t task_util() const { return std::int64_t(avg.util_avg); }
    /// _task_util_est(p): max(ewma, enqueued)
    std::int64_t util_est() const { return std::int64_t(task_util_est(avg)); }
    /// Set the averages a snapshot gives (state files, traces): util_est as util_est.enqueued.
    void setAverages(std::int64_t load, std::int64_t util, std::int64_t runnable, std::int64_t est) {
        avg.load_avg = std::uint64_t(load);
        avg.util_avg = std::uint64_t(util);
        avg.runnable_avg = std::uint64_t(runnable);
        avg.util_est_enqueued = std::uint32_t(est);
        avg.util_est_ewma = 0;
    }
    bool is_per_cpu_kthread() const { return kthread && nr_cpus_allowed == 1; }
    void setAffinity(const CpuMask& m) {
        cpus_ptr = CpuMask::intern(m);
        nr_cpus_allowed = m.weight();
    }
};

/// struct sched_domain_shared (per LLC).
struct SdShared {
    bool has_idle_cores = false;
    int nr_idle_scan = 0;
    int nr_busy_cpus = 0;
};

/// Called by the wakeup path where the kernel brings a runqueue's clock and
/// curr's vruntime up to date (update_curr() in check_preempt_wakeup). The
/// engine implements it; the explain path has none (its state is a snapshot).
struct RqUpdateHook {
    virtual ~RqUpdateHook() = default;
    virtual void update_curr(int cpu) = 0;
    /// sync_entity_load_avg(&p->se): decay a sleeping p's averages to its cfs_rq's clock
    /// (find_idlest_cpu(), select_idle_sibling() on asymmetric machines).
    virtual void sync_entity_load_avg(Task& p) = 0;
};

/// The whole machine's scheduler state at one instant.
struct MachineState {
    /// Builds an all-idle machine: every CPU idle, nr_idle_scan = LLC size
    /// (seeded: the kernel's is 0 until fair.c: update_idle_cpu_scan() first runs), has_idle_cores false.
    explicit MachineState(std::shared_ptr<const Topology> topo);

    std::shared_ptr<const Topology> topo;
    std::shared_ptr<const SchedDomains> sd;
    std::vector<Rq> rq;
    std::vector<SdShared> shared;             ///< indexed by sd_llc_id (first CPU of the LLC)
    std::vector<std::int64_t> avg_scan_cost;  ///< sd_llc(cpu)->avg_scan_cost, per CPU (SIS_PROP)
    std::int64_t now_ns = 1000000000;         ///< rq_clock / sched_clock of every CPU
    std::int64_t jiffies = 0;
    bool rd_overload = false;      ///< rd->overload (sticky: set by add_nr_running, written by the root level's update_sd_lb_stats)
    RqUpdateHook* hook = nullptr;  ///< set by the engine

    int nrCpus() const { return int(rq.size()); }
    /// The hints of an idle machine that has been up (the engine's t = 0, a trace's start):
    /// with SMT, has_idle_cores set in every LLC (the last CPU of each core to go idle set it
    /// in __update_idle_core(); only a core scan that finds no idle core clears it), as
    /// nr_idle_scan is seeded to the LLC's size. sd_init()'s zeroed 0s last only until the
    /// first idle entry and the first LLC balance after the domains are built.
    void seedIdleMachineHints() {
        const bool smt = sd->smtActive();
        for (int c = 0; c < nrCpus(); ++c)
            if (SdShared* sh = llcShared(c)) sh->has_idle_cores = smt;
    }
    SdShared* llcShared(int cpu) {
        int id = sd->sd_llc_shared(cpu);
        return id < 0 ? nullptr : &shared[id];
    }
};

}  // namespace sched
