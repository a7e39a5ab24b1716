// SPDX-License-Identifier: GPL-2.0-or-later
// core_wakeup_oracles_test.cpp: every test oracle of the wakeup path, hand-traced through Linux 6.1,
// numbered as the test names number them (O01..), run through the state-file parser and the wakeup path.
#include "kernel/sched_balance.h"
#include "kernel/state_json.h"
#include "kernel/wakeup_path.h"

#include <gtest/gtest.h>

using namespace sched;
using nlohmann::json;

namespace {

struct Run {
    Decision d;
    ExplainInput in;
};

Run run(const std::string& text) {
    ExplainInput in = parseExplainState(json::parse(text), "oracle", "");
    Decision d = decide(*in.state, in.knobs, in.task, in.waker, in.wake_flags, /*trace=*/true);
    return Run{std::move(d), std::move(in)};
}

// select_task_rq only (no enqueue): for the claim oracles' race window.
int selectOnly(ExplainInput& in, Task& p, Waker& w, std::uint32_t wf, Decision& d) {
    WakeCtx c{*in.state, in.knobs, w, d, false};
    return select_task_rq(c, p, p.wake_cpu, wf | WF_TTWU);
}

std::string trace(const Decision& d) {
    std::string s;
    for (auto& st : d.steps) s += std::string(toString(st.fn)) + ": " + st.text + "\n";
    return s;
}

}  // namespace

TEST(WakeupOracle, O01_PinnedTaskTakesAffinityShortcut) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":3,"cpus_allowed":"3"}})");
    EXPECT_EQ(r.d.cpu, 3);
    EXPECT_EQ(r.d.stage0, Stage0::AFFINITY_SINGLE);
    EXPECT_EQ(r.d.stage1, Stage1::NONE);
    EXPECT_EQ(r.in.waker.current.wakee_flips, 0u) << "fair hook not called: no record_wakee";
}

TEST(WakeupOracle, O02_BusyWakerIdlePrevStaysOnPrev) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":2}})");
    EXPECT_EQ(r.d.cpu, 2) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_PREV_IDLE);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_TARGET_IDLE);
}

TEST(WakeupOracle, O03_SyncPullsToWakerThenScans) {
    auto r = run(R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":2},
                    "cpus":[{"cpu":2,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 1) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_SYNC);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_CPU);
}

TEST(WakeupOracle, O04_IrqOnIdleCpuPrevBusyTakesThis) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0,"context":"irq"},"task":{"prev_cpu":2},
                    "cpus":[{"cpu":2,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 0) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_IDLE_THIS);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_TARGET_IDLE);
    EXPECT_FALSE(r.d.wakelist) << "this CPU: direct enqueue";
}

TEST(WakeupOracle, O05_IrqOnIdleCpuPrevIdleTakesPrev) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0,"context":"irq"},"task":{"prev_cpu":2}})");
    EXPECT_EQ(r.d.cpu, 2);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_IDLE_PREV);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_TARGET_IDLE);
    EXPECT_TRUE(r.d.wakelist);
}

TEST(WakeupOracle, O06_NumaWeightKeepsPrevAndFallsBack) {
    auto r = run(R"({"topology":"qemu-2s4c-numa","waker":{"cpu":0,"context":"irq"},"task":{"prev_cpu":5,"load_avg":1024},
                    "cpus":[{"cpu":0,"load_avg":0},{"cpu":5,"curr":"normal","load_avg":1024},
                            {"cpu":4,"curr":"normal"},{"cpu":6,"curr":"normal"},{"cpu":7,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 5) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_WEIGHT_PREV);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_FALLBACK_TARGET);
    EXPECT_TRUE(r.d.wakelist);
    // The scan went 6, 7, 4, 5.
    std::vector<int> scanned;
    for (auto& e : r.d.examined)
        if (e.fn == Fn::select_idle_cpu) scanned.push_back(e.cpu);
    EXPECT_EQ(scanned, (std::vector<int>{6, 7, 4, 5}));
}

TEST(WakeupOracle, O07_WakeWideUsesIdleSmtSibling) {
    auto r = run(R"({"topology":"i7-4790","waker":{"cpu":0,"wakee_flips":100},"task":{"prev_cpu":3,"wakee_flips":10},
                    "default_cpu":{"curr":"normal"},"cpus":[{"cpu":7,"curr":"idle"}]})");
    EXPECT_EQ(r.d.cpu, 7) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::WAKE_WIDE);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_SMT);
    EXPECT_EQ(r.in.waker.current.wakee_flips, 101u);
}

TEST(WakeupOracle, O08_FewFlipsAffineWeightPrevThenSmt) {
    auto r = run(R"({"topology":"i7-4790","waker":{"cpu":0,"wakee_flips":20},"task":{"prev_cpu":3,"wakee_flips":10},
                    "default_cpu":{"curr":"normal"},"cpus":[{"cpu":7,"curr":"idle"}]})");
    EXPECT_EQ(r.d.cpu, 7) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_WEIGHT_PREV);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_SMT);
}

TEST(WakeupOracle, O09_SameCpuScanFindsSchedIdleCpu) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":0},
                    "cpus":[{"cpu":1,"curr":"normal"},{"cpu":2,"curr":"sched_idle"},{"cpu":3,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 2) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_SAME_CPU);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_CPU);
}

TEST(WakeupOracle, O10_SchedIdlePrevIsATarget) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":1,"load_avg":512},
                    "cpus":[{"cpu":0,"load_avg":1024},{"cpu":1,"curr":"sched_idle","load_avg":3}]})");
    EXPECT_EQ(r.d.cpu, 1) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_WEIGHT_PREV);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_TARGET_SCHED_IDLE);
}

TEST(WakeupOracle, O11_PerCpuKthreadStacksWakee) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":2,"per_cpu_kthread":true},"task":{"prev_cpu":2}})");
    EXPECT_EQ(r.d.cpu, 2) << trace(r.d);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_KTHREAD_STACK);
    EXPECT_FALSE(r.d.wakelist);
}

TEST(WakeupOracle, O12_RecentUsedCpuBeforeScan) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":1,"recent_used_cpu":3},
                    "cpus":[{"cpu":1,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 3) << trace(r.d);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_RECENT);
    EXPECT_EQ(r.in.task.recent_used_cpu, 1);
}

TEST(WakeupOracle, O13_RecentUsedCpuNotAllowed) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":1,"recent_used_cpu":3,"cpus_allowed":"0-2"},
                    "cpus":[{"cpu":1,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 2) << trace(r.d);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_CPU);
    EXPECT_EQ(r.in.task.recent_used_cpu, 1);
}

TEST(WakeupOracle, O14_IdleCoreScan) {
    auto r = run(R"({"topology":"i7-4790","waker":{"cpu":0},"task":{"prev_cpu":0},"llc":[{"cpu":0,"has_idle_cores":true}],
                    "cpus":[{"cpu":1,"curr":"normal"},{"cpu":5,"curr":"normal"},{"cpu":3,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 2) << trace(r.d);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_CORE);
}

TEST(WakeupOracle, O15_CoreScanRemembersSchedIdleCpuAndClearsHint) {
    auto r = run(R"({"topology":"i7-4790","waker":{"cpu":0},"task":{"prev_cpu":0},"llc":[{"cpu":0,"has_idle_cores":true}],
                    "default_cpu":{"curr":"normal"},"cpus":[{"cpu":6,"curr":"sched_idle"}]})");
    EXPECT_EQ(r.d.cpu, 6) << trace(r.d);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_CPU_FROM_CORESCAN);
    EXPECT_FALSE(r.in.state->llcShared(0)->has_idle_cores);
}

