// SPDX-License-Identifier: GPL-2.0-or-later
// core_balance_test.cpp: load balancing against Linux 6.1's fair.c -- the pure
// statistics and decisions (update_sg_lb_stats, find_busiest_group,
// calculate_imbalance, find_busiest_queue, need_active_balance, the balance
// intervals) on hand-built states, and the engine's side (uptime, rd->overload,
// post_init_entity_util_avg, the intervals after a balance). Each test names the
// departure from 6.1 it guards against: it fails on the code before the fix.
#include "sim/cost_model.h"
#include "sim/engine.h"
#include "kernel/sched_balance.h"
#include "sim/report.h"
#include "sim/reproduce.h"
#include "sim/scenario.h"
#include "sim/steady_state.h"
#include "kernel/wakeup_path.h"
#include "test_scenarios.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <variant>

using namespace sched;

namespace {

std::shared_ptr<const Topology> topo(const char* name) { return std::make_shared<const Topology>(Topology::preset(name)); }

/// A busy CPU: `nr` runnable tasks, full utilization.
void busy(MachineState& st, int cpu, unsigned nr, std::int64_t util = 1024) {
    Rq& rq = st.rq[std::size_t(cpu)];
    rq.nr_running = rq.h_nr_running = nr;
    rq.curr = nr ? CurrKind::Normal : CurrKind::Idle;
    rq.load_avg = 1024 * nr;
    rq.util_avg = util;
    rq.runnable_avg = 1024 * nr;
}

LbEnv envFor(const MachineState& st, int cpu, int level, IdleType idle) {
    const auto& doms = st.sd->domains(cpu);
    LbEnv env;
    env.sd = &doms[std::size_t(level)];
    env.child = level > 0 ? &doms[std::size_t(level - 1)] : nullptr;
    env.has_parent = level + 1 < int(doms.size());
    env.dst_cpu = cpu;
    env.idle = idle;
    env.cpus = env.sd->span;
    return env;
}

SgLbStats group(GroupType t, unsigned weight, unsigned nr, unsigned idle, std::int64_t load = 0, std::int64_t util = 0) {
    SgLbStats s;
    s.group_type = t;
    s.group_weight = weight;
    s.sum_nr_running = s.sum_h_nr_running = nr;
    s.idle_cpus = idle;
    s.group_capacity = 1024 * weight;
    s.group_load = load;
    s.group_util = util;
    return s;
}

}  // namespace

// --- update_sg_lb_stats / update_sd_lb_stats ----------------------------------

// 6.1 computes avg_load only for overloaded groups ("XXX for now avg_load is not computed
// and always 0" for fully busy ones); the engine used to compute it for fully busy too.
TEST(Balance, AvgLoadIsComputedOnlyForOverloadedGroups) {
    MachineState st(topo("qemu-2s2c2t"));
    for (int c = 4; c < 8; ++c) busy(st, c, 1);  // 4 tasks on 4 CPUs: fully busy
    LbEnv env = envFor(st, 0, 2, IdleType::CPU_IDLE);
    int status = 0;
    SgLbStats sgs;
    update_sg_lb_stats(st, Knobs{}, env, env.sd->groups[1], sgs, &status);
    EXPECT_EQ(sgs.group_type, GroupType::group_fully_busy);
    EXPECT_EQ(sgs.avg_load, 0);
    EXPECT_EQ(status & SG_OVERLOAD, 0);
    busy(st, 5, 3);  // now 6 tasks: overloaded
    update_sg_lb_stats(st, Knobs{}, env, env.sd->groups[1], sgs, &status);
    EXPECT_EQ(sgs.group_type, GroupType::group_overloaded);
    EXPECT_EQ(sgs.avg_load, sgs.group_load * 1024 / sgs.group_capacity);
    EXPECT_NE(status & SG_OVERLOAD, 0);
}

