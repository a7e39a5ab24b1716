// SPDX-License-Identifier: GPL-2.0-or-later
// cli_sim.cpp: schedlab-cli run / compare / sweep.
#include "cli_sim.h"
#include "machine_info.h"
#include "kernel/decision_flow.h"

#include "sim/checkpoint.h"
#include "sim/report.h"
#include "util/install_paths.h"
#include "sim/reproduce.h"
#include "sim/scenario.h"
#include "replay/replay.h"
#include "trace/rq_csv.h"
#include "topology/topology_json.h"
#include "trace/trace.h"
#include "replay/trace_compare.h"
#include "trace/trace_dat_writer.h"
#include "replay/trace_snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <ctime>
#include <cstring>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace sched {

namespace {

// Applies --knobs (preset name or name=value items) and --set overrides.
Knobs resolveKnobs(const Knobs& base, const std::vector<std::string>& knobArgs, const std::vector<std::string>& sets, const std::string& flag) {
    Knobs k = base;
    for (const auto& a : knobArgs) {
        if (a.find('=') == std::string::npos) {
            try {
                k = Knobs::preset(a);
            } catch (const KnobError& e) {
                throw InputError(flag, "", e.what());
            }
        }
    }
    auto apply = [&](const std::string& kv, const std::string& f) {
        auto eq = kv.find('=');
        if (eq == std::string::npos) throw InputError(f, kv, "expected name=value");
        try {
            k.set(kv.substr(0, eq), kv.substr(eq + 1));
        } catch (const KnobError& e) {
            throw InputError(f, "", e.what());
        }
    };
    for (const auto& a : knobArgs)
        if (a.find('=') != std::string::npos) apply(a, flag);
    for (const auto& s : sets) apply(s, "--set");
    return k;
}

CostModel resolveCost(const Scenario& s, const std::vector<std::string>& costs) {
    CostModel c = s.cost;
    for (const auto& a : costs) {
        try {
            c.set(a);
        } catch (const CostError& e) {
            throw InputError("--cost", "", e.what());
        }
    }
    return c;
}

// A progress line with ETA on a terminal, for runs over a second; silent otherwise.
class Progress {
public:
    explicit Progress(std::string label) : m_label(std::move(label)), m_tty(::isatty(2) != 0), m_t0(clock::now()) {}
    ~Progress() { done(); }
    std::function<void(const Engine&)> callback() {
        if (!m_tty) return {};
        return [this](const Engine& e) { update(e); };
    }
    void done() {
        if (m_shown) std::fprintf(stderr, "\r\033[K");
        m_shown = false;
    }

private:
    using clock = std::chrono::steady_clock;
    void update(const Engine& e) {
        const double wall = std::chrono::duration<double>(clock::now() - m_t0).count();
        if (wall < 1.0 || wall - m_last < 0.2) return;
        m_last = wall;
        const double sim = double(e.now());
        const double f = e.progressFraction();
        std::string eta = f > 0.001 ? fmt::format("{:3.0f}%  ETA {:.0f} s", f * 100, wall * (1 - f) / f) : "";
        std::fprintf(stderr, "\r\033[K%s: simulated %.3f s, %.1f s wall  %s", m_label.c_str(), sim / 1e9, wall, eta.c_str());
        m_shown = true;
    }
    std::string m_label;
    bool m_tty;
    clock::time_point m_t0;
    double m_last = 0;
    bool m_shown = false;
};

// What every simulation of the command line shares: seed, invariant checks, coalescing.
RunOptions simOptions(const Scenario& s, const SimArgs& a) {
    RunOptions o;
    o.seed = a.seed ? *a.seed : s.seed;
    o.check_invariants = a.check;
    o.coalesce = a.coalesce;
    o.steady_hold_ns = std::int64_t(a.untilSteady * 1e9);
    return o;
}

RunResult runOne(const Scenario& s, const Variant& v, const CostModel& cost, const SimArgs& a, const std::string& label,
                 std::function<void(const DecisionRecord&)> sink = {}, std::function<void(const SchedEvent&)> events = {},
                 std::function<void(const Engine&)> onStart = {}, std::function<void(const WakeInputs&)> inputs = {},
                 const std::function<void(RunOptions&)>& tweak = {}) {
    RunOptions o = simOptions(s, a);
    if (tweak) tweak(o);
    o.wake_inputs_sink = std::move(inputs);
    o.decision_sink = std::move(sink);
    o.event_sink = std::move(events);
    o.on_start = std::move(onStart);
    Progress p(label);
    o.progress = p.callback();
    RunResult r = runScenario(s, v, cost, o);
    p.done();
    if (std::getenv("SCHEDLAB_DUMP")) std::fprintf(stderr, "%s", r.engine->dump().c_str());
    return r;
}

// Several simulations at once, `jobs` at a time (0 = the machine's cores), each on its own
// thread and each single-threaded: every simulation owns its engine and RNG, so the
// results (and digests) are those of running them one after the other. A terminal gets one
// progress line for all of them. The first failure (by index) is rethrown.
struct SimJob {
    const Scenario* s = nullptr;
    Variant variant;
    CostModel cost;
    std::int64_t steady_hold_ns = -1;  ///< RunOptions::steady_hold_ns for this run (-1: the command line's)
};
std::vector<RunResult> runJobs(const std::vector<SimJob>& runs, const SimArgs& a, const std::vector<std::string>& labels) {
    const std::size_t n = runs.size();
    std::vector<RunResult> results(n);
    std::vector<std::exception_ptr> errors(n);
    unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
    jobs = unsigned(std::min<std::size_t>(jobs, n));
    if (jobs <= 1) {
        for (std::size_t i = 0; i < n; ++i) {
            SimArgs ai = a;
            if (runs[i].steady_hold_ns >= 0) ai.untilSteady = double(runs[i].steady_hold_ns) / 1e9;
            results[i] = runOne(*runs[i].s, runs[i].variant, runs[i].cost, ai, labels[i]);
        }
        return results;
    }
    const bool tty = ::isatty(2) != 0;
    std::mutex mu;
    std::vector<double> frac(n, 0.0);
    const auto t0 = std::chrono::steady_clock::now();
    double lastShown = 0;
    bool shown = false;
    auto show = [&](std::size_t i, double f) {  // under mu
        frac[i] = f;
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (wall < 1.0 || wall - lastShown < 0.2) return;
        lastShown = wall;
        std::string line;
        for (std::size_t k = 0; k < n; ++k) line += fmt::format("{}{} {:3.0f}%", k ? "  " : "", labels[k], frac[k] * 100);
        std::fprintf(stderr, "\r\033[K%s  (%u at once, %.0f s)", line.c_str(), jobs, wall);
        shown = true;
    };
    std::atomic<std::size_t> next{0};
    auto worker = [&]() {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
            try {
                RunOptions o = simOptions(*runs[i].s, a);
                if (runs[i].steady_hold_ns >= 0) o.steady_hold_ns = runs[i].steady_hold_ns;
                if (tty)
                    o.progress = [&, i](const Engine& e) {
                        std::lock_guard<std::mutex> g(mu);
                        show(i, std::max(0.0, e.progressFraction()));
                    };
                results[i] = runScenario(*runs[i].s, runs[i].variant, runs[i].cost, o);
                std::lock_guard<std::mutex> g(mu);
                frac[i] = 1.0;
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    {
        std::vector<std::jthread> pool;
        for (unsigned k = 0; k < jobs; ++k) pool.emplace_back(worker);
    }
    if (shown) std::fprintf(stderr, "\r\033[K");
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    return results;
}

std::vector<RunResult> runMany(const Scenario& s, const std::vector<std::pair<Variant, CostModel>>& runs, const SimArgs& a,
                               const std::vector<std::string>& labels) {
    std::vector<SimJob> jobs;
    for (const auto& [v, c] : runs) jobs.push_back({&s, v, c});
    return runJobs(jobs, a, labels);
}

// Output paths are checked before a run starts, so a long run never ends in "cannot write".
void checkOutputPath(const std::string& path, const char* flag) {
    if (path.empty()) return;
    namespace fs = std::filesystem;
    fs::path parent = fs::path(path).parent_path();
    if (parent.empty()) parent = ".";
    if (!fs::is_directory(parent)) throw InputError(path, "", fmt::format("{}: cannot write (directory {} does not exist)", flag, parent.string()));
    if (::access(parent.c_str(), W_OK) != 0)
        throw InputError(path, "", fmt::format("{}: cannot write (directory {} is not writable)", flag, parent.string()));
    if (fs::is_directory(path)) throw InputError(path, "", fmt::format("{}: is a directory (give a file name)", flag));
}

const Variant& variantByName(const Scenario& s, const std::string& name) {
    for (const auto& v : s.variants)
        if (v.name == name) return v;
    std::string names;
    for (const auto& v : s.variants) names += (names.empty() ? "" : ", ") + v.name;
    throw InputError("--variant", name, fmt::format("no such variant in {} (it has: {})", s.file, names));
}

// --decisions: every wakeup decision as a JSON line.
struct DecisionWriter {
    std::ostream& f;
    DecisionWriter(OutputSet& outs, const std::string& p) : f(outs.open(p)) {}
    void write(const DecisionRecord& r) {
        const Decision& d = r.d;
        std::string ex;
        for (const auto& e : d.examined) ex += fmt::format("{}[{},\"{}\",\"{}\"]", ex.empty() ? "" : ",", e.cpu, toString(e.fn), toString(e.seen));
        f << fmt::format(
            "{{\"t\":{},\"pid\":{},\"waker_cpu\":{},\"prev_cpu\":{},\"cpu\":{},\"wake_flags\":\"{}\",\"stage0\":\"{}\",\"stage1\":\"{}\","
            "\"idlest\":\"{}\",\"stage2\":\"{}\",\"wakelist\":{},\"migrated\":{},\"preempted_curr\":{},\"idle_delay_hit\":{},\"claim_set\":{},"
            "\"raced\":{},\"t_queue\":{},\"t_wakeup\":{},\"examined\":[{}]}}\n",
            r.time, r.pid, d.this_cpu, d.prev_cpu, d.cpu, wakeFlagsToString(d.wake_flags), toString(d.stage0), toString(d.stage1), toString(d.idlest),
            toString(d.stage2), d.wakelist, d.migrated, d.preempted_curr, d.idle_delay_hit, d.claim_set, d.raced, d.t_queue, d.t_activate, ex);
    }
};

// --ftrace: the run's events as ftrace text.
struct FtraceFile {
    FtraceTextWriter w;
    FtraceFile(OutputSet& outs, const std::string& p, const Engine& eng, bool usecs)
        : w(
              outs.open(p), eng.nrCpus(), [e = &eng](std::int32_t pid) { return e->taskComm(pid); }, usecs) {}
};

}  // namespace

int cliTrace(const std::string& path, const std::string& clock, bool queuedOnly, const std::string& rqCsv) {
    checkOutputPath(rqCsv, "--rq-csv");
    {
        // The seed's bpftrace rq-length CSV or a trace: the first line tells.
        std::ifstream in(path);
        std::string first;
        if (in && std::getline(in, first) && looksLikeRqLenCsv(first)) {
            const RqLenCsv r = readRqLenCsv(path, !queuedOnly);
            double sum = 0;
            std::size_t n = 0;
            int top = 0;
            for (std::size_t row = 0; row < r.rows(); ++row)
                for (std::size_t c = 0; c < r.cpus.size(); ++c)
                    if (const int v = r.nrRunning(row, c); v >= 0) {
                        sum += v;
                        ++n;
                        top = std::max(top, v);
                    }
            const double span = r.rows() > 1 ? double(r.time.back() - r.time.front()) / 1e9 : 0.0;
            fmt::print("{}: runqueue-length CSV (bpftrace, {}), {} samples of {} CPUs over {:.3f} s; mean nr_running {:.2f}, max {}\n", path,
                       r.counts_running_task ? "rq->nr_running" : "queued only, read as a lower bound", r.rows(), r.cpus.size(), span,
                       n ? sum / double(n) : 0.0, top);
            for (const auto& p : r.problems) fmt::print("  {}:{}: {}\n", path, p.line, p.what);
            if (r.problem_count > r.problems.size()) fmt::print("  ... and {} more bad rows\n", r.problem_count - r.problems.size());
            if (r.truncated_line) fmt::print("  {}:{}: last row cut short (truncated file), skipped\n", path, r.truncated_line);
            return 0;
        }
    }
    TraceReadOptions o;
    o.clock = clock;
    const Trace t = readTrace(path, o);
    fmt::print("{}", t.summary());
    if (!rqCsv.empty()) {
        // Only the CPU count matters for runqueue lengths: a flat machine of the trace's size.
        TopologyParams p;
        p.name = fmt::format("flat-{}", std::max(1, t.nr_cpus));
        p.cores_per_llc = std::max(1, t.nr_cpus);
        const std::string csv = traceRqLenCsv(t, std::make_shared<const Topology>(Topology::fromParams(p)));
        writeFileAtomic(rqCsv, csv);
        fmt::print("{}: runqueue lengths every 20 ms, {} rows\n", rqCsv, std::count(csv.begin(), csv.end(), '\n') - 1);
    }
    return 0;
}

namespace {

/// The machine a trace was recorded on: --topology, or one line naming the presets of its size.
std::shared_ptr<const Topology> topologyOfTrace(const std::string& name, int nrCpus) {
    if (name.empty()) {
        const auto same = Topology::presetsWithCpus(nrCpus);
        throw InputError("--topology", "",
                         fmt::format("give the machine the trace was recorded on (the trace has {} CPUs; presets with {} CPUs: {}; or an hwloc XML)",
                                     nrCpus, nrCpus, same.empty() ? "none" : fmt::format("{}", fmt::join(same, ", "))));
    }
    auto topo = std::make_shared<const Topology>(loadTopology(name));
    if (topo->nrCpus() < nrCpus) throw InputError("--topology", name, fmt::format("has {} CPUs, the trace {}", topo->nrCpus(), nrCpus));
    return topo;
}

}  // namespace

int cliCompareTraces(const CompareTracesArgs& a) {
    const Trace base = readTrace(a.base);
    const Trace patch = readTrace(a.patch);
    if (!a.noAgree)
        for (const Trace* t : {&base, &patch})
            if (!t->ns_timestamps) throw InputError(t->file, "", "timestamps are not in ns (counter/uptime/tsc clock): give --no-agree");
    const auto topo = topologyOfTrace(a.topology, std::max(base.nr_cpus, patch.nr_cpus));
    TraceCompareOptions o;
    o.workload_only = a.workloadOnly;
    o.agreement = !a.noAgree;
    const Knobs kb = resolveKnobs(Knobs{}, a.knobs, {}, "--knobs");
    const Knobs kp = a.patchKnobs.empty() ? kb : resolveKnobs(Knobs{}, a.patchKnobs, {}, "--patch-knobs");
    fmt::print("{}", traceCompareTable(base, patch, topo, kb, kp, o));
    return 0;
}

int cliAgree(const AgreeArgs& a) {
    checkOutputPath(a.decisions, "--decisions");
    if (a.sync != "comm" && a.sync != "task" && a.sync != "none") throw InputError("--sync", a.sync, "expected comm, task or none");
    TraceReadOptions ro;
    ro.clock = a.clock;
    const Trace t = readTrace(a.trace, ro);
    if (!t.ns_timestamps)
        throw InputError(a.trace, "", "timestamps are not in ns (counter/uptime/tsc clock): PELT and wakee_flips decay cannot be rebuilt");
    auto topo = topologyOfTrace(a.topology, t.nr_cpus);
    const Knobs k = resolveKnobs(Knobs{}, a.knobs, a.sets, "--knobs");
    AgreeOptions o;
    o.sync = a.sync;
    if (!a.syncComm.empty()) o.sync_comm = a.syncComm;
    o.workload_only = a.workloadOnly;
    if (a.nrIdleScanAt != "decision" && a.nrIdleScanAt != "balance")
        throw InputError("--nr-idle-scan-at", a.nrIdleScanAt, "expected decision or balance");
    o.nr_idle_scan_at = a.nrIdleScanAt;
    if (a.wakeInputs != "use" && a.wakeInputs != "ignore") throw InputError("--wake-inputs", a.wakeInputs, "expected use or ignore");
    o.wake_inputs = a.wakeInputs;
    o.examples_per_class = a.examples;
    const AgreeReport r = agree(t, topo, k, o);
    if (!a.decisions.empty()) {
        std::string out;
        for (const AgreeRow& row : r.rows)
            out += fmt::format(
                "{{\"line\":{},\"t\":{},\"pid\":{},\"waker\":{},\"this_cpu\":{},\"prev\":{},\"kernel\":{},\"schedlab\":{},"
                "\"sync\":{},\"cold\":{},\"late\":{},\"racy\":{},\"reasons\":\"{}\",\"class\":\"{}\"}}\n",
                row.line, row.time, row.pid, row.waker, row.this_cpu, row.prev, row.kernel, row.sim, row.sync, row.cold, row.late, row.racy,
                row.reasons, row.cls < 0 ? "" : toString(DisagreeClass(row.cls)));
        writeFileAtomic(a.decisions, out);
    }
    if (a.json) fmt::print("{}\n", r.json().dump(1));
    else fmt::print("{}", r.text());
    return 0;
}

// loadScenario(), its warnings on stderr (legal but costly inputs: the run goes ahead);
// --until as its stop, and an endless scenario without one refused.
// --until's simulated time (ns), 0 without one.
std::int64_t untilNs(const SimArgs& a) {
    if (a.until.empty()) return 0;
    const auto ns = parseDurationNs(a.until);
    const bool unit = std::isalpha(static_cast<unsigned char>(a.until.back()));
    if (!ns || !unit || *ns <= 0 || *ns > std::int64_t(36000) * 1000000000)
        throw InputError("--until", a.until, "is not a simulated time with a unit between 1 ns and 10 h (e.g. 2s, 500ms)");
    return *ns;
}

Scenario loadScenarioSaying(const SimArgs& a) {
    if (a.scenario.empty()) throw InputError("run", "", "give a SCENARIO, or --from-state FILE");
    Scenario s = loadScenario(a.scenario);
    if (const std::int64_t ns = untilNs(a)) {
        s.stop_s = double(ns) / 1e9;
        s.doc["stop"]["sim_time_s"] = s.stop_s;  // a sweep's emitted copy stops there too
    }
    if (const std::string why = scenarioEndless(s); !why.empty())
        throw InputError(s.file, "", fmt::format("{}: give --until T (e.g. --until 2s)", why));
    for (const std::string& w : s.warnings) fmt::print(stderr, "schedlab-cli: warning: {}\n", w);
    return s;
}

// A simulated time as messages give it: "t = 0.5 s".
std::string simTimeText(std::int64_t ns) { return fmt::format("t = {:.9g} s", double(ns) / 1e9); }

// run --from-state FILE: the checkpoint, its scenario stopping at --until, what it ran as. The
// flags that would make another run (a scenario, knobs, cost, seed) are refused.
Checkpoint loadStateSaying(const SimArgs& a) {
    const std::pair<bool, const char*> others[] = {{!a.scenario.empty(), "a SCENARIO"},
                                                   {!a.variant.empty(), "--variant"},
                                                   {!a.knobs.empty() || !a.sets.empty(), "--knobs/--set"},
                                                   {!a.cost.empty(), "--cost"},
                                                   {a.seed.has_value(), "--seed"},
                                                   {!a.saveState.empty() && a.saveState == a.fromState, "--save-state to the same file"},
                                                   {a.untilSteady > 0, "--until-steady"}};
    for (const auto& [given, what] : others)
        if (given)
            throw InputError("--from-state", a.fromState, fmt::format("{} does not go with it: the state file carries the run it continues", what));
    Checkpoint c = loadCheckpoint(a.fromState);
    const std::int64_t stop = untilNs(a);
    if (stop == 0)
        throw InputError("--from-state", a.fromState, fmt::format("give --until T past the state's {} (e.g. --until 2s)", simTimeText(c.time_ns)));
    if (stop <= c.time_ns)
        throw InputError("--until", a.until, fmt::format("is not past the state's time ({}): the run goes on from there", simTimeText(c.time_ns)));
    c.scenario.stop_s = double(stop) / 1e9;
    c.scenario.doc["stop"]["sim_time_s"] = c.scenario.stop_s;
    return c;
}

int cliRun(const SimArgs& a) {
    std::optional<Checkpoint> from;
    if (!a.fromState.empty()) from = loadStateSaying(a);
    Scenario s = from ? from->scenario : loadScenarioSaying(a);
    checkOutputPath(a.jsonOut, "--json");
    checkOutputPath(a.decisions, "--decisions");
    checkOutputPath(a.saveState, "--save-state");
    if (!a.saveState.empty() && s.stop_s <= 0)
        throw InputError("--save-state", a.saveState, "needs --until T: the checkpoint is the run at that time");
    if (!a.saveState.empty() && a.untilSteady > 0)
        throw InputError("--save-state", a.saveState, "is taken at --until's time, not with --until-steady");
    Variant v;
    if (from) {
        v.name = from->variant;
        v.knobs = from->knobs;
    } else {
        v = a.variant.empty() ? s.variants.front() : variantByName(s, a.variant);
        v.knobs = resolveKnobs(v.knobs, a.knobs, a.sets, "--knobs");
        if (!a.knobs.empty() || !a.sets.empty()) v.name = v.knobs.presetName;
    }
    const CostModel cost = from ? from->cost : resolveCost(s, a.cost);
    if (!a.csvDir.empty() && !std::filesystem::is_directory(a.csvDir)) throw InputError(a.csvDir, "", "--csv: not a directory (create it first)");
    // Every file of the run is written to a temporary and renamed into place only when all are
    // complete (a failed or interrupted run leaves none of them, nor a temporary).
    OutputSet outs;
    std::unique_ptr<DecisionWriter> dw;
    if (!a.decisions.empty()) dw = std::make_unique<DecisionWriter>(outs, a.decisions);
    std::function<void(const DecisionRecord&)> sink;
    if (dw) sink = [&](const DecisionRecord& r) { dw->write(r); };
    checkOutputPath(a.ftrace, "--ftrace");
    checkOutputPath(a.traceDat, "--trace-dat");
    std::unique_ptr<FtraceFile> ft;
    std::unique_ptr<TraceDatWriter> td;  // --trace-dat: the same events as a trace-cmd trace.dat
    std::function<void(const SchedEvent&)> events;
    std::function<void(const Engine&)> onStart;
    std::function<void(const WakeInputs&)> inputs;
    if (!a.ftrace.empty() || !a.traceDat.empty()) {
        onStart = [&](const Engine& e) {
            if (!a.ftrace.empty()) ft = std::make_unique<FtraceFile>(outs, a.ftrace, e, a.ftraceUsecs);
            if (!a.traceDat.empty())
                td = std::make_unique<TraceDatWriter>(a.traceDat, e.nrCpus(), [p = &e](std::int32_t pid) { return p->taskComm(pid); });
        };
        events = [&](const SchedEvent& e) {
            if (ft) ft->w.write(e);
            if (td) td->write(e);
        };
        if (!a.noWakeInputs)
            inputs = [&](const WakeInputs& in) {
                if (ft) ft->w.writeWakeInputs(in);
                if (td) td->writeWakeInputs(in);
            };
    }
    std::string state;  // --save-state: the checkpoint at the stop
    const std::uint64_t seed = from ? from->seed : a.seed ? *a.seed : s.seed;
    const auto tweak = [&](RunOptions& o) {
        if (from) {
            o.from_state = &*from;
            o.seed = from->seed;
        }
        if (!a.saveState.empty()) o.at_stop = [&](Engine& e) { state = encodeCheckpoint(s, v.name, cost, seed, e); };
    };
    RunResult r = runOne(s, v, cost, a, fmt::format("{} [{}]", s.name, v.knobs.presetName), sink, events, onStart, inputs, tweak);
    if (!a.saveState.empty()) {
        if (state.empty())
            throw InputError("--save-state", a.saveState,
                             fmt::format("the run ended at {} before its stop: there is no run to go on from", simTimeText(r.engine->now())));
        outs.add(a.saveState, state);
    }
    if (!a.jsonOut.empty()) outs.add(a.jsonOut, runReportJson(s, r).dump(1) + "\n");
    if (!a.csvDir.empty())
        for (const auto& [name, content] : runCsvFiles(r)) outs.add((std::filesystem::path(a.csvDir) / name).string(), content);
    outs.commit();
    if (td) td->commit();
    if (a.digestOnly) fmt::print("{:016x}\n", r.digest);
    else fmt::print("{}", runReportText(s, r));
    if (a.flow)
        fmt::print("\nDecision flow ({} [{}]):\n{}", v.name, v.knobs.presetName, flowText(r.engine->metrics().flow, nullptr, v.knobs.presetName, ""));
    return 0;
}

int cliCompare(const SimArgs& a) {
    Scenario s = loadScenarioSaying(a);
    checkOutputPath(a.jsonOut, "--json");
    auto pick = [&](const std::string& name, const std::vector<std::string>& sets, std::size_t idx, const char* flag) {
        Variant v;
        if (name.empty()) {
            if (s.variants.size() <= idx)
                throw InputError(s.file, "variants", fmt::format("has {} variant(s); give {} PRESET", s.variants.size(), flag));
            v = s.variants[idx];
        } else {
            bool found = false;
            for (const auto& x : s.variants)
                if (x.name == name) {
                    v = x;
                    found = true;
                }
            if (!found) {
                v.name = name;
                v.knobs = resolveKnobs(Knobs{}, {name}, {}, flag);
            }
        }
        v.knobs = resolveKnobs(v.knobs, {}, sets, flag);
        for (const auto& g : a.sets) v.knobs = resolveKnobs(v.knobs, {}, {g}, "--set");
        return v;
    };
    const Variant va = pick(a.a, a.setsA, 0, "--a");
    const Variant vb = pick(a.b, a.setsB, 1, "--b");
    const CostModel cost = resolveCost(s, a.cost);
    std::vector<RunResult> both =
        runMany(s, {{va, cost}, {vb, cost}}, a, {fmt::format("base [{}]", va.knobs.presetName), fmt::format("patch [{}]", vb.knobs.presetName)});
    RunResult& ra = both[0];
    RunResult& rb = both[1];
    std::string table = compareTable(s, ra, rb);
    if (a.flow) {
        auto name = [](const Variant& v) { return v.name == v.knobs.presetName ? v.name : fmt::format("{} [{}]", v.name, v.knobs.presetName); };
        table += fmt::format("\nDecision flow (A: {}, B: {}):\n{}", name(va), name(vb),
                             flowText(ra.engine->metrics().flow, &rb.engine->metrics().flow, va.knobs.presetName, vb.knobs.presetName));
    }
    fmt::print("{}", table);
    if (!a.jsonOut.empty()) {
        nlohmann::json j = {{"schedlab", "compare"}, {"base", runReportJson(s, ra)}, {"patch", runReportJson(s, rb)}, {"table", table}};
        writeFileAtomic(a.jsonOut, j.dump(1) + "\n");
    }
    return 0;
}

namespace {

std::string shellQuote(const std::string& x) {
    std::string o = "'";
    for (char c : x) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return o + "'";
}

// sweep --emit-jobs DIR: the sweep as independent jobs, one point each, for GNU parallel
// (`parallel < DIR/jobs.txt`, over ssh with --sshloginfile) or a Slurm job array
// (`sbatch DIR/sweep.sbatch`); `sweep --merge DIR` then prints the table. DIR holds a copy
// of the scenario (named as the original, with its topology file beside it), so the jobs do
// not depend on the directory they were emitted from. Each job is `schedlab-cli sweep` of
// one value with the same options, which writes its point's JSON (with the table's parts).
void emitSweepJobs(const SimArgs& a, const Scenario& s, const std::string& name, const std::vector<std::string>& values, std::uint64_t seed) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::absolute(a.emitJobs).lexically_normal();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) throw InputError(a.emitJobs, "", "--emit-jobs: cannot create the directory");
    if (fs::exists(dir / "sweep.json"))
        throw InputError((dir / "sweep.json").string(), "", "--emit-jobs: the directory already holds a sweep (remove it or pick another)");
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(readFileOrThrow(a.scenario));
    doc["name"] = s.name;
    if (doc.contains("topology") && doc["topology"].is_string()) {
        const fs::path t = fs::path(a.scenario).parent_path() / doc["topology"].get<std::string>();
        if (fs::is_regular_file(t)) {  // a topology file, not a preset: beside the copy
            fs::copy_file(t, dir / t.filename(), fs::copy_options::overwrite_existing, ec);
            if (ec) throw InputError((dir / t.filename()).string(), "", "--emit-jobs: cannot copy the topology file: " + ec.message());
            doc["topology"] = t.filename().string();
        }
    }
    writeFileAtomic((dir / "scenario.json").string(), doc.dump(1) + "\n");
    const std::string cli = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) throw InputError("/proc/self/exe", "", "--emit-jobs: cannot find schedlab-cli's own path");
    std::string jobs;
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::string point = fmt::format("point-{:03}", i);
        std::vector<std::string> args{cli, "sweep", "scenario.json", "--vary", name + "=" + values[i], "--seed", std::to_string(seed), "--jobs", "1"};
        if (!a.variant.empty()) args.insert(args.end(), {"--variant", a.variant});
        if (!a.knobs.empty()) {
            args.push_back("--knobs");
            args.insert(args.end(), a.knobs.begin(), a.knobs.end());
        }
        for (const auto& x : a.sets) args.insert(args.end(), {"--set", x});
        for (const auto& x : a.cost) args.insert(args.end(), {"--cost", x});
        if (a.check) args.push_back("--check");
        if (!a.coalesce) args.push_back("--no-coalesce");
        args.insert(args.end(), {"--json", point + ".json"});
        std::string line = "cd " + shellQuote(dir.string()) + " &&";
        for (const auto& x : args) line += " " + shellQuote(x);
        jobs += line + " > " + point + ".txt\n";
        points.push_back(point + ".json");
    }
    writeFileAtomic((dir / "jobs.txt").string(), jobs);
    writeFileAtomic(
        (dir / "sweep.sbatch").string(),
        fmt::format("#!/bin/bash\n"
                    "# schedlab sweep of {} over {} points: one point per array task, then\n"
                    "#   schedlab-cli sweep --merge {}\n"
                    "# Each simulation is single-threaded; DIR must be on a file system the nodes share.\n"
                    "#SBATCH --job-name=schedlab-sweep\n"
                    "#SBATCH --array=0-{}\n"
                    "#SBATCH --ntasks=1\n"
                    "#SBATCH --cpus-per-task=1\n"
                    "#SBATCH --output={}/slurm-%A_%a.out\n"
                    "set -euo pipefail\n"
                    "line=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {})\n"
                    "bash -c \"$line\"\n",
                    name, values.size(), shellQuote(dir.string()), values.size() - 1, dir.string(), shellQuote((dir / "jobs.txt").string())));
    nlohmann::json manifest = {{"schedlab", "sweep-jobs"}, {"scenario", s.name}, {"vary", name}, {"values", values}, {"points", points}};
    writeFileAtomic((dir / "sweep.json").string(), manifest.dump(1) + "\n");
    fmt::print(
        "{} jobs in {}:\n  parallel < {}            # this machine (or: --sshloginfile HOSTS, DIR shared)\n"
        "  sbatch {}                # a Slurm cluster: one point per array task\n"
        "then: {} sweep --merge {}\n",
        values.size(), dir.string(), (dir / "jobs.txt").string(), (dir / "sweep.sbatch").string(), cli, dir.string());
}

