// SPDX-License-Identifier: GPL-2.0-or-later
// engine.cpp: the discrete-event simulation (see engine.h).
//
// Kernel correspondences are named at each function. Where the engine
// simplifies something the kernel does, the comment says so; those
// simplifications never change a wakeup decision's inputs beyond what is noted.
#include "sim/engine_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace sched {

namespace {

std::uint64_t fnv(std::uint64_t h, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}
}  // namespace

// ---------------------------------------------------------------------------
// Construction

Engine::Engine(EngineConfig cfg)
    : m_cfg(std::move(cfg)),
      m_nrCpus(m_cfg.topo->nrCpus()),
      m_st(m_cfg.topo),
      m_tun(CfsTunables::forCpus(m_nrCpus)),
      m_rng(m_cfg.seed),
      m_metrics(m_nrCpus, m_cfg.topo->nrLlcs(), m_cfg.sample_period_ns, m_cfg.timeline_rows, m_cfg.decision_ring) {
    m_st.hook = this;
    m_proxyOn = m_cfg.knobs.proxy_exec;
    // Proxy execution runs without coalescing: its donors and handoffs are not in the plans'
    // rules (a run is still exact, one event per step).
    m_coalesce = m_cfg.coalesce && m_cfg.max_events == 0 && !m_proxyOn;
    m_coalesceAllowed = m_coalesce;
    m_govOn = m_coalesceAllowed;
    if (const char* g = std::getenv("SCHEDLAB_COALESCE_GOVERNOR")) m_govOn = std::strcmp(g, "0") != 0;  // measuring: plans everywhere
    m_plans.resize(std::size_t(m_nrCpus));
    m_metrics.event_ring_cap = m_cfg.event_ring;
    m_st.now_ns = 0;
    m_st.jiffies = 0;
    m_cpus.resize(std::size_t(m_nrCpus));
    m_idleTasks.resize(std::size_t(m_nrCpus));
    m_cpuTimers.resize(std::size_t(m_nrCpus));
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
    if (const char* t = std::getenv("SCHEDLAB_TRACE_PID")) m_tracePid = std::atoi(t);             // debugging: print one task's decisions
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

void Engine::setBurstAt(int cpu, std::int64_t t, std::int64_t ctime) {
    if (std::uint64_t(ctime) >> (64 - kCpuBits)) throw std::logic_error(fmt::format("burst created at {} ns: past the order key's range", ctime));
    m_bq.set(cpu, t, std::uint64_t(ctime) << kCpuBits | std::uint64_t(cpu), m_now);
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
    // Instructions of tests/bench/steady_window --coalesce, by limit: 4 -> 3.738 G, 6 -> 3.663 G,
    // 8 -> 3.631 G, 16 -> 3.716 G, 32 -> 3.900 G.
    const bool whole = done + 1 == pl.n;
    p.plan_limit = std::uint8_t(std::clamp<int>(whole ? 2 * int(p.plan_limit) : 2 * done, 2, kMaxPlan));
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
    m_coalesceWanted = on;
    applyCoalescing();
}

void Engine::applyCoalescing() {
    const bool on = m_coalesceAllowed && m_coalesceWanted && m_govOff == 0;
    if (on == m_coalesce) return;
    if (!on) finishPlans();  // every plan cut at the current event: what a change of assumptions does anyway
    m_coalesce = on;
}

// Between events, every kGovWindow real events (engine.h): coalescing on while it pays. Its
// choices depend on event counts only, and either choice gives the same run (Coalescing tests).
void Engine::governCoalescing() {
    m_govEvents = 0;
    const std::uint64_t planned = m_plannedSteps - m_govPlanned0;
    m_govPlanned0 = m_plannedSteps;
    if (m_govOff > 0) {
        m_govPausedWindows++;
        if (--m_govOff == 0) applyCoalescing();  // measured again over the next window
        return;
    }
    if (!m_coalesce) return;  // turned off from outside (Step event): nothing was measured
    // The planned share of the window's steps: planned / (planned + real).
    if (planned * 100 < kGovPayPct * (planned + kGovWindow)) {
        m_govOff = m_govPause;
        m_govPause = std::min(2 * m_govPause, kGovMaxPause);
        applyCoalescing();
    } else {
        m_govPause = 2;
    }
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
        m_tracedCount++;
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
std::int64_t Engine::maxNewidleLbCost(int cpu, int level) const { return m_cpus[std::size_t(cpu)].max_newidle_lb_cost[std::size_t(level)]; }
int Engine::balanceInterval(int cpu, int level) const { return m_cpus[std::size_t(cpu)].balance_interval[std::size_t(level)]; }
int Engine::nrBalanceFailed(int cpu, int level) const { return m_cpus[std::size_t(cpu)].nr_balance_failed[std::size_t(level)]; }
std::int64_t Engine::nextBalance(int cpu) const { return m_cpus[std::size_t(cpu)].next_balance; }
std::int64_t Engine::removedLoad(int cpu) const { return m_cpus[std::size_t(cpu)].removed_load; }
bool Engine::nohzIdle(int cpu) const { return m_cpus[std::size_t(cpu)].nohz_tick_stopped; }

void Engine::setKnobs(Knobs k) {
    k.hz = m_cfg.knobs.hz;                  // the tick's period is built into queued events
    k.proxy_exec = m_cfg.knobs.proxy_exec;  // a boot parameter: donors on the runqueues depend on it
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
            bt != kNever && (m_heap.empty() || evBefore(bt, bctime, evTag(EvBurstEnd, bc, 0), m_heap.top().t, m_heap.top().ctime, m_heap.top().tag));
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
        if (m_govOn && ++m_govEvents == kGovWindow) governCoalescing();
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
        closeIntegrals();
    }
    return !m_done;
}

void Engine::closeIntegrals() {
    for (int c = 0; c < m_nrCpus; ++c) recordStateChange(c);
    for (std::size_t l = 0; l < m_metrics.llc_idle.size(); ++l) {
        if (m_metrics.llc_idle[l] > 0 && m_metrics.llc_over[l] > 0) m_metrics.idle_while_overloaded_ns[l] += m_now - m_metrics.llc_last[l];
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
    case EvTimerIrq:
        m_cpus[std::size_t(a)].timer_irq_pending = false;
        hrtimerInterrupt(a);
        return;
    case EvSample: onSample(); return;
    case EvNohzKick: onNohzKick(a); return;
    case EvTtwuQueue: onTtwuQueue(int(e.b())); return;
    case EvTtwuActivate: ttwuActivate(int(e.b())); return;
    }
}

// ---------------------------------------------------------------------------
// Running tasks: segments of work at the CPU's current speed

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
        if (SimTask& t = m_tasks[m_cpus[o].curr]; t.watch_off_cpu) m_workloads[t.workload]->segmentMoved(*this, t);
    }
}

