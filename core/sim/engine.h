// SPDX-License-Identifier: GPL-2.0-or-later
// engine.h: the discrete-event simulation that drives the wakeup path.
//
// Integer nanosecond clock; events ordered by (time, creation time, type and target); one Rng per
// simulation. Per-CPU CFS runqueues (vruntime order, slices, tick preemption,
// wakeup preemption through check_preempt_curr), the idle task with C-states,
// PELT for tasks and runqueues, the wakelist/IPI and direct enqueue of
// ttwu_queue, periodic / newidle / nohz-kick / active load balancing, and a
// cost model. Every wakeup goes through the core's try_to_wake_up().
#pragma once

#include "sim/burst_queue.h"
#include "sim/event_heap.h"
#include "sim/cost_model.h"
#include "kernel/decision.h"
#include "util/histogram.h"
#include "kernel/knobs.h"
#include "sim/metrics.h"
#include "kernel/pelt.h"
#include "util/rng.h"
#include "kernel/sched_balance.h"
#include "kernel/sched_state.h"
#include "kernel/wakeup_path.h"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace sched {

class Engine;
class KMutex;
class StateArchive;

/// What a task does next, returned by its workload when its current work is done.
struct Action {
    enum Kind : std::uint8_t { Run, Block, Sleep, Exit } kind = Run;
    bool pinned = false;     ///< Sleep: HRTIMER_MODE_PINNED (the timer stays on the arming CPU)
    bool abs = false;        ///< Sleep: HRTIMER_MODE_ABS: `ns` is the soft expiry itself (clock_nanosleep(TIMER_ABSTIME))
    std::int64_t ns = 0;     ///< Run: CPU work (ns at full speed); Sleep: timer delay (the soft expiry, from now)
    std::int64_t slack = 0;  ///< Sleep: the hrtimer's range (timer_slack_ns): it expires at the latest `slack` after the delay
    static Action run(std::int64_t ns) { return {Run, false, false, ns, 0}; }
    static Action block() { return {Block, false, false, 0, 0}; }
    /// nanosleep()/usleep()/clock_nanosleep(): an hrtimer armed where 6.1's
    /// hrtimer_start_range_ns() puts it (get_nohz_timer_target()), fired by that CPU's interrupt.
    static Action sleep(std::int64_t ns, std::int64_t slack = 0, bool pinned = false) { return {Sleep, pinned, false, ns, slack}; }
    /// clock_nanosleep(TIMER_ABSTIME): the soft expiry at the absolute time `t` (it may have
    /// passed by the time the task gets to sleep: do_nanosleep() still arms the timer and sleeps).
    static Action sleepUntil(std::int64_t t, std::int64_t slack = 0, bool pinned = false) { return {Sleep, pinned, true, t, slack}; }
    static Action exit() { return {Exit, false, false, 0, 0}; }
};

/// A task's sleep timer (struct hrtimer_sleeper) as the engine placed it.
struct TimerInfo {
    std::int64_t soft = 0, hard = 0;  ///< _softexpires and expires (soft + slack)
    std::int32_t cpu = -1;            ///< the CPU whose hrtimer base holds it; -1 when not armed
    std::int32_t armed_on = -1;       ///< the CPU of the task that armed it (smp_processor_id())
    TimerTarget target;               ///< get_nohz_timer_target()'s answer (or Pinned)
    bool kept_by_check = false;       ///< the target's next event was earlier: hrtimer_check_target() kept it on armed_on
    bool next_pinned = false;         ///< the pending Action::sleep's mode and range (applied when its work is done)
    bool next_abs = false;
    std::int64_t next_slack = 0;
};

enum class TaskState : std::uint8_t { Runnable, Running, Blocked, Exited };

/// A simulated task: the wakeup path's Task plus what the engine needs.
struct SimTask {
    Task t;  ///< what select_task_rq sees (pid, cpu, cpus_ptr, wakee_flips, se.avg)
    std::int64_t pending_ns = 0;
    std::int64_t work_left = 0;                   ///< ns of work at full speed before the next step()
    std::int64_t sum_exec = 0;                    ///< se.sum_exec_runtime
    std::int64_t prev_sum_exec = 0;               ///< se.prev_sum_exec_runtime
    std::int64_t wake_time = -1;                  ///< when it was woken (sched_waking), -1 none
    std::int32_t cfs_newer = -1, cfs_older = -1;  ///< neighbours in its rq's cfs_tasks (detach_tasks walks from the oldest)
    std::int64_t a = 0, b = 0, c = 0;             ///< workload-specific counters
    std::int32_t last_ran_cpu = -1;
    std::int32_t wake_from = -1;  ///< task_cpu before a wakelist wakeup (ENQUEUE_MIGRATED at the IPI when it moved)
    std::int32_t mm = 0;          ///< address space (threads of one process share it)
    std::uint32_t timer_gen = 0;
    std::int32_t idx = 0;         ///< workload-specific
    std::int32_t hot_set = 0;     ///< bytes refilled after a migration (scenario limit 1 GiB)
    std::uint16_t workload = 0;   ///< index of its workload
    std::uint8_t plan_limit = 4;  ///< coalescing: most steps its next plan may have (adapts to how plans end)
    TaskState state = TaskState::Runnable;
    Action::Kind pending = Action::Run;  ///< Block/Sleep/Exit to apply when work_left is done
    std::uint8_t role = 0;               ///< workload-specific
    bool wake_pending = false;           ///< woken while a Block was pending (ttwu_runnable)
    std::uint8_t watch_off_cpu = 0;      ///< its workload's offCpu() is called when it leaves its CPU (a mutex owner or spinner)
};
/// The per-task record the event loop walks (four cache lines; five since the follow-up
/// patches' per-task state: se.dur_avg, se.prev_sleep_sum_runtime, se.next_migration_time
/// and the ratelimit's quota, avg_hot_dur and last_dequeue_time; tests/bench shows what the fifth
/// line costs).
static_assert(sizeof(SimTask) <= 320, "SimTask grew past five cache lines");

