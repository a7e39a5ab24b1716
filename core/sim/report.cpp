// SPDX-License-Identifier: GPL-2.0-or-later
// report.cpp: run reports, CSV, and the compare / sweep tables.
#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace sched {

using nlohmann::json;

namespace {

constexpr double kPcts[] = {50, 75, 90, 95, 99, 99.5, 99.9};

std::string knobsLine(const Knobs& k) {
    auto diff = k.diffFromBaseline();
    std::string s = k.presetName;
    if (!diff.empty()) {
        s += " (";
        for (std::size_t i = 0; i < diff.size(); ++i) s += (i ? " " : "") + diff[i];
        s += ")";
    }
    return s;
}

std::string costLine(const Scenario& s, const CostModel& c) {
    auto diff = c.diffFrom(CostModel::forTopology(*s.topo));
    std::string out = "defaults for " + c.machine;
    for (const auto& d : diff) out += " " + d;
    return out;
}

// "epyc-9654-2s (384 CPUs: 2 packages, 24 LLCs, SMT2, 2 nodes)": fits a mail line.
std::string shortMachine(const Topology& t) {
    return fmt::format("{} ({} CPUs: {} package{}, {} LLC{}, SMT{}, {} node{})", t.name(), t.nrCpus(), t.nrPackages(), t.nrPackages() == 1 ? "" : "s",
                       t.nrLlcs(), t.nrLlcs() == 1 ? "" : "s", t.threadsPerCoreMax(), t.nrNodes(), t.nrNodes() == 1 ? "" : "s");
}

double pctOf(const LatencyHistogram& h, double p) { return double(h.percentile(p)) / 1000.0; }

std::int64_t sum(const std::vector<std::int64_t>& v) {
    std::int64_t s = 0;
    for (auto x : v) s += x;
    return s;
}

// Every non-zero reason counter, stage by stage: f(stage, index, code name, count).
template <class F>
void forEachReason(const Metrics& m, F f) {
    auto each = [&](const char* stage, const auto& arr, auto name) {
        for (std::size_t i = 0; i < arr.size(); ++i)
            if (arr[i]) f(stage, i, name(i), arr[i]);
    };
    each("stage0", m.stage0, [](std::size_t i) { return toString(Stage0(i)); });
    each("stage1", m.stage1, [](std::size_t i) { return toString(Stage1(i)); });
    each("idlest", m.idlest, [](std::size_t i) { return toString(IdlestSub(i)); });
    each("stage2", m.stage2, [](std::size_t i) { return toString(Stage2(i)); });
}

std::int64_t measured(const RunResult& r) { return r.engine->metrics().end_time - r.engine->metrics().measure_start; }

}  // namespace

namespace {

// The messages of the run's one measured job (hackbench, perf bench sched messaging), or -1
// (another workload, or more than one measured job: progress is then not one job's).
double jobMessages(const RunResult& r) {
    double msgs = -1;
    int measured = 0;
    for (const auto& w : r.engine->workloads()) {
        if (w->background()) continue;
        ++measured;
        msgs = w->messages();
    }
    return measured == 1 && msgs > 0 ? msgs : -1;
}

double messagesPerSwitch(double msgs, double progress_per_s, double switches_per_s) {
    if (msgs <= 0 || progress_per_s <= 0 || switches_per_s <= 0) return -1;
    return progress_per_s * msgs / switches_per_s;
}

}  // namespace

double steadyMessagesPerSwitch(const RunResult& r) {
    const SteadyResult st = r.engine->metrics().steady.result();
    return messagesPerSwitch(jobMessages(r), st.progress_per_s, st.switches_per_s);
}

std::string steadyWindowsCsv(const RunResult& r) {
    const SteadyState& ss = r.engine->metrics().steady;
    const SteadyResult st = ss.result();
    const double msgs = jobMessages(r);
    auto cell = [](double v, int decimals) { return v < 0 ? std::string() : fmt::format("{:.{}f}", v, decimals); };
    std::string o =
        "t0_s,t1_s,busy_cpus,rq_len,migrations_per_s,switches_per_s,progress_per_s,messages_per_switch,"
        "nr_idle_scan,nr_idle_scan_zero_fraction,sis_util_skip_fraction,steady\n";
    for (const SteadyWindow& w : ss.windows()) {
        const bool sis = w.nr_idle_scan >= 0;  // SIS_UTIL on: its skip fraction means something
        o += fmt::format("{:.3f},{:.3f},{:.2f},{:.3f},{:.0f},{:.0f},{},{},{},{},{},{}\n", double(w.t0) / 1e9, double(w.t1) / 1e9, w.busy_cpus,
                         w.rq_len, w.migrations_per_s, w.switches_per_s, cell(w.progress_per_s, 6),
                         cell(messagesPerSwitch(msgs, w.progress_per_s, w.switches_per_s), 2), cell(w.nr_idle_scan, 2),
                         cell(sis ? w.scan_zero : -1, 4), cell(sis ? w.sis_skip : -1, 4), int(st.reached && w.t0 >= st.from_ns));
    }
    return o;
}

