// SPDX-License-Identifier: GPL-2.0-or-later
// agree_report.cpp: an agreement replay's report (see replay.h): the text the CLI prints, its
// JSON, the disagreement classes' names, and schedlab's final reasons over time for the views.
#include "replay/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

namespace sched {

const char* toString(DisagreeClass c) {
    switch (c) {
    case DisagreeClass::different_idle: return "different idle CPU";
    case DisagreeClass::sis_util_cutoff: return "SIS_UTIL cut-off";
    case DisagreeClass::wake_wide: return "wake_wide";
    case DisagreeClass::wake_affine: return "waker vs prev (wake_affine)";
    case DisagreeClass::unexplained: return "unexplained";
    case DisagreeClass::count_: break;
    }
    return "?";
}

std::string AgreeReport::text() const {
    auto pct = [](std::uint64_t a, std::uint64_t b) { return b ? fmt::format("{:5.1f} %", 100.0 * double(a) / double(b)) : std::string("    -  "); };
    std::string o;
    o += fmt::format("# schedlab agree: {}\n# topology {}, knobs {}, WF_SYNC: {}, nr_idle_scan at each {}\n", file, topology, knobs, sync,
                     nr_idle_scan_at);
    o += fmt::format("{:<44}{:>10}\n", "decisions", decisions);
    o += fmt::format("{:<44}{:>10}  {}\n", "  moved by the kernel (choice != prev)", moved, pct(moved, decisions));
    o += fmt::format("{:<44}{:>10}  {}\n", "agreement, all decisions", agree, pct(agree, decisions));
    o += fmt::format("{:<44}{:>10}  {}\n", "agreement, moved ones", agree_moved, pct(agree_moved, moved));
    o += fmt::format("{:<44}{:>10}  {}\n", "\"stay on prev\", all decisions", stay_prev, pct(stay_prev, decisions));
    o += fmt::format("{:<44}{:>10}  {}\n", "\"stay on prev\", moved ones", 0, pct(0, moved));
    o += fmt::format("{:<44}{:>10}  {}\n", "agreement without PELT/flips-cold ones", agree_warm, pct(agree_warm, warm));
    o += fmt::format("{:<44}{:>10}\n", "late decisions (mid-switch, then placed)", late);
    o += fmt::format("{:<44}{:>10}  {}\n", "racy decisions (a candidate CPU changed)", racy, pct(racy, decisions));
    o += fmt::format("{:<44}{:>10}  {}\n", "agreement without racy ones", agree - agree_racy, pct(agree - agree_racy, decisions - racy));
    if (inputs.decisions) {
        o += fmt::format("\nschedlab's exported inputs ({} of the decisions; {}):\n", inputs.decisions,
                         inputs.used ? "used instead of the reconstruction" : "ignored, the state reconstructed as for a kernel trace");
        o += fmt::format("  reconstruction off: WF_SYNC {}, in_task {}, nr_idle_scan {}, has_idle_cores {}, jiffies {}\n", inputs.sync,
                         inputs.in_task, inputs.scan, inputs.cores, inputs.jiffies);
        o += fmt::format("  PELT: mean |error| cpu_load {:.1f}, task_h_load {:.1f}; off by > 1/16 in {} decisions\n", inputs.load_err,
                         inputs.task_err, inputs.load_off);
    }
    if (timers.checked) {
        o += fmt::format("\nsleep timers (get_nohz_timer_target() at each hrtimer_start, against the CPU that expired it):\n");
        o += fmt::format("  {:<44}{:>8}\n", "checked", timers.checked);
        o += fmt::format("  {:<44}{:>8}  {}\n", "agreement", timers.agree, pct(timers.agree, timers.checked));
        o += fmt::format("  {:<44}{:>8}  {}\n", "moved by the kernel (expired on another CPU)", timers.moved_by_kernel,
                         pct(timers.moved_by_kernel, timers.checked));
        o += fmt::format("  {:<44}{:>8}  {}\n", "agreement, moved ones", timers.agree_moved, pct(timers.agree_moved, timers.moved_by_kernel));
        o += fmt::format("  {:<44}{:>8}\n", "kept local, schedlab moves (check_target)", timers.kept_local);
        o += fmt::format("  {:<44}{:>8}\n", "disagree", timers.disagree);
        for (const auto& x : timers.examples) o += fmt::format("    {}\n", x);
    }
    o += "\ndisagreements by class (docs/replay.md: Disagreement classes)\n";
    for (std::size_t c = 0; c < by_class.size(); ++c)
        o += fmt::format("  {:<30}{:>8}  {}\n", toString(DisagreeClass(c)), by_class[c], pct(by_class[c], decisions - agree));
    o += "\nchoices (idle / busy target)\n";
    for (const auto& [k, v] : choice_kinds) o += fmt::format("  {:<20}{:>8} idle {:>8} busy\n", k, v[0], v[1]);
    o += fmt::format("\nwakings of CFS tasks {}; not decisions:\n", wakings);
    for (const auto& [k, v] : not_decisions) o += fmt::format("  {:<44}{:>8}\n", k, v);
    o += fmt::format("  {:<44}{:>8}\n", "no wakeup later in the trace", no_choice);
    if (!pinned_pids.empty()) {
        std::string l;
        for (const auto& [pid, line] : pinned_pids) l += fmt::format(" {} (from line {})", pid, line);
        o += fmt::format("  pinned pids, inferred (docs/replay.md: Pinning from behaviour):{}\n", l);
    }
    o += fmt::format("  {:<44}{:>8}\n", "state unknown (a gap; the trace ends first)", unknown_state);
    o += fmt::format("cross-checks (0 on a consistent replay): prev mismatches {}, choice mismatches {}\n", prev_mismatch, choice_mismatch);
    for (std::size_t c = 0; c < examples.size(); ++c) {
        if (examples[c].empty()) continue;
        o += fmt::format(
            "\nfirst {} of \"{}\" (line: pid waker, this prev -> kernel / schedlab, reasons; per CPU I idle, i idle but runnable/pending, B busy, "
            "nr_running)\n",
            examples[c].size(), toString(DisagreeClass(c)));
        for (const AgreeRow& r : examples[c])
            o += fmt::format("  {}:{}: pid {} by {}, CPU {} prev {} -> kernel {} / schedlab {}{}, {}\n      [{}]\n", file, r.line, r.pid, r.waker,
                             r.this_cpu, r.prev, r.kernel, r.sim, r.sync ? " (sync)" : "", r.reasons, r.cpus);
    }
    o += "\nthe wakeup's window (sched_waking -> sched_wakeup of each wakeup in the trace)\n";
    o += windows.text();
    o += fmt::format("\nreplayed in {:.3f} s ({:.0f} decisions/s)\n", seconds, seconds > 0 ? double(decisions) / seconds : 0.0);
    return o;
}

nlohmann::json AgreeReport::json() const {
    nlohmann::json j;
    j["file"] = file;
    j["topology"] = topology;
    j["knobs"] = knobs;
    j["wf_sync"] = sync;
    j["nr_idle_scan_at"] = nr_idle_scan_at;
    j["wakings"] = wakings;
    auto hist = [](const LatencyHistogram& h) {
        nlohmann::json x = {{"count", h.count()}, {"max", h.max()}};
        for (double p : {10.0, 50.0, 90.0, 99.0}) x[fmt::format("p{}", p)] = h.percentile(p);
        return x;
    };
    j["wakeup_window_ns"] = {{"same_cpu", hist(windows.same_cpu)}, {"other_cpu", hist(windows.other_cpu)}, {"unpaired", windows.unpaired}};
    j["decisions"] = decisions;
    j["moved"] = moved;
    j["agree"] = agree;
    j["agree_moved"] = agree_moved;
    j["stay_on_prev"] = stay_prev;
    j["warm"] = warm;
    j["agree_warm"] = agree_warm;
    j["racy"] = racy;
    j["agree_without_racy"] = agree - agree_racy;
    j["late"] = late;
    j["not_decisions"] = not_decisions;
    nlohmann::json pins = nlohmann::json::object();
    for (const auto& [pid, line] : pinned_pids) pins[std::to_string(pid)] = line;
    j["pinned_pids"] = pins;
    j["no_wakeup_in_trace"] = no_choice;
    j["timers"] = {{"checked", timers.checked},         {"agree", timers.agree},           {"moved_by_kernel", timers.moved_by_kernel},
                   {"agree_moved", timers.agree_moved}, {"kept_local", timers.kept_local}, {"disagree", timers.disagree}};
    j["state_unknown"] = unknown_state;
    j["prev_mismatch"] = prev_mismatch;
    j["choice_mismatch"] = choice_mismatch;
    nlohmann::json cls = nlohmann::json::object();
    for (std::size_t c = 0; c < by_class.size(); ++c) {
        nlohmann::json ex = nlohmann::json::array();
        for (const AgreeRow& r : examples[c])
            ex.push_back({{"line", r.line},
                          {"pid", r.pid},
                          {"waker", r.waker},
                          {"this_cpu", r.this_cpu},
                          {"prev", r.prev},
                          {"kernel", r.kernel},
                          {"schedlab", r.sim},
                          {"sync", r.sync},
                          {"reasons", r.reasons},
                          {"cpus", r.cpus}});
        cls[toString(DisagreeClass(c))] = {{"count", by_class[c]}, {"first", ex}};
    }
    j["disagreements"] = cls;
    if (inputs.decisions)
        j["exported_inputs"] = {{"decisions", inputs.decisions},
                                {"used", inputs.used},
                                {"mismatches",
                                 {{"wf_sync", inputs.sync},
                                  {"in_task", inputs.in_task},
                                  {"nr_idle_scan", inputs.scan},
                                  {"has_idle_cores", inputs.cores},
                                  {"jiffies", inputs.jiffies}}},
                                {"cpu_load_mean_abs_error", inputs.load_err},
                                {"task_h_load_mean_abs_error", inputs.task_err},
                                {"load_off_decisions", inputs.load_off}};
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [k, v] : choice_kinds) kinds[k] = {{"idle", v[0]}, {"busy", v[1]}};
    j["choices"] = kinds;
    j["seconds"] = seconds;
    return j;
}

