// SPDX-License-Identifier: GPL-2.0-or-later
// trace_text_format.cpp: ftrace text written (FtraceTextWriter, the timestamps) and schedlab's
// `schedlab_wake` lines (the untraced inputs of a wakeup decision) formatted and parsed.
#include "trace/trace.h"

#include "util/text_scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

namespace sched {

// ---------------------------------------------------------------------------------------------
// Writer

std::string ftraceTimestamp(std::int64_t ns, int decimals) {
    const std::int64_t secs = ns / 1'000'000'000, frac = ns % 1'000'000'000;
    if (decimals == 6) return fmt::format("{}.{:06d}", secs, frac / 1000);
    return fmt::format("{}.{:09d}", secs, frac);
}

FtraceTextWriter::FtraceTextWriter(std::ostream& out, int nrCpus, CommOf commOf, bool usecs)
    : m_out(out), m_nrCpus(nrCpus), m_commOf(std::move(commOf)), m_usecs(usecs), m_curr(std::size_t(std::max(nrCpus, 1)), 0) {
    m_out << "# tracer: nop\n"
          << "#\n"
          << fmt::format("# schedlab simulated run   #P:{}\n", nrCpus) << "#\n"
          << "#                                _-----=> irqs-off/BH-disabled\n"
          << "#                               / _----=> need-resched\n"
          << "#                              | / _---=> hardirq/softirq\n"
          << "#                              || / _--=> preempt-depth\n"
          << "#                              ||| / _-=> migrate-disable\n"
          << "#                              |||| /     delay\n"
          << "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
          << "#              | |         |   |||||     |         |\n";
}

std::string FtraceTextWriter::comm(std::int32_t pid, int cpu) const {
    if (pid == 0) return fmt::format("swapper/{}", cpu);
    std::string c = m_commOf ? m_commOf(pid) : std::string();
    return c.empty() ? std::string("<...>") : c;
}

void FtraceTextWriter::write(const SchedEvent& e) {
    const int cpu = e.cpu;
    if (cpu < 0 || cpu >= int(m_curr.size())) return;
    const std::int32_t cur = m_curr[std::size_t(cpu)];
    const std::string who = cur == 0 ? std::string("<idle>") : comm(cur, cpu);
    const int prio = 120;  // nice 0: every simulated task
    std::string flags = "d..2.";
    std::string body;
    switch (e.kind) {
    case EvKind::sched_waking:
        m_wakingCpu[e.pid] = cpu;
        if (m_haveInputs && m_inputs.pid == e.pid && !m_inputs.in_task) flags = "d.h2.";
        body = fmt::format("sched_waking: comm={} pid={} prio={} target_cpu={:03d}", comm(e.pid, cpu), e.pid, prio, e.target_cpu);
        break;
    case EvKind::sched_wakeup: {
        // Activated on another CPU than the waker's: from the IPI (hardirq context).
        const auto it = m_wakingCpu.find(e.pid);
        if (it != m_wakingCpu.end()) {
            if (it->second != cpu) flags = "dNh2.";
            m_wakingCpu.erase(it);
        }
        body = fmt::format("sched_wakeup: comm={} pid={} prio={} target_cpu={:03d}", comm(e.pid, cpu), e.pid, prio, e.target_cpu);
        break;
    }
    case EvKind::sched_wakeup_new:
        body = fmt::format("sched_wakeup_new: comm={} pid={} prio={} target_cpu={:03d}", comm(e.pid, cpu), e.pid, prio, e.target_cpu);
        break;
    case EvKind::sched_switch: {
        // Preempted tasks print "R+"; the idle task leaves with "R" (as the kernel prints it).
        const std::string state = e.prev_state == 'R' ? std::string(e.pid == 0 ? "R" : "R+") : std::string(1, e.prev_state);
        body = fmt::format("sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
                           comm(e.pid, cpu), e.pid, prio, state, comm(e.pid2, cpu), e.pid2, prio);
        break;
    }
    case EvKind::sched_migrate_task:
        body = fmt::format("sched_migrate_task: comm={} pid={} prio={} orig_cpu={} dest_cpu={}", comm(e.pid, cpu), e.pid, prio, e.orig_cpu,
                           e.target_cpu);
        if (e.cause < kMigrationCauses) body += fmt::format(" cause={}", toString(MigrationCause(e.cause)));
        break;
    case EvKind::cpu_idle:
        flags = "d..1.";
        body = fmt::format("cpu_idle: state={} cpu_id={}", e.state, cpu);
        break;
    case EvKind::sched_process_fork:
        flags = ".....";
        body = fmt::format("sched_process_fork: comm={} pid={} child_comm={} child_pid={}", comm(e.pid, cpu), e.pid, comm(e.pid2, cpu), e.pid2);
        break;
    case EvKind::sched_process_exit:
        flags = ".....";
        body = fmt::format("sched_process_exit: comm={} pid={} prio={}", comm(e.pid, cpu), e.pid, prio);
        break;
    case EvKind::hrtimer_start: {
        // lock_hrtimer_base() holds the base's lock with interrupts off; expires and softexpires
        // as the kernel prints them (%llu of s64).
        flags = "d..1.";
        const std::int64_t expires = hrtimerTime(e);
        const char* mode = hrtimerModeName(e.cause);
        body = fmt::format("hrtimer_start: hrtimer={:016x} function={} expires={} softexpires={} mode={}", hrtimerPointer(e.pid),
                           hrtimerFunctionName(e), std::uint64_t(expires), std::uint64_t(expires - std::int64_t(hrtimerSlack(e))),
                           mode ? mode : fmt::format("0x{:x}", unsigned(e.cause)));
        break;
    }
    case EvKind::hrtimer_cancel:
        // From __run_hrtimer() (hard interrupt, the base locked) or from a task's hrtimer_cancel().
        flags = e.cause == kHrtimerCancelInIrq ? "d.h1." : "d..1.";
        body = fmt::format("hrtimer_cancel: hrtimer={:016x}", hrtimerPointer(e.pid));
        break;
    case EvKind::hrtimer_expire_entry:
        flags = "d.h..";
        body = fmt::format("hrtimer_expire_entry: hrtimer={:016x} function={} now={}", hrtimerPointer(e.pid), hrtimerFunctionName(e),
                           std::uint64_t(hrtimerTime(e)));
        break;
    case EvKind::hrtimer_expire_exit:
        flags = "d.h..";
        body = fmt::format("hrtimer_expire_exit: hrtimer={:016x}", hrtimerPointer(e.pid));
        break;
    case EvKind::schedlab_ttwu_queue:
        if (!m_marks) return;  // a kernel-like export (no wake inputs): no schedlab marks
        body = fmt::format("tracing_mark_write: {}", formatTtwuQueueMark(e));
        break;
    }
    m_out << fmt::format("{:>16}-{:<7} [{:03d}] {} {:>12}: {}\n", who, cur, cpu, flags, ftraceTimestamp(e.time, m_usecs ? 6 : 9), body);
    if (e.kind == EvKind::sched_switch) m_curr[std::size_t(cpu)] = e.pid2;
    ++m_written;
    if (e.kind == EvKind::sched_waking && m_haveInputs && m_inputs.pid == e.pid) {
        m_out << fmt::format("{:>16}-{:<7} [{:03d}] {} {:>12}: tracing_mark_write: {}\n", who, cur, cpu, flags,
                             ftraceTimestamp(e.time, m_usecs ? 6 : 9), formatWakeInputs(m_inputs));
        m_haveInputs = false;
    }
}

std::uint64_t hrtimerPointer(std::int32_t id) { return kHrtimerPointerBase + std::uint64_t(std::uint32_t(id)) * kHrtimerPointerStride; }

std::string hrtimerFunctionName(const SchedEvent& e, const Trace* t) {
    const std::uint8_t f = hrtimerFunction(e);
    if (t && f < t->hrtimer_functions.size()) return t->hrtimer_functions[f];
    return f == kHrtimerWakeup ? "hrtimer_wakeup" : fmt::format("function#{}", unsigned(f));
}

std::string formatTtwuQueueMark(const SchedEvent& e) { return fmt::format("schedlab_ttwu_queue pid={} target_cpu={}", e.pid, e.target_cpu); }

bool parseTtwuQueueMark(std::string_view msg, SchedEvent& e, std::string& why) {
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.remove_suffix(1);
    std::int32_t pid = 0;
    int cpu = -1;
    auto field = [&](std::string_view key, auto& out) {
        if (!msg.starts_with(key)) return false;
        msg.remove_prefix(key.size());
        const auto [q, ec] = std::from_chars(msg.data(), msg.data() + msg.size(), out);
        if (ec != std::errc()) return false;
        msg.remove_prefix(std::size_t(q - msg.data()));
        return true;
    };
    if (!field("pid=", pid) || !field(" target_cpu=", cpu) || !msg.empty() || pid <= 0 || cpu < 0 || cpu >= 4096) {
        why = "schedlab_ttwu_queue: expected pid=N target_cpu=M";
        return false;
    }
    e.kind = EvKind::schedlab_ttwu_queue;
    e.pid = pid;
    e.target_cpu = std::int16_t(cpu);
    return true;
}

std::string formatWakeInputs(const WakeInputs& in) {
    std::string s = fmt::format(
        "schedlab_wake pid={} prev={} this_load={} prev_load={} p_load={} cur_load={} sync={} in_task={} scan_this={} "
        "scan_prev={} cores_this={} cores_prev={} jiffies={}",
        in.pid, in.prev, in.this_load, in.prev_load, in.p_load, in.cur_load, int(in.sync), int(in.in_task), in.scan_this, in.scan_prev,
        int(in.cores_this), int(in.cores_prev), in.jiffies);
    if (in.allowed) s += " allowed=" + in.allowed->toList();  // a pinned task (taskset -c)
    return s;
}

void WakeInputsByEvent::finish() {
    if (m_sorted) return;
    std::stable_sort(m_v.begin(), m_v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t w = 0;
    for (std::size_t r = 0; r < m_v.size(); ++r) {
        if (w > 0 && m_v[w - 1].first == m_v[r].first) m_v[w - 1] = m_v[r];
        else m_v[w++] = m_v[r];
    }
    m_v.resize(w);
    m_sorted = true;
}

const WakeInputs* WakeInputsByEvent::find(std::uint32_t event) const {
    const auto it = std::lower_bound(m_v.begin(), m_v.end(), event, [](const auto& a, std::uint32_t e) { return a.first < e; });
    return it != m_v.end() && it->first == event ? &it->second : nullptr;
}

const WakeInputs& WakeInputsByEvent::at(std::uint32_t event) const {
    if (const WakeInputs* in = find(event)) return *in;
    throw std::out_of_range("WakeInputsByEvent::at: no inputs for that event");
}

namespace {

/// The layout schedlab writes (formatWakeInputs): the keys in order, single spaces. One pass, no
/// search; anything else goes to the general parser.
bool parseWakeInputsFast(std::string_view msg, WakeInputs& in) {
    const char* p = msg.data();
    const char* const end = p + msg.size();
    // "key=<integer>" then one space or the end; std::from_chars checks the range of `out`.
    auto field = [&](std::string_view key, auto& out) {
        if (std::size_t(end - p) <= key.size() || std::string_view(p, key.size()) != key || p[key.size()] != '=') return false;
        const auto [q, ec] = std::from_chars(p + key.size() + 1, end, out);
        if (ec != std::errc() || (q != end && *q != ' ')) return false;
        p = q == end ? q : q + 1;
        return true;
    };
    int sync = 0, task = 1, prev = -1;
    std::int8_t ct = -1, cp = -1;
    WakeInputs w = in;
    if (!(field("pid", w.pid) && field("prev", prev) && field("this_load", w.this_load) && field("prev_load", w.prev_load) &&
          field("p_load", w.p_load) && field("cur_load", w.cur_load) && field("sync", sync) && field("in_task", task) &&
          field("scan_this", w.scan_this) && field("scan_prev", w.scan_prev) && field("cores_this", ct) && field("cores_prev", cp) &&
          field("jiffies", w.jiffies) && p == end) ||
        prev < std::numeric_limits<std::int16_t>::min() || prev > std::numeric_limits<std::int16_t>::max())
        return false;
    w.prev = std::int16_t(prev);
    w.sync = sync != 0;
    w.in_task = task != 0;
    w.cores_this = ct;
    w.cores_prev = cp;
    in = w;
    return true;
}

}  // namespace

bool parseWakeInputs(std::string_view msg, WakeInputs& in, std::string& why, std::string* allowed) {
    if (parseWakeInputsFast(msg, in)) return true;
    // key=value by single spaces, every key present once, in any order.
    unsigned seen = 0;
    int sync = 0, task = 1, ct = -1, cp = -1, prev = -1;
    while (!msg.empty()) {
        const std::size_t sp = msg.find(' ');
        const std::string_view kv = msg.substr(0, sp);
        msg = sp == std::string_view::npos ? std::string_view() : msg.substr(sp + 1);
        if (kv.empty()) continue;
        const std::size_t eq = kv.find('=');
        if (eq == std::string_view::npos) {
            why = fmt::format("schedlab_wake: \"{}\" is not key=value", kv);
            return false;
        }
        const std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
        auto num = [&](unsigned bit, auto& out) {
            seen |= 1u << bit;
            return text::toInt(v, out);
        };
        bool ok = true;
        if (k == "pid") ok = num(0, in.pid);
        else if (k == "prev") ok = num(1, prev);
        else if (k == "this_load") ok = num(2, in.this_load);
        else if (k == "prev_load") ok = num(3, in.prev_load);
        else if (k == "p_load") ok = num(4, in.p_load);
        else if (k == "cur_load") ok = num(5, in.cur_load);
        else if (k == "sync") ok = num(6, sync);
        else if (k == "in_task") ok = num(7, task);
        else if (k == "scan_this") ok = num(8, in.scan_this);
        else if (k == "scan_prev") ok = num(9, in.scan_prev);
        else if (k == "cores_this") ok = num(10, ct);
        else if (k == "cores_prev") ok = num(11, cp);
        else if (k == "jiffies") ok = num(12, in.jiffies);
        else if (k == "allowed") {  // a pinned task's cpulist
            std::string err;
            if (!CpuMask::parseList(v, kMaxCpus, &err) || v.empty()) {
                why = fmt::format("schedlab_wake: allowed={}: {}", v, err.empty() ? "empty" : err);
                return false;
            }
            if (allowed) *allowed = std::string(v);
        }
        if (!ok) {
            why = fmt::format("schedlab_wake: bad number in {}", kv);
            return false;
        }
    }
    if (seen != (1u << 13) - 1) {
        why =
            "schedlab_wake: a field is missing (pid prev this_load prev_load p_load cur_load sync in_task scan_this scan_prev "
            "cores_this cores_prev jiffies)";
        return false;
    }
    in.prev = std::int16_t(prev);
    in.sync = sync != 0;
    in.in_task = task != 0;
    in.cores_this = std::int8_t(ct);
    in.cores_prev = std::int8_t(cp);
    return true;
}

}  // namespace sched