std::string runReportText(const Scenario& s, const RunResult& r) {
    const Engine& e = *r.engine;
    const Metrics& m = e.metrics();
    std::string o;
    o += fmt::format("schedlab run: {}  (variant {}: {})\n", s.name, r.variant, knobsLine(r.knobs));
    o += fmt::format("machine: {}\n", s.topo->summary());
    o += fmt::format("seed {}, cost model: {}\n", r.seed, costLine(s, r.cost));
    o += fmt::format("simulated {:.6f} s ({:.6f} s measured), {} events, {:.2f} s wall, digest {:016x}\n\n", double(e.now()) / 1e9,
                     double(measured(r)) / 1e9, e.events(), r.wall_s, r.digest);
    if (r.from_state_ns >= 0)
        o.insert(o.size() - 1,
                 fmt::format("continued from a checkpoint at {:.6f} s (its wall time is not in the figure above)\n", double(r.from_state_ns) / 1e9));
    if (r.stopped_at_steady) {
        const SteadyResult st = m.steady.result();
        o.insert(o.size() - 1, fmt::format("stopped at steady state (--until-steady): steady from {:.3f} s; the job's figures at the steady rate "
                                           "are below (the workloads did not finish)\n",
                                           double(st.from_ns) / 1e9));
    }
    if (e.coalescingAllowed())
        o.insert(o.size() - 1, fmt::format("coalesced: {} of the events were steps run without an event of their own ({} plans, {} cut early)\n",
                                           e.plannedSteps(), e.plansMade(), e.plansCut()));
    for (const auto& rep : r.reports) {
        o += fmt::format("$ {}\n", rep.command);
        for (const auto& l : rep.output) o += l + "\n";
        o += "\n";
    }
    const double span = double(std::max<std::int64_t>(1, measured(r)));
    o += "schedstat (measured phase)\n";
    o += fmt::format("  ttwu_count {:>12}   ttwu_local {:>12}   wakelist (IPI) {:>10}   remote direct {:>10}\n", m.ttwu_count, m.ttwu_local,
                     m.ttwu_wakelist, m.ttwu_remote_direct);
    o += fmt::format("  context switches {:>12} ({} involuntary)   wakeup preemptions {}   tick preemptions {}\n", m.ctx_switches,
                     m.involuntary_switches, m.wake_preempt, m.tick_preempt);
    o += fmt::format(
        "  idle-delay hits {}   claims {}   IPIs {} (+{} polling CPUs woken without)   nohz kicks {} (+{} newidle stats updates)   idle ticks {}   "
        "buddy picks {}\n",
        m.idle_delay_hits, m.claims, m.ipis, m.wake_idle_without_ipi, m.nohz_kicks, m.newilb_runs, m.idle_ticks, m.buddy_picks);
    o += fmt::format("  load_balance: {} calls, {} balanced, {} failed, {} tasks moved; newidle entries {}\n", m.lb_calls, m.lb_balanced, m.lb_failed,
                     m.lb_moved_tasks, m.newidle_calls);
    o +=
        fmt::format("  the wakeup's window (sched_waking -> sched_wakeup), usec: p50={:.2f} p90={:.2f} p99={:.2f} max={:.1f}; stacked by a race {}\n",
                    pctOf(m.ttwu_window, 50), pctOf(m.ttwu_window, 90), pctOf(m.ttwu_window, 99), double(m.ttwu_window.max()) / 1000.0, m.ttwu_races);
    if (m.timers_armed) {
        const std::uint64_t woken = m.wake_by_task + m.wake_by_timer_local + m.wake_by_timer_remote;
        const auto pct = [&](std::uint64_t n) { return woken ? 100.0 * double(n) / double(woken) : 0.0; };
        o += fmt::format("  who woke the sleepers: a task {} ({:.1f} %), a local timer {} ({:.1f} %), a remote timer {} ({:.1f} %)\n", m.wake_by_task,
                         pct(m.wake_by_task), m.wake_by_timer_local, pct(m.wake_by_timer_local), m.wake_by_timer_remote, pct(m.wake_by_timer_remote));
        o += fmt::format(
            "  sleep timers: {} armed, {} moved to another CPU by get_nohz_timer_target() ({} armed on a CPU idle only by the idle delay), "
            "{} kept local by hrtimer_check_target(); {} timer interrupts on idle CPUs\n",
            m.timers_armed, m.timers_moved, m.timers_by_delay, m.timers_kept_local, m.timer_irqs_idle);
    }
    if (e.proxyExec())
        o += fmt::format(
            "  proxy execution: {} owner runs for a donor, {} chain migrations to an owner's CPU, {} return migrations, {} donors "
            "dequeued (owner asleep)\n",
            m.proxy_runs, m.proxy_migrations, m.proxy_return_migrations, m.proxy_deactivations);
    o += "\nwakeups by reason (select_task_rq_fair -> select_idle_sibling)\n";
    forEachReason(m, [&](const char*, std::size_t i, const char* name, std::uint64_t n) {
        if (i > 0) o += fmt::format("  {:<28} {:>12}\n", name, n);
    });
    o += "\nmigrations by cause and distance\n";
    o += fmt::format("  {:<10}", "cause");
    for (int d = 1; d < kDistClasses; ++d) o += fmt::format(" {:>12}", toString(DistClass(d)));
    o += fmt::format(" {:>12}\n", "total");
    for (int c = 0; c < kMigrationCauses; ++c) {
        if (c == int(MigrationCause::proxy) && !e.proxyExec()) continue;  // only proxy execution moves tasks so
        o += fmt::format("  {:<10}", toString(MigrationCause(c)));
        for (int d = 1; d < kDistClasses; ++d) o += fmt::format(" {:>12}", m.migration_matrix[c][d]);
        o += fmt::format(" {:>12}\n", m.migrations[c]);
    }
    o += fmt::format("\nwakeup latency (sched_waking -> running), usec, {} samples\n ", m.wakeup_latency.count());
    for (double p : kPcts) o += fmt::format(" p{}={:.1f}", p, pctOf(m.wakeup_latency, p));
    o += fmt::format(" max={:.1f}\n", double(m.wakeup_latency.max()) / 1000.0);
    // CPUs
    double rq = 0, rqMax = 0;
    int rqMaxCpu = 0;
    for (int c = 0; c < e.nrCpus(); ++c) {
        const double a = double(m.rqlen_area[c]) / span;
        rq += a;
        if (a > rqMax) {
            rqMax = a;
            rqMaxCpu = c;
        }
    }
    const double busy = m.busyFraction(m.measure_start, m.end_time);
    o += fmt::format("\nCPUs: {:.1f}% busy (htop: {:.0f}% of {}%), mean rq length {:.2f} (max {:.2f} on CPU {})\n", busy * 100,
                     busy * 100 * e.nrCpus(), 100 * e.nrCpus(), rq / e.nrCpus(), rqMax, rqMaxCpu);
    o += fmt::format("idle while overloaded (a CPU idle while another of its LLC has queued tasks): {:.3f} ms summed over {} LLCs\n",
                     double(sum(m.idle_while_overloaded_ns)) / 1e6, m.idle_while_overloaded_ns.size());
    {
        const SteadyResult st = m.steady.result();
        o += fmt::format("{}\n", describeSteady(st, m.steady.options()));
        if (st.windows > 0) {  // (none: the run ended or wound down within its first window)
            o += fmt::format("  {}: busy CPUs {:.1f}, mean rq length {:.2f}, migrations {:.0f}/s, context switches {:.0f}/s",
                             st.reached ? "from there" : "last windows", st.busy_cpus, st.rq_len, st.migrations_per_s, st.switches_per_s);
            if (st.steadyJobTime() > 0) o += fmt::format(", the whole job in {:.3f} s at this rate", st.steadyJobTime());
            if (const double mps = steadyMessagesPerSwitch(r); mps > 0) o += fmt::format(", {:.1f} messages per context switch", mps);
            o += "\n";
            if (st.nr_idle_scan >= 0 && st.sis_skip >= 0)
                o += fmt::format(
                    "  SIS_UTIL {}: nr_idle_scan {:.2f} per LLC, 0 in {:.1f} % of the LLCs (means of the rq-length samples); "
                    "{:.1f} % of placements skip the idle scan\n",
                    st.reached ? "from there" : "last windows", st.nr_idle_scan, st.scan_zero * 100, st.sis_skip * 100);
        }
    }
    o += fmt::format(
        "CPU time in cost terms (ms): ctx_switch {:.3f}  wakeup {:.3f}  cache_refill {:.3f}  tg_load_avg {:.3f}  rq_lock {:.3f}  "
        "sis_scan {:.3f}  load_balance {:.3f}  msg_trip {:.3f}; idle-exit latency {:.3f}\n",
        double(m.cost_ctx_switch) / 1e6, double(m.cost_wakeup) / 1e6, double(m.cost_refill) / 1e6, double(m.cost_tg) / 1e6,
        double(m.cost_lock_wait) / 1e6, double(m.cost_scan) / 1e6, double(m.cost_lb) / 1e6, double(m.cost_msg_trip) / 1e6,
        double(m.idle_exit_latency) / 1e6);
    // Aaron Lu's "tg->load_avg%" (update_cfs_group() + update_load_avg() in perf): the share of
    // the tasks' CPU time spent on the tg->load_avg line.
    const double busyNs = double(sum(m.busy_ns));
    o += fmt::format("tg->load_avg: {} updates (update_tg_load_avg), {} reads (update_cfs_group), {:.1f} % of the busy CPU time\n", m.tg_updates,
                     m.tg_reads, busyNs > 0 ? 100.0 * double(m.cost_tg) / busyNs : 0.0);
    return o;
}

