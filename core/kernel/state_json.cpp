// SPDX-License-Identifier: GPL-2.0-or-later
// state_json.cpp: parsing and validation of explain state files, and the
// text/JSON rendering of a Decision.
#include "kernel/state_json.h"

#include "util/json_obj.h"
#include "topology/topology_json.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <set>

namespace sched {
namespace {

using nlohmann::json;

const std::set<std::string> kCpuKeys = {"cpu",
                                        "curr",
                                        "nr_running",
                                        "h_nr_running",
                                        "idle_h_nr_running",
                                        "ttwu_pending",
                                        "load_avg",
                                        "util_avg",
                                        "runnable_avg",
                                        "util_est",
                                        "capacity",
                                        "avg_idle_ns",
                                        "idle_stamp_ns",
                                        "clock_idle_ns",
                                        "idle_exit_ns",
                                        "claimed",
                                        "cache_hot_timeout_ns",
                                        "active",
                                        "exit_latency_ns",
                                        "min_vruntime_ns",
                                        "curr_vruntime_ns",
                                        "max_idle_balance_cost_ns",
                                        "wake_avg_idle_ns",
                                        "wake_stamp",
                                        "need_resched"};

const std::set<std::string> kWakerKeys = {"cpu",         "context", "per_cpu_kthread", "wakee_flips", "wakee_flip_decay_ts", "last_wakee", "load_avg",
                                          "task_h_load", "exiting", "is_wakee",        "pid",         "dur_avg_ns"};

const std::set<std::string> kTaskKeys = {"pid",
                                         "comm",
                                         "prev_cpu",
                                         "cpus_allowed",
                                         "recent_used_cpu",
                                         "wakee_flips",
                                         "wakee_flip_decay_ts",
                                         "last_wakee",
                                         "load_avg",
                                         "util_avg",
                                         "runnable_avg",
                                         "util_est",
                                         "task_h_load",
                                         "on_rq",
                                         "on_cpu",
                                         "per_cpu_kthread",
                                         "kthread",
                                         "policy",
                                         "placed_jiffies",
                                         "exec_start_ns",
                                         "last_update_time",
                                         "vruntime_ns",
                                         "numa_preferred_nid",
                                         "migration_disabled",
                                         "dur_avg_ns",
                                         "next_migration_time_ns",
                                         "nr_migrations_per_window",
                                         "quota_migrations_per_window",
                                         "avg_hot_dur_ns",
                                         "last_dequeue_ns"};

// A CPU entry before defaults are resolved: which fields were given.
struct CpuSpec {
    std::optional<CurrKind> curr;
    std::optional<std::int64_t> nr_running, h_nr_running, idle_h_nr_running, load_avg, util_avg, runnable_avg, util_est, capacity, avg_idle,
        idle_stamp, clock_idle, idle_exit, exit_latency, min_vr, curr_vr, max_ibc, wake_avg_idle, wake_stamp, cache_hot;
    std::optional<bool> ttwu_pending, claimed, active, need_resched;

