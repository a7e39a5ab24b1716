// SPDX-License-Identifier: GPL-2.0-or-later
// core_affinity_test.cpp: a workload's `cpus` (taskset -c) is every one of its tasks' cpus_ptr,
// honoured by every placement and balancing path: no task ever runs on, is woken onto or is
// migrated to a CPU outside its mask, whatever the mask; bad masks are one line.
#include "replay/replay.h"
#include "sim/scenario.h"
#include "sim/report.h"
#include "sim/simulation.h"
#include "trace/rq_csv.h"
#include "trace/trace.h"
#include "trace/trace_dat_writer.h"
#include "test_scenarios.h"
#include "util/input_error.h"
#include "util/rng.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace sched;

namespace {

// A random non-empty cpulist on a machine of n CPUs: a few ranges, sometimes one CPU.
std::string randomMask(Rng& r, int n) {
    CpuMask m;
    const int ranges = 1 + int(r.below(3));
    for (int k = 0; k < ranges; ++k) {
        const int a = int(r.below(std::uint64_t(n)));
        const int len = r.below(4) == 0 ? 1 : 1 + int(r.below(std::uint64_t(std::max(1, n / 4))));
        for (int c = a; c < std::min(n, a + len); ++c) m.set(c);
    }
    return m.toList();
}

struct Observed {
    std::uint64_t switches = 0, wakeups = 0, migrations = 0;
};

// Runs `s` and checks every sched_switch in, wakeup and migration against the task's mask.
Observed runAndCheck(const Scenario& s, const std::string& what) {
    std::vector<SchedEvent> ev;
    RunOptions o;
    o.event_sink = [&](const SchedEvent& e) { ev.push_back(e); };
    o.check_invariants = true;
    RunResult r = runScenario(s, s.variants.front(), s.cost, o);
    const Engine& e = *r.engine;
    std::map<std::int32_t, const CpuMask*> mask;
    for (int id = 0; id < e.taskCount(); ++id) mask[e.task(id).t.pid] = e.task(id).t.cpus_ptr;
    auto allowed = [&](std::int32_t pid, int cpu) {
        const auto it = mask.find(pid);
        return it == mask.end() || it->second->test(cpu);  // not a workload task (swapper)
    };
    Observed seen;
    for (const SchedEvent& x : ev) {
        switch (x.kind) {
        case EvKind::sched_switch:
            if (x.pid2 != 0) {
                ++seen.switches;
                EXPECT_TRUE(allowed(x.pid2, x.cpu)) << what << ": pid " << x.pid2 << " runs on CPU " << x.cpu << " at " << x.time;
            }
            break;
        case EvKind::sched_wakeup:
        case EvKind::sched_wakeup_new:
            ++seen.wakeups;
            EXPECT_TRUE(allowed(x.pid, x.target_cpu)) << what << ": pid " << x.pid << " woken onto CPU " << x.target_cpu << " at " << x.time;
            break;
        case EvKind::sched_migrate_task:
            ++seen.migrations;
            EXPECT_TRUE(allowed(x.pid, x.target_cpu)) << what << ": pid " << x.pid << " migrated to CPU " << x.target_cpu << " at " << x.time;
            break;
        default: break;
        }
    }
    return seen;
}

}  // namespace

// A property over random masks: hackbench (wakeups, forks, balancing), schbench (timers, futex
// wakeups), stress (CPU hogs the balancer moves) and tbench pairs, two workloads with different
// masks at once, on machines with SMT, several LLCs and NUMA nodes.
TEST(Affinity, NoTaskEverRunsIsWokenOrIsMovedOutsideItsMask) {
    Rng rng(20261205);
    std::uint64_t migrations = 0;
    for (const char* topo : {"qemu-2s2c2t", "i7-4790", "milan-2s"}) {
        const int n = Topology::preset(topo).nrCpus();
        for (int round = 0; round < 3; ++round) {
            const std::string m1 = randomMask(rng, n), m2 = randomMask(rng, n), m3 = randomMask(rng, n);
            const std::string text = fmt::format(
                R"({{"topology": "{}", "seed": {}, "stop": {{"sim_time_s": 0.03}}, "workloads": [
                    {{"type": "hackbench", "groups": 2, "fds": 5, "threads": true, "pipe": true, "loops": 200, "cpus": "{}"}},
                    {{"type": "stress", "workers": 6, "load": 70, "cpus": "{}"}},
                    {{"type": "tbench", "pairs": 3, "runtime_s": 0.02, "warmup_s": 0, "cpus": "{}"}}]}})",
                topo, round + 1, m1, m2, m3);
            const Observed seen = runAndCheck(scenario(text), fmt::format("{} round {} masks {} / {} / {}", topo, round, m1, m2, m3));
            EXPECT_GT(seen.switches, 100u);
            EXPECT_GT(seen.wakeups, 10u);
            migrations += seen.migrations;
        }
        const std::string sm = randomMask(rng, n);
        runAndCheck(
            scenario(fmt::format(R"({{"topology": "{}", "stop": {{"sim_time_s": 0.02}}, "workloads": [{{"type": "schbench", "message_threads": 2,
                                             "workers": 4, "runtime_s": 0.02, "cpus": "{}"}}]}})",
                                 topo, sm)),
            fmt::format("{} schbench mask {}", topo, sm));
    }
    EXPECT_GT(migrations, 50u);  // the balancer and the wakeup path did move tasks, within their masks
}

