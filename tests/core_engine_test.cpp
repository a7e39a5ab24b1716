// SPDX-License-Identifier: GPL-2.0-or-later
// core_engine_test.cpp: the simulation engine, PELT, the cost model, workloads,
// scenarios and reports: determinism, invariants over every workload x three
// topologies x every knob preset, conservation, bad input.
#include "sim/cost_model.h"
#include "sim/engine.h"
#include "kernel/pelt.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "test_scenarios.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <variant>

#include <fmt/format.h>

using namespace sched;
using nlohmann::json;

namespace {

RunResult run(const Scenario& s, const Knobs& k = Knobs{}, std::uint64_t seed = 1, bool check = false) {
    RunOptions o;
    o.seed = seed;
    o.check_invariants = check;
    return runScenario(s, Variant{k.presetName, k}, s.cost, o);
}

}  // namespace

// --- PELT -------------------------------------------------------------------

TEST(Pelt, DecayHalvesEvery32Periods) {
    EXPECT_EQ(decay_load(1024, 0), 1023u);  // y^0 * 2^32 - 1 rounding, as the kernel's table
    EXPECT_NEAR(double(decay_load(1 << 20, 32)), double(1 << 19), 2.0);
    EXPECT_NEAR(double(decay_load(1 << 20, 64)), double(1 << 18), 2.0);
    EXPECT_EQ(decay_load(12345, 32 * 63 + 1), 0u);
}

TEST(Pelt, AlwaysRunningConvergesToFullUtil) {
    SchedAvg a;
    for (std::uint64_t t = 1000000; t <= 1000000000; t += 1000000) pelt_update(t, a, 1024, 1, 1);
    EXPECT_GE(a.util_avg, 1000u);
    EXPECT_LE(a.util_avg, 1024u);
    EXPECT_GE(a.load_avg, 1000u);
    // Then sleeping for 32 ms halves it (within a period of rounding).
    const auto before = a.util_avg;
    pelt_update(1000000000 + 32 * 1024 * 1024, a, 0, 0, 0);
    EXPECT_NEAR(double(a.util_avg), double(before) / 2, double(before) * 0.05);
    // A blocked entity keeps its weight: its load decays like util, it does not drop to 0
    // (__update_load_avg_blocked_se(): ___update_load_avg(&se->avg, se_weight(se))).
    EXPECT_NEAR(double(a.load_avg), double(a.util_avg), 8.0);
    EXPECT_GT(a.load_avg, 400u);
}

TEST(Pelt, CfsRqLoadIsTheQueuedWeight) {
    SchedAvg a;
    for (std::uint64_t t = 1000000; t <= 1000000000; t += 1000000) pelt_update_cfs(t, a, 2048, 2, 1);
    EXPECT_NEAR(double(a.load_avg), 2048.0, 60.0);  // two nice-0 tasks queued all the time
    EXPECT_NEAR(double(a.runnable_avg), 2048.0, 60.0);
}

// --- Cost model ---------------------------------------------------------------

TEST(CostModel, MachineDefaultsAndOverrides) {
    auto epyc = CostModel::forTopology(Topology::preset("epyc-9654-2s"));
    auto spr = CostModel::forTopology(Topology::preset("spr-2s"));
    EXPECT_EQ(epyc.machine.rfind("amd-zen", 0), 0u) << epyc.machine;
    EXPECT_EQ(epyc.refill_cross_llc_line, 90);
    EXPECT_EQ(spr.refill_cross_llc_line, 60);
    EXPECT_EQ(spr.cstates.back().exit_ns, 190000);
    epyc.set("ctx_switch_thread=1500");
    EXPECT_EQ(epyc.ctx_switch_thread, 1500);
    epyc.set("scale.cache_refill=0.5");
    EXPECT_EQ(epyc.c(CostTerm::cache_refill, 1000), 500);
    epyc.set("off=smt,ipi");
    EXPECT_EQ(epyc.c(CostTerm::ipi, 1500), 0);
    EXPECT_EQ(epyc.s(CostTerm::smt), 0.0);
    auto diff = epyc.diffFrom(CostModel::forTopology(Topology::preset("epyc-9654-2s")));
    EXPECT_EQ(diff.size(), 4u);
    EXPECT_THROW(epyc.set("nonsense=1"), CostError);
    EXPECT_THROW(epyc.set("scale.nonsense=1"), CostError);
    EXPECT_THROW(epyc.set("ctx_switch_thread=-3"), CostError);
    EXPECT_THROW(epyc.set("ctx_switch_thread"), CostError);
    EXPECT_THROW(epyc.set("off=bogus"), CostError);
}

// --- tg->load_avg (docs/workloads.md: Cost-model figures and their sources: Aaron Lu's profile) ---

namespace {
RunResult runWithCost(const Scenario& s, const CostModel& cm) {
    RunOptions o;
    o.seed = 1;
    return runScenario(s, s.variants.front(), cm, o);
}
}  // namespace

// update_cfs_group() reads tg->load_avg (calc_group_shares()) on every enqueue and dequeue of
// a task of the group and at every tick; update_tg_load_avg() writes it. Every access pays
// the line's cost: with no contention term, exactly tg_update_base each.
TEST(TgLoadAvg, EveryEnqueueDequeueAndTickReadsTheLineAndEveryAccessIsCharged) {
    const Scenario s = scenario(hb("qemu-2s2c2t", 2, 4, 1000));
    CostModel cm = s.cost;
    cm.tg_update_base = 1000;
    cm.tg_update_per_cpu = 0;
    RunResult r = runWithCost(s, cm);
    const Metrics& m = r.engine->metrics();
    ASSERT_GT(m.ttwu_count, 1000u);
    // Each wakeup that is not ttwu_runnable() enqueues the task, each sleep dequeued it first.
    EXPECT_GT(m.tg_reads, 2 * (m.ttwu_count - m.stage0[std::size_t(Stage0::TTWU_RUNNABLE)]) - 64);
    EXPECT_GT(m.tg_updates, 0u);
    EXPECT_EQ(m.cost_tg, std::int64_t(1000 * (m.tg_reads + m.tg_updates)));
}