/// A workload: creates its tasks and tells the engine what each does next.
class Workload {
public:
    virtual ~Workload() = default;
    virtual std::string name() const = 0;
    /// Describe like the real tool's command line.
    virtual std::string commandLine() const = 0;
    /// Create the tasks (engine.spawn) at time 0.
    virtual void start(Engine& e) = 0;
    /// The task's current work is done: apply its effect and say what comes next.
    virtual Action step(Engine& e, SimTask& t) = 0;
    /// The task finished exiting (its Exit action took effect); it is still current on its CPU.
    virtual void onExit(Engine&, SimTask&) {}
    /// True when the workload has finished (all its tasks exited or its measured phase is over).
    virtual bool finished() const = 0;
    /// Fill the workload's headline results.
    virtual void report(const Engine& e, WorkloadReport& r) const = 0;
    /// Invariant check (conservation); returns an empty string when fine.
    virtual std::string checkInvariants(const Engine&) const { return {}; }
    /// Fraction done (0..1), or -1 when unknown (for the progress line's ETA).
    virtual double progress(const Engine&) const { return -1; }
    /// The messages the whole job passes, when its work is messages and progress() counts
    /// them (hackbench: groups x fds x fds x loops); -1 otherwise.
    virtual double messages() const { return -1; }
    /// The work done so far in the unit of the figure the threads quote as a rate (workUnit()):
    /// hackbench's messages read, tbench's MB, netperf's transactions, schbench's requests or
    /// wakeups, ...; it never decreases (the outcome plot draws its rate over time). -1: none.
    virtual double work(const Engine&) const { return -1; }
    /// The rate's unit, e.g. "messages/s"; "" when work() has none.
    virtual std::string workUnit() const { return {}; }
    /// A task whose watch_off_cpu is set left its CPU: preempted (still queued), blocked or
    /// exited. (A mutex's spinners watch their owner: mutex_spin_on_owner()'s owner_on_cpu().)
    virtual void offCpu(Engine&, SimTask&) {}
    /// A running task whose watch_off_cpu is set had its current work re-timed from outside its
    /// own steps (a tick, an SMT sibling changing its speed): where that work ends may have moved.
    virtual void segmentMoved(Engine&, SimTask&) {}
    /// Background workloads do not hold the simulation open.
    virtual bool background() const { return false; }
    /// Saves or restores everything the workload keeps between steps (checkpoints: the engine's
    /// state() calls it after the tasks). A restored workload is not start()ed: whatever start()
    /// set up is restored here or built again from the parameters.
    virtual void state(StateArchive& ar);
    /// The workload's mutexes by index (p->blocked_on in a checkpoint): -1 / nullptr for none.
    virtual std::int64_t mutexIndex(const KMutex*) const { return -1; }
    virtual KMutex* mutexAt(std::int64_t) { return nullptr; }
    /// `taskset -c`: the CPUs its tasks may run on (their cpus_ptr), null for every CPU. Set
    /// before start(); spawn() gives it to every task of the workload.
    void setCpus(const CpuMask* m) { m_cpus = m; }
    const CpuMask* cpus() const { return m_cpus; }

    // --- Exact coalescing (engine.h, "Coalescing") -----------------------------
    /// Called after step() returned Run (the task keeps running, no reschedule pending):
    /// the workload may promise that the task's next steps change nothing the scheduler
    /// sees, taking them with e.planRun(work) and e.planTake(), in order. It must then apply each
    /// planned step's effect lazily, before anything reads what that step changes, in the
    /// order of the steps' keys (PlanKey), and cut the plans that a change would invalidate.
    virtual void plan(Engine&, SimTask&) {}
    /// The plan of `t` ended: its first `done` planned steps happened (keys before the
    /// current event's), the rest never will; t's next step() is its next real step.
    virtual void planEnded(Engine&, SimTask&, int done) { (void)done; }

private:
    const CpuMask* m_cpus = nullptr;
};

/// The order key of a planned (virtual) burst end: the event it stands for would have been
/// (t, created at ctime, EvBurstEnd, cpu).
struct PlanKey {
    std::int64_t t = 0, ctime = 0;
    std::int32_t cpu = 0;
};

struct EngineConfig {
    std::shared_ptr<const Topology> topo;
    Knobs knobs;
    CostModel cost;
    std::uint64_t seed = 1;
    std::int64_t stop_ns = 0;  ///< hard stop (simulated); 0 = none
    /// How long the machine has been up at t = 0: jiffies start at uptime / jiffy, and the
    /// sched domains were built (sd_init: last_balance = jiffies) and every CPU last balanced
    /// at boot. 0 = a machine booting at t = 0 (nothing across LLCs balances before the
    /// domains' intervals have passed).
    std::int64_t uptime_ns = 600000000000LL;
    std::int64_t max_events = 0;  ///< hard stop on events; 0 = none
    bool check_invariants = false;
    std::size_t decision_ring = 4096;          ///< decisions kept for the GUI
    std::size_t event_ring = 0;                ///< kernel-style events kept (0 = none; the GUI keeps some)
    std::int64_t sample_period_ns = 20000000;  ///< rq-length timeline (50 Hz)
    std::size_t timeline_rows = 4096;
    /// Exact coalescing of workload steps that change no scheduler state (runs with
    /// max_events never coalesce, their stop counts real events). Same results either way.
    /// The engine's own default is one event per step; RunOptions (the CLI and the window)
    /// turn it on unless --no-coalesce.
    bool coalesce = false;
};