// The mask is the workload's: its tasks fill the allowed CPUs and nothing else; the report and
// the command line say taskset -c.
TEST(Affinity, PinnedHackbenchUsesOnlyItsCpusAndSaysSo) {
    const Scenario s = scenario(R"({"topology": "milan-2s", "workloads": [{"type": "perf-messaging", "groups": 1, "fds": 20, "threads": true,
                                    "pipe": true, "loops": 300, "cpus": "0-7,128-135"}]})");
    EXPECT_EQ(workloadCommand(s.workloads[0]), "taskset -c 0-7,128-135 perf bench sched messaging -g 1 -l 300 -t -p");
    RunOptions o;
    RunResult r = runScenario(s, s.variants.front(), s.cost, o);
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_EQ(r.reports[0].command.rfind("taskset -c 0-7,128-135 perf bench", 0), 0u) << r.reports[0].command;
    EXPECT_EQ(r.reports[0].cpus, "0-7,128-135");
    const nlohmann::json j = runReportJson(s, r);
    EXPECT_EQ(j["workloads"][0]["cpus"], "0-7,128-135");
    const Engine& e = *r.engine;
    const CpuMask want = *CpuMask::parseList("0-7,128-135", kMaxCpus, nullptr);
    for (int id = 0; id < e.taskCount(); ++id) EXPECT_TRUE(*e.task(id).t.cpus_ptr == want) << "task " << id;
    // Without the key: every CPU, and the command as before.
    const Scenario all = scenario(R"({"topology": "milan-2s", "workloads": [{"type": "perf-messaging", "groups": 1, "loops": 10}]})");
    EXPECT_EQ(workloadCommand(all.workloads[0]).rfind("perf bench", 0), 0u);
}

TEST(Affinity, ABadMaskIsOneLineNamingTheKey) {
    auto error = [](const std::string& cpus) {
        try {
            scenario(R"({"topology": "i7-4790", "workloads": [{"type": "stress", "workers": 2}, {"type": "hackbench", "cpus": )" + cpus + "}]}");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(error(R"("0-3,9")"), "test.json: workloads[1].cpus: CPU 9 is not on i7-4790 (8 CPUs)");
    EXPECT_NE(error(R"("3-1")").find("workloads[1].cpus: descending cpulist range '3-1'"), std::string::npos) << error(R"("3-1")");
    EXPECT_NE(error(R"("x")").find("workloads[1].cpus: bad cpulist item 'x'"), std::string::npos) << error(R"("x")");
    EXPECT_NE(error(R"("")").find("workloads[1].cpus: is empty"), std::string::npos) << error(R"("")");
    EXPECT_NE(error("7").find("workloads[1].cpus"), std::string::npos) << error("7");
    EXPECT_EQ(error(R"("0-7")"), "accepted");
}

// The window's snapshot marks the CPUs no workload may use (the union of the masks); with a
// workload that may use every CPU, none.
TEST(Affinity, SnapshotMarksTheCpusNoWorkloadMayUse) {
    const Scenario s = scenario(R"({"topology": "i7-4790", "workloads": [{"type": "stress", "workers": 2, "cpus": "0-1"},
                                    {"type": "hackbench", "groups": 1, "fds": 2, "loops": 10, "cpus": "4"}]})");
    Simulation sim(s, Knobs{}, "A");
    sim.stepEvent();
    const Snapshot snap = sim.snapshot();
    std::string marks;
    for (const CpuView& v : snap.cpus) marks += v.outside_masks ? 'x' : '.';
    EXPECT_EQ(marks, "..xx.xxx");
    const Scenario open = scenario(R"({"topology": "i7-4790", "workloads": [{"type": "stress", "workers": 2, "cpus": "0-1"},
                                       {"type": "hackbench", "groups": 1, "fds": 2, "loops": 10}]})");
    Simulation all(open, Knobs{}, "A");
    all.stepEvent();
    for (const CpuView& v : all.snapshot().cpus) EXPECT_FALSE(v.outside_masks);
}

