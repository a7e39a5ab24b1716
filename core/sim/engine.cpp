// SPDX-License-Identifier: GPL-2.0-or-later
// engine.cpp: the discrete-event simulation (see engine.h).
//
// Kernel correspondences are named at each function. Where the engine
// simplifies something the kernel does, the comment says so; those
// simplifications never change a wakeup decision's inputs beyond what is noted.
#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace sched {

namespace {
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

std::uint64_t fnv(std::uint64_t h, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}
}  // namespace

struct Engine::Cpu {
    int curr = -1;                 ///< running task, -1 = the idle task
    std::vector<int> queue;        ///< queued (not running) tasks, ascending vruntime (the rb-tree)
    std::vector<int> wakelist;     ///< rq->wake_list (llist), in arrival order
    std::int64_t seg_start = 0;
    int speed = 1024;
    bool need_resched = false;
    bool resched_pending = false;  ///< an EvResched is queued
    bool ipi_pending = false;      ///< an EvIpi is queued
    bool in_idle = true;           ///< in the idle loop (C-state)
    std::int64_t exec_start = 0;
    int cstate = 0;
    std::int64_t idle_since = 0;
    std::int64_t predicted_idle = 0;  ///< governor's prediction (EWMA of idle lengths)
    std::int64_t lock_free_at = 0;    ///< rq lock contention model
    std::int64_t pending_charge = 0;  ///< CPU cost to pay by whatever runs next here (IRQ work)
    int last_mm = -1;
    SchedAvg avg;                     ///< cfs_rq->avg (root)
    std::int64_t removed_load = 0, removed_util = 0, removed_runnable = 0;
    std::int64_t tg_contrib = 0;      ///< cfs_rq->tg_load_avg_contrib
    std::int64_t last_tg_update = std::numeric_limits<std::int64_t>::min() / 2;
    std::int64_t util_est = 0;        ///< cfs_rq->avg.util_est.enqueued
    std::int64_t tick_next = -1;      ///< next tick time, -1 = tick stopped (nohz idle)
    std::int64_t tick_queued = -1;    ///< time of the EvTick in the queue, -1 none (one per CPU at most)
    std::int64_t next_balance = 0;    ///< rq->next_balance (jiffies)
    std::vector<std::int64_t> last_balance;   ///< per domain (jiffies)
    std::vector<int> balance_interval;        ///< per domain (ms)
    std::vector<int> nr_balance_failed;       ///< per domain
    std::vector<NewidleStats> ni;             ///< per domain (NI_RANDOM)
    std::vector<std::int64_t> max_newidle_lb_cost;  ///< per domain (ns): the largest newidle load_balance() cost, decayed
    std::vector<std::int64_t> last_decay_max_lb_cost;  ///< per domain (jiffies)
    int llc = 0;                      ///< dense LLC index
    int switch_from = -1;             ///< task that just slept/exited here (sched_switch prev)
    char switch_state = 'S';
    int cfs_head = -1, cfs_tail = -1;  ///< rq->cfs_tasks: the most recently enqueued or picked first (task ids)
    bool active_balance = false;      ///< rq->active_balance (the stopper's work is queued)
    bool nohz_tick_stopped = true;    ///< rq->nohz_tick_stopped: in nohz.idle_cpus_mask (sd_llc->nohz_idle)
    bool has_blocked_load = false;    ///< rq->has_blocked_load
    std::int64_t last_blocked_load_update_tick = 0;  ///< rq->last_blocked_load_update_tick (jiffies)
    unsigned nohz_flags = 0;          ///< nohz_flags(cpu): NOHZ_*_KICK pending on this CPU
    std::int64_t idle_tick_from = 0;  ///< start of the idle interval the governor last measured
    int next_buddy = -1;              ///< cfs_rq->next (a task id), -1 none
    int last_buddy = -1;              ///< cfs_rq->last
};

// ---------------------------------------------------------------------------
// Construction

Engine::Engine(EngineConfig cfg)
    : m_cfg(std::move(cfg)), m_nrCpus(m_cfg.topo->nrCpus()), m_st(m_cfg.topo), m_tun(CfsTunables::forCpus(m_nrCpus)),
      m_rng(m_cfg.seed),
      m_metrics(m_nrCpus, m_cfg.topo->nrLlcs(), m_cfg.sample_period_ns, m_cfg.timeline_rows, m_cfg.decision_ring) {
    m_st.hook = this;
    m_coalesce = m_cfg.coalesce && m_cfg.max_events == 0;
    m_coalesceAllowed = m_coalesce;
    m_plans.resize(std::size_t(m_nrCpus));
    m_metrics.event_ring_cap = m_cfg.event_ring;
    m_st.now_ns = 0;
    m_st.jiffies = 0;
    m_cpus.resize(std::size_t(m_nrCpus));
    m_idleTasks.resize(std::size_t(m_nrCpus));
    // Dense LLC numbering.
    std::vector<int> llcIds;
    for (int c = 0; c < m_nrCpus; ++c) {
        Cpu& cpu = m_cpus[c];
        const int id = m_cfg.topo->cpu(c).llc;
        auto it = std::find(llcIds.begin(), llcIds.end(), id);
        if (it == llcIds.end()) {
            llcIds.push_back(id);
            it = llcIds.end() - 1;
        }
        cpu.llc = int(it - llcIds.begin());
        const auto& doms = m_st.sd->domains(c);
        cpu.last_balance.assign(doms.size(), 0);
        cpu.nr_balance_failed.assign(doms.size(), 0);
        cpu.ni.assign(doms.size(), NewidleStats{});
        for (const auto& d : doms) {
            cpu.balance_interval.push_back(d.balance_interval);
            // sd_init() starts max_newidle_lb_cost at 0; a machine that has been up for a
            // while has learned it: the cost of one newidle load_balance() of the domain
            // (the cost model's load_balance term; update_newidle_cost() keeps it from there).
            cpu.max_newidle_lb_cost.push_back(lbNewidleCost(d.span_weight));
        }
        Task& idle = m_idleTasks[c];
        idle.pid = 0;
        idle.kthread = true;
        idle.setAffinity(CpuMask::single(c));
        idle.cpu = c;
        m_st.rq[c].exit_latency_ns = 0;
    }
    m_metrics.llc_idle.assign(llcIds.size(), 0);
    m_metrics.llc_over.assign(llcIds.size(), 0);
    m_metrics.llc_last.assign(llcIds.size(), 0);
    m_metrics.idle_while_overloaded_ns.assign(llcIds.size(), 0);
    for (int c = 0; c < m_nrCpus; ++c) m_metrics.llc_idle[m_cpus[c].llc]++;
    m_tgRecent.fill(std::numeric_limits<std::int64_t>::min() / 2);
    if (m_cfg.cost.cstates.empty()) m_cfg.cost.cstates = {{"POLL", 0, 0}};
    m_rowBuf.resize(std::size_t(m_nrCpus));
    for (int c = 0; c < m_nrCpus; ++c)
        if (m_st.sd->sd_llc_shared(c) == c) m_llcShared.push_back(c);  // an LLC's id is its span's first CPU
    if (m_nrCpus >= (1 << kCpuBits)) throw std::logic_error(fmt::format("{} CPUs: past the order key's range", m_nrCpus));
    m_bq.reset(m_nrCpus);
    // SMT siblings as one flat list (smtSpeed runs on every segment), and whether each CPU
    // runs a task (Cpu::curr >= 0) in a dense array the sibling check reads.
    m_sibOff.assign(1, 0);
    for (int c = 0; c < m_nrCpus; ++c) {
        m_st.sd->smtMask(c).forEach([&](int o) {
            if (o != c) m_sibFlat.push_back(o);
        });
        m_sibOff.push_back(std::uint32_t(m_sibFlat.size()));
    }
    m_currOf.assign(std::size_t(m_nrCpus), -1);
    m_coreOf.assign(std::size_t(m_nrCpus), 0);
    for (int c = 0; c < m_nrCpus; ++c) {
        int core = c;
        for (std::uint32_t i = m_sibOff[std::size_t(c)]; i < m_sibOff[std::size_t(c) + 1]; ++i) core = std::min(core, m_sibFlat[i]);
        m_coreOf[std::size_t(c)] = core;
    }
    m_coreBusy.assign(std::size_t(m_nrCpus), 0);
    if (const double s = m_cfg.cost.s(CostTerm::smt); s != 0.0) {
        const double slow = double(1024 - m_cfg.cost.smt_busy_speed) * s;
        m_smtSlowSpeed = std::max(1, int(1024 - slow + 0.5));
    }
    m_jiffyNs = m_cfg.knobs.jiffyNs();
    if (m_cfg.uptime_ns < 0) throw std::invalid_argument("uptime_ns is negative");
    m_jiffies0 = m_cfg.uptime_ns / m_jiffyNs;
    m_nohzNrCpus = m_nrCpus;  // an idle machine: every CPU in nohz.idle_cpus_mask, nr_busy_cpus 0
    for (int c = 0; c < m_nrCpus; ++c)
        if (SdShared* sh = m_st.llcShared(c)) sh->nr_busy_cpus = 0;
    m_st.seedIdleMachineHints();  // has_idle_cores with SMT (the replay starts a trace the same way)
    m_st.jiffies = m_jiffies0;
    for (auto& c : m_cpus) c.last_decay_max_lb_cost.assign(c.max_newidle_lb_cost.size(), m_jiffies0);
    for (int c = 0; c < m_nrCpus; ++c) m_st.rq[c].max_idle_balance_cost = sysctlMigrationCost();  // sched_init()
    if (const char* t = std::getenv("SCHEDLAB_TRACE_PID")) m_tracePid = std::atoi(t);  // debugging: print one task's decisions
}

Engine::~Engine() = default;

void Engine::addWorkload(std::unique_ptr<Workload> w) { m_workloads.push_back(std::move(w)); }

// ---------------------------------------------------------------------------
// Event loop

void Engine::push(std::int64_t t, EvType type, std::int32_t a, std::uint32_t b) { pushAt(t, m_now, type, a, b); }
void Engine::pushAt(std::int64_t t, std::int64_t ctime, EvType type, std::int32_t a, std::uint32_t b) {
    if (a < 0 || a >= (1 << 24)) throw std::logic_error(fmt::format("event target {} out of the order key's range", a));
    m_heap.push(Ev{t, ctime, evTag(std::uint8_t(type), a, b), m_seq++});
}

void Engine::setBurst(int cpu, std::int64_t t) { setBurstAt(cpu, t, m_now); }
void Engine::setBurstAt(int cpu, std::int64_t t, std::int64_t ctime) {
    if (std::uint64_t(ctime) >> (64 - kCpuBits))
        throw std::logic_error(fmt::format("burst created at {} ns: past the order key's range", ctime));
    m_bq.set(cpu, t, std::uint64_t(ctime) << kCpuBits | std::uint64_t(cpu), m_now);
}
void Engine::clearBurst(int cpu) {
    m_bq.clear(cpu);
}

// ---------------------------------------------------------------------------
// Coalescing (engine.h)

// The plan on `cpu` ends with `done` of its virtual boundaries behind it.
void Engine::endPlan(int cpu, int done) {
    Plan& pl = m_plans[std::size_t(cpu)];
    const int id = pl.task;
    pl.task = -1;
    m_events += std::uint64_t(done);
    m_plannedSteps += std::uint64_t(done);
    SimTask& p = m_tasks[id];
    // The next plan's length: twice this one when it ran to its end, else twice what it got
    // to (planning steps that are cut costs more than it saves), at most kMaxPlan steps.
    // Measured on the seed hackbench (384 CPUs): with up to 4096, 60 % of the planned steps
    // were cut before they happened and a coalesced run took 2.2x the time of one without.
    // Instructions of tests/bench/steady_window --coalesce (stop 32): 4 -> 3.738 G, 6 -> 3.663 G,
    // 8 -> 3.631 G, 16 -> 3.716 G, 32 -> 3.900 G.
    const bool whole = done + 1 == pl.n;
    p.plan_limit = std::uint16_t(std::clamp<int>(whole ? 2 * int(p.plan_limit) : 2 * done, 2, kMaxPlan));
    m_workloads[p.workload]->planEnded(*this, p, done);
}

// The planned boundaries of the plan on `cpu` that are behind the current event (happened).
int Engine::stepsBehindNow(int cpu) const {
    const Plan& pl = m_plans[std::size_t(cpu)];
    int j = 1;
    while (j < pl.n && keyBeforeNow(PlanKey{pl.T[std::size_t(j)], pl.T[std::size_t(j - 1)], cpu})) ++j;
    return j - 1;
}

// Back to real events: the segment in progress at the current event, as the steps would
// have left it (work_left, seg_start), ends at its own boundary.
void Engine::cutPlanOnCpu(int cpu) {
    Plan& pl = m_plans[std::size_t(cpu)];
    if (pl.task < 0) return;
    const int done = stepsBehindNow(cpu);
    SimTask& p = m_tasks[pl.task];
    Cpu& c = m_cpus[cpu];
    p.work_left = pl.W[std::size_t(done)];
    c.seg_start = pl.T[std::size_t(done)];
    if (done + 1 < pl.n) setBurstAt(cpu, pl.T[std::size_t(done + 1)], pl.T[std::size_t(done)]);
    m_plansCut++;
    endPlan(cpu, done);
}

std::uint64_t Engine::plannedInFlight() const {
    if (!m_coalesce) return 0;
    std::uint64_t n = 0;
    for (int cpu = 0; cpu < m_nrCpus; ++cpu)
        if (m_plans[std::size_t(cpu)].task >= 0) n += std::uint64_t(stepsBehindNow(cpu));
    return n;
}

int Engine::plannedStepsBehindNow(int id) const {
    const SimTask& p = m_tasks[std::size_t(id)];
    if (!m_coalesce || p.state != TaskState::Running || m_plans[std::size_t(p.t.cpu)].task != id) return 0;
    return stepsBehindNow(p.t.cpu);
}

void Engine::cutPlan(int id) {
    const SimTask& p = m_tasks[std::size_t(id)];
    if (p.state != TaskState::Running) return;
    if (m_plans[std::size_t(p.t.cpu)].task == id) cutPlanOnCpu(p.t.cpu);
}

void Engine::addPendingCharge(int cpu, std::int64_t ns) {
    cutPlanOnCpu(cpu);  // the next boundary's segment starts with it
    m_cpus[cpu].pending_charge += ns;
}

void Engine::setCoalescing(bool on) {
    if (on == m_coalesce) return;
    if (!on) finishPlans();
    m_coalesce = on && m_coalesceAllowed;
}

// The run is over: every plan ends at the last event (its boundaries up to it happened).
void Engine::finishPlans() {
    for (int c = 0; c < m_nrCpus; ++c) cutPlanOnCpu(c);
}

