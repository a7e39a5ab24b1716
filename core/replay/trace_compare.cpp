// SPDX-License-Identifier: GPL-2.0-or-later
// trace_compare.cpp: two traces side by side (see trace_compare.h).
#include "replay/trace_compare.h"

#include "replay/replay.h"
#include "sim/report.h"
#include "replay/trace_snapshot.h"
#include "replay/wakeup_window.h"

#include <fmt/format.h>

#include <filesystem>

namespace sched {

namespace {

/// The part of a trace a comparison looks at: [from, to] in its own clock.
struct Window {
    std::int64_t from = 0, to = 0;
};

Window windowOf(const Trace& t, bool workloadOnly) {
    auto [t0, t1] = traceSpan(t);
    if (workloadOnly) {
        if (t.workload_start >= 0) t0 = std::max(t0, t.workload_start);
        if (t.workload_end >= 0) t1 = std::min(t1, t.workload_end);
    }
    return {t0, std::max(t0, t1)};
}

/// The aggregates of [from, to]: the snapshot at `to` minus the one at `from`.
struct Totals {
    Snapshot end, start;
    double seconds = 0;
};

}  // namespace

std::string traceCompareTable(const Trace& base, const Trace& patch, std::shared_ptr<const Topology> topo, const Knobs& baseKnobs,
                              const Knobs& patchKnobs, const TraceCompareOptions& o) {
    const Knobs* knobs[2] = {&baseKnobs, &patchKnobs};
    const Trace* tr[2] = {&base, &patch};
    Totals tot[2];
    AgreeReport ag[2];
    for (int k = 0; k < 2; ++k) {
        const Window w = windowOf(*tr[k], o.workload_only);
        TraceViewOptions vo;
        vo.arrow_span_ns = 0;
        vo.sample_rows = 1;
        tot[k].start = traceSnapshot(*tr[k], topo, w.from, "base", vo);
        vo.latency_from = w.from;
        tot[k].end = traceSnapshot(*tr[k], topo, w.to, "patch", vo);
        tot[k].seconds = double(w.to - w.from) / 1e9;
        if (o.agreement) {
            AgreeOptions ao;
            ao.workload_only = o.workload_only;
            ag[k] = agree(*tr[k], topo, *knobs[k], ao);
        }
    }
    std::vector<CompareRow> rows;
    auto section = [&](const std::string& l) { rows.push_back({l, {}, 0, 0, true}); };
    auto add = [&](const std::string& l, int dec, int dir, auto&& f) { rows.push_back({l, {double(f(0)), double(f(1))}, dec, dir, false}); };
    auto diff = [&](auto member) { return [&, member](int k) { return double(tot[k].end.*member - tot[k].start.*member); }; };
    section("trace");
    add("span (s)", 3, 0, [&](int k) { return tot[k].seconds; });
    add("events", 0, 0, diff(&Snapshot::events));
    section("wakeups");
    add("sched_waking", 0, 0, diff(&Snapshot::ttwu_count));
    add("  ttwu_local", 0, 0, diff(&Snapshot::ttwu_local));
    add("  wakelist (IPI)", 0, 0, diff(&Snapshot::ttwu_wakelist));
    add("context switches", 0, 0, diff(&Snapshot::ctx_switches));
    add("wakeups per second", 0, 0,
        [&](int k) { return tot[k].seconds > 0 ? double(tot[k].end.ttwu_count - tot[k].start.ttwu_count) / tot[k].seconds : 0.0; });
    section("migrations");
    auto migs = [&](int k, int c) {
        return double(tot[k].end.migrations_by_cause[std::size_t(c)] - tot[k].start.migrations_by_cause[std::size_t(c)]);
    };
    add("migrations", 0, -1, [&](int k) {
        double s = 0;
        for (int c = 0; c < kMigrationCauses; ++c) s += migs(k, c);
        return s;
    });
    add("  at wakeup", 0, 0, [&](int k) { return migs(k, int(MigrationCause::wakeup)); });
    add("  at fork", 0, 0, [&](int k) { return migs(k, int(MigrationCause::fork)); });
    add("  by load balancing", 0, 0, [&](int k) {
        double s = 0;
        for (int c = 0; c < kMigrationCauses; ++c)
            if (c != int(MigrationCause::wakeup) && c != int(MigrationCause::fork)) s += migs(k, c);
        return s;
    });
    section("wakeup latency (usec), sched_waking to switch-in");
    for (double p : {50.0, 75.0, 90.0, 95.0, 99.0, 99.9})
        add(fmt::format("  p{}", p), 1, -1, [&, p](int k) { return double(tot[k].end.wakeup_latency.percentile(p)) / 1000.0; });
    add("  max", 1, -1, [&](int k) { return double(tot[k].end.wakeup_latency.max()) / 1000.0; });
    // How long the chosen CPU saw nothing of the wakee: a kernel's recording and a simulation's export alike.
    WakeupWindows win[2];
    for (int k = 0; k < 2; ++k) {
        const Window w = windowOf(*tr[k], o.workload_only);
        win[k] = wakeupWindows(*tr[k], w.from, w.to);
    }
    section("the wakeup's window (usec), sched_waking to sched_wakeup");
    for (double p : {50.0, 90.0, 99.0})
        add(fmt::format("  on the waker's CPU, p{}", p), 2, 0, [&, p](int k) { return double(win[k].same_cpu.percentile(p)) / 1000.0; });
    for (double p : {50.0, 90.0, 99.0})
        add(fmt::format("  on another CPU, p{}", p), 2, 0, [&, p](int k) { return double(win[k].other_cpu.percentile(p)) / 1000.0; });
    section("CPUs");
    // rq_avg and busy_frac average from the trace's start: the window's share from the two ends.
    auto windowAvg = [&](int k, auto member) {
        const Snapshot& a = tot[k].start;
        const Snapshot& b = tot[k].end;
        const double t0 = double(a.now - a.measure_start), t1 = double(b.now - b.measure_start);
        double s = 0;
        for (std::size_t c = 0; c < b.cpus.size(); ++c) s += double(b.cpus[c].*member) * t1 - double(a.cpus[c].*member) * t0;
        return t1 > t0 ? s / (t1 - t0) : 0.0;
    };
    add("mean nr_running", 2, 0,
        [&](int k) { return tot[k].end.cpus.empty() ? 0.0 : windowAvg(k, &CpuView::rq_avg) / double(tot[k].end.cpus.size()); });
    add("busy (htop %)", 0, 0, [&](int k) { return windowAvg(k, &CpuView::busy_frac) * 100.0; });
    if (o.agreement) {
        section(baseKnobs.presetName == patchKnobs.presetName
                    ? fmt::format("schedlab's path ({}) on each trace", baseKnobs.presetName)
                    : fmt::format("schedlab's path ({} / {}) on each trace", baseKnobs.presetName, patchKnobs.presetName));
        add("decisions", 0, 0, [&](int k) { return double(ag[k].decisions); });
        add("  moved by the kernel (%)", 1, 0, [&](int k) { return ag[k].decisions ? 100.0 * double(ag[k].moved) / double(ag[k].decisions) : 0.0; });
        add("  agreement (%)", 1, 1, [&](int k) { return ag[k].decisions ? 100.0 * double(ag[k].agree) / double(ag[k].decisions) : 0.0; });
        add("  agreement, moved ones (%)", 1, 1, [&](int k) { return ag[k].moved ? 100.0 * double(ag[k].agree_moved) / double(ag[k].moved) : 0.0; });
        add("  \"stay on prev\" (%)", 1, 0, [&](int k) { return ag[k].decisions ? 100.0 * double(ag[k].stay_prev) / double(ag[k].decisions) : 0.0; });
    }
    auto name = [](const Trace& t) { return std::filesystem::path(t.file).filename().string(); };
    std::string out;
    out += fmt::format("# base:  {} ({} events on {} CPUs{})\n", base.file, base.events.size(), base.nr_cpus,
                       base.clock.empty() ? "" : ", clock " + base.clock);
    out += fmt::format("# patch: {} ({} events on {} CPUs{})\n", patch.file, patch.events.size(), patch.nr_cpus,
                       patch.clock.empty() ? "" : ", clock " + patch.clock);
    out += fmt::format("# machine: {} ({} CPUs); {}\n", topo->name(), topo->nrCpus(),
                       o.workload_only ? "between WORKLOAD_START and WORKLOAD_END" : "whole traces");
    out += "# change: patch vs base; (+) marks a change for the better, (-) for the worse\n\n";
    return out + compareRowsText(rows, name(base), name(patch) == name(base) ? "patch" : name(patch));
}

}  // namespace sched
