// SPDX-License-Identifier: GPL-2.0-or-later
// explain_format.cpp: see explain_format.h.
#include "explain/explain_format.h"

#include "kernel/wakeup_path.h"

#include <fmt/format.h>

namespace sched {

using nlohmann::json;

json decisionToJson(const Decision& d) {
    json j;
    j["cpu"] = d.cpu;
    j["prev_cpu"] = d.prev_cpu;
    j["this_cpu"] = d.this_cpu;
    j["stage0"] = toString(d.stage0);
    j["stage1"] = toString(d.stage1);
    j["idlest"] = toString(d.idlest);
    j["stage2"] = toString(d.stage2);
    j["wake_flags"] = wakeFlagsToString(d.wake_flags);
    j["flags"] = {{"wakelist", d.wakelist},
                  {"migrated", d.migrated},
                  {"preempted_curr", d.preempted_curr},
                  {"claim_set", d.claim_set},
                  {"idle_delay_hit", d.idle_delay_hit},
                  {"wakelist_cross_l2", d.wakelist_cross_l2}};
    json ex = json::array();
    for (const auto& e : d.examined) ex.push_back({{"cpu", e.cpu}, {"fn", toString(e.fn)}, {"seen", toString(e.seen)}});
    j["examined"] = ex;
    json steps = json::array();
    for (const auto& s : d.steps) steps.push_back({{"fn", toString(s.fn)}, {"text", s.text}});
    j["steps"] = steps;
    return j;
}

std::string decisionToText(const Decision& d, const ExplainInput& in) {
    std::string out;
    out += fmt::format("machine  {}\n", in.topo->summary());
    out += fmt::format("knobs    {}\n", in.knobs.describe());
    out += fmt::format("wakeup   pid {} prev_cpu {} from CPU {} ({}), wake_flags {}\n\n", in.task.pid, d.prev_cpu, d.this_cpu,
                       in.waker.in_task ? "task context" : "interrupt", wakeFlagsToString(d.wake_flags));
    for (const auto& s : d.steps) out += fmt::format("  {:<22} {}\n", toString(s.fn), s.text);
    // CPUs examined, grouped by the function that looked at them, in order.
    out += "\nexamined";
    if (d.examined.empty()) out += " (none)";
    for (size_t i = 0; i < d.examined.size(); ++i) {
        const auto& e = d.examined[i];
        if (i == 0 || d.examined[i - 1].fn != e.fn) out += fmt::format("{} {}:", i ? ";" : "", toString(e.fn));
        out += fmt::format(" {}={}", e.cpu, toString(e.seen));
    }
    out += "\n";
    std::string flags;
    auto flag = [&](bool b, const char* n) {
        if (b) flags += (flags.empty() ? "" : " ") + std::string(n);
    };
    flag(d.wakelist, "wakelist");
    flag(d.migrated, "migrated");
    flag(d.preempted_curr, "preempted_curr");
    flag(d.claim_set, "claim_set");
    flag(d.idle_delay_hit, "idle_delay_hit");
    flag(d.wakelist_cross_l2, "wakelist_cross_l2");
    out += fmt::format("\n=> CPU {}   {}{}\n", d.cpu, d.reasons(), flags.empty() ? "" : "   [" + flags + "]");
    return out;
}

}  // namespace sched