AgreeReasonIndex::AgreeReasonIndex(const AgreeReport& r) {
    std::map<std::string, std::uint16_t> ids;
    for (const auto& row : r.rows) ids.emplace(toString(row.stage2), 0);
    for (auto& [name, id] : ids) {
        id = std::uint16_t(m_names.size());
        m_names.push_back(name);
    }
    m_rows.reserve(r.rows.size());
    for (const auto& row : r.rows) m_rows.push_back({row.time, ids.at(toString(row.stage2))});
    std::stable_sort(m_rows.begin(), m_rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::uint32_t> c(m_names.size(), 0);
    for (std::size_t k = 0; k < m_rows.size(); ++k) {
        if (k % kEvery == 0) m_cum.push_back(c);
        ++c[m_rows[k].second];
    }
}

std::vector<std::pair<std::string, std::uint64_t>> AgreeReasonIndex::upTo(std::int64_t t) const {
    const std::size_t n = std::size_t(
        std::upper_bound(m_rows.begin(), m_rows.end(), t, [](std::int64_t v, const auto& row) { return v < row.first; }) - m_rows.begin());
    std::vector<std::uint64_t> c(m_names.size(), 0);
    std::size_t k = 0;
    if (n > 0 && !m_cum.empty()) {
        const std::size_t cp = std::min((n - 1) / kEvery, m_cum.size() - 1);
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = m_cum[cp][i];
        k = cp * kEvery;
    }
    for (; k < n; ++k) ++c[m_rows[k].second];
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (std::size_t i = 0; i < c.size(); ++i)
        if (c[i]) out.emplace_back(m_names[i], c[i]);
    return out;
}

}  // namespace sched