    void read(const Obj& o) {
        if (auto c = o.str("curr")) {
            if (*c == "idle") curr = CurrKind::Idle;
            else if (*c == "normal") curr = CurrKind::Normal;
            else if (*c == "sched_idle") curr = CurrKind::SchedIdle;
            else if (*c == "kthread") curr = CurrKind::Kthread;
            else throw InputError(o.file(), o.key("curr"), fmt::format("'{}' is not one of idle, normal, sched_idle, kthread", *c));
        }
        auto rd = [&](const char* k, std::optional<std::int64_t>& out, std::int64_t lo = 0) {
            if (auto v = o.i64(k, lo)) out = v;
        };
        rd("nr_running", nr_running);
        rd("h_nr_running", h_nr_running);
        rd("idle_h_nr_running", idle_h_nr_running);
        rd("load_avg", load_avg);
        rd("util_avg", util_avg);
        rd("runnable_avg", runnable_avg);
        rd("util_est", util_est);
        if (auto v = o.i64("capacity", 1, 1024)) capacity = v;
        rd("avg_idle_ns", avg_idle);
        rd("idle_stamp_ns", idle_stamp);
        rd("clock_idle_ns", clock_idle);
        rd("idle_exit_ns", idle_exit);
        rd("exit_latency_ns", exit_latency, -1);
        rd("min_vruntime_ns", min_vr, INT64_MIN);
        rd("curr_vruntime_ns", curr_vr, INT64_MIN);
        rd("max_idle_balance_cost_ns", max_ibc);
        rd("wake_avg_idle_ns", wake_avg_idle);
        rd("wake_stamp", wake_stamp);
        rd("cache_hot_timeout_ns", cache_hot);
        if (auto v = o.boolean("ttwu_pending")) ttwu_pending = v;
        if (auto v = o.boolean("claimed")) claimed = v;
        if (auto v = o.boolean("active")) active = v;
        if (auto v = o.boolean("need_resched")) need_resched = v;
    }
    void overlay(const CpuSpec& o) {
        // clang-format off
#define OV(f) if (o.f) f = o.f;
        OV(curr) OV(nr_running) OV(h_nr_running) OV(idle_h_nr_running) OV(load_avg) OV(util_avg) OV(runnable_avg) OV(util_est)
        OV(capacity) OV(avg_idle) OV(idle_stamp) OV(clock_idle) OV(idle_exit) OV(exit_latency) OV(min_vr) OV(curr_vr) OV(max_ibc)
        OV(wake_avg_idle) OV(wake_stamp) OV(ttwu_pending) OV(claimed) OV(active) OV(need_resched) OV(cache_hot)
#undef OV
        // clang-format on
    }
};

std::uint32_t parseWakeFlags(const json& v, const std::string& file) {
    if (!v.is_array()) throw InputError(file, "wake_flags", "must be a list of TTWU, SYNC, FORK, EXEC");
    std::uint32_t wf = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        std::string k = fmt::format("wake_flags[{}]", i);
        if (!v[i].is_string()) throw InputError(file, k, "must be a string");
        std::string s = v[i].get<std::string>();
        if (s == "TTWU") wf |= WF_TTWU;
        else if (s == "SYNC") wf |= WF_SYNC;
        else if (s == "FORK") wf |= WF_FORK;
        else if (s == "EXEC") wf |= WF_EXEC;
        else throw InputError(file, k, fmt::format("'{}' is not one of TTWU, SYNC, FORK, EXEC", s));
    }
    if ((wf & WF_FORK) && (wf & WF_EXEC)) throw InputError(file, "wake_flags", "FORK and EXEC exclude each other");
    if ((wf & (WF_FORK | WF_EXEC)) && (wf & (WF_SYNC | WF_TTWU)))
        throw InputError(file, "wake_flags", "FORK/EXEC placements take no TTWU or SYNC flag");
    return wf;
}

// The waker, but for its last_wakee (which may name the task: setWakerLastWakee()). Returns
// whether it is a per-CPU kthread (a kworker).
bool parseWaker(const Obj& wo, ExplainInput& in) {
    const std::string& file = wo.file();
    const int nr = in.topo->nrCpus();
    const MachineState& st = *in.state;
    Waker& w = in.waker;
    w.cpu = wo.cpu("cpu", nr);
    std::string ctx = wo.str("context").value_or("task");
    if (ctx == "task") w.in_task = true;
    else if (ctx == "irq" || ctx == "softirq") w.in_task = false;
    else throw InputError(file, "waker.context", fmt::format("'{}' is not one of task, irq, softirq", ctx));
    w.current.pid = int(wo.i64("pid", 0).value_or(1));
    w.current.wakee_flips = unsigned(wo.i64("wakee_flips", 0, UINT32_MAX).value_or(0));
    w.current.wakee_flip_decay_ts = wo.i64("wakee_flip_decay_ts", 0).value_or(st.jiffies);
    w.current.avg.load_avg = std::uint64_t(wo.i64("load_avg", 0).value_or(1024));
    w.current.task_h_load = wo.i64("task_h_load", 0).value_or(-1);
    w.current.exiting = wo.boolean("exiting").value_or(false);
    w.current.dur_avg = wo.i64("dur_avg_ns", 0).value_or(0);
    w.is_wakee = wo.boolean("is_wakee").value_or(false);
    const bool kworker = wo.boolean("per_cpu_kthread").value_or(false);
    if (kworker) {
        w.current.kthread = true;
        w.current.setAffinity(CpuMask::single(w.cpu));
    } else {
        w.current.setAffinity(in.topo->allCpus());
    }
    return kworker;
}

// The task's cpus_allowed: all CPUs unless the file lists them.
CpuMask parseCpusAllowed(const Obj& to, const Topology& topo) {
    CpuMask allowed = topo.allCpus();
    if (auto s = to.str("cpus_allowed")) {
        std::string err;
        auto m = CpuMask::parseList(*s, topo.nrCpus(), &err);
        if (!m) throw InputError(to.file(), "task.cpus_allowed", err);
        if (m->empty()) throw InputError(to.file(), "task.cpus_allowed", "is empty: the task may run nowhere");
        allowed = *m;
    }
    return allowed;
}

void parseTask(const Obj& to, ExplainInput& in) {
    const std::string& file = to.file();
    const int nr = in.topo->nrCpus();
    const MachineState& st = *in.state;
    Task& p = in.task;
    p.pid = int(to.i64("pid", 1).value_or(1000));
    (void)to.str("comm");  // accepted for the reader (the path does not read comm); must be a string
    p.cpu = to.cpu("prev_cpu", nr);
    p.wake_cpu = p.cpu;
    const CpuMask allowed = parseCpusAllowed(to, *in.topo);
    p.setAffinity(allowed);
    p.recent_used_cpu = to.has("recent_used_cpu") ? to.cpu("recent_used_cpu", nr) : p.cpu;
    p.wakee_flips = unsigned(to.i64("wakee_flips", 0, UINT32_MAX).value_or(0));
    p.wakee_flip_decay_ts = to.i64("wakee_flip_decay_ts", 0).value_or(st.jiffies);
    if (to.has("last_wakee") && to.at("last_wakee").is_string()) {
        if (to.at("last_wakee").get<std::string>() != "waker")
            throw InputError(file, "task.last_wakee", "must be \"waker\" (the waker's current) or a pid");
        p.last_wakee = in.waker.current.pid;
    } else {
        p.last_wakee = int(to.i64("last_wakee", -1, INT32_MAX).value_or(-1));
    }
    {
        const std::int64_t util = to.i64("util_avg", 0, 1024).value_or(0);
        p.setAverages(to.i64("load_avg", 0).value_or(512), util, to.i64("runnable_avg", 0).value_or(util), to.i64("util_est", 0, 1024).value_or(0));
    }
    p.task_h_load = to.i64("task_h_load", 0).value_or(-1);
    p.on_rq = to.boolean("on_rq").value_or(false);
    p.on_cpu = to.boolean("on_cpu").value_or(false);
    p.kthread = to.boolean("kthread").value_or(false) || to.boolean("per_cpu_kthread").value_or(false);
    if (to.boolean("per_cpu_kthread").value_or(false) && allowed.weight() != 1)
        throw InputError(file, "task.per_cpu_kthread", "a per-CPU kthread must have exactly one allowed CPU (cpus_allowed)");
    if (auto pol = to.str("policy")) {
        if (*pol == "normal") p.policy = Policy::Normal;
        else if (*pol == "batch") p.policy = Policy::Batch;
        else if (*pol == "idle") p.policy = Policy::Idle;
        else throw InputError(file, "task.policy", fmt::format("'{}' is not one of normal, batch, idle", *pol));
    }
    p.wakee_placed = to.i64("placed_jiffies", -1).value_or(-1);
    p.exec_start = to.i64("exec_start_ns", 0).value_or(st.now_ns);
    p.avg.last_update_time = std::uint64_t(to.i64("last_update_time", 0).value_or(1));
    p.vruntime = to.i64("vruntime_ns", INT64_MIN).value_or(0);
    p.numa_preferred_nid = int(to.i64("numa_preferred_nid", -1, in.topo->nrNodes() - 1).value_or(-1));
    p.migration_disabled = to.boolean("migration_disabled").value_or(false);
    p.dur_avg = to.i64("dur_avg_ns", 0).value_or(0);
    p.avg_hot_dur = to.i64("avg_hot_dur_ns", 0).value_or(0);
    p.last_dequeue_time = to.i64("last_dequeue_ns", 0).value_or(0);
    p.next_migration_time = to.i64("next_migration_time_ns", 0).value_or(0);
    p.nr_migrations_per_window = int(to.i64("nr_migrations_per_window", 0, INT32_MAX).value_or(0));
    p.quota_migrations_per_window = int(to.i64("quota_migrations_per_window", 1, 10).value_or(10));
}

// The waker's last_wakee ("task": the task parsed), and its pid when it is the wakee itself.
void setWakerLastWakee(const Obj& wo, ExplainInput& in) {
    Waker& w = in.waker;
    const Task& p = in.task;
    if (auto lw = wo.has("last_wakee") ? std::optional<json>(wo.at("last_wakee")) : std::nullopt) {
        if (lw->is_string() && lw->get<std::string>() == "task") w.current.last_wakee = p.pid;
        else if (lw->is_number_integer()) w.current.last_wakee = lw->get<int>();
        else throw InputError(wo.file(), "waker.last_wakee", "must be \"task\" (this task) or a pid");
    } else {
        w.current.last_wakee = -1;
    }
    if (w.is_wakee) w.current.pid = p.pid;
}

// Every CPU's entry before defaults: default_cpu overlaid with its "cpus" entry, and the key
// that gave it (for messages).
struct CpuSpecs {
    std::vector<CpuSpec> spec;
    std::vector<std::string> keyOf;
};

CpuSpecs readCpuSpecs(const Obj& top, int nr) {
    const std::string& file = top.file();
    CpuSpec def;
    if (top.has("default_cpu")) {
        std::set<std::string> keys = kCpuKeys;
        keys.erase("cpu");
        def.read(Obj(top.at("default_cpu"), file, "default_cpu", keys));
    }
    CpuSpecs out{std::vector<CpuSpec>(nr, def), std::vector<std::string>(nr, "default_cpu")};
    std::vector<CpuSpec>& specs = out.spec;
    std::vector<std::string>& keyOf = out.keyOf;
    std::vector<bool> listed(nr, false);
    if (top.has("cpus")) {
        const json& arr = top.at("cpus");
        if (!arr.is_array()) throw InputError(file, "cpus", "must be a list of CPU objects");
        for (size_t i = 0; i < arr.size(); ++i) {
            std::string k = fmt::format("cpus[{}]", i);
            Obj co(arr[i], file, k, kCpuKeys);
            int c = co.cpu("cpu", nr);
            if (listed[c]) throw InputError(file, k + ".cpu", fmt::format("CPU {} is listed twice", c));
            listed[c] = true;
            CpuSpec s;
            s.read(co);
            specs[c].overlay(s);
            keyOf[c] = k;
        }
    }
    return out;
}

// A task-context waker runs on its CPU.
void putWakerOnItsCpu(CpuSpecs& specs, const Waker& w, bool kworker, const std::string& file) {
    if (w.in_task && !w.is_wakee) {
        CpuSpec& s = specs.spec[w.cpu];
        if (!s.curr) {
            s.curr = kworker ? CurrKind::Kthread : CurrKind::Normal;
        } else if (*s.curr == CurrKind::Idle) {
            throw InputError(file, specs.keyOf[w.cpu] + ".curr",
                             fmt::format("CPU {} is the waker's CPU in task context, so curr cannot be idle (use waker.context irq)", w.cpu));
        }
    }
}

// CPU c's runqueue from its entry `s` (given under key `k`), the unset fields defaulted.
void resolveRq(const CpuSpec& s, const std::string& k, int c, ExplainInput& in, const std::string& file) {
    const MachineState& st = *in.state;
    const Task& p = in.task;
    Rq& rq = in.state->rq[c];
    rq.curr = s.curr.value_or(CurrKind::Idle);
    const std::int64_t defNr = rq.curr == CurrKind::Idle ? 0 : 1;
    std::int64_t nrr = s.nr_running.value_or(defNr);
    // rq->curr may still be p with nr_running 0 while p is being switched out (on_cpu, dequeued).
    const bool switchingOut = p.on_cpu && !p.on_rq && c == p.cpu;
    if (nrr == 0 && rq.curr != CurrKind::Idle && !switchingOut)
        throw InputError(file, k + ".nr_running", fmt::format("0 with curr {}: a running task counts in nr_running", currKindName(rq.curr)));
    rq.nr_running = unsigned(nrr);
    rq.h_nr_running = unsigned(s.h_nr_running.value_or(nrr));
    if (rq.h_nr_running > rq.nr_running) throw InputError(file, k + ".h_nr_running", "cannot exceed nr_running");
    rq.idle_h_nr_running = unsigned(s.idle_h_nr_running.value_or(rq.curr == CurrKind::SchedIdle ? rq.h_nr_running : 0));
    if (rq.idle_h_nr_running > rq.h_nr_running) throw InputError(file, k + ".idle_h_nr_running", "cannot exceed h_nr_running");
    if (rq.curr == CurrKind::SchedIdle && rq.idle_h_nr_running == 0)
        throw InputError(file, k + ".idle_h_nr_running", "curr is sched_idle, so at least 1");
    rq.ttwu_pending = s.ttwu_pending.value_or(false);
    rq.load_avg = s.load_avg.value_or(rq.curr == CurrKind::Idle ? 0 : std::int64_t(1024) * rq.h_nr_running);
    if (rq.curr == CurrKind::SchedIdle && !s.load_avg) rq.load_avg = 3 * rq.idle_h_nr_running;  // SCHED_IDLE weight 3
    rq.util_avg = s.util_avg.value_or(0);
    rq.runnable_avg = s.runnable_avg.value_or(rq.util_avg);
    rq.util_est = s.util_est.value_or(0);
    rq.cpu_capacity = s.capacity.value_or(in.topo->cpu(c).capacity);
    rq.avg_idle = s.avg_idle.value_or(rq.avg_idle);
    rq.idle_stamp = s.idle_stamp.value_or(0);
    rq.clock_idle = s.clock_idle.value_or(rq.curr == CurrKind::Idle && rq.nr_running == 0 ? st.now_ns : 0);
    rq.idle_end_time = s.idle_exit.value_or(0);
    rq.claimed = s.claimed.value_or(false);
    rq.cache_hot_timeout = s.cache_hot.value_or(0);
    rq.active = s.active.value_or(true);
    rq.exit_latency_ns = s.exit_latency.value_or(-1);
    rq.min_vruntime = s.min_vr.value_or(0);
    rq.curr_vruntime = s.curr_vr.value_or(rq.min_vruntime);
    rq.max_idle_balance_cost = s.max_ibc.value_or(rq.max_idle_balance_cost);
    rq.wake_avg_idle = s.wake_avg_idle.value_or(rq.avg_idle);
    rq.wake_stamp = s.wake_stamp.value_or(st.jiffies);
    rq.curr_need_resched = s.need_resched.value_or(false);
    if (rq.idle_stamp > st.now_ns) throw InputError(file, k + ".idle_stamp_ns", "lies after now_ns");
}

// CPUs: defaults, then entries.
void parseCpus(const Obj& top, ExplainInput& in, bool kworker) {
    const int nr = in.topo->nrCpus();
    CpuSpecs specs = readCpuSpecs(top, nr);
    putWakerOnItsCpu(specs, in.waker, kworker, top.file());
    for (int c = 0; c < nr; ++c) resolveRq(specs.spec[c], specs.keyOf[c], c, in, top.file());
}

// LLC shared state.
void parseLlc(const json& arr, const std::string& file, ExplainInput& in) {
    const int nr = in.topo->nrCpus();
    MachineState& st = *in.state;
    if (!arr.is_array()) throw InputError(file, "llc", "must be a list of {\"cpu\", \"has_idle_cores\", \"nr_idle_scan\"}");
    for (size_t i = 0; i < arr.size(); ++i) {
        std::string k = fmt::format("llc[{}]", i);
        Obj lo(arr[i], file, k, {"cpu", "has_idle_cores", "nr_idle_scan", "avg_scan_cost_ns"});
        int c = lo.cpu("cpu", nr);
        SdShared* sh = st.llcShared(c);
        if (!sh) throw InputError(file, k + ".cpu", fmt::format("CPU {} has no LLC domain", c));
        if (auto v = lo.boolean("has_idle_cores")) sh->has_idle_cores = *v;
        if (auto v = lo.i64("nr_idle_scan", 0, in.state->sd->sd_llc_size(c))) sh->nr_idle_scan = int(*v);
        if (auto v = lo.i64("avg_scan_cost_ns", 0)) in.topo->llcMask(c).forEach([&](int x) { st.avg_scan_cost[x] = *v; });
    }
}

// Consistency of the task with the machine.
void checkTaskOnMachine(ExplainInput& in, const std::string& file) {
    Task& p = in.task;
    const MachineState& st = *in.state;
    if (!p.cpus_ptr->test(p.cpu) && !(in.wake_flags & (WF_FORK | WF_EXEC)))
        throw InputError(file, "task.prev_cpu", fmt::format("CPU {} is not in cpus_allowed ({})", p.cpu, p.cpus_ptr->toList()));
    if (p.on_rq && st.rq[p.cpu].nr_running == 0)
        throw InputError(file, "task.on_rq", fmt::format("the task is queued on CPU {} but its nr_running is 0", p.cpu));
    if (in.wake_flags & WF_EXEC) {
        if (p.cpu != in.waker.cpu) throw InputError(file, "task.prev_cpu", "an EXEC placement runs on the task's own CPU (waker.cpu)");
        p.on_rq = true;
        p.on_cpu = true;
    }
}

}  // namespace

