// SPDX-License-Identifier: GPL-2.0-or-later
// core_knobs_test.cpp: presets are knob settings; text parsing; errors.
#include "kernel/knobs.h"

#include <gtest/gtest.h>

using namespace sched;

TEST(Knobs, PresetsAreKnobSettings) {
    Knobs b = Knobs::preset("baseline");
    EXPECT_TRUE(b.diffFromBaseline().empty());
    Knobs v1 = Knobs::preset("idle-delay-v1");
    EXPECT_EQ(v1.idle_delay_ns, 1000000);
    EXPECT_EQ(v1.idle_delay_max_running, -1);
    Knobs v2 = Knobs::preset("idle-delay-v2");
    EXPECT_EQ(v2.idle_delay_max_running, 4);
    EXPECT_EQ(v2.idle_delay_clock, IdleDelayClock::IdleEndTime);
    EXPECT_EQ(Knobs::preset("idle-delay-v3").idle_delay_clock, IdleDelayClock::ClockIdle);
    EXPECT_EQ(Knobs::preset("claim-wakeup").claim, ClaimMode::Sis);
    EXPECT_EQ(Knobs::preset("claim-wakeup-str").claim, ClaimMode::SelectTaskRq);
    EXPECT_TRUE(Knobs::preset("sis-debounce").SIS_DEBOUNCE);
    for (const auto& n : Knobs::presetNames()) EXPECT_NO_THROW(Knobs::preset(n)) << n;
}

TEST(Knobs, SetAndGetByName) {
    Knobs k;
    k.set("WA_IDLE", "0");
    k.set("wa_bias", "off");
    k.set("idle_delay_ns", "2ms");
    k.set("claim", "select_task_rq");
    k.set("kernel", "6.5");
    EXPECT_FALSE(k.WA_IDLE);
    EXPECT_FALSE(k.WA_BIAS);
    EXPECT_EQ(k.idle_delay_ns, 2000000);
    EXPECT_EQ(k.get("claim"), "select_task_rq");
    EXPECT_EQ(k.kernel, KernelVersion::V6_5);
    EXPECT_EQ(k.diffFromBaseline().size(), 5u);
    EXPECT_NE(k.describe().find("WA_IDLE=0"), std::string::npos);
}

TEST(Knobs, BadValuesNameTheKnob) {
    Knobs k;
    try {
        k.set("WA_IDLE", "maybe");
        FAIL();
    } catch (const KnobError& e) {
        EXPECT_NE(std::string(e.what()).find("WA_IDLE"), std::string::npos);
    }
    EXPECT_THROW(k.set("no_such_knob", "1"), KnobError);
    EXPECT_THROW(k.set("idle_delay_max_running", "-2"), KnobError);
    EXPECT_THROW(k.set("EAS", "1"), KnobError);
    EXPECT_THROW(Knobs::preset("idle-delay-v9"), KnobError);
}

TEST(Knobs, DurationsTakeUnitsAndDecimals) {
    EXPECT_EQ(parseDurationNs("2ms"), 2000000);
    EXPECT_EQ(parseDurationNs("500us"), 500000);
    EXPECT_EQ(parseDurationNs("1.5s"), 1500000000);
    EXPECT_EQ(parseDurationNs("1000"), 1000);
    EXPECT_EQ(parseDurationNs("7ns"), 7);
    EXPECT_EQ(parseDurationNs("5parsecs"), std::nullopt);
    EXPECT_EQ(parseDurationNs("ms"), std::nullopt);
    EXPECT_EQ(parseDurationNs("99999999999s"), std::nullopt);
    Knobs k;
    k.set("idle_delay_ns", "0.5ms");
    EXPECT_EQ(k.idle_delay_ns, 500000);
    EXPECT_THROW(k.set("idle_delay_ns", "soon"), KnobError);
}

TEST(Knobs, TheFollowUpPatchesArePresetsOfTheirParts) {
    // Every preset is listed, and every listed preset exists (presetNames() is the table's order).
    EXPECT_EQ(Knobs::presetNames().size(), 18u);
    EXPECT_EQ(Knobs::preset("tg-ratelimit").tg_load_avg_ratelimit_ns, 1000000);
    EXPECT_TRUE(Knobs::preset("sis-cache").SIS_CACHE);
    const Knobs b = Knobs::preset("almost-idle-prev");
    EXPECT_TRUE(b.WA_ALMOST_IDLE_PREV);
    EXPECT_EQ(b.almost_idle_load, 5);
    EXPECT_TRUE(Knobs::preset("ttwu-queue-l2c").ttwu_queue_l2c);
    EXPECT_EQ(Knobs::preset("migrate-ratelimit").migration_ratelimit_ns, 2000000);
    EXPECT_FALSE(Knobs::preset("migrate-ratelimit").migration_ratelimit_adaptive);
    EXPECT_TRUE(Knobs::preset("migrate-ratelimit-adaptive").migration_ratelimit_adaptive);
    const Knobs g = Knobs::preset("util-fits-bias-prev");
    EXPECT_TRUE(g.UTIL_FITS_CAPACITY && g.SELECT_BIAS_PREV);
    EXPECT_FALSE(Knobs::preset("util-fits-capacity").SELECT_BIAS_PREV);
    EXPECT_FALSE(Knobs::preset("select-bias-prev").UTIL_FITS_CAPACITY);
    EXPECT_TRUE(Knobs::preset("sis-current").SIS_CURRENT);
    // Each part is a knob by name, as the CLI's --set and the panel write them.
    Knobs k;
    k.set("migration_ratelimit_ns", "3ms");
    k.set("almost_idle_load", "8");
    k.set("SELECT_BIAS_PREV", "1");
    EXPECT_EQ(k.migration_ratelimit_ns, 3000000);
    EXPECT_EQ(k.get("almost_idle_load"), "8");
    EXPECT_EQ(k.diffFromBaseline().size(), 3u);
    EXPECT_THROW(k.set("almost_idle_load", "-1"), KnobError);
    try {
        Knobs::preset("nosuch");
        FAIL();
    } catch (const KnobError& e) {
        EXPECT_NE(std::string(e.what()).find("(known: baseline, idle-delay-v1, "), std::string::npos) << e.what();
    }
}