// update_load_avg(UPDATE_TG | DO_ATTACH): attaching a migrated (or new) task's load updates
// tg->load_avg on the destination at once, whether or not the cfs_rq decayed in this PELT
// period; the source's removed load updates it at the source's next update. So there are
// at least as many updates as migrations.
TEST(TgLoadAvg, AMigrationUpdatesItWhereTheTaskIsAttached) {
    const Scenario s = scenario(hb("qemu-2s2c2t", 4, 10, 300));
    RunResult r = runWithCost(s, s.cost);
    const Metrics& m = r.engine->metrics();
    ASSERT_GT(m.migrationsTotal(), 500u);
    EXPECT_GE(m.tg_updates, m.migrationsTotal());
}

// 6.1 moves a task's load between cfs_rqs as "sched/fair: Combine detach into dequeue when
// migrating task" (v6.1) left it: a queued task that balancing moves (TASK_ON_RQ_MIGRATING)
// is detached from its source by its dequeue (update_load_avg(UPDATE_TG | DO_DETACH): its
// load leaves at once and tg->load_avg is updated there), a woken one is only added to its
// old cfs_rq's removed load (remove_entity_load_avg()); either way migrate_task_rq_fair()
// leaves it unattached (last_update_time 0) and the new cfs_rq attaches it at the enqueue.
TEST(TgLoadAvg, BalancingDetachesAtTheDequeueAndTheEnqueueAttaches) {
    const Scenario s = scenario(hb("qemu-2s2c2t", 4, 10, 300));
    RunOptions o;
    o.seed = 1;
    o.check_invariants = true;
    auto e = buildEngine(s, s.variants.front().knobs, s.cost, o);
    Engine* eng = e.get();
    int balanced = 0, woken = 0;
    eng->migration_sink = [&](std::int64_t, int pid, int from, int, MigrationCause cause) {
        const SimTask& p = eng->task(pid - 1000);
        EXPECT_EQ(p.t.avg.last_update_time, 0u) << "migrated task attached before its enqueue";
        if (cause == MigrationCause::wakeup) {
            EXPECT_GE(eng->removedLoad(from), std::int64_t(p.t.avg.load_avg));
            ++woken;
        } else if (cause != MigrationCause::fork) {
            EXPECT_EQ(eng->removedLoad(from), 0) << "a balanced task's load left through removed_load";
            ++balanced;
        }
    };
    eng->run();
    ASSERT_TRUE(eng->done());
    EXPECT_GT(balanced, 20);
    EXPECT_GT(woken, 100);
    EXPECT_EQ(eng->checkInvariants(), "");
}

// The line's cost grows with the updates in the last window, for reads and writes alike; Aaron
// Lu's ratelimit (at most one update per cfs_rq per ms) cuts the updates, and so the cost of
// the reads too.
TEST(TgLoadAvg, ContentionFollowsTheUpdatesAndTheRatelimitCutsIt) {
    const Scenario s = scenario(hb("x86-20c40t", 8, 10, 200));
    const CostModel base = s.cost;
    CostModel limited = s.cost;
    limited.tg_ratelimit_ns = 1000000;
    RunResult a = runWithCost(s, base), b = runWithCost(s, limited);
    const Metrics& ma = a.engine->metrics();
    const Metrics& mb = b.engine->metrics();
    const auto accesses = [](const Metrics& m) { return std::int64_t(m.tg_reads + m.tg_updates); };
    // Contended: on average more than the uncontended base per access.
    EXPECT_GT(ma.cost_tg, accesses(ma) * base.tg_update_base * 2);
    EXPECT_LT(mb.tg_updates * 5, ma.tg_updates);
    EXPECT_LT(double(mb.cost_tg) / double(accesses(mb)), 0.5 * double(ma.cost_tg) / double(accesses(ma)));
    // The knob preset (E) is the same ratelimit: the same run, digest for digest.
    RunOptions o;
    o.seed = 1;
    auto viaKnob = buildEngine(s, Knobs::preset("tg-ratelimit"), base, o);
    viaKnob->run();
    auto viaCost = buildEngine(s, Knobs{}, limited, o);
    viaCost->run();
    EXPECT_EQ(viaKnob->metrics().tg_updates, viaCost->metrics().tg_updates);
    EXPECT_EQ(viaKnob->now(), viaCost->now());
    EXPECT_EQ(viaKnob->events(), viaCost->events());
}

// --- Engine basics -------------------------------------------------------------

TEST(Engine, TaskStateIsSmall) { EXPECT_LT(sizeof(SimTask), 1024u); }

TEST(Engine, HackbenchConservesMessagesAndFinishes) {
    const Scenario s = scenario(hb("i7-4790", 2, 5, 30));
    RunResult r = run(s, Knobs{}, 1, true);
    const Engine& e = *r.engine;
    ASSERT_TRUE(e.done());
    // Every worker exited, every message was read: senders wrote loops*F each.
    int exited = 0;
    std::int64_t sent = 0, recv = 0;
    for (int i = 0; i < e.taskCount(); ++i) {
        const SimTask& t = e.task(i);
        if (t.state == TaskState::Exited) exited++;
        if (e.taskComm(t.t.pid) == "hackbench-send") sent += t.a;
        if (e.taskComm(t.t.pid) == "hackbench-recv") recv += t.a;
    }
    EXPECT_EQ(exited, e.taskCount());
    EXPECT_EQ(sent, 2 * 5 * 5 * 30);
    EXPECT_EQ(recv, sent);
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_GT(r.reports[0].headline[0].value, 0.0);
    // hackbench's own output ends with its Time line; schedlab's pipe counters follow, marked as its own.
    const auto& out = r.reports[0].output;
    const auto time = std::find_if(out.begin(), out.end(), [](const std::string& l) { return l.rfind("Time: ", 0) == 0; });
    ASSERT_NE(time, out.end());
    ASSERT_NE(time + 1, out.end());
    EXPECT_EQ((time + 1)->rfind("(schedlab: ", 0), 0u) << *(time + 1);
    for (auto it = time + 2; it != out.end(); ++it) EXPECT_EQ(it->rfind(" ", 0), 0u) << *it;  // its continuation lines
    EXPECT_EQ(out.back().back(), ')');
    // Every wakeup went through try_to_wake_up: the decision ring holds them.
    EXPECT_GT(e.metrics().ttwu_count, 0u);
    EXPECT_GT(e.metrics().ctx_switches, e.metrics().ttwu_count / 2);
    EXPECT_GT(e.metrics().ring_size, 0u);
    EXPECT_GT(e.invariantChecks(), 1000u);
}

