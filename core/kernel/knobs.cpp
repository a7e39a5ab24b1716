// SPDX-License-Identifier: GPL-2.0-or-later
// knobs.cpp: knob table (name <-> member), presets for the patch variants of
// docs/patch-variants.md, and text parsing for the CLI and scenario files.
#include "kernel/knobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>

namespace sched {

const char* kernelVersionName(KernelVersion v) { return v == KernelVersion::V6_1 ? "6.1" : "6.5"; }
const char* claimModeName(ClaimMode m) {
    switch (m) {
    case ClaimMode::Off: return "off";
    case ClaimMode::Sis: return "sis";
    case ClaimMode::SelectTaskRq: return "select_task_rq";
    }
    return "?";
}

std::optional<std::int64_t> parseDurationNs(const std::string& text) {
    static const std::pair<const char*, std::int64_t> kUnits[] = {{"ns", 1}, {"us", 1000}, {"\u00b5s", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    std::string num = text;
    std::int64_t mult = 1;
    for (const auto& [unit, k] : kUnits) {
        const std::size_t n = std::char_traits<char>::length(unit);
        if (num.size() > n && num.compare(num.size() - n, n, unit) == 0) {
            num.resize(num.size() - n);
            mult = k;
            break;
        }
    }
    // Integers exactly; decimals ("1.5ms") rounded to the nearest ns.
    std::int64_t i = 0;
    auto r = std::from_chars(num.data(), num.data() + num.size(), i);
    if (r.ec == std::errc() && r.ptr == num.data() + num.size()) {
        if (i > INT64_MAX / mult || i < INT64_MIN / mult) return std::nullopt;
        return i * mult;
    }
    double d = 0;
    auto rd = std::from_chars(num.data(), num.data() + num.size(), d);
    if (rd.ec != std::errc() || rd.ptr != num.data() + num.size() || !(std::abs(d * double(mult)) < 9e18)) return std::nullopt;
    return std::llround(d * double(mult));
}

const char* idleDelayClockName(IdleDelayClock c) { return c == IdleDelayClock::IdleEndTime ? "idle_end_time" : "clock_idle"; }

namespace {

struct KnobDesc {
    std::string name;
    std::function<void(Knobs&, const std::string&)> set;
    std::function<std::string(const Knobs&)> get;
};

bool parseBool(const std::string& name, const std::string& v) {
    std::string s = v;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (s == "1" || s == "true" || s == "on" || s == "yes") return true;
    if (s == "0" || s == "false" || s == "off" || s == "no") return false;
    throw KnobError(fmt::format("knob {}: '{}' is not a boolean (use 0/1, true/false, on/off)", name, v));
}

std::int64_t parseInt(const std::string& name, const std::string& v, std::int64_t lo, std::int64_t hi) {
    std::int64_t x = 0;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, "_ns") == 0) {
        // Time knobs take a unit: "2ms", "500us".
        const auto d = parseDurationNs(v);
        if (!d) throw KnobError(fmt::format("knob {}: '{}' is not a duration (e.g. 1000000, 2ms, 500us)", name, v));
        x = *d;
    } else {
        auto r = std::from_chars(v.data(), v.data() + v.size(), x);
        if (r.ec != std::errc() || r.ptr != v.data() + v.size()) throw KnobError(fmt::format("knob {}: '{}' is not an integer", name, v));
    }
    if (x < lo || x > hi) throw KnobError(fmt::format("knob {}: {} is outside {}..{}", name, x, lo, hi));
    return x;
}

// The knob table, several knobs to a line (clang-format would put each on its own).
// clang-format off
#define BOOL_KNOB(F) \
    KnobDesc{#F, [](Knobs& k, const std::string& v) { k.F = parseBool(#F, v); }, [](const Knobs& k) { return std::string(k.F ? "1" : "0"); }}

const std::vector<KnobDesc>& table() {
    static const std::vector<KnobDesc> t = {
        BOOL_KNOB(GENTLE_FAIR_SLEEPERS), BOOL_KNOB(START_DEBIT), BOOL_KNOB(NEXT_BUDDY), BOOL_KNOB(LAST_BUDDY),
        BOOL_KNOB(CACHE_HOT_BUDDY), BOOL_KNOB(WAKEUP_PREEMPTION), BOOL_KNOB(TTWU_QUEUE), BOOL_KNOB(SIS_PROP),
        BOOL_KNOB(SIS_UTIL), BOOL_KNOB(WA_IDLE), BOOL_KNOB(WA_WEIGHT), BOOL_KNOB(WA_BIAS), BOOL_KNOB(UTIL_EST), BOOL_KNOB(UTIL_EST_FASTUP), BOOL_KNOB(LB_MIN),
        BOOL_KNOB(idle_retain_tick), BOOL_KNOB(timer_migration),
        BOOL_KNOB(NI_RANDOM), BOOL_KNOB(ALT_PERIOD), BOOL_KNOB(BASE_SLICE),
        KnobDesc{"EAS",
                 [](Knobs& k, const std::string& v) {
                     if (parseBool("EAS", v))
                         throw KnobError("knob EAS: energy-aware scheduling (find_energy_efficient_cpu) is not modelled");
                     k.EAS = false;
                 },
                 [](const Knobs& k) { return std::string(k.EAS ? "1" : "0"); }},
        BOOL_KNOB(SIS_DEBOUNCE),
        BOOL_KNOB(proxy_exec),
        BOOL_KNOB(WA_ALMOST_IDLE_PREV),
        KnobDesc{"almost_idle_load", [](Knobs& k, const std::string& v) { k.almost_idle_load = parseInt("almost_idle_load", v, 0, 1000000); },
                 [](const Knobs& k) { return std::to_string(k.almost_idle_load); }},
        BOOL_KNOB(ttwu_queue_l2c),
        KnobDesc{"migration_ratelimit_ns", [](Knobs& k, const std::string& v) { k.migration_ratelimit_ns = parseInt("migration_ratelimit_ns", v, 0, 1000000000); },
                 [](const Knobs& k) { return std::to_string(k.migration_ratelimit_ns); }},
        BOOL_KNOB(migration_ratelimit_adaptive),
        BOOL_KNOB(UTIL_FITS_CAPACITY), BOOL_KNOB(SELECT_BIAS_PREV), BOOL_KNOB(SIS_CURRENT), BOOL_KNOB(SIS_CACHE),
        KnobDesc{"tg_load_avg_ratelimit_ns", [](Knobs& k, const std::string& v) { k.tg_load_avg_ratelimit_ns = parseInt("tg_load_avg_ratelimit_ns", v, 0, 1000000000); },
                 [](const Knobs& k) { return std::to_string(k.tg_load_avg_ratelimit_ns); }},
        KnobDesc{"hz", [](Knobs& k, const std::string& v) {
                     auto hz = parseInt("hz", v, 100, 1000);
                     if (hz != 100 && hz != 250 && hz != 300 && hz != 1000) throw KnobError("knob hz: must be 100, 250, 300 or 1000");
                     k.hz = int(hz);
                 }, [](const Knobs& k) { return std::to_string(k.hz); }},
        KnobDesc{"migration_cost_ns", [](Knobs& k, const std::string& v) { k.migration_cost_ns = parseInt("migration_cost_ns", v, 0, 1000000000); },
                 [](const Knobs& k) { return std::to_string(k.migration_cost_ns); }},
        KnobDesc{"sis_scan_cost_ns", [](Knobs& k, const std::string& v) { k.sis_scan_cost_ns = parseInt("sis_scan_cost_ns", v, 0, 1000000); },
                 [](const Knobs& k) { return std::to_string(k.sis_scan_cost_ns); }},
        KnobDesc{"idle_delay_ns", [](Knobs& k, const std::string& v) { k.idle_delay_ns = parseInt("idle_delay_ns", v, 0, 1000000000); },
                 [](const Knobs& k) { return std::to_string(k.idle_delay_ns); }},
        KnobDesc{"idle_delay_max_running", [](Knobs& k, const std::string& v) {
                     k.idle_delay_max_running = int(parseInt("idle_delay_max_running", v, -1, 1000000));
                 }, [](const Knobs& k) { return std::to_string(k.idle_delay_max_running); }},
        KnobDesc{"idle_delay_clock", [](Knobs& k, const std::string& v) {
                     if (v == "idle_end_time" || v == "v1") k.idle_delay_clock = IdleDelayClock::IdleEndTime;
                     else if (v == "clock_idle" || v == "v3") k.idle_delay_clock = IdleDelayClock::ClockIdle;
                     else throw KnobError(fmt::format("knob idle_delay_clock: '{}' (use idle_end_time or clock_idle)", v));
                 }, [](const Knobs& k) { return std::string(idleDelayClockName(k.idle_delay_clock)); }},
        KnobDesc{"claim", [](Knobs& k, const std::string& v) {
                     if (v == "off") k.claim = ClaimMode::Off;
                     else if (v == "sis") k.claim = ClaimMode::Sis;
                     else if (v == "select_task_rq") k.claim = ClaimMode::SelectTaskRq;
                     else throw KnobError(fmt::format("knob claim: '{}' (use off, sis or select_task_rq)", v));
                 }, [](const Knobs& k) { return std::string(claimModeName(k.claim)); }},
        KnobDesc{"kernel", [](Knobs& k, const std::string& v) {
                     if (v == "6.1") k.kernel = KernelVersion::V6_1;
                     else if (v == "6.5") k.kernel = KernelVersion::V6_5;
                     else throw KnobError(fmt::format("knob kernel: '{}' (use 6.1 or 6.5)", v));
                 }, [](const Knobs& k) { return std::string(kernelVersionName(k.kernel)); }},
    };
    return t;
}
// clang-format on

const KnobDesc& find(const std::string& name) {
    for (auto& d : table())
        if (d.name == name) return d;
    // Features are also accepted in lower case (wa_idle=0).
    std::string up = name;
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    for (auto& d : table())
        if (d.name == up && std::all_of(d.name.begin(), d.name.end(), [](char c) { return !std::islower((unsigned char)c); })) return d;
    throw KnobError(fmt::format("unknown knob '{}'", name));
}

struct PresetDesc {
    std::string description;
    std::function<void(Knobs&)> apply;
};

const std::map<std::string, PresetDesc>& presetTable() {
    static const std::map<std::string, PresetDesc> t = {
        {"baseline", {"Linux 6.1 as released (Debian 6.1.192)", [](Knobs&) {}}},
        {"idle-delay-v1",
         {"idle_cpu() true for 1 ms after leaving idle (rq->idle_end_time), any load (docs/patch-variants.md: Idle delay)",
          [](Knobs& k) {
              k.idle_delay_ns = 1000000;
              k.idle_delay_max_running = -1;
              k.idle_delay_clock = IdleDelayClock::IdleEndTime;
          }}},
        {"idle-delay-v2",
         {"as v1, only while nr_running <= 4 (docs/patch-variants.md: Idle delay)",
          [](Knobs& k) {
              k.idle_delay_ns = 1000000;
              k.idle_delay_max_running = 4;
              k.idle_delay_clock = IdleDelayClock::IdleEndTime;
          }}},
        {"idle-delay-v3",
         {"nr_running <= 4 and rq->clock_idle within 1 ms (docs/patch-variants.md: Idle delay)",
          [](Knobs& k) {
              k.idle_delay_ns = 1000000;
              k.idle_delay_max_running = 4;
              k.idle_delay_clock = IdleDelayClock::ClockIdle;
          }}},
        {"claim-wakeup",
         {"claim the CPU the idle scan returns until it next goes idle (docs/patch-variants.md: Claims)",
          [](Knobs& k) { k.claim = ClaimMode::Sis; }}},
        {"claim-wakeup-str",
         {"claim every CPU select_task_rq returns (docs/patch-variants.md: Claims)", [](Knobs& k) { k.claim = ClaimMode::SelectTaskRq; }}},
        {"sis-debounce",
         {"keep a task placed this jiffy on prev; stay in prev's LLC when cold (docs/patch-variants.md: SIS_DEBOUNCE)",
          [](Knobs& k) { k.SIS_DEBOUNCE = true; }}},
        {"proxy-exec-v6",
         {"proxy execution v6 (Stultz, Nov 2023): mutex handoffs, blocked donors stay queued and run their lock's owner, chain "
          "migration to the owner's CPU (docs/patch-variants.md: Proxy execution)",
          [](Knobs& k) { k.proxy_exec = true; }}},
        {"almost-idle-prev",
         {"B: wake_affine_idle() takes prev when idle or its load without p is <= 5, and select_idle_sibling() is told it is idle "
          "(Desnoyers, 2023-08-10; docs/patch-variants.md: Follow-ups)",
          [](Knobs& k) { k.WA_ALMOST_IDLE_PREV = true; }}},
        {"ttwu-queue-l2c",
         {"C: a remote wakeup takes the target's rq lock directly only within an L2, else wakelist + IPI (Desnoyers, v3 2023-08-22; "
          "docs/patch-variants.md: Follow-ups)",
          [](Knobs& k) { k.ttwu_queue_l2c = true; }}},
        {"migrate-ratelimit",
         {"D 1/2: an affine wakeup stays on prev for 2 ms after the task migrated (Desnoyers, RFC 2023-09-05; docs/patch-variants.md: "
          "Follow-ups)",
          [](Knobs& k) { k.migration_ratelimit_ns = 2000000; }}},
        {"migrate-ratelimit-adaptive",
         {"D 1/2 + 2/2: up to 10 migrations per 2 ms window, the quota halved when used up (Desnoyers, RFC 2023-09-05; "
          "docs/patch-variants.md: Follow-ups)",
          [](Knobs& k) {
              k.migration_ratelimit_ns = 2000000;
              k.migration_ratelimit_adaptive = true;
          }}},
        {"util-fits-capacity",
         {"G 1/2: target, prev and recent_used_cpu also taken when the task's util fits their remaining capacity (Desnoyers, v2 "
          "2023-10-19; docs/patch-variants.md: Follow-ups)",
          [](Knobs& k) { k.UTIL_FITS_CAPACITY = true; }}},
        {"select-bias-prev",
         {"G 2/2: prev checked before target, and taken when the LLC scan finds nothing (Desnoyers, v2 2023-10-19; "
          "docs/patch-variants.md: Follow-ups)",
          [](Knobs& k) { k.SELECT_BIAS_PREV = true; }}},
        {"util-fits-bias-prev",
         {"G: UTIL_FITS_CAPACITY and SELECT_BIAS_PREV together, as measured (Desnoyers, v2 2023-10-19; docs/patch-variants.md: "
          "Follow-ups)",
          [](Knobs& k) {
              k.UTIL_FITS_CAPACITY = true;
              k.SELECT_BIAS_PREV = true;
          }}},
        {"tg-ratelimit",
         {"E: update tg->load_avg at most once per ms per cfs_rq (Aaron Lu, 2023-08-23, merged as afc1996859a2; docs/patch-variants.md: "
          "Follow-ups)",
          [](Knobs& k) { k.tg_load_avg_ratelimit_ns = 1000000; }}},
        {"sis-cache",
         {"F: a short sleeper's idle CPU is cache-hot for its average short sleep and the idle scan passes it over (Chen Yu, v2 "
          "2023-11-21; docs/patch-variants.md: Follow-ups)",
          [](Knobs& k) { k.SIS_CACHE = true; }}},
        {"sis-current",
         {"H: a short waker and wakee that wake each other run on the waking CPU (Chen Yu, v8 2023-04-29; docs/patch-variants.md: "
          "Follow-ups)",
          [](Knobs& k) { k.SIS_CURRENT = true; }}},
    };
    return t;
}

}  // namespace

Knobs Knobs::preset(const std::string& name) {
    auto it = presetTable().find(name);
    if (it == presetTable().end()) {
        std::string known;
        for (const auto& k : presetNames()) known += (known.empty() ? "" : ", ") + k;
        throw KnobError(fmt::format("unknown knob preset '{}' (known: {})", name, known));
    }
    Knobs k;
    it->second.apply(k);
    k.presetName = name;
    return k;
}

std::vector<std::string> Knobs::presetNames() {
    // Presentation order: baseline first, then the variants in spec order.
    return {"baseline",           "idle-delay-v1",    "idle-delay-v2",       "idle-delay-v3",  "claim-wakeup",      "claim-wakeup-str",
            "sis-debounce",       "proxy-exec-v6",    "almost-idle-prev",    "ttwu-queue-l2c", "migrate-ratelimit", "migrate-ratelimit-adaptive",
            "util-fits-capacity", "select-bias-prev", "util-fits-bias-prev", "sis-current",    "sis-cache",         "tg-ratelimit"};
}

std::string Knobs::presetDescription(const std::string& name) {
    auto it = presetTable().find(name);
    return it == presetTable().end() ? std::string{} : it->second.description;
}

void Knobs::set(const std::string& name, const std::string& value) {
    if (name == "preset") {
        *this = preset(value);
        return;
    }
    find(name).set(*this, value);
}

std::string Knobs::get(const std::string& name) const {
    if (name == "preset") return presetName;
    return find(name).get(*this);
}

std::vector<std::string> Knobs::names() {
    std::vector<std::string> v;
    for (auto& d : table()) v.push_back(d.name);
    return v;
}

std::vector<std::string> Knobs::diffFromBaseline() const {
    Knobs base;
    std::vector<std::string> out;
    for (auto& d : table())
        if (d.get(*this) != d.get(base)) out.push_back(d.name + "=" + d.get(*this));
    return out;
}

std::string Knobs::describe() const {
    Knobs ref = presetTable().count(presetName) ? Knobs::preset(presetName) : Knobs{};
    std::string extra;
    for (auto& d : table())
        if (d.get(*this) != d.get(ref)) extra += (extra.empty() ? "" : ", ") + d.name + "=" + d.get(*this);
    return extra.empty() ? presetName : fmt::format("{} ({})", presetName, extra);
}

}  // namespace sched