void Engine::traced(int pid, const Decision& d) {
    if (m_tracePid == pid)
        for (const auto& st : d.steps) std::fprintf(stderr, "[%s] %s\n", toString(st.fn), st.text.c_str());
    if (m_traceNext) {
        m_traceNext = false;
        m_lastTraced = DecisionRecord{m_now, pid, d};
    }
}

int Engine::currTask(int cpu) const { return m_cpus[std::size_t(cpu)].curr; }
int Engine::cstate(int cpu) const {
    const Cpu& c = m_cpus[std::size_t(cpu)];
    return c.in_idle && c.curr < 0 ? c.cstate : -1;
}
std::int64_t Engine::idleSince(int cpu) const {
    const Cpu& c = m_cpus[std::size_t(cpu)];
    return c.curr < 0 ? c.idle_since : -1;
}
std::int64_t Engine::lastBalance(int cpu, int level) const { return m_cpus[std::size_t(cpu)].last_balance[std::size_t(level)]; }
std::int64_t Engine::maxNewidleLbCost(int cpu, int level) const {
    return m_cpus[std::size_t(cpu)].max_newidle_lb_cost[std::size_t(level)];
}
int Engine::balanceInterval(int cpu, int level) const { return m_cpus[std::size_t(cpu)].balance_interval[std::size_t(level)]; }
int Engine::nrBalanceFailed(int cpu, int level) const { return m_cpus[std::size_t(cpu)].nr_balance_failed[std::size_t(level)]; }
std::int64_t Engine::nextBalance(int cpu) const { return m_cpus[std::size_t(cpu)].next_balance; }
std::int64_t Engine::removedLoad(int cpu) const { return m_cpus[std::size_t(cpu)].removed_load; }
bool Engine::nohzIdle(int cpu) const { return m_cpus[std::size_t(cpu)].nohz_tick_stopped; }

void Engine::setKnobs(Knobs k) {
    k.hz = m_cfg.knobs.hz;  // the tick's period is built into queued events
    m_cfg.knobs = std::move(k);
}

void Engine::setNow(std::int64_t t) {
    m_now = t;
    m_st.now_ns = t;
    if (t >= m_nextJiffyAt) {  // a division only when the jiffy changes (time never goes back)
        const std::int64_t j = t / m_jiffyNs;
        m_st.jiffies = m_jiffies0 + j;
        m_nextJiffyAt = (j + 1) * m_jiffyNs;
    }
}

bool Engine::advance(std::int64_t ns, std::uint64_t max_events) {
    std::uint64_t ran = 0;
    if (!m_started) {
        m_started = true;
        for (std::size_t i = 0; i < m_workloads.size(); ++i) m_workloads[i]->start(*this);
        push(m_cfg.sample_period_ns, EvSample, 0);
    }
    const std::int64_t until = ns == kNever ? kNever : m_now + ns;
    while (!m_done && (!m_heap.empty() || m_bq.size() > 0)) {
        // The next event: the earliest CPU burst end (burst_queue.h) or the heap's top, by the order key (engine.h).
        const BurstQueue::Top top = m_bq.top(m_now);  // t kNever when no CPU has a burst
        const int bc = top.cpu;
        const std::int64_t bt = top.t;
        const std::uint64_t blo = top.lo;
        const std::int64_t bctime = std::int64_t(blo >> kCpuBits);
        const bool burstFirst =
            bt != kNever && (m_heap.empty() || evBefore(bt, bctime, evTag(EvBurstEnd, bc, 0), m_heap.top().t,
                                                        m_heap.top().ctime, m_heap.top().tag));
        if (burstFirst) {
            // Its CPU's and task's records are the event's first loads: fetch both at once.
            __builtin_prefetch(&m_cpus[std::size_t(bc)]);
            if (const int id = m_currOf[std::size_t(bc)]; id >= 0) __builtin_prefetch(&m_tasks[std::size_t(id)]);
        }
        const std::int64_t nextT = burstFirst ? bt : m_heap.top().t;
        if (nextT > until) {
            setNow(until);
            m_cur = EventKey{until, kNever, ~std::uint64_t(0)};
            return true;
        }
        if (ran++ == max_events) return true;
        Ev e;
        if (burstFirst) {
            // The burst stays in the queue until dispatch is done: most burst ends start the next
            // burst on the same CPU, and one move (setBurst) then replaces a removal and an insertion.
            e = Ev{bt, bctime, evTag(EvBurstEnd, bc, 0), 0};
        } else {
            e = m_heap.pop();
        }
        if (e.t < m_now) throw std::logic_error(fmt::format("time went back: event at {} < now {}", e.t, m_now));
        if (m_cfg.stop_ns > 0 && e.t > m_cfg.stop_ns) {
            setNow(m_cfg.stop_ns);
            m_cur = EventKey{m_cfg.stop_ns, kNever, ~std::uint64_t(0)};
            m_done = true;
            break;
        }
        setNow(e.t);
        m_events++;
        m_cur = EventKey{e.t, e.ctime, e.tag};
        dispatchEvent(e);
        if (burstFirst) {
            if (burstT(bc) == bt && m_bq.lo(bc) == blo) clearBurst(bc);  // no new burst was started
        }
        if (m_cfg.check_invariants) check("event");
        if (m_checkDone) {
            m_checkDone = false;
            bool all = true;
            for (const auto& w : m_workloads)
                if (!w->background() && !w->finished()) all = false;
            if (all) m_done = true;
        }
        if (m_cfg.max_events > 0 && m_events >= std::uint64_t(m_cfg.max_events)) m_done = true;
    }
    if (m_heap.empty() && m_bq.size() == 0) {
        m_done = true;
        m_cur = EventKey{kNever, kNever, ~std::uint64_t(0)};
    }
    if (m_done) {
        finishPlans();
        // Close the integrals at the end time.
        for (int c = 0; c < m_nrCpus; ++c) recordStateChange(c);
        for (std::size_t l = 0; l < m_metrics.llc_idle.size(); ++l) {
            if (m_metrics.llc_idle[l] > 0 && m_metrics.llc_over[l] > 0)
                m_metrics.idle_while_overloaded_ns[l] += m_now - m_metrics.llc_last[l];
            m_metrics.llc_last[l] = m_now;
        }
        for (int c = 0; c < m_nrCpus; ++c) {
            auto& mc = m_metrics;
            const std::int64_t dt = m_now - mc.last_change[c];
            mc.rqlen_area[c] += std::int64_t(mc.cur_len[c]) * dt;
            mc.busy_ns[c] += mc.cur_busy[c] ? dt : 0;
            mc.last_change[c] = m_now;
        }
        m_metrics.end_time = m_now;
    }
    return !m_done;
}

void Engine::run(const std::function<void(std::int64_t)>& progress) {
    if (!progress) {
        advance(kNever);
        return;
    }
    const std::int64_t step = 10000000;  // report every 10 ms of simulated time
    while (advance(step)) progress(m_now);
    progress(m_now);
}

void Engine::dispatchEvent(const Ev& e) {
    const int a = e.a();  // a CPU, or a task for timers
    switch (EvType(e.type())) {
    case EvBurstEnd: {
        Cpu& c = m_cpus[a];
        if (m_coalesce && m_plans[std::size_t(a)].task >= 0) endPlan(a, m_plans[std::size_t(a)].n - 1);
        if (c.curr < 0) return;
        m_tasks[c.curr].work_left = 0;
        c.seg_start = m_now;
        afterWork(a);
        return;
    }
    case EvResched: {
        Cpu& c = m_cpus[a];
        c.resched_pending = false;
        if (c.curr >= 0) {
            if (c.need_resched) schedule(a);
        } else if (!c.queue.empty()) {
            schedule(a);
        }
        return;
    }
    case EvIpi: onIpi(a); return;
    case EvTick: onTick(a); return;
    case EvTimer: onTimer(a, e.b()); return;
    case EvSample: onSample(); return;
    case EvNohzKick: onNohzKick(a); return;
    }
}

void Engine::emitEvent(EvKind kind, int cpu, int pid, int pid2, int target, int orig, char prev_state, std::uint8_t cause,
                  std::uint32_t state) {
    if (!m_metrics.wantEvents()) return;
    SchedEvent e;
    e.time = m_now;
    e.kind = kind;
    e.cpu = std::int16_t(cpu);
    e.pid = pid;
    e.pid2 = pid2;
    e.target_cpu = std::int16_t(target);
    e.orig_cpu = std::int16_t(orig);
    e.prev_state = prev_state;
    e.cause = cause;
    e.state = state;
    m_metrics.recordEvent(e);
}

// ---------------------------------------------------------------------------
// Running tasks: segments of work at the CPU's current speed

void Engine::setCurr(int cpu, int id) {
    m_cpus[cpu].curr = id;
    std::int32_t& was = m_currOf[std::size_t(cpu)];
    m_coreBusy[std::size_t(m_coreOf[std::size_t(cpu)])] += int(id >= 0) - int(was >= 0);
    was = id;
}

// The speed of `cpu` (of 1024): slowed while an SMT sibling runs a task (the cost model's
// smt term); the count of busy CPUs per core makes it O(1).
int Engine::smtSpeed(int cpu) const {
    if (m_smtSlowSpeed == 1024) return 1024;
    const bool siblingBusy = m_coreBusy[std::size_t(m_coreOf[std::size_t(cpu)])] - int(m_currOf[std::size_t(cpu)] >= 0) > 0;
    return siblingBusy ? m_smtSlowSpeed : 1024;
}

void Engine::accountSegment(int cpu) {
    cutPlanOnCpu(cpu);
    Cpu& c = m_cpus[cpu];
    if (c.curr < 0) return;
    SimTask& p = m_tasks[c.curr];
    const std::int64_t done = (m_now - c.seg_start) * c.speed / 1024;
    p.work_left = std::max<std::int64_t>(0, p.work_left - done);
    c.seg_start = m_now;
}

void Engine::startSegment(int cpu) { setBurst(cpu, segmentEnd(cpu)); }

// The segment of curr's work that starts now (its pending charge added): where it ends.
std::int64_t Engine::segmentEnd(int cpu) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[c.curr];
    p.work_left += c.pending_charge;
    c.pending_charge = 0;
    c.seg_start = m_now;
    c.speed = smtSpeed(cpu);
    // ceil(work * 1024 / speed): at full speed that is the work itself (no division).
    const std::int64_t dur = c.speed == 1024 ? p.work_left : (p.work_left * 1024 + c.speed - 1) / c.speed;
    return m_now + dur;
}

// A CPU changed between busy and idle: its SMT siblings' speeds change.
void Engine::reschedSpeed(int cpu) {
    if (m_smtSlowSpeed == 1024 || !m_st.sd->smtActive()) return;
    for (std::uint32_t i = m_sibOff[std::size_t(cpu)]; i < m_sibOff[std::size_t(cpu) + 1]; ++i) {
        const int o = m_sibFlat[i];
        // An idle sibling is skipped on the dense curr array (setCurr keeps it equal to
        // Cpu::curr): its Cpu record, a cache line away, is not touched.
        if (m_currOf[std::size_t(o)] < 0 || o == m_stepCpu) continue;
        const int sp = smtSpeed(o);
        if (sp == m_cpus[o].speed) continue;
        accountSegment(o);
        startSegment(o);
    }
}

void Engine::charge(std::int64_t ns) {
    if (m_stepping >= 0) m_tasks[m_stepping].work_left += ns;
}

// The task's work is done: apply a pending block/sleep/exit, or ask its workload.
void Engine::afterWork(int cpu) {
    Cpu& c = m_cpus[cpu];
    const int id = c.curr;
    SimTask& p = m_tasks[id];
    for (int guard = 0; guard < 1000; ++guard) {
        if (p.pending != Action::Run) {
            const Action::Kind k = p.pending;
            p.pending = Action::Run;
            if (k == Action::Block && p.wake_pending) {  // woken before it slept (ttwu_runnable)
                p.wake_pending = false;
            } else {
                p.wake_pending = false;
                if (k == Action::Sleep) {
                    p.timer_gen++;
                    push(m_now + p.pending_ns, EvTimer, id, p.timer_gen);
                }
                if (k == Action::Exit) {  // do_exit(): wake a joiner (CLONE_CHILD_CLEARTID futex) from this task
                    // The first worker to leave ends the job's steady state (its wind-down is not measured).
                    if (!m_workloads[p.workload]->background()) m_metrics.steady.windDown(m_now);
                    m_stepping = id;
                    m_stepCpu = cpu;
                    m_workloads[p.workload]->onExit(*this, p);
                    m_stepping = -1;
                    m_stepCpu = -1;
                    emitEvent(EvKind::sched_process_exit, cpu, p.t.pid);
                }
                c.switch_from = id;
                c.switch_state = k == Action::Exit ? 'X' : 'S';
                dequeueTask(cpu, id, true);  // update_curr() first, as dequeue_entity does
                p.state = k == Action::Exit ? TaskState::Exited : TaskState::Blocked;
                if (k == Action::Exit) {
                    // task_dead_fair(): remove_entity_load_avg() takes the dead task's averages,
                    // synced to the cfs_rq's clock, off its CPU.
                    SchedAvg a = p.t.avg;
                    pelt_update(c.avg.last_update_time, a, 0, 0, 0);
                    c.removed_load += std::int64_t(a.load_avg);
                    c.removed_util += std::int64_t(a.util_avg);
                    c.removed_runnable += std::int64_t(a.runnable_avg);
                }
                schedule(cpu);
                return;
            }
        }
        m_stepping = id;
        m_stepCpu = cpu;
        Action a = m_workloads[p.workload]->step(*this, p);
        m_stepping = -1;
        m_stepCpu = -1;
        if (a.kind == Action::Run) {
            p.work_left += a.ns;
        } else {
            p.pending = a.kind;
            p.pending_ns = a.ns;
        }
        if (c.need_resched) {  // preemption point: return to user space
            schedule(cpu);
            return;
        }
        if (p.work_left > 0) {
            if (!m_coalesce) {
                startSegment(cpu);
                return;
            }
            // Coalescing: the workload may plan the steps after this one (engine.h). The
            // burst is set once, to the plan's end (the workload's plan() reads no burst).
            const std::int64_t end = segmentEnd(cpu);
            Plan& pl = m_plans[std::size_t(cpu)];
            pl.task = id;
            pl.speed = c.speed;
            pl.n = 1;
            pl.limit = std::min<int>(p.plan_limit, kMaxPlan);
            pl.lastWork = -1;
            pl.T[0] = m_now;
            pl.T[1] = end;
            pl.W[0] = p.work_left;
            m_planning = cpu;
            m_workloads[p.workload]->plan(*this, p);
            m_planning = -1;
            if (pl.n > 1) {
                setBurstAt(cpu, pl.T[std::size_t(pl.n)], pl.T[std::size_t(pl.n - 1)]);
                m_plansMade++;
            } else {
                pl.task = -1;
                setBurst(cpu, end);
            }
            return;
        }
    }
    throw std::logic_error(fmt::format("task {} ({}) makes no progress", p.t.pid, taskComm(p.t.pid)));
}