// rd->overload is sticky: add_nr_running sets it; only the root level's
// update_sd_lb_stats writes it back (the engine used "some rq has >= 2 right now").
TEST(Balance, RdOverloadIsWrittenOnlyAtTheRootLevel) {
    MachineState st(topo("qemu-2s2c2t"));
    st.rd_overload = true;
    busy(st, 1, 1);
    SdLbStats a;
    LbEnv mc = envFor(st, 0, 1, IdleType::CPU_IDLE);
    update_sd_lb_stats(st, Knobs{}, mc, a);
    EXPECT_TRUE(st.rd_overload) << "a lower level leaves the flag alone";
    SdLbStats b;
    LbEnv die = envFor(st, 0, 2, IdleType::CPU_IDLE);
    ASSERT_FALSE(die.has_parent);
    update_sd_lb_stats(st, Knobs{}, die, b);
    EXPECT_FALSE(st.rd_overload) << "the root level clears it when no rq has two tasks";
    busy(st, 6, 2);
    SdLbStats c;
    update_sd_lb_stats(st, Knobs{}, die, c);
    EXPECT_TRUE(st.rd_overload);
}

// --- find_busiest_group / calculate_imbalance ---------------------------------

// sds->prefer_sibling = child && child->flags & SD_PREFER_SIBLING: at the top level (no
// parent) a busy CPU still evens out the task count between its two packages. The engine
// read the parent's flag, so the top level never did.
TEST(Balance, PreferSiblingIsTheChildDomainsFlag) {
    MachineState st(topo("qemu-2s2c2t"));
    for (int c = 4; c < 8; ++c) busy(st, c, 1);  // package 1 fully busy, package 0 has room
    busy(st, 0, 1);
    LbEnv env = envFor(st, 0, 2, IdleType::CPU_NOT_IDLE);
    SdLbStats sds;
    const int g = find_busiest_group(st, Knobs{}, env, sds);
    EXPECT_TRUE(sds.prefer_sibling);
    ASSERT_EQ(g, 1);
    EXPECT_EQ(env.migration_type, MigrationType::migrate_task);
    EXPECT_EQ(env.imbalance, (4 - 1) >> 1);
}

// migrate_util only between groups that do not share the LLC
// (!(env->sd->flags & SD_SHARE_PKG_RESOURCES), "Ensure tasks spreading in LLC during LB").
TEST(Balance, MigrateUtilOnlyAcrossLlcs) {
    MachineState st(topo("qemu-2s2c2t"));
    busy(st, 2, 3);
    busy(st, 3, 3);  // core 1 of package 0 overloaded, core 0 idle
    LbEnv mc = envFor(st, 0, 1, IdleType::CPU_IDLE);
    SdLbStats a;
    ASSERT_EQ(find_busiest_group(st, Knobs{}, mc, a), 1);
    EXPECT_EQ(a.busiest_stat.group_type, GroupType::group_overloaded);
    EXPECT_EQ(mc.migration_type, MigrationType::migrate_task) << "inside the LLC: spread tasks";
    EXPECT_EQ(mc.imbalance, (6 - 0) >> 1);

    MachineState s2(topo("qemu-2s2c2t"));
    for (int c = 4; c < 8; ++c) busy(s2, c, 2);
    LbEnv die = envFor(s2, 0, 2, IdleType::CPU_IDLE);
    SdLbStats b;
    ASSERT_EQ(find_busiest_group(s2, Knobs{}, die, b), 1);
    EXPECT_EQ(die.migration_type, MigrationType::migrate_util) << "across LLCs: fill the spare capacity";
    EXPECT_EQ(die.imbalance, 4 * 1024);
}

// adjust_numa_imbalance() sees the imbalance before the ">>= 1" (6.1 order); the engine
// halved first, so an idle-CPU difference of 3 became 1 and then 0.
TEST(Balance, NumaImbalanceIsAdjustedBeforeHalving) {
    SchedDomain sd;
    sd.flags = SD_NUMA | SD_BALANCE_NEWIDLE;
    sd.imbalance_pct = 125;
    sd.imb_numa_nr = 4;
    LbEnv env;
    env.sd = &sd;
    env.idle = IdleType::CPU_IDLE;
    SdLbStats sds;
    sds.local_stat = group(GroupType::group_has_spare, 4, 1, 3);
    sds.busiest_stat = group(GroupType::group_has_spare, 4, 4, 0);
    calculate_imbalance(env, sds);
    EXPECT_EQ(env.migration_type, MigrationType::migrate_task);
    EXPECT_EQ(env.imbalance, 3 >> 1);
    // Within NUMA_IMBALANCE_MIN with few tasks on the destination: allowed (0).
    sds.local_stat = group(GroupType::group_has_spare, 4, 1, 2);
    sds.busiest_stat = group(GroupType::group_has_spare, 4, 3, 0);
    calculate_imbalance(env, sds);
    EXPECT_EQ(env.imbalance, 0);
}

