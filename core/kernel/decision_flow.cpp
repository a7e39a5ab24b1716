// SPDX-License-Identifier: GPL-2.0-or-later
// decision_flow.cpp: see decision_flow.h. The conditions are Linux 6.1's (core.c, fair.c) as
// docs/decisions.md and spec/wakeup-path.md give them.
#include "kernel/decision_flow.h"

#include "util/state_archive.h"

#include "kernel/wakeup_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace sched {
namespace {

/// Every value of a reason-code enum that toString() names (NONE excluded), in order.
template <class E>
std::vector<E> codes() {
    std::vector<E> out;
    for (int v = 1; v < 256; ++v) {
        if (std::strcmp(toString(E(v)), "?") == 0) break;
        out.push_back(E(v));
    }
    return out;
}

struct CodeText {
    const char* function;
    const char* condition;
};

CodeText textOf(Stage0 c) {
    switch (c) {
    case Stage0::TTWU_SELF: return {"core.c try_to_wake_up()", "p == current: the task wakes itself; its state set running, no selection"};
    case Stage0::TTWU_RUNNABLE: return {"core.c try_to_wake_up()", "READ_ONCE(p->on_rq) && ttwu_runnable(p, wake_flags): still queued, no selection"};
    case Stage0::TTWU_ONCPU_WAKELIST:
        return {"core.c try_to_wake_up()",
                "smp_load_acquire(&p->on_cpu) && ttwu_queue_wakelist(p, task_cpu(p), wake_flags): still switching out, queued on its CPU"};
    case Stage0::AFFINITY_SINGLE:
        return {"core.c select_task_rq()", "!(p->nr_cpus_allowed > 1 && !is_migration_disabled(p)): cpumask_any(p->cpus_ptr), no fair hook"};
    case Stage0::FALLBACK_RQ: return {"core.c select_task_rq()", "unlikely(!is_cpu_allowed(p, cpu)): select_fallback_rq()"};
    default: return {"core.c select_task_rq()", ""};
    }
}

CodeText textOf(Stage1 c) {
    switch (c) {
    case Stage1::EAS: return {"fair.c find_energy_efficient_cpu()", "sched_energy_enabled() && (wake_flags & WF_TTWU) (not modelled)"};
    case Stage1::WAKE_WIDE: return {"fair.c wake_wide()", "slave >= factor && master >= slave * factor (factor = sd_llc_size): no affine wakeup"};
    case Stage1::AFFINE_NOT_ALLOWED: return {"fair.c select_task_rq_fair()", "!cpumask_test_cpu(cpu, p->cpus_ptr): no affine wakeup"};
    case Stage1::AFFINE_SAME_CPU:
        return {"fair.c select_task_rq_fair()", "an SD_WAKE_AFFINE domain spans prev_cpu, but cpu == prev_cpu: no wake_affine()"};
    case Stage1::AFFINE_NO_DOMAIN: return {"fair.c select_task_rq_fair()", "no SD_WAKE_AFFINE domain of cpu spans prev_cpu"};
    case Stage1::AFFINE_IDLE_PREV:
        return {"fair.c wake_affine_idle()", "available_idle_cpu(this_cpu) && cpus_share_cache(this_cpu, prev_cpu) && available_idle_cpu(prev_cpu)"};
    case Stage1::AFFINE_IDLE_THIS:
        return {"fair.c wake_affine_idle()", "available_idle_cpu(this_cpu) && cpus_share_cache(this_cpu, prev_cpu), prev not idle: this_cpu"};
    case Stage1::AFFINE_SYNC: return {"fair.c wake_affine_idle()", "sync && cpu_rq(this_cpu)->nr_running == 1"};
    case Stage1::AFFINE_PREV_IDLE: return {"fair.c wake_affine_idle()", "available_idle_cpu(prev_cpu)"};
    case Stage1::AFFINE_WEIGHT_SYNC_THIS: return {"fair.c wake_affine_weight()", "sync && task_h_load(current) > this_eff_load"};
    case Stage1::AFFINE_WEIGHT_THIS: return {"fair.c wake_affine_weight()", "this_eff_load < prev_eff_load"};
    case Stage1::AFFINE_WEIGHT_PREV: return {"fair.c wake_affine_weight()", "this_eff_load >= prev_eff_load: nr_cpumask_bits, prev_cpu kept"};
    case Stage1::AFFINE_NO_TARGET: return {"fair.c wake_affine()", "schedlab's: !sched_feat(WA_IDLE) && !sched_feat(WA_WEIGHT): prev_cpu"};
    case Stage1::SLOW_PATH_IDLEST:
        return {"fair.c find_idlest_cpu()", "unlikely(sd): a domain with the placement's balance flag (SD_BALANCE_FORK/EXEC/WAKE)"};
    case Stage1::SLOW_NO_DOMAIN:
        return {"fair.c select_task_rq_fair()", "!sd && !(wake_flags & WF_TTWU): prev_cpu (fork or exec with no flagged domain)"};
    case Stage1::DEBOUNCE_PLACED:
        return {"fair.c select_task_rq_fair() (SIS_DEBOUNCE)", "p->wakee_placed == jiffies && prev allowed: prev_cpu at once"};
    case Stage1::DEBOUNCE_COLD_LLC:
        return {
            "fair.c select_task_rq_fair() (SIS_DEBOUNCE)",
            "cache-cold p (now - se.exec_start >= sysctl_sched_migration_cost) && cpus_share_cache(cpu, prev): select_idle_sibling(p, prev, prev)"};
    case Stage1::AFFINE_PREV_ALMOST_IDLE:
        return {"fair.c wake_affine_idle() (almost-idle prev, 2023-08-10)",
                "almost_idle_cpu(prev_cpu, p): cpu_load_without(cpu_rq(prev_cpu), p) <= 5; *target_idle = 1"};
    case Stage1::AFFINE_WAKE_ON_CURRENT:
        return {"fair.c wake_affine() (SIS_CURRENT v8)",
                "target == nr_cpumask_bits && wake_on_current(this_cpu, p): both short (dur_avg < sysctl_sched_migration_cost), no "
                "wakee_flips, each the other's last_wakee, this_cpu nr_running <= 1"};
    case Stage1::MIGRATION_RATELIMIT:
        return {"fair.c select_task_rq_fair() (migration ratelimit, RFC 2023-09-05)",
                "want_affine && !should_migrate_task(p, prev_cpu): sched_clock_cpu(prev_cpu) < p->se.next_migration_time (2/2: and "
                "nr_migrations_per_window >= quota): prev_cpu"};
    default: return {"fair.c select_task_rq_fair()", ""};
    }
}

CodeText textOf(IdlestSub c) {
    switch (c) {
    case IdlestSub::IDLEST_SCHED_IDLE: return {"fair.c find_idlest_group_cpu()", "sched_idle_cpu(i): a CPU running only SCHED_IDLE tasks"};
    case IdlestSub::IDLEST_SHALLOW:
        return {"fair.c find_idlest_group_cpu()", "available_idle_cpu(i): the shallowest idle state's exit_latency, else the latest idle_stamp"};
    case IdlestSub::IDLEST_LEAST_LOADED: return {"fair.c find_idlest_group_cpu()", "no idle CPU: cpu_load(cpu_rq(i)) < min_load"};
    case IdlestSub::IDLEST_STAY_LOCAL: return {"fair.c find_idlest_cpu()", "find_idlest_group() returned NULL at every level: cpu"};
    case IdlestSub::IDLEST_SINGLE_CPU_GROUP:
        return {"fair.c find_idlest_group_cpu()", "group->group_weight == 1: cpumask_first(sched_group_span(group))"};
    default: return {"fair.c find_idlest_cpu()", ""};
    }
}

CodeText textOf(Stage2 c) {
    switch (c) {
    case Stage2::SIS_TARGET_IDLE: return {"fair.c select_idle_sibling()", "S1: available_idle_cpu(target) && asym_fits_cpu(...)"};
    case Stage2::SIS_TARGET_SCHED_IDLE: return {"fair.c select_idle_sibling()", "S1: sched_idle_cpu(target) && asym_fits_cpu(...)"};
    case Stage2::SIS_PREV_IDLE:
        return {"fair.c select_idle_sibling()",
                "S2: prev != target && cpus_share_cache(prev, target) && (available_idle_cpu(prev) || sched_idle_cpu(prev))"};
    case Stage2::SIS_KTHREAD_STACK:
        return {"fair.c select_idle_sibling()",
                "S3: is_per_cpu_kthread(current) && in_task() && prev == smp_processor_id() && this_rq()->nr_running <= 1"};
    case Stage2::SIS_RECENT:
        return {"fair.c select_idle_sibling()",
                "S4: recent_used_cpu != prev, != target, shares target's LLC, idle (or sched_idle) and in p->cpus_ptr"};
    case Stage2::SIS_ASYM_CAPACITY:
        return {"fair.c select_idle_capacity()", "S5: sched_asym_cpucap_active() && sd_asym_cpucapacity: a CPU that fits"};
    case Stage2::SIS_NO_LLC: return {"fair.c select_idle_sibling()", "S6: !rcu_dereference(per_cpu(sd_llc, target)): target"};
    case Stage2::SIS_IDLE_SMT:
        return {"fair.c select_idle_smt()",
                "S7: sched_smt_active() && !has_idle_core && cpus_share_cache(prev, target): an idle SMT sibling of prev"};
    case Stage2::SIS_IDLE_CORE: return {"fair.c select_idle_core()", "S8: has_idle_core: a core whose every SMT sibling is idle"};
    case Stage2::SIS_IDLE_CPU:
        return {"fair.c __select_idle_cpu()", "S8: (available_idle_cpu(cpu) || sched_idle_cpu(cpu)) && sched_cpu_cookie_match()"};
    case Stage2::SIS_IDLE_CPU_FROM_CORESCAN:
        return {"fair.c select_idle_core()", "S8: the core scan found no idle core but an idle CPU (set_idle_cores(target, false))"};
    case Stage2::SIS_UTIL_ABORT: return {"fair.c select_idle_cpu()", "S8: sched_feat(SIS_UTIL) && nr_idle_scan + 1 == 1: no scan at all"};
    case Stage2::SIS_SCAN_EXHAUSTED: return {"fair.c select_idle_cpu()", "S8: --nr <= 0 before an idle CPU: the scan budget ran out"};
    case Stage2::SIS_FALLBACK_TARGET: return {"fair.c select_idle_sibling()", "S9: (unsigned)i >= nr_cpumask_bits: nothing idle found, target"};
    case Stage2::SIS_TARGET_IDLE_HINT:
        return {"fair.c select_idle_sibling() (almost-idle prev, 2023-08-10)", "S1: target_idle (wake_affine_idle() found prev almost idle)"};
    case Stage2::SIS_TARGET_FITS:
        return {"fair.c select_idle_sibling() (UTIL_FITS_CAPACITY)",
                "S1: task_fits_remaining_cpu_capacity(task_util, target): fits_capacity(util_est.enqueued + task_util_est(p), "
                "scale_rt_capacity(target))"};
    case Stage2::SIS_PREV_FITS:
        return {"fair.c select_idle_sibling() (UTIL_FITS_CAPACITY)",
                "S2: prev != target && cpus_share_cache(prev, target) && task_fits_remaining_cpu_capacity(task_util, prev)"};
    case Stage2::SIS_RECENT_FITS:
        return {"fair.c select_idle_sibling() (UTIL_FITS_CAPACITY)", "S4: recent_used_cpu passes task_fits_remaining_cpu_capacity()"};
    case Stage2::SIS_BIAS_PREV_IDLE:
        return {"fair.c select_idle_sibling() (SELECT_BIAS_PREV)",
                "before S1: (prev == target || cpus_share_cache(prev, target)) && (available_idle_cpu(prev) || sched_idle_cpu(prev))"};
    case Stage2::SIS_BIAS_PREV_FITS:
        return {"fair.c select_idle_sibling() (SELECT_BIAS_PREV)",
                "before S1: (prev == target || cpus_share_cache(prev, target)) && task_fits_remaining_cpu_capacity(task_util, prev)"};
    case Stage2::SIS_BIAS_PREV_FALLBACK:
        return {"fair.c select_idle_sibling() (SELECT_BIAS_PREV)", "S9: nothing idle found, prev != target && cpus_share_cache(prev, target): prev"};
    case Stage2::SIS_CACHE_HOT_FALLBACK:
        return {"fair.c select_idle_cpu() (SIS_CACHE v2)",
                "S8: every idle CPU found was cache-hot (sched_clock_cpu(cpu) < rq->cache_hot_timeout): the first one, or the last one "
                "scanned"};
    case Stage2::SIS_CURRENT:
        return {"fair.c select_idle_sibling() (SIS_CURRENT v8)", "before S8: smp_processor_id() == target && wake_on_current(target, p)"};
    default: return {"fair.c select_idle_sibling()", ""};
    }
}

}  // namespace