// ---------------------------------------------------------------------------
// CFS runqueue

void Engine::queueInsert(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    const std::int64_t v = m_tasks[id].t.vruntime;
    // After equal keys: __enqueue_entity goes right on ties (entity_before is strict).
    auto it = std::upper_bound(c.queue.begin(), c.queue.end(), v,
                               [&](std::int64_t key, int other) { return key < m_tasks[other].t.vruntime; });
    c.queue.insert(it, id);
}

void Engine::queueErase(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    auto it = std::find(c.queue.begin(), c.queue.end(), id);
    if (it != c.queue.end()) c.queue.erase(it);
}

void Engine::updateMinVruntime(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    std::int64_t vr = rq.min_vruntime;
    bool have = false;
    std::int64_t cand = 0;
    if (c.curr >= 0) {
        cand = m_tasks[c.curr].t.vruntime;
        have = true;
    }
    if (!c.queue.empty()) {
        const std::int64_t l = m_tasks[c.queue.front()].t.vruntime;
        cand = have ? std::min(cand, l) : l;
        have = true;
    }
    if (have) vr = std::max(vr, cand);
    rq.min_vruntime = vr;
}

// update_curr(): charge curr's runtime since exec_start to its vruntime.
void Engine::update_curr(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (c.curr < 0) return;
    SimTask& p = m_tasks[c.curr];
    const std::int64_t delta = m_now - c.exec_start;
    if (delta <= 0) return;
    c.exec_start = m_now;
    p.sum_exec += delta;
    p.t.vruntime += delta;  // nice 0: calc_delta_fair() is the identity
    p.t.exec_start = m_now;
    updateMinVruntime(cpu);
    m_st.rq[cpu].curr_vruntime = p.t.vruntime;
}

void Engine::recordStateChange(int cpu) {
    auto& mc = m_metrics;
    const Cpu& c = m_cpus[cpu];
    const unsigned len = m_st.rq[cpu].nr_running;
    const std::uint8_t busy = c.curr >= 0 ? 1 : 0;
    if (len == mc.cur_len[cpu] && busy == mc.cur_busy[cpu]) return;
    const std::int64_t dt = m_now - mc.last_change[cpu];
    mc.rqlen_area[cpu] += std::int64_t(mc.cur_len[cpu]) * dt;
    if (mc.cur_busy[cpu]) mc.busy_ns[cpu] += dt;
    mc.last_change[cpu] = m_now;
    const bool wasIdle = mc.cur_len[cpu] == 0, wasOver = mc.cur_len[cpu] >= 2;
    const bool isIdle = len == 0, isOver = len >= 2;
    if (wasIdle != isIdle || wasOver != isOver) {
        const int l = c.llc;
        if (mc.llc_idle[l] > 0 && mc.llc_over[l] > 0) mc.idle_while_overloaded_ns[l] += m_now - mc.llc_last[l];
        mc.llc_last[l] = m_now;
        mc.llc_idle[l] += int(isIdle) - int(wasIdle);
        mc.llc_over[l] += int(isOver) - int(wasOver);
    }
    mc.cur_len[cpu] = std::uint16_t(std::min<unsigned>(len, 65535));
    mc.cur_busy[cpu] = busy;
}

// The MachineState view of this CPU, read by the wakeup path.
void Engine::syncRq(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    const unsigned n = unsigned(c.queue.size()) + (c.curr >= 0 ? 1u : 0u);
    // add_nr_running(): crossing to two runnable tasks sets the root domain's overload flag.
    if (n >= 2 && rq.nr_running < 2) m_st.rd_overload = true;
    rq.nr_running = n;
    rq.h_nr_running = n;
    rq.idle_h_nr_running = 0;
    rq.curr = c.curr >= 0 ? CurrKind::Normal : CurrKind::Idle;
    if (c.curr >= 0) rq.curr_vruntime = m_tasks[c.curr].t.vruntime;
    rq.curr_need_resched = c.need_resched;
    rq.ttwu_pending = !c.wakelist.empty();
    rq.load_avg = std::int64_t(c.avg.load_avg);
    rq.util_avg = std::int64_t(c.avg.util_avg);
    rq.runnable_avg = std::int64_t(c.avg.runnable_avg);
    rq.util_est = c.util_est;
    recordStateChange(cpu);
}

// The cost of one access to tg->load_avg's cache line (spec/workloads.md 2.1, Aaron Lu's
// profile: update_cfs_group() + update_load_avg() 25-36 % of the cycles of SPR hackbench):
// the line is contended in proportion to how many updates it took in the last window, whether
// this access writes it (update_tg_load_avg()'s atomic_long_add) or reads it
// (calc_group_shares()'s atomic_long_read). A write is recorded for the accesses after it.
std::int64_t Engine::tgLineAccessCost(bool write) {
    const double s = m_cfg.cost.s(CostTerm::tg_load_avg);
    if (s == 0.0) return 0;
    const CostModel& cm = m_cfg.cost;
    // The ring holds the last updates' times in order (time never goes back); the newest
    // m_tgInWindow of them are inside the window. The window only moves forward, so an update
    // that left it never comes back: drop from the oldest end.
    constexpr std::size_t n = kTgRecent;
    static_assert((n & (n - 1)) == 0);
    const std::int64_t from = m_now - cm.tg_update_window;
    while (m_tgInWindow > 0 && m_tgRecent[(m_tgPos - m_tgInWindow) & (n - 1)] <= from) m_tgInWindow--;
    const int recent = int(m_tgInWindow);
    if (write) {
        m_tgRecent[m_tgPos] = m_now;
        m_tgPos = m_tgPos + 1 == n ? 0 : m_tgPos + 1;
        if (m_tgInWindow < n) m_tgInWindow++;  // else the oldest was overwritten
    }
    const std::int64_t cost = std::min(cm.tg_update_cap, cm.tg_update_base + cm.tg_update_per_cpu * recent);
    return cm.c(CostTerm::tg_load_avg, cost);
}

// CPU time on the tg->load_avg line, paid by the task whose step does the update (a remote
// enqueue is the waker's work) or, outside a step, by whatever runs next on `cpu`.
void Engine::chargeTg(int cpu, std::int64_t cost) {
    if (cost == 0) return;
    m_metrics.cost_tg += cost;
    if (m_stepping >= 0 && m_stepCpu >= 0) m_tasks[m_stepping].work_left += cost;
    else addPendingCharge(m_tgPayer >= 0 ? m_tgPayer : cpu, cost);
}

// update_tg_load_avg(cfs_rq): only when the contribution moved by more than 1/64 (and, with
// Aaron Lu's ratelimit, at most once per tg_ratelimit_ns per cfs_rq).
void Engine::update_tg_load_avg(int cpu) {
    Cpu& c = m_cpus[cpu];
    const std::int64_t delta = std::int64_t(c.avg.load_avg) - c.tg_contrib;
    if ((delta < 0 ? -delta : delta) > c.tg_contrib / 64 &&
        (m_cfg.cost.tg_ratelimit_ns == 0 || m_now - c.last_tg_update >= m_cfg.cost.tg_ratelimit_ns)) {
        c.tg_contrib = std::int64_t(c.avg.load_avg);
        c.last_tg_update = m_now;
        m_metrics.tg_updates++;
        chargeTg(cpu, tgLineAccessCost(true));
    }
}

// update_cfs_group() of the task group's entity: calc_group_shares() reads tg->load_avg, on
// every enqueue and dequeue of a task of the group and at every entity_tick().
void Engine::update_cfs_group(int cpu) {
    m_metrics.tg_reads++;
    chargeTg(cpu, tgLineAccessCost(false));
}

// sync_entity_load_avg(): __update_load_avg_blocked_se() to cfs_rq_last_update_time() of
// p's cfs_rq, in place, as the kernel does.
void Engine::sync_entity_load_avg(Task& p) {
    pelt_update(m_cpus[p.cpu].avg.last_update_time, p.avg, 0, 0, 0);
}

// update_load_avg(cfs_rq, se, flags): the entity (if attached), removed load, the cfs_rq,
// then the attach of a migrated or new entity (DO_ATTACH with last_update_time 0) or the
// detach of a migrating one (DO_DETACH), each with update_tg_load_avg(), or else
// update_tg_load_avg() on UPDATE_TG when the cfs_rq decayed.
void Engine::updateLoadAvg(int cpu, SimTask* se, unsigned flags) {
    Cpu& c = m_cpus[cpu];
    const std::uint64_t now = std::uint64_t(m_now);
    if (se && se->t.avg.last_update_time) {  // __update_load_avg_se(): not for an entity not attached yet
        const bool onrq = se->t.on_rq;  // se->on_rq: still 0 in enqueue_entity's update, still 1 in dequeue_entity's
        pelt_update(now, se->t.avg, onrq ? 1 : 0, onrq ? 1 : 0, c.curr >= 0 && &m_tasks[c.curr] == se ? 1 : 0);
    }
    bool decayed = false;
    if (c.removed_load || c.removed_util || c.removed_runnable) {
        // update_cfs_rq_load_avg(): sub_positive() the removed averages and sums, and keep
        // each sum at least avg * PELT_MIN_DIVIDER.
        const std::uint64_t divider = get_pelt_divider(c.avg);
        auto remove = [divider](auto& avg, auto& sum, std::int64_t r) { sub_avg_and_sum(avg, sum, std::uint64_t(r), std::uint64_t(r) * divider); };
        remove(c.avg.load_avg, c.avg.load_sum, c.removed_load);
        remove(c.avg.util_avg, c.avg.util_sum, c.removed_util);
        remove(c.avg.runnable_avg, c.avg.runnable_sum, c.removed_runnable);
        c.removed_load = c.removed_util = c.removed_runnable = 0;
        decayed = true;
    }
    const unsigned long nr = (unsigned long)(c.queue.size() + (c.curr >= 0 ? 1 : 0));
    decayed |= pelt_update_cfs(now, c.avg, 1024 * nr, nr, c.curr >= 0 ? 1 : 0);
    if (se && (flags & DO_ATTACH) && !se->t.avg.last_update_time) {
        // "DO_ATTACH means we're here from enqueue_entity()": a task that migrated (or a new
        // one) is attached at this cfs_rq's clock, after its decay.
        attachLoadAvg(c, *se);
        update_tg_load_avg(cpu);
    } else if (se && (flags & DO_DETACH)) {
        // "DO_DETACH means we're here from dequeue_entity() and we are migrating task out of
        // the CPU" (6.1, "Combine detach into dequeue when migrating task").
        detachLoadAvg(c, *se);
        update_tg_load_avg(cpu);
    } else if (decayed && (flags & UPDATE_TG)) {
        update_tg_load_avg(cpu);
    }
}

// enqueue_task_fair() + the engine's queue.
void Engine::enqueueTask(int cpu, int id, bool wakeup, bool migrated) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    Rq& rq = m_st.rq[cpu];
    update_curr(cpu);
    updateLoadAvg(cpu, &p, UPDATE_TG | DO_ATTACH);  // attaches p when it migrated or is new (last_update_time 0)
    update_cfs_group(cpu);  // the group entity on the parent cfs_rq
    // update_rq_clock() before an activation or attach: on an idle rq, update_rq_clock_pelt()
    // stamps rq->clock_idle (idle-delay v3's clock) -- when rq->curr is the idle task, not
    // while schedule() runs newidle balancing for a task that just slept (curr is still it).
    if (c.curr < 0 && c.in_idle) rq.clock_idle = m_now;
    if (wakeup) {
        // enqueue_entity(): a migrated wakee's vruntime was made relative to its old cfs_rq by
        // migrate_task_rq_fair() when try_to_wake_up() moved it (migrateTask); renormalise it
        // here, after update_curr(), against this cfs_rq's min_vruntime at the enqueue (which,
        // on the wakelist path, is the IPI's time, not the waking's).
        std::int64_t vr = p.t.vruntime;
        if (migrated) vr += rq.min_vruntime;
        const bool longSleeper = p.t.exec_start != 0 && (m_now - p.t.exec_start) > (std::int64_t(1) << 53);
        p.t.vruntime = place_entity_wakeup(m_tun, m_cfg.knobs, rq.min_vruntime, vr, longSleeper);
    } else {
        p.t.vruntime += rq.min_vruntime;  // attach: renormalise to this cfs_rq
    }
    // ENQUEUE_MIGRATED (ttwu with WF_MIGRATED, attach_task): "Entity has migrated, no longer
    // consider this task hot": exec_start = 0, after place_entity (6.1 stable, a53ce18cacb4).
    if (migrated) p.t.exec_start = 0;
    p.state = TaskState::Runnable;
    p.t.on_rq = true;
    p.t.cpu = cpu;
    c.util_est += std::int64_t(task_util_est(p.t.avg));
    cfsListAdd(cpu, id);  // account_entity_enqueue(): list_add(&se->group_node, &rq->cfs_tasks)
    queueInsert(cpu, id);
    updateMinVruntime(cpu);
    syncRq(cpu);
}

// dequeue_task_fair(); the task is either curr or queued.
void Engine::dequeueTask(int cpu, int id, bool sleep) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    // dequeue_entity(): clear_buddies(cfs_rq, se)
    if (c.next_buddy == id) c.next_buddy = -1;
    if (c.last_buddy == id) c.last_buddy = -1;
    update_curr(cpu);
    // A dequeue that is not a sleep is a migration (detach_task(), the stopper's
    // detach_one_task(): TASK_ON_RQ_MIGRATING): its load leaves this cfs_rq now.
    updateLoadAvg(cpu, &p, UPDATE_TG | (sleep ? 0u : DO_DETACH));
    update_cfs_group(cpu);  // the group entity on the parent cfs_rq
    c.util_est = std::max<std::int64_t>(0, c.util_est - std::int64_t(task_util_est(p.t.avg)));
    if (sleep && m_cfg.knobs.UTIL_EST) util_est_update_task(p.t.avg, m_cfg.knobs.UTIL_EST_FASTUP);
    if (c.curr == id) {
        setCurr(cpu, -1);
        clearBurst(cpu);
    } else {
        queueErase(cpu, id);
    }
    cfsListDel(cpu, id);  // account_entity_dequeue(): list_del_init(&se->group_node)
    if (!sleep) p.t.vruntime -= m_st.rq[cpu].min_vruntime;  // detach: make relative
    p.t.on_rq = false;
    updateMinVruntime(cpu);
    syncRq(cpu);
}