// A fully busy local group takes load only while it is below the domain's average
// (calculate_imbalance's second test, missing before).
TEST(Balance, FullyBusyLocalPullsOnlyBelowTheDomainAverage) {
    SchedDomain sd;
    sd.flags = SD_BALANCE_NEWIDLE;
    sd.imbalance_pct = 117;
    LbEnv env;
    env.sd = &sd;
    env.idle = IdleType::CPU_NOT_IDLE;
    SdLbStats sds;
    sds.local_stat = group(GroupType::group_fully_busy, 4, 4, 0, 5000);
    sds.busiest_stat = group(GroupType::group_overloaded, 4, 8, 0, 6000);
    sds.busiest_stat.avg_load = 6000 * 1024 / 4096;
    sds.total_load = 5000 + 6000 + 2000;  // a third, idle-ish group pulls the average down
    sds.total_capacity = 3 * 4096;
    calculate_imbalance(env, sds);
    EXPECT_EQ(env.imbalance, 0) << "local avg_load 1250 >= the domain's 1083";
    sds = SdLbStats{};
    sds.local_stat = group(GroupType::group_fully_busy, 4, 4, 0, 4000);
    sds.busiest_stat = group(GroupType::group_overloaded, 4, 8, 0, 8000);
    sds.busiest_stat.avg_load = 8000 * 1024 / 4096;
    sds.total_load = 12000;
    sds.total_capacity = 2 * 4096;
    calculate_imbalance(env, sds);
    EXPECT_EQ(env.migration_type, MigrationType::migrate_load);
    EXPECT_EQ(env.imbalance, std::min((2000 - 1500) * 4096, (1500 - 1000) * 4096) / 1024);
}

// --- find_busiest_queue ---------------------------------------------------------

// migrate_load starts from busiest_load 0 and busiest_capacity 1, so a CPU whose load is 0
// is never picked; the engine picked the first CPU it saw.
TEST(Balance, FindBusiestQueueNeverPicksAZeroLoad) {
    MachineState st(topo("qemu-2s2c2t"));
    busy(st, 4, 1);
    st.rq[4].load_avg = 0;
    busy(st, 5, 1);
    st.rq[5].load_avg = 0;
    LbEnv env = envFor(st, 0, 2, IdleType::CPU_IDLE);
    env.migration_type = MigrationType::migrate_load;
    env.imbalance = 100;
    EXPECT_EQ(find_busiest_queue(st, Knobs{}, env, env.sd->groups[1]), -1);
    busy(st, 6, 2);
    st.rq[6].load_avg = 50;
    busy(st, 7, 3);
    st.rq[7].load_avg = 40;
    EXPECT_EQ(find_busiest_queue(st, Knobs{}, env, env.sd->groups[1]), 6);
    env.migration_type = MigrationType::migrate_task;
    EXPECT_EQ(find_busiest_queue(st, Knobs{}, env, env.sd->groups[1]), 7);
}

// --- need_active_balance / intervals ----------------------------------------------

// imbalanced_active_balance() needs migrate_task; the engine kicked the stopper for any type.
TEST(Balance, ActiveBalanceOnlyForTaskImbalances) {
    MachineState st(topo("qemu-2s2c2t"));
    busy(st, 4, 1);
    LbEnv env = envFor(st, 0, 2, IdleType::CPU_IDLE);
    env.src_cpu = 4;
    env.nr_balance_failed = env.sd->cache_nice_tries + 3;
    env.migration_type = MigrationType::migrate_load;
    EXPECT_FALSE(need_active_balance(st, env));
    env.migration_type = MigrationType::migrate_util;
    EXPECT_FALSE(need_active_balance(st, env));
    env.migration_type = MigrationType::migrate_task;
    EXPECT_TRUE(need_active_balance(st, env));
    env.nr_balance_failed = env.sd->cache_nice_tries + 2;
    EXPECT_FALSE(need_active_balance(st, env));
}