TEST(WakeupOracle, O16_SelectIdleSmtBeforeScan) {
    auto r = run(R"({"topology":"i7-4790","wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":3},
                    "default_cpu":{"curr":"normal"},"cpus":[{"cpu":1,"curr":"idle"},{"cpu":7,"curr":"idle"}]})");
    EXPECT_EQ(r.d.cpu, 7) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_SYNC);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_SMT);
}

TEST(WakeupOracle, O17_SyncToSiblingPrevIdle) {
    auto r = run(R"({"topology":"i7-4790","wake_flags":["SYNC"],"waker":{"cpu":1},"task":{"prev_cpu":5},
                    "default_cpu":{"curr":"normal"},"cpus":[{"cpu":5,"curr":"idle"}]})");
    EXPECT_EQ(r.d.cpu, 5) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_SYNC);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_PREV_IDLE);
}

TEST(WakeupOracle, O18_SisUtilAbortsWithZeroBudget) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":0},"llc":[{"cpu":0,"nr_idle_scan":0}]})");
    EXPECT_EQ(r.d.cpu, 0) << trace(r.d);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_UTIL_ABORT);
}

TEST(WakeupOracle, O19_SisUtilBudgetExhausted) {
    auto r = run(R"({"topology":"i7-4790","waker":{"cpu":0},"task":{"prev_cpu":0},"llc":[{"cpu":0,"nr_idle_scan":1}],
                    "cpus":[{"cpu":4,"curr":"normal"},{"cpu":1,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 0) << trace(r.d);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_SCAN_EXHAUSTED);
}

TEST(WakeupOracle, O20_UpdateIdleCpuScanHalfLoaded) { EXPECT_EQ(update_idle_cpu_scan(8, 4096, 117), 5); }
TEST(WakeupOracle, O21_UpdateIdleCpuScanOverloaded) { EXPECT_EQ(update_idle_cpu_scan(8, 7000, 117), 0); }

TEST(WakeupOracle, O22_DieBalanceDoesNotUpdateNrIdleScan) {
    MachineState st(std::make_shared<const Topology>(Topology::preset("qemu-2s2c2t")));
    Knobs k;
    const auto& doms = st.sd->domains(0);
    ASSERT_EQ(doms.back().name, "DIE");
    EXPECT_FALSE(balance_updates_nr_idle_scan(*st.sd, k, 0, doms.back(), IdleType::CPU_IDLE));
    EXPECT_TRUE(balance_updates_nr_idle_scan(*st.sd, k, 0, doms[1], IdleType::CPU_IDLE)) << "MC is the LLC level";
    EXPECT_FALSE(balance_updates_nr_idle_scan(*st.sd, k, 0, doms[1], IdleType::CPU_NEWLY_IDLE));
}

TEST(WakeupOracle, O23_ForkPicksIdleSingleCpuGroup) {
    auto r = run(R"({"topology":"qemu-1s4c","wake_flags":["FORK"],"waker":{"cpu":0},"task":{"prev_cpu":0},
                    "cpus":[{"cpu":0,"util_avg":1024,"runnable_avg":1024}]})");
    EXPECT_EQ(r.d.cpu, 1) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::SLOW_PATH_IDLEST);
    EXPECT_EQ(r.in.task.recent_used_cpu, 0);
}

TEST(WakeupOracle, O24_ForkAllFullyBusyLeastAvgLoad) {
    auto r = run(R"({"topology":"qemu-1s4c","wake_flags":["FORK"],"waker":{"cpu":0},"task":{"prev_cpu":0},
                    "default_cpu":{"curr":"normal","util_avg":1024,"runnable_avg":1024,"load_avg":1024},
                    "cpus":[{"cpu":2,"load_avg":300}]})");
    EXPECT_EQ(r.d.cpu, 2) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::SLOW_PATH_IDLEST);
}

TEST(WakeupOracle, O25_ForkImbalanceTooSmallStaysLocal) {
    auto r = run(R"({"topology":"qemu-1s4c","wake_flags":["FORK"],"waker":{"cpu":0},"task":{"prev_cpu":0},
                    "default_cpu":{"curr":"normal","util_avg":1024,"runnable_avg":1024,"load_avg":1024},
                    "cpus":[{"cpu":2,"load_avg":900}]})");
    EXPECT_EQ(r.d.cpu, 0) << trace(r.d);
    EXPECT_EQ(r.d.idlest, IdlestSub::IDLEST_STAY_LOCAL);
}

TEST(WakeupOracle, O26_ForkNumaIdleStampQuirk) {
    auto r = run(R"({"topology":"qemu-2s4c-numa","wake_flags":["FORK"],"waker":{"cpu":0},"task":{"prev_cpu":0}})");
    EXPECT_EQ(r.d.cpu, 1) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::SLOW_PATH_IDLEST);
}

TEST(WakeupOracle, O27_ExecMovesToMostRecentlyIdleRemoteCpu) {
    auto r = run(R"({"topology":"qemu-2s4c-numa","wake_flags":["EXEC"],"waker":{"cpu":0},
                    "task":{"prev_cpu":0,"util_avg":512},
                    "cpus":[{"cpu":0,"curr":"normal","nr_running":2,"util_avg":1024,"load_avg":2048},
                            {"cpu":1,"curr":"normal","nr_running":2,"util_avg":1024,"load_avg":2048},
                            {"cpu":2,"curr":"normal","nr_running":2,"util_avg":1024,"load_avg":2048},
                            {"cpu":3,"curr":"normal","nr_running":2,"util_avg":1024,"load_avg":2048},
                            {"cpu":4,"idle_stamp_ns":10},{"cpu":5,"idle_stamp_ns":40},
                            {"cpu":6,"idle_stamp_ns":30},{"cpu":7,"idle_stamp_ns":20}]})");
    EXPECT_EQ(r.d.cpu, 5) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::SLOW_PATH_IDLEST);
    EXPECT_TRUE(r.d.migrated);
}

TEST(WakeupOracle, O28_SameLlcIdleTargetUsesWakelist) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":2}})");
    EXPECT_EQ(r.d.cpu, 2);
    EXPECT_TRUE(r.d.wakelist);
    EXPECT_TRUE(r.in.state->rq[2].ttwu_pending);
    EXPECT_EQ(r.in.state->rq[2].nr_running, 0u) << "not enqueued until the IPI";
}

TEST(WakeupOracle, O29_SameLlcBusyTargetDirectActivation) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":2},"default_cpu":{"curr":"normal"}})");
    EXPECT_EQ(r.d.cpu, 2) << trace(r.d);
    EXPECT_FALSE(r.d.wakelist);
    EXPECT_EQ(r.in.state->rq[2].nr_running, 2u);
}