nlohmann::json readJsonFile(const std::string& path) { return parseJsonOrThrow(readFileOrThrow(path), path); }

// sweep --merge DIR: the table of an emitted sweep from its points' JSON results.
int mergeSweep(const SimArgs& a) {
    namespace fs = std::filesystem;
    const fs::path dir(a.merge);
    const std::string mpath = (dir / "sweep.json").string();
    if (!fs::is_regular_file(mpath)) throw InputError(a.merge, "", "--merge: not a directory written by sweep --emit-jobs (no sweep.json)");
    checkOutputPath(a.jsonOut, "--json");
    const nlohmann::json m = readJsonFile(mpath);
    std::string name;
    std::vector<std::string> values, points;
    try {
        name = m.at("vary").get<std::string>();
        values = m.at("values").get<std::vector<std::string>>();
        points = m.at("points").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
        throw InputError(mpath, "", fmt::format("not a sweep manifest: {}", e.what()));
    }
    if (points.size() != values.size() || points.empty()) throw InputError(mpath, "points", "must list one result file per value");
    std::vector<SweepParts> parts;
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& p : points) {
        const std::string path = (dir / p).string();
        if (!fs::is_regular_file(path)) throw InputError(path, "", "missing: its job has not run or failed (run it, then merge again)");
        const nlohmann::json j = readJsonFile(path);
        if (!j.contains("sweep_parts") || !j.contains("runs") || !j["runs"].is_array() || j["runs"].size() != 1)
            throw InputError(path, "sweep_parts", "missing: not a one-point sweep result");
        try {
            parts.push_back(sweepPartsFromJson(j["sweep_parts"]));
        } catch (const std::runtime_error& e) {
            throw InputError(path, "", e.what());
        }
        bool one = !parts.back().rows.empty();
        for (const auto& r : parts.back().rows) one = one && (r.section || r.values.size() == 1);
        if (!one) throw InputError(path, "sweep_parts.rows", "must hold one run's values");
        runs.push_back(j["runs"][0]);
    }
    // The rows of the first point, each with every point's value (0 where a point lacks a
    // row: only reason-code rows differ between runs, and the table shows none of them).
    SweepParts merged = parts.front();
    for (auto& r : merged.rows) {
        r.values.clear();
        if (r.section) continue;
        for (const auto& p : parts) {
            double v = 0;
            for (const auto& q : p.rows)
                if (!q.section && q.label == r.label && !q.values.empty()) {
                    v = q.values.front();
                    break;
                }
            r.values.push_back(v);
        }
    }
    const std::string table = sweepTable(merged, name, values);
    fmt::print("{}", table);
    if (!a.jsonOut.empty()) {
        nlohmann::json j = {{"schedlab", "sweep"}, {"vary", name}, {"values", values},
                            {"table", table},      {"runs", runs}, {"sweep_parts", sweepPartsJson(merged)}};
        writeFileAtomic(a.jsonOut, j.dump(1) + "\n");
    }
    return 0;
}

}  // namespace