// get_sd_balance_interval(): msecs_to_jiffies rounds up, a busy CPU's interval is one
// jiffy shorter, and max_load_balance_interval = HZ * nr_cpus / 10 caps it.
TEST(Balance, BalanceIntervalRoundsUpAndBusyIsOneJiffyShorter) {
    SchedDomain sd;
    sd.busy_factor = 16;
    EXPECT_EQ(msecs_to_jiffies(5, 250), 2);
    EXPECT_EQ(msecs_to_jiffies(8, 250), 2);
    EXPECT_EQ(msecs_to_jiffies(1, 1000), 1);
    EXPECT_EQ(get_sd_balance_interval(sd, 5, false, 250, 8), 2);
    EXPECT_EQ(get_sd_balance_interval(sd, 8, true, 250, 8), 8 * 16 / 4 - 1);
    EXPECT_EQ(get_sd_balance_interval(sd, 768, true, 250, 8), 250 * 8 / 10);
    EXPECT_EQ(get_sd_balance_interval(sd, 1, false, 250, 1), 1);
}

// --- The engine --------------------------------------------------------------------

namespace {

using Hog = TestHog;

/// A waker that runs 20 ms, wakes a sleeper (which runs 1 ms and blocks again) and sleeps
/// 5 ms, over and over; it notes the two tasks' se.avg.load_avg just before each wakeup.
class WakerSleeper : public Workload {
public:
    std::string name() const override { return "waker-sleeper"; }
    std::string commandLine() const override { return "waker-sleeper"; }
    void start(Engine& e) override {
        waker = e.spawn(0, "waker", 1, -1, 0, 0, 0);
        sleeper = e.spawn(0, "sleeper", 2, -1, 1, 0, 0);
    }
    Action step(Engine& e, SimTask& t) override {
        if (t.role == 1) return t.a++ % 2 == 0 ? Action::run(1000000) : Action::block();
        if (t.a++ % 2 == 0) return Action::run(20000000);
        if (e.task(sleeper).state == TaskState::Blocked) {
            sleeperLoadBefore.push_back(e.task(sleeper).t.avg.load_avg);
            wakerLoadBefore.push_back(t.t.avg.load_avg);
            e.wake(sleeper, true);
        }
        return Action::sleep(5000000);
    }
    bool finished() const override { return false; }
    void report(const Engine&, WorkloadReport&) const override {}
    int waker = -1, sleeper = -1;
    std::vector<std::uint64_t> sleeperLoadBefore, wakerLoadBefore;
};

EngineConfig config(const char* t, std::int64_t uptime_ns) {
    EngineConfig cfg;
    cfg.topo = topo(t);
    cfg.cost = CostModel::forTopology(*cfg.topo);
    cfg.uptime_ns = uptime_ns;
    cfg.check_invariants = true;
    return cfg;
}

}  // namespace

// post_init_entity_util_avg() runs in wake_up_new_task() after select_task_rq(), on the
// chosen CPU's cfs_rq; the engine computed it on the parent's, so a child of a busy parent
// started with almost no utilization on an idle CPU. And enqueue_entity() decays the cfs_rq
// before it attaches the new entity, so the child is not aged by the cfs_rq's stale clock.
TEST(BalanceEngine, NewTaskUtilComesFromTheChosenCpu) {
    Engine e(config("qemu-1s4c", 600000000000LL));
    auto w = std::make_unique<Hog>();
    Hog* hog = w.get();
    e.addWorkload(std::move(w));
    e.advance(200000000);  // the hog's CPU is at full utilization
    const int parentCpu = e.task(hog->id).t.cpu;
    const int child = e.spawn(0, "child", 1, hog->id, 0, 1, 0);
    const SimTask& c = e.task(child);
    ASSERT_NE(c.t.cpu, parentCpu) << "fork placement picks an idle CPU";
    EXPECT_EQ(c.t.avg.util_avg, 512u) << "half of the idle CPU's spare capacity";
}

