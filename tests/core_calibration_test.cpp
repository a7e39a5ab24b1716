// SPDX-License-Identifier: GPL-2.0-or-later
// core_calibration_test.cpp: the committed schedlab-calibrate run (resources/calibration/) and
// the cost-model defaults it gives the x86 presets (docs/workloads.md: Calibration).
#include "sim/calibration.h"
#include "sim/cost_model.h"
#include "topology/topology.h"
#include "util/input_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace sched;

// The run built into the core is the file under resources/calibration/, and it names its CPU.
TEST(Calibration, TheCommittedRunIsBuiltInAndNamesItsCpu) {
    std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/" + x86Calibration().file);
    ASSERT_TRUE(in) << x86Calibration().file;
    std::stringstream text;
    text << in.rdbuf();
    const Calibration file = parseCalibration(text.str(), x86Calibration().file);
    EXPECT_EQ(file.median_ns, x86Calibration().median_ns);
    EXPECT_NE(file.cpu.find("AuthenticAMD family 25"), std::string::npos) << file.cpu;
    EXPECT_FALSE(file.kernel.empty());
    for (const auto& [key, ns] : file.median_ns) EXPECT_TRUE(std::isfinite(ns) && ns > 0) << key;
    for (const char* key : {"pipe_write_nowake", "pipe_read_nowake", "pipe_write_wake_local", "futex_wake_nowaiter"})
        EXPECT_GT(file.figure(key), 0) << key;
}

// Every x86 family's per-core figures come from the run: the syscalls as measured, the local
// wakeup as the difference of two writes, its window's select as the wakeup less the rq lock's
// hold. The other families keep their estimates.
TEST(Calibration, TheX86PresetsTakeTheMeasuredPerCoreFigures) {
    const Calibration& c = x86Calibration();
    for (const char* preset : {"epyc-9654-2s", "bergamo-9754-2s", "spr-2s", "i7-4790", "qemu-2s2c2t"}) {
        SCOPED_TRACE(preset);
        const CostModel m = CostModel::forTopology(Topology::preset(preset));
        EXPECT_NE(m.machine.find("per-core figures measured"), std::string::npos) << m.machine;
        EXPECT_EQ(m.pipe_write, std::llround(c.figure("pipe_write_nowake")));
        EXPECT_EQ(m.pipe_read, std::llround(c.figure("pipe_read_nowake")));
        EXPECT_EQ(m.futex_wake, std::llround(c.figure("futex_wake_nowaiter")));
        const auto local = std::llround(c.figure("pipe_write_wake_local") - c.figure("pipe_write_nowake"));
        EXPECT_EQ(m.wakeup_local, local);
        EXPECT_EQ(m.ttwu_select, local - m.rq_lock_hold);
        EXPECT_GT(m.wakeup_remote_direct, m.wakeup_local);
    }
    // The families still differ where a VM cannot measure: C-states and cache distances.
    EXPECT_NE(CostModel::forTopology(Topology::preset("epyc-9654-2s")).refill_cross_llc_line,
              CostModel::forTopology(Topology::preset("spr-2s")).refill_cross_llc_line);
    const CostModel power = CostModel::forTopology(Topology::preset("power10-smt8"));
    EXPECT_EQ(power.machine, "power10");
    EXPECT_EQ(power.pipe_write, CostModel{}.pipe_write);
}

// A damaged or foreign file gets one clear line naming the file and the field.
TEST(Calibration, ABadFileIsRefusedNamingTheField) {
    auto why = [](const std::string& text) {
        try {
            parseCalibration(text, "x.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(why("{").rfind("x.json: not JSON", 0), 0u) << why("{");
    EXPECT_EQ(why("{").find('\n'), std::string::npos);
    EXPECT_EQ(why(R"({"format": "other"})"), "x.json: format: not a schedlab-calibrate/1 file");
    EXPECT_EQ(why(R"({"format": "schedlab-calibrate/1", "figures": []})"), "x.json: figures: not an object");
    EXPECT_EQ(why(R"({"format": "schedlab-calibrate/1", "figures": {"pipe_read_nowake": {"available": true, "median_ns": -3}}})"),
              "x.json: figures.pipe_read_nowake.median_ns: not a positive number");
    // An unavailable figure is no figure: the estimate stays.
    const Calibration c = parseCalibration(R"({"format": "schedlab-calibrate/1", "figures": {"pipe_read_nowake": {"available": false}}})", "x.json");
    EXPECT_LT(c.figure("pipe_read_nowake"), 0);
    CostModel m;
    EXPECT_TRUE(applyCalibration(m, c).empty());
    EXPECT_EQ(m.pipe_read, CostModel{}.pipe_read);
}