int cliScenarios() {
    namespace fs = std::filesystem;
    const std::string dir = shippedScenariosDir();
    if (dir.empty()) throw InputError("scenarios", "", "no shipped scenarios found (neither installed nor in the source tree)");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    fmt::print("shipped scenarios in {} (run, compare and sweep take a name without .json):\n", dir);
    for (const auto& f : files) {
        const Scenario s = loadScenario(f.string());
        std::string first = s.description.substr(0, s.description.find(". "));
        if (first.size() > 110) first = first.substr(0, 107) + "...";
        fmt::print("  {:<40} {:<16} {}\n", f.stem().string(), s.topo ? s.topo->name() : std::string(), first);
    }
    return 0;
}

int cliSweep(const SimArgs& a) {
    if (!a.merge.empty()) {
        if (!a.emitJobs.empty() || !a.scenario.empty() || !a.vary.empty())
            throw InputError("--merge", a.merge, "takes the directory only (no scenario, --vary or --emit-jobs)");
        return mergeSweep(a);
    }
    if (a.scenario.empty()) throw InputError("sweep", "scenario", "required (or --merge DIR)");
    if (a.vary.empty()) throw InputError("sweep", "--vary", "required: NAME=v1,v2,...");
    Scenario s = loadScenarioSaying(a);
    checkOutputPath(a.jsonOut, "--json");
    auto eq = a.vary.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= a.vary.size())
        throw InputError("--vary", a.vary, "expected NAME=v1,v2,... (a knob or a cost parameter)");
    const std::string name = a.vary.substr(0, eq);
    std::vector<std::string> values;
    for (std::size_t pos = eq + 1;;) {
        auto c = a.vary.find(',', pos);
        values.push_back(a.vary.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
        if (c == std::string::npos) break;
        pos = c + 1;
    }
    Variant base = a.variant.empty() ? s.variants.front() : variantByName(s, a.variant);
    base.knobs = resolveKnobs(base.knobs, a.knobs, a.sets, "--knobs");
    const CostModel baseCost = resolveCost(s, a.cost);
    // A knob if the knob table knows the name (any case, as --set), else a cost parameter.
    const bool isKnob = [&] {
        try {
            (void)Knobs{}.get(name);
            return true;
        } catch (const KnobError&) {
            return false;
        }
    }();
    // Validate every value before running anything.
    std::vector<std::pair<Variant, CostModel>> runs;
    for (const auto& val : values) {
        Variant v = base;
        CostModel c = baseCost;
        if (isKnob) {
            try {
                v.knobs.set(name, val);
            } catch (const KnobError& e) {
                throw InputError("--vary", name, e.what());
            }
        } else {
            try {
                c.set(name, val);
            } catch (const CostError& e) {
                throw InputError("--vary", name, std::string(e.what()) + " (not a knob either)");
            }
        }
        v.name = fmt::format("{}={}", name, val);
        runs.push_back({v, c});
    }
    if (!a.emitJobs.empty()) {
        emitSweepJobs(a, s, name, values, simOptions(s, a).seed);
        return 0;
    }
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < runs.size(); ++i) labels.push_back(fmt::format("{}={}", name, values[i]));
    std::vector<RunResult> results = runMany(s, runs, a, labels);
    std::vector<const RunResult*> ptrs;
    for (const auto& r : results) ptrs.push_back(&r);
    const SweepParts parts = sweepParts(s, name, ptrs);
    const std::string table = sweepTable(parts, name, values);
    fmt::print("{}", table);
    if (!a.jsonOut.empty()) {
        nlohmann::json j = {{"schedlab", "sweep"}, {"vary", name}, {"values", values}, {"table", table}, {"sweep_parts", sweepPartsJson(parts)}};
        for (const auto& r : results) j["runs"].push_back(runReportJson(s, r));
        writeFileAtomic(a.jsonOut, j.dump(1) + "\n");
    }
    return 0;
}