TEST(WakeupOracle, O30_OnCpuRemoteLlcWakelistWithoutSelection) {
    auto r = run(R"({"topology":"qemu-2s4c-numa","waker":{"cpu":0,"wakee_flips":3},"task":{"prev_cpu":5,"on_cpu":true},
                    "cpus":[{"cpu":5,"curr":"normal","nr_running":0}]})");
    EXPECT_EQ(r.d.cpu, 5);
    EXPECT_EQ(r.d.stage0, Stage0::TTWU_ONCPU_WAKELIST);
    EXPECT_TRUE(r.d.wakelist);
    EXPECT_EQ(r.in.waker.current.wakee_flips, 3u) << "no record_wakee";
}

TEST(WakeupOracle, O31_OnCpuSameLlcBusyWaitsThenSelects) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":2,"on_cpu":true},
                    "cpus":[{"cpu":2,"curr":"normal","nr_running":1},{"cpu":3,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 1) << trace(r.d);
    EXPECT_EQ(r.d.stage0, Stage0::NONE);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_CPU);
}

TEST(WakeupOracle, O32_TtwuRunnableUpdatesAvgIdle) {
    const char* s = R"({"topology":"qemu-1s4c","now_ns":10000000000,"waker":{"cpu":0},"task":{"prev_cpu":2,"on_rq":true},
                    "cpus":[{"cpu":2,"curr":"normal","idle_stamp_ns":9999600000,"avg_idle_ns":1000000,
                             "max_idle_balance_cost_ns":500000}]})";
    auto r = run(s);
    EXPECT_EQ(r.d.cpu, 2);
    EXPECT_EQ(r.d.stage0, Stage0::TTWU_RUNNABLE);
    EXPECT_EQ(r.in.state->rq[2].avg_idle, 925000);
    EXPECT_EQ(r.in.state->rq[2].wake_avg_idle, 462500);
    EXPECT_EQ(r.in.state->rq[2].idle_stamp, 0);
    // v6.5 (D2): a runnable wakeup no longer touches avg_idle.
    auto doc = json::parse(s);
    doc["knobs"] = {{"kernel", "6.5"}};
    ExplainInput in = parseExplainState(doc, "oracle", "");
    decide(*in.state, in.knobs, in.task, in.waker, in.wake_flags);
    EXPECT_EQ(in.state->rq[2].avg_idle, 1000000);
}

TEST(WakeupOracle, O33_AvgIdleCappedAtTwiceMaxIdleBalanceCost) {
    MachineState st(std::make_shared<const Topology>(Topology::preset("qemu-1s4c")));
    st.now_ns = 5000000000;
    st.rq[1].idle_stamp = st.now_ns - 3000000;
    st.rq[1].avg_idle = 1000000;
    st.rq[1].max_idle_balance_cost = 500000;
    ttwuIdleStampUpdate(st, 1);
    EXPECT_EQ(st.rq[1].avg_idle, 1000000);
    EXPECT_EQ(st.rq[1].wake_avg_idle, 500000);
    EXPECT_EQ(st.rq[1].idle_stamp, 0);
}

TEST(WakeupOracle, O34_NoDecayExactlyHzAgoGoesWide) {
    auto r = run(R"({"topology":"qemu-1s4c","jiffies":1000,"wake_flags":["SYNC"],
                    "waker":{"cpu":0,"wakee_flips":30,"wakee_flip_decay_ts":750},"task":{"prev_cpu":2,"wakee_flips":5},
                    "cpus":[{"cpu":2,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 3) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::WAKE_WIDE);
    EXPECT_EQ(r.in.waker.current.wakee_flips, 31u);
}

TEST(WakeupOracle, O35_DecayHzPlusOneAgoStaysAffine) {
    auto r = run(R"({"topology":"qemu-1s4c","jiffies":1000,"wake_flags":["SYNC"],
                    "waker":{"cpu":0,"wakee_flips":30,"wakee_flip_decay_ts":749},"task":{"prev_cpu":2,"wakee_flips":5},
                    "cpus":[{"cpu":2,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 1) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_SYNC);
    EXPECT_EQ(r.in.waker.current.wakee_flips, 16u);
    EXPECT_EQ(r.in.waker.current.wakee_flip_decay_ts, 1000);
}

TEST(WakeupOracle, O36_SyncWakerHeavierThanItsCpuLoad) {
    auto r = run(R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"waker":{"cpu":0,"task_h_load":800},"task":{"prev_cpu":2},
                    "cpus":[{"cpu":0,"curr":"normal","nr_running":2,"load_avg":500},{"cpu":2,"curr":"normal"},
                            {"cpu":3,"curr":"normal"}]})");
    EXPECT_EQ(r.d.cpu, 1) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_WEIGHT_SYNC_THIS);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_IDLE_CPU);
}

TEST(WakeupOracle, O37_CrossLlcWeightPullsToIdleWaker) {
    auto r = run(R"({"topology":"qemu-2s2c2t","waker":{"cpu":0,"context":"irq"},"task":{"prev_cpu":5,"load_avg":1024},
                    "default_cpu":{"curr":"normal"},"cpus":[{"cpu":0,"curr":"idle","load_avg":0},{"cpu":5,"load_avg":2048}]})");
    EXPECT_EQ(r.d.cpu, 0) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_WEIGHT_THIS);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_TARGET_IDLE);
}

TEST(WakeupOracle, O38_CrossLlcWeightKeepsPrevFallsBack) {
    auto r = run(R"({"topology":"qemu-2s2c2t","waker":{"cpu":0,"context":"irq"},"task":{"prev_cpu":5,"load_avg":1024},
                    "default_cpu":{"curr":"normal"},"cpus":[{"cpu":0,"curr":"idle","load_avg":0},{"cpu":5,"load_avg":1900}]})");
    EXPECT_EQ(r.d.cpu, 5) << trace(r.d);
    EXPECT_EQ(r.d.stage1, Stage1::AFFINE_WEIGHT_PREV);
    EXPECT_EQ(r.d.stage2, Stage2::SIS_FALLBACK_TARGET);
    EXPECT_TRUE(r.d.wakelist);
}

TEST(WakeupOracle, O39_UpdateIdleCoreSetsHintFromSiblings) {
    MachineState st(std::make_shared<const Topology>(Topology::preset("i7-4790")));
    Knobs k;
    for (auto& rq : st.rq) {
        rq.curr = CurrKind::Normal;
        rq.nr_running = 1;
    }
    st.rq[2].curr = CurrKind::Normal;  // still the old task: CPU 2 itself is not tested
    st.rq[6].curr = CurrKind::Idle;
    st.rq[6].nr_running = 0;
    set_next_task_idle(st, k, 2);
    EXPECT_TRUE(st.llcShared(2)->has_idle_cores);
    // With 6 busy the hint stays 0.
    MachineState st2(std::make_shared<const Topology>(Topology::preset("i7-4790")));
    for (auto& rq : st2.rq) {
        rq.curr = CurrKind::Normal;
        rq.nr_running = 1;
    }
    set_next_task_idle(st2, k, 2);
    EXPECT_FALSE(st2.llcShared(2)->has_idle_cores);
}

