// SPDX-License-Identifier: GPL-2.0-or-later
// core_state_json_test.cpp: bad explain states give one line naming the file,
// the key and the problem; the shipped examples cover every reason code.
#include "kernel/state_json.h"
#include "topology/topology_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <set>

#include <unistd.h>

using namespace sched;
using nlohmann::json;

namespace {

std::string errorOf(const std::string& text) {
    try {
        json doc = parseJsonOrThrow(text, "state.json");
        parseExplainState(doc, "state.json", "");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(StateJson, SyntaxErrorNamesLineAndColumn) {
    std::string e = errorOf("{\n  \"topology\": \"i7-4790\",\n  \"waker\": {\"cpu\": 0,}\n}");
    EXPECT_EQ(e.rfind("state.json: JSON syntax error at line 3", 0), 0u) << e;
}

TEST(StateJson, BadInputsNameKeyAndProblem) {
    const std::string base = R"("topology":"i7-4790","waker":{"cpu":0})";
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"bogus":1})"), "state.json: bogus: unknown key");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":9}})"), "state.json: task.prev_cpu: CPU 9 is outside the machine (0-7)");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1,"cpus_allowed":"2-3"}})"),
              "state.json: task.prev_cpu: CPU 1 is not in cpus_allowed (2-3)");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1,"cpus_allowed":""}})"),
              "state.json: task.cpus_allowed: is empty: the task may run nowhere");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"cpus":[{"cpu":2,"nr_running":-1}]})"),
              "state.json: cpus[0].nr_running: -1 is negative (minimum 0)");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"cpus":[{"cpu":2,"curr":"normal","nr_running":0}]})"),
              "state.json: cpus[0].nr_running: 0 with curr normal: a running task counts in nr_running");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"cpus":[{"cpu":8}]})"), "state.json: cpus[0].cpu: CPU 8 is outside the machine (0-7)");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"cpus":[{"cpu":3,"curr":"busy"}]})"),
              "state.json: cpus[0].curr: 'busy' is not one of idle, normal, sched_idle, kthread");
    EXPECT_EQ(errorOf(R"({"topology":"i9-9999","waker":{"cpu":0},"task":{"prev_cpu":1}})")
                  .rfind("state.json: topology: 'i9-9999' is neither a topology preset", 0),
              0u);
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"knobs":{"WA_IDLE":"perhaps"}})"),
              "state.json: knobs.WA_IDLE: knob WA_IDLE: 'perhaps' is not a boolean (use 0/1, true/false, on/off)");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"wake_flags":["SYNC","LATE"]})"),
              "state.json: wake_flags[1]: 'LATE' is not one of TTWU, SYNC, FORK, EXEC");
    EXPECT_EQ(errorOf(R"({"topology":"i7-4790","task":{"prev_cpu":1}})"), "state.json: waker: missing (at least {\"cpu\": N})");
    EXPECT_EQ(errorOf(R"({"topology":"i7-4790","waker":{"cpu":0},"task":{"prev_cpu":1},"cpus":[{"cpu":0,"curr":"idle"}]})"),
              "state.json: cpus[0].curr: CPU 0 is the waker's CPU in task context, so curr cannot be idle (use waker.context irq)");
    EXPECT_EQ(errorOf("{" + base + R"(,"task":{"prev_cpu":1},"cpus":[{"cpu":2},{"cpu":2}]})"), "state.json: cpus[1].cpu: CPU 2 is listed twice");
}

