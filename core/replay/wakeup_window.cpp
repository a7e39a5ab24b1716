// SPDX-License-Identifier: GPL-2.0-or-later
// wakeup_window.cpp: see wakeup_window.h.
#include "replay/wakeup_window.h"

#include <fmt/format.h>

#include <unordered_map>

namespace sched {

WakeupWindows wakeupWindows(const Trace& t, std::int64_t from, std::int64_t to) {
    WakeupWindows w;
    struct Waking {
        std::int64_t time;
        int cpu;
    };
    std::unordered_map<std::int32_t, Waking> open;  // pid -> its waking still without a wakeup
    for (const SchedEvent& e : t.events) {
        if (e.kind == EvKind::sched_waking) {
            if (e.time < from || e.time > to) continue;
            if (!open.insert_or_assign(e.pid, Waking{e.time, e.cpu}).second) ++w.unpaired;  // the one before never woke
        } else if (e.kind == EvKind::sched_wakeup) {
            const auto it = open.find(e.pid);
            if (it == open.end()) continue;
            (e.target_cpu == it->second.cpu ? w.same_cpu : w.other_cpu).record(e.time - it->second.time);
            open.erase(it);
        }
    }
    w.unpaired += open.size();
    return w;
}

std::string WakeupWindows::text(const std::string& indent) const {
    std::string o;
    auto line = [&](const char* what, const LatencyHistogram& h) {
        auto us = [&](double p) { return double(h.percentile(p)) / 1000.0; };
        o += fmt::format("{}{:<28}{:>9} wakeups  p10 {:.2f}  p50 {:.2f}  p90 {:.2f}  p99 {:.2f} us\n", indent, what, h.count(), us(10), us(50),
                         us(90), us(99));
    };
    line("activated on the waker's CPU", same_cpu);
    line("activated on another CPU", other_cpu);
    if (unpaired) o += fmt::format("{}{} wakings without a sched_wakeup\n", indent, unpaired);
    return o;
}

}  // namespace sched