int DecisionFlow::add(std::string key, std::string label, FlowKind kind, int parent, std::string function, std::string condition) {
    const int id = int(m_nodes.size());
    FlowNode n;
    n.key = std::move(key);
    n.label = std::move(label);
    n.kind = kind;
    n.parent = parent;
    n.depth = parent < 0 ? 0 : m_nodes[std::size_t(parent)].depth + 1;
    n.function = std::move(function);
    n.condition = std::move(condition);
    m_nodes.push_back(std::move(n));
    m_children.emplace_back();
    m_treeEdge.push_back(-1);
    if (parent >= 0) {
        m_children[std::size_t(parent)].push_back(id);
        m_treeEdge.back() = int(m_edges.size());
        link(parent, id);
    }
    return id;
}

void DecisionFlow::link(int from, int to) { m_edges.push_back({from, to}); }

DecisionFlow::DecisionFlow() {
    const auto F = FlowKind::Function;
    m_ttwu = add("try_to_wake_up", "try_to_wake_up()", FlowKind::Entry, -1, "core.c try_to_wake_up()", "a sleeping task woken (WF_TTWU)");
    // Stage 0 exits of try_to_wake_up() first, then select_task_rq().
    m_stage0.assign(64, -1);
    m_stage1.assign(64, -1);
    m_idlest.assign(64, -1);
    m_stage2.assign(64, -1);
    for (Stage0 c : {Stage0::TTWU_SELF, Stage0::TTWU_RUNNABLE, Stage0::TTWU_ONCPU_WAKELIST})
        m_stage0[std::size_t(c)] = add(toString(c), toString(c), FlowKind::Exit, m_ttwu, textOf(c).function, textOf(c).condition);
    m_rq = add("select_task_rq", "select_task_rq()", F, m_ttwu, "core.c select_task_rq()", "p->sched_class->select_task_rq(), then is_cpu_allowed()");
    m_fork = add("wake_up_new_task", "wake_up_new_task()", FlowKind::Entry, -1, "core.c wake_up_new_task()", "a forked task placed (WF_FORK)");
    m_exec = add("sched_exec", "sched_exec()", FlowKind::Entry, -1, "core.c sched_exec()", "an exec()ing task placed (WF_EXEC)");
    m_forkEdge = int(m_edges.size());
    link(m_fork, m_rq);
    m_execEdge = int(m_edges.size());
    link(m_exec, m_rq);
    m_stage0[std::size_t(Stage0::AFFINITY_SINGLE)] = add("AFFINITY_SINGLE", "AFFINITY_SINGLE", FlowKind::Exit, m_rq,
                                                         textOf(Stage0::AFFINITY_SINGLE).function, textOf(Stage0::AFFINITY_SINGLE).condition);
    m_fair = add("select_task_rq_fair", "select_task_rq_fair()", F, m_rq, "fair.c select_task_rq_fair()",
                 "p->nr_cpus_allowed > 1 && !is_migration_disabled(p): the fair class's hook");
    // select_task_rq_fair(): in the function's order.
    const int wantAffine = add("want_affine", "want_affine", F, m_fair, "fair.c select_task_rq_fair()",
                               "wake_flags & WF_TTWU: want_affine = !wake_wide(p) && cpumask_test_cpu(cpu, p->cpus_ptr)");
    const int wakeAffine = add("wake_affine", "wake_affine()", F, wantAffine, "fair.c wake_affine()",
                               "want_affine && (tmp->flags & SD_WAKE_AFFINE) && prev_cpu in sched_domain_span(tmp), cpu != prev_cpu");
    const int waIdle = add("wake_affine_idle", "wake_affine_idle()", F, wakeAffine, "fair.c wake_affine_idle()", "sched_feat(WA_IDLE)");
    const int waWeight = add("wake_affine_weight", "wake_affine_weight()", F, wakeAffine, "fair.c wake_affine_weight()",
                             "sched_feat(WA_WEIGHT) && target == nr_cpumask_bits");
    const int idlest = add("find_idlest_cpu", "find_idlest_cpu()", F, m_fair, "fair.c find_idlest_cpu()",
                           "unlikely(sd): the slow path (find_idlest_group(), find_idlest_group_cpu() per level)");
    const int debounce = add("SIS_DEBOUNCE", "SIS_DEBOUNCE", F, m_fair, "fair.c select_task_rq_fair() (Mike Galbraith's SIS_DEBOUNCE)",
                             "sched_feat(SIS_DEBOUNCE) && (wake_flags & WF_TTWU)");
    m_sis = add("select_idle_sibling", "select_idle_sibling()", F, m_fair, "fair.c select_idle_sibling()",
                "!sd && (wake_flags & WF_TTWU): the fast path, target = the affine choice (or prev)");
    auto parent1 = [&](Stage1 c) {
        switch (c) {
        case Stage1::WAKE_WIDE:
        case Stage1::AFFINE_NOT_ALLOWED:
        case Stage1::AFFINE_SAME_CPU:
        case Stage1::AFFINE_NO_DOMAIN: return wantAffine;
        case Stage1::AFFINE_IDLE_PREV:
        case Stage1::AFFINE_IDLE_THIS:
        case Stage1::AFFINE_SYNC:
        case Stage1::AFFINE_PREV_IDLE:
        case Stage1::AFFINE_PREV_ALMOST_IDLE: return waIdle;
        case Stage1::MIGRATION_RATELIMIT: return wantAffine;
        case Stage1::AFFINE_WEIGHT_SYNC_THIS:
        case Stage1::AFFINE_WEIGHT_THIS:
        case Stage1::AFFINE_WEIGHT_PREV: return waWeight;
        case Stage1::AFFINE_NO_TARGET:
        case Stage1::AFFINE_WAKE_ON_CURRENT: return wakeAffine;
        case Stage1::SLOW_PATH_IDLEST: return idlest;
        case Stage1::DEBOUNCE_PLACED:
        case Stage1::DEBOUNCE_COLD_LLC: return debounce;
        default: return m_fair;  // EAS, SLOW_NO_DOMAIN, and a code not placed yet
        }
    };
    // The parents exist before their exits: add the exits in the order of their parents, then of the enum.
    const std::vector<Stage1> s1 = codes<Stage1>();
    for (int p : {wantAffine, waIdle, waWeight, wakeAffine, idlest, debounce, m_fair})
        for (Stage1 c : s1)
            if (parent1(c) == p) m_stage1[std::size_t(c)] = add(toString(c), toString(c), FlowKind::Exit, p, textOf(c).function, textOf(c).condition);
    for (IdlestSub c : codes<IdlestSub>())
        m_idlest[std::size_t(c)] =
            add(toString(c), toString(c), FlowKind::Exit, m_stage1[std::size_t(Stage1::SLOW_PATH_IDLEST)], textOf(c).function, textOf(c).condition);
    // select_idle_sibling(): S1-S9 in order, the helpers where they are called.
    const int cap = add("select_idle_capacity", "select_idle_capacity()", F, m_sis, "fair.c select_idle_capacity()",
                        "S5: sched_asym_cpucap_active() && per_cpu(sd_asym_cpucapacity, target)");
    const int smt = add("select_idle_smt", "select_idle_smt()", F, m_sis, "fair.c select_idle_smt()",
                        "S7: sched_smt_active() && !has_idle_core && cpus_share_cache(prev, target)");
    const int cpu = add("select_idle_cpu", "select_idle_cpu()", F, m_sis, "fair.c select_idle_cpu()",
                        "S8: the LLC scan from target+1 (select_idle_core() per core while has_idle_core)");
    const int core = add("select_idle_core", "select_idle_core()", F, cpu, "fair.c select_idle_core()",
                         "S8: has_idle_core (test_idle_cores(target)): per core of the LLC, all its SMT siblings idle");
    auto parent2 = [&](Stage2 c) {
        switch (c) {
        case Stage2::SIS_ASYM_CAPACITY: return cap;
        case Stage2::SIS_IDLE_SMT: return smt;
        case Stage2::SIS_IDLE_CORE:
        case Stage2::SIS_IDLE_CPU_FROM_CORESCAN: return core;
        case Stage2::SIS_IDLE_CPU:
        case Stage2::SIS_UTIL_ABORT:
        case Stage2::SIS_SCAN_EXHAUSTED:
        case Stage2::SIS_CACHE_HOT_FALLBACK: return cpu;
        default: return m_sis;
        }
    };
    // Drawing order S1..S9: the exits before S5 at select_idle_sibling, the helpers, then S6 and S9.
    for (Stage2 c : codes<Stage2>()) {
        const int p = parent2(c);
        m_stage2[std::size_t(c)] = add(toString(c), toString(c), FlowKind::Exit, p, textOf(c).function, textOf(c).condition);
    }
    // Children of select_idle_sibling in S order: S1-S4 exits, select_idle_capacity (S5), S6, select_idle_smt (S7),
    // select_idle_cpu (S8), S9.
    {
        auto& ch = m_children[std::size_t(m_sis)];
        auto rank = [&](int n) {
            static const std::vector<std::string> order = {
                "SIS_BIAS_PREV_IDLE", "SIS_BIAS_PREV_FITS",     "SIS_TARGET_IDLE",    "SIS_TARGET_SCHED_IDLE", "SIS_TARGET_IDLE_HINT",
                "SIS_TARGET_FITS",    "SIS_PREV_IDLE",          "SIS_PREV_FITS",      "SIS_KTHREAD_STACK",     "SIS_RECENT",
                "SIS_RECENT_FITS",    "select_idle_capacity",   "SIS_NO_LLC",         "select_idle_smt",       "SIS_CURRENT",
                "select_idle_cpu",    "SIS_BIAS_PREV_FALLBACK", "SIS_FALLBACK_TARGET"};
            const auto it = std::find(order.begin(), order.end(), m_nodes[std::size_t(n)].key);
            return it == order.end() ? int(order.size()) : int(it - order.begin());
        };
        std::stable_sort(ch.begin(), ch.end(), [&](int a, int b) { return rank(a) < rank(b); });
    }
    for (Stage0 c : {Stage0::FALLBACK_RQ})
        m_stage0[std::size_t(c)] = add(toString(c), toString(c), FlowKind::Exit, m_rq, textOf(c).function, textOf(c).condition);
    for (Stage0 c : codes<Stage0>())  // a stage-0 code not placed above: under select_task_rq()
        if (m_stage0[std::size_t(c)] < 0)
            m_stage0[std::size_t(c)] = add(toString(c), toString(c), FlowKind::Exit, m_rq, textOf(c).function, textOf(c).condition);
    // The variants' marks.
    m_delay = add("idle_delay_hit", "idle delay: idle_cpu()", FlowKind::Variant, m_fair, "core.c idle_cpu() (idle-delay patch)",
                  "the chosen CPU read idle only because it left idle less than idle_delay_ns ago (with <= idle_delay_max_running tasks)");
    m_claim = add("claim_set", "claim set", FlowKind::Variant, m_fair, "fair.c select_idle_sibling() (claim_wakeup patch)",
                  "the idle CPU chosen was claimed for this wakee (later wakers skip it)");
    m_runnableEdge = m_treeEdge[std::size_t(m_stage0[std::size_t(Stage0::TTWU_RUNNABLE)])];
    {
        // select_task_rq_fair()'s children in its order: SIS_DEBOUNCE's early return, EAS, the
        // affine wakeup, the slow path, neither, the fast path; then the variants' marks.
        auto& ch = m_children[std::size_t(m_fair)];
        auto rank = [&](int n) {
            static const std::vector<std::string> order = {
                "SIS_DEBOUNCE", "EAS", "want_affine", "find_idlest_cpu", "SLOW_NO_DOMAIN", "select_idle_sibling", "idle_delay_hit", "claim_set"};
            const auto it = std::find(order.begin(), order.end(), m_nodes[std::size_t(n)].key);
            return it == order.end() ? int(order.size()) : int(it - order.begin());
        };
        std::stable_sort(ch.begin(), ch.end(), [&](int a, int b) { return rank(a) < rank(b); });
    }
    // Drawing order: depth first from try_to_wake_up(), the other entries after it.
    std::vector<int> stack;
    for (int e : {m_exec, m_fork, m_ttwu}) stack.push_back(e);
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        m_order.push_back(n);
        const auto& ch = m_children[std::size_t(n)];
        for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
    }
}