// What the pipes did, as hackbench's report counts it: every time a receiver found its pipe
// empty it waited, a write woke it and it read again (the last message read, it never waits
// again), so its waits, the wakeups timed from the waking write to the first read, and the
// messages read per wakeup agree with each other and with the job's messages; coalescing
// does not change a count (every wait and every first read after one is a real step).
TEST(Engine, HackbenchPipeCountersAgreeWithTheMessages) {
    for (const bool pipe : {true, false}) {
        const Scenario s = scenario(hb("qemu-2s2c2t", 2, 5, 400, true, pipe));
        std::vector<std::vector<double>> counters;
        for (const bool coalesce : {false, true}) {
            RunOptions o;
            o.coalesce = coalesce;
            RunResult r = runScenario(s, s.variants.front(), s.cost, o);
            ASSERT_TRUE(r.engine->done());
            const WorkloadReport& rep = r.reports.at(0);
            std::map<std::string, double> c;
            std::vector<double> values;
            for (const auto& v : rep.counters) {
                c[v.key] = v.value;
                values.push_back(v.value);
            }
            counters.push_back(values);
            const double messages = 2.0 * 5 * 5 * 400;
            ASSERT_GT(c.at("receiver_waits"), 0.0) << (pipe ? "pipe" : "socket");
            EXPECT_NEAR(c.at("messages_per_receiver_wakeup") * c.at("receiver_waits"), messages, 1e-6 * messages);
            const auto h =
                std::find_if(rep.histograms.begin(), rep.histograms.end(), [](const auto& x) { return x.first == "waking write to first read"; });
            ASSERT_NE(h, rep.histograms.end());
            EXPECT_EQ(double(h->second.count()), c.at("receiver_waits"));  // each wait ends with one wakeup and one first read
            EXPECT_GE(h->second.min(), 0);
            EXPECT_LE(c.at("sender_waits_still_full"), c.at("sender_waits"));
            // Each wait, a futile one's too, ended with a try_to_wake_up.
            EXPECT_LE(c.at("receiver_waits") + c.at("sender_waits"), double(r.engine->metrics().ttwu_count));
            // The JSON carries them.
            const json j = runReportJson(s, r);
            EXPECT_EQ(j["workloads"][0]["counters"]["receiver_waits"].get<double>(), c.at("receiver_waits"));
        }
        EXPECT_EQ(counters[0], counters[1]) << (pipe ? "pipe" : "socket") << ": coalescing changed a count";
    }
}

// The kernel-style event stream is consistent with itself and with the counters: per CPU,
// every sched_switch switches out whatever the previous one switched in; every wakeup was
// preceded by a waking; migrations and exits match the metrics.
TEST(Engine, EventStreamIsConsistent) {
    const Scenario s = scenario(hb("qemu-2s2c2t", 2, 4, 30));
    std::vector<SchedEvent> ev;
    RunOptions o;
    o.event_sink = [&](const SchedEvent& e) { ev.push_back(e); };
    o.event_ring = 64;
    o.check_invariants = true;
    RunResult r = runScenario(s, s.variants.front(), s.cost, o);
    const Engine& e = *r.engine;
    ASSERT_GT(ev.size(), 100u);
    std::map<int, int> onCpu;  // cpu -> pid running (0 = swapper)
    std::map<int, int> waking;
    std::uint64_t switches = 0, migrations = 0, exits = 0, forks = 0;
    std::int64_t last = 0;
    for (const auto& x : ev) {
        EXPECT_GE(x.time, last);
        last = x.time;
        switch (x.kind) {
        case EvKind::sched_switch:
            if (onCpu.count(x.cpu)) {
                EXPECT_EQ(onCpu[x.cpu], x.pid) << "CPU " << x.cpu << " at " << x.time;
            }
            onCpu[x.cpu] = x.pid2;
            EXPECT_NE(x.pid, x.pid2);
            if (x.pid != 0 && x.pid2 != 0) switches++;
            break;
        case EvKind::sched_waking: waking[x.pid]++; break;
        case EvKind::sched_wakeup:
            EXPECT_GT(waking[x.pid], 0) << "wakeup of pid " << x.pid << " without waking";
            waking[x.pid]--;
            break;
        case EvKind::sched_migrate_task:
            migrations++;
            EXPECT_NE(x.orig_cpu, x.target_cpu);
            break;
        case EvKind::sched_process_exit: exits++; break;
        case EvKind::sched_process_fork: forks++; break;
        default: break;
        }
    }
    std::uint64_t fork = e.metrics().migrations[int(MigrationCause::fork)];
    EXPECT_EQ(migrations, e.metrics().migrationsTotal() - fork);
    EXPECT_EQ(exits, std::uint64_t(e.taskCount()));
    EXPECT_EQ(forks, std::uint64_t(e.taskCount()));
    EXPECT_GT(switches, 0u);
    EXPECT_EQ(e.metrics().event_size, 64u);  // the ring is bounded
    EXPECT_EQ(e.metrics().recentEvent(63).time, ev.back().time);
}