/// Tasks by id in chunks of 64 that never move (spawn() during a step must not move the
/// stepping task): indexing is a shift, a mask and two loads from a small table. A
/// std::deque of SimTasks holds one per node, and its operator[] walks node offsets on
/// every access.
class TaskStore {
public:
    static constexpr std::size_t kChunk = 64;
    SimTask& operator[](std::size_t i) { return m_chunks[i / kChunk][i % kChunk]; }
    const SimTask& operator[](std::size_t i) const { return m_chunks[i / kChunk][i % kChunk]; }
    std::size_t size() const { return m_n; }
    SimTask& emplace_back() {
        if (m_n % kChunk == 0) m_chunks.push_back(std::make_unique<SimTask[]>(kChunk));
        return (*this)[m_n++];
    }

private:
    std::vector<std::unique_ptr<SimTask[]>> m_chunks;
    std::size_t m_n = 0;
};

/// The engine.
class Engine : private RqUpdateHook {
public:
    explicit Engine(EngineConfig cfg);
    ~Engine() override;
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    void addWorkload(std::unique_ptr<Workload> w);
    /// Runs until every foreground workload finished, or a stop condition.
    /// `progress` (optional) is called now and then with the simulated time.
    void run(const std::function<void(std::int64_t)>& progress = {});
    /// Advances by at most `ns` of simulated time (for the GUI), or until `max_events` events
    /// have run in this call; false when done. Chunked advances give the same run as run().
    bool advance(std::int64_t ns, std::uint64_t max_events = ~std::uint64_t(0));
    /// Closes the metrics' time integrals (busy time, rq length, idle-while-overloaded) at
    /// now and sets metrics().end_time: the end of a run, or a run stopped before its end
    /// (RunOptions::steady_hold_ns). Changes no scheduler state; advancing afterwards goes on
    /// integrating from now.
    void closeIntegrals();
    bool done() const { return m_done; }
    /// Saves the whole state of the run (between events: after advance() returned), or restores
    /// it into an engine built from the same scenario that has not run (checkpoints,
    /// sim/checkpoint.h). Restored, the run goes on exactly as the saved one would have.
    void state(StateArchive& ar);
    /// Moves the hard stop (EngineConfig::stop_ns; 0: none): where a run restored from a
    /// checkpoint ends.
    void setStop(std::int64_t ns) { m_cfg.stop_ns = ns; }

    // --- for workloads -------------------------------------------------------
    std::int64_t now() const { return m_now; }
    Rng& rng() { return m_rng; }
    const CostModel& cost() const { return m_cfg.cost; }
    const Knobs& knobs() const { return m_cfg.knobs; }
    const Topology& topo() const { return *m_cfg.topo; }
    int nrCpus() const { return m_nrCpus; }
    /// Creates a task; `parent` (-1 none) forks it from its CPU through wake_up_new_task.
    /// `affinity`: its cpus_ptr when not its workload's mask (sched_setaffinity() at its start).
    /// Room for `n` tasks in the per-task tables before the workloads start (buildEngine(): the
    /// scenario's task count), so that they are not regrown, and over-allocated, as tasks fork.
    void reserveTasks(std::size_t n);
    int spawn(std::uint16_t workload, const std::string& comm, int mm, int parent, std::uint8_t role, std::int32_t idx, std::int64_t hot_set,
              const CpuMask* affinity = nullptr);
    SimTask& task(int id) { return m_tasks[id]; }
    const SimTask& task(int id) const { return m_tasks[id]; }
    int taskCount() const { return int(m_tasks.size()); }
    /// The comm of the task with this pid ("" for none; tasks are pid 1000 + id), e.g. for exports.
    std::string taskComm(int pid) const {
        const int id = pid - 1000;
        return id >= 0 && id < taskCount() ? m_comm[std::size_t(id)].str() : std::string();
    }
    /// The running task (the one whose step() is executing) wakes `id`.
    /// Returns true when a blocked task was woken. `sync`: WF_SYNC.
    bool wake(int id, bool sync);
    /// Charge CPU work to the task currently executing step() (syscall costs etc.).
    void charge(std::int64_t ns);
    /// What reading a message written on `writerCpu` costs a reader on `readerCpu`: the
    /// message's lines (CostModel::msg_lines) at the per-line figure of their distance (term
    /// msg_trip); 0 on the same CPU. The caller charges it; it is counted in Metrics::cost_msg_trip.
    std::int64_t messageTrip(int writerCpu, int readerCpu);
    /// The id of the task executing step(), or -1.
    int current() const { return m_stepping; }
    /// CPU the task executing step() runs on.
    int currentCpu() const { return m_stepCpu; }
    /// Ends the current work of task `id` (not the stepping one) now: a running task's step()
    /// runs at a burst end at the current time; a queued one's as soon as it runs again. Its
    /// pending charge stays. For a spinner whose owner let go of the lock or left its CPU.
    void interruptWork(int id);
    /// Task `id`'s sleep timer: where it is armed (cpu -1 once it fired or before any sleep).
    const TimerInfo& timerOf(int id) const { return m_hrt[std::size_t(id)]; }
    /// cpu_base->expires_next of `cpu`: its earliest hrtimer (its tick while the tick runs, the
    /// sleep timers armed on it); kNever for none.
    std::int64_t hrtimerExpiresNext(int cpu) const;
    /// The cpuidle PM QoS limit (/dev/cpu_dma_latency, e.g. cyclictest writes 0): the governor
    /// picks no state whose exit latency exceeds it. A large value for none.
    void setCpuLatencyQos(std::int64_t ns) { m_latencyQos = ns; }
    /// TIF_NEED_RESCHED of the task running on `cpu` (need_resched() as that task sees it).
    bool needResched(int cpu) const;
    // --- Proxy execution (knob proxy_exec; docs/patch-variants.md: Proxy execution) ------
    /// Whether this run has proxy execution (the knob at the start: a boot parameter).
    bool proxyExec() const { return m_proxyOn; }
    /// p->blocked_on: the mutex task `id` waits for (set_task_blocked_on(); nullptr clears it),
    /// and p->blocked_on_waking, which an unlock sets when it wakes the task.
    void setBlockedOn(int id, KMutex* m);
    void setBlockedOnWaking(int id);
    KMutex* blockedOn(int id) const { return m_proxyOn ? m_blocked[std::size_t(id)].on : nullptr; }
    /// task_is_blocked(): blocked on a mutex and not being woken (a donor).
    bool taskIsBlocked(int id) const { return m_proxyOn && m_blocked[std::size_t(id)].on && !m_blocked[std::size_t(id)].waking; }
    /// p->blocked_donor: the task the owner `id` last ran for (find_proxy_task() sets it; the
    /// unlock hands the lock to it when it waits for this lock). -1 none.
    int blockedDonor(int id) const { return m_proxyOn ? m_blocked[std::size_t(id)].donor : -1; }
    void clearBlockedDonor(int id) {
        if (m_proxyOn) m_blocked[std::size_t(id)].donor = -1;
    }
    /// rq_selected(): the task whose scheduling context `cpu` runs (a donor while its lock's
    /// owner runs for it; otherwise curr), -1 idle.
    int selectedTask(int cpu) const;
    /// Notify that a workload finished (checks the stop condition).
    void workloadFinished() { m_checkDone = true; }