json runReportJson(const Scenario& s, const RunResult& r) {
    const Engine& e = *r.engine;
    const Metrics& m = e.metrics();
    json j;
    j["schedlab"] = "run";
    j["scenario"] = s.doc;
    j["scenario_file"] = s.file;
    j["topology"] = s.topo->name();
    j["variant"] = r.variant;
    json k;
    for (const auto& n : Knobs::names()) k[n] = r.knobs.get(n);
    j["knobs"] = {{"preset", r.knobs.presetName}, {"values", k}, {"diff_from_baseline", r.knobs.diffFromBaseline()}};
    json c;
    for (const auto& n : CostModel::names()) c[n] = std::stoll(r.cost.get(n));
    json sc;
    for (int i = 0; i < kCostTerms; ++i) sc[toString(CostTerm(i))] = r.cost.scale[i];
    json cs = json::array();
    for (const auto& st : r.cost.cstates)
        cs.push_back({{"name", st.name}, {"exit_ns", st.exit_ns}, {"residency_ns", st.residency_ns}, {"polling", st.polling}});
    j["cost"] = {{"machine", r.cost.machine}, {"values", c}, {"scale", sc}, {"cstates", cs}};
    j["seed"] = r.seed;
    j["digest"] = fmt::format("{:016x}", r.digest);
    j["sim_time_ns"] = e.now();
    j["measure_start_ns"] = m.measure_start;
    j["events"] = e.events();
    j["wall_s"] = r.wall_s;
    json wl = json::array();
    for (const auto& rep : r.reports) {
        json h;
        for (const auto& v : rep.headline) h[v.key] = v.value;
        json cnt = json::object();
        for (const auto& v : rep.counters) cnt[v.key] = v.value;
        wl.push_back({{"name", rep.name}, {"command", rep.command}, {"output", rep.output}, {"headline", h}, {"counters", cnt}});
        if (!rep.cpus.empty()) wl.back()["cpus"] = rep.cpus;  // taskset -c
    }
    j["workloads"] = wl;
    j["schedstat"] = {{"ttwu_count", m.ttwu_count},
                      {"ttwu_local", m.ttwu_local},
                      {"ttwu_wakelist", m.ttwu_wakelist},
                      {"ttwu_remote_direct", m.ttwu_remote_direct},
                      {"wakeup_new", m.wakeup_new},
                      {"wake_preempt", m.wake_preempt},
                      {"ctx_switches", m.ctx_switches},
                      {"involuntary_switches", m.involuntary_switches},
                      {"ipis", m.ipis},
                      {"wake_idle_without_ipi", m.wake_idle_without_ipi},
                      {"newilb_runs", m.newilb_runs},
                      {"idle_delay_hits", m.idle_delay_hits},
                      {"claims", m.claims},
                      {"ttwu_races", m.ttwu_races},
                      {"tick_preempt", m.tick_preempt},
                      {"lb_calls", m.lb_calls},
                      {"lb_balanced", m.lb_balanced},
                      {"lb_failed", m.lb_failed},
                      {"lb_moved_tasks", m.lb_moved_tasks},
                      {"newidle_calls", m.newidle_calls},
                      {"nohz_kicks", m.nohz_kicks},
                      {"idle_ticks", m.idle_ticks},
                      {"buddy_picks", m.buddy_picks},
                      {"wake_by_task", m.wake_by_task},
                      {"wake_by_timer_local", m.wake_by_timer_local},
                      {"wake_by_timer_remote", m.wake_by_timer_remote},
                      {"timers_armed", m.timers_armed},
                      {"timers_moved", m.timers_moved},
                      {"timers_by_delay", m.timers_by_delay},
                      {"timers_kept_local", m.timers_kept_local},
                      {"timer_irqs_idle", m.timer_irqs_idle},
                      {"proxy_runs", m.proxy_runs},
                      {"proxy_migrations", m.proxy_migrations},
                      {"proxy_return_migrations", m.proxy_return_migrations},
                      {"proxy_deactivations", m.proxy_deactivations}};
    json reasons;
    forEachReason(m, [&](const char* stage, std::size_t, const char* name, std::uint64_t n) { reasons[stage][name] = n; });
    j["reasons"] = reasons;
    json mig;
    for (int ca = 0; ca < kMigrationCauses; ++ca) {
        json row;
        for (int d = 1; d < kDistClasses; ++d) row[toString(DistClass(d))] = m.migration_matrix[ca][d];
        row["total"] = m.migrations[ca];
        mig[toString(MigrationCause(ca))] = row;
    }
    j["migrations"] = mig;
    json lat = {
        {"count", m.wakeup_latency.count()}, {"min", m.wakeup_latency.min()}, {"max", m.wakeup_latency.max()}, {"mean", m.wakeup_latency.mean()}};
    for (double p : kPcts) lat[fmt::format("p{}", p)] = m.wakeup_latency.percentile(p);
    j["wakeup_latency_ns"] = lat;
    json win = {{"count", m.ttwu_window.count()}, {"min", m.ttwu_window.min()}, {"max", m.ttwu_window.max()}, {"mean", m.ttwu_window.mean()}};
    for (double p : kPcts) win[fmt::format("p{}", p)] = m.ttwu_window.percentile(p);
    j["ttwu_window_ns"] = win;
    const double span = double(std::max<std::int64_t>(1, measured(r)));
    json cpus = json::array();
    for (int cpu = 0; cpu < e.nrCpus(); ++cpu)
        cpus.push_back({{"cpu", cpu}, {"busy", double(m.busy_ns[cpu]) / span}, {"avg_rqlen", double(m.rqlen_area[cpu]) / span}});
    j["cpus"] = cpus;
    j["busy_fraction"] = m.busyFraction(m.measure_start, m.end_time);
    j["idle_while_overloaded_ns"] = m.idle_while_overloaded_ns;
    {
        const SteadyResult st = m.steady.result();
        const SteadyStateOptions& so = m.steady.options();
        j["steady_state"] = {
            {"reached", st.reached},
            {"from_s", st.reached ? json(double(st.from_ns) / 1e9) : json(nullptr)},
            {"windows", st.windows},
            {"window_ms", (st.window_len_ns > 0 ? st.window_len_ns : so.window_ns) / 1000000},
            {"wind_down_s", st.wind_down_ns >= 0 ? json(double(st.wind_down_ns) / 1e9) : json(nullptr)},
            {"stable_windows_needed", so.windows},
            {"drifting", st.drifting},
            {"drift", st.drifting ? json{{"settled_s", double(st.drift_from_ns) / 1e9},
                                         {"busy_cpus", st.drift_busy},
                                         {"rq_len", st.drift_rq},
                                         {"migrations_per_s", st.drift_migr}}
                                  : json(nullptr)},
            {"plateaus_left", st.plateaus_left},
            {"plateau_s", st.plateaus_left > 0 ? json::array({double(st.plateau_from_ns) / 1e9, double(st.plateau_left_ns) / 1e9}) : json(nullptr)},
            {"busy_cpus", st.busy_cpus},
            {"rq_len", st.rq_len},
            {"migrations_per_s", st.migrations_per_s},
            {"switches_per_s", st.switches_per_s},
            {"job_time_at_steady_rate_s", st.steadyJobTime() > 0 ? json(st.steadyJobTime()) : json(nullptr)},
            {"nr_idle_scan", st.nr_idle_scan >= 0 ? json(st.nr_idle_scan) : json(nullptr)},
            {"nr_idle_scan_zero_fraction", st.scan_zero >= 0 ? json(st.scan_zero) : json(nullptr)},
            {"sis_util_skip_fraction", st.sis_skip >= 0 ? json(st.sis_skip) : json(nullptr)},
            {"deviation", {{"busy_cpus", st.spread_busy}, {"rq_len", st.spread_rq}, {"migrations", st.spread_migr}}},
            {"summary", describeSteady(st, so)}};
    }
    auto buckets = [](const LatencyHistogram& h) {
        json b = json::array();
        for (const auto& x : h.buckets()) b.push_back({x.lo, x.hi, x.count});
        return b;
    };
    j["wakeup_latency_buckets_ns"] = buckets(m.wakeup_latency);
    for (std::size_t w = 0; w < r.reports.size(); ++w)
        for (const auto& [name, h] : r.reports[w].histograms)
            j["workloads"][w]["histograms_ns"][name] = {{"count", h.count()}, {"buckets", buckets(h)}};
    auto timeline = [](const RqTimeline& t) {
        json rows = json::array(), times = json::array();
        for (std::size_t i = 0; i < t.rows(); ++i) {
            times.push_back(t.time(i));
            const auto row = t.row(i);
            rows.push_back(std::vector<std::uint16_t>(row.begin(), row.end()));
        }
        return json{{"period_ns", t.period()}, {"time_ns", times}, {"nr_running", rows}};
    };
    j["rqlen_timeline"] = timeline(m.timeline);
    j["rqlen_timeline_bpftrace"] = timeline(m.bpf_timeline);
    j["cost_ns"] = {{"ctx_switch", m.cost_ctx_switch}, {"wakeup", m.cost_wakeup},     {"cache_refill", m.cost_refill},
                    {"tg_load_avg", m.cost_tg},        {"rq_lock", m.cost_lock_wait}, {"sis_scan", m.cost_scan},
                    {"load_balance", m.cost_lb},       {"msg_trip", m.cost_msg_trip}, {"idle_exit_latency", m.idle_exit_latency}};
    j["tg_load_avg"] = {{"updates", m.tg_updates}, {"reads", m.tg_reads}};
    return j;
}