TEST(Engine, SocketModeAndProcessesToo) {
    const Scenario s = scenario(hb("qemu-2s2c2t", 1, 4, 40, false, false));
    RunResult r = run(s, Knobs{}, 3, true);
    EXPECT_TRUE(r.engine->done());
    EXPECT_NE(r.reports[0].command.find("--process"), std::string::npos);
    // Processes switch mm: the dearer switch cost shows in the CPU time of the term.
    EXPECT_GT(r.engine->metrics().cost_ctx_switch, 0);
}

TEST(Engine, SameSeedSameDigestDifferentSeedDiffers) {
    const Scenario s = scenario(R"({"topology":"qemu-2s2c2t","workloads":[
        {"type":"schbench-classic","message_threads":2,"workers":3,"runtime_s":0.2,"sleep_us":3000,"cputime_us":2000}]})");
    const auto a = run(s, Knobs{}, 7).digest;
    const auto b = run(s, Knobs{}, 7).digest;
    const auto c = run(s, Knobs{}, 8).digest;
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

TEST(Engine, IdleDelayKnobIsSeenByTheWakeupPath) {
    const Scenario s = scenario(hb("x86-20c40t", 2, 10, 40));
    const auto base = run(s, Knobs::preset("baseline"));
    const auto v2 = run(s, Knobs::preset("idle-delay-v2"));
    EXPECT_EQ(base.engine->metrics().idle_delay_hits, 0u);
    EXPECT_GT(v2.engine->metrics().idle_delay_hits, 0u);
    EXPECT_NE(base.digest, v2.digest);
}

TEST(Engine, LoadBalancingSpreadsHogs) {
    // Eight always-running hogs forked on a 4-core/8-thread box: after a while every CPU runs one.
    const Scenario s = scenario(R"({"topology":"i7-4790","workloads":[{"type":"stress","workers":8,"load":100,"slice_ms":5}],
        "stop":{"sim_time_s":0.3}})");
    RunResult r = run(s, Knobs{}, 1, true);
    const Engine& e = *r.engine;
    for (int c = 0; c < e.nrCpus(); ++c) EXPECT_LE(e.nrRunning(c), 2u) << "CPU " << c;
    EXPECT_GT(e.metrics().busyFraction(e.metrics().measure_start, e.metrics().end_time), 0.9);
}

TEST(Engine, SchbenchReportsPercentilesLikeTheTool) {
    const Scenario s = scenario(R"({"topology":"i7-4790","workloads":[
        {"type":"schbench","message_threads":1,"workers":4,"runtime_s":0.5,"op_ns":100000}]})");
    RunResult r = run(s, Knobs{}, 1, true);
    const auto& out = r.reports[0].output;
    ASSERT_FALSE(out.empty());
    EXPECT_NE(out[0].find("Wakeup Latencies percentiles (usec)"), std::string::npos);
    bool rps = false;
    for (const auto& l : out) rps |= l.find("average rps:") != std::string::npos;
    EXPECT_TRUE(rps);
    double avg = 0;
    for (const auto& h : r.reports[0].headline)
        if (h.key == "rps_avg") avg = h.value;
    // 4 workers, each request ~ 2 x (100 us + 50 us slack) + 5 x 100 us of work: ~1250 requests/s each.
    EXPECT_GT(avg, 2000);
    EXPECT_LT(avg, 8000);
}

TEST(Engine, TbenchPairsPingPong) {
    const Scenario s = scenario(R"({"topology":"i7-4790","workloads":[{"type":"tbench","pairs":2,"runtime_s":0.05,"warmup_s":0.01}]})");
    RunResult r = run(s, Knobs{}, 1, true);
    double mbs = 0, p50 = 0;
    for (const auto& h : r.reports[0].headline) {
        if (h.key == "mb_per_s") mbs = h.value;
        if (h.key == "rtt_p50_us") p50 = h.value;
    }
    // A round trip is at least the two sides' CPU (4 + 4 us) plus two switches: 8-40 us on an idle desktop.
    EXPECT_GT(p50, 8.0);
    EXPECT_LT(p50, 40.0);
    EXPECT_GT(mbs, 100.0);
    EXPECT_NE(r.reports[0].output[0].find("Throughput "), std::string::npos);
    EXPECT_GT(r.engine->metrics().stage1[std::size_t(Stage1::AFFINE_SYNC)] + r.engine->metrics().stage1[std::size_t(Stage1::AFFINE_IDLE_THIS)] +
                  r.engine->metrics().stage1[std::size_t(Stage1::AFFINE_PREV_IDLE)],
              0u);
}