    // --- Coalescing --------------------------------------------------------------
    // A run of steps that neither wake, block, charge nor read anything the scheduler
    // changes is one CPU-work interval whose boundaries are computed exactly as the steps
    // would have been: T(j+1) = T(j) + ceil(w(j+1) * 1024 / speed). Only the last boundary
    // is an event; the workload applies the others' effects lazily, in key order. The plan
    // is cut (back to real events from the next boundary on) when its assumptions change:
    // the CPU is accounted (tick, preemption, SMT speed change), need_resched is set there,
    // IRQ work is charged to it, or the workload cuts it (a reader starts waiting, ...).
    /// In Workload::plan(), for the next steps, each of which takes effect at the plan's
    /// current end and then works `work` ns: planRun(work) says how many more steps the plan
    /// may take (room; 0: none) and gives their keys (key(j), j < room); planTake(r, n) takes
    /// the first n. Steps of other costs: planRun again after planTake. The plan is read once
    /// per run of equal steps, not once per step.
    struct PlanRun {
        std::int64_t t0 = 0, tprev = 0, dur = 0;  ///< boundary of the first step, the one before it, a step's duration
        std::int32_t cpu = 0;
        int room = 0;
        PlanKey key(int j) const { return PlanKey{t0 + j * dur, j ? t0 + (j - 1) * dur : tprev, cpu}; }
    };
    PlanRun planRun(std::int64_t work) {
        PlanRun r;
        if (m_planning < 0 || work <= 0) return r;
        Plan& pl = m_plans[std::size_t(m_planning)];
        r.room = pl.limit - (pl.n - 1);
        if (r.room <= 0) return PlanRun{};
        if (work != pl.lastWork) pl.lastWork = work, pl.lastDur = (work * 1024 + pl.speed - 1) / pl.speed;
        r.t0 = pl.T[std::size_t(pl.n)];
        r.tprev = pl.T[std::size_t(pl.n - 1)];
        r.dur = pl.lastDur;
        r.cpu = m_planning;
        return r;
    }
    void planTake(const PlanRun& r, int n, std::int64_t work) {
        if (n <= 0) return;
        Plan& pl = m_plans[std::size_t(m_planning)];
        const int k0 = pl.n;
        for (int j = 0; j < n; ++j) {
            pl.W[std::size_t(k0 + j)] = work;
            pl.T[std::size_t(k0 + j + 1)] = r.t0 + (j + 1) * r.dur;
        }
        pl.n = k0 + n;
    }
    /// The key of the event being dispatched (after a run: of the last one, or past the stop time).
    struct EventKey {
        std::int64_t t = 0, ctime = 0;
        std::uint64_t tag = 0;
    };
    const EventKey& nowKey() const { return m_cur; }
    static bool keyBefore(const PlanKey& k, const EventKey& e) { return evBefore(k.t, k.ctime, evTag(EvBurstEnd, k.cpu, 0), e.t, e.ctime, e.tag); }
    bool keyBeforeNow(const PlanKey& k) const { return keyBefore(k, m_cur); }
    /// The current event is the burst end with this key (a plan ending where it was planned to).
    bool nowIs(const PlanKey& k) const { return m_cur.t == k.t && m_cur.ctime == k.ctime && m_cur.tag == evTag(EvBurstEnd, k.cpu, 0); }
    static bool keyBefore(const PlanKey& a, const PlanKey& b) {
        return a.t != b.t ? a.t < b.t : a.ctime != b.ctime ? a.ctime < b.ctime : a.cpu < b.cpu;
    }
    /// Cuts the plan of task `id` (if it has one) at the current event.
    void cutPlan(int id);
    /// The steps of task `id`'s plan in flight that are behind the current event (0: no plan).
    int plannedStepsBehindNow(int id) const;
    bool coalescing() const { return m_coalesce; }
    /// Whether this run may coalesce at all (its configuration; a workload keeps its lazy
    /// pipe state from the start on when it may).
    bool coalescingAllowed() const { return m_coalesceAllowed; }
    /// Off: every plan is cut at the current event and each step is an event again (the
    /// window's "Step event" steps one of them); on: plans again from the next step. The
    /// same run either way (a cut is what a plan's change of assumptions does anyway). On
    /// is a no-op for a run whose configuration does not allow coalescing, and waits for the
    /// end of a pause the governor (governCoalescing()) is in.
    void setCoalescing(bool on);
    /// Windows of real events (kGovWindow each) in which the governor kept coalescing off
    /// because it did not pay (setCoalescing() and governCoalescing()).
    std::uint64_t coalescingPausedWindows() const { return m_govPausedWindows; }
    /// Planned steps that happened (counted in events()) and plans cut early.
    std::uint64_t plannedSteps() const { return m_plannedSteps; }
    std::uint64_t plansCut() const { return m_plansCut; }
    std::uint64_t plansMade() const { return m_plansMade; }