// select_task_rq_fair() reads the wakee's se.avg as its dequeue left it: wake_affine_weight's
// task_h_load(p) is not synced first (only find_idlest_cpu() and the asymmetric
// select_idle_sibling() call sync_entity_load_avg()), and task_h_load(current) is the
// waker's live se.avg, not a copy from the waker's own last wakeup.
TEST(BalanceEngine, WakeAffineReadsTheWakeesUnsyncedAndTheWakersLiveLoad) {
    Engine e(config("qemu-1s4c", 600000000000LL));
    auto w = std::make_unique<WakerSleeper>();
    WakerSleeper* ws = w.get();
    std::vector<WakeInputs> seen;
    e.wake_inputs_sink = [&](const WakeInputs& in) {
        if (in.pid == e.task(ws->sleeper).t.pid && in.time > 0) seen.push_back(in);
    };
    e.addWorkload(std::move(w));
    e.advance(400000000);
    ASSERT_GE(ws->sleeperLoadBefore.size(), 10u);
    ASSERT_GE(seen.size(), ws->sleeperLoadBefore.size());
    for (std::size_t i = 0; i < ws->sleeperLoadBefore.size(); ++i) {
        EXPECT_EQ(std::uint64_t(seen[i].p_load), ws->sleeperLoadBefore[i]) << "wakeup " << i;
        EXPECT_EQ(std::uint64_t(seen[i].cur_load), ws->wakerLoadBefore[i]) << "wakeup " << i;
    }
    // The waker's load rose over its 20 ms of running since its own last wakeup: a copy
    // taken at that wakeup (the engine before) would not equal it.
    EXPECT_GT(ws->wakerLoadBefore.back(), 0u);
}

// The machine has been up: jiffies start at uptime / jiffy and every domain, last balanced
// at boot, is due at the first busy tick (sd_init: last_balance = jiffies at boot). With
// uptime 0 (the engine before), nothing above SMT could balance for its busy interval.
// (The hog's CPU stops at MC: its idle SMT sibling is the group's first idle CPU, so
// should_we_balance() leaves the upper levels to it.)
TEST(BalanceEngine, AMachineThatHasBeenUpBalancesEveryLevelAtItsFirstTick) {
    for (const std::int64_t up : {std::int64_t(600000000000LL), std::int64_t(0)}) {
        Engine e(config("qemu-2s2c2t", up));
        EXPECT_EQ(e.state().jiffies, up / 4000000);
        auto w = std::make_unique<Hog>();
        Hog* hog = w.get();
        e.addWorkload(std::move(w));
        e.advance(10000000);  // 2.5 ticks
        const int cpu = e.task(hog->id).t.cpu;
        const int mc = 1;
        ASSERT_EQ(e.state().sd->domains(cpu)[mc].name, "MC");
        if (up > 0) {
            EXPECT_GT(e.lastBalance(cpu, mc), up / 4000000) << "MC balanced at the first tick";
        } else {
            EXPECT_EQ(e.lastBalance(cpu, mc), 0) << "a fresh boot waits for the busy interval (15 jiffies)";
        }
    }
}

// An idle machine that has been up has has_idle_cores set in every LLC when it has SMT:
// the last CPU of each core to enter idle found its siblings idle (__update_idle_core()),
// and only a core scan that finds no idle core clears the hint. The engine started with
// sd_init()'s zeroed 0 (a fresh boot's, which lasts until the first idle entry), so the
// first wakeups of an LLC skipped the idle-core scan. Without SMT the hint is never set.
TEST(BalanceEngine, AnIdleMachineStartsWithHasIdleCoresSetWhereItHasSmt) {
    for (const char* t : {"qemu-2s2c2t", "epyc-9654-2s", "qemu-1s4c"}) {
        Engine e(config(t, 600000000000LL));
        MachineState st = e.state();
        const bool smt = st.sd->smtActive();
        EXPECT_EQ(smt, std::string(t) != "qemu-1s4c") << t;
        for (int c = 0; c < st.nrCpus(); ++c) {
            const SdShared* sh = st.llcShared(c);
            ASSERT_NE(sh, nullptr) << t << " CPU " << c;
            EXPECT_EQ(sh->has_idle_cores, smt) << t << " CPU " << c;
            EXPECT_EQ(sh->nr_idle_scan, st.sd->sd_llc_size(c)) << t << " CPU " << c;
            EXPECT_EQ(sh->nr_busy_cpus, 0) << t << " CPU " << c;
        }
    }
}