// will-it-scale context_switch1: each instance two tasks passing a byte over two pipes. The
// iterations are 2 per round trip; each side's CPU is the cost model's pipe_write + pipe_read;
// _processes forks the child (its own mm: a process switch), _threads shares the mm.
TEST(Engine, ContextSwitch1InstancesPingPongOverPipes) {
    auto go = [](bool threads) {
        const Scenario s = scenario(fmt::format(
            R"({{"topology":"i7-4790","workloads":[{{"type":"context-switch1","instances":2,"threads":{},"runtime_s":0.02,"warmup_s":0.002}}]}})",
            threads));
        return run(s, Knobs{}, 1, true);
    };
    for (const bool threads : {false, true}) {
        const RunResult r = go(threads);
        ASSERT_EQ(r.reports.size(), 1u);
        const auto& rep = r.reports[0];
        EXPECT_EQ(rep.command, fmt::format("will-it-scale context_switch1_{} -t 2 -s 0.02", threads ? "threads" : "processes"));
        double ops = 0, p50 = 0;
        for (const auto& h : rep.headline) {
            if (h.key == "ops_per_s") ops = h.value;
            if (h.key == "rtt_p50_us") p50 = h.value;
        }
        // A round trip: two sides of pipe_write + pipe_read and two switches; 2 iterations each.
        const CostModel& cm = r.engine->cost();
        const double sides = 2.0 * double(cm.pipe_write + cm.pipe_read) / 1000;
        const double sw = double(threads ? cm.ctx_switch_thread : cm.ctx_switch_process) / 1000;
        EXPECT_GE(p50, sides);
        EXPECT_LT(p50, sides + 2 * sw + 15);
        // Two instances on 8 CPUs: each runs flat out, so the total is about 2 x 2 / round trip.
        EXPECT_GT(ops, 0.5 * 2 * 2 / (p50 * 1e-6));
        EXPECT_LT(ops, 2.0 * 2 * 2 / (p50 * 1e-6));
        EXPECT_NE(rep.output[0].find("total:"), std::string::npos) << rep.output[0];
        // The pair's two tasks share an mm only with threads.
        int cs = 0;
        std::set<int> mms;
        for (int t = 0; t < r.engine->taskCount(); ++t)
            if (r.engine->taskComm(1000 + t) == "context_switch1" && r.engine->task(t).role != 0) {
                cs++;
                mms.insert(r.engine->task(t).mm);
            }
        EXPECT_EQ(cs, 4);
        EXPECT_EQ(mms.size(), threads ? 2u : 4u);
    }
}

TEST(Engine, NetperfRrRunsTcpOrUdpAndRefusesOtherTests) {
    const Scenario u =
        scenario(R"({"topology":"i7-4790","workloads":[{"type":"netperf-rr","test":"UDP_RR","pairs":2,"runtime_s":0.01,"warmup_s":0.001}]})");
    const RunResult r = run(u, Knobs{}, 1, true);
    EXPECT_EQ(r.reports[0].command, "netperf -t UDP_RR -l 0.01 (x2 instances)");
    const Scenario t = scenario(R"({"topology":"i7-4790","workloads":[{"type":"netperf-rr","pairs":2,"runtime_s":0.01,"warmup_s":0.001}]})");
    EXPECT_EQ(run(t, Knobs{}, 1, true).reports[0].command, "netperf -t TCP_RR -l 0.01 (x2 instances)");
    try {
        scenario(R"({"topology":"i7-4790","workloads":[{"type":"netperf-rr","test":"TCP_STREAM"}]})");
        ADD_FAILURE() << "TCP_STREAM accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "test.json: workloads[0].test: 'TCP_STREAM': netperf-rr models TCP_RR or UDP_RR");
    }
    // Each type has its own keys: context_switch1 counts instances and has no payload size.
    for (const char* bad : {R"({"type":"context-switch1","pairs":2})", R"({"type":"context-switch1","bytes":2})",
                            R"({"type":"tbench","test":"UDP_RR"})", R"({"type":"tbench","instances":2})"}) {
        try {
            scenario(fmt::format(R"({{"topology":"i7-4790","workloads":[{}]}})", bad));
            ADD_FAILURE() << bad << " accepted";
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(": unknown key"), std::string::npos) << e.what();
        }
    }
}

// A CPU idle in a polling state (poll_idle, an MWAIT C-state) is woken by writing its flag
// word: send_call_function_single_ipi()'s set_nr_if_polling() and resched_curr()'s
// set_nr_and_not_polling() send no IPI (sched_wake_idle_without_ipi), so the wakee waits for
// the C-state's exit latency alone. The same states marked non-polling (HLT, an IO-port C2)
// take an IPI for each of those wakeups.
TEST(Engine, APollingIdleStateIsWokenWithoutAnIpi) {
    auto with = [](bool polling) {
        // Sockets: a pipe's four tasks would not sleep at all (each reader finds a write in the
        // window before it sleeps) once pipe->mutex lines them up.
        json doc = json::parse(hb("i7-4790", 1, 2, 2000, true, false));
        doc["cost"] = {{"cstates", json::array({{{"name", "C1"}, {"exit_ns", 2000}, {"residency_ns", 2000}, {"polling", polling}},
                                                {{"name", "C6"}, {"exit_ns", 133000}, {"residency_ns", 400000}, {"polling", polling}}})}};
        const Scenario s = parseScenario(doc, "test.json", ".");
        EXPECT_EQ(s.cost.cstates[0].polling, polling);
        return run(s, Knobs{}, 1, true);
    };
    const RunResult p = with(true), h = with(false);
    const Metrics& mp = p.engine->metrics();
    const Metrics& mh = h.engine->metrics();
    EXPECT_GT(mp.wake_idle_without_ipi, 100u);
    EXPECT_EQ(mh.wake_idle_without_ipi, 0u);
    EXPECT_GT(mh.ipis, mp.ipis + 100);
    // One LLC: a busy CPU is woken through a direct enqueue, an idle one through the wakelist (an
    // IPI or the flag), so every non-local wakeup of an idle CPU is one or the other.
    EXPECT_GE(mh.ipis, mh.ttwu_wakelist);
    // The IPI's delivery (1.5 us on one socket) is not waited for: wakeups are faster.
    EXPECT_LT(mp.wakeup_latency.mean() + 1000.0, mh.wakeup_latency.mean());
}