TEST(StateJson, ExamplesCoverEveryReasonCode) {
    const std::filesystem::path dir = std::filesystem::path(SCHEDLAB_SOURCE_DIR) / "resources/examples/explain";
    std::set<std::string> seen;
    int files = 0;
    for (const auto& ent : std::filesystem::directory_iterator(dir)) {
        if (ent.path().extension() != ".json") continue;
        ++files;
        ExplainInput in = loadExplainState(ent.path().string());
        Decision d = decide(*in.state, in.knobs, in.task, in.waker, in.wake_flags, false);
        // Each example is named after the reason code it demonstrates.
        const std::string stem = ent.path().stem().string();
        std::string want = stem.substr(stem.find('-') + 1);
        std::set<std::string> got = {toString(d.stage0), toString(d.stage1), toString(d.idlest), toString(d.stage2)};
        if (d.wakelist_cross_l2) got.insert("WAKELIST_CROSS_L2");  // C's flag: a wakelist decision, not a placement
        EXPECT_TRUE(got.count(want)) << ent.path() << " gives " << d.reasons();
        for (auto& g : got) seen.insert(g);
    }
    EXPECT_GE(files, 30);
    const char* codes[] = {
        "TTWU_SELF", "TTWU_RUNNABLE", "TTWU_ONCPU_WAKELIST", "AFFINITY_SINGLE", "FALLBACK_RQ", "WAKE_WIDE", "AFFINE_NOT_ALLOWED", "AFFINE_SAME_CPU",
        "AFFINE_NO_DOMAIN", "AFFINE_IDLE_PREV", "AFFINE_IDLE_THIS", "AFFINE_SYNC", "AFFINE_PREV_IDLE", "AFFINE_WEIGHT_SYNC_THIS",
        "AFFINE_WEIGHT_THIS", "AFFINE_WEIGHT_PREV", "SLOW_PATH_IDLEST", "SLOW_NO_DOMAIN", "DEBOUNCE_PLACED", "DEBOUNCE_COLD_LLC", "IDLEST_SCHED_IDLE",
        "IDLEST_SHALLOW", "IDLEST_LEAST_LOADED", "IDLEST_STAY_LOCAL", "SIS_TARGET_IDLE", "SIS_TARGET_SCHED_IDLE", "SIS_PREV_IDLE",
        "SIS_KTHREAD_STACK", "SIS_RECENT", "SIS_ASYM_CAPACITY", "SIS_NO_LLC", "SIS_IDLE_SMT", "SIS_IDLE_CORE", "SIS_IDLE_CPU",
        "SIS_IDLE_CPU_FROM_CORESCAN", "SIS_UTIL_ABORT", "SIS_SCAN_EXHAUSTED", "SIS_FALLBACK_TARGET",
        // the follow-up patches
        "AFFINE_PREV_ALMOST_IDLE", "AFFINE_WAKE_ON_CURRENT", "MIGRATION_RATELIMIT", "SIS_TARGET_IDLE_HINT", "SIS_TARGET_FITS", "SIS_PREV_FITS",
        "SIS_RECENT_FITS", "SIS_BIAS_PREV_IDLE", "SIS_BIAS_PREV_FITS", "SIS_BIAS_PREV_FALLBACK", "SIS_CURRENT", "WAKELIST_CROSS_L2"};
    for (const char* c : codes) EXPECT_TRUE(seen.count(c)) << "no example gives " << c;
}

TEST(StateJson, NestingIsBoundedAndHugeNumbersAreRefusedByName) {
    auto nested = [](int depth) {
        std::string s;
        for (int i = 0; i < depth; ++i) s += "[";
        s += "1";
        for (int i = 0; i < depth; ++i) s += "]";
        return s;
    };
    EXPECT_NO_THROW(parseJsonOrThrow(nested(kMaxJsonDepth), "ok.json"));
    try {
        parseJsonOrThrow(nested(kMaxJsonDepth + 1), "deep.json");
        ADD_FAILURE() << "65 levels accepted";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "deep.json: JSON nested more than 64 levels deep");
    }
    EXPECT_THROW(parseJsonOrThrow(nested(1'000'000), "deeper.json"), InputError) << "a million levels: an error, not a stack overflow";
    EXPECT_EQ(errorOf(R"({"topology": "i7-4790", "waker": {"cpu": 1e400}})"), "state.json: a JSON number too large for a double (such as 1e400)");
}

TEST(StateJson, DuplicateKeysAndIntegersPastInt64AreRefusedByName) {
    EXPECT_EQ(errorOf(R"({"topology": "i7-4790", "waker": {"cpu": 0, "cpu": 1}, "task": {"prev_cpu": 1}})"),
              "state.json: cpu: given twice in one object (which one counts would be a guess)");
    // The same key in two objects is fine.
    EXPECT_NO_THROW(parseJsonOrThrow(R"({"a": {"cpu": 0}, "b": {"cpu": 1}, "cpu": 2})", "ok.json"));
    EXPECT_EQ(errorOf(R"({"topology": "i7-4790", "now_ns": 9223372036854775808, "waker": {"cpu": 0}, "task": {"prev_cpu": 1}})"),
              "state.json: now_ns: 9223372036854775808 is too large (maximum 9223372036854775807)");
}

TEST(StateJson, AJsonFileOverSixteenMegabytesIsRefusedBeforeItIsRead) {
    const auto path = std::filesystem::temp_directory_path() / ("schedlab-big-" + std::to_string(::getpid()) + ".json");
    {
        std::ofstream f(path, std::ios::binary);
        f << "{\"description\": \"" << std::string(17u << 20, 'x') << "\"}";
    }
    try {
        (void)readFileOrThrow(path.string());
        ADD_FAILURE() << "a 17 MB file was read";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), path.string() + ": 17 MB: more than the 16 MB a scenario, state or topology file may be");
    }
    std::filesystem::remove(path);
}
