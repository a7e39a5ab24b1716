// SPDX-License-Identifier: GPL-2.0-or-later
// engine_balance.cpp: the engine's side of load balancing (load_balance(), detach/attach, active balance, rebalance_domains, newidle, nohz).
// (engine_internal.h: how the engine is split.)
#include "sim/engine_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace sched {

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
        if (m_cpus[dst].curr >= 0) checkPreemptAttached(dst, *it, from);  // attach_task(): check_preempt_curr() against a running curr
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
    if (taskIsBlocked(id)) return false;  // proxy execution (v6 17/20): proxy() moves donors, balancing does not
    if (!p.t.cpus_ptr->test(env.dst_cpu)) {
        env.flags |= LBF_SOME_PINNED;
        return false;
    }
    env.flags &= ~LBF_ALL_PINNED;
    const Cpu& s = m_cpus[env.src_cpu];
    if (s.curr == id || s.donor == id) return false;  // task_on_cpu, task_current_selected
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
        if (m_tasks[t].t.cpus_ptr->test(dst) && !m_tasks[t].t.is_per_cpu_kthread() && !taskIsBlocked(t) && b.donor != t) {  // can_migrate_task()
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
        if (SimTask& t = m_tasks[id]; t.watch_off_cpu) m_workloads[t.workload]->offCpu(*this, t);  // pushed off its CPU
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

}  // namespace sched