// migrate_task_rq_fair() makes a waking task's vruntime relative to its old cfs_rq when
// try_to_wake_up() moves it (TASK_WAKING), against the old min_vruntime of that moment; the
// wakelist's IPI adds the new cfs_rq's min_vruntime later. So a task waiting on a wakelist
// after a migration holds V - min_vruntime(old rq) with the old rq's min_vruntime as it was
// during the waking event, not as it is when the IPI runs.
TEST(Engine, AWakelistMigrationMakesVruntimeRelativeAtTheWaking) {
    const Scenario s = scenario(hb("milan-2s", 2, 10, 2000));
    RunOptions o;
    auto e = buildEngine(s, Knobs{}, s.cost, o);
    struct Seen {
        bool blocked = false, pending = false;
        std::int64_t vr = 0;
    };
    std::vector<Seen> seen;
    std::vector<std::int64_t> minBefore(std::size_t(e->nrCpus()));
    int checked = 0;
    for (int ev = 0; ev < 2000000 && e->advance(std::int64_t(1) << 40, 1); ++ev) {
        seen.resize(std::size_t(e->taskCount()));
        for (int id = 0; id < e->taskCount(); ++id) {
            const SimTask& p = e->task(id);
            Seen& w = seen[std::size_t(id)];
            const bool pending = p.state == TaskState::Runnable && !p.t.on_rq && p.wake_from >= 0 && p.wake_from != p.t.cpu;
            if (pending && w.blocked) {
                // Put on the wakelist in this event (ttwu_queue(), right after set_task_cpu(): a
                // wakeup over time): relative to the old rq's min_vruntime, which (monotone) lay
                // between its value before the event and after it.
                const std::int64_t after = e->state().rq[std::size_t(p.wake_from)].min_vruntime;
                const std::int64_t before = minBefore[std::size_t(p.wake_from)];
                EXPECT_LE(w.vr - after, p.t.vruntime) << "task " << id;
                EXPECT_GE(w.vr - before, p.t.vruntime) << "task " << id;
                ++checked;
            }
            // Asleep, or woken and still in flight (TASK_WAKING: not yet on a wakelist or runqueue).
            w.blocked = p.state == TaskState::Blocked || (p.state == TaskState::Runnable && !p.t.on_rq && p.wake_from < 0);
            w.pending = pending;
            w.vr = p.t.vruntime;
        }
        for (int c = 0; c < e->nrCpus(); ++c) minBefore[std::size_t(c)] = e->state().rq[std::size_t(c)].min_vruntime;
        if (checked >= 100) break;
    }
    EXPECT_GE(checked, 100);
}

// pipe_read() that finds the pipe empty runs its syscall path (unlock, prepare_to_wait, the
// recheck) up to schedule()'s deactivate_task(); a write in that window wakes the reader while
// it is still current and queued (ttwu_runnable: sched_waking and sched_wakeup, no switch, no
// placement). With a sleep that takes no time the window is gone.
TEST(Engine, AReaderThatFindsThePipeEmptyCanBeWokenBeforeItSleeps) {
    auto count = [](std::int64_t read_ns) {
        Scenario s = scenario(hb("i7-4790", 2, 10, 1000));
        s.cost.pipe_read = read_ns;
        RunOptions o;
        std::uint64_t wakings = 0;
        o.event_sink = [&](const SchedEvent& e) { wakings += e.kind == EvKind::sched_waking; };
        RunResult r = runScenario(s, Variant{"baseline", Knobs{}}, s.cost, o);
        const Metrics& m = r.engine->metrics();
        EXPECT_EQ(wakings, m.ttwu_count);  // every try_to_wake_up() that woke a task is traced, runnable or not
        return std::pair{m.stage0[std::size_t(Stage0::TTWU_RUNNABLE)], m.ttwu_count};
    };
    const auto [runnable, wakeups] = count(350);
    const auto [runnable0, wakeups0] = count(0);
    EXPECT_GT(runnable, wakeups / 50) << runnable0 << " " << wakeups0;
    EXPECT_LT(runnable0 * 5, runnable);
    (void)wakeups0;
}

TEST(Scenario, CStatesPollOnlyWhenTold) {
    const Scenario s = scenario(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],
        "cost":{"cstates":[{"name":"POLL","exit_ns":0,"residency_ns":0},{"name":"C1","exit_ns":1000,"residency_ns":2000},
                           {"name":"C1E","exit_ns":2000,"residency_ns":4000,"polling":true}]}})");
    ASSERT_EQ(s.cost.cstates.size(), 3u);
    EXPECT_TRUE(s.cost.cstates[0].polling);  // poll_idle's state polls
    EXPECT_FALSE(s.cost.cstates[1].polling);
    EXPECT_TRUE(s.cost.cstates[2].polling);
    // The machine tables: AMD's C1 is FFH MWAIT (polls), its C2 an IO-port read (IPI); intel_idle's all poll; arm64 never.
    const auto zen = CostModel::forTopology(Topology::preset("epyc-9654-2s")).cstates;
    EXPECT_TRUE(zen[1].polling);
    EXPECT_FALSE(zen[2].polling);
    for (const auto& c : CostModel::forTopology(Topology::preset("spr-2s")).cstates) EXPECT_TRUE(c.polling) << c.name;
    for (const auto& c : CostModel::forTopology(Topology::preset("pixel2")).cstates) EXPECT_FALSE(c.polling) << c.name;
    try {
        scenario(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],"cost":{"cstates":[{"name":"C1","polling":"yes"}]}})");
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "test.json: cost.cstates[0].polling: must be true or false");
    }
}

// schbench 2023's per-CPU lock: oversubscribed, preempted holders make others spin; -L removes it.
TEST(Engine, SchbenchPerCpuLockMakesPreemptionCost) {
    auto spin = [](const RunResult& r) -> double {
        for (const auto& l : r.reports[0].output)
            if (l.find("spinning on the per-CPU locks") != std::string::npos) return std::stod(l.substr(l.find(':') + 2));
        return -1;
    };
    const Scenario locked = scenario(R"({"topology":"i7-4790","workloads":[
        {"type":"schbench","message_threads":1,"workers":24,"runtime_s":0.1,"op_ns":400000}]})");
    const Scenario unlocked = scenario(R"({"topology":"i7-4790","workloads":[
        {"type":"schbench","message_threads":1,"workers":24,"runtime_s":0.1,"op_ns":400000,"cpu_lock":false}]})");
    const auto a = run(locked, Knobs{}, 1, true);
    const auto b = run(unlocked, Knobs{}, 1, true);
    EXPECT_GT(spin(a), 0.0);
    EXPECT_EQ(spin(b), -1.0);
    EXPECT_NE(b.reports[0].command.find(" -L"), std::string::npos);
}