TEST(WakeupOracle, O40_ShouldWeBalanceFirstIdleOfCore) {
    MachineState st(std::make_shared<const Topology>(Topology::preset("i7-4790")));
    Knobs k;
    const SchedDomain& mc = st.sd->domains(4)[1];
    ASSERT_EQ(mc.name, "MC");
    EXPECT_FALSE(should_we_balance(st, k, 4, mc, IdleType::CPU_IDLE)) << "0 is the first idle CPU of {0,4}";
    st.rq[0].curr = CurrKind::Normal;
    st.rq[0].nr_running = 1;
    EXPECT_TRUE(should_we_balance(st, k, 4, mc, IdleType::CPU_IDLE));
}

TEST(WakeupOracle, O41_NewidleDice) {
    NewidleStats s;
    int weight = 0;
    EXPECT_FALSE(newidle_dice(s, 600, &weight));
    EXPECT_EQ(s.newidle_call, 513) << "a skipped visit counts as a call";
    EXPECT_TRUE(newidle_dice(s, 400, &weight));
    EXPECT_EQ(weight, 2);
    // v6.5 (D3) and NI_RANDOM off: no dice, every visit balances.
    Knobs v65;
    v65.kernel = KernelVersion::V6_5;
    NewidleStats s2;
    EXPECT_TRUE(newidle_dice(v65, s2, 600, &weight));
    EXPECT_EQ(s2.newidle_call, 512);
    EXPECT_FALSE(newidle_dice(Knobs{}, s2, 600, &weight));
}

TEST(WakeupOracle, O42_NewidleBailsWithoutOverloadAfterStamp) {
    MachineState st(std::make_shared<const Topology>(Topology::preset("qemu-1s4c")));
    st.now_ns = 7000000;
    EXPECT_FALSE(newidle_balance_begins(st, 1, /*rd_overload=*/false, 0));
    EXPECT_EQ(st.rq[1].idle_stamp, 7000000);
    st.rq[2].ttwu_pending = true;
    EXPECT_FALSE(newidle_balance_begins(st, 2, true, 0));
    EXPECT_EQ(st.rq[2].idle_stamp, 0) << "ttwu_pending bails before the stamp";
}

TEST(WakeupOracle, O43_LongSleeperPreempts) {
    const auto t = CfsTunables::forCpus(8);
    EXPECT_EQ(t.wakeup_granularity_ns, 4000000);
    Knobs k;
    const std::int64_t V = 100000000000;
    std::int64_t placed = placeEntityWakeup(t, k, V, V - 500000000, false);
    EXPECT_EQ(placed, V - 12000000);
    EXPECT_EQ(wakeup_preempt_entity(t, V + 5000000, placed), 1);
    // Through the wakeup path: the wakee lands on busy CPU 3 and preempts.
    auto r = run(R"({"topology":"i7-4790","waker":{"cpu":0},"task":{"prev_cpu":3,"vruntime_ns":-500000000},
                    "default_cpu":{"curr":"normal","min_vruntime_ns":0,"curr_vruntime_ns":5000000}})");
    EXPECT_EQ(r.d.cpu, 3);
    EXPECT_TRUE(r.d.preempted_curr) << trace(r.d);
}

TEST(WakeupOracle, O44_RecentSleeperDoesNotPreempt) {
    const auto t = CfsTunables::forCpus(8);
    Knobs k;
    const std::int64_t V = 100000000000;
    std::int64_t placed = placeEntityWakeup(t, k, V, V + 3000000, false);
    EXPECT_EQ(placed, V + 3000000);
    EXPECT_EQ(wakeup_preempt_entity(t, V + 5000000, placed), 0);
    auto r = run(R"({"topology":"i7-4790","waker":{"cpu":0},"task":{"prev_cpu":3,"vruntime_ns":3000000},
                    "default_cpu":{"curr":"normal","min_vruntime_ns":0,"curr_vruntime_ns":5000000}})");
    EXPECT_FALSE(r.d.preempted_curr) << trace(r.d);
}

TEST(WakeupOracle, O45_InactiveCpuFallsBack) {
    auto r = run(R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":2},"cpus":[{"cpu":2,"active":false}]})");
    EXPECT_EQ(r.d.stage0, Stage0::FALLBACK_RQ) << trace(r.d);
    EXPECT_EQ(r.d.cpu, 0);
    EXPECT_TRUE(r.in.state->rq[r.d.cpu].active);
}

namespace {
const char* kIdleDelayState = R"({"topology":"qemu-1s4c","now_ns":10000000000,"waker":{"cpu":0},"task":{"prev_cpu":2},
    "cpus":[{"cpu":2,"curr":"normal","nr_running":1,"idle_exit_ns":9999500000,"clock_idle_ns":9999500000}]})";
Run runWith(const char* state, const std::string& knobs, std::function<void(json&)> edit = {}) {
    auto doc = json::parse(state);
    doc["knobs"] = knobs;
    if (edit) edit(doc);
    return run(doc.dump());
}
}  // namespace

TEST(WakeupOracle, O46_IdleDelayV1StacksOnRecentlyIdlePrev) {
    auto base = runWith(kIdleDelayState, "baseline");
    EXPECT_EQ(base.d.cpu, 3) << trace(base.d);
    auto v1 = runWith(kIdleDelayState, "idle-delay-v1");
    EXPECT_EQ(v1.d.cpu, 2) << trace(v1.d);
    EXPECT_EQ(v1.d.stage1, Stage1::AFFINE_PREV_IDLE);
    EXPECT_EQ(v1.d.stage2, Stage2::SIS_TARGET_IDLE);
    EXPECT_TRUE(v1.d.idle_delay_hit);
    EXPECT_FALSE(base.d.idle_delay_hit);
}

TEST(WakeupOracle, O47_IdleDelayV2GateFails) {
    auto v2 = runWith(kIdleDelayState, "idle-delay-v2", [](json& d) {
        d["cpus"][0]["nr_running"] = 5;
        d["cpus"][0]["load_avg"] = 1024;  // the oracle keeps W2 -> prev
    });
    EXPECT_EQ(v2.d.cpu, 3) << trace(v2.d);
    auto v2ok = runWith(kIdleDelayState, "idle-delay-v2");
    EXPECT_EQ(v2ok.d.cpu, 2) << "nr_running 1 <= 4 passes the gate";
}

TEST(WakeupOracle, O48_IdleDelayV3StaleClockIdle) {
    auto v3 = runWith(kIdleDelayState, "idle-delay-v3", [](json& d) { d["cpus"][0]["clock_idle_ns"] = 9995000000LL; });
    EXPECT_EQ(v3.d.cpu, 3) << trace(v3.d);
    auto fresh = runWith(kIdleDelayState, "idle-delay-v3");
    EXPECT_EQ(fresh.d.cpu, 2) << "clock_idle 0.5 ms ago reads as idle";
}

TEST(WakeupOracle, O49_IdleDelayV1TickBalancesAsIdleButGroupCountsBusy) {
    ExplainInput in = parseExplainState(json::parse(kIdleDelayState), "oracle", "");
    in.knobs = Knobs::preset("idle-delay-v1");
    EXPECT_TRUE(tick_idle_balance(*in.state, in.knobs, 2));
    EXPECT_FALSE(sg_lb_counts_idle(*in.state, in.knobs, 2));
    EXPECT_FALSE(tick_idle_balance(*in.state, Knobs{}, 2));
}