    // --- results -----------------------------------------------------------
    const Metrics& metrics() const { return m_metrics; }
    Metrics& metrics() { return m_metrics; }
    const MachineState& state() const { return m_st; }
    /// Per-CPU, per-domain balancing state (sd->last_balance in jiffies, sd->balance_interval
    /// in ms, sd->nr_balance_failed) and rq->next_balance, for tests and the window.
    std::int64_t lastBalance(int cpu, int level) const;
    /// sd->max_newidle_lb_cost (ns) of a CPU's domain.
    std::int64_t maxNewidleLbCost(int cpu, int level) const;
    int balanceInterval(int cpu, int level) const;
    int nrBalanceFailed(int cpu, int level) const;
    std::int64_t nextBalance(int cpu) const;
    /// The load a CPU's cfs_rq has still to take off (cfs_rq->removed.load_avg: a task woken
    /// elsewhere or dead; remove_entity_load_avg()), for tests.
    std::int64_t removedLoad(int cpu) const;
    /// rq->nohz_tick_stopped: the CPU is in nohz.idle_cpus_mask.
    bool nohzIdle(int cpu) const;
    const std::vector<std::unique_ptr<Workload>>& workloads() const { return m_workloads; }
    /// Events so far, counting the planned steps of plans in flight that are behind the
    /// current event (coalescing adds them when a plan ends): the same count with and
    /// without coalescing at every point of a run, not only at its end.
    std::uint64_t events() const { return m_events + plannedInFlight(); }
    /// A digest of everything observable (for determinism checks).
    std::uint64_t digest() const;
    /// Per-CPU queue lengths right now (nr_running).
    unsigned nrRunning(int cpu) const { return m_st.rq[cpu].nr_running; }
    /// Runs the invariant checker now; returns the first violation or "".
    std::string checkInvariants() const;
    /// One line per task and CPU (debugging and --check failures).
    std::string dump() const;
    std::uint64_t invariantChecks() const { return m_invariantChecks; }
    /// Fraction of the run done (0..1; -1 unknown): the stop time or the slowest foreground workload.
    double progressFraction() const;

    // --- for the GUI ---------------------------------------------------------
    /// The task running on `cpu` (engine task id), -1 for the idle task.
    int currTask(int cpu) const;
    /// Idle-loop state of `cpu`: C-state index while idle (-1 when not in the idle loop) and when it went idle.
    int cstate(int cpu) const;
    std::int64_t idleSince(int cpu) const;
    /// New knobs from now on; CONFIG_HZ cannot change in a running machine (kept).
    void setKnobs(Knobs k);
    /// The next wakeup decision (try_to_wake_up or fork) is traced step by step; see lastTraced().
    void traceNextWakeup() { m_traceNext = true; }
    /// The last traced decision (with steps), or nullptr.
    const DecisionRecord* lastTraced() const { return m_lastTraced.pid ? &m_lastTraced : nullptr; }
    /// How many decisions became lastTraced() (a wakeup's once ttwu_queue() placed its task).
    std::uint64_t tracedCount() const { return m_tracedCount; }
    /// Called for every sleep timer armed on another CPU than its task's (time, pid, arming CPU,
    /// timer CPU): get_nohz_timer_target() moved it. The heatmap draws these as timer arrows.
    std::function<void(std::int64_t, int, int, int)> timer_sink;
    /// Called for every migration (time, pid, from, to, cause); cheaper than the full event stream.
    std::function<void(std::int64_t, int, int, int, MigrationCause)> migration_sink;
    /// Called at each wakeup decision, after its sched_waking event, with what the decision
    /// reads that no tracepoint shows (sched_event.h); the ftrace export writes it.
    std::function<void(const WakeInputs&)> wake_inputs_sink;

private:
    struct Cpu;
    static unsigned nrOnRq(const Cpu& c);
    static int selOf(const Cpu& c);
    // The order of events: time, then the time the event was created, then its type and
    // target (the tag), then creation order. Nothing in the key depends on how many other
    // events exist, so a run with fewer intermediate events (coalesced) orders
    // same-nanosecond events the same way. Only identical events (same time, creation
    // time, type and target) fall back to creation order, and those are interchangeable.
    using Ev = EventHeap::Entry;  ///< type, a and b decoded from the tag (event_heap.h)
    static std::uint64_t evTag(std::uint8_t type, std::int32_t a, std::uint32_t b) { return Ev::makeTag(type, a, b); }
    static bool evBefore(std::int64_t t1, std::int64_t c1, std::uint64_t g1, std::int64_t t2, std::int64_t c2, std::uint64_t g2) {
        if (t1 != t2) return t1 < t2;
        if (c1 != c2) return c1 < c2;
        return g1 < g2;
    }
    enum EvType : std::uint8_t { EvBurstEnd, EvResched, EvIpi, EvTick, EvTimer, EvSample, EvNohzKick, EvTimerIrq, EvTtwuQueue, EvTtwuActivate };
    static constexpr int kMaxPlan = 8;  ///< most steps a plan has (endPlan adapts each task's limit up to it)
    struct Plan {
        int task = -1;  ///< -1: none
        int speed = 1024;
        int n = 1;                                ///< T[0] segment start, T[j] boundary j (j < n), T[n] the real burst end
        int limit = 0;                            ///< most planned steps (the task's plan_limit)
        std::int64_t lastWork = -1, lastDur = 0;  ///< planRun's last division (a plan's steps mostly cost the same)
        std::array<std::int64_t, kMaxPlan + 2> T{};
        std::array<std::int64_t, kMaxPlan + 1> W{};  ///< W[j]: work of the segment that starts at T[j]
    };
    void cutPlanOnCpu(int cpu);
    int stepsBehindNow(int cpu) const;
    std::uint64_t plannedInFlight() const;
    void endPlan(int cpu, int done);
    void addPendingCharge(int cpu, std::int64_t ns);
    void setBurstAt(int cpu, std::int64_t t, std::int64_t ctime);
    void finishPlans();