// Every workload x three topologies x every knob preset, with the invariant checker on.
class EngineMatrix : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {};

TEST_P(EngineMatrix, InvariantsHold) {
    const auto& [topo, workload, preset] = GetParam();
    json w;
    if (workload == "hackbench") w = {{"type", "hackbench"}, {"groups", 2}, {"fds", 4}, {"loops", 15}, {"threads", true}, {"pipe", true}};
    else if (workload == "hackbench-socket") w = {{"type", "hackbench"}, {"groups", 1}, {"fds", 4}, {"loops", 15}};
    else if (workload == "schbench-classic")
        w = {{"type", "schbench-classic"}, {"message_threads", 2}, {"workers", 2}, {"runtime_s", 0.02}, {"sleep_us", 2000}, {"cputime_us", 1000}};
    else if (workload == "schbench") w = {{"type", "schbench"}, {"workers", 3}, {"runtime_s", 0.02}, {"op_ns", 50000}};
    else if (workload == "tbench") w = {{"type", "tbench"}, {"pairs", 4}, {"runtime_s", 0.004}, {"warmup_s", 0.0}};
    else if (workload == "locktorture") w = {{"type", "locktorture"}, {"writers", 12}, {"runtime_s", 0.01}, {"hold_ns", 1000}, {"pause_ns", 3000}};
    json doc = {{"topology", topo},
                {"workloads", json::array({w, {{"type", "stress"}, {"workers", 4}, {"load", 50}, {"slice_ms", 2}}})},
                {"stop", {{"sim_time_s", 0.2}}}};
    const Scenario s = parseScenario(doc, "matrix.json", ".");
    RunResult r;
    ASSERT_NO_THROW(r = run(s, Knobs::preset(preset), 5, true));
    EXPECT_GT(r.engine->invariantChecks(), 100u);
    EXPECT_GT(r.engine->metrics().ttwu_count, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllPresets, EngineMatrix,
                         ::testing::Combine(::testing::Values("i7-4790", "epyc-9654-2s", "power10-smt8"),
                                            ::testing::Values("hackbench", "hackbench-socket", "schbench-classic", "schbench", "tbench",
                                                              "locktorture"),
                                            ::testing::ValuesIn(Knobs::presetNames())),
                         [](const auto& info) {
                             std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + std::get<2>(info.param);
                             for (auto& ch : n)
                                 if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return n;
                         });

// --- Scenario input -------------------------------------------------------------

TEST(Scenario, BadInputNamesFileKeyAndProblem) {
    auto msg = [](const std::string& text) -> std::string {
        try {
            scenario(text);
        } catch (const InputError& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_EQ(msg(R"({"topology":"i7-4790"})"), "test.json: workloads: missing (a list of workloads)");
    EXPECT_EQ(msg(R"({"topology":"i7-4790","workloads":[{"type":"hackbench","grups":2}]})"), "test.json: workloads[0].grups: unknown key");
    EXPECT_EQ(msg(R"({"topology":"i7-4790","workloads":[{"type":"hackbench","groups":0}]})"),
              "test.json: workloads[0].groups: 0 is too small (minimum 1)");
    EXPECT_NE(msg(R"({"topology":"i7-4790","workloads":[{"type":"fio"}]})").find("workloads[0].type: 'fio' is not one of"), std::string::npos);
    EXPECT_NE(msg(R"({"topology":"nope","workloads":[{"type":"hackbench"}]})").find("test.json: topology"), std::string::npos);
    EXPECT_NE(msg(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],"variants":{"B":"nopatch"}})").find("test.json: variants.B"),
              std::string::npos);
    EXPECT_NE(msg(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],"cost":{"ctx_switch":5}})").find("test.json: cost.ctx_switch"),
              std::string::npos);
    EXPECT_NE(msg(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],"cost":{"scale":{"smt":"x"}}})").find("cost.scale.smt"),
              std::string::npos);
    EXPECT_EQ(msg(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],"stop":{"sim_time_s":-1}})"),
              "test.json: stop.sim_time_s: -1 is outside 0..36000");
    EXPECT_EQ(msg(R"({"topology":"i7-4790","workloads":[],"seed":1})"), "test.json: workloads: must be a non-empty list");
}

