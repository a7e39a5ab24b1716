// SPDX-License-Identifier: GPL-2.0-or-later
// core_flow_test.cpp: the decision-flow graph (core/kernel/decision_flow.h): every reason code
// has its node, the edge counts of a run equal its per-reason counters (A and B, several
// scenarios), a traced decision's path holds the functions of its steps, and the mail text.
#include "kernel/decision_flow.h"
#include "kernel/state_json.h"
#include "kernel/wakeup_path.h"
#include "sim/scenario.h"
#include "test_scenarios.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <set>

using namespace sched;

namespace {

template <class E>
std::vector<E> named() {
    std::vector<E> out;
    for (int v = 1; v < 256 && std::strcmp(toString(E(v)), "?") != 0; ++v) out.push_back(E(v));
    return out;
}

}  // namespace

TEST(DecisionFlow, EveryReasonCodeHasItsNode) {
    const DecisionFlow& f = DecisionFlow::get();
    auto check = [&](const char* name, int n) {
        ASSERT_GE(n, 0) << name;
        EXPECT_EQ(f.nodes()[std::size_t(n)].key, name);
        EXPECT_EQ(f.nodes()[std::size_t(n)].kind, FlowKind::Exit) << name;
        EXPECT_FALSE(f.nodes()[std::size_t(n)].condition.empty()) << name << ": no condition for the tooltip";
        EXPECT_FALSE(f.nodes()[std::size_t(n)].function.empty()) << name;
    };
    for (Stage0 c : named<Stage0>()) check(toString(c), f.exitOf(c));
    for (Stage1 c : named<Stage1>()) check(toString(c), f.exitOf(c));
    for (IdlestSub c : named<IdlestSub>()) check(toString(c), f.exitOf(c));
    for (Stage2 c : named<Stage2>()) check(toString(c), f.exitOf(c));
    EXPECT_EQ(named<Stage2>().size(), 23u);  // a new code must land in the graph: this count moves with decision.h
    // Keys unique; the drawing order holds every node once; edges join existing nodes; parents come first.
    std::set<std::string> keys;
    for (const auto& n : f.nodes()) EXPECT_TRUE(keys.insert(n.key).second) << n.key;
    std::vector<int> seen(f.nodes().size(), 0);
    for (int n : f.order()) seen[std::size_t(n)]++;
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << f.nodes()[i].key;
    for (const auto& e : f.edges()) {
        ASSERT_GE(e.from, 0);
        ASSERT_LT(std::size_t(e.to), f.nodes().size());
        EXPECT_LT(f.nodes()[std::size_t(e.from)].depth, f.nodes()[std::size_t(e.to)].depth);
    }
    // The kernel's order under select_idle_sibling(): S1 first, S9 last.
    const auto& sis = f.children(f.node("select_idle_sibling"));
    ASSERT_FALSE(sis.empty());
    // SELECT_BIAS_PREV tests prev before S1.
    ASSERT_GE(sis.size(), 3u);
    EXPECT_EQ(f.nodes()[std::size_t(sis[0])].key, "SIS_BIAS_PREV_IDLE");
    EXPECT_EQ(f.nodes()[std::size_t(sis[1])].key, "SIS_BIAS_PREV_FITS");
    EXPECT_EQ(f.nodes()[std::size_t(sis[2])].key, "SIS_TARGET_IDLE");
    EXPECT_EQ(f.nodes()[std::size_t(sis.back())].key, "SIS_FALLBACK_TARGET");
}

namespace {

/// Runs `s` with its variant `v` and checks that the flow counts equal the reason counters.
void expectCountsMatch(const Scenario& s, std::size_t v) {
    SCOPED_TRACE(s.name + " / " + s.variants[v].name);
    RunOptions o;
    o.seed = s.seed;
    const RunResult r = runScenario(s, s.variants[v], s.cost, o);
    const Metrics& m = r.engine->metrics();
    const DecisionFlow& f = DecisionFlow::get();
    const FlowCounts& c = m.flow;
    ASSERT_GT(m.decisions, 100u);
    for (Stage0 x : named<Stage0>()) EXPECT_EQ(c.node(f.exitOf(x)), m.stage0[std::size_t(x)]) << toString(x);
    for (Stage1 x : named<Stage1>()) EXPECT_EQ(c.node(f.exitOf(x)), m.stage1[std::size_t(x)]) << toString(x);
    for (IdlestSub x : named<IdlestSub>()) EXPECT_EQ(c.node(f.exitOf(x)), m.idlest[std::size_t(x)]) << toString(x);
    for (Stage2 x : named<Stage2>()) EXPECT_EQ(c.node(f.exitOf(x)), m.stage2[std::size_t(x)]) << toString(x);
    EXPECT_EQ(c.node(f.node("idle_delay_hit")), m.idle_delay_hits);
    EXPECT_EQ(c.node(f.node("claim_set")), m.claims);
    // Every decision starts at an entry; ttwu_runnable's wakeups are counted beside them.
    EXPECT_EQ(c.total, m.decisions + m.stage0[std::size_t(Stage0::TTWU_RUNNABLE)]);
    EXPECT_EQ(c.node(f.node("try_to_wake_up")) + c.node(f.node("wake_up_new_task")) + c.node(f.node("sched_exec")), c.total);
    EXPECT_EQ(c.node(f.node("wake_up_new_task")), m.wakeup_new);
    // select_idle_sibling() is reached by the decisions with a stage-2 code, and its exits partition them.
    std::uint64_t sis = 0;
    for (Stage2 x : named<Stage2>()) sis += m.stage2[std::size_t(x)];
    EXPECT_EQ(c.node(f.node("select_idle_sibling")), sis);
    // An edge's count is the count of the node it leads to, for every node with one parent.
    for (std::size_t e = 0; e < f.edges().size(); ++e) {
        const int to = f.edges()[e].to;
        if (to != f.node("select_task_rq")) EXPECT_EQ(c.edge(int(e)), c.node(to)) << f.nodes()[std::size_t(to)].key;
    }
}

}  // namespace