// The rq-length CSV of a pinned run has the pinned CPUs as its columns, as the proxy-execution
// thread's rqlen.bt printed CPUs 0-7 and 128-135, and reads back as such; unpinned, every CPU.
TEST(Affinity, PinnedRunsRqLengthCsvHasThePinnedCpusAsColumns) {
    const Scenario s = scenario(R"({"topology": "milan-2s", "workloads": [{"type": "perf-messaging", "groups": 1, "fds": 20, "threads": true,
                                    "pipe": true, "loops": 1500, "cpus": "0-7,128-135"}]})");
    RunOptions o;
    const RunResult r = runScenario(s, s.variants.front(), s.cost, o);
    const std::string csv = bpftraceRqlenCsv(r);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "[   Timestamp],CPU  0,CPU  1,CPU  2,CPU  3,CPU  4,CPU  5,CPU  6,CPU  7,CPU128,CPU129,CPU130,CPU131,CPU132,CPU133,CPU134,CPU135,");
    const RqLenCsv back = parseRqLenCsv(csv, "rqlen50-bpftrace.csv");
    EXPECT_EQ(back.cpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 128, 129, 130, 131, 132, 133, 134, 135}));
    ASSERT_GT(back.rows(), 2u);
    // The pinned CPUs did the work, and no other CPU did. (The bpftrace samples themselves are
    // often all 0 here: the script's cpu_idle probe zeroes a CPU that went idle since its tick.)
    const Metrics& m = r.engine->metrics();
    for (int cpu = 0; cpu < r.engine->nrCpus(); ++cpu) {
        const bool pinned = cpu < 8 || (cpu >= 128 && cpu < 136);
        if (pinned) EXPECT_GT(m.busy_ns[std::size_t(cpu)], 0) << cpu;
        else EXPECT_EQ(m.busy_ns[std::size_t(cpu)], 0) << cpu;
    }
    const Scenario all = scenario(R"({"topology": "i7-4790", "workloads": [{"type": "hackbench", "groups": 1, "fds": 2, "loops": 50}]})");
    const RqLenCsv every = parseRqLenCsv(bpftraceRqlenCsv(runScenario(all, all.variants.front(), all.cost, o)), "x.csv");
    EXPECT_EQ(every.cpus.size(), 8u);
}

// A pinned run's export says each pinned task's mask (allowed= in its schedlab_wake lines), so
// agree on it gives back the engine's every choice, from ftrace text and from trace.dat alike.
TEST(Affinity, APinnedRunsExportReplaysAtOneHundredPercent) {
    const Scenario s = scenario(R"({"topology": "i7-4790", "seed": 3, "workloads": [{"type": "hackbench", "groups": 2, "fds": 4, "threads": true,
                                    "pipe": true, "loops": 300, "cpus": "5-6"}, {"type": "stress", "workers": 2, "load": 50, "cpus": "0,2,4"}],
                                    "stop": {"sim_time_s": 0.05}})");
    const std::string dat = (std::filesystem::temp_directory_path() / fmt::format("schedlab-pinned-{}.dat", ::getpid())).string();
    std::ostringstream text;
    std::unique_ptr<FtraceTextWriter> tw;
    std::unique_ptr<TraceDatWriter> dw;
    RunOptions o;
    o.on_start = [&](const Engine& e) {
        auto comm = [&e](std::int32_t pid) { return e.taskComm(pid); };
        tw = std::make_unique<FtraceTextWriter>(text, e.nrCpus(), comm);
        dw = std::make_unique<TraceDatWriter>(dat, e.nrCpus(), comm);
    };
    o.event_sink = [&](const SchedEvent& e) {
        tw->write(e);
        dw->write(e);
    };
    o.wake_inputs_sink = [&](const WakeInputs& in) {
        tw->writeWakeInputs(in);
        dw->writeWakeInputs(in);
    };
    runScenario(s, s.variants.front(), s.cost, o);
    dw->commit();
    EXPECT_NE(text.str().find(" allowed=5-6\n"), std::string::npos);
    auto topo = std::make_shared<const Topology>(Topology::preset("i7-4790"));
    for (const Trace& t : {parseFtraceText(text.str(), "pinned.txt"), readTrace(dat)}) {
        ASSERT_FALSE(t.affinity.empty()) << t.file;
        for (const auto& [pid, list] : t.affinity) EXPECT_TRUE(list == "5-6" || list == "0,2,4") << pid << " " << list;
        const AgreeReport r = agree(t, topo, Knobs{});
        ASSERT_GT(r.decisions, 100u) << t.file;
        EXPECT_EQ(r.agree, r.decisions) << t.file << "\n" << r.text();
    }
    std::filesystem::remove(dat);
}