    void update_curr(int cpu) override;
    void sync_entity_load_avg(Task& p) override;
    void push(std::int64_t t, EvType type, std::int32_t a, std::uint32_t b = 0);
    void pushAt(std::int64_t t, std::int64_t ctime, EvType type, std::int32_t a, std::uint32_t b = 0);
    void queueTick(int cpu);
    void dispatchEvent(const Ev& e);
    void setNow(std::int64_t t);
    void setBurst(int cpu, std::int64_t t);
    void clearBurst(int cpu);

    void startRunning(int cpu);
    void accountSegment(int cpu);
    void startSegment(int cpu);
    std::int64_t segmentEnd(int cpu);
    void reschedSpeed(int core_cpu);
    void setCurr(int cpu, int id);
    int smtSpeed(int cpu) const;
    void afterWork(int cpu);
    void schedule(int cpu);
    void enterIdle(int cpu);
    void leaveIdle(int cpu);
    void reschedCpu(int cpu, int from_cpu);
    std::int64_t kickDelay(int cpu, int from_cpu);
    void enqueueTask(int cpu, int id, bool wakeup, bool migrated);
    void dequeueTask(int cpu, int id, bool sleep);
    void queueInsert(int cpu, int id);
    void queueErase(int cpu, int id);
    void syncRq(int cpu);
    void updateMinVruntime(int cpu);
    // update_load_avg()'s flags (kernel/sched/fair.c).
    static constexpr unsigned UPDATE_TG = 0x1, DO_ATTACH = 0x4, DO_DETACH = 0x8;
    void updateLoadAvg(int cpu, SimTask* se, unsigned flags = UPDATE_TG);
    void update_tg_load_avg(int cpu);
    void update_cfs_group(int cpu);
    void chargeTg(int cpu, std::int64_t cost);
    void migrateTask(int id, int from, int to, MigrationCause cause, int on_cpu);
    void attachLoadAvg(Cpu& dst, SimTask& p);
    void detachLoadAvg(Cpu& src, SimTask& p);
    void postInitEntityUtilAvg(int cpu, SimTask& p);
    std::int64_t migrationCost(const SimTask& p, int from, int to) const;
    std::int64_t tgLineAccessCost(bool write);
    void onTick(int cpu);
    void onIpi(int cpu);
    void onTimer(int id, std::uint32_t gen);
    // hrtimers (engine_wakeup.cpp): arming a task's sleep timer, the CPU's timer interrupt.
    void armTimer(int id, int cpu, std::int64_t delay, std::int64_t slack, bool pinned);
    void cancelTimer(int id, int onCpu);
    void hrtimerInterrupt(int cpu, std::int64_t hardMax = std::numeric_limits<std::int64_t>::max());
    void runExpiredTimers(int cpu, std::int64_t hardMax);
    void onTickBody(int cpu);
    std::string timerStepText(int id, int fired_on) const;
    void onSample();
    void setBuddies(int cpu, int id, bool preempted, bool fork);
    int pickNextEntity(int cpu);
    void feedSteadyState();
    void doWake(int id, int waker_cpu, bool in_task, std::uint32_t wf, Task* waker);
    // A wakeup over time (engine_wakeup.cpp): ttwu_queue() after the select's time, the
    // activation under the target's rq lock, the decision recorded once the task is placed.
    void onTtwuQueue(int slot);
    void ttwuActivate(int slot);
    void finishFlight(int slot);
    Waker flightWaker(int cpu, bool in_task);
    /// CPU work done on `cpu` now by whatever runs there (its current work re-timed), or by the
    /// next task when it is idle (the pending charge).
    void chargeCpuNow(int cpu, std::int64_t ns);
    /// The waker's CPU time for the rest of a wakeup once ttwu_queue() chose its path.
    std::int64_t ttwuPathCost(int cpu, int waker_cpu, bool wakelist) const;
    void checkPreemptTick(int cpu);
    // Proxy execution (engine_proxy.cpp).
    int findProxyTask(int cpu, int next);
    void proxyMigrateTask(int cpu, int p, int target);
    bool proxyReturnMigration(int cpu, int next, int prev);
    void attachPreempt(int dst, int id, int from);
    void checkPreemptAttached(int dst, int id, int from);
    void ttwuRunnableStat(const SimTask& p);
    void ttwuRunnableDonor(int id);
    std::int64_t sched_slice(std::int64_t nr) const;