std::int64_t Engine::migrationCost(const SimTask& p, int from, int to) const {
    const CostModel& cm = m_cfg.cost;
    std::int64_t perLine = 0;
    switch (distClass(*m_cfg.topo, from, to)) {
    case DistClass::same_cpu: return 0;
    case DistClass::smt: perLine = cm.refill_smt_line; break;
    case DistClass::llc: perLine = cm.refill_llc_line; break;
    case DistClass::cross_llc:
    case DistClass::cross_node: perLine = cm.refill_cross_llc_line; break;
    case DistClass::cross_socket: perLine = cm.refill_cross_socket_line; break;
    case DistClass::count_: break;
    }
    const std::int64_t hot = p.hot_set > 0 ? p.hot_set : cm.hot_set_bytes;
    return cm.c(CostTerm::cache_refill, hot / 64 * perLine);
}

// detach_entity_load_avg(): dequeue_load_avg() and the util and runnable averages and sums
// taken off with sub_positive(), each sum kept at least its average * PELT_MIN_DIVIDER.
void Engine::detachLoadAvg(Cpu& src, SimTask& p) {
    const SchedAvg& a = p.t.avg;
    sub_avg_and_sum(src.avg.load_avg, src.avg.load_sum, a.load_avg, a.load_sum * 1024);  // se_weight(se) * se->avg.load_sum
    sub_avg_and_sum(src.avg.util_avg, src.avg.util_sum, a.util_avg, a.util_sum);
    sub_avg_and_sum(src.avg.runnable_avg, src.avg.runnable_sum, a.runnable_avg, a.runnable_sum);
}

// attach_entity_load_avg(): align the entity to the cfs_rq's clock and add its averages and sums.
void Engine::attachLoadAvg(Cpu& dst, SimTask& p) {
    p.t.avg.last_update_time = dst.avg.last_update_time;
    p.t.avg.period_contrib = dst.avg.period_contrib;
    const std::uint32_t divider = get_pelt_divider(dst.avg);
    p.t.avg.load_sum = p.t.avg.load_avg * divider / 1024;  // se weight 1024: load_avg = load * load_sum / divider
    p.t.avg.util_sum = std::uint32_t(p.t.avg.util_avg * divider);
    p.t.avg.runnable_sum = p.t.avg.runnable_avg * divider;
    dst.avg.load_avg += p.t.avg.load_avg;
    dst.avg.load_sum += p.t.avg.load_sum * 1024;  // se_weight(se) * se->t.avg.load_sum
    dst.avg.util_avg += p.t.avg.util_avg;
    dst.avg.util_sum += p.t.avg.util_sum;
    dst.avg.runnable_avg += p.t.avg.runnable_avg;
    dst.avg.runnable_sum += p.t.avg.runnable_sum;
}

// set_task_cpu() across CPUs: migrate_task_rq_fair(); sched_migrate_task. The new cfs_rq
// attaches the task at its enqueue (update_load_avg(UPDATE_TG | DO_ATTACH)).
void Engine::migrateTask(int id, int from, int to, MigrationCause cause, int on_cpu) {
    SimTask& p = m_tasks[id];
    Cpu& src = m_cpus[from];
    if (cause == MigrationCause::wakeup) {
        // !task_on_rq_migrating(p): remove_entity_load_avg(): sync_entity_load_avg() to the old
        // cfs_rq's clock, then added to its removed load (taken off at its next update).
        // A queued task that balancing moves was detached by its dequeue (DO_DETACH).
        pelt_update(src.avg.last_update_time, p.t.avg, 0, 0, 0);
        src.removed_load += std::int64_t(p.t.avg.load_avg);
        src.removed_util += std::int64_t(p.t.avg.util_avg);
        src.removed_runnable += std::int64_t(p.t.avg.runnable_avg);
    }
    p.t.avg.last_update_time = 0;  // "Tell new CPU we are migrated"
    // migrate_task_rq_fair(), for a task in TASK_WAKING (try_to_wake_up's set_task_cpu):
    // se->vruntime -= old cfs_rq->min_vruntime, read now, not when the wakee is enqueued.
    // Balancing moves a queued task, whose detach (dequeue without DEQUEUE_SLEEP) made it relative.
    if (cause == MigrationCause::wakeup) p.t.vruntime -= m_st.rq[from].min_vruntime;
    p.t.cpu = to;
    p.t.wake_cpu = to;  // __set_task_cpu(): p->wake_cpu = cpu
    emitEvent(EvKind::sched_migrate_task, on_cpu, p.t.pid, 0, to, from, 'R', std::uint8_t(cause));
    m_metrics.migrations[int(cause)]++;
    if (migration_sink) migration_sink(m_now, p.t.pid, from, to, cause);
    m_metrics.migration_matrix[int(cause)][int(distClass(*m_cfg.topo, from, to))]++;
}

// ---------------------------------------------------------------------------
// schedule()

// check_preempt_wakeup()'s buddies, after p was enqueued on `cpu`: NEXT_BUDDY marks p when
// the cfs_rq has sched_nr_latency tasks (not for a fork); a wakeup that preempts makes p the
// next buddy (if not marked yet) and, with LAST_BUDDY and that many tasks, curr the last.
// An idle curr is preempted by the class check alone: no buddy.
void Engine::setBuddies(int cpu, int id, bool preempted, bool fork) {
    Cpu& c = m_cpus[cpu];
    if (c.curr < 0 || c.curr == id) return;
    const std::int64_t nr = std::int64_t(c.queue.size()) + 1;  // cfs_rq->nr_running: curr and the queued, p included
    const bool scale = nr >= m_tun.latency_ns / m_tun.min_granularity_ns;  // sched_nr_latency
    bool marked = false;
    if (m_cfg.knobs.NEXT_BUDDY && scale && !fork) {
        c.next_buddy = id;
        marked = true;
    }
    if (!preempted) return;
    if (!marked) c.next_buddy = id;
    if (m_cfg.knobs.LAST_BUDDY && scale) c.last_buddy = c.curr;
}

// pick_next_entity() (6.1): the leftmost, unless the next buddy (else the last buddy) is
// within wakeup_gran of it; set_next_entity()'s clear_buddies() forgets the one picked.
int Engine::pickNextEntity(int cpu) {
    Cpu& c = m_cpus[cpu];
    const int left = c.queue.front();
    int se = left;
    auto ok = [&](int b) {
        return b >= 0 && m_tasks[b].t.on_rq && m_tasks[b].t.cpu == cpu && b != c.curr &&
               wakeup_preempt_entity(m_tun, m_tasks[b].t.vruntime, m_tasks[left].t.vruntime) < 1;
    };
    if (ok(c.next_buddy)) se = c.next_buddy;
    else if (ok(c.last_buddy)) se = c.last_buddy;
    if (c.next_buddy == se) c.next_buddy = -1;
    if (c.last_buddy == se) c.last_buddy = -1;
    if (se == left) {
        c.queue.erase(c.queue.begin());
    } else {
        queueErase(cpu, se);
        m_metrics.buddy_picks++;
    }
    return se;
}

void Engine::schedule(int cpu) {
    Cpu& c = m_cpus[cpu];
    const int prev = c.curr;
    c.need_resched = false;
    m_st.rq[cpu].curr_need_resched = false;
    bool involuntary = false;
    if (prev >= 0) {
        SimTask& p = m_tasks[prev];
        accountSegment(cpu);
        update_curr(cpu);
        // put_prev_entity(): back into the tree (still runnable: a preemption);
        // update_load_avg(cfs_rq, prev, 0): no UPDATE_TG.
        updateLoadAvg(cpu, &p, 0);
        setCurr(cpu, -1);
        clearBurst(cpu);
        p.state = TaskState::Runnable;
        queueInsert(cpu, prev);
        involuntary = true;
    }
    // Who is switched out (for sched_switch): a preempted curr, a task that just slept or exited, or swapper.
    int prevPid = 0;
    char prevState = 'R';
    if (prev >= 0) {
        prevPid = m_tasks[prev].t.pid;
    } else if (c.switch_from >= 0) {
        prevPid = m_tasks[c.switch_from].t.pid;
        prevState = c.switch_state;
    }
    c.switch_from = -1;
    // pick_next_task_fair(): newidle balance when nothing is queued.
    if (c.queue.empty()) {
        newidleBalance(cpu);
        if (c.queue.empty()) {
            if (prevPid != 0) emitEvent(EvKind::sched_switch, cpu, prevPid, 0, -1, -1, prevState);
            enterIdle(cpu);
            return;
        }
    }
    const int next = pickNextEntity(cpu);
    SimTask& n = m_tasks[next];
    const bool fromIdle = c.in_idle;
    setCurr(cpu, next);
    n.state = TaskState::Running;
    cfsListDel(cpu, next);  // pick_next_task_fair(): list_move(&p->se.group_node, &rq->cfs_tasks)
    cfsListAdd(cpu, next);
    updateLoadAvg(cpu, &n);  // set_next_entity: update_load_avg before it becomes curr
    c.exec_start = m_now;
    n.t.exec_start = m_now;
    n.prev_sum_exec = n.sum_exec;
    n.t.on_cpu = true;
    if (next != prev) {
        m_metrics.ctx_switches++;
        if (involuntary) m_metrics.involuntary_switches++;
        const CostModel& cm = m_cfg.cost;
        const std::int64_t sw = cm.c(CostTerm::ctx_switch, c.last_mm == n.mm ? cm.ctx_switch_thread : cm.ctx_switch_process);
        n.work_left += sw;
        m_metrics.cost_ctx_switch += sw;
        c.last_mm = n.mm;
        if (n.last_ran_cpu >= 0 && n.last_ran_cpu != cpu) {
            const std::int64_t r = migrationCost(n, n.last_ran_cpu, cpu);
            n.work_left += r;
            m_metrics.cost_refill += r;
        }
        n.last_ran_cpu = cpu;
        if (n.wake_time >= 0) {
            m_metrics.wakeup_latency.record(m_now - n.wake_time);
            n.wake_time = -1;
        }
    }
    if (prev >= 0 && prev != next) m_tasks[prev].t.on_cpu = false;
    if (fromIdle) leaveIdle(cpu);
    if (next != prev) emitEvent(EvKind::sched_switch, cpu, prevPid, n.t.pid, -1, -1, prevState);
    syncRq(cpu);
    if (c.tick_next < 0) {  // tick_nohz_idle_exit(): the tick restarts on the jiffy grid
        const std::int64_t j = m_jiffyNs;
        c.tick_next = (m_now / j + 1) * j;
        queueTick(cpu);
    }
    if (fromIdle) reschedSpeed(cpu);
    startSegment(cpu);
}

void Engine::enterIdle(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    setCurr(cpu, -1);
    clearBurst(cpu);
    syncRq(cpu);
    // set_next_task_idle(): __update_idle_core, claim cleared, clock_idle.
    set_next_task_idle(m_st, m_cfg.knobs, cpu);
    nohzRunIdleBalance(cpu);  // do_idle()
    // cpuidle governor: deepest state whose target residency fits the predicted idle time.
    const auto& cs = m_cfg.cost.cstates;
    int pick = 0;
    for (int i = 0; i < int(cs.size()); ++i)
        if (cs[i].residency_ns <= c.predicted_idle) pick = i;
    c.cstate = pick;
    rq.exit_latency_ns = cs[pick].exit_ns;
    emitEvent(EvKind::cpu_idle, cpu, 0, 0, -1, -1, 'R', 0, std::uint32_t(pick));
    const bool wasIdle = c.in_idle;
    c.in_idle = true;
    c.idle_since = m_now;
    c.idle_tick_from = m_now;
    if (idleStopsTick(cpu) || c.tick_next < 0) {
        c.tick_next = -1;  // tick_nohz_idle_stop_tick()
        nohzBalanceEnterIdle(cpu);
    }  // else tick_nohz_idle_retain_tick(): the queued tick stays
    m_metrics.bpf_len[cpu] = 0;  // the seed script's cpu_idle probe
    if (!wasIdle) reschedSpeed(cpu);
}

void Engine::leaveIdle(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    const std::int64_t dur = m_now - c.idle_since;
    c.predicted_idle = c.predicted_idle == 0 ? dur : (c.predicted_idle * 7 + dur) / 8;
    c.in_idle = false;
    emitEvent(EvKind::cpu_idle, cpu, 0, 0, -1, -1, 'R', 0, PWR_EVENT_EXIT);
    rq.idle_end_time = m_now;  // idle-delay v1/v2: stamped when the idle loop is left
    rq.clock_idle = m_now;     // __schedule()'s update_rq_clock() while curr is still the idle task
    rq.exit_latency_ns = -1;
}

// How long until `cpu` acts on what `from_cpu` just asked of it (resched_curr()'s
// set_nr_and_not_polling(), send_call_function_single_ipi()'s set_nr_if_polling()): a CPU idle
// in a polling state (poll_idle, MWAIT) sees its flag word written and needs no IPI
// (sched_wake_idle_without_ipi); any other needs one (none to itself). An idle CPU then leaves
// its C-state.
std::int64_t Engine::kickDelay(int cpu, int from_cpu) {
    const Cpu& c = m_cpus[cpu];
    const CostModel& cm = m_cfg.cost;
    const bool idle = c.curr < 0 && c.in_idle;
    std::int64_t delay = 0;
    if (idle && cm.cstates[c.cstate].polling) {
        if (cpu != from_cpu) m_metrics.wake_idle_without_ipi++;
    } else if (cpu != from_cpu) {
        delay += cm.c(CostTerm::ipi, m_cfg.topo->cpu(cpu).package == m_cfg.topo->cpu(from_cpu).package ? cm.ipi_same_socket
                                                                                                  : cm.ipi_cross_socket);
        m_metrics.ipis++;
    }
    if (idle) {
        const std::int64_t ex = cm.c(CostTerm::idle_exit, cm.cstates[c.cstate].exit_ns);
        delay += ex;
        m_metrics.idle_exit_latency += ex;
    }
    return delay;
}

// resched_curr() from `from_cpu`: an IPI (or the polling flag) and, on an idle
// CPU, the C-state exit before schedule() runs there.
void Engine::reschedCpu(int cpu, int from_cpu) {
    cutPlanOnCpu(cpu);  // the next boundary is a preemption point
    Cpu& c = m_cpus[cpu];
    c.need_resched = true;
    m_st.rq[cpu].curr_need_resched = c.curr >= 0;
    if (c.curr >= 0 && cpu == m_stepCpu) return;  // preempted at the end of the current step
    if (c.resched_pending) return;
    const std::int64_t delay = kickDelay(cpu, from_cpu);
    c.resched_pending = true;
    push(m_now + delay, EvResched, cpu);
}

// ---------------------------------------------------------------------------
// Wakeups