namespace {
// Two wakers race on select_task_rq before either enqueues: A (sync, on CPU 0) and B (sync, on CPU 1),
// both waking tasks whose prev is idle CPU 2; CPU 3 idle.
std::pair<int, int> claimRace(const std::string& knobs, Decision& da) {
    ExplainInput in = parseExplainState(json::parse(R"({"topology":"qemu-1s4c","knobs":")" + knobs + R"(","wake_flags":["SYNC"],
        "waker":{"cpu":0},"task":{"prev_cpu":2},"cpus":[{"cpu":1,"curr":"normal"}]})"),
                                        "oracle", "");
    Task a = in.task;
    int cpuA = selectOnly(in, a, in.waker, WF_SYNC, da);
    Task b = in.task;
    b.pid = 2000;
    Waker wb;
    wb.cpu = 1;
    wb.current.setAffinity(in.topo->allCpus());
    Decision db;
    int cpuB = selectOnly(in, b, wb, WF_SYNC, db);
    return {cpuA, cpuB};
}
}  // namespace

TEST(WakeupOracle, O50_ClaimWakeupDoesNotClaimS2) {
    Decision da;
    auto [a, b] = claimRace("claim-wakeup", da);
    EXPECT_EQ(da.stage2, Stage2::SIS_PREV_IDLE);
    EXPECT_FALSE(da.claim_set);
    EXPECT_EQ(a, 2);
    EXPECT_EQ(b, 2) << "B may take it too";
}

TEST(WakeupOracle, O51_ClaimAtSelectHidesTheCpu) {
    Decision da;
    auto [a, b] = claimRace("claim-wakeup-str", da);
    EXPECT_EQ(a, 2);
    EXPECT_TRUE(da.claim_set);
    EXPECT_EQ(b, 3) << "B goes to the next idle CPU";
}

TEST(WakeupOracle, O52_ClaimedIdleCpuTicksAsBusy) {
    MachineState st(std::make_shared<const Topology>(Topology::preset("qemu-1s4c")));
    Knobs k = Knobs::preset("claim-wakeup");
    st.rq[1].claimed = true;
    EXPECT_FALSE(tick_idle_balance(st, k, 1));
    EXPECT_FALSE(sg_lb_counts_idle(st, k, 1));
    set_next_task_idle(st, k, 1);  // the claim ends when the CPU next goes idle
    EXPECT_TRUE(tick_idle_balance(st, k, 1));
}

TEST(WakeupOracle, O53_DebouncePlacedStaysOnBusyPrev) {
    const char* s = R"({"topology":"qemu-1s4c","jiffies":5000,"waker":{"cpu":0},"task":{"prev_cpu":2,"placed_jiffies":5000},
        "cpus":[{"cpu":2,"curr":"normal"}]})";
    auto deb = runWith(s, "sis-debounce");
    EXPECT_EQ(deb.d.cpu, 2) << trace(deb.d);
    EXPECT_EQ(deb.d.stage1, Stage1::DEBOUNCE_PLACED);
    auto base = runWith(s, "baseline");
    EXPECT_TRUE(base.d.cpu == 1 || base.d.cpu == 3) << trace(base.d);
}

TEST(WakeupOracle, O54_DebounceMakesPlacedTaskHot) {
    MachineState st(std::make_shared<const Topology>(Topology::preset("qemu-1s4c")));
    st.jiffies = 5000;
    Knobs k = Knobs::preset("sis-debounce");
    TaskHotInput in;
    in.exec_start = 0;
    in.src_clock_task = 10000000;  // cold by migration_cost
    in.wakee_placed = 5000;
    const int cache_nice_tries = st.sd->domains(0)[0].cache_nice_tries;
    bool hot = task_hot(st, k, in);
    EXPECT_TRUE(hot);
    EXPECT_FALSE(can_migrate_hot(hot, 0, cache_nice_tries));
    EXPECT_TRUE(can_migrate_hot(hot, cache_nice_tries + 1, cache_nice_tries));
    EXPECT_FALSE(task_hot(st, Knobs{}, in)) << "baseline: cold";
}

// --- The follow-up patches of the idle-extension thread (docs/patch-variants.md: Follow-ups).

TEST(WakeupOracle, O55_AlmostIdlePrevKeepsTheWakeeAndSkipsTheScan) {
    // B: prev 2 runs a task of load 3 beside the wakee's own blocked load (512): cpu_load_without = 3 <= 5.
    const char* s = R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":2,"load_avg":512},
        "cpus":[{"cpu":2,"curr":"normal","load_avg":515}]})";
    auto b = runWith(s, "almost-idle-prev");
    EXPECT_EQ(b.d.cpu, 2) << trace(b.d);
    EXPECT_EQ(b.d.stage1, Stage1::AFFINE_PREV_ALMOST_IDLE);
    EXPECT_EQ(b.d.stage2, Stage2::SIS_TARGET_IDLE_HINT);
    for (const auto& e : b.d.examined) EXPECT_NE(e.fn, Fn::select_idle_cpu) << "target_idle: no LLC scan";
    auto base = runWith(s, "baseline");
    EXPECT_EQ(base.d.cpu, 3) << trace(base.d);
    // At 6 (load 518) prev is not almost idle: the wakeup goes on as in 6.1.
    auto over = runWith(s, "almost-idle-prev", [](json& d) { d["cpus"][0]["load_avg"] = 518; });
    EXPECT_EQ(over.d.cpu, 3) << trace(over.d);
    EXPECT_EQ(over.d.stage1, Stage1::AFFINE_WEIGHT_PREV);
    // The threshold is a knob.
    auto knob = runWith(s, "almost-idle-prev", [](json& d) {
        d["cpus"][0]["load_avg"] = 518;
        d["knobs"] = json{{"preset", "almost-idle-prev"}, {"almost_idle_load", 6}};
    });
    EXPECT_EQ(knob.d.cpu, 2) << trace(knob.d);
}

TEST(WakeupOracle, O56_AlmostIdleLoadIsTheWholeLoadWhenPrevIsNotTheTasksCpu) {
    // cpu_load_without() discounts p only on task_cpu(p): a wakee with no contribution (a new
    // task's last_update_time 0) is measured against the whole load.
    const char* s = R"({"topology":"qemu-1s4c","waker":{"cpu":0},"task":{"prev_cpu":2,"load_avg":512,"last_update_time":0},
        "cpus":[{"cpu":2,"curr":"normal","load_avg":515}]})";
    auto b = runWith(s, "almost-idle-prev");
    EXPECT_NE(b.d.stage1, Stage1::AFFINE_PREV_ALMOST_IDLE) << trace(b.d);
    EXPECT_EQ(b.d.cpu, 3);
}