Knobs knobsFromJson(const json& v, const std::string& file, const std::string& key) {
    try {
        if (v.is_string()) return Knobs::preset(v.get<std::string>());
        if (!v.is_object()) throw InputError(file, key, "must be a preset name or an object");
        Knobs k = Knobs::preset(v.contains("preset") ? (v["preset"].is_string() ? v["preset"].get<std::string>() : "?") : "baseline");
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (it.key() == "preset") continue;
            std::string val;
            if (it->is_boolean()) val = it->get<bool>() ? "1" : "0";
            else if (it->is_number_integer()) val = std::to_string(it->get<std::int64_t>());
            else if (it->is_string()) val = it->get<std::string>();
            else throw InputError(file, key + "." + it.key(), "must be a boolean, integer or string");
            try {
                k.set(it.key(), val);
            } catch (const KnobError& e) {
                throw InputError(file, key + "." + it.key(), e.what());
            }
        }
        return k;
    } catch (const KnobError& e) {
        throw InputError(file, key, e.what());
    }
}

ExplainInput parseExplainState(const json& doc, const std::string& file, const std::string& baseDir) {
    Obj top(doc, file, "", {"topology", "knobs", "now_ns", "jiffies", "default_cpu", "cpus", "llc", "task", "waker", "wake_flags", "comment"});
    ExplainInput in;
    if (!top.has("topology")) throw InputError(file, "topology", "missing (a preset name, a file, or a parametric object)");
    in.topo = std::make_shared<const Topology>(topologyFromJson(top.at("topology"), file, "topology", baseDir));
    in.knobs = top.has("knobs") ? knobsFromJson(top.at("knobs"), file, "knobs") : Knobs{};
    in.state = std::make_unique<MachineState>(in.topo);
    MachineState& st = *in.state;
    st.now_ns = top.i64("now_ns", 0).value_or(st.now_ns);
    st.jiffies = top.i64("jiffies", 0).value_or(st.now_ns / in.knobs.jiffyNs());

    // Waker first: a task-context waker makes its CPU busy unless the file says otherwise.
    if (!top.has("waker")) throw InputError(file, "waker", "missing (at least {\"cpu\": N})");
    const Obj wo(top.at("waker"), file, "waker", kWakerKeys);
    const bool kworker = parseWaker(wo, in);

    // Task.
    if (!top.has("task")) throw InputError(file, "task", "missing (at least {\"prev_cpu\": N})");
    parseTask(Obj(top.at("task"), file, "task", kTaskKeys), in);
    setWakerLastWakee(wo, in);

    in.wake_flags = top.has("wake_flags") ? parseWakeFlags(top.at("wake_flags"), file) : 0;

    parseCpus(top, in, kworker);
    if (!st.rq[in.waker.cpu].active && in.waker.in_task) throw InputError(file, "waker.cpu", "the waker's CPU is not active");

    if (top.has("llc")) parseLlc(top.at("llc"), file, in);

    checkTaskOnMachine(in, file);
    return in;
}

ExplainInput loadExplainState(const std::string& path) {
    const std::string text = readFileOrThrow(path);
    json doc = parseJsonOrThrow(text, path);
    return parseExplainState(doc, path, std::filesystem::path(path).parent_path().string());
}

}  // namespace sched
