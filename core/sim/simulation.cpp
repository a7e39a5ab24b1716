// SPDX-License-Identifier: GPL-2.0-or-later
// simulation.cpp: one side of the GUI's A/B run, and the snapshots it hands out.
#include "sim/simulation.h"

#include "kernel/wakeup_path.h"
#include "sim/checkpoint.h"
#include "util/state_archive.h"

#include <algorithm>

namespace sched {

const char* toString(CpuKind k) {
    switch (k) {
    case CpuKind::idle: return "idle";
    case CpuKind::busy: return "busy";
    case CpuKind::idle_by_delay: return "idle by idle-delay";
    }
    return "?";
}

Simulation::Simulation(const Scenario& s, Knobs knobs, std::string label, SimOptions o, std::uint64_t seed)
    : m_scenario(s), m_label(std::move(label)), m_opt(o), m_seed(seed), m_initialKnobs(knobs) {
    RunOptions ro;
    ro.seed = seed ? seed : s.seed;
    ro.decision_ring = std::max<std::size_t>(m_opt.decisions, 1);
    m_run.variant = m_label;
    m_run.knobs = knobs;
    m_run.cost = m_scenario.cost;
    m_run.seed = ro.seed;
    m_run.engine = buildEngine(m_scenario, knobs, m_scenario.cost, ro);
    m_engine = m_run.engine.get();
    attachSinks();
}

Simulation::Simulation(const Checkpoint& c, std::string label, SimOptions o)
    : m_scenario(c.scenario), m_label(label.empty() ? c.variant : label), m_opt(o), m_seed(c.seed), m_initialKnobs(c.knobs) {
    RunOptions ro;
    ro.seed = c.seed;
    ro.decision_ring = std::max<std::size_t>(m_opt.decisions, 1);
    m_run.variant = m_label;
    m_run.knobs = c.knobs;
    m_run.cost = c.cost;
    m_run.seed = c.seed;
    // The scenario's stop when it is still ahead (a state saved by `run --until T` stops there: the window runs on).
    const std::int64_t stop = std::int64_t(m_scenario.stop_s * 1e9);
    m_run.engine = restoreEngine(c, ro, stop > c.time_ns ? stop : 0);
    m_engine = m_run.engine.get();
    if (!c.extra.empty()) {
        StateArchive ar(c.extra, c.file);
        ar.str(m_companion);
        state(ar);
        if (ar.remaining()) ar.fail("bytes after the window's state");
        if (!label.empty()) m_label = label;  // a copy gets its own side's name
        m_run.variant = m_label;
    } else {
        // A checkpoint of the command line's: the window's series start here, a period on.
        m_nextOutcome = c.time_ns + m_opt.outcome_period_ns;
        m_lastOutcome = outcomeNow();
        m_nextSample = c.time_ns + m_opt.sample_period_ns;
    }
    attachSinks();
}

void Simulation::attachSinks() {
    // Task moves and (dashed in the heatmap) sleep timers moved by get_nohz_timer_target().
    const auto keep = [this](std::int64_t t, int pid, int from, int to, MigrationCause cause, bool timer) {
        MigrationView v;
        v.time = t;
        v.pid = pid;
        v.from = std::int16_t(from);
        v.to = std::int16_t(to);
        v.cause = cause;
        v.timer = timer;
        v.dist = distClass(m_engine->topo(), from, to);
        m_migrations.push_back(v);
        if (m_migrations.size() > m_opt.max_migrations) m_migrations.pop_front();
    };
    m_engine->migration_sink = [keep](std::int64_t t, int pid, int from, int to, MigrationCause cause) { keep(t, pid, from, to, cause, false); };
    m_engine->timer_sink = [keep](std::int64_t t, int pid, int from, int to) { keep(t, pid, from, to, MigrationCause::wakeup, true); };
}

Simulation::OutcomeMark Simulation::outcomeNow() const {
    const Engine& e = *m_engine;
    const Metrics& m = e.metrics();
    OutcomeMark o;
    if (!e.workloads().empty()) o.work = std::max(0.0, e.workloads().front()->work(e));
    for (int c = 0; c < e.nrCpus(); ++c) o.busy_ns += double(m.busyNs(c, e.now()));
    for (int c = 0; c < kMigrationCauses; ++c)  // fork placements left out, as the A/B table's totals leave them out
        if (c != int(MigrationCause::fork)) o.migrations += double(m.migrations[c]);
    o.wakeups = double(m.ttwu_count);
    o.ctx_switches = double(m.ctx_switches);
    return o;
}

void Simulation::collect() {
    // The outcome point of every period passed (advance() stops at each): rates over the
    // period from the counters' change. The measured phase's start zeroes the engine's
    // counters: a period across it takes the counters from there.
    while (m_nextOutcome <= m_engine->now()) {
        const OutcomeMark o = outcomeNow();
        if (m_nextOutcome > 0) {
            const double secs = double(m_opt.outcome_period_ns) / 1e9;
            auto delta = [](double now, double before) { return now >= before ? now - before : now; };
            OutcomePoint p;
            p.t = m_nextOutcome;
            p.rate = float(delta(o.work, m_lastOutcome.work) / secs);
            p.busy_cpus = float(delta(o.busy_ns, m_lastOutcome.busy_ns) / double(m_opt.outcome_period_ns));
            p.migrations_per_s = float(delta(o.migrations, m_lastOutcome.migrations) / secs);
            p.wakeups_per_s = float(delta(o.wakeups, m_lastOutcome.wakeups) / secs);
            p.ctx_switches_per_s = float(delta(o.ctx_switches, m_lastOutcome.ctx_switches) / secs);
            m_outcome.push_back(p);
            if (m_outcome.size() > m_opt.outcome_rows) m_outcome.pop_front();
        }
        m_lastOutcome = o;
        m_nextOutcome += m_opt.outcome_period_ns;
    }
    // rq-length rows at every sample point passed; the state between events is constant,
    // so a row taken after advancing to the sample time is the state at that time.
    const int n = m_engine->nrCpus();
    while (m_nextSample <= m_engine->now()) {
        m_sampleT.push_back(m_nextSample);
        for (int c = 0; c < n; ++c) m_sampleLen.push_back(std::uint16_t(std::min(m_engine->nrRunning(c), 65535u)));
        if (m_sampleT.size() > m_opt.sample_rows) {
            m_sampleT.pop_front();
            m_sampleLen.erase(m_sampleLen.begin(), m_sampleLen.begin() + n);
        }
        m_nextSample += m_opt.sample_period_ns;
    }
    const std::int64_t cut = m_engine->now() - m_opt.arrow_span_ns;
    while (!m_migrations.empty() && m_migrations.front().time < cut) m_migrations.pop_front();
}

bool Simulation::advance(std::int64_t ns) {
    // Stop at every sample point so each row shows the state at its time.
    const std::int64_t until = m_engine->now() + ns;
    m_engine->setCoalescing(true);  // after stepEvent() (a no-op when the run does not coalesce)
    while (!m_engine->done() && m_engine->now() < until) {
        const std::int64_t to = std::min({until, m_nextSample, m_nextOutcome});
        if (to > m_engine->now()) m_engine->advance(to - m_engine->now());
        collect();
    }
    collect();
    return !m_engine->done();
}

bool Simulation::stepEvent() {
    // One event, but never past a sample point without taking its row. One event of the run
    // without coalescing: plans are cut, and come back with advance().
    m_engine->setCoalescing(false);
    const std::uint64_t before = m_engine->events();
    while (m_engine->events() == before && !m_engine->done()) {
        m_engine->advance(std::max<std::int64_t>(std::min(m_nextSample, m_nextOutcome) - m_engine->now(), 0), 1);
        collect();
    }
    return !m_engine->done();
}

bool Simulation::stepWakeup(std::int64_t limit_ns) {
    const std::int64_t until = m_engine->now() + limit_ns;
    // A wakeup's decision is complete once ttwu_queue() placed its task (a wakeup over time).
    auto traced = [this] { return m_engine->tracedCount(); };
    const std::uint64_t before = traced();
    m_engine->traceNextWakeup();
    while (!m_engine->done() && m_engine->now() < until && traced() == before)
        if (!stepEvent()) break;
    return m_engine->lastTraced() && traced() != before;
}

void Simulation::setKnobs(const Knobs& k) {
    // What changed, knob by knob ("idle_delay_ns=1000000"); a preset's name when only it did.
    const Knobs before = m_engine->knobs();
    std::string change;
    for (const std::string& n : Knobs::names())
        if (const std::string v = k.get(n); v != before.get(n)) change += (change.empty() ? "" : " ") + n + "=" + v;
    m_engine->setKnobs(k);
    m_knobHistory.emplace_back(m_engine->now(), k);
    if (!change.empty()) m_knobMarks.push_back({m_engine->now(), change});
}

namespace {
void knobsState(StateArchive& ar, Knobs& k) {
    std::vector<std::string> values;
    if (ar.saving()) {
        for (const std::string& n : Knobs::names()) values.push_back(k.get(n));
        values.push_back(k.presetName);
    }
    ar.each(values, [](StateArchive& a, std::string& v) { a.str(v); });
    if (ar.loading()) {
        const std::vector<std::string> names = Knobs::names();
        if (values.size() != names.size() + 1) ar.fail("knobs of another schedlab");
        Knobs r;
        try {
            for (std::size_t i = 0; i < names.size(); ++i) r.set(names[i], values[i]);
        } catch (const std::exception& e) {
            ar.fail(std::string("knobs: ") + e.what());
        }
        r.presetName = values.back();
        k = r;
    }
}
}  // namespace

void Simulation::state(StateArchive& ar) {
    ar.section(0x57494e44, "window");
    ar.str(m_label);
    ar(m_seed);
    knobsState(ar, m_initialKnobs);
    ar.each(m_knobHistory, [](StateArchive& a, std::pair<std::int64_t, Knobs>& h) {
        a(h.first);
        knobsState(a, h.second);
    });
    ar(m_nextSample);
    ar.deq(m_sampleT);
    ar.deq(m_sampleLen);
    ar.each(m_migrations, [](StateArchive& a, MigrationView& m) { a(m.time, m.pid, m.from, m.to, m.cause, m.dist, m.timer); });
    ar(m_seenEvents, m_nextOutcome, m_lastOutcome.work, m_lastOutcome.busy_ns, m_lastOutcome.migrations, m_lastOutcome.wakeups,
       m_lastOutcome.ctx_switches);
    ar.each(m_outcome, [](StateArchive& a, OutcomePoint& p) {
        // Six fields: a seventh stops this from compiling (add it here and bump kStateFormatVersion).
        auto& [t, rate, busy, migrations, wakeups, switches] = p;
        a(t, rate, busy, migrations, wakeups, switches);
    });
    ar.each(m_knobMarks, [](StateArchive& a, KnobMark& m) {
        a(m.t);
        a.str(m.change);
    });
}

std::string Simulation::checkpoint(std::string companion) {
    StateArchive ar;
    ar.str(companion);
    state(ar);
    return encodeCheckpoint(m_scenario, m_label, m_run.cost, m_run.seed, *m_engine, nullptr, ar.take());
}

std::unique_ptr<Simulation> Simulation::fromCheckpoint(const Checkpoint& c, std::string label, SimOptions o, std::string* companion) {
    auto sim = std::unique_ptr<Simulation>(new Simulation(c, std::move(label), o));
    if (companion) *companion = std::move(sim->m_companion);
    return sim;
}

std::string Simulation::companionOf(const Checkpoint& c) {
    if (c.extra.empty()) return {};
    StateArchive ar(c.extra, c.file);
    std::string s;
    ar.str(s);
    return s;
}

std::unique_ptr<Simulation> Simulation::copyOf(Simulation& src, std::string label) {
    const std::string bytes = src.checkpoint();
    return fromCheckpoint(decodeCheckpoint(bytes, "side " + src.m_label), std::move(label), src.m_opt);
}

const RunResult& Simulation::result() const {
    m_run.knobs = m_engine->knobs();
    m_run.variant = m_engine->knobs().presetName;
    if (!m_engine->done()) m_engine->metrics().end_time = m_engine->now();  // reports measure up to now; the engine never reads it
    m_run.reports = workloadReports(*m_engine);
    m_run.digest = m_engine->digest();
    return m_run;
}

Snapshot Simulation::snapshot() const {
    const Engine& e = *m_engine;
    const Metrics& m = e.metrics();
    const MachineState& st = e.state();
    Snapshot s;
    s.label = m_label;
    s.knobs = e.knobs().describe();
    s.topo = m_scenario.topo;
    s.now = e.now();
    s.measure_start = m.measure_start;
    s.events = e.events();
    s.done = e.done();
    s.digest = e.digest();
    const int n = e.nrCpus();
    s.cpus.resize(std::size_t(n));
    const std::int64_t t0 = m.measure_start, t1 = std::max(e.now(), m.measure_start + 1);
    // The CPUs the workloads may use (the union of their taskset masks; a workload without one may use all).
    CpuMask usable;
    bool everyCpu = false;
    for (const auto& w : e.workloads()) {
        if (!w->cpus()) everyCpu = true;
        else usable |= *w->cpus();
    }
    for (int c = 0; c < n; ++c) {
        CpuView& v = s.cpus[std::size_t(c)];
        v.outside_masks = !everyCpu && !usable.test(c);
        const int curr = e.currTask(c);
        const Rq& rq = st.rq[std::size_t(c)];
        v.curr_pid = curr >= 0 ? e.task(curr).t.pid : 0;
        v.nr_running = std::uint16_t(std::min(rq.nr_running, 65535u));
        v.claimed = rq.claimed;
        v.util = std::int32_t(rq.util_avg);
        v.cstate = std::int8_t(e.cstate(c));
        v.idle_since_ns = e.idleSince(c);
        if (curr < 0) v.kind = CpuKind::idle;
        else v.kind = idle_cpu(st, e.knobs(), c) ? CpuKind::idle_by_delay : CpuKind::busy;
        v.rq_avg = float(m.avgRqLen(c, t0, t1));
        v.busy_frac = float(double(m.busyNs(c, e.now())) / double(t1 - t0));
    }
    s.migrations.assign(m_migrations.begin(), m_migrations.end());
    s.outcome_unit = e.workloads().empty() ? std::string() : e.workloads().front()->workUnit();
    s.outcome_period_ns = m_opt.outcome_period_ns;
    s.outcome.assign(m_outcome.begin(), m_outcome.end());
    s.knob_marks = m_knobMarks;
    s.steady = m.steady.result();
    s.sample_period_ns = m_opt.sample_period_ns;
    s.sample_t.assign(m_sampleT.begin(), m_sampleT.end());
    s.sample_len.assign(m_sampleLen.begin(), m_sampleLen.end());
    s.wakeup_latency = m.wakeup_latency;
    s.ttwu_count = m.ttwu_count;
    s.ttwu_local = m.ttwu_local;
    s.ttwu_wakelist = m.ttwu_wakelist;
    s.ctx_switches = m.ctx_switches;
    s.idle_delay_hits = m.idle_delay_hits;
    s.claims = m.claims;
    s.ttwu_races = m.ttwu_races;
    s.ttwu_window = m.ttwu_window;
    s.flow = m.flow;
    s.wake_by_task = m.wake_by_task;
    s.wake_by_timer_local = m.wake_by_timer_local;
    s.wake_by_timer_remote = m.wake_by_timer_remote;
    s.timers_armed = m.timers_armed;
    s.timers_moved = m.timers_moved;
    for (std::size_t i = 0; i < m.stage2.size(); ++i)
        if (m.stage2[i]) s.reasons.emplace_back(toString(Stage2(i)), m.stage2[i]);
    s.migrations_by_cause = m.migrations;
    const std::size_t nd = std::min(m.ring_size, m_opt.decisions);
    s.decisions.reserve(nd);
    for (std::size_t i = m.ring_size - nd; i < m.ring_size; ++i) s.decisions.push_back(m.recent(i));
    s.reports = workloadReports(e);
    return s;
}

}  // namespace sched