TEST(WakeupOracle, O57_WakelistAcrossL2OnlyWithTheL2Patch) {
    // C on the i7-4790: the L2 is per core (CPU 0 with 4). Busy CPU 1 shares the LLC with waker 0.
    const char* s = R"({"topology":"i7-4790","default_cpu":{"curr":"normal"},"waker":{"cpu":0},"task":{"prev_cpu":1}})";
    auto c = runWith(s, "ttwu-queue-l2c");
    EXPECT_EQ(c.d.cpu, 1) << trace(c.d);
    EXPECT_TRUE(c.d.wakelist);
    EXPECT_TRUE(c.d.wakelist_cross_l2);
    EXPECT_TRUE(c.in.state->rq[1].ttwu_pending);
    auto base = runWith(s, "baseline");
    EXPECT_FALSE(base.d.wakelist) << "6.1: same LLC, busy target: direct activation";
    // The SMT sibling shares the L2: direct, as in 6.1.
    auto sib = runWith(s, "ttwu-queue-l2c", [](json& d) { d["task"]["prev_cpu"] = 4; });
    EXPECT_EQ(sib.d.cpu, 4) << trace(sib.d);
    EXPECT_FALSE(sib.d.wakelist);
    // Another LLC: the wakelist either way, and not because of the L2.
    auto far = runWith(R"({"topology":"qemu-2s2c2t","default_cpu":{"curr":"normal"},"waker":{"cpu":0},"task":{"prev_cpu":5}})", "ttwu-queue-l2c");
    ASSERT_FALSE(far.in.state->sd->cpus_share_cache(0, far.d.cpu)) << trace(far.d);
    EXPECT_TRUE(far.d.wakelist) << trace(far.d);
    EXPECT_FALSE(far.d.wakelist_cross_l2);
}

TEST(WakeupOracle, O58_ClusterSharesTheL2) {
    // A cluster of two cores (an L2 shared by CPUs 0-1 and 2-3): within it the wakeup is direct.
    const char* s = R"({"topology":{"cores_per_llc":4,"cores_per_cluster":2,"numbering":"adjacent"},"default_cpu":{"curr":"normal"},
        "waker":{"cpu":0},"task":{"prev_cpu":1}})";
    auto in = runWith(s, "ttwu-queue-l2c");
    EXPECT_TRUE(in.in.state->sd->cpus_share_l2c(0, 1));
    EXPECT_FALSE(in.in.state->sd->cpus_share_l2c(0, 2));
    EXPECT_EQ(in.d.cpu, 1) << trace(in.d);
    EXPECT_FALSE(in.d.wakelist);
    auto other = runWith(s, "ttwu-queue-l2c", [](json& d) { d["task"]["prev_cpu"] = 3; });
    EXPECT_EQ(other.d.cpu, 3) << trace(other.d);
    EXPECT_TRUE(other.d.wakelist_cross_l2);
}

TEST(WakeupOracle, O59_MigrationRatelimitKeepsPrevInsideTheWindow) {
    // D 1/2: next_migration_time 1.5 ms ahead: an affine wakeup returns prev without wake_affine().
    const char* s = R"({"topology":"qemu-1s4c","now_ns":10000000000,"waker":{"cpu":0},"task":{"prev_cpu":2,"next_migration_time_ns":10001500000},
        "cpus":[{"cpu":2,"curr":"normal"}]})";
    auto d = runWith(s, "migrate-ratelimit");
    EXPECT_EQ(d.d.cpu, 2) << trace(d.d);
    EXPECT_EQ(d.d.stage1, Stage1::MIGRATION_RATELIMIT);
    EXPECT_EQ(d.d.stage2, Stage2::NONE);
    // At the window's end (now == next_migration_time) 1/2 lets it migrate ("now < next" fails).
    auto end = runWith(s, "migrate-ratelimit", [](json& j) { j["task"]["next_migration_time_ns"] = 10000000000LL; });
    EXPECT_NE(end.d.stage1, Stage1::MIGRATION_RATELIMIT) << trace(end.d);
    EXPECT_EQ(end.d.cpu, 3);
    // A wide wakeup (want_affine 0) is not limited.
    auto wide = runWith(s, "migrate-ratelimit", [](json& j) {
        j["waker"]["wakee_flips"] = 100;
        j["task"]["wakee_flips"] = 10;
    });
    EXPECT_EQ(wide.d.stage1, Stage1::WAKE_WIDE) << trace(wide.d);
}

TEST(WakeupOracle, O60_AdaptiveRatelimitSpendsItsQuota) {
    // D 2/2: inside the window the task may migrate while nr < quota; at the window's end (2/2
    // tests "now > next") it must wait one more ns.
    const char* s = R"({"topology":"qemu-1s4c","now_ns":10000000000,"waker":{"cpu":0},
        "task":{"prev_cpu":2,"next_migration_time_ns":10001500000,"nr_migrations_per_window":3,"quota_migrations_per_window":4},
        "cpus":[{"cpu":2,"curr":"normal"}]})";
    auto under = runWith(s, "migrate-ratelimit-adaptive");
    EXPECT_EQ(under.d.cpu, 3) << trace(under.d);
    auto spent = runWith(s, "migrate-ratelimit-adaptive", [](json& j) { j["task"]["nr_migrations_per_window"] = 4; });
    EXPECT_EQ(spent.d.stage1, Stage1::MIGRATION_RATELIMIT) << trace(spent.d);
    auto edge = runWith(s, "migrate-ratelimit-adaptive", [](json& j) {
        j["task"]["nr_migrations_per_window"] = 4;
        j["task"]["next_migration_time_ns"] = 10000000000LL;
    });
    EXPECT_EQ(edge.d.stage1, Stage1::MIGRATION_RATELIMIT) << "2/2: now > next_migration_time, strictly";
    // The bookkeeping (migrate_task_ratelimit_fair()): a spent quota halves at the next window,
    // an unspent one grows by one, up to 10.
    Knobs k = Knobs::preset("migrate-ratelimit-adaptive");
    Task p;
    p.quota_migrations_per_window = 4;
    p.nr_migrations_per_window = 4;
    p.next_migration_time = 1000;
    migrate_task_ratelimit(k, p, 500);  // inside the window
    EXPECT_EQ(p.nr_migrations_per_window, 5);
    migrate_task_ratelimit(k, p, 1000);  // a new window: 5 >= 4 -> quota 2
    EXPECT_EQ(p.quota_migrations_per_window, 2);
    EXPECT_EQ(p.nr_migrations_per_window, 1);
    EXPECT_EQ(p.next_migration_time, 1000 + 2000000);
    migrate_task_ratelimit(k, p, 5000000);  // 1 < 2 -> quota 3
    EXPECT_EQ(p.quota_migrations_per_window, 3);
    p.quota_migrations_per_window = 10;
    migrate_task_ratelimit(k, p, 9000000);
    EXPECT_EQ(p.quota_migrations_per_window, 10) << "SCHED_MIGRATION_QUOTA caps it";
    Knobs one = Knobs::preset("migrate-ratelimit");
    migrate_task_ratelimit(one, p, 20000000);
    EXPECT_EQ(p.next_migration_time, 22000000) << "1/2: now + 2 ms at every migration";
}