// Endless workloads (loops 0, a runtime of 0): they never finish by themselves; the scenario
// says why it would run forever, and a stop ends it. Before any sender could have finished,
// an endless hackbench is the same run as a finite one, event for event.
TEST(Scenario, EndlessWorkloadsRunUntilTheStop) {
    const char* endless[] = {
        R"({"type":"hackbench","groups":1,"fds":4,"threads":true,"pipe":true,"loops":0})",
        R"({"type":"schbench-classic","message_threads":1,"workers":2,"sleep_us":1000,"cputime_us":1000,"runtime_s":0})",
        R"({"type":"schbench","workers":2,"runtime_s":0})",
        R"({"type":"tbench","pairs":2,"runtime_s":0,"warmup_s":0})",
        R"({"type":"netperf-rr","pairs":1,"runtime_s":0})",
        R"({"type":"locktorture","writers":4,"runtime_s":0})",
        R"({"type":"cyclictest","threads":2,"duration_s":0,"loops":0})",
    };
    for (const char* w : endless) {
        const std::string text = fmt::format(R"({{"topology":"i7-4790","workloads":[{}]}})", w);
        Scenario s = scenario(text);
        EXPECT_NE(scenarioEndless(s).find("workloads[0] ("), std::string::npos) << w;
        EXPECT_NE(workloadCommand(s.workloads[0]).find("endless"), std::string::npos) << w;
        s.stop_s = 0.05;
        EXPECT_EQ(scenarioEndless(s), "") << w;
        const RunResult r = run(s, Knobs{}, 1, true);  // with the invariant checker after every event
        EXPECT_EQ(r.engine->now(), 50000000) << w;     // ran to the stop, not before
        EXPECT_FALSE(r.engine->workloads().front()->finished()) << w;
        EXPECT_GT(r.engine->metrics().ctx_switches, 0u) << w;
        EXPECT_DOUBLE_EQ(r.engine->progressFraction(), 1.0) << w;  // the stop is the progress
    }
    // Only background load: endless too.
    EXPECT_NE(scenarioEndless(scenario(R"({"topology":"i7-4790","workloads":[{"type":"stress","workers":2}]})")).find("only background"),
              std::string::npos);
    // A finite workload beside stress ends the run.
    EXPECT_EQ(scenarioEndless(scenario(R"({"topology":"i7-4790","workloads":[{"type":"stress"},{"type":"hackbench","loops":5}]})")), "");
    // Endless hackbench = the finite one up to where the finite one's senders are still writing.
    Scenario a = scenario(hb("i7-4790", 2, 4, 0)), b = scenario(hb("i7-4790", 2, 4, 1000000));
    a.stop_s = b.stop_s = 0.03;
    const RunResult ra = run(a), rb = run(b);
    EXPECT_EQ(ra.digest, rb.digest);
    ASSERT_FALSE(ra.reports.empty());
    bool rate = false;
    for (const auto& h : ra.reports[0].headline) rate |= h.key == "msgs_per_s" && h.value > 1e5;
    EXPECT_TRUE(rate) << "an endless hackbench reports its message rate";
    for (const auto& h : ra.reports[0].headline) EXPECT_NE(h.key, "time_s") << "an endless job has no job time";
    // runtime_s between 0 and 1 ms is neither endless nor a time.
    EXPECT_THROW(scenario(R"({"topology":"i7-4790","workloads":[{"type":"tbench","runtime_s":0.0001}]})"), InputError);
}

TEST(Scenario, VariantsInFileOrder) {
    const Scenario s = scenario(R"({"topology":"i7-4790","workloads":[{"type":"hackbench"}],
        "variants":{"base":"baseline","patch":{"preset":"idle-delay-v2","idle_delay_max_running":8}}})");
    ASSERT_EQ(s.variants.size(), 2u);
    EXPECT_EQ(s.variants[0].name, "base");
    EXPECT_EQ(s.variants[1].knobs.idle_delay_max_running, 8);
}

TEST(Scenario, EveryShippedScenarioParses) {
    int n = 0;
    for (const auto& f : std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios")) {
        if (f.path().extension() != ".json") continue;
        EXPECT_NO_THROW(loadScenario(f.path().string())) << f.path();
        n++;
    }
    EXPECT_GE(n, 1);
}

// --- Reports ---------------------------------------------------------------------

TEST(Report, CompareTableAndCsv) {
    const Scenario s = scenario(hb("i7-4790", 1, 4, 20));
    const auto a = run(s, Knobs::preset("baseline"));
    const auto b = run(s, Knobs::preset("idle-delay-v2"));
    const std::string t = compareTable(s, a, b);
    EXPECT_NE(t.find("# hackbench -g 1 -f 4 --threads --pipe -l 20 -s 100"), std::string::npos);
    EXPECT_NE(t.find("baseline"), std::string::npos);
    EXPECT_NE(t.find("idle-delay-v2"), std::string::npos);
    EXPECT_NE(t.find("Time (s)"), std::string::npos);
    EXPECT_NE(t.find("ttwu_count"), std::string::npos);
    EXPECT_NE(t.find("p99.9"), std::string::npos);
    // A run far shorter than a steady-state window has no steady figures: no section of zeros.
    ASSERT_EQ(a.engine->metrics().steady.result().windows, 0);
    EXPECT_EQ(t.find("job time at steady rate"), std::string::npos) << t;
    // Lines fit a mail (no line over 80 columns).
    std::size_t start = 0;
    while (start < t.size()) {
        auto end = t.find('\n', start);
        if (end == std::string::npos) end = t.size();
        EXPECT_LE(end - start, 80u) << t.substr(start, end - start);
        start = end + 1;
    }
    const std::string csv = bpftraceRqlenCsv(a);
    EXPECT_EQ(csv.rfind("[   Timestamp],CPU  0,CPU  1,", 0), 0u);
    const json j = runReportJson(s, a);
    EXPECT_EQ(j["knobs"]["preset"], "baseline");
    EXPECT_EQ(j["scenario"]["topology"], "i7-4790");
    EXPECT_TRUE(j["schedstat"].contains("ttwu_count"));
    // Every metric: the timelines and histograms too.
    ASSERT_TRUE(j.contains("rqlen_timeline"));
    EXPECT_EQ(j["rqlen_timeline"]["nr_running"].size(), a.engine->metrics().timeline.rows());
    std::uint64_t n = 0;
    for (const auto& b : j["wakeup_latency_buckets_ns"]) n += b[2].get<std::uint64_t>();
    EXPECT_EQ(n, a.engine->metrics().wakeup_latency.count());
}

TEST(Report, WriteFileAtomicNeverLeavesAHalfFile) {
    const auto dir = std::filesystem::temp_directory_path() / "schedlab-atomic-test";
    std::filesystem::remove_all(dir);
    EXPECT_THROW(writeFileAtomic((dir / "x.json").string(), "{}"), InputError);
    EXPECT_FALSE(std::filesystem::exists(dir / "x.json"));
    std::filesystem::create_directories(dir);
    writeFileAtomic((dir / "x.json").string(), "{\"a\":1}\n");
    std::ifstream f(dir / "x.json");
    std::string content((std::istreambuf_iterator<char>(f)), {});
    EXPECT_EQ(content, "{\"a\":1}\n");
    int files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) files++;
    EXPECT_EQ(files, 1);  // no temporary left behind
    std::filesystem::remove_all(dir);
}