void Engine::interruptWork(int id) {
    SimTask& p = m_tasks[id];
    if (id == m_stepping || p.pending != Action::Run) return;
    if (p.state == TaskState::Running) {
        const int cpu = p.t.cpu;
        accountSegment(cpu);  // its plan (if any) ends here too
        p.work_left = 0;
        startSegment(cpu);
    } else if (p.state == TaskState::Runnable) {
        p.work_left = 0;
    }
}

bool Engine::needResched(int cpu) const { return m_cpus[cpu].need_resched; }

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
                if (k == Action::Block && taskIsBlocked(id)) {
                    // Proxy execution: __schedule()'s try_to_deactivate_task(..., !task_is_blocked(prev))
                    // leaves a task blocked on a mutex on its runqueue (a donor), in TASK_UNINTERRUPTIBLE.
                    m_proxyBlocking = true;
                    schedule(cpu);
                    return;
                }
                if (k == Action::Sleep) {  // do_nanosleep(): hrtimer_sleeper_start_expires(), then schedule()
                    const TimerInfo& ti = m_hrt[std::size_t(id)];
                    armTimer(id, cpu, ti.next_abs ? p.pending_ns - m_now : p.pending_ns, ti.next_slack, ti.next_pinned);
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
                if (p.watch_off_cpu) m_workloads[p.workload]->offCpu(*this, p);
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
            if (a.kind == Action::Sleep) {
                TimerInfo& ti = m_hrt[std::size_t(id)];
                ti.next_slack = a.slack;
                ti.next_pinned = a.pinned;
                ti.next_abs = a.abs;
            }
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
            // The shortest plan while a wakee is on its way to this CPU: its activation would likely
            // cut a longer one (a wakeup preemption), and a plan cut early costs more than it saves.
            pl.limit = std::min<int>(c.ttwu_inflight > 0 ? 2 : p.plan_limit, kMaxPlan);
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

void Workload::state(StateArchive&) { throw std::logic_error("workload " + name() + " cannot be saved in a checkpoint"); }

void Engine::reserveTasks(std::size_t n) {
    m_comm.reserve(n);
    m_hrt.reserve(n);
    if (m_proxyOn) m_blocked.reserve(n);
}

int Engine::spawn(std::uint16_t workload, const std::string& comm, int mm, int parent, std::uint8_t role, std::int32_t idx, std::int64_t hot_set,
                  const CpuMask* affinity) {
    const int id = int(m_tasks.size());
    SimTask& p = m_tasks.emplace_back();
    p.t.pid = 1000 + id;
    m_comm.emplace_back(comm);
    if (m_proxyOn) m_blocked.emplace_back();
    m_hrt.emplace_back();
    // The workload's taskset mask (cpus_ptr), else every CPU.
    const CpuMask* allowed = affinity ? affinity : workload < m_workloads.size() ? m_workloads[workload]->cpus() : nullptr;
    p.t.setAffinity(allowed ? *allowed : m_cfg.topo->allCpus());
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
    int pcpu = parent >= 0 ? m_tasks[parent].t.cpu : 0;
    // A workload's first task starts on an allowed CPU, as taskset's sched_setaffinity() moves
    // itself there before exec (__set_cpus_allowed_ptr()). Its children share its mask and fork
    // from a CPU in it.
    if (parent < 0 && !p.t.cpus_ptr->test(pcpu)) pcpu = p.t.cpus_ptr->first();
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
        const unsigned n = nrOnRq(cpu);
        if (rq.nr_running != n) return fmt::format("CPU {}: nr_running {} but {} tasks on the queue", c, rq.nr_running, n);
        if (rq.ttwu_pending != !cpu.wakelist.empty())
            return fmt::format("CPU {}: ttwu_pending {} with {} on the wakelist", c, rq.ttwu_pending, cpu.wakelist.size());
        if ((rq.curr == CurrKind::Idle) != (cpu.curr < 0)) return fmt::format("CPU {}: rq->curr disagrees with the engine", c);
        if (cpu.curr < 0 && !cpu.queue.empty() && !cpu.resched_pending)
            return fmt::format("CPU {}: idle with {} queued tasks and no reschedule on the way (lost resched)", c, cpu.queue.size());
        if (!cpu.wakelist.empty() && !cpu.ipi_pending) return fmt::format("CPU {}: wakelist without a pending IPI", c);
        for (std::size_t i = 1; i < cpu.queue.size(); ++i)
            if (m_tasks[cpu.queue[i - 1]].t.vruntime > m_tasks[cpu.queue[i]].t.vruntime) return fmt::format("CPU {}: queue not in vruntime order", c);
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
        if (cpu.donor >= 0) {  // proxy execution: curr runs for this donor, which waits for a lock curr holds
            if (cpu.curr < 0) return fmt::format("CPU {}: a donor (pid {}) and nobody running for it", c, m_tasks[cpu.donor].t.pid);
            if (m_tasks[cpu.donor].state != TaskState::Runnable) return fmt::format("CPU {}: donor pid {} not Runnable", c, m_tasks[cpu.donor].t.pid);
            if (auto e = mark(cpu.donor, "the donor"); !e.empty()) return e;
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
            if (!m_tasks[id].t.on_rq || m_tasks[id].t.cpu != c)
                return fmt::format("CPU {}: pid {} on cfs_tasks but not queued here", c, m_tasks[id].t.pid);
            if (++onList > nrOnRq(cpu)) return fmt::format("CPU {}: cfs_tasks longer than its runqueue", c);
        }
        if (onList != nrOnRq(cpu)) return fmt::format("CPU {}: cfs_tasks has {} tasks, the runqueue {}", c, onList, nrOnRq(cpu));
    }
    // Wakeups in flight (a wakeup over time): selected, not yet on a wakelist or runqueue.
    std::vector<int> inflight(std::size_t(m_nrCpus), 0), unseen(std::size_t(m_nrCpus), 0);
    for (const Flight& f : m_flights) {
        if (f.task < 0) continue;
        const SimTask& p = m_tasks[std::size_t(f.task)];
        if (p.state != TaskState::Runnable || p.t.on_rq) return fmt::format("task {} in flight to CPU {} but not TASK_WAKING", p.t.pid, f.cpu);
        if (p.t.cpu != f.cpu) return fmt::format("task {} in flight to CPU {} but task_cpu is {}", p.t.pid, f.cpu, p.t.cpu);
        count[std::size_t(f.task)]++;
        where[std::size_t(f.task)] = f.cpu;
        inflight[std::size_t(f.cpu)]++;
        unseen[std::size_t(f.cpu)] += f.unseen;
    }
    for (int c = 0; c < m_nrCpus; ++c)
        if (m_cpus[c].ttwu_inflight != inflight[std::size_t(c)] || m_cpus[c].ttwu_unseen != unseen[std::size_t(c)])
            return fmt::format("CPU {}: {} wakeups in flight ({} unseen) counted, {} ({}) found", c, m_cpus[c].ttwu_inflight, m_cpus[c].ttwu_unseen,
                               inflight[std::size_t(c)], unseen[std::size_t(c)]);
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
    if (auto e = checkInvariants(); !e.empty()) throw std::logic_error(fmt::format("invariant violated after {} at {} ns: {}", where, m_now, e));
}