TEST(WakeupOracle, O61_UtilFitsCapacityAcceptsBusyCpusWithRoom) {
    // G 1/2: target 0 (util_est 100) + task 100: 200 * 1280 < 1024 * 1024.
    const char* s = R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":2,"util_avg":100,"util_est":100},
        "cpus":[{"cpu":0,"util_avg":100,"util_est":100},{"cpu":2,"curr":"normal","util_avg":900,"util_est":900}]})";
    auto g = runWith(s, "util-fits-capacity");
    EXPECT_EQ(g.d.cpu, 0) << trace(g.d);
    EXPECT_EQ(g.d.stage2, Stage2::SIS_TARGET_FITS);
    // 20 % margin: 720 + 100 = 820 > 819.2 does not fit; 719 + 100 = 819 does.
    auto full = runWith(s, "util-fits-capacity", [](json& j) { j["cpus"][0]["util_est"] = 720; });
    EXPECT_NE(full.d.stage2, Stage2::SIS_TARGET_FITS) << trace(full.d);
    auto room = runWith(s, "util-fits-capacity", [](json& j) { j["cpus"][0]["util_est"] = 719; });
    EXPECT_EQ(room.d.stage2, Stage2::SIS_TARGET_FITS) << trace(room.d);
    // It needs UTIL_EST (sched_util_fits_capacity_active()).
    auto noest = runWith(s, "util-fits-capacity", [](json& j) { j["knobs"] = json{{"preset", "util-fits-capacity"}, {"UTIL_EST", 0}}; });
    EXPECT_NE(noest.d.stage2, Stage2::SIS_TARGET_FITS) << trace(noest.d);
    auto base = runWith(s, "baseline");
    EXPECT_EQ(base.d.stage2, Stage2::SIS_IDLE_CPU);
}

TEST(WakeupOracle, O62_UtilFitsCapacityPrevAndRecent) {
    const char* s = R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"waker":{"cpu":0},
        "task":{"prev_cpu":2,"recent_used_cpu":3,"util_avg":100,"util_est":100},
        "cpus":[{"cpu":0,"util_avg":900,"util_est":900},{"cpu":2,"curr":"normal","util_avg":100,"util_est":100},
                {"cpu":3,"curr":"normal","util_avg":100,"util_est":100}]})";
    auto prev = runWith(s, "util-fits-capacity");
    EXPECT_EQ(prev.d.cpu, 2) << trace(prev.d);
    EXPECT_EQ(prev.d.stage2, Stage2::SIS_PREV_FITS);
    auto recent = runWith(s, "util-fits-capacity", [](json& j) { j["cpus"][1]["util_est"] = 900; });
    EXPECT_EQ(recent.d.cpu, 3) << trace(recent.d);
    EXPECT_EQ(recent.d.stage2, Stage2::SIS_RECENT_FITS);
    EXPECT_EQ(recent.in.task.recent_used_cpu, 2) << "recent_used_cpu := prev, as in 6.1";
}

TEST(WakeupOracle, O63_SelectBiasPrevTestsPrevFirstAndFallsBackToIt) {
    // G 2/2: target 0 idle (an interrupt on idle CPU 0 whose LLC holds prev) and prev 2 idle:
    // 6.1 takes... prev via wake_affine_idle A, and SELECT_BIAS_PREV takes prev before target.
    const char* both = R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":2}})";
    auto g = runWith(both, "select-bias-prev");
    EXPECT_EQ(g.d.cpu, 2) << trace(g.d);
    EXPECT_EQ(g.d.stage2, Stage2::SIS_BIAS_PREV_IDLE);
    ASSERT_FALSE(g.d.examined.empty());
    EXPECT_EQ(g.d.examined.back().cpu, 2) << "prev is the first CPU select_idle_sibling() looks at";
    // Nothing idle: prev instead of target.
    auto all = runWith(R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"default_cpu":{"curr":"normal"},"waker":{"cpu":0},"task":{"prev_cpu":2}})",
                       "select-bias-prev");
    EXPECT_EQ(all.d.cpu, 2) << trace(all.d);
    EXPECT_EQ(all.d.stage2, Stage2::SIS_BIAS_PREV_FALLBACK);
    auto base = runWith(R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"default_cpu":{"curr":"normal"},"waker":{"cpu":0},"task":{"prev_cpu":2}})",
                        "baseline");
    EXPECT_EQ(base.d.cpu, 0);
    // Alone, SELECT_BIAS_PREV does not take a busy prev with room (that needs UTIL_FITS_CAPACITY).
    const char* fit = R"({"topology":"qemu-1s4c","wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":2,"util_avg":100,"util_est":100},
        "cpus":[{"cpu":0,"util_avg":900,"util_est":900},{"cpu":2,"curr":"normal","util_avg":100,"util_est":100}]})";
    auto alone = runWith(fit, "select-bias-prev");
    EXPECT_NE(alone.d.cpu, 2) << trace(alone.d);
    auto bothKnobs = runWith(fit, "util-fits-bias-prev");
    EXPECT_EQ(bothKnobs.d.cpu, 2) << trace(bothKnobs.d);
    EXPECT_EQ(bothKnobs.d.stage2, Stage2::SIS_BIAS_PREV_FITS);
}

TEST(WakeupOracle, O64_SelectBiasPrevNeedsACacheAffinePrev) {
    // prev on the other LLC: neither the first test nor the fallback applies.
    const char* s = R"({"topology":"qemu-2s2c2t","wake_flags":["SYNC"],"default_cpu":{"curr":"normal"},"waker":{"cpu":0},"task":{"prev_cpu":5}})";
    auto g = runWith(s, "select-bias-prev");
    ASSERT_FALSE(g.in.state->sd->cpus_share_cache(0, 5));
    EXPECT_NE(g.d.stage2, Stage2::SIS_BIAS_PREV_FALLBACK) << trace(g.d);
    EXPECT_NE(g.d.stage2, Stage2::SIS_BIAS_PREV_IDLE);
}

TEST(WakeupOracle, O65_SisCurrentPairStaysOnTheWakingCpu) {
    // H: both short (dur_avg < 500 us), no flips, each the other's last_wakee.
    const char* s = R"({"topology":"qemu-1s4c","waker":{"cpu":0,"pid":1,"last_wakee":"task","dur_avg_ns":20000},
        "task":{"prev_cpu":2,"last_wakee":"waker","dur_avg_ns":30000},"cpus":[{"cpu":2,"curr":"normal"}]})";
    auto h = runWith(s, "sis-current");
    EXPECT_EQ(h.d.cpu, 0) << trace(h.d);
    EXPECT_EQ(h.d.stage1, Stage1::AFFINE_WAKE_ON_CURRENT);
    EXPECT_EQ(h.d.stage2, Stage2::SIS_CURRENT);
    auto base = runWith(s, "baseline");
    EXPECT_EQ(base.d.cpu, 3) << trace(base.d);
    // Each condition of wake_on_current() alone defeats it.
    const std::vector<std::function<void(json&)>> breaks = {
        [](json& j) { j["task"]["dur_avg_ns"] = 500000; },  // not short: >= sysctl_sched_migration_cost
        [](json& j) { j["waker"]["dur_avg_ns"] = 0; },      // never slept: dur_avg 0
        [](json& j) { j["task"]["last_wakee"] = 7; },       // the wakee last woke someone else
        [](json& j) { j["task"]["wakee_flips"] = 1; },      // flips
        [](json& j) {
            j["cpus"][0]["nr_running"] = 2;
            j["cpus"][0]["cpu"] = 0;
        },  // this_cpu has another task
    };
    for (std::size_t i = 0; i < breaks.size(); ++i) {
        auto r = runWith(s, "sis-current", breaks[i]);
        EXPECT_NE(r.d.stage2, Stage2::SIS_CURRENT) << "condition " << i << "\n" << trace(r.d);
        EXPECT_NE(r.d.stage1, Stage1::AFFINE_WAKE_ON_CURRENT) << "condition " << i;
    }
}