const DecisionFlow& DecisionFlow::get() {
    static const DecisionFlow flow;
    return flow;
}

int DecisionFlow::node(std::string_view key) const {
    for (std::size_t i = 0; i < m_nodes.size(); ++i)
        if (m_nodes[i].key == key) return int(i);
    return -1;
}

int DecisionFlow::edge(int from, int to) const {
    for (std::size_t i = 0; i < m_edges.size(); ++i)
        if (m_edges[i].from == from && m_edges[i].to == to) return int(i);
    return -1;
}

void DecisionFlow::path(const Decision& d, std::vector<int>& out) const {
    // Edge index of node n's tree edge (parent -> n): the edge added with n.
    auto up = [&](int n, int top) {
        // The edges from `top` down to n, in that order.
        const std::size_t start = out.size();
        while (n >= 0 && n != top) {
            out.push_back(m_treeEdge[std::size_t(n)]);
            n = m_nodes[std::size_t(n)].parent;
        }
        std::reverse(out.begin() + std::ptrdiff_t(start), out.end());
    };
    const int entry = (d.wake_flags & WF_FORK) ? m_fork : (d.wake_flags & WF_EXEC) ? m_exec : m_ttwu;
    switch (d.stage0) {
    case Stage0::TTWU_SELF:
    case Stage0::TTWU_RUNNABLE:
    case Stage0::TTWU_ONCPU_WAKELIST: out.push_back(m_treeEdge[std::size_t(exitOf(d.stage0))]); return;
    default: break;
    }
    out.push_back(entry == m_fork ? m_forkEdge : entry == m_exec ? m_execEdge : m_treeEdge[std::size_t(m_rq)]);
    if (d.stage0 == Stage0::AFFINITY_SINGLE) {
        out.push_back(m_treeEdge[std::size_t(exitOf(d.stage0))]);
        return;
    }
    if (d.stage1 != Stage1::NONE || d.stage2 != Stage2::NONE) {
        out.push_back(m_treeEdge[std::size_t(m_fair)]);
        if (d.stage1 != Stage1::NONE) up(exitOf(d.stage1), m_fair);
        if (d.idlest != IdlestSub::NONE) out.push_back(m_treeEdge[std::size_t(exitOf(d.idlest))]);
        if (d.stage2 != Stage2::NONE) up(exitOf(d.stage2), m_fair);
        if (d.idle_delay_hit) out.push_back(m_treeEdge[std::size_t(m_delay)]);
        if (d.claim_set) out.push_back(m_treeEdge[std::size_t(m_claim)]);
    }
    if (d.stage0 != Stage0::NONE) out.push_back(m_treeEdge[std::size_t(exitOf(d.stage0))]);  // FALLBACK_RQ, after the hook
}