// schedlab-cli reproduce [NAME...]: the seed threads' claims on the shipped scenarios
// (reproduce.h), every distinct run once, `--jobs` at a time.
namespace {

// A word of a shell command: as it is when it needs no quoting, else shellQuote()d.
std::string shellWord(const std::string& w) {
    const bool plain =
        !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char ch) { return std::isalnum(ch) || std::strchr("/._-+,:=@%", ch); });
    return plain ? w : shellQuote(w);
}

// The command that wrote a results page, as it would be typed again.
std::string reproduceCommand(const ReproduceArgs& a) {
    std::string c = "schedlab-cli reproduce";
    for (const auto& n : a.names) c += " " + shellWord(n);
    if (a.jobs) c += fmt::format(" -j {}", a.jobs);
    if (a.quick) c += " --quick";
    if (!a.seeds.empty()) {
        c += " --seed ";
        for (std::size_t i = 0; i < a.seeds.size(); ++i) c += fmt::format("{}{}", i ? "," : "", a.seeds[i]);
    }
    if (a.steadyHold != 1.0) c += fmt::format(" --steady-hold {}", a.steadyHold);
    if (!a.scenarios.empty()) c += " --scenarios " + shellWord(a.scenarios);
    if (!a.jsonOut.empty()) c += " --json " + shellWord(a.jsonOut);
    return c + " --markdown " + shellWord(a.markdownOut);
}