bool Engine::wake(int id, bool sync) {
    SimTask& p = m_tasks[id];
    if (p.state == TaskState::Exited) return false;
    if (p.state == TaskState::Blocked) {
        doWake(id, m_stepCpu >= 0 ? m_stepCpu : 0, m_stepping >= 0, sync ? std::uint32_t(WF_SYNC) : 0u,
               m_stepping >= 0 ? &m_tasks[m_stepping].t : nullptr);
        return true;
    }
    // Running or queued with a block still pending: try_to_wake_up finds it on the rq.
    if (p.pending == Action::Block) {
        p.wake_pending = true;
        m_metrics.stage0[std::size_t(Stage0::TTWU_RUNNABLE)]++;
        // try_to_wake_up(): sched_waking, then ttwu_runnable()'s ttwu_do_wakeup(): sched_wakeup;
        // ttwu_stat() counts it.
        const int waker = m_stepCpu >= 0 ? m_stepCpu : p.t.cpu;
        emitEvent(EvKind::sched_waking, waker, p.t.pid, 0, p.t.cpu);
        emitEvent(EvKind::sched_wakeup, waker, p.t.pid, 0, p.t.cpu);
        m_metrics.ttwu_count++;
        if (waker == p.t.cpu) m_metrics.ttwu_local++;
        return true;
    }
    return false;
}

void Engine::doWake(int id, int waker_cpu, bool in_task, std::uint32_t wf, Task* waker) {
    SimTask& p = m_tasks[id];
    const int from = p.t.cpu;
    // p.t.avg stays as its dequeue left it: select_task_rq_fair() reads it so
    // (wake_affine_weight's task_h_load(p)); only find_idlest_cpu() and the asymmetric
    // select_idle_sibling() sync it first (through RqUpdateHook::sync_entity_load_avg).
    p.t.on_rq = false;
    p.t.on_cpu = false;
    Waker w;
    w.cpu = waker_cpu;
    w.in_task = in_task;
    w.current_ptr = waker ? waker : (m_cpus[waker_cpu].curr >= 0 ? &m_tasks[m_cpus[waker_cpu].curr].t : &m_idleTasks[waker_cpu]);
    if (waker_cpu >= 0 && m_cpus[waker_cpu].curr >= 0) update_curr(waker_cpu);
    // The inputs go to their sink first so that the export can give the waking its context.
    if (wake_inputs_sink) {
        WakeInputs in;
        in.time = m_now;
        in.cpu = std::int16_t(waker_cpu);
        in.prev = std::int16_t(from);
        in.pid = p.t.pid;
        in.this_load = m_st.rq[waker_cpu].load_avg;
        in.prev_load = m_st.rq[from].load_avg;
        in.p_load = p.t.h_load();
        in.cur_load = w.cur().h_load();
        in.sync = (wf & WF_SYNC) != 0;
        if (const SdShared* sh = m_st.llcShared(waker_cpu)) in.scan_this = sh->nr_idle_scan, in.cores_this = sh->has_idle_cores;
        if (const SdShared* sh = m_st.llcShared(from)) in.scan_prev = sh->nr_idle_scan, in.cores_prev = sh->has_idle_cores;
        in.jiffies = m_st.jiffies;
        in.in_task = in_task;
        wake_inputs_sink(in);
    }
    emitEvent(EvKind::sched_waking, waker_cpu, p.t.pid, 0, from);
    const bool tr = m_tracePid == p.t.pid || m_traceNext;
    Decision& d = m_decision;  // reused: no allocation per wakeup (doWake does not nest)
    try_to_wake_up(m_st, m_cfg.knobs, p.t, w, wf, tr, d);
    if (tr) traced(p.t.pid, d);
    const int cpu = d.cpu;
    m_metrics.ttwu_count++;
    if (cpu == waker_cpu) m_metrics.ttwu_local++;
    if (d.preempted_curr) m_metrics.wake_preempt++;
    p.wake_time = m_now;
    p.wake_pending = false;
    // Costs on the waker (CPU time): the wakeup itself and the CPUs the path examined.
    const CostModel& cm = m_cfg.cost;
    std::int64_t cost = cm.c(CostTerm::sis_scan, cm.sis_scan_per_cpu * std::int64_t(d.examined.size()));
    m_metrics.cost_scan += cost;
    std::int64_t wcost = 0;
    if (d.migrated) migrateTask(id, from, cpu, MigrationCause::wakeup, waker_cpu);
    if (d.wakelist) {
        m_metrics.ttwu_wakelist++;
        wcost = cm.c(CostTerm::wakeup, cm.wakeup_remote_queued);
        Cpu& t = m_cpus[cpu];
        t.wakelist.push_back(id);
        p.wake_from = from;
        p.state = TaskState::Runnable;
        p.t.on_rq = false;
        m_st.rq[cpu].ttwu_pending = true;
        if (!t.ipi_pending) {
            t.ipi_pending = true;
            push(m_now + kickDelay(cpu, waker_cpu), EvIpi, cpu);  // the wakelist's IPI, or its polling flag
        }
    } else {
        if (cpu == waker_cpu) {
            wcost = cm.c(CostTerm::wakeup, cm.wakeup_local);
        } else {
            m_metrics.ttwu_remote_direct++;
            wcost = cm.c(CostTerm::wakeup, cm.wakeup_remote_direct);
            // Remote rq lock: wait for the holder, then hold it for the enqueue.
            Cpu& t = m_cpus[cpu];
            if (m_cfg.cost.s(CostTerm::rq_lock) != 0.0) {
                const std::int64_t wait = std::max<std::int64_t>(0, t.lock_free_at - m_now);
                const std::int64_t w8 = cm.c(CostTerm::rq_lock, wait);
                wcost += w8;
                m_metrics.cost_lock_wait += w8;
                t.lock_free_at = std::max(t.lock_free_at, m_now) + cm.c(CostTerm::rq_lock, cm.rq_lock_hold);
            }
        }
        p.t.on_rq = false;  // try_to_wake_up() set it; enqueue_entity() updates the sleeping entity first
        enqueueTask(cpu, id, true, d.migrated);
        emitEvent(EvKind::sched_wakeup, waker_cpu, p.t.pid, 0, cpu);
        setBuddies(cpu, id, d.preempted_curr, false);
        if (d.preempted_curr) reschedCpu(cpu, waker_cpu);
    }
    m_metrics.cost_wakeup += wcost;
    cost += wcost;
    if (in_task && m_stepping >= 0) m_tasks[m_stepping].work_left += cost;
    else addPendingCharge(waker_cpu, cost);
    m_metrics.recordDecision(m_now, p.t.pid, d);
}

// sched_ttwu_pending(): the target runs its wakelist.
void Engine::onIpi(int cpu) {
    Cpu& c = m_cpus[cpu];
    c.ipi_pending = false;
    if (c.wakelist.empty()) return;
    std::vector<int>& list = m_ipiList;  // the two buffers trade places: no allocation per IPI
    list.clear();
    list.swap(c.wakelist);
    m_st.rq[cpu].ttwu_pending = false;
    bool resched = false;
    for (int id : list) {
        SimTask& p = m_tasks[id];
        // The task was placed and migrated at wakeup time (its vruntime made relative to the old rq then).
        const int from = p.wake_from >= 0 ? p.wake_from : cpu;
        p.wake_from = -1;
        enqueueTask(cpu, id, true, from != cpu);
        ttwu_do_wakeup_idle_update(m_st, cpu);  // ttwu_do_activate on the target: avg_idle, idle_stamp := 0
        emitEvent(EvKind::sched_wakeup, cpu, p.t.pid, 0, cpu);
        addPendingCharge(cpu, m_cfg.cost.c(CostTerm::wakeup, m_cfg.cost.wakeup_local));
        Decision dummy;
        Waker w;
        w.cpu = cpu;
        w.in_task = false;
        w.current_ptr = c.curr >= 0 ? &m_tasks[c.curr].t : &m_idleTasks[cpu];
        WakeCtx ctx{m_st, m_cfg.knobs, w, dummy, false};
        // enqueue has already counted p: check_preempt_curr sees the CPU as the kernel does after activate_task;
        // once one wakee preempts, curr has need_resched and the later ones leave the buddies alone.
        m_st.rq[cpu].curr_need_resched = c.curr >= 0 && (c.need_resched || resched);
        const bool pre = c.curr < 0 || check_preempt_curr(ctx, p.t, cpu, 0, false, cpu);
        setBuddies(cpu, id, pre && !m_st.rq[cpu].curr_need_resched, false);
        if (pre) resched = true;
    }
    m_st.rq[cpu].ttwu_pending = false;
    if (resched) {
        if (c.curr < 0) {
            if (!c.resched_pending) schedule(cpu);  // already out of the C-state: the IPI woke it
        } else {
            c.need_resched = true;
            schedule(cpu);  // preemption on return from the interrupt
        }
    }
}

void Engine::onTimer(int id, std::uint32_t gen) {
    SimTask& p = m_tasks[id];
    if (p.timer_gen != gen || p.state != TaskState::Blocked) return;
    // hrtimer_wakeup() in interrupt context on the CPU the timer was armed on.
    const int cpu = p.last_ran_cpu >= 0 ? p.last_ran_cpu : 0;
    Cpu& c = m_cpus[cpu];
    doWake(id, cpu, false, 0, c.curr >= 0 ? &m_tasks[c.curr].t : &m_idleTasks[cpu]);
}

// ---------------------------------------------------------------------------
// Tick

// sched_slice() for nice-0 entities on a cfs_rq of nr: __sched_period(nr) / nr, at least
// min_granularity with BASE_SLICE.
std::int64_t Engine::sched_slice(std::int64_t nr) const {
    const std::int64_t period = nr > 8 ? nr * m_tun.min_granularity_ns : m_tun.latency_ns;  // sched_nr_latency = 8
    const std::int64_t slice = period / nr;
    return m_cfg.knobs.BASE_SLICE ? std::max(slice, m_tun.min_granularity_ns) : slice;
}

void Engine::checkPreemptTick(int cpu) {
    // check_preempt_tick() (6.1, nice 0).
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[c.curr];
    const std::int64_t ideal = sched_slice(std::int64_t(c.queue.size()) + 1);
    const std::int64_t delta_exec = p.sum_exec - p.prev_sum_exec;
    bool resched = false;
    if (delta_exec > ideal) {
        // "The current task ran long enough, ensure it doesn't get re-elected due to buddy
        // favours": clear_buddies(cfs_rq, curr).
        resched = true;
        if (c.next_buddy == c.curr) c.next_buddy = -1;
        if (c.last_buddy == c.curr) c.last_buddy = -1;
    } else if (delta_exec >= m_tun.min_granularity_ns) {
        const std::int64_t delta = p.t.vruntime - m_tasks[c.queue.front()].t.vruntime;
        if (delta > ideal) resched = true;
    }
    if (resched) {
        m_metrics.tick_preempt++;
        c.need_resched = true;
    }
}

// The tick of `cpu` at tick_next. A tick's order key does not depend on when the tick was
// (re)started: it is created at the jiffy before. A CPU that stops its tick (nohz idle) and
// restarts it within the same jiffy keeps the tick already queued, so the queue holds at
// most one tick per CPU however often the CPU enters and leaves idle.
void Engine::queueTick(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (c.tick_queued == c.tick_next) return;
    c.tick_queued = c.tick_next;
    pushAt(c.tick_next, c.tick_next - m_jiffyNs, EvTick, cpu);
}

void Engine::onTick(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (c.tick_queued == m_now) c.tick_queued = -1;
    if (c.tick_next != m_now) return;  // the tick was stopped (nohz idle) and not restarted for this jiffy
    if (c.curr < 0) {
        onIdleTick(cpu);
        return;
    }
    accountSegment(cpu);
    update_curr(cpu);
    updateLoadAvg(cpu, &m_tasks[c.curr]);  // entity_tick(): update_load_avg(UPDATE_TG), update_cfs_group()
    update_cfs_group(cpu);
    syncRq(cpu);
    m_metrics.bpf_len[cpu] = std::uint16_t(std::min<unsigned>(m_st.rq[cpu].nr_running, 65535));
    if (!c.queue.empty()) checkPreemptTick(cpu);
    // rq->idle_balance = idle_cpu(cpu): the patched idle_cpu() can call a busy CPU idle.
    const bool idle_balance = idle_cpu(m_st, m_cfg.knobs, cpu);
    // trigger_load_balance(): raise SCHED_SOFTIRQ when due, then nohz_balancer_kick(); the
    // softirq (run_rebalance_domains) runs on the way out of the tick interrupt.
    const bool due = m_st.jiffies >= c.next_balance;
    nohzBalancerKick(cpu, idle_balance);
    if (due) {
        c.last_blocked_load_update_tick = m_st.jiffies;  // run_rebalance_domains(): update_blocked_averages() (the update above)
        rebalanceDomains(cpu, idle_balance ? IdleType::CPU_IDLE : IdleType::CPU_NOT_IDLE);
    }
    c.tick_next = m_now + m_jiffyNs;
    queueTick(cpu);
    if (c.need_resched && c.curr >= 0) {
        schedule(cpu);
    } else if (c.curr >= 0) {
        startSegment(cpu);  // speed or pending charge may have changed
    }
}

// The cpuidle governor's tick decision (menu: "Don't stop the tick if ... the expected idle
// duration is shorter than the tick period length"), on idle entry and after each idle tick.
bool Engine::idleStopsTick(int cpu) const {
    if (!m_cfg.knobs.idle_retain_tick) return true;
    return m_cpus[std::size_t(cpu)].predicted_idle >= m_jiffyNs;
}

// scheduler_tick() on the idle task (the tick was kept): the rq clock (clock_idle), the
// periodic balance as CPU_IDLE when due, then the idle loop asks the governor again.
void Engine::onIdleTick(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    m_metrics.idle_ticks++;
    rq.clock_idle = m_now;  // update_rq_clock() while curr is the idle task
    const bool idle_balance = idle_cpu(m_st, m_cfg.knobs, cpu);
    if (m_st.jiffies >= c.next_balance) {
        // run_rebalance_domains(): update_blocked_averages(), then rebalance_domains().
        updateBlockedAverages(cpu);
        rebalanceDomains(cpu, idle_balance ? IdleType::CPU_IDLE : IdleType::CPU_NOT_IDLE);
    }
    // The tick ended an idle interval as the governor sees it.
    const std::int64_t dur = m_now - c.idle_tick_from;
    c.predicted_idle = c.predicted_idle == 0 ? dur : (c.predicted_idle * 7 + dur) / 8;
    c.idle_tick_from = m_now;
    if (c.curr < 0 && c.queue.empty() && !c.need_resched && idleStopsTick(cpu)) {
        c.tick_next = -1;  // tick_nohz_idle_stop_tick()
        nohzBalanceEnterIdle(cpu);
        return;
    }
    c.tick_next = m_now + m_jiffyNs;
    queueTick(cpu);
}