std::string Engine::dump() const {
    static const char* st[] = {"Runnable", "Running", "Blocked", "Exited"};
    std::string o = fmt::format("t={} events={}\n", m_now, events());
    for (std::size_t i = 0; i < m_tasks.size(); ++i) {
        const SimTask& p = m_tasks[i];
        o += fmt::format("  pid {} {} {} cpu {} pending {} wake_pending {} work_left {} a={} b={} c={} vr={} sum_exec={}\n", p.t.pid,
                         taskComm(p.t.pid), st[int(p.state)], p.t.cpu, int(p.pending), p.wake_pending, p.work_left, p.a, p.b, p.c, p.t.vruntime,
                         p.sum_exec);
    }
    for (int c = 0; c < m_nrCpus; ++c) {
        const Cpu& x = m_cpus[c];
        o += fmt::format(
            "  CPU {} curr {} queue {} wakelist {} nr_running {} need_resched {} resched_pending {} idle {} load {} util {} util_est {}\n", c,
            x.curr >= 0 ? m_tasks[x.curr].t.pid : 0, x.queue.size(), x.wakelist.size(), m_st.rq[c].nr_running, x.need_resched, x.resched_pending,
            x.in_idle, m_st.rq[c].load_avg, m_st.rq[c].util_avg, m_st.rq[c].util_est);
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
    for (auto v : {m.ttwu_count, m.ttwu_local, m.ttwu_wakelist, m.ctx_switches, m.migrationsTotal(), m.lb_moved_tasks, m.ipis}) h = fnv(h, v);
    for (auto v : m.stage2) h = fnv(h, v);
    if (m.timers_armed)  // runs without sleep timers keep the digests they had before timers were counted
        for (auto v : {m.timers_armed, m.timers_moved, m.wake_by_timer_local, m.wake_by_timer_remote}) h = fnv(h, v);
    h = fnv(h, m.wakeup_latency.count());
    h = fnv(h, std::uint64_t(m.wakeup_latency.max()));
    h = fnv(h, m.ttwu_races);
    h = fnv(h, std::uint64_t(m.ttwu_window.max()));
    return h;
}

}  // namespace sched