std::string bpftraceRqlenCsv(const std::vector<std::int64_t>& times, const std::vector<std::uint16_t>& values, int ncpus,
                             const std::vector<int>& columns) {
    std::vector<int> cols = columns;
    if (cols.empty())
        for (int c = 0; c < ncpus; ++c) cols.push_back(c);
    std::string o = fmt::format("[{:>12}],", "Timestamp");
    for (int c : cols) o += fmt::format("CPU{:3d},", c);
    o += "\n";
    for (std::size_t row = 0; row < times.size(); ++row) {
        o += fmt::format("[{:12d}],", times[row]);
        for (int c : cols) o += fmt::format("{:3d},", values[row * std::size_t(ncpus) + std::size_t(c)]);
        o += "\n";
    }
    return o;
}

std::vector<int> workloadCpuColumns(const Engine& e) {
    CpuMask usable;
    for (const auto& w : e.workloads()) {
        if (!w->cpus()) return {};
        usable |= *w->cpus();
    }
    std::vector<int> cols;
    usable.forEach([&](int c) {
        if (c < e.nrCpus()) cols.push_back(c);
    });
    return cols;
}

std::string bpftraceRqlenCsv(const RunResult& r) {
    const RqTimeline& t = r.engine->metrics().bpf_timeline;
    std::vector<std::int64_t> times;
    std::vector<std::uint16_t> values;
    for (std::size_t row = 0; row < t.rows(); ++row) {
        times.push_back(t.time(row));
        for (int c = 0; c < t.ncpus(); ++c) values.push_back(std::uint16_t(t.at(row, c)));
    }
    return bpftraceRqlenCsv(times, values, t.ncpus(), workloadCpuColumns(*r.engine));
}