void Engine::onSample() {
    for (int c = 0; c < m_nrCpus; ++c) m_rowBuf[c] = std::uint16_t(std::min<unsigned>(m_st.rq[c].nr_running, 65535));
    feedSteadyState();
    m_metrics.timeline.push(m_now, m_rowBuf.data());
    m_metrics.bpf_timeline.push(m_now, m_metrics.bpf_len.data());
    push(m_now + m_cfg.sample_period_ns, EvSample, 0);
}

// The steady-state detector's cumulative counters (the open busy and rq-length intervals
// included), and the workloads' progress (-1 when one of them cannot say).
void Engine::feedSteadyState() {
    Metrics& m = m_metrics;
    SteadyCounters sc;
    sc.t = m_now;
    for (int c = 0; c < m_nrCpus; ++c) {
        const std::int64_t open = m_now - m.last_change[c];
        sc.busy_cpu_ns += double(m.busy_ns[c] + (m.cur_busy[c] ? open : 0));
        sc.rq_len_area += (double(m.rqlen_area[c]) + double(m.cur_len[c]) * double(open)) / double(m_nrCpus);  // per CPU
    }
    sc.migrations = m.migrationsTotal();
    sc.ctx_switches = m.ctx_switches;
    // SIS_UTIL's state: the LLCs' nr_idle_scan as it stands (it changes only at a balance of
    // an LLC domain), and how many placements found it 0 and did not scan.
    sc.placements = m.decisions;
    sc.sis_util_aborts = m.stage2[std::size_t(Stage2::SIS_UTIL_ABORT)];
    if (m_cfg.knobs.SIS_UTIL && !m_llcShared.empty()) {
        double scan = 0, zero = 0;
        for (int id : m_llcShared) {
            const int n = m_st.shared[std::size_t(id)].nr_idle_scan;
            scan += n;
            zero += n == 0;
        }
        sc.idle_scan = scan / double(m_llcShared.size());
        sc.idle_scan_zero = zero / double(m_llcShared.size());
    }
    double prog = 0;
    int n = 0;
    for (const auto& w : m_workloads) {
        if (w->background()) continue;
        const double p = w->progress(*this);
        if (p < 0) {
            n = -1;
            break;
        }
        prog += p;
        ++n;
    }
    sc.progress = n > 0 ? prog / n : -1;
    m.steady.sample(sc);
}

// ---------------------------------------------------------------------------
// Load balancing (fair.c load_balance and friends, 6.1, without misfit/asym/NUMA-balancing).
// The statistics and decisions are sched_balance.cpp's pure functions; here the
// engine's side: detach_tasks/attach_tasks, active balance, the intervals, nohz.

int Engine::loadBalance(int this_cpu, int level, IdleType idle, bool* continue_balancing) {
    const auto& doms = m_st.sd->domains(this_cpu);
    const SchedDomain& sd = doms[std::size_t(level)];
    Cpu& me = m_cpus[this_cpu];
    m_metrics.lb_calls++;
    LbEnv env;
    env.sd = &sd;
    env.child = level > 0 ? &doms[std::size_t(level - 1)] : nullptr;
    env.has_parent = level + 1 < int(doms.size());
    env.dst_cpu = this_cpu;
    env.idle = idle;
    env.nr_balance_failed = me.nr_balance_failed[level];
    // cpumask_and(cpus, sched_domain_span(sd), cpu_active_mask)
    env.cpus = sd.span;
    sd.span.forEach([&](int c) {
        if (!m_st.rq[c].active) env.cpus.clear(c);
    });
    int ld_moved = 0;
    bool active_balance = false;
    int busiest = -1;
    auto out_balanced = [&]() {
        // out_balanced / out_all_pinned: nr_balance_failed = 0; out_one_pinned: the interval
        // grows, except for newidle balancing ("balance_interval skyrocketing").
        m_metrics.lb_balanced++;
        me.nr_balance_failed[level] = 0;
        if (idle != IdleType::CPU_NEWLY_IDLE && me.balance_interval[level] < sd.max_interval) me.balance_interval[level] *= 2;
        return 0;
    };
redo:
    if (!should_we_balance(m_st, m_cfg.knobs, this_cpu, sd, idle)) {
        *continue_balancing = false;
        return out_balanced();
    }
    {
        SdLbStats sds;
        const int group = find_busiest_group(m_st, m_cfg.knobs, env, sds);
        if (balance_updates_nr_idle_scan(*m_st.sd, m_cfg.knobs, this_cpu, sd, idle)) {  // update_idle_cpu_scan()
            if (SdShared* sh = m_st.llcShared(this_cpu)) sh->nr_idle_scan = update_idle_cpu_scan(sd.span_weight, sds.sum_util, sd.imbalance_pct);
        }
        if (group < 0) return out_balanced();
        busiest = find_busiest_queue(m_st, m_cfg.knobs, env, sd.groups[std::size_t(group)]);
        if (busiest < 0 || busiest == this_cpu) return out_balanced();
    }
    env.src_cpu = busiest;
    env.flags |= LBF_ALL_PINNED;
    if (m_st.rq[busiest].nr_running > 1) {
        env.loop_max = std::min<unsigned>(sysctl_sched_nr_migrate, m_st.rq[busiest].nr_running);
        for (;;) {  // more_balance
            const int cur_ld_moved = detachAttachTasks(env, level);
            ld_moved += cur_ld_moved;
            if (!(env.flags & LBF_NEED_BREAK)) break;
            env.flags &= ~LBF_NEED_BREAK;
            if (env.loop >= m_st.rq[busiest].nr_running) break;  // tried all running tasks
        }
        // All tasks on this runqueue were pinned by CPU affinity.
        if (env.flags & LBF_ALL_PINNED) {
            env.cpus.clear(busiest);
            bool subset = true;
            env.cpus.forEach([&](int c) {
                if (!sd.groups.front().test(c)) subset = false;
            });
            if (!subset) {
                env.loop = 0;
                env.loop_break = sched_nr_migrate_break;
                goto redo;
            }
            m_metrics.lb_balanced++;  // out_all_pinned
            me.nr_balance_failed[level] = 0;
            if (idle != IdleType::CPU_NEWLY_IDLE && me.balance_interval[level] < sd.max_interval) me.balance_interval[level] *= 2;
            return 0;
        }
    }
    if (!ld_moved) {
        m_metrics.lb_failed++;
        // "Increment the failure counter only on periodic balance."
        if (idle != IdleType::CPU_NEWLY_IDLE) me.nr_balance_failed[level]++;
        env.nr_balance_failed = me.nr_balance_failed[level];
        if (need_active_balance(m_st, env)) {
            Cpu& b = m_cpus[busiest];
            // Don't kick the active_load_balance_cpu_stop if busiest's curr can't run here.
            if (b.curr >= 0 && !m_tasks[b.curr].t.cpus_ptr->test(this_cpu)) {
                // out_one_pinned
                if (idle != IdleType::CPU_NEWLY_IDLE && me.balance_interval[level] < sd.max_interval) me.balance_interval[level] *= 2;
                return 0;
            }
            env.flags &= ~LBF_ALL_PINNED;
            if (!b.active_balance) {
                b.active_balance = true;
                active_balance = true;
                activeBalance(busiest, this_cpu);
            }
        }
    } else {
        me.nr_balance_failed[level] = 0;
    }
    // "We were unbalanced, so reset the balancing interval" (unless an active balance was
    // kicked and is no longer needed).
    if (!active_balance || need_active_balance(m_st, env)) me.balance_interval[level] = sd.min_interval;
    return ld_moved;
}

// rq->cfs_tasks as an intrusive list of task ids (SimTask::cfs_newer / cfs_older).
void Engine::cfsListAdd(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    p.cfs_newer = -1;
    p.cfs_older = c.cfs_head;
    if (c.cfs_head >= 0) m_tasks[c.cfs_head].cfs_newer = id;
    else c.cfs_tail = id;
    c.cfs_head = id;
}

void Engine::cfsListDel(int cpu, int id) {
    Cpu& c = m_cpus[cpu];
    SimTask& p = m_tasks[id];
    if (p.cfs_newer >= 0) m_tasks[p.cfs_newer].cfs_older = p.cfs_older;
    else c.cfs_head = p.cfs_older;
    if (p.cfs_older >= 0) m_tasks[p.cfs_older].cfs_newer = p.cfs_newer;
    else c.cfs_tail = p.cfs_newer;
    p.cfs_newer = p.cfs_older = -1;
}

MigrationCause Engine::causeOf(int this_cpu, IdleType idle) const {
    if (idle == IdleType::CPU_NEWLY_IDLE) return MigrationCause::newidle;
    if (idle == IdleType::CPU_IDLE && this_cpu != m_stepCpu && m_cpus[this_cpu].curr < 0 && m_inNohz) return MigrationCause::nohz;
    return MigrationCause::periodic;
}

// detach_tasks() then attach_tasks(): walk src's cfs_tasks from the tail (the least recently
// enqueued or picked; curr included), a task that cannot move goes to the head.
int Engine::detachAttachTasks(LbEnv& env, int level) {
    const int src = env.src_cpu, dst = env.dst_cpu;
    Cpu& s = m_cpus[src];
    if (m_st.rq[src].nr_running <= 1) {  // emptied by another CPU
        env.flags &= ~LBF_ALL_PINNED;
        return 0;
    }
    if (env.imbalance <= 0) return 0;
    std::vector<int>& detached = m_tmp2;
    detached.clear();
    unsigned nr_running = m_st.rq[src].nr_running;
    // while (!list_empty(tasks)): p = list_last_entry(tasks), the least recently enqueued
    // or picked (curr included); one that cannot move goes to the head (and may come round again).
    while (s.cfs_tail >= 0) {
        const int id = s.cfs_tail;
        // "We don't want to steal all, otherwise we may be treated likewise."
        if (env.idle != IdleType::CPU_NOT_IDLE && nr_running <= 1) break;
        env.loop++;
        // We've more or less seen every task there is, call it quits unless we haven't found any movable task yet.
        if (env.loop > env.loop_max && !(env.flags & LBF_ALL_PINNED)) break;
        // take a breather every nr_migrate tasks
        if (env.loop > env.loop_break) {
            env.loop_break += sched_nr_migrate_break;
            env.flags |= LBF_NEED_BREAK;
            break;
        }
        SimTask& p = m_tasks[id];
        bool ok = canMigrateTask(id, env, level);
        if (ok) {
            switch (env.migration_type) {
            case MigrationType::migrate_load: {
                const std::int64_t load = std::max<std::int64_t>(1, std::int64_t(p.t.avg.load_avg));  // task_h_load
                if (m_cfg.knobs.LB_MIN && load < 16 && !env.nr_balance_failed) ok = false;
                else if (shr_bound(load, env.nr_balance_failed) > env.imbalance) ok = false;
                else env.imbalance -= load;
                break;
            }
            case MigrationType::migrate_util: {
                const std::int64_t u = std::int64_t(task_util_est(p.t.avg));
                if (u > env.imbalance) ok = false;
                else env.imbalance -= u;
                break;
            }
            case MigrationType::migrate_task: env.imbalance--; break;
            case MigrationType::migrate_misfit: ok = false; break;
            }
        }
        if (!ok) {  // next: list_move(&p->se.group_node, tasks), to the head
            cfsListDel(src, id);
            cfsListAdd(src, id);
            continue;
        }
        // detach_task(): the balancing CPU holds src's lock and does the detach's work
        m_tgPayer = m_balancingOn >= 0 ? m_balancingOn : dst;
        dequeueTask(src, id, false);
        m_tgPayer = -1;
        nr_running--;
        detached.push_back(id);
        // CONFIG_PREEMPTION: newidle balancing stops after the first task.
        if (env.idle == IdleType::CPU_NEWLY_IDLE) break;
        if (env.imbalance <= 0) break;
    }
    if (detached.empty()) return 0;
    // attach_tasks(): env->tasks was built with list_add, so the last detached comes first;
    // attach_task() = activate_task + check_preempt_curr.
    const MigrationCause cause = causeOf(dst, env.idle);
    const int from = m_balancingOn >= 0 ? m_balancingOn : dst;
    for (auto it = detached.rbegin(); it != detached.rend(); ++it) {
        migrateTask(*it, src, dst, cause, dst);
        enqueueTask(dst, *it, false, true);
        m_metrics.lb_moved_tasks++;
        Cpu& d = m_cpus[dst];
        if (d.curr >= 0 && !d.need_resched) {  // attach_task(): check_preempt_curr() against a running curr
            Decision dummy;
            Waker w;
            w.cpu = from;
            w.in_task = false;
            w.current_ptr = &m_tasks[d.curr].t;
            WakeCtx ctx{m_st, m_cfg.knobs, w, dummy, false};
            if (check_preempt_curr(ctx, m_tasks[*it].t, dst, 0, false, dst)) {
                setBuddies(dst, *it, true, false);
                reschedCpu(dst, from);
            }
        }
    }
    // check_preempt_curr on this CPU: an idle CPU reschedules (a newidle balance is already in schedule()).
    if (m_cpus[dst].curr < 0 && env.idle != IdleType::CPU_NEWLY_IDLE) reschedCpu(dst, m_balancingOn >= 0 ? m_balancingOn : dst);
    return int(detached.size());
}

// can_migrate_task(): affinity (clears LBF_ALL_PINNED), not running, not cache hot unless
// balancing failed often enough; active balance moves anything that may run on dst.
bool Engine::canMigrateTask(int id, LbEnv& env, int level) const {
    const SimTask& p = m_tasks[id];
    if (p.t.is_per_cpu_kthread()) return false;
    if (!p.t.cpus_ptr->test(env.dst_cpu)) {
        env.flags |= LBF_SOME_PINNED;
        return false;
    }
    env.flags &= ~LBF_ALL_PINNED;
    const Cpu& s = m_cpus[env.src_cpu];
    if (s.curr == id) return false;  // task_on_cpu
    if (env.flags & LBF_ACTIVE_LB) return true;
    const SchedDomain& sd = m_st.sd->domains(env.dst_cpu)[std::size_t(level)];
    TaskHotInput in;
    in.src_clock_task = m_now;
    in.exec_start = p.t.exec_start;
    in.dst_nr_running = m_st.rq[env.dst_cpu].nr_running;
    in.sd_flags = sd.flags;
    in.wakee_placed = p.t.wakee_placed;
    in.is_buddy = s.next_buddy == id || s.last_buddy == id;  // CACHE_HOT_BUDDY
    const bool hot = task_hot(m_st, m_cfg.knobs, in);
    return can_migrate_hot(hot, env.nr_balance_failed, sd.cache_nice_tries);
}