// The reproduce table as a Markdown page: what wrote it, when, with which version, on which machine.
std::string reproduceMarkdown(const ReproduceArgs& a, const std::string& table, double wall_s) {
    const calibrate::MachineInfo m = calibrate::probeMachine();
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &utc);
    std::string cpu = m.modelName.empty() ? std::string("an unknown CPU") : m.modelName;
    if (m.family >= 0) cpu += fmt::format(" ({} family {} model {} stepping {}, {})", m.vendor, m.family, m.model, m.stepping, m.microarchitecture);
    const std::string vm = m.virtualized ? fmt::format(", a virtual machine ({})", m.hypervisor.empty() ? "unknown" : m.hypervisor) : std::string();
    return fmt::format(
        "# Results: the seed threads' claims in schedlab\n\n"
        "This page is written by `{}`:\n"
        "run it again rather than edit it. How to read the table, claim by claim, and why the claims that\n"
        "do not reproduce do not: [claims.md](claims.md).\n\n"
        "- When: {}, {:.0f} s of wall time\n"
        "- schedlab {}\n"
        "- Machine: {}, {} CPUs online, Linux {}{}\n\n"
        "```text\n{}```\n",
        reproduceCommand(a), when, wall_s, SCHEDLAB_VERSION, cpu, m.onlineCpus, m.kernel, vm, table);
}

}  // namespace