std::vector<std::pair<std::string, std::string>> runCsvFiles(const RunResult& r) {
    const Engine& e = *r.engine;
    const Metrics& m = e.metrics();
    std::vector<std::pair<std::string, std::string>> files;
    {
        const RqTimeline& t = m.timeline;
        std::string o = "time_ns";
        for (int c = 0; c < t.ncpus(); ++c) o += fmt::format(",cpu{}", c);
        o += "\n";
        for (std::size_t row = 0; row < t.rows(); ++row) {
            o += std::to_string(t.time(row));
            for (int c = 0; c < t.ncpus(); ++c) o += fmt::format(",{}", t.at(row, c));
            o += "\n";
        }
        files.push_back({"rqlen.csv", o});
    }
    files.push_back({"rqlen50-bpftrace.csv", bpftraceRqlenCsv(r)});
    {
        const double span = double(std::max<std::int64_t>(1, measured(r)));
        std::string o = "cpu,busy_fraction,avg_rqlen\n";
        for (int c = 0; c < e.nrCpus(); ++c) o += fmt::format("{},{:.6f},{:.6f}\n", c, double(m.busy_ns[c]) / span, double(m.rqlen_area[c]) / span);
        files.push_back({"cpus.csv", o});
    }
    {
        std::string o = "cause";
        for (int d = 1; d < kDistClasses; ++d) o += fmt::format(",{}", toString(DistClass(d)));
        o += ",total\n";
        for (int c = 0; c < kMigrationCauses; ++c) {
            o += toString(MigrationCause(c));
            for (int d = 1; d < kDistClasses; ++d) o += fmt::format(",{}", m.migration_matrix[c][d]);
            o += fmt::format(",{}\n", m.migrations[c]);
        }
        files.push_back({"migrations.csv", o});
    }
    {
        std::string o = "lo_ns,hi_ns,count\n";
        for (const auto& b : m.wakeup_latency.buckets()) o += fmt::format("{},{},{}\n", b.lo, b.hi, b.count);
        files.push_back({"wakeup_latency.csv", o});
    }
    files.push_back({"steady_windows.csv", steadyWindowsCsv(r)});
    return files;
}