    // Load balancing.
    void rebalanceDomains(int cpu, IdleType idle);
    int loadBalance(int cpu, int level, IdleType idle, bool* continue_balancing);
    bool newidleBalance(int cpu);
    bool updateNewidleCost(Cpu& c, int level, std::int64_t cost);
    std::int64_t lbNewidleCost(int span_weight) const;
    std::int64_t sysctlMigrationCost() const;
    void nohzBalancerKick(int cpu, bool idle_balance);
    void kickIlb(int from_cpu, unsigned flags);
    void onNohzKick(int ilb);
    void nohzIdleBalance(int ilb, unsigned flags);
    void nohzNewidleBalance(int cpu);
    void nohzRunIdleBalance(int cpu);
    bool updateNohzStats(int cpu);
    void updateBlockedAverages(int cpu);
    void nohzBalanceEnterIdle(int cpu);
    void nohzBalanceExitIdle(int cpu);
    void onIdleTick(int cpu);
    bool idleStopsTick(int cpu) const;
    int detachAttachTasks(LbEnv& env, int level);
    bool canMigrateTask(int id, LbEnv& env, int level) const;
    /// rq->cfs_tasks: list_add at the head, list_del (the list is intrusive in SimTask).
    void cfsListAdd(int cpu, int id);
    void cfsListDel(int cpu, int id);
    void activeBalance(int busiest, int dst);
    MigrationCause causeOf(int this_cpu, IdleType idle) const;

    void recordStateChange(int cpu);
    /// A timer:hrtimer_* event (sched_event.h: the sleeper's pid as the timer, `time` expires or now).
    void emitHrtimer(EvKind kind, int cpu, int pid, std::int64_t time = 0, std::uint32_t slack = 0, std::uint8_t mode = 0);
    void emitEvent(EvKind kind, int cpu, int pid, int pid2 = 0, int target = -1, int orig = -1, char prev_state = 'R', std::uint8_t cause = 0,
                   std::uint32_t state = 0);
    void check(const char* where);
    void traced(int pid, const Decision& d);