// stop_one_cpu_nowait(busiest, active_load_balance_cpu_stop): the stopper preempts busiest's
// curr and detach_one_task() moves the first movable task from the tail of cfs_tasks
// (with one CFS task there, the one that was running) to `dst`.
void Engine::activeBalance(int busiest, int dst) {
    Cpu& b = m_cpus[busiest];
    b.active_balance = false;  // cleared when the stopper is done
    // "Is there any task to move?": busiest_rq->nr_running <= 1 counts the stopper itself.
    if (m_st.rq[busiest].nr_running < 1) return;
    // The stopper runs: curr is put back (still on the rq, at its list position).
    int id = -1;
    for (int t = b.cfs_tail; t >= 0; t = m_tasks[t].cfs_newer)  // detach_one_task(): list_for_each_entry_reverse
        if (m_tasks[t].t.cpus_ptr->test(dst) && !m_tasks[t].t.is_per_cpu_kthread()) {
            id = t;
            break;
        }
    if (id < 0) return;
    const bool wasCurr = b.curr == id;
    if (b.curr >= 0) accountSegment(busiest);
    dequeueTask(busiest, id, false);
    migrateTask(id, busiest, dst, MigrationCause::active, busiest);
    enqueueTask(dst, id, false, true);
    m_metrics.lb_moved_tasks++;
    if (wasCurr) {
        // The stopper ran on `busiest`: it picks its next task (sched_switch from the pushed one).
        b.switch_from = id;
        b.switch_state = 'R';
        schedule(busiest);
    }
    if (m_cpus[dst].curr < 0) reschedCpu(dst, busiest);
    else reschedCpu(dst, dst);
}

void Engine::rebalanceDomains(int cpu, IdleType idle) {
    Cpu& c = m_cpus[cpu];
    bool continue_balancing = true;
    bool busy = rebalance_busy(m_st, cpu, idle);
    const int hz = m_cfg.knobs.hz;
    std::int64_t next_balance = m_st.jiffies + 60 * hz;  // earliest time when we have to do rebalance again
    bool update_next_balance = false;
    const auto& doms = m_st.sd->domains(cpu);
    bool need_decay = false;
    std::int64_t max_cost = 0;
    for (int l = 0; l < int(doms.size()); ++l) {
        // Decay the newidle max times here because this is a regular visit to all the domains.
        need_decay = updateNewidleCost(c, l, 0);
        max_cost += c.max_newidle_lb_cost[l];
        if (!continue_balancing) {  // another CPU of our group balances this level
            if (need_decay) continue;
            break;
        }
        std::int64_t interval = get_sd_balance_interval(doms[l], c.balance_interval[l], busy, hz, m_nrCpus);
        // SD_SERIALIZE: the `balancing` trylock always succeeds (one simulated CPU at a time).
        if (m_st.jiffies >= c.last_balance[l] + interval) {
            if (loadBalance(cpu, l, idle, &continue_balancing)) {
                idle = idle_cpu(m_st, m_cfg.knobs, cpu) ? IdleType::CPU_IDLE : IdleType::CPU_NOT_IDLE;
                busy = rebalance_busy(m_st, cpu, idle);
            }
            c.last_balance[l] = m_st.jiffies;
            interval = get_sd_balance_interval(doms[l], c.balance_interval[l], busy, hz, m_nrCpus);
        }
        if (next_balance > c.last_balance[l] + interval) {
            next_balance = c.last_balance[l] + interval;
            update_next_balance = true;
        }
    }
    // Ensure the rq-wide value also decays but keep it at a reasonable floor
    // (sysctl_sched_migration_cost) to avoid funnies with rq->avg_idle.
    if (need_decay) m_st.rq[cpu].max_idle_balance_cost = std::max(sysctlMigrationCost(), max_cost);
    if (update_next_balance) c.next_balance = next_balance;
}

// update_newidle_cost(): the largest cost seen; otherwise decayed by ~1 % once a second.
bool Engine::updateNewidleCost(Cpu& c, int level, std::int64_t cost) {
    std::int64_t& max = c.max_newidle_lb_cost[std::size_t(level)];
    std::int64_t& last = c.last_decay_max_lb_cost[std::size_t(level)];
    if (cost > max) {
        max = cost;
        last = m_st.jiffies;
    } else if (m_st.jiffies > last + m_cfg.knobs.hz) {  // time_after(jiffies, last + HZ)
        max = max * 253 / 256;
        last = m_st.jiffies;
        return true;
    }
    return false;
}

// sysctl_sched_migration_cost as the unsigned int it is: -1 ("always cache hot") is UINT_MAX.
std::int64_t Engine::sysctlMigrationCost() const {
    return m_cfg.knobs.migration_cost_ns < 0 ? std::int64_t(0xffffffffu) : m_cfg.knobs.migration_cost_ns;
}

std::int64_t Engine::lbNewidleCost(int span_weight) const {
    return m_cfg.cost.c(CostTerm::load_balance, m_cfg.cost.lb_newidle_base + m_cfg.cost.lb_newidle_per_cpu * std::int64_t(span_weight));
}

bool Engine::newidleBalance(int cpu) {
    Cpu& c = m_cpus[cpu];
    Rq& rq = m_st.rq[cpu];
    const auto& doms = m_st.sd->domains(cpu);
    m_metrics.newidle_calls++;
    std::int64_t next_balance = m_st.jiffies + m_cfg.knobs.hz;
    const int hz = m_cfg.knobs.hz;
    // update_next_balance(): the busy-free interval of each domain visited.
    auto update_next = [&](int l) {
        const std::int64_t interval = get_sd_balance_interval(doms[l], c.balance_interval[l], false, hz, m_nrCpus);
        next_balance = std::min(next_balance, c.last_balance[l] + interval);
    };
    // !rd->overload || avg_idle < this_rq->sd->max_newidle_lb_cost: no balancing (6.1 has no
    // sysctl_sched_migration_cost gate here).
    const std::int64_t lowest = doms.empty() ? 0 : c.max_newidle_lb_cost[0];
    int pulled = 0;
    if (!newidle_balance_begins(m_st, cpu, m_st.rd_overload, lowest)) {
        if (rq.ttwu_pending || !rq.active) return false;  // returned before the out: label
        if (!doms.empty()) update_next(0);
    } else {
        updateBlockedAverages(cpu);
        // The time load_balance() takes (t1 - t0 in the kernel) is the cost model's per domain.
        std::int64_t curr_cost = 0;
        bool cont = true;
        for (int l = 0; l < int(doms.size()); ++l) {
            update_next(l);
            if (rq.avg_idle < curr_cost + c.max_newidle_lb_cost[l]) break;
            if (doms[l].flags & SD_BALANCE_NEWIDLE) {
                int weight = 1;
                if (newidle_dice(m_cfg.knobs, c.ni[l], m_rng.next32(), &weight)) {
                    pulled = loadBalance(cpu, l, IdleType::CPU_NEWLY_IDLE, &cont);
                    if (m_cfg.knobs.NI_RANDOM && m_cfg.knobs.kernel == KernelVersion::V6_1) update_newidle_stats(c.ni[l], pulled ? weight : 0);
                    const std::int64_t domain_cost = lbNewidleCost(doms[l].span_weight);
                    updateNewidleCost(c, l, domain_cost);
                    curr_cost += domain_cost;
                }
            }
            // Stop searching for tasks to pull if there are now runnable tasks on this rq.
            if (pulled || !c.queue.empty() || !c.wakelist.empty()) break;
        }
        if (curr_cost > rq.max_idle_balance_cost) rq.max_idle_balance_cost = curr_cost;
        // The CPU spent curr_cost in here before it runs what it found. When it found nothing
        // it goes idle at once (the kernel's window in which rq->curr is still prev, so that
        // idle_cpu() is false, is not modelled).
        if (!c.queue.empty() && curr_cost > 0) {
            m_metrics.cost_lb += curr_cost;
            c.pending_charge += curr_cost;
        }
        if (!c.queue.empty() && !pulled) pulled = 1;
    }
    // out: move the next balance forward
    if (c.next_balance > next_balance) c.next_balance = next_balance;
    if (pulled) rq.idle_stamp = 0;
    else nohzNewidleBalance(cpu);
    return pulled > 0;
}

// nohz_balance_enter_idle(): the tick stopped on an idle CPU.
void Engine::nohzBalanceEnterIdle(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (!m_st.rq[cpu].active) return;
    c.has_blocked_load = true;
    if (!c.nohz_tick_stopped) {
        c.nohz_tick_stopped = true;  // cpumask_set_cpu(cpu, nohz.idle_cpus_mask)
        m_nohzNrCpus++;
        if (SdShared* sh = m_st.llcShared(cpu)) sh->nr_busy_cpus--;  // set_cpu_sd_state_idle()
        m_nohzNeedsUpdate = true;
    }
    m_nohzHasBlocked = true;
}

// nohz_balance_exit_idle(): the first busy tick after the CPU left nohz idle.
void Engine::nohzBalanceExitIdle(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (!c.nohz_tick_stopped) return;
    c.nohz_tick_stopped = false;
    m_nohzNrCpus--;
    if (SdShared* sh = m_st.llcShared(cpu)) sh->nr_busy_cpus++;  // set_cpu_sd_state_busy()
}

// nohz_balancer_kick(): from a busy CPU's tick, kick an idle load balancer when this CPU has
// two runnable tasks or its LLC has more than one busy CPU (nr_busy_cpus), at most once per
// jiffy (nohz.next_balance); a stats-only kick when blocked load is due (every 32 ms), and a
// NEXT kick when a CPU entered nohz idle since (nohz.needs_update).
void Engine::nohzBalancerKick(int cpu, bool idle_balance) {
    if (idle_balance) return;  // rq->idle_balance
    nohzBalanceExitIdle(cpu);
    if (m_nohzNrCpus == 0) return;  // none are in tickless mode
    const std::int64_t now = m_st.jiffies;
    unsigned flags = 0;
    if (m_nohzHasBlocked && now > m_nohzNextBlocked) flags = NOHZ_STATS_KICK;
    if (now >= m_nohzNextBalance) {
        const Rq& rq = m_st.rq[cpu];
        if (rq.nr_running >= 2) {
            flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
        } else if (const SdShared* sh = m_st.llcShared(cpu); sh && sh->nr_busy_cpus > 1) {
            flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
        }
        // check_cpu_capacity(), asym packing and asym capacity: not in the simulated machines.
    }
    if (m_nohzNeedsUpdate) flags |= NOHZ_NEXT_KICK;
    if (flags) kickIlb(cpu, flags);
}

// kick_ilb() / find_new_ilb(): the first CPU of nohz.idle_cpus_mask (but this one) that
// idle_cpu() calls idle gets the flags, and an IPI unless a kick is already pending there.
void Engine::kickIlb(int from_cpu, unsigned flags) {
    if (flags & NOHZ_BALANCE_KICK) m_nohzNextBalance = m_st.jiffies + 1;
    int ilb = -1;
    for (int o = 0; o < m_nrCpus; ++o)
        if (o != from_cpu && m_cpus[o].nohz_tick_stopped && idle_cpu(m_st, m_cfg.knobs, o)) {
            ilb = o;
            break;
        }
    if (ilb < 0) return;
    Cpu& t = m_cpus[ilb];
    const unsigned old = t.nohz_flags;
    t.nohz_flags |= flags;
    if (old & NOHZ_KICK_MASK) return;
    m_metrics.nohz_kicks++;
    push(m_now + kickDelay(ilb, from_cpu), EvNohzKick, ilb, 0);  // smp_call_function_single_async(): IPI or polling flag
}

// nohz_csd_func() and the SCHED_SOFTIRQ it raises: run_rebalance_domains() ->
// nohz_idle_balance() -> _nohz_idle_balance(): for every CPU of nohz.idle_cpus_mask after
// the ilb (wrapping, the ilb last) that is idle: its blocked load (STATS), its periodic
// balance as CPU_IDLE when due (BALANCE); nohz.next_balance from their rq->next_balance.
void Engine::onNohzKick(int ilb) {
    Cpu& me = m_cpus[ilb];
    const unsigned flags = me.nohz_flags & NOHZ_KICK_MASK;
    me.nohz_flags &= ~(NOHZ_KICK_MASK | NOHZ_NEWILB_KICK);
    if (!idle_cpu(m_st, m_cfg.knobs, ilb) || me.need_resched) return;  // rq->idle_balance && !need_resched()
    nohzIdleBalance(ilb, flags);
}

// _nohz_idle_balance(this_rq, flags), for the kick above and for nohz_run_idle_balance().
void Engine::nohzIdleBalance(int ilb, unsigned flags) {
    Cpu& me = m_cpus[ilb];
    const std::int64_t now = m_st.jiffies;
    std::int64_t next_balance = now + 60 * m_cfg.knobs.hz;
    bool has_blocked_load = false, update_next_balance = false;
    if (flags & NOHZ_STATS_KICK) m_nohzHasBlocked = false;
    if (flags & NOHZ_NEXT_KICK) m_nohzNeedsUpdate = false;
    m_inNohz = true;
    m_balancingOn = ilb;
    bool aborted = false;
    for (int k = 1; k <= m_nrCpus; ++k) {
        const int o = (ilb + k) % m_nrCpus;  // for_each_cpu_wrap(balance_cpu, nohz.idle_cpus_mask, this_cpu+1)
        Cpu& c = m_cpus[o];
        if (!c.nohz_tick_stopped || !idle_cpu(m_st, m_cfg.knobs, o)) continue;
        // If this CPU gets work to do, stop the load balancing work being done for other CPUs.
        if (me.need_resched) {
            if (flags & NOHZ_STATS_KICK) has_blocked_load = true;
            if (flags & NOHZ_NEXT_KICK) m_nohzNeedsUpdate = true;
            aborted = true;
            break;
        }
        if (flags & NOHZ_STATS_KICK) has_blocked_load |= updateNohzStats(o);
        if (m_st.jiffies >= c.next_balance) {
            if (c.curr < 0) m_st.rq[o].clock_idle = m_now;  // update_rq_clock(rq)
            if (flags & NOHZ_BALANCE_KICK) rebalanceDomains(o, IdleType::CPU_IDLE);
        }
        if (next_balance > c.next_balance) {
            next_balance = c.next_balance;
            update_next_balance = true;
        }
    }
    if (!aborted) {
        if (update_next_balance) m_nohzNextBalance = next_balance;
        if (flags & NOHZ_STATS_KICK) m_nohzNextBlocked = now + msecs_to_jiffies(32, m_cfg.knobs.hz);  // LOAD_AVG_PERIOD
    }
    if (has_blocked_load) m_nohzHasBlocked = true;  // there is still blocked load: enable periodic update
    m_balancingOn = -1;
    m_inNohz = false;
}