std::vector<CompareRow> compareRows(const std::vector<const RunResult*>& runs) {
    std::vector<CompareRow> rows;
    auto add = [&](const std::string& label, int dec, int dir, auto get) {
        CompareRow r{label, {}, dec, dir, false};
        for (const RunResult* x : runs) r.values.push_back(double(get(*x)));
        rows.push_back(std::move(r));
    };
    auto section = [&](const std::string& label) { rows.push_back(CompareRow{label, {}, 0, 0, true}); };
    // Workload headline numbers (same workloads in every run).
    const RunResult& first = *runs.front();
    for (std::size_t w = 0; w < first.reports.size(); ++w) {
        if (first.reports[w].headline.empty()) continue;
        section(first.reports[w].command);
        for (std::size_t h = 0; h < first.reports[w].headline.size(); ++h) {
            const HeadlineValue& hv = first.reports[w].headline[h];
            add(hv.label, hv.decimals, hv.lower_is_better ? -1 : 1,
                [&](const RunResult& x) { return x.reports[w].headline.size() > h ? x.reports[w].headline[h].value : 0.0; });
        }
        // What schedlab saw inside the workload (no better or worse: the change is not marked).
        for (std::size_t k = 0; k < first.reports[w].counters.size(); ++k)
            add("  " + first.reports[w].counters[k].label, first.reports[w].counters[k].decimals, 0,
                [&](const RunResult& x) { return x.reports[w].counters.size() > k ? x.reports[w].counters[k].value : 0.0; });
    }
    auto M = [](const RunResult& x) -> const Metrics& { return x.engine->metrics(); };
    section("wakeups");
    add("ttwu_count", 0, 0, [&](const RunResult& x) { return M(x).ttwu_count; });
    add("  ttwu_local", 0, 0, [&](const RunResult& x) { return M(x).ttwu_local; });
    add("  wakelist (IPI)", 0, 0, [&](const RunResult& x) { return M(x).ttwu_wakelist; });
    add("  remote direct", 0, 0, [&](const RunResult& x) { return M(x).ttwu_remote_direct; });
    add("  idle-delay hits", 0, 0, [&](const RunResult& x) { return M(x).idle_delay_hits; });
    add("  claims", 0, 0, [&](const RunResult& x) { return M(x).claims; });
    add("  stacked by a race", 0, -1, [&](const RunResult& x) { return M(x).ttwu_races; });
    add("  window p50 (us)", 2, 0, [&](const RunResult& x) { return double(M(x).ttwu_window.percentile(50)) / 1000.0; });
    add("  window p99 (us)", 2, 0, [&](const RunResult& x) { return double(M(x).ttwu_window.percentile(99)) / 1000.0; });
    bool timers = false;
    for (const RunResult* x : runs) timers |= M(*x).timers_armed != 0;
    if (timers) {  // who woke the sleepers, and where their timers went
        add("  woken by a task", 0, 0, [&](const RunResult& x) { return M(x).wake_by_task; });
        add("  woken by a local timer", 0, 0, [&](const RunResult& x) { return M(x).wake_by_timer_local; });
        add("  woken by a remote timer", 0, 0, [&](const RunResult& x) { return M(x).wake_by_timer_remote; });
        add("  sleep timers armed", 0, 0, [&](const RunResult& x) { return M(x).timers_armed; });
        add("    moved to another CPU", 0, 0, [&](const RunResult& x) { return M(x).timers_moved; });
    }
    add("context switches", 0, 0, [&](const RunResult& x) { return M(x).ctx_switches; });
    // Reason codes seen in any run.
    auto reasonRows = [&](auto arr, auto name) {
        for (std::size_t i = 1; i < (M(first).*arr).size(); ++i) {
            bool any = false;
            for (const RunResult* x : runs) any |= (M(*x).*arr)[i] != 0;
            if (any) add(fmt::format("  {}", name(i)), 0, 0, [&, i](const RunResult& x) { return (M(x).*arr)[i]; });
        }
    };
    section("wakeups by reason");
    reasonRows(&Metrics::stage1, [](std::size_t i) { return toString(Stage1(i)); });
    reasonRows(&Metrics::stage2, [](std::size_t i) { return toString(Stage2(i)); });
    section("migrations");
    add("migrations", 0, -1, [&](const RunResult& x) { return M(x).migrationsTotal(); });
    for (int c = 0; c < kMigrationCauses; ++c)
        add(fmt::format("  {}", toString(MigrationCause(c))), 0, 0, [&, c](const RunResult& x) { return M(x).migrations[c]; });
    for (int d = 2; d < kDistClasses; ++d)
        add(fmt::format("  at distance {}", toString(DistClass(d))), 0, 0, [&, d](const RunResult& x) {
            std::uint64_t s = 0;
            for (int c = 0; c < kMigrationCauses; ++c) s += M(x).migration_matrix[c][d];
            return s;
        });
    section("wakeup latency (usec)");
    for (double p : kPcts) add(fmt::format("  p{}", p), 1, -1, [&, p](const RunResult& x) { return pctOf(M(x).wakeup_latency, p); });
    add("  max", 1, -1, [&](const RunResult& x) { return double(M(x).wakeup_latency.max()) / 1000.0; });
    section("CPUs");
    add("busy (htop %)", 0, 0, [&](const RunResult& x) { return M(x).busyFraction(M(x).measure_start, M(x).end_time) * 100.0 * x.engine->nrCpus(); });
    add("idle while overloaded (ms)", 2, -1, [&](const RunResult& x) { return double(sum(M(x).idle_while_overloaded_ns)) / 1e6; });
    // From the steady state on (or the last windows, when a run ended before it: the header
    // says which, and where each run settled). A run with no complete window has no figures
    // here: the section is left out rather than filled with zeros.
    auto S = [&](const RunResult& x) { return M(x).steady.result(); };
    if (std::any_of(runs.begin(), runs.end(), [&](const RunResult* x) { return S(*x).windows == 0; })) return rows;
    section("steady state");
    add("busy CPUs", 1, 0, [&](const RunResult& x) { return S(x).busy_cpus; });
    add("mean rq length", 2, 0, [&](const RunResult& x) { return S(x).rq_len; });
    add("migrations/s", 0, -1, [&](const RunResult& x) { return S(x).migrations_per_s; });
    add("context switches/s", 0, 0, [&](const RunResult& x) { return S(x).switches_per_s; });
    add("job time at steady rate (s)", 3, -1, [&](const RunResult& x) { return S(x).steadyJobTime(); });
    if (std::all_of(runs.begin(), runs.end(), [](const RunResult* x) { return steadyMessagesPerSwitch(*x) > 0; }))
        add("messages per context switch", 1, 0, [&](const RunResult& x) { return steadyMessagesPerSwitch(x); });
    // SIS_UTIL's state: how much of the LLC the idle scan may search, and how often it does not.
    if (std::all_of(runs.begin(), runs.end(), [&](const RunResult* x) { return S(*x).nr_idle_scan >= 0 && S(*x).sis_skip >= 0; })) {
        add("nr_idle_scan per LLC", 2, 0, [&](const RunResult& x) { return S(x).nr_idle_scan; });
        add("LLCs with nr_idle_scan 0 (%)", 1, 0, [&](const RunResult& x) { return S(x).scan_zero * 100; });
        add("placements skipping scan (%)", 1, 0, [&](const RunResult& x) { return S(x).sis_skip * 100; });
    }
    return rows;
}