int cliReproduce(const ReproduceArgs& a) {
    checkOutputPath(a.jsonOut, "--json");
    checkOutputPath(a.markdownOut, "--markdown");
    std::vector<const Claim*> claims;
    for (const Claim& c : seedClaims()) {
        bool want = a.names.empty();
        for (const auto& n : a.names) want |= c.id == n || c.id.rfind(n + "-", 0) == 0;
        if (want) claims.push_back(&c);
    }
    for (const auto& n : a.names) {
        bool known = false;
        for (const Claim& c : seedClaims()) known |= c.id == n || c.id.rfind(n + "-", 0) == 0;
        if (!known) throw InputError("reproduce", n, "no such claim (the claims: schedlab-cli reproduce --list)");
    }
    if (a.list) {
        for (const Claim& c : seedClaims()) fmt::print("{:<30} {} vs {} on {}: {}\n", c.id, c.patch.label(), c.base.label(), c.scenario, c.source);
        for (const auto& n : claimsNotRun()) fmt::print("{:<22} (not in the table) {}\n", n.id, n.source);
        return 0;
    }
    namespace fs = std::filesystem;
    const std::string dir = a.scenarios.empty() ? shippedScenariosDir() : a.scenarios;
    if (!fs::is_directory(dir))
        throw InputError(dir, "", "--scenarios: not a directory (the shipped scenarios: resources/scenarios/ or PREFIX/share/schedlab/scenarios)");
    // Distinct runs, in claim order, once per seed (no seed: the scenario's own).
    std::vector<std::optional<std::uint64_t>> seeds;
    for (auto sd : a.seeds) seeds.push_back(sd);
    if (seeds.empty()) seeds.push_back(std::nullopt);
    std::vector<std::string> keys;
    std::vector<ClaimRun> runs;
    std::vector<std::optional<std::uint64_t>> runSeed;
    std::vector<bool> runFixed;  // a fixed-work claim's run: stops after the steady hold (full runs)
    auto indexOf = [&](const ClaimRun& r, std::optional<std::uint64_t> seed, bool fixedWork) {
        const std::string k = r.key() + (seed ? fmt::format("|seed={}", *seed) : "");
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i] == k) return i;
        keys.push_back(k);
        runs.push_back(r);
        runSeed.push_back(seed);
        runFixed.push_back(fixedWork);
        return keys.size() - 1;
    };
    // sides[claim][seed]: the base and patch runs.
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> sides(claims.size());
    for (const auto& sd : seeds)
        for (std::size_t i = 0; i < claims.size(); ++i)
            sides[i].push_back({indexOf(claimRun(*claims[i], false, a.quick), sd, claims[i]->fixed_work),
                                indexOf(claimRun(*claims[i], true, a.quick), sd, claims[i]->fixed_work)});
    const double hold = a.quick ? 0.0 : a.steadyHold;
    std::vector<PreparedRun> prepared;
    prepared.reserve(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) {
        prepared.push_back(prepareClaimRun(runs[i], dir));
        if (runSeed[i]) prepared.back().scenario.seed = *runSeed[i];
    }
    // The fixed-work (hackbench) runs first: they are the long ones, and `--jobs` workers take
    // the runs in this order, so the short ones fill in at the end (the results are the same
    // in any order: each run is its own simulation).
    std::vector<std::size_t> order(prepared.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return bool(runFixed[i]); });
    std::vector<SimJob> jobs;
    std::vector<std::string> labels;
    for (std::size_t i : order) {
        jobs.push_back({&prepared[i].scenario, prepared[i].variant, prepared[i].cost, runFixed[i] ? std::int64_t(hold * 1e9) : 0});
        labels.push_back(fmt::format("{}", i + 1));
    }
    SimArgs sa;
    sa.jobs = a.jobs;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<RunResult> ran = runJobs(jobs, sa, labels);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<RunResult> results(ran.size());
    for (std::size_t k = 0; k < order.size(); ++k) results[order[k]] = std::move(ran[k]);
    std::vector<ClaimOutcome> out;
    for (std::size_t i = 0; i < claims.size(); ++i) {
        ClaimOutcome o = evaluateClaim(*claims[i], results[sides[i][0].first], results[sides[i][0].second], hold);
        if (a.seeds.size() > 1)
            for (std::size_t k = 0; k < seeds.size(); ++k) {
                const RunResult& b = results[sides[i][k].first];
                const RunResult& p = results[sides[i][k].second];
                o.seeds.push_back({*seeds[k], claimFigure(*claims[i], b, hold > 0), claimFigure(*claims[i], p, hold > 0)});
            }
        out.push_back(std::move(o));
    }
    const std::string table = reproduceTable(out, a.quick, wall, a.seeds);
    fmt::print("{}", table);
    if (!a.jsonOut.empty()) writeFileAtomic(a.jsonOut, reproduceJson(out, a.quick, wall, a.seeds).dump(2) + "\n");
    if (!a.markdownOut.empty()) writeFileAtomic(a.markdownOut, reproduceMarkdown(a, table, wall));
    return 0;
}

}  // namespace sched