TEST(DecisionFlow, EdgeCountsEqualTheReasonCountersOfARun) {
    // hackbench on i7-4790, baseline and idle-delay-v2; claim-wakeup and SIS_DEBOUNCE; forks at start-up.
    Scenario s = scenario(R"({"name": "flow", "topology": "i7-4790", "seed": 3,
        "workloads": [{"type": "hackbench", "groups": 4, "fds": 10, "loops": 100, "threads": true, "pipe": true}],
        "variants": {"A": "baseline", "B": "idle-delay-v2", "C": "claim-wakeup", "D": "sis-debounce"}})");
    for (std::size_t v = 0; v < s.variants.size(); ++v) expectCountsMatch(s, v);
    // A machine with a slow path (fork balance across sockets) and SIS_UTIL's budget.
    Scenario t = scenario(R"({"name": "flow-2s", "topology": "x86-20c40t", "seed": 1,
        "workloads": [{"type": "hackbench", "groups": 4, "fds": 10, "loops": 20, "threads": false, "pipe": false}],
        "variants": {"A": "baseline", "B": "idle-delay-v2"}})");
    for (std::size_t v = 0; v < t.variants.size(); ++v) expectCountsMatch(t, v);
}

TEST(DecisionFlow, ATracedDecisionsPathHoldsTheFunctionsOfItsSteps) {
    const DecisionFlow& f = DecisionFlow::get();
    int checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/examples/explain")) {
        ExplainInput in = loadExplainState(entry.path().string());
        const Decision d = decide(*in.state, in.knobs, in.task, in.waker, in.wake_flags, true);
        std::vector<int> path;
        f.path(d, path);
        std::set<int> onPath;
        for (int e : path) {
            ASSERT_GE(e, 0) << entry.path();
            onPath.insert(f.edges()[std::size_t(e)].from);
            onPath.insert(f.edges()[std::size_t(e)].to);
        }
        const std::vector<int> litNodes = f.lit(d);
        const std::set<int> on(litNodes.begin(), litNodes.end());
        std::set<int> stepNodes;
        for (const Step& st : d.steps)
            if (f.nodeOf(st.fn) >= 0) stepNodes.insert(f.nodeOf(st.fn));
        // Lit: the path and the functions of the steps, nothing else.
        for (int n : onPath) EXPECT_TRUE(on.count(n)) << entry.path();
        for (int n : on) EXPECT_TRUE(onPath.count(n) || stepNodes.count(n)) << entry.path() << ": " << f.nodes()[std::size_t(n)].key;
        // The exits of its codes are on the path.
        if (d.stage1 != Stage1::NONE) EXPECT_TRUE(on.count(f.exitOf(d.stage1))) << entry.path();
        if (d.stage2 != Stage2::NONE) EXPECT_TRUE(on.count(f.exitOf(d.stage2))) << entry.path();
        if (d.stage0 != Stage0::NONE) EXPECT_TRUE(on.count(f.exitOf(d.stage0))) << entry.path();
        // Each function the steps name that is a node of the graph is lit.
        for (const Step& st : d.steps) {
            const int n = f.nodeOf(st.fn);
            if (n >= 0) EXPECT_TRUE(on.count(n)) << entry.path() << ": step in " << toString(st.fn) << " not lit";
        }
        ++checked;
    }
    EXPECT_GE(checked, 38);
}

TEST(DecisionFlow, TextForAMail) {
    FlowCounts a, b;
    Decision d;
    d.wake_flags = WF_TTWU;
    d.stage1 = Stage1::AFFINE_SYNC;
    d.stage2 = Stage2::SIS_IDLE_CPU;
    for (int i = 0; i < 3; ++i) a.add(d);
    d.stage2 = Stage2::SIS_TARGET_IDLE;
    a.add(d);
    d.idle_delay_hit = true;
    for (int i = 0; i < 4; ++i) b.add(d);
    a.addRunnable();
    const std::string t = flowText(a, &b, "baseline", "idle-delay-v2");
    EXPECT_NE(t.find("baseline"), std::string::npos);
    // 1 of A's 5 decisions and all 4 of B's left at SIS_TARGET_IDLE: +80.0 points.
    EXPECT_NE(t.find("SIS_TARGET_IDLE"), std::string::npos);
    const auto line = t.substr(t.find("SIS_TARGET_IDLE"), t.find('\n', t.find("SIS_TARGET_IDLE")) - t.find("SIS_TARGET_IDLE"));
    EXPECT_NE(line.find("1 (20.0%)"), std::string::npos) << line;
    EXPECT_NE(line.find("4 (100.0%)"), std::string::npos) << line;
    EXPECT_NE(line.find("+80.0pp"), std::string::npos) << line;
    EXPECT_NE(t.find("TTWU_RUNNABLE"), std::string::npos);
    EXPECT_EQ(t.find("SIS_NO_LLC"), std::string::npos) << "a branch no decision took is left out";
    EXPECT_NE(flowText(a, &b, "A", "B", true).find("SIS_NO_LLC"), std::string::npos);
    EXPECT_NE(t.find("├─ select_idle_sibling()"), std::string::npos) << t;
    EXPECT_NE(t.find("└─ idle delay: idle_cpu()"), std::string::npos) << t;
}