namespace {
std::string fmtVal(double v, int dec) { return fmt::format("{:.{}f}", v, dec); }

std::string header(const Scenario& s, const std::vector<const RunResult*>& runs, const std::string& varied = {}) {
    std::string o;
    for (const auto& rep : runs.front()->reports) o += fmt::format("# {}\n", rep.command);
    o += fmt::format("# machine: {}\n", shortMachine(*s.topo));
    o += fmt::format("# simulated by schedlab (Linux 6.1 wakeup path), scenario {}, seed {}\n", s.name, runs.front()->seed);
    auto base = CostModel::forTopology(*s.topo);
    auto diff = runs.front()->cost.diffFrom(base);
    std::string line;
    for (const auto& d : diff)
        if (varied.empty() || d.rfind(varied + "=", 0) != 0) line += " " + d;
    if (!line.empty()) o += "# cost model overrides:" + line + "\n";
    return o;
}
}  // namespace

std::string compareTable(const Scenario& s, const RunResult& a, const RunResult& b) {
    std::vector<const RunResult*> runs{&a, &b};
    std::string o = header(s, runs);
    o += fmt::format("# base:  {}\n# patch: {}\n", knobsLine(a.knobs), knobsLine(b.knobs));
    for (const RunResult* x : runs) {
        const SteadyState& st = x->engine->metrics().steady;
        o += fmt::format("# {}: {}{}\n", x == &a ? "base " : "patch", describeSteady(st.result(), st.options()),
                         x->stopped_at_steady ? fmt::format("; stopped at {:.3f} s (--until-steady): its workloads did not finish, their "
                                                            "figures are so far; compare the job time at the steady rate",
                                                            double(x->engine->now()) / 1e9)
                                              : std::string());
    }
    o += "# change: patch vs base; (+) marks a change for the better, (-) for the worse\n\n";
    const std::string ha = a.knobs.presetName, hb = b.knobs.presetName == ha ? "patch" : b.knobs.presetName;
    return o + compareRowsText(compareRows(runs), ha, hb);
}