// update_newidle_cost(): a machine that has been up starts with each domain's
// max_newidle_lb_cost at the cost of one newidle load_balance() (the cost model's
// load_balance term), and rebalance_domains() decays it by 253/256 once a second while no
// newidle balance costs more (a hog never goes idle). rq->max_idle_balance_cost follows
// the decay with sysctl_sched_migration_cost (the knob; 0.5 ms) as its floor.
TEST(BalanceEngine, NewidleCostsAreLearnedAndDecayOncePerSecond) {
    for (const auto& [base, migration_cost] : {std::pair<std::int64_t, std::int64_t>{2160, 500000}, {400000, 500000}, {2160, 2000000}}) {
        EngineConfig cfg = config("qemu-2s2c2t", 600000000000LL);
        cfg.cost.lb_newidle_base = base;
        cfg.knobs.migration_cost_ns = migration_cost;
        cfg.check_invariants = false;
        Engine e(cfg);
        auto w = std::make_unique<Hog>();
        Hog* hog = w.get();
        e.addWorkload(std::move(w));
        const auto& doms0 = e.state().sd->domains(0);
        std::vector<std::int64_t> initial;
        for (std::size_t l = 0; l < doms0.size(); ++l) {
            initial.push_back(e.maxNewidleLbCost(0, int(l)));
            EXPECT_EQ(initial.back(), base + cfg.cost.lb_newidle_per_cpu * doms0[l].span_weight) << doms0[l].name;
        }
        e.advance(3100000000LL);
        const int cpu = e.task(hog->id).t.cpu;
        std::int64_t sum = 0;
        for (std::size_t l = 0; l < doms0.size(); ++l) {
            const std::int64_t v0 = e.maxNewidleLbCost(cpu, int(l));
            sum += v0;
            std::int64_t v = initial[l];
            int k = 0;
            while (v > v0 && k < 10) v = v * 253 / 256, ++k;
            EXPECT_EQ(v, v0) << doms0[l].name << ": not a whole number of 253/256 decays of " << initial[l];
            EXPECT_GE(k, 2) << doms0[l].name;
            EXPECT_LE(k, 3) << doms0[l].name;
        }
        EXPECT_EQ(e.state().rq[std::size_t(cpu)].max_idle_balance_cost, std::max(migration_cost, sum)) << base << " " << migration_cost;
    }
}

// Newidle balancing takes time: a CPU that pulls a task runs it only after the domains it
// balanced (the load_balance cost term; `off=load_balance` makes it free, and then the
// learned maximum is 0, so the avg_idle gate never stops a newidle balance).
TEST(BalanceEngine, ANewidlePullIsChargedItsLoadBalanceCost) {
    const nlohmann::json doc = {{"topology", "qemu-2s2c2t"},
                                {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 2}, {"fds", 4}, {"loops", 1000}}})}};
    Scenario s = parseScenario(doc, "lb.json", ".");
    RunResult on = runScenario(s, s.variants.front(), s.cost, RunOptions{});
    EXPECT_GT(on.engine->metrics().cost_lb, 0);
    EXPECT_GT(on.engine->metrics().lb_moved_tasks, 0u);
    CostModel free = s.cost;
    free.set("off=load_balance");
    RunResult off = runScenario(s, s.variants.front(), free, RunOptions{});
    EXPECT_EQ(off.engine->metrics().cost_lb, 0);
    EXPECT_EQ(off.engine->maxNewidleLbCost(0, 0), 0);
    EXPECT_NE(off.digest, on.digest);
}