int DecisionFlow::nodeOf(Fn fn) const {
    switch (fn) {
    case Fn::find_idlest_group:
    case Fn::find_idlest_group_cpu: return node("find_idlest_cpu");
    case Fn::select_fallback_rq: return exitOf(Stage0::FALLBACK_RQ);
    case Fn::ttwu_queue_cond:
    case Fn::check_preempt_curr:
    case Fn::hrtimer_wakeup: return -1;
    default: return node(toString(fn));
    }
}

std::vector<int> DecisionFlow::lit(const Decision& d) const {
    std::vector<int> edges, out;
    path(d, edges);
    for (int e : edges) {
        if (e < 0) continue;
        out.push_back(m_edges[std::size_t(e)].from);
        out.push_back(m_edges[std::size_t(e)].to);
    }
    for (const Step& st : d.steps)
        if (const int n = nodeOf(st.fn); n >= 0) out.push_back(n);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

void FlowCounts::add(const Decision& d) {
    const DecisionFlow& f = DecisionFlow::get();
    if (edges.empty()) edges.assign(f.edges().size(), 0), nodes.assign(f.nodes().size(), 0);
    m_path.clear();
    f.path(d, m_path);
    ++total;
    if (m_path.empty()) return;
    nodes[std::size_t(f.edges()[std::size_t(m_path.front())].from)]++;  // the entry
    for (int e : m_path) {
        if (e < 0) continue;
        edges[std::size_t(e)]++;
        nodes[std::size_t(f.edges()[std::size_t(e)].to)]++;
    }
}

void FlowCounts::addRunnable() {
    const DecisionFlow& f = DecisionFlow::get();
    if (edges.empty()) edges.assign(f.edges().size(), 0), nodes.assign(f.nodes().size(), 0);
    const int e = f.runnableEdge();
    ++total;
    edges[std::size_t(e)]++;
    nodes[std::size_t(f.edges()[std::size_t(e)].from)]++;
    nodes[std::size_t(f.edges()[std::size_t(e)].to)]++;
}

void FlowCounts::clear() {
    std::fill(edges.begin(), edges.end(), 0);
    std::fill(nodes.begin(), nodes.end(), 0);
    total = 0;
}

std::string flowText(const FlowCounts& a, const FlowCounts* b, const std::string& nameA, const std::string& nameB, bool all) {
    const DecisionFlow& f = DecisionFlow::get();
    const auto& nodes = f.nodes();
    // The tree prefix of each node ("│  ├─ "), from its ancestors being last children or not.
    auto isLast = [&](int n) {
        const int p = nodes[std::size_t(n)].parent;
        if (p < 0) return true;
        const auto& ch = f.children(p);
        // The last child that is shown.
        for (auto it = ch.rbegin(); it != ch.rend(); ++it) {
            const bool shown = all || a.node(*it) || (b && b->node(*it));
            if (shown) return *it == n;
        }
        return true;
    };
    auto prefix = [&](int n) {
        std::string s;
        std::vector<int> chain;
        for (int p = nodes[std::size_t(n)].parent; p >= 0 && nodes[std::size_t(p)].parent >= 0; p = nodes[std::size_t(p)].parent) chain.push_back(p);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) s += isLast(*it) ? "   " : "│  ";
        if (nodes[std::size_t(n)].parent >= 0) s += isLast(n) ? "└─ " : "├─ ";
        return s;
    };
    auto width = [](const std::string& s) {
        std::size_t w = 0;
        for (unsigned char c : s) w += (c & 0xc0) != 0x80;
        return w;
    };
    auto share = [](std::uint64_t n, std::uint64_t total) { return total ? 100.0 * double(n) / double(total) : 0.0; };
    std::vector<std::pair<std::string, int>> lines;
    std::size_t w = 0;
    for (int n : f.order()) {
        if (!all && !a.node(n) && !(b && b->node(n))) continue;
        std::string s = prefix(n) + nodes[std::size_t(n)].label;
        if (nodes[std::size_t(n)].kind == FlowKind::Entry && n != f.node("try_to_wake_up")) s += " -> select_task_rq()";
        w = std::max(w, width(s));
        lines.emplace_back(std::move(s), n);
    }
    std::string out;
    auto pad = [&](const std::string& s) { return s + std::string(w + 2 - std::min(w + 2, width(s)), ' '); };
    if (b) out += pad("decisions (share of all)") + fmt::format("{:>20} {:>20} {:>10}\n", nameA, nameB, "change");
    else out += pad("decisions (share of all)") + fmt::format("{:>20}\n", nameA);
    auto cell = [&](std::uint64_t n, std::uint64_t total) { return fmt::format("{} ({:.1f}%)", n, share(n, total)); };
    for (const auto& [s, n] : lines) {
        // An entry's count is its edge into select_task_rq() (fork, exec), or all its decisions.
        const std::uint64_t na = a.node(n);
        out += pad(s) + fmt::format("{:>20}", cell(na, a.total));
        if (b) {
            const std::uint64_t nb = b->node(n);
            const double d = share(nb, b->total) - share(na, a.total);
            out += fmt::format(" {:>20} {:>+9.1f}pp", cell(nb, b->total), d);
        }
        out += '\n';
    }
    out += fmt::format("{} decisions{}", a.total, b ? fmt::format(" (A), {} (B)", b->total) : std::string());
    out +=
        "; a node counts the decisions that reached it; select_task_rq_fair() branches twice (its own choice, then "
        "select_idle_sibling()).\n";
    return out;
}

}  // namespace sched

namespace sched {

void FlowCounts::state(StateArchive& ar) {
    ar.vec(edges);
    ar.vec(nodes);
    ar(total);
}

}  // namespace sched