std::string compareRowsText(const std::vector<CompareRow>& rows, const std::string& ha, const std::string& hb) {
    std::string o = fmt::format("{:<30}{:>15}{:>15}  {}\n", "metric", ha.substr(0, 14), hb.substr(0, 14), "change");
    for (const auto& r : rows) {
        if (r.section) {
            o += fmt::format("{:=^75}\n", " " + r.label.substr(0, 70) + " ");
            continue;
        }
        const double x = r.values[0], y = r.values[1];
        std::string ch;
        if (x != 0) {
            const double pct = (y - x) / std::fabs(x) * 100.0;
            std::string mark;
            if (r.direction != 0 && std::fabs(pct) >= 0.05) mark = (pct * r.direction > 0) ? " (+)" : " (-)";
            ch = fmt::format("{:+.2f}%{}", pct, mark);
        } else {
            ch = y == 0 ? "0.00%" : "new";
        }
        o += fmt::format("{:<30}{:>15}{:>15}  {}\n", r.label.substr(0, 29), fmtVal(x, r.decimals), fmtVal(y, r.decimals), ch);
    }
    return o;
}

std::string sweepTable(const Scenario& s, const std::string& what, const std::vector<std::string>& values,
                       const std::vector<const RunResult*>& runs) {
    return sweepTable(sweepParts(s, what, runs), what, values);
}

SweepParts sweepParts(const Scenario& s, const std::string& what, const std::vector<const RunResult*>& runs) {
    SweepParts p;
    p.header = header(s, runs, what);
    Knobs shown = runs.front()->knobs;
    try {
        shown.set(what, Knobs::preset(shown.presetName).get(what));  // the swept knob is in the table, not here
    } catch (const KnobError&) {
    }
    p.knobs = knobsLine(shown);
    p.rows = compareRows(runs);
    return p;
}

nlohmann::json sweepPartsJson(const SweepParts& parts) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : parts.rows)
        rows.push_back({{"label", r.label}, {"values", r.values}, {"decimals", r.decimals}, {"direction", r.direction}, {"section", r.section}});
    return {{"header", parts.header}, {"knobs", parts.knobs}, {"rows", rows}};
}

SweepParts sweepPartsFromJson(const nlohmann::json& j) {
    auto need = [&](const nlohmann::json& o, const char* k, const char* what) -> const nlohmann::json& {
        if (!o.is_object() || !o.contains(k)) throw std::runtime_error(fmt::format("sweep_parts.{}: missing ({})", k, what));
        return o.at(k);
    };
    SweepParts p;
    try {
        p.header = need(j, "header", "a string").get<std::string>();
        p.knobs = need(j, "knobs", "a string").get<std::string>();
        for (const auto& r : need(j, "rows", "a list").items()) {
            const auto& v = r.value();
            p.rows.push_back(CompareRow{need(v, "label", "a string").get<std::string>(), need(v, "values", "numbers").get<std::vector<double>>(),
                                        need(v, "decimals", "an integer").get<int>(), need(v, "direction", "an integer").get<int>(),
                                        need(v, "section", "a boolean").get<bool>()});
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("sweep_parts: {}", e.what()));
    }
    return p;
}

std::string sweepTable(const SweepParts& parts, const std::string& what, const std::vector<std::string>& values) {
    std::string o = parts.header;
    o += fmt::format("# knobs: {}; sweeping {}\n\n", parts.knobs, what);
    // Columns: the workloads' headline values, then wakeups, migrations, wakeup p99, busy.
    const std::vector<CompareRow>& rows = parts.rows;
    std::vector<const CompareRow*> cols;
    for (const auto& r : rows) {
        if (r.section) continue;
        if (r.direction != 0 || r.label == "ttwu_count" || r.label == "busy (htop %)") cols.push_back(&r);
    }
    // Keep the table to a mail's width (80 columns): the workloads' headline values first,
    // then wakeup p99, migrations and busy CPUs, at most four columns.
    std::vector<const CompareRow*> pick;
    for (const auto* c : cols) {
        const std::string& l = c->label;
        if (l.rfind("  p", 0) == 0 && l != "  p99") continue;
        if (l == "  max" || l == "ttwu_count" || l.rfind("idle while", 0) == 0) continue;
        pick.push_back(c);
    }
    if (pick.size() > 4) pick.erase(pick.begin() + 3, pick.end() - 1);  // keep the last (busy)
    if (pick.size() > 4) pick.resize(4);
    o += fmt::format("{:>16}", what.size() <= 15 ? what : std::string("value"));
    for (const auto* c : pick) {
        std::string l = c->label;
        while (!l.empty() && l.front() == ' ') l.erase(0, 1);
        if (l == "p99") l = "wakeup p99 us";
        o += fmt::format(" {:>14}", l.substr(0, 14));
    }
    o += "\n";
    for (std::size_t i = 0; i < values.size(); ++i) {
        o += fmt::format("{:>16}", values[i].substr(0, 15));
        for (const auto* c : pick) {
            std::string v = fmtVal(c->values[i], c->decimals);
            if (i > 0 && c->values[0] != 0 && c->direction != 0)
                v += fmt::format(" ({:+.0f}%)", (c->values[i] - c->values[0]) / std::fabs(c->values[0]) * 100.0);
            o += fmt::format(" {:>14}", v);
        }
        o += "\n";
    }
    return o;
}

}  // namespace sched