// After a balance that finds nothing to do, the interval doubles up to max_interval; a
// newidle balance never touches it (out_one_pinned: "balance_interval skyrocketing").
TEST(BalanceEngine, BalancedOutcomesDoubleTheIntervalButNewidleNever) {
    Engine e(config("qemu-2s2c2t", 600000000000LL));
    auto w = std::make_unique<Hog>();
    Hog* hog = w.get();
    e.addWorkload(std::move(w));
    e.advance(400000000);
    const int cpu = e.task(hog->id).t.cpu;
    const auto& doms = e.state().sd->domains(cpu);
    for (int l = 0; l < int(doms.size()); ++l) {
        EXPECT_EQ(e.balanceInterval(cpu, l), doms[std::size_t(l)].max_interval) << doms[std::size_t(l)].name;
        EXPECT_EQ(e.nrBalanceFailed(cpu, l), 0);
    }
    EXPECT_GT(e.metrics().lb_balanced, 0u);
}

// --- nohz ---------------------------------------------------------------------------

// sd_llc_shared->nr_busy_cpus counts the LLC's CPUs outside nohz.idle_cpus_mask: a CPU
// leaves the mask at its first busy tick (nohz_balance_exit_idle) and enters it when its
// tick stops on idle (nohz_balance_enter_idle). The engine never maintained it, so
// nohz_balancer_kick()'s "nr_busy > 1" trigger could not fire.
TEST(BalanceEngine, NrBusyCpusCountsTheLlcsCpusOutsideTheNohzMask) {
    Scenario s = hackbenchOn("qemu-2s2c2t", 1, 8000);
    // The governor's tick decision: a machine with a cpuidle driver (a qemu guest has none, and
    // stops the tick at every idle entry whatever the knob).
    s.cost.cpuidle_driver = true;
    for (const bool retain : {true, false}) {
        Knobs k;
        k.idle_retain_tick = retain;
        RunOptions o;
        o.check_invariants = true;
        std::unique_ptr<Engine> e = buildEngine(s, k, s.cost, o);
        const auto& sds = *e->state().sd;
        int most = 0;
        for (int step = 0; step < 8; ++step) {
            e->advance(2000000);
            std::map<int, int> outside;
            for (int c = 0; c < e->nrCpus(); ++c) outside[sds.sd_llc_shared(c)] += e->nohzIdle(c) ? 0 : 1;
            int total = 0;
            for (const auto& [id, n] : outside) {
                EXPECT_EQ(e->state().shared[std::size_t(id)].nr_busy_cpus, n) << "LLC " << id << " at step " << step;
                total += n;
            }
            most = std::max(most, total);
        }
        ASSERT_FALSE(e->done());
        EXPECT_GT(most, 1) << "hackbench keeps more than one CPU busy";
        EXPECT_GT(e->metrics().nohz_kicks, 0u) << "retain " << retain << " busy " << most << " idle ticks " << e->metrics().idle_ticks;
        if (retain) EXPECT_GT(e->metrics().idle_ticks, 0u) << "short idles keep the tick (menu)";
        else EXPECT_EQ(e->metrics().idle_ticks, 0u) << "the tick stops at every idle entry";
    }
}

// A machine that sits idle stops every tick (the governor's prediction grows past a tick):
// after the workload, all CPUs are back in nohz.idle_cpus_mask... except those whose first
// busy tick has not come yet; nr_busy_cpus never goes negative or past the LLC.
TEST(BalanceEngine, AnIdleMachineStopsItsTicks) {
    const Scenario s = hackbenchOn("qemu-2s2c2t", 1, 100);
    RunOptions o;
    o.check_invariants = true;
    std::unique_ptr<Engine> e = buildEngine(s, Knobs{}, s.cost, o);
    e->advance(1000000000);
    const std::uint64_t ticks = e->metrics().idle_ticks;
    e->advance(200000000);
    EXPECT_EQ(e->metrics().idle_ticks, ticks) << "no idle ticks once the machine has settled idle";
}