    EngineConfig m_cfg;
    int m_nrCpus = 0;
    MachineState m_st;
    CfsTunables m_tun;
    Rng m_rng;
    TaskStore m_tasks;  // stable references: spawn() during a step must not move the stepping task
    std::vector<Cpu> m_cpus;
    std::vector<TaskComm> m_comm;   ///< task_struct::comm by task id (cold: only exports and messages read it)
    std::vector<Task> m_idleTasks;  ///< swapper/N as `current` for IRQ wakeups on idle CPUs
    EventHeap m_heap;
    // The CPUs' pending burst ends. A burst end's order key is (t, ctime, cpu): its time, then
    // its creation time (when its segment started), then the CPU (evBefore with EvBurstEnd's
    // tag); the queue holds (t, ctime << kCpuBits | cpu) (burst_queue.h).
    static constexpr int kCpuBits = 20;  ///< CPUs < 2^20; creation times < 2^44 ns (4.8 h)
    /// The pending burst end of `cpu` (kNever: none).
    std::int64_t burstT(int cpu) const { return m_bq.t(cpu); }
    BurstQueue m_bq;
    std::vector<std::uint32_t> m_sibOff;  ///< SMT siblings of cpu c: m_sibFlat[m_sibOff[c] .. m_sibOff[c+1])
    std::vector<int> m_sibFlat;
    std::vector<std::int32_t> m_currOf;  ///< per CPU: curr, densely (smtSpeed reads curr >= 0; the event loop prefetches the task)
    std::vector<int> m_coreOf;           ///< per CPU: its core (the lowest CPU of its SMT siblings)
    std::vector<int> m_coreBusy;         ///< per core: how many of its CPUs run a task
    int m_smtSlowSpeed = 1024;           ///< speed while a sibling runs (the cost model's smt term)
    std::int64_t m_jiffyNs = 1;          ///< CONFIG_HZ's jiffy (fixed for a run)
    std::int64_t m_jiffies0 = 0;         ///< jiffies at t = 0 (the machine's uptime)
    std::int64_t m_nextJiffyAt = 0;      ///< setNow: the jiffy count changes at this time
    std::uint64_t m_seq = 0;
    std::int64_t m_now = 0;
    std::uint64_t m_events = 0;
    std::vector<std::unique_ptr<Workload>> m_workloads;
    Metrics m_metrics;
    int m_stepping = -1;
    int m_stepCpu = -1;
    bool m_done = false;
    bool m_checkDone = false;
    bool m_started = false;
    // struct nohz (fair.c): jiffies, counts and flags shared by every CPU.
    enum NohzFlag : unsigned { NOHZ_BALANCE_KICK = 0x1, NOHZ_STATS_KICK = 0x2, NOHZ_NEWILB_KICK = 0x4, NOHZ_NEXT_KICK = 0x8 };
    static constexpr unsigned NOHZ_KICK_MASK = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;
    std::int64_t m_nohzNextBalance = 0;  ///< nohz.next_balance (jiffies)
    std::int64_t m_nohzNextBlocked = 0;  ///< nohz.next_blocked (jiffies)
    bool m_nohzHasBlocked = false;       ///< nohz.has_blocked
    bool m_nohzNeedsUpdate = false;      ///< nohz.needs_update
    int m_nohzNrCpus = 0;                ///< nohz.nr_cpus
    bool m_inNohz = false;
    int m_balancingOn = -1;  ///< the CPU running a nohz idle balance for others
    int m_tgPayer = -1;      ///< while balancing detaches a task: the CPU doing it pays the tg line, not the source
    int m_tracePid = -1;
    bool m_traceNext = false;
    DecisionRecord m_lastTraced;
    std::uint64_t m_tracedCount = 0;
    /// A wakeup in flight (sched_waking done, its task not yet placed by ttwu_queue()): a slot
    /// of m_flights (reused, its decision's storage with it) that the wakeup's events carry.
    struct Flight {
        Decision d;                 ///< select_task_rq()'s decision, recorded once the task is placed
        std::int64_t t0 = 0;        ///< sched_waking: select_task_rq() read the machine then
        std::int64_t t1 = -1;       ///< direct path: the activation (the rq lock taken at t0's reservation, then held); -1 none
        std::int64_t lock_was = 0;  ///< the target's lock_free_at before that reservation
        std::int32_t task = -1;     ///< the wakee (task id); -1: the slot is free
        std::int32_t cpu = -1;      ///< the chosen CPU
        std::int32_t waker = -1;    ///< the waker's CPU
        std::int32_t from = -1;     ///< task_cpu() before set_task_cpu()
        std::int32_t charged = 0;   ///< the waker's CPU time charged at t0 for the path predicted then
        std::uint32_t wf = 0;       ///< wake flags (WF_MIGRATED added when it moved)
        bool in_task = true;
        bool traced = false;
        bool keep = false;   ///< traceNextWakeup() asked for it: lastTraced() once placed
        bool unseen = true;  ///< not yet visible on `cpu` (ttwu_pending or nr_running)
        bool predicted_wakelist = false;
    };
    std::vector<Flight> m_flights;
    std::vector<int> m_flightFree;
    std::vector<int> m_ipiList;  ///< onIpi: the wakelist being run
    bool m_coalesce = false;
    bool m_coalesceAllowed = false;  ///< m_coalesce as configured
    bool m_coalesceWanted = true;    ///< setCoalescing()'s last word (the window's Step event turns it off)
    // The governor (governCoalescing()): coalescing is exact either way, so whether it runs is a
    // matter of speed only. Every kGovWindow real events it compares the planned steps with the
    // real events; below kGovPayPct planned, planning costs more than the events it saves, and
    // coalescing stays off for a pause of windows, then is measured again. The pause doubles
    // while it keeps not paying (from 2 windows to kGovMaxPause: a start-up's few plans cost
    // little) and starts again at 2 once it pays.
    static constexpr std::uint32_t kGovWindow = 1u << 15;
    static constexpr std::uint64_t kGovPayPct = 45;
    static constexpr int kGovMaxPause = 32;
    bool m_govOn = false;             ///< a run that coalesces (SCHEDLAB_COALESCE_GOVERNOR=0: never paused)
    std::uint32_t m_govEvents = 0;    ///< real events in the current window
    int m_govOff = 0;                 ///< windows left with coalescing paused
    int m_govPause = 2;               ///< the next pause's length
    std::uint64_t m_govPlanned0 = 0;  ///< m_plannedSteps when the window began
    std::uint64_t m_govPausedWindows = 0;
    void applyCoalescing();
    void governCoalescing();
    std::vector<Plan> m_plans;  ///< per CPU: the running task's plan
    int m_planning = -1;        ///< CPU whose plan Workload::plan() is building
    EventKey m_cur;
    std::uint64_t m_plannedSteps = 0, m_plansCut = 0, m_plansMade = 0;
    static constexpr std::size_t kTgRecent = 64;       ///< a power of two: the ring's index is a mask
    std::array<std::int64_t, kTgRecent> m_tgRecent{};  ///< ring of recent tg->load_avg update times
    std::size_t m_tgPos = 0;
    std::size_t m_tgInWindow = 0;  ///< the newest of them inside tg_update_window
    std::uint64_t m_invariantChecks = 0;
    std::vector<std::uint16_t> m_rowBuf;
    std::vector<int> m_llcShared;  ///< MachineState::shared's index of each LLC (the steady state's nr_idle_scan samples)
    std::vector<int> m_tmp2;
    // Proxy execution: per task blocked_on / blocked_on_waking / blocked_donor (outside
    // SimTask, which has no room; empty when the knob is off).
    struct BlockedOn {
        KMutex* on = nullptr;
        std::int32_t donor = -1;
        bool waking = false;
    };
    bool m_proxyOn = false;
    std::vector<BlockedOn> m_blocked;
    // hrtimers: each task's sleep timer (by task id), the sleep timers armed on each CPU's base
    // (task ids by (expires, id): __hrtimer_run_queues' order).
    std::vector<TimerInfo> m_hrt;
    std::vector<std::vector<int>> m_cpuTimers;
    std::vector<int> m_expiredBuf;
    std::size_t m_armedTimers = 0;  ///< sleep timers armed now (wake() reads a task's timer only when some are)
    int m_timerWaking = -1;         ///< runExpiredTimers(): the task whose timer doWake() is running (its traced decision says where the timer was)
    std::int64_t m_latencyQos = std::numeric_limits<std::int64_t>::max();
    bool m_proxyBlocking = false;  ///< schedule() is switching out a task that blocked on a mutex and stays queued
};

}  // namespace sched