TEST(WakeupOracle, O66_DurAvgIsAnEwmaOfTheRunsBetweenSleeps) {
    // H 1/2: dur_avg_update() at each sleeping dequeue: update_avg(&dur_avg, sum_exec - prev_sleep_sum_runtime).
    Task p;
    dur_avg_update(p, 80000);
    EXPECT_EQ(p.dur_avg, 10000);
    EXPECT_EQ(p.prev_sleep_sum_runtime, 80000);
    dur_avg_update(p, 160000);  // another 80 us run: 10000 + (80000 - 10000) / 8
    EXPECT_EQ(p.dur_avg, 18750);
}

TEST(WakeupOracle, O67_SisCachePassesOverCacheHotIdleCpus) {
    // F: CPUs 1 and 3 idle; CPU 1 is cache-hot for 0.2 ms more. SIS_UTIL's depth 5 gives nr_hot 2.
    const char* s = R"({"topology":"qemu-1s4c","now_ns":10000000000,"wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":2},
        "cpus":[{"cpu":1,"cache_hot_timeout_ns":10000200000},{"cpu":2,"curr":"normal"}]})";
    auto f = runWith(s, "sis-cache");
    EXPECT_EQ(f.d.cpu, 3) << trace(f.d);
    EXPECT_EQ(f.d.stage2, Stage2::SIS_IDLE_CPU);
    bool markedHot = false;
    for (const auto& e : f.d.examined) markedHot |= e.cpu == 1 && e.seen == Seen::CacheHot;
    EXPECT_TRUE(markedHot) << "CPU 1 is recorded as passed over";
    auto base = runWith(s, "baseline");
    EXPECT_EQ(base.d.cpu, 1) << trace(base.d);
    // Its reservation over (now == cache_hot_timeout), CPU 1 is cold again.
    auto over = runWith(s, "sis-cache", [](json& j) { j["cpus"][0]["cache_hot_timeout_ns"] = 10000000000LL; });
    EXPECT_EQ(over.d.cpu, 1) << trace(over.d);
    // Both idle CPUs hot: the first hot one.
    auto both = runWith(s, "sis-cache", [](json& j) { j["cpus"].push_back(json{{"cpu", 3}, {"cache_hot_timeout_ns", 10000300000LL}}); });
    EXPECT_EQ(both.d.cpu, 1) << trace(both.d);
    EXPECT_EQ(both.d.stage2, Stage2::SIS_CACHE_HOT_FALLBACK);
    // Without SIS_UTIL there is no depth, nr_hot stays 0 and nothing is passed over.
    auto noutil = runWith(s, "sis-cache", [](json& j) { j["knobs"] = json{{"preset", "sis-cache"}, {"SIS_UTIL", 0}}; });
    EXPECT_EQ(noutil.d.cpu, 1) << trace(noutil.d);
}

TEST(WakeupOracle, O68_SisCacheHotLimitIsHalfTheScanDepth) {
    // nr_idle_scan 2: nr 3, nr_hot 1. CPU 1 hot is passed over; CPU 2, hot too, is the second
    // idle CPU found and is taken (--nr_hot < 0: no more hot checks).
    const char* s = R"({"topology":{"cores_per_llc":8},"now_ns":10000000000,"wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":5},
        "default_cpu":{"curr":"normal"},"llc":[{"cpu":0,"nr_idle_scan":2}],
        "cpus":[{"cpu":1,"curr":"idle","cache_hot_timeout_ns":10000200000},{"cpu":2,"curr":"idle","cache_hot_timeout_ns":10000200000}]})";
    auto f = runWith(s, "sis-cache");
    EXPECT_EQ(f.d.cpu, 2) << trace(f.d);
    EXPECT_EQ(f.d.stage2, Stage2::SIS_IDLE_CPU);
}

TEST(WakeupOracle, O69_SisCacheSkipsACacheHotIdleCore) {
    // i7-4790 with idle cores {1,5} and {2,6} (has_idle_cores): core 1's CPU 1 is cache-hot, so the core
    // scan goes on to core 2.
    const char* s = R"({"topology":"i7-4790","now_ns":10000000000,"wake_flags":["SYNC"],"waker":{"cpu":0},"task":{"prev_cpu":3},
        "default_cpu":{"curr":"normal"},"llc":[{"cpu":0,"has_idle_cores":true}],
        "cpus":[{"cpu":1,"curr":"idle","cache_hot_timeout_ns":10000200000},{"cpu":5,"curr":"idle"},{"cpu":2,"curr":"idle"},{"cpu":6,"curr":"idle"}]})";
    auto f = runWith(s, "sis-cache");
    EXPECT_EQ(f.d.cpu, 2) << trace(f.d);
    EXPECT_EQ(f.d.stage2, Stage2::SIS_IDLE_CORE);
    auto base = runWith(s, "baseline");
    EXPECT_EQ(base.d.cpu, 1) << trace(base.d);
}

TEST(WakeupOracle, O70_SisCacheBookkeeping) {
    // enqueue_task_fair(): a sleep under sysctl_sched_migration_cost enters avg_hot_dur; a longer one halves it.
    Knobs k = Knobs::preset("sis-cache");
    Task p;
    Rq rq;
    sis_cache_dequeue(k, p, rq, true, 1000000);
    EXPECT_EQ(p.last_dequeue_time, 1000000);
    EXPECT_EQ(rq.cache_hot_timeout, 0) << "avg_hot_dur 0: nothing reserved";
    sis_cache_wakeup(k, p, 1080000);  // slept 80 us
    EXPECT_EQ(p.avg_hot_dur, 10000);
    sis_cache_dequeue(k, p, rq, true, 2000000);  // the rq is left empty: reserved for 10 us
    EXPECT_EQ(rq.cache_hot_timeout, 2010000);
    sis_cache_wakeup(k, p, 2000000 + 600000);  // slept 0.6 ms >= 0.5 ms: halved
    EXPECT_EQ(p.avg_hot_dur, 5000);
    rq.nr_running = 1;
    sis_cache_dequeue(k, p, rq, true, 3000000);
    EXPECT_EQ(rq.cache_hot_timeout, 2010000) << "a CPU with other tasks is not reserved";
    sis_cache_dequeue(k, p, rq, false, 4000000);
    EXPECT_EQ(p.last_dequeue_time, 0) << "a migration's dequeue is no sleep";
    sis_cache_wakeup(k, p, 5000000);
    EXPECT_EQ(p.avg_hot_dur, 5000) << "no sleep measured";
    rq.nr_running = 0;
    rq.cache_hot_timeout = 9000000;
    sis_cache_dequeue(k, p, rq, true, 6000000);
    EXPECT_EQ(rq.cache_hot_timeout, 9000000) << "max(): a reservation is never shortened";
    Rq off;
    sis_cache_dequeue(Knobs{}, p, off, true, 7000000);
    EXPECT_EQ(off.cache_hot_timeout, 0) << "SIS_CACHE off: no reservation (the stamps are kept)";
    EXPECT_EQ(p.last_dequeue_time, 7000000);
}