// nohz_newidle_balance() / nohz_run_idle_balance(): a CPU whose newidle balance pulled
// nothing, that expects to stay idle at least sysctl_sched_migration_cost (avg_idle) while
// the idle CPUs' blocked load is due (nohz.has_blocked, nohz.next_blocked reached), updates
// that load itself on its way into idle (NOHZ_NEWILB_KICK). With a migration cost longer
// than any avg_idle can get, the gate never opens.
TEST(BalanceEngine, ANewlyIdleCpuUpdatesTheIdleCpusBlockedLoadOnItsWayIntoIdle) {
    const Scenario s =
        parseScenario(nlohmann::json{{"topology", "i7-4790"},
                                     {"workloads", nlohmann::json::array({{{"type", "stress"}, {"workers", 2}, {"load", 5}, {"slice_ms", 1}}})},
                                     {"stop", {{"sim_time_s", 1.0}}}},
                      "newilb.json", ".");
    auto runs = [&](std::int64_t migration_cost) {
        Knobs k;
        k.migration_cost_ns = migration_cost;
        k.idle_retain_tick = false;  // every idle entry stops the tick: idle CPUs join nohz.idle_cpus_mask with blocked load
        RunOptions o;
        o.check_invariants = true;
        std::unique_ptr<Engine> e = buildEngine(s, k, s.cost, o);
        e->advance(1000000000);
        return e->metrics().newilb_runs;
    };
    const std::uint64_t on = runs(500000);
    EXPECT_GT(on, 5u) << "2 tasks running 50 us a millisecond: hardly a busy tick (to kick an ilb) between idle entries";
    // Blocked load is due at most once per LOAD_AVG_PERIOD (32 ms) and the kicks' own
    // stats updates reset that period: far fewer than once per idle entry.
    EXPECT_LT(on, 1000000000u / 32000000u + 1);
    EXPECT_EQ(runs(1000000000), 0u) << "avg_idle never reaches a 1 s migration cost";
}

TEST(BalanceEngine, UptimeIsAScenarioKeyWithARange) {
    const auto doc = [](const nlohmann::json& up) {
        return nlohmann::json{{"topology", "qemu-1s4c"},
                              {"uptime_s", up},
                              {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 1}, {"fds", 2}, {"loops", 10}}})}};
    };
    EXPECT_DOUBLE_EQ(parseScenario(doc(3600), "u.json", ".").uptime_s, 3600.0);
    EXPECT_DOUBLE_EQ(
        parseScenario(nlohmann::json{{"topology", "qemu-1s4c"}, {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 1}}})}},
                      "u.json", ".")
            .uptime_s,
        600.0);
    for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json("long"), nlohmann::json(1e9)}) {
        try {
            parseScenario(doc(bad), "u.json", ".");
            ADD_FAILURE() << "accepted uptime_s " << bad.dump();
        } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find("u.json: uptime_s"), std::string::npos) << e.what();
        }
    }
}

// --- CFS buddies --------------------------------------------------------------------------

// 6.1's check_preempt_wakeup() makes a wakee that preempts curr the next buddy (whatever
// NEXT_BUDDY says), and pick_next_entity() runs it before the leftmost task when that is
// not unfair (within wakeup_gran); the engine always picked the leftmost. Without wakeup
// preemption there is no buddy to pick.
TEST(BalanceEngine, AWakeeThatPreemptsIsPickedAsTheNextBuddy) {
    const Scenario s = parseScenario(
        nlohmann::json{{"topology", "i7-4790"},
                       {"workloads", nlohmann::json::array(
                                         {{{"type", "hackbench"}, {"groups", 2}, {"fds", 10}, {"threads", true}, {"pipe", true}, {"loops", 300}}})}},
        "buddy.json", ".");
    RunOptions o;
    o.check_invariants = true;
    Knobs k;
    const RunResult a = runScenario(s, Variant{"A", k}, s.cost, o);
    EXPECT_GT(a.engine->metrics().buddy_picks, 0u);
    EXPECT_GT(a.engine->metrics().wake_preempt, a.engine->metrics().buddy_picks);
    k.WAKEUP_PREEMPTION = false;
    const RunResult b = runScenario(s, Variant{"B", k}, s.cost, o);
    EXPECT_EQ(b.engine->metrics().buddy_picks, 0u);
}