// nohz_newidle_balance(): newidle_balance() found nothing to pull. A CPU that expects to stay
// idle a while (avg_idle >= sysctl_sched_migration_cost) while the idle CPUs' blocked load
// is due (nohz.has_blocked, jiffies not before nohz.next_blocked) marks itself
// NOHZ_NEWILB_KICK: it updates that load itself on its way into idle (nohzRunIdleBalance).
void Engine::nohzNewidleBalance(int cpu) {
    if (m_st.rq[cpu].avg_idle < sysctlMigrationCost()) return;  // will wake up very soon
    if (!m_nohzHasBlocked || m_st.jiffies < m_nohzNextBlocked) return;
    m_cpus[cpu].nohz_flags |= NOHZ_NEWILB_KICK;
}

// nohz_run_idle_balance(), first thing in do_idle(): a NOHZ_NEWILB_KICK alone (no kick pending,
// whose SCHED_SOFTIRQ would do the same) runs _nohz_idle_balance(NOHZ_STATS_KICK) here, unless
// the CPU has something to run already. (Like the kick's balancing, it takes no simulated time.)
void Engine::nohzRunIdleBalance(int cpu) {
    Cpu& c = m_cpus[cpu];
    const unsigned flags = c.nohz_flags;
    c.nohz_flags &= ~NOHZ_NEWILB_KICK;
    if (flags != NOHZ_NEWILB_KICK || c.need_resched) return;
    m_metrics.newilb_runs++;
    nohzIdleBalance(cpu, NOHZ_STATS_KICK);
}

// update_blocked_averages(): the CPU's cfs_rq averages brought to now, stamped with the jiffy
// (update_blocked_load_tick()).
void Engine::updateBlockedAverages(int cpu) {
    m_cpus[cpu].last_blocked_load_update_tick = m_st.jiffies;
    updateLoadAvg(cpu, nullptr);
    syncRq(cpu);
}

// update_nohz_stats(): update_blocked_averages() of an idle CPU with blocked load (its rq
// clock update stamps clock_idle); true while some of its load has not decayed away.
bool Engine::updateNohzStats(int cpu) {
    Cpu& c = m_cpus[cpu];
    if (!c.has_blocked_load) return false;
    if (!c.nohz_tick_stopped) return false;
    if (m_st.jiffies <= c.last_blocked_load_update_tick) return true;  // updated this jiffy already
    updateBlockedAverages(cpu);
    if (c.curr < 0) m_st.rq[cpu].clock_idle = m_now;
    c.has_blocked_load = c.avg.load_avg != 0 || c.avg.util_avg != 0 || c.avg.runnable_avg != 0;
    return c.has_blocked_load;
}

// ---------------------------------------------------------------------------
// Tasks

// post_init_entity_util_avg(): wake_up_new_task() calls it after select_task_rq(), on the
// chosen CPU's cfs_rq: half the spare capacity, or the task's share of that cfs_rq's util.
void Engine::postInitEntityUtilAvg(int cpu, SimTask& p) {
    const Cpu& c = m_cpus[cpu];
    const std::int64_t cpu_scale = m_cfg.topo->cpu(cpu).capacity;  // arch_scale_cpu_capacity()
    const std::int64_t util = std::int64_t(c.avg.util_avg);
    const std::int64_t cap = (cpu_scale - util) / 2;
    std::int64_t u = 0;
    if (cap > 0) {
        if (util != 0) u = std::min(util * 1024 / (std::int64_t(c.avg.load_avg) + 1), cap);  // se->load.weight: nice 0
        else u = cap;
    }
    p.t.avg.util_avg = std::uint64_t(u);
    p.t.avg.util_sum = std::uint32_t(p.t.avg.util_avg * (LOAD_AVG_MAX - 1024));
    p.t.avg.runnable_avg = p.t.avg.util_avg;
    p.t.avg.runnable_sum = p.t.avg.runnable_avg * (LOAD_AVG_MAX - 1024);
}

int Engine::spawn(std::uint16_t workload, const std::string& comm, int mm, int parent, std::uint8_t role, std::int32_t idx,
                  std::int64_t hot_set) {
    const int id = int(m_tasks.size());
    SimTask& p = m_tasks.emplace_back();
    p.t.pid = 1000 + id;
    m_comm.emplace_back(comm);
    p.t.setAffinity(m_cfg.topo->allCpus());
    p.workload = workload;
    p.role = role;
    p.idx = idx;
    p.mm = mm;
    p.hot_set = std::int32_t(std::min<std::int64_t>(hot_set, INT32_MAX));
    // init_entity_runnable_average(): a new task starts with full load and no utilization;
    // post_init_entity_util_avg() sets that once wake_up_new_task() has chosen its CPU.
    p.t.avg.last_update_time = 0;  // not attached yet
    p.t.avg.load_avg = 1024;
    p.t.avg.load_sum = std::uint64_t(LOAD_AVG_MAX - 1024);
    const int pcpu = parent >= 0 ? m_tasks[parent].t.cpu : 0;
    p.t.cpu = pcpu;
    p.t.wake_cpu = pcpu;
    p.t.recent_used_cpu = pcpu;
    p.state = TaskState::Blocked;
    // task_fork_fair(): child vruntime from the parent, place_entity(initial) with START_DEBIT, made relative.
    const Rq& prq = m_st.rq[pcpu];
    std::int64_t vr = parent >= 0 ? m_tasks[parent].t.vruntime : prq.min_vruntime;
    const std::int64_t vslice = sched_slice(std::int64_t(prq.nr_running) + 1);  // sched_vslice (nice 0)
    if (m_cfg.knobs.START_DEBIT) vr = std::max(vr, prq.min_vruntime + vslice);
    p.t.vruntime = vr - prq.min_vruntime;
    // wake_up_new_task(): select_task_rq(SD_BALANCE_FORK) through the slow path.
    Waker w;
    w.cpu = pcpu;
    w.in_task = true;
    w.current_ptr = parent >= 0 ? &m_tasks[parent].t : &m_idleTasks[pcpu];
    if (m_cpus[pcpu].curr >= 0) update_curr(pcpu);
    const bool tr = m_tracePid == p.t.pid || m_traceNext;
    Decision d = wake_up_new_task(m_st, m_cfg.knobs, p.t, w, tr);
    if (tr) traced(p.t.pid, d);
    const int cpu = d.cpu;
    m_metrics.wakeup_new++;
    m_metrics.recordDecision(m_now, p.t.pid, d);
    if (cpu != pcpu) {
        m_metrics.migrations[int(MigrationCause::fork)]++;
        m_metrics.migration_matrix[int(MigrationCause::fork)][int(distClass(*m_cfg.topo, pcpu, cpu))]++;
    }
    emitEvent(EvKind::sched_process_fork, pcpu, parent >= 0 ? m_tasks[parent].t.pid : 0, p.t.pid);
    emitEvent(EvKind::sched_wakeup_new, pcpu, p.t.pid, 0, cpu);
    p.t.cpu = cpu;
    p.t.on_rq = false;
    postInitEntityUtilAvg(cpu, p);
    // enqueue_entity(): update_load_avg(cfs_rq, se, UPDATE_TG | DO_ATTACH) decays the cfs_rq to
    // now first, then attaches the new entity (last_update_time 0: not aged) at that clock.
    enqueueTask(cpu, id, false, false);
    p.wake_time = m_now;
    setBuddies(cpu, id, d.preempted_curr, true);
    if (d.preempted_curr) reschedCpu(cpu, pcpu);
    if (parent >= 0) {
        const CostModel& cm = m_cfg.cost;
        charge(m_tasks[parent].mm == mm ? cm.fork_thread : cm.fork_process);
    }
    return id;
}

// ---------------------------------------------------------------------------
// Checks and digest

std::string Engine::checkInvariants() const {
    std::vector<int> where(m_tasks.size(), -1);
    std::vector<int> count(m_tasks.size(), 0);
    for (int c = 0; c < m_nrCpus; ++c) {
        const Cpu& cpu = m_cpus[c];
        const Rq& rq = m_st.rq[c];
        const unsigned n = unsigned(cpu.queue.size()) + (cpu.curr >= 0 ? 1u : 0u);
        if (rq.nr_running != n) return fmt::format("CPU {}: nr_running {} but {} tasks on the queue", c, rq.nr_running, n);
        if (rq.ttwu_pending != !cpu.wakelist.empty()) return fmt::format("CPU {}: ttwu_pending {} with {} on the wakelist", c, rq.ttwu_pending, cpu.wakelist.size());
        if ((rq.curr == CurrKind::Idle) != (cpu.curr < 0)) return fmt::format("CPU {}: rq->curr disagrees with the engine", c);
        if (cpu.curr < 0 && !cpu.queue.empty() && !cpu.resched_pending)
            return fmt::format("CPU {}: idle with {} queued tasks and no reschedule on the way (lost resched)", c, cpu.queue.size());
        if (!cpu.wakelist.empty() && !cpu.ipi_pending) return fmt::format("CPU {}: wakelist without a pending IPI", c);
        for (std::size_t i = 1; i < cpu.queue.size(); ++i)
            if (m_tasks[cpu.queue[i - 1]].t.vruntime > m_tasks[cpu.queue[i]].t.vruntime)
                return fmt::format("CPU {}: queue not in vruntime order", c);
        auto mark = [&](int id, const char* what) -> std::string {
            count[id]++;
            where[id] = c;
            const SimTask& p = m_tasks[id];
            if (p.t.cpu != c) return fmt::format("task {} is {} on CPU {} but task_cpu is {}", p.t.pid, what, c, p.t.cpu);
            return {};
        };
        if (cpu.curr >= 0) {
            if (m_tasks[cpu.curr].state != TaskState::Running) return fmt::format("CPU {}: curr pid {} not Running", c, m_tasks[cpu.curr].t.pid);
            if (auto e = mark(cpu.curr, "running"); !e.empty()) return e;
        }
        for (int id : cpu.queue) {
            if (m_tasks[id].state != TaskState::Runnable) return fmt::format("CPU {}: queued pid {} not Runnable", c, m_tasks[id].t.pid);
            if (auto e = mark(id, "queued"); !e.empty()) return e;
        }
        for (int id : cpu.wakelist) {
            if (auto e = mark(id, "on the wakelist"); !e.empty()) return e;
        }
        // cfs_tasks holds exactly curr and the queued tasks, linked both ways.
        std::size_t onList = 0;
        for (int id = cpu.cfs_head, newer = -1; id >= 0; newer = id, id = m_tasks[id].cfs_older) {
            if (m_tasks[id].cfs_newer != newer) return fmt::format("CPU {}: cfs_tasks broken at pid {}", c, m_tasks[id].t.pid);
            if (!m_tasks[id].t.on_rq || m_tasks[id].t.cpu != c) return fmt::format("CPU {}: pid {} on cfs_tasks but not queued here", c, m_tasks[id].t.pid);
            if (++onList > cpu.queue.size() + 1) return fmt::format("CPU {}: cfs_tasks longer than its runqueue", c);
        }
        if (onList != cpu.queue.size() + (cpu.curr >= 0 ? 1 : 0))
            return fmt::format("CPU {}: cfs_tasks has {} tasks, the runqueue {}", c, onList, cpu.queue.size() + (cpu.curr >= 0 ? 1 : 0));
    }
    for (std::size_t i = 0; i < m_tasks.size(); ++i) {
        const SimTask& p = m_tasks[i];
        const bool runnable = p.state == TaskState::Runnable || p.state == TaskState::Running;
        if (runnable && count[i] != 1) return fmt::format("task {} ({}) runnable but on {} queues", p.t.pid, taskComm(p.t.pid), count[i]);
        if (!runnable && count[i] != 0) return fmt::format("task {} ({}) not runnable but queued on CPU {}", p.t.pid, taskComm(p.t.pid), where[i]);
    }
    for (const auto& w : m_workloads)
        if (auto e = w->checkInvariants(*this); !e.empty()) return e;
    return {};
}

void Engine::check(const char* where) {
    m_invariantChecks++;
    if (auto e = checkInvariants(); !e.empty())
        throw std::logic_error(fmt::format("invariant violated after {} at {} ns: {}", where, m_now, e));
}

std::string Engine::dump() const {
    static const char* st[] = {"Runnable", "Running", "Blocked", "Exited"};
    std::string o = fmt::format("t={} events={}\n", m_now, events());
    for (std::size_t i = 0; i < m_tasks.size(); ++i) {
        const SimTask& p = m_tasks[i];
        o += fmt::format("  pid {} {} {} cpu {} pending {} wake_pending {} work_left {} a={} b={} c={} vr={} sum_exec={}\n", p.t.pid, taskComm(p.t.pid),
                         st[int(p.state)], p.t.cpu, int(p.pending), p.wake_pending, p.work_left, p.a, p.b, p.c, p.t.vruntime, p.sum_exec);
    }
    for (int c = 0; c < m_nrCpus; ++c) {
        const Cpu& x = m_cpus[c];
        o += fmt::format("  CPU {} curr {} queue {} wakelist {} nr_running {} need_resched {} resched_pending {} idle {} load {} util {} util_est {}\n", c,
                         x.curr >= 0 ? m_tasks[x.curr].t.pid : 0, x.queue.size(), x.wakelist.size(), m_st.rq[c].nr_running,
                         x.need_resched, x.resched_pending, x.in_idle, m_st.rq[c].load_avg, m_st.rq[c].util_avg, m_st.rq[c].util_est);
    }
    return o;
}

double Engine::progressFraction() const {
    double f = -1;
    for (const auto& w : m_workloads) {
        if (w->background()) continue;
        const double p = w->progress(*this);
        if (p < 0) continue;
        f = f < 0 ? p : std::min(f, p);
    }
    if (m_cfg.stop_ns > 0) f = std::max(f, double(m_now) / double(m_cfg.stop_ns));
    return f;
}

std::uint64_t Engine::digest() const {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv(h, std::uint64_t(m_now));
    h = fnv(h, events());
    for (std::size_t i = 0; i < m_tasks.size(); ++i) {
        const SimTask& p = m_tasks[i];
        h = fnv(h, std::uint64_t(p.sum_exec));
        h = fnv(h, std::uint64_t(p.t.cpu));
        h = fnv(h, std::uint64_t(p.state));
    }
    const Metrics& m = m_metrics;
    for (auto v : {m.ttwu_count, m.ttwu_local, m.ttwu_wakelist, m.ctx_switches, m.migrationsTotal(), m.lb_moved_tasks, m.ipis})
        h = fnv(h, v);
    for (auto v : m.stage2) h = fnv(h, v);
    h = fnv(h, m.wakeup_latency.count());
    h = fnv(h, std::uint64_t(m.wakeup_latency.max()));
    return h;
}

}  // namespace sched
