// SPDX-License-Identifier: GPL-2.0-or-later
// scenario.cpp: scenario parsing (strict) and running.
#include "sim/scenario.h"

#include "sim/checkpoint.h"

#include "util/json_obj.h"
#include "kernel/state_json.h"
#include "topology/topology_json.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

namespace sched {

namespace {

int intIn(const Obj& o, const std::string& k, int lo, int hi, int def) { return int(o.i64(k, lo, hi).value_or(def)); }

// runtime_s: 0 (endless: until the run is stopped) or 1 ms to an hour of simulated time.
double runtimeIn(const Obj& o, const std::string& file, const std::string& key, double def) {
    const double v = o.number("runtime_s", 0, 3600).value_or(def);
    if (v > 0 && v < 0.001) throw InputError(file, key + ".runtime_s", fmt::format("{} is neither 0 (endless) nor 0.001..3600", v));
    return v;
}

}  // namespace

namespace {

// "cpus": a cpulist as taskset -c takes it ("0-7,128-135"); its syntax here, whether the
// machine has those CPUs is checked by parseScenario(), which knows the topology. Kept normalised.
std::string cpusFromJson(Obj& o, const std::string& file, const std::string& key) {
    const auto text = o.str("cpus");
    if (!text) return {};
    std::string err;
    const auto m = CpuMask::parseList(*text, kMaxCpus, &err);
    if (!m) throw InputError(file, key + ".cpus", err + " (a cpulist as taskset -c takes it, e.g. \"0-7,128-135\")");
    if (m->empty()) throw InputError(file, key + ".cpus", "is empty: the workload's tasks could run nowhere");
    return m->toList();
}

// "taskset -c LIST " before a pinned workload's command ("" for every CPU).
std::string tasksetPrefix(const std::string& cpus) { return cpus.empty() ? std::string() : "taskset -c " + cpus + " "; }

}  // namespace

const std::string& workloadCpus(const WorkloadParams& w) {
    return std::visit([](const auto& p) -> const std::string& { return p.cpus; }, w);
}

WorkloadParams workloadFromJson(const json& v, const std::string& file, const std::string& key) {
    if (!v.is_object()) throw InputError(file, key, "must be an object with a \"type\"");
    if (!v.contains("type") || !v["type"].is_string())
        throw InputError(file, key + ".type",
                         "missing (hackbench, perf-messaging, schbench, schbench-classic, stress, tbench, netperf-rr, context-switch1, locktorture, "
                         "cyclictest)");
    const std::string type = v["type"].get<std::string>();
    if (type == "hackbench" || type == "perf-messaging") {
        Obj o(v, file, key, {"type", "groups", "fds", "loops", "datasize", "threads", "pipe", "hot_set_bytes", "cpus"});
        HackbenchParams p;
        p.cpus = cpusFromJson(o, file, key);
        p.perf = type == "perf-messaging";
        p.groups = intIn(o, "groups", 1, 4096, p.groups);
        p.fds = intIn(o, "fds", 1, 1024, p.fds);
        p.loops = intIn(o, "loops", 0, 100000000, p.loops);  // 0: endless
        p.datasize = intIn(o, "datasize", 1, 65536, p.datasize);
        p.threads = o.boolean("threads").value_or(false);
        p.pipe = o.boolean("pipe").value_or(false);
        p.hot_set = o.i64("hot_set_bytes", 0, std::int64_t(1) << 30).value_or(0);
        return p;
    }
    if (type == "schbench" || type == "schbench-classic") {
        Obj o(v, file, key,
              {"type", "message_threads", "workers", "runtime_s", "warmup_s", "sleep_us", "cputime_us", "ops", "op_ns", "footprint_kb", "cpu_lock",
               "cpus"});
        SchbenchParams p;
        p.cpus = cpusFromJson(o, file, key);
        p.v2023 = type == "schbench";
        if (p.v2023) {
            p.message_threads = 1;
            p.workers = 0;
            p.sleep_us = 100;
            p.warmup_s = 0;
        }
        p.message_threads = intIn(o, "message_threads", 1, 1024, p.message_threads);
        p.workers = intIn(o, "workers", 0, 65536, p.workers);
        p.runtime_s = runtimeIn(o, file, key, p.runtime_s);
        p.warmup_s = o.number("warmup_s", 0, 3600).value_or(p.warmup_s);
        p.sleep_us = o.i64("sleep_us", 0, 10000000).value_or(p.sleep_us);
        p.cputime_us = o.i64("cputime_us", 0, 10000000).value_or(p.cputime_us);
        p.ops = intIn(o, "ops", 0, 100000, p.ops);
        p.op_ns = o.i64("op_ns", 0, 1000000000).value_or(p.op_ns);
        p.footprint_kb = o.i64("footprint_kb", 0, 1 << 20).value_or(p.footprint_kb);
        p.cpu_lock = o.boolean("cpu_lock").value_or(p.v2023);
        return p;
    }
    if (type == "stress") {
        Obj o(v, file, key, {"type", "workers", "load", "slice_ms", "cpus"});
        StressParams p;
        p.cpus = cpusFromJson(o, file, key);
        p.workers = intIn(o, "workers", 0, 65536, p.workers);
        p.load = intIn(o, "load", 1, 100, p.load);
        p.slice_ms = o.i64("slice_ms", 0, 100000).value_or(p.slice_ms);
        return p;
    }
    if (type == "tbench" || type == "netperf-rr" || type == "context-switch1") {
        const bool cs1 = type == "context-switch1", np = type == "netperf-rr";
        std::set<std::string> keys = {"type", "runtime_s", "warmup_s", "client_ns", "server_ns", "cpus"};
        keys.insert(cs1 ? "instances" : "pairs");
        keys.insert(cs1 ? "threads" : "bytes");
        if (np) keys.insert("test");
        Obj o(v, file, key, keys);
        PingPongParams p;
        p.cpus = cpusFromJson(o, file, key);
        p.netperf = np;
        p.context_switch1 = cs1;
        if (cs1) p.threads = o.boolean("threads").value_or(false);
        if (np)
            if (const auto t = o.str("test")) {
                if (*t != "TCP_RR" && *t != "UDP_RR")
                    throw InputError(file, key + ".test", fmt::format("'{}': netperf-rr models TCP_RR or UDP_RR", *t));
                p.udp = *t == "UDP_RR";
            }
        p.pairs = intIn(o, cs1 ? "instances" : "pairs", 1, 65536, p.pairs);
        p.runtime_s = runtimeIn(o, file, key, p.runtime_s);
        p.warmup_s = o.number("warmup_s", 0, 3600).value_or(p.warmup_s);
        p.client_ns = o.i64("client_ns", 0, 1000000000).value_or(p.client_ns);
        p.server_ns = o.i64("server_ns", 0, 1000000000).value_or(p.server_ns);
        if (!cs1) p.bytes = o.i64("bytes", 0, std::int64_t(1) << 30).value_or(p.bytes);
        return p;
    }
    if (type == "locktorture") {
        Obj o(v, file, key, {"type", "writers", "runtime_s", "hold_ns", "pause_ns", "cpus"});
        LockTortureParams p;
        p.cpus = cpusFromJson(o, file, key);
        p.writers = intIn(o, "writers", 0, 65536, p.writers);
        p.runtime_s = runtimeIn(o, file, key, p.runtime_s);
        p.hold_ns = o.i64("hold_ns", 0, 1000000000).value_or(p.hold_ns);
        p.pause_ns = o.i64("pause_ns", 0, 1000000000).value_or(p.pause_ns);
        return p;
    }
    if (type == "cyclictest") {
        Obj o(v, file, key,
              {"type", "threads", "interval_us", "distance_us", "duration_s", "loops", "mlock", "delay_s", "loop_ns", "pin_threads", "cpus"});
        CyclictestParams p;
        p.cpus = cpusFromJson(o, file, key);
        p.threads = intIn(o, "threads", 1, 4096, p.threads);
        p.interval_us = o.i64("interval_us", 1, 10000000).value_or(p.interval_us);
        p.distance_us = o.i64("distance_us", 0, 10000000).value_or(p.distance_us);
        p.duration_s = o.number("duration_s", 0, 3600).value_or(p.duration_s);
        p.loops = o.i64("loops", 0, 100000000).value_or(p.loops);
        p.mlock = o.boolean("mlock").value_or(p.mlock);
        p.delay_s = o.number("delay_s", 0, 3600).value_or(p.delay_s);
        p.loop_ns = o.i64("loop_ns", 0, 1000000000).value_or(p.loop_ns);
        p.pin_threads = o.boolean("pin_threads").value_or(p.pin_threads);
        return p;
    }
    throw InputError(file, key + ".type",
                     fmt::format("'{}' is not one of hackbench, perf-messaging, schbench, schbench-classic, stress, tbench, netperf-rr, "
                                 "context-switch1, locktorture, cyclictest",
                                 type));
}

std::int64_t workloadTasks(const WorkloadParams& w, int nrCpus) {
    return std::visit(
        [nrCpus](const auto& p) -> std::int64_t {
            using T = std::decay_t<decltype(p)>;
            if constexpr (std::is_same_v<T, HackbenchParams>) return 2 * std::int64_t(p.groups) * p.fds;  // every sender and receiver
            else if constexpr (std::is_same_v<T, SchbenchParams>)
                return std::int64_t(p.message_threads) * (1 + (p.workers > 0 ? p.workers : nrCpus));  // workers 0: one per CPU
            else if constexpr (std::is_same_v<T, PingPongParams>) return 2 * std::int64_t(p.pairs);
            else if constexpr (std::is_same_v<T, LockTortureParams>) return p.writers > 0 ? p.writers : 2 * std::int64_t(nrCpus);
            else if constexpr (std::is_same_v<T, CyclictestParams>) return std::int64_t(p.threads);
            else return p.workers > 0 ? p.workers : nrCpus;  // stress: 0 = one per CPU
        },
        w);
}

std::string workloadCommand(const WorkloadParams& w) {
    return tasksetPrefix(workloadCpus(w)) + std::visit(
                                                [](const auto& p) -> std::string {
                                                    using T = std::decay_t<decltype(p)>;
                                                    if constexpr (std::is_same_v<T, HackbenchParams>) return makeHackbench(p, 0)->commandLine();
                                                    else if constexpr (std::is_same_v<T, SchbenchParams>) return makeSchbench(p, 0)->commandLine();
                                                    else if constexpr (std::is_same_v<T, PingPongParams>) return makePingPong(p, 0)->commandLine();
                                                    else if constexpr (std::is_same_v<T, LockTortureParams>)
                                                        return makeLockTorture(p, 0)->commandLine();
                                                    else if constexpr (std::is_same_v<T, CyclictestParams>)
                                                        return makeCyclictest(p, 0)->commandLine();
                                                    else return makeStress(p, 0)->commandLine();
                                                },
                                                w);
}

Scenario parseScenario(const json& doc, const std::string& file, const std::string& baseDir) {
    Obj top(doc, file, "", {"name", "description", "topology", "workloads", "variants", "cost", "seed", "stop", "uptime_s", "comment"});
    Scenario s;
    s.file = file;
    s.doc = doc;
    s.name = top.str("name").value_or(std::filesystem::path(file).stem().string());
    s.description = top.str("description").value_or("");
    if (!top.has("topology")) throw InputError(file, "topology", "missing (a preset name, a file, or a parametric object)");
    s.topo = std::make_shared<const Topology>(topologyFromJson(top.at("topology"), file, "topology", baseDir));
    s.seed = std::uint64_t(top.i64("seed", 0).value_or(1));
    s.uptime_s = top.number("uptime_s", 0, 1e7).value_or(600);
    // Workloads.
    if (!top.has("workloads")) throw InputError(file, "workloads", "missing (a list of workloads)");
    const json& wl = top.at("workloads");
    if (!wl.is_array() || wl.empty()) throw InputError(file, "workloads", "must be a non-empty list");
    for (std::size_t i = 0; i < wl.size(); ++i) {
        const std::string key = fmt::format("workloads[{}]", i);
        s.workloads.push_back(workloadFromJson(wl[i], file, key));
        // taskset -c on this machine: every CPU named must exist.
        if (const std::string& c = workloadCpus(s.workloads.back()); !c.empty()) {
            const CpuMask m = *CpuMask::parseList(c, kMaxCpus, nullptr);
            const CpuMask& all = s.topo->allCpus();
            int outside = -1;
            m.forEach([&](int cpu) {
                if (outside < 0 && !all.test(cpu)) outside = cpu;
            });
            if (outside >= 0)
                throw InputError(file, key + ".cpus", fmt::format("CPU {} is not on {} ({} CPUs)", outside, s.topo->name(), s.topo->nrCpus()));
        }
    }
    // Every workload type's tasks, and all of them together, within what a simulation holds.
    std::int64_t tasks = 0;
    for (std::size_t i = 0; i < s.workloads.size(); ++i) {
        const std::int64_t n = workloadTasks(s.workloads[i], s.topo->nrCpus());
        if (n > kMaxScenarioTasks)
            throw InputError(file, fmt::format("workloads[{}]", i),
                             fmt::format("{} tasks on {} CPUs: more than the {} a simulation holds", n, s.topo->nrCpus(), kMaxScenarioTasks));
        tasks += n;
    }
    if (tasks > kMaxScenarioTasks)
        throw InputError(file, "workloads", fmt::format("{} tasks in all: more than the {} a simulation holds", tasks, kMaxScenarioTasks));
    if (tasks > kWarnTasksPerCpu * s.topo->nrCpus())
        s.warnings.push_back(
            fmt::format("{}: workloads: {} tasks on {} CPUs ({} per CPU): the start-up, each task forked while the others run, "
                        "grows with the square of that; this run may take hours (Ctrl+C stops it)",
                        file, tasks, s.topo->nrCpus(), tasks / s.topo->nrCpus()));
    // Variants: {"A": knobs, "B": knobs} in file order, or a list of {"name":..., "knobs":...}.
    if (top.has("variants")) {
        const json& v = top.at("variants");
        if (v.is_object()) {
            if (v.empty()) throw InputError(file, "variants", "must name at least one variant");
            for (auto it = v.begin(); it != v.end(); ++it) s.variants.push_back({it.key(), knobsFromJson(it.value(), file, "variants." + it.key())});
        } else if (v.is_array()) {
            for (std::size_t i = 0; i < v.size(); ++i) {
                const std::string key = fmt::format("variants[{}]", i);
                Obj o(v[i], file, key, {"name", "knobs"});
                Variant var;
                var.name = o.str("name").value_or(std::string(1, char('A' + int(i % 26))));
                var.knobs = o.has("knobs") ? knobsFromJson(o.at("knobs"), file, key + ".knobs") : Knobs{};
                s.variants.push_back(var);
            }
            if (s.variants.empty()) throw InputError(file, "variants", "must name at least one variant");
            for (std::size_t i = 0; i < s.variants.size(); ++i)
                for (std::size_t j = 0; j < i; ++j)
                    if (s.variants[i].name == s.variants[j].name)
                        throw InputError(file, fmt::format("variants[{}].name", i),
                                         fmt::format("'{}' is also the name of variants[{}]", s.variants[i].name, j));
        } else {
            throw InputError(file, "variants", "must be an object {\"A\": knobs, ...} or a list");
        }
    } else {
        s.variants.push_back({"A", Knobs{}});
    }
    // Cost model.
    s.cost = CostModel::forTopology(*s.topo);
    if (top.has("cost")) {
        const json& c = top.at("cost");
        if (!c.is_object()) throw InputError(file, "cost", "must be an object of cost parameters");
        for (auto it = c.begin(); it != c.end(); ++it) {
            const std::string key = "cost." + it.key();
            try {
                if (it.key() == "scale") {
                    if (!it->is_object()) throw InputError(file, key, "must be an object {\"term\": factor}");
                    for (auto jt = it->begin(); jt != it->end(); ++jt) {
                        if (!jt->is_number()) throw InputError(file, key + "." + jt.key(), "must be a number");
                        s.cost.set("scale." + jt.key(), fmt::format("{}", jt->get<double>()));
                    }
                } else if (it.key() == "off") {
                    if (!it->is_array()) throw InputError(file, key, "must be a list of cost terms");
                    for (const auto& t : *it) {
                        if (!t.is_string()) throw InputError(file, key, "must be a list of cost terms (strings)");
                        s.cost.set("off", t.get<std::string>());
                    }
                } else if (it.key() == "cstates") {
                    if (!it->is_array() || it->empty())
                        throw InputError(file, key, "must be a non-empty list of {name, exit_ns, residency_ns, polling}");
                    s.cost.cstates.clear();
                    for (std::size_t i = 0; i < it->size(); ++i) {
                        Obj o((*it)[i], file, fmt::format("{}[{}]", key, i), {"name", "exit_ns", "residency_ns", "polling"});
                        const std::string name = o.str("name").value_or(fmt::format("C{}", i));
                        // Without the key, only poll_idle()'s state (POLL) polls; an MWAIT state must say so.
                        const bool polling = o.boolean("polling").value_or(name == "POLL");
                        s.cost.cstates.push_back(
                            {name, o.i64("exit_ns", 0, 100000000).value_or(0), o.i64("residency_ns", 0, 1000000000).value_or(0), polling});
                    }
                } else if (it->is_number_integer()) {
                    s.cost.set(it.key(), std::to_string(it->get<std::int64_t>()));
                } else {
                    throw InputError(file, key, "must be an integer (ns)");
                }
            } catch (const CostError& e) {
                throw InputError(file, key, e.what());
            }
        }
    }
    if (top.has("stop")) {
        Obj o(top.at("stop"), file, "stop", {"sim_time_s", "max_events"});
        s.stop_s = o.number("sim_time_s", 0, 36000).value_or(0);
        s.max_events = o.i64("max_events", 0).value_or(0);
    }
    return s;
}

Scenario loadScenario(const std::string& path) {
    const std::string text = readFileOrThrow(path);
    json doc = parseJsonOrThrow(text, path);
    std::string base = std::filesystem::path(path).parent_path().string();
    Scenario s = parseScenario(doc, path, base.empty() ? "." : base);
    // nlohmann::json sorts object keys: restore the file's order of "variants" (A before B as written).
    if (doc.contains("variants") && doc["variants"].is_object()) {
        const auto ordered = nlohmann::ordered_json::parse(text);
        std::vector<Variant> inOrder;
        for (auto it = ordered["variants"].begin(); it != ordered["variants"].end(); ++it)
            for (const auto& v : s.variants)
                if (v.name == it.key()) inOrder.push_back(v);
        if (inOrder.size() == s.variants.size()) s.variants = std::move(inOrder);
    }
    return s;
}

std::unique_ptr<Engine> buildEngine(const Scenario& s, const Knobs& k, const CostModel& cost, const RunOptions& o) {
    EngineConfig cfg;
    cfg.topo = s.topo;
    cfg.knobs = k;
    cfg.cost = cost;
    cfg.seed = o.seed;
    cfg.stop_ns = std::int64_t(s.stop_s * 1e9);
    cfg.uptime_ns = std::int64_t(s.uptime_s * 1e9);
    cfg.max_events = s.max_events;
    cfg.check_invariants = o.check_invariants;
    cfg.coalesce = o.coalesce;
    cfg.decision_ring = o.decision_ring;
    cfg.event_ring = o.event_ring;
    auto e = std::make_unique<Engine>(cfg);
    if (o.decision_sink) e->metrics().decision_sink = o.decision_sink;
    if (o.event_sink) e->metrics().event_sink = o.event_sink;
    if (o.wake_inputs_sink) e->wake_inputs_sink = o.wake_inputs_sink;
    {
        std::int64_t tasks = 0;  // every workload's tasks and a main task each (hackbench's parent)
        for (const auto& w : s.workloads) tasks += workloadTasks(w, s.topo->nrCpus()) + 1;
        e->reserveTasks(std::size_t(std::min<std::int64_t>(tasks, kMaxScenarioTasks + 64)));
    }
    for (std::size_t i = 0; i < s.workloads.size(); ++i) {
        const auto idx = std::uint16_t(i);
        std::visit(
            [&](const auto& p) {
                using T = std::decay_t<decltype(p)>;
                if constexpr (std::is_same_v<T, HackbenchParams>) e->addWorkload(makeHackbench(p, idx));
                else if constexpr (std::is_same_v<T, SchbenchParams>) e->addWorkload(makeSchbench(p, idx));
                else if constexpr (std::is_same_v<T, PingPongParams>) e->addWorkload(makePingPong(p, idx));
                else if constexpr (std::is_same_v<T, LockTortureParams>) e->addWorkload(makeLockTorture(p, idx));
                else if constexpr (std::is_same_v<T, CyclictestParams>) e->addWorkload(makeCyclictest(p, idx));
                else e->addWorkload(makeStress(p, idx));
            },
            s.workloads[i]);
        if (const std::string& c = workloadCpus(s.workloads[i]); !c.empty())
            e->workloads().back()->setCpus(CpuMask::intern(*CpuMask::parseList(c, kMaxCpus, nullptr)));
    }
    return e;
}

RunResult runScenario(const Scenario& s, const Variant& v, const CostModel& cost, const RunOptions& o) {
    RunResult r;
    r.variant = v.name;
    r.knobs = v.knobs;
    r.cost = cost;
    r.seed = o.seed;
    r.engine = o.from_state ? restoreEngine(*o.from_state, o, std::int64_t(s.stop_s * 1e9)) : buildEngine(s, v.knobs, cost, o);
    if (o.from_state) r.from_state_ns = o.from_state->time_ns;
    if (o.on_start) o.on_start(*r.engine);
    const auto t0 = std::chrono::steady_clock::now();
    if (o.at_stop && s.stop_s > 0) {
        // To the stop time in 10-ms steps (chunks change nothing), the state there, then on to the stop.
        Engine& e = *r.engine;
        const std::int64_t stop = std::int64_t(s.stop_s * 1e9);
        while (e.now() < stop && e.advance(std::min<std::int64_t>(10000000, stop - e.now())))
            if (o.progress) o.progress(e);
        if (!e.done() && e.now() == stop) o.at_stop(e);
    }
    if (o.steady_hold_ns > 0) {
        // Engine::run()'s 10-ms steps, with the stop test between them.
        Engine& e = *r.engine;
        while (e.advance(10000000)) {
            if (o.progress) o.progress(e);
            if (steadyHeld(e, o.steady_hold_ns)) {
                r.stopped_at_steady = true;
                e.closeIntegrals();
                break;
            }
        }
        if (o.progress) o.progress(e);
    } else if (o.progress) {
        r.engine->run([&](std::int64_t) { o.progress(*r.engine); });
    } else {
        r.engine->run();
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.reports = workloadReports(*r.engine);
    r.digest = r.engine->digest();
    return r;
}

std::string workloadEndless(const WorkloadParams& w) {
    return std::visit(
        [](const auto& p) -> std::string {
            using T = std::decay_t<decltype(p)>;
            if constexpr (std::is_same_v<T, HackbenchParams>) return p.loops <= 0 ? "loops 0" : "";
            else if constexpr (std::is_same_v<T, CyclictestParams>) return p.duration_s <= 0 && p.loops <= 0 ? "duration_s 0 and loops 0" : "";
            else if constexpr (std::is_same_v<T, StressParams>) return "";  // background: never holds the run open
            else return p.runtime_s <= 0 ? "runtime_s 0" : "";
        },
        w);
}

std::string scenarioEndless(const Scenario& s) {
    if (s.stop_s > 0 || s.max_events > 0) return {};
    bool foreground = false;
    for (std::size_t i = 0; i < s.workloads.size(); ++i) {
        if (std::holds_alternative<StressParams>(s.workloads[i])) continue;
        foreground = true;
        if (std::string why = workloadEndless(s.workloads[i]); !why.empty()) return fmt::format("workloads[{}] ({}) runs until stopped", i, why);
    }
    if (!foreground) return "only background load (stress) runs until stopped";
    return {};
}

bool steadyHeld(const Engine& e, std::int64_t hold_ns) {
    const SteadyResult s = e.metrics().steady.result();
    return s.reached && !s.drifting && s.from_ns >= 0 && s.end_ns - s.from_ns >= hold_ns;
}

std::vector<WorkloadReport> workloadReports(const Engine& e) {
    std::vector<WorkloadReport> out;
    for (const auto& w : e.workloads()) {
        WorkloadReport rep;
        w->report(e, rep);
        if (const CpuMask* m = w->cpus()) {
            rep.cpus = m->toList();
            rep.command.insert(0, tasksetPrefix(rep.cpus));
        }
        out.push_back(std::move(rep));
    }
    return out;
}

}  // namespace sched
