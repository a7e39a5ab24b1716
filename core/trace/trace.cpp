// SPDX-License-Identifier: GPL-2.0-or-later
// trace.cpp: ftrace text import (tracefs `trace`, `trace_pipe`, `trace-cmd report`); the writer
// and the schedlab_wake lines are in trace_text_format.cpp.
#include "trace/trace.h"

#include "util/input_error.h"
#include "util/text_scan.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sched {

namespace {

constexpr std::uint64_t kNotATraceLines = 1000;  ///< nothing parses in this many data lines: not a trace
/// A line past this many bytes is not kept (memory stays flat whatever the input), only said:
/// forEachLine() hands the parser kOverlongLine in its place.
constexpr std::size_t kMaxLineBytes = std::size_t(1) << 20;
constexpr std::string_view kOverlongLine = "\x01schedlab: overlong line";

using text::isDigit;
using text::toInt;
using text::trim;
using text::trimLeft;
using text::trimRight;

/// The integer value of `key` ("pid=") in `s` from `from`: the text after it up to a space or the end.
template <typename T>
bool intOf(std::string_view s, std::string_view key, T& v, std::size_t from = 0) {
    const std::size_t k = s.find(key, from);
    if (k == std::string_view::npos) return false;
    const std::size_t b = k + key.size();
    std::size_t e = s.find(' ', b);
    if (e == std::string_view::npos) e = s.size();
    return toInt(s.substr(b, e - b), v);
}

/// The text of `key=` (at the start of `s` or after a space) up to the next space; empty when absent.
std::string_view fieldOf(std::string_view s, std::string_view key) {
    for (std::size_t k = s.find(key); k != std::string_view::npos; k = s.find(key, k + 1)) {
        if (k != 0 && s[k - 1] != ' ') continue;
        const std::size_t b = k + key.size();
        const std::size_t e = s.find(' ', b);
        return s.substr(b, (e == std::string_view::npos ? s.size() : e) - b);
    }
    return {};
}

/// %p as ftrace prints it (hashed, 16 hex digits) or trace-cmd's hrtimer plugin (0x...).
bool hexPointer(std::string_view s, std::uint64_t& v) {
    if (s.starts_with("0x")) s.remove_prefix(2);
    if (s.empty() || s.size() > 16) return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    return ec == std::errc() && p == s.data() + s.size();
}

/// `secs.frac` to ns (frac of any length, digits past 9 dropped), or a bare integer as is.
bool parseTimestamp(std::string_view s, std::int64_t& ns, bool& isNs) {
    const std::size_t dot = s.find('.');
    if (dot == std::string_view::npos) {
        isNs = false;
        return toInt(s, ns);
    }
    std::int64_t secs = 0;
    if (!toInt(s.substr(0, dot), secs) || secs < 0) return false;
    std::string_view frac = s.substr(dot + 1);
    if (frac.empty()) return false;
    std::int64_t f = 0;
    int digits = 0;
    for (char c : frac) {
        if (!isDigit(c)) return false;
        if (digits < 9) {
            f = f * 10 + (c - '0');
            ++digits;
        }
    }
    for (; digits < 9; ++digits) f *= 10;
    if (secs > std::numeric_limits<std::int64_t>::max() / 1'000'000'000 - 1) return false;
    ns = secs * 1'000'000'000 + f;
    isNs = true;
    return true;
}

/// "R" and "R+" (preempted) keep the task runnable: 'R'. Otherwise the first state letter.
char stateLetter(std::string_view s) {
    s = trim(s);
    if (s.empty()) return '?';
    return s.front();
}

std::uint8_t causeFromName(std::string_view name) {
    for (int c = 0; c < kMigrationCauses; ++c)
        if (name == toString(MigrationCause(c))) return std::uint8_t(c);
    return kMigrationCauseUnknown;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parser

void FtraceTextParser::problem(const std::string& why) {
    ++m_t.problem_count;
    if (m_t.problems.size() < Trace::kMaxProblems) m_t.problems.push_back({m_line, why});
}

void FtraceTextParser::closeGaps(int cpu, std::int64_t t) {
    for (auto it = m_openGaps.begin(); it != m_openGaps.end();) {
        if (m_t.gaps[*it].cpu == cpu) {
            m_t.gaps[*it].to = t;
            it = m_openGaps.erase(it);
        } else {
            ++it;
        }
    }
}

void FtraceTextParser::line(std::string_view text) {
    ++m_line;
    ++m_t.lines;
    m_pendingLastProblem.clear();
    if (text == kOverlongLine) {
        problem(fmt::format("longer than {} MiB: skipped", kMaxLineBytes >> 20));
        return;
    }
    std::string_view s = trimRight(text);
    if (trim(s).empty()) return;
    const std::string_view t = trimLeft(s);

    // Markers first: both look like comments or headers.
    if (t.starts_with("##### CPU ")) {  // "##### CPU 3 buffer started ####": CPU 3 unknown until here
        int cpu = -1;
        const std::string_view rest = t.substr(10);
        const std::size_t sp = rest.find(' ');
        if (toInt(rest.substr(0, sp), cpu) && cpu >= 0 && cpu < 4096) {
            m_t.gaps.push_back({cpu, -1, -1, m_line, 0, true});
            m_openGaps.push_back(m_t.gaps.size() - 1);
            m_maxCpu = std::max(m_maxCpu, cpu);
        } else {
            problem("buffer-started marker without a CPU number");
        }
        return;
    }
    if (t.starts_with("CPU:") && (t.find("LOST") != std::string_view::npos || t.find("DROPPED") != std::string_view::npos)) {
        // "CPU:3 [LOST 1234 EVENTS]" (tracefs) or "CPU:3 [1234 EVENTS DROPPED]"; the count may be missing.
        int cpu = -1;
        const std::string_view rest = t.substr(4);
        const std::size_t sp = rest.find(' ');
        if (!toInt(rest.substr(0, sp), cpu) || cpu < 0 || cpu >= 4096) {
            problem("lost-events marker without a CPU number");
            return;
        }
        std::uint64_t lost = 0;  // the first number inside the brackets, if any
        const std::size_t open = t.find('[');
        for (std::size_t i = open == std::string_view::npos ? t.size() : open; i < t.size(); ++i)
            if (isDigit(t[i])) {
                std::size_t j = i;
                while (j < t.size() && isDigit(t[j])) ++j;
                toInt(t.substr(i, j - i), lost);
                break;
            }
        const std::int64_t from = std::size_t(cpu) < m_cpuLast.size() ? m_cpuLast[std::size_t(cpu)] : -1;
        m_t.gaps.push_back({cpu, from == std::numeric_limits<std::int64_t>::min() ? -1 : from, -1, m_line, lost, false});
        m_openGaps.push_back(m_t.gaps.size() - 1);
        m_maxCpu = std::max(m_maxCpu, cpu);
        return;
    }
    if (t.front() == '#') {
        if (t.find("_------=> CPU#") != std::string_view::npos)
            throw InputError(m_t.file, fmt::format("line {}", m_line),
                             "latency-format layout (options/latency-format) is not supported; record with it off");
        const std::size_t e = t.find("entries-in-buffer/entries-written:");
        if (e != std::string_view::npos) {
            std::string_view rest = trimLeft(t.substr(e + 34));
            const std::size_t slash = rest.find('/');
            if (slash != std::string_view::npos) {
                toInt(rest.substr(0, slash), m_t.entries_in_buffer);
                std::size_t end = rest.find(' ', slash);
                toInt(rest.substr(slash + 1, end == std::string_view::npos ? std::string_view::npos : end - slash - 1), m_t.entries_written);
            }
        }
        const std::size_t p = t.find("#P:");
        if (p != std::string_view::npos) {
            std::string_view rest = t.substr(p + 3);
            std::size_t end = 0;
            while (end < rest.size() && isDigit(rest[end])) ++end;
            int n = 0;
            if (toInt(rest.substr(0, end), n) && n > 0 && n <= 4096) m_t.nr_cpus = n;
        }
        return;
    }
    // trace-cmd report's preamble.
    if (t.starts_with("cpus=")) {
        int n = 0;
        if (toInt(t.substr(5), n) && n > 0 && n <= 4096) m_t.nr_cpus = n;
        return;
    }
    if (t.starts_with("version = ") || (t.starts_with("CPU ") && t.ends_with(" is empty"))) return;

    ++m_dataLines;
    std::string why;
    if (parseRecord(s, why)) {
        ++m_records;
        return;
    }
    problem(why);
    m_pendingLastProblem = why;
}

/// A record's line up to its payload: "<comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <timestamp>: <event>: <payload>".
struct FtraceTextParser::Head {
    std::string_view comm;
    std::int32_t pid = -1;
    int cpu = -1;
    bool tgid = false;
    char context = '?';
    int flagCols = 0;
    std::int64_t time = 0;
    bool isNs = true;
    std::string_view name, payload;
};

bool FtraceTextParser::parseHead(std::string_view s, Head& h, std::string& why) {
    // 1. "<comm>-<pid> [(<tgid>)] [<cpu>]": the first "[digits]" preceded by comm-pid.
    std::string_view& comm = h.comm;
    std::int32_t& pid = h.pid;
    int& cpu = h.cpu;
    std::size_t afterCpu = std::string_view::npos;
    for (std::size_t open = s.find('['); open != std::string_view::npos; open = s.find('[', open + 1)) {
        std::size_t close = open + 1;
        while (close < s.size() && isDigit(s[close])) ++close;
        if (close == open + 1 || close >= s.size() || s[close] != ']') continue;
        std::string_view pre = trimRight(s.substr(0, open));
        bool hasTgid = false;
        if (!pre.empty() && pre.back() == ')') {
            const std::size_t paren = pre.rfind('(');
            if (paren == std::string_view::npos) continue;
            pre = trimRight(pre.substr(0, paren));
            hasTgid = true;
        }
        std::size_t d = pre.size();
        while (d > 0 && isDigit(pre[d - 1])) --d;
        if (d == pre.size() || d == 0 || pre[d - 1] != '-') continue;
        if (!toInt(pre.substr(d), pid) || !toInt(s.substr(open + 1, close - open - 1), cpu)) continue;
        comm = trim(pre.substr(0, d - 1));
        h.tgid = hasTgid;
        afterCpu = close + 1;
        break;
    }
    if (afterCpu == std::string_view::npos) {
        why = "no \"<comm>-<pid> [<cpu>]\" at the start of the line";
        return false;
    }
    if (cpu < 0 || cpu >= 4096) {
        why = fmt::format("CPU {} out of range", cpu);
        return false;
    }
    // 2. Optional flags, then "<timestamp>:".
    std::string_view rest = trimLeft(s.substr(afterCpu));
    std::size_t sp = rest.find(' ');
    std::string_view tok = rest.substr(0, sp);
    if (!tok.ends_with(":")) {
        if (tok.size() < 4 || tok.size() > 5) {
            why = fmt::format("flags field \"{}\" is neither 4 nor 5 characters", tok);
            return false;
        }
        h.flagCols = int(tok.size());
        h.context = tok[2];
        if (sp == std::string_view::npos) {
            why = "line ends after the flags";
            return false;
        }
        rest = trimLeft(rest.substr(sp));
        sp = rest.find(' ');
        tok = rest.substr(0, sp);
    }
    if (!tok.ends_with(":")) {
        why = fmt::format("no timestamp (\"{}\")", tok);
        return false;
    }
    if (!parseTimestamp(tok.substr(0, tok.size() - 1), h.time, h.isNs)) {
        why = fmt::format("bad timestamp \"{}\"", tok.substr(0, tok.size() - 1));
        return false;
    }
    // 3. "<event>: <payload>".
    rest = sp == std::string_view::npos ? std::string_view{} : trimLeft(rest.substr(sp));
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0) {
        why = "no \"<event>:\" after the timestamp";
        return false;
    }
    h.name = rest.substr(0, colon);
    if (h.name.find(' ') != std::string_view::npos) {
        why = fmt::format("no event name after the timestamp (\"{}\")", h.name);
        return false;
    }
    h.payload = trim(rest.substr(colon + 1));
    return true;
}

namespace {

/// trace-cmd report prints sched_wakeup(_new) and sched_switch through libtraceevent's sched
/// plugin: "comm:pid [prio] CPU:007" and "prev:pid [prio] S ==> next:pid [prio]". One "comm:pid [prio]".
bool commPidPrio(std::string_view s, std::string_view& c, std::int32_t& p, int& prio) {
    s = trim(s);
    const std::size_t br = s.rfind(" [");
    if (br == std::string_view::npos || s.back() != ']' || !toInt(s.substr(br + 2, s.size() - br - 3), prio)) return false;
    const std::size_t colon = s.rfind(':', br);
    if (colon == std::string_view::npos || !toInt(s.substr(colon + 1, br - colon - 1), p)) return false;
    c = s.substr(0, colon);
    return true;
}

}  // namespace

bool FtraceTextParser::fail(std::string& why, const std::string& what) {
    why = what;
    return false;
}

bool FtraceTextParser::parseRecord(std::string_view s, std::string& why) {
    Head h;
    if (!parseHead(s, h, why)) return false;
    SchedEvent e;
    e.time = h.time;
    e.cpu = std::int16_t(h.cpu);
    bool imported = true;
    if (!parseEvent(h, e, imported, why)) {
        why = fmt::format("{}: {}", h.name, why);
        return false;
    }
    ++m_t.event_counts[std::string(h.name)];
    // The line's layout and the recording CPU's bookkeeping, also for records not imported.
    if (m_t.flag_columns < 0) {
        m_t.flag_columns = h.flagCols;
        m_t.tgid_column = h.tgid;
        m_t.ns_timestamps = h.isNs;
    } else if (!h.isNs) {
        m_t.ns_timestamps = false;
    }
    if (h.time < m_lastTime) ++m_t.time_backwards;
    m_lastTime = std::max(m_lastTime, h.time);
    m_maxCpu = std::max(m_maxCpu, h.cpu);
    if (m_t.nr_cpus > 0 && h.cpu >= m_t.nr_cpus && !m_beyondLine) m_beyondLine = m_line;
    if (std::size_t(h.cpu) >= m_cpuLast.size()) m_cpuLast.resize(std::size_t(h.cpu) + 1, std::numeric_limits<std::int64_t>::min());
    m_cpuLast[std::size_t(h.cpu)] = h.time;
    if (!m_openGaps.empty()) closeGaps(h.cpu, h.time);
    if (h.pid == 0 && !h.comm.empty() && m_t.comm.find(0) == m_t.comm.end()) m_t.comm[0] = "swapper";
    else if (h.pid > 0 && m_t.comm.find(h.pid) == m_t.comm.end()) m_t.comm[h.pid] = std::string(h.comm);
    if (!imported) return true;
    m_t.events.push_back(e);
    m_t.records.push_back({m_line, h.pid, h.context});
    return true;
}

bool FtraceTextParser::parseEvent(const Head& h, SchedEvent& e, bool& imported, std::string& why) {
    const std::string_view name = h.name;
    std::string_view payload = h.payload;
    if (name == "sched_waking") return wakeLike(EvKind::sched_waking, payload, e, why);
    if (name == "sched_wakeup") return wakeLike(EvKind::sched_wakeup, payload, e, why);
    if (name == "sched_wakeup_new") return wakeLike(EvKind::sched_wakeup_new, payload, e, why);
    if (name == "sched_switch") return (!payload.starts_with("prev_comm=") && pluginSwitch(payload, e)) || rawSwitch(payload, e, why);
    if (name == "sched_migrate_task") return migrateTask(payload, e, why);
    if (name == "cpu_idle") {
        std::uint32_t state = 0;
        int cpuId = -1;
        if (!intOf(payload, "state=", state) || !intOf(payload, " cpu_id=", cpuId)) return fail(why, "expected state= cpu_id=");
        if (cpuId < 0 || cpuId >= 4096) return fail(why, "cpu_id out of range");
        e.kind = EvKind::cpu_idle;
        e.state = state;
        e.cpu = std::int16_t(cpuId);
        return true;
    }
    if (name.starts_with("hrtimer_")) {
        if (name == "hrtimer_start") return hrtimerEvent(EvKind::hrtimer_start, payload, e, why);
        if (name == "hrtimer_cancel") return hrtimerEvent(EvKind::hrtimer_cancel, payload, e, why);
        if (name == "hrtimer_expire_entry") return hrtimerEvent(EvKind::hrtimer_expire_entry, payload, e, why);
        if (name == "hrtimer_expire_exit") return hrtimerEvent(EvKind::hrtimer_expire_exit, payload, e, why);
    }
    if (name == "sched_process_fork") return processFork(payload, e, why);
    if (name == "sched_process_exit") {
        const std::size_t prioAt = payload.rfind(" prio=");
        const std::size_t pidAt = payload.rfind(" pid=", prioAt);
        if (!payload.starts_with("comm=") || pidAt == std::string_view::npos || !intOf(payload, " pid=", e.pid, pidAt))
            return fail(why, "expected comm= pid= prio=");
        e.kind = EvKind::sched_process_exit;
        return true;
    }
    const bool mark = name == "tracing_mark_write" || name == "print";
    imported = false;
    if (mark && (payload.starts_with("schedlab_wake ") || payload.starts_with("tracing_mark_write: schedlab_wake "))) {
        if (payload.starts_with("tracing_mark_write: ")) payload = trimLeft(payload.substr(20));  // trace-cmd report's print layout
        return wakeInputsMark(payload, h, why);
    }
    if (mark && (payload.starts_with("schedlab_ttwu_queue ") || payload.starts_with("tracing_mark_write: schedlab_ttwu_queue "))) {
        if (payload.starts_with("tracing_mark_write: ")) payload = trimLeft(payload.substr(20));
        imported = true;  // an event of its own: replay raises ttwu_pending there (docs/replay.md)
        return parseTtwuQueueMark(payload.substr(20), e, why);
    }
    if (mark) {
        if (payload.find("WORKLOAD_START") != std::string_view::npos) m_t.workload_start = h.time;
        if (payload.find("WORKLOAD_END") != std::string_view::npos) m_t.workload_end = h.time;
        return true;
    }
    ++m_t.skipped_events[std::string(name)];
    return true;
}

// hrtimer=%p function=%ps expires=%llu softexpires=%llu mode=%s (hrtimer_start),
// hrtimer=%p function=%ps now=%llu (hrtimer_expire_entry), hrtimer=%p (cancel, expire_exit);
// trace-cmd's hrtimer plugin writes 0x pointers, no mode, and now= before function=.
bool FtraceTextParser::hrtimerEvent(EvKind kind, std::string_view payload, SchedEvent& e, std::string& why) {
    std::uint64_t ptr = 0;
    if (!hexPointer(fieldOf(payload, "hrtimer="), ptr)) return fail(why, "expected hrtimer=<pointer>");
    e.kind = kind;
    e.pid = hrtimerId(m_t, ptr);
    if (kind == EvKind::hrtimer_cancel || kind == EvKind::hrtimer_expire_exit) return true;
    std::string_view fn = fieldOf(payload, "function=");
    fn = fn.substr(0, std::min(fn.find('/'), fn.find('+')));  // trace-cmd's "hrtimer_wakeup/0x0", %pS's "+0x0/0x30"
    if (fn.empty()) return fail(why, "expected function=");
    e.prev_state = char(hrtimerFunctionIndex(m_t, fn));
    if (kind == EvKind::hrtimer_expire_entry) {
        std::uint64_t now = 0;
        if (!toInt(fieldOf(payload, "now="), now)) return fail(why, "expected now=<ns>");
        setHrtimerTime(e, std::int64_t(now));
        return true;
    }
    std::uint64_t expires = 0, soft = 0;
    if (!toInt(fieldOf(payload, "expires="), expires) || !toInt(fieldOf(payload, "softexpires="), soft))
        return fail(why, "expected expires=<ns> softexpires=<ns>");
    if (soft > expires) return fail(why, fmt::format("softexpires {} is after expires {}", soft, expires));
    if (expires - soft > std::numeric_limits<std::uint32_t>::max())
        return fail(why, fmt::format("a range of {} ns (expires - softexpires) is more than 4.29 s", expires - soft));
    std::uint8_t mode = HRTIMER_MODE_ABS;
    const std::string_view m = fieldOf(payload, "mode=");
    if (!m.empty() && !hrtimerModeOf(m, mode)) return fail(why, fmt::format("mode={} is not an hrtimer mode", m));
    setHrtimerTime(e, std::int64_t(expires));
    setHrtimerSlack(e, std::uint32_t(expires - soft));
    e.cause = mode;
    return true;
}

std::int32_t hrtimerId(Trace& t, std::uint64_t ptr) {
    const auto [it, added] = t.hrtimer_ids.try_emplace(ptr, std::int32_t(t.hrtimer_ptr.size()));
    if (added) t.hrtimer_ptr.push_back(ptr);
    return it->second;
}

std::uint8_t hrtimerFunctionIndex(Trace& t, std::string_view fn) {
    for (std::size_t i = 0; i < t.hrtimer_functions.size(); ++i)
        if (t.hrtimer_functions[i] == fn) return std::uint8_t(i);
    if (t.hrtimer_functions.size() < 255) {
        t.hrtimer_functions.emplace_back(fn);
        return std::uint8_t(t.hrtimer_functions.size() - 1);
    }
    if (t.hrtimer_functions.size() == 255) t.hrtimer_functions.emplace_back("(other callbacks)");
    return 255;
}

bool FtraceTextParser::wakeLike(EvKind kind, std::string_view payload, SchedEvent& e, std::string& why) {
    if (!payload.starts_with("comm=") && pluginWake(kind, payload, e)) return true;
    // comm=%s pid=%d prio=%d target_cpu=%03d; comm may contain spaces: anchor on the last " pid=".
    const std::size_t prioAt = payload.rfind(" prio=");
    const std::size_t pidAt = payload.rfind(" pid=", prioAt);
    if (!payload.starts_with("comm=") || pidAt == std::string_view::npos || prioAt == std::string_view::npos)
        return fail(why, "expected comm= pid= prio= target_cpu=");
    int prio = 0, target = -1;
    if (!intOf(payload, " pid=", e.pid, pidAt) || !intOf(payload, " prio=", prio, prioAt) || !intOf(payload, " target_cpu=", target, prioAt))
        return fail(why, "expected comm= pid= prio= target_cpu=");
    e.kind = kind;
    e.target_cpu = std::int16_t(target);
    m_t.comm[e.pid] = std::string(payload.substr(5, pidAt - 5));
    m_t.prio[e.pid] = prio;
    return true;
}

bool FtraceTextParser::pluginWake(EvKind kind, std::string_view payload, SchedEvent& e) {
    const std::size_t cpuAt = payload.rfind(" CPU:");
    if (cpuAt == std::string_view::npos) return false;
    std::string_view head = payload.substr(0, cpuAt);
    const std::size_t close = head.rfind(']');
    if (close == std::string_view::npos) return false;
    head = head.substr(0, close + 1);  // drops an old kernel's " success=1"
    std::string_view c;
    int prio = 0, target = -1;
    if (!commPidPrio(head, c, e.pid, prio) || !toInt(payload.substr(cpuAt + 5), target)) return false;
    e.kind = kind;
    e.target_cpu = std::int16_t(target);
    m_t.comm[e.pid] = std::string(c);
    m_t.prio[e.pid] = prio;
    m_t.sched_plugin_layout = true;
    return true;
}

bool FtraceTextParser::pluginSwitch(std::string_view payload, SchedEvent& e) {
    const std::size_t arrow = payload.find(" ==> ");
    if (arrow == std::string_view::npos) return false;
    std::string_view l = payload.substr(0, arrow);
    const std::size_t sp = l.rfind(' ');
    if (sp == std::string_view::npos) return false;
    const std::string_view st = l.substr(sp + 1);
    std::string_view pc, nc;
    int pprio = 0, nprio = 0;
    if (st.empty() || !commPidPrio(l.substr(0, sp), pc, e.pid, pprio) || !commPidPrio(payload.substr(arrow + 5), nc, e.pid2, nprio)) return false;
    // The plugin names TASK_REPORT bits with an older table ("SDTtZXxW"): bit 4 is 6.1's X,
    // bit 5 Z, bit 6 P, bit 7 I. Mapped back to the kernel's letters.
    static const std::string_view plugin = "SDTtZXxW", kernel = "SDTtXZPI";
    const std::size_t bit = plugin.find(st.front());
    e.kind = EvKind::sched_switch;
    e.prev_state = st.front() == 'R' ? 'R' : bit == std::string_view::npos ? st.front() : kernel[bit];
    if (e.pid != 0) {
        m_t.comm[e.pid] = std::string(pc);
        m_t.prio[e.pid] = pprio;
    }
    if (e.pid2 != 0) {
        m_t.comm[e.pid2] = std::string(nc);
        m_t.prio[e.pid2] = nprio;
    }
    m_t.sched_plugin_layout = true;
    return true;
}

bool FtraceTextParser::rawSwitch(std::string_view payload, SchedEvent& e, std::string& why) {
    const std::size_t arrow = payload.find(" ==> ");
    if (arrow == std::string_view::npos) return fail(why, "no \" ==> \"");
    const std::string_view l = payload.substr(0, arrow), r = payload.substr(arrow + 5);
    const std::size_t ppid = l.rfind(" prev_pid="), npid = r.rfind(" next_pid=");
    const std::size_t pst = l.rfind(" prev_state=");
    int pprio = 0, nprio = 0;
    if (!l.starts_with("prev_comm=") || !r.starts_with("next_comm=") || ppid == std::string_view::npos || npid == std::string_view::npos ||
        pst == std::string_view::npos || !intOf(l, " prev_pid=", e.pid, ppid) || !intOf(l, " prev_prio=", pprio, ppid) ||
        !intOf(r, " next_pid=", e.pid2, npid) || !intOf(r, " next_prio=", nprio, npid))
        return fail(why, "expected prev_comm= prev_pid= prev_prio= prev_state= ==> next_comm= next_pid= next_prio=");
    e.kind = EvKind::sched_switch;
    e.prev_state = stateLetter(l.substr(pst + 12));
    if (e.pid != 0) {
        m_t.comm[e.pid] = std::string(l.substr(10, ppid - 10));
        m_t.prio[e.pid] = pprio;
    }
    if (e.pid2 != 0) {
        m_t.comm[e.pid2] = std::string(r.substr(10, npid - 10));
        m_t.prio[e.pid2] = nprio;
    }
    return true;
}

bool FtraceTextParser::migrateTask(std::string_view payload, SchedEvent& e, std::string& why) {
    const std::size_t prioAt = payload.rfind(" prio=");
    const std::size_t pidAt = payload.rfind(" pid=", prioAt);
    int prio = 0, orig = -1, dest = -1;
    if (!payload.starts_with("comm=") || pidAt == std::string_view::npos || prioAt == std::string_view::npos ||
        !intOf(payload, " pid=", e.pid, pidAt) || !intOf(payload, " prio=", prio, prioAt) || !intOf(payload, " orig_cpu=", orig, prioAt) ||
        !intOf(payload, " dest_cpu=", dest, prioAt))
        return fail(why, "expected comm= pid= prio= orig_cpu= dest_cpu=");
    e.kind = EvKind::sched_migrate_task;
    e.orig_cpu = std::int16_t(orig);
    e.target_cpu = std::int16_t(dest);
    e.cause = kMigrationCauseUnknown;
    const std::size_t c = payload.find(" cause=", prioAt);  // schedlab's own exports say why
    if (c != std::string_view::npos) {
        std::string_view v = payload.substr(c + 7);
        e.cause = causeFromName(v.substr(0, v.find(' ')));
    }
    m_t.comm[e.pid] = std::string(payload.substr(5, pidAt - 5));
    m_t.prio[e.pid] = prio;
    return true;
}

bool FtraceTextParser::processFork(std::string_view payload, SchedEvent& e, std::string& why) {
    // comm=%s pid=%d child_comm=%s child_pid=%d
    const std::size_t cc = payload.rfind(" child_comm=");
    const std::size_t pidAt = payload.rfind(" pid=", cc);
    const std::size_t cp = payload.rfind(" child_pid=");
    if (!payload.starts_with("comm=") || cc == std::string_view::npos || pidAt == std::string_view::npos || cp == std::string_view::npos || cp < cc ||
        !intOf(payload, " pid=", e.pid, pidAt) || !intOf(payload, " child_pid=", e.pid2, cp))
        return fail(why, "expected comm= pid= child_comm= child_pid=");
    e.kind = EvKind::sched_process_fork;
    m_t.comm[e.pid] = std::string(payload.substr(5, pidAt - 5));
    m_t.comm[e.pid2] = std::string(payload.substr(cc + 12, cp - cc - 12));
    return true;
}

bool FtraceTextParser::wakeInputsMark(std::string_view payload, const Head& h, std::string& why) {
    WakeInputs in;
    std::string allowed;
    if (!parseWakeInputs(payload.substr(14), in, why, &allowed)) return false;
    if (!allowed.empty()) m_t.affinity[in.pid] = allowed;
    if (m_t.events.empty() || m_t.events.back().kind != EvKind::sched_waking || m_t.events.back().pid != in.pid)
        return fail(why, "schedlab_wake: not right after the sched_waking of its pid");
    in.time = h.time;
    in.cpu = std::int16_t(h.cpu);
    m_t.wake_inputs.add(std::uint32_t(m_t.events.size() - 1), in);
    return true;
}

void FtraceTextParser::finish(bool lastLineComplete) {
    m_t.wake_inputs.finish();
    if (!lastLineComplete && !m_pendingLastProblem.empty()) {
        // The last line was cut short: reported as truncated, not as a bad line.
        --m_t.problem_count;
        if (!m_t.problems.empty() && m_t.problems.back().line == m_line) m_t.problems.pop_back();
        m_t.truncated_line = m_line;
    }
    if (m_t.nr_cpus <= 0) m_t.nr_cpus = m_maxCpu + 1;
    // Records on CPUs the header's #P:N does not have: the machine is the larger one (every
    // reader sizes by nr_cpus), and the summary says so.
    if (m_maxCpu >= m_t.nr_cpus) {
        ++m_t.problem_count;
        if (m_t.problems.size() < Trace::kMaxProblems)
            m_t.problems.push_back({m_beyondLine, fmt::format("records on CPUs up to {}, but the header says #P:{}: read as {} CPUs", m_maxCpu,
                                                              m_t.nr_cpus, m_maxCpu + 1)});
        m_t.nr_cpus = m_maxCpu + 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Reading files

namespace {

/// A line split across the pieces read, as far as it is kept (forEachLine()).
struct LineCarry {
    std::string text;
    bool overlong = false;
};

/// Calls `line` for every line of the text; returns whether the text ended with a newline.
template <typename F>
bool forEachLine(std::string_view text, LineCarry& carry, bool last, F&& line) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        const void* nl = std::memchr(text.data() + pos, '\n', text.size() - pos);
        if (!nl) break;
        const std::size_t end = std::size_t(static_cast<const char*>(nl) - text.data());
        if (!carry.text.empty() || carry.overlong) {
            if (!carry.overlong && carry.text.size() + (end - pos) <= kMaxLineBytes) {
                carry.text.append(text.substr(pos, end - pos));
                line(std::string_view(carry.text));
            } else {
                line(kOverlongLine);
            }
            carry.text.clear();
            carry.overlong = false;
        } else {
            line(end - pos <= kMaxLineBytes ? text.substr(pos, end - pos) : kOverlongLine);
        }
        pos = end + 1;
    }
    if (!carry.overlong) {
        if (carry.text.size() + (text.size() - pos) <= kMaxLineBytes) {
            carry.text.append(text.substr(pos));
        } else {
            carry.text.clear();
            carry.text.shrink_to_fit();
            carry.overlong = true;
        }
    }
    if (last && (!carry.text.empty() || carry.overlong)) {
        line(carry.overlong ? kOverlongLine : std::string_view(carry.text));
        carry.text.clear();
        carry.overlong = false;
        return false;
    }
    return true;
}

void checkIsTrace(const Trace& t, const FtraceTextParser& p) {
    if (p.parsedRecords() > 0) return;
    if (p.dataLines() == 0 && t.lines > 0)
        throw InputError(t.file, "", fmt::format("a header of {} lines and no event record (was tracing on, and the events enabled?)", t.lines));
    std::string first;
    if (!t.problems.empty()) first = fmt::format(" (line {}: {})", t.problems.front().line, t.problems.front().what);
    if (t.lines == 0) throw InputError(t.file, "", "empty file, not an ftrace text trace");
    throw InputError(t.file, "",
                     fmt::format("not an ftrace text trace: none of its first {} lines is an event record{}",
                                 std::min<std::uint64_t>(p.dataLines(), kNotATraceLines), first));
}

std::string clockBeside(const std::string& path) {
    // tracefs' trace_clock file ("[local] global counter ...") saved next to the trace.
    const auto f = std::filesystem::path(path).parent_path() / "trace_clock";
    std::ifstream in(f);
    std::string s;
    if (!in || !std::getline(in, s)) return {};
    const std::size_t a = s.find('['), b = s.find(']');
    if (a == std::string::npos || b == std::string::npos || b < a) return {};
    return s.substr(a + 1, b - a - 1);
}

struct NotATraceYet {};

}  // namespace

Trace parseFtraceText(std::string_view text, const std::string& name, const TraceReadOptions& o) {
    Trace t;
    t.file = name;
    t.clock = o.clock;
    FtraceTextParser p(t);
    LineCarry carry;
    const bool complete = forEachLine(text, carry, true, [&](std::string_view l) { p.line(l); });
    p.finish(complete);
    checkIsTrace(t, p);
    return t;
}

Trace readFtraceText(const std::string& path, const TraceReadOptions& o) {
    Trace t;
    t.file = path;
    t.clock = o.clock.empty() ? clockBeside(path) : o.clock;
    FtraceTextParser p(t);
    auto feed = [&](std::string_view l) {
        p.line(l);
        if (p.parsedRecords() == 0 && p.dataLines() >= kNotATraceLines) throw NotATraceYet{};
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path, "", fmt::format("cannot open: {}", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw InputError(path, "", "not a regular file");
    }
    unsigned char magic[2] = {0, 0};
    const bool gz = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    bool complete = true;
    try {
        if (gz) {
            // gzip: decompressed in 1 MiB pieces, never whole.
            gzFile z = ::gzdopen(fd, "rb");
            if (!z) {
                ::close(fd);
                throw InputError(path, "", "cannot read as gzip");
            }
            std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(z, ::gzclose);
            ::gzbuffer(z, 1 << 17);
            std::vector<char> buf(1 << 20);
            LineCarry carry;
            for (;;) {
                const int n = ::gzread(z, buf.data(), unsigned(buf.size()));
                if (n < 0) {
                    int err = 0;
                    const char* msg = ::gzerror(z, &err);
                    throw InputError(path, fmt::format("line {}", t.lines + 1),
                                     fmt::format("corrupt gzip data ({}); everything before is kept", msg ? msg : "?"));
                }
                if (n == 0) {
                    complete = forEachLine({}, carry, true, feed);
                    break;
                }
                forEachLine(std::string_view(buf.data(), std::size_t(n)), carry, false, feed);
                if (o.progress && !o.progress(double(::gzoffset(z)) / double(std::max<off_t>(1, st.st_size)))) throw TraceReadCancelled();
            }
        } else if (st.st_size > 0) {
            // Memory-mapped and read in order: the kernel pages it in, and each piece read is dropped.
            void* m = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            ::close(fd);
            if (m == MAP_FAILED) throw InputError(path, "", fmt::format("cannot map: {}", std::strerror(errno)));
            std::unique_ptr<void, std::function<void(void*)>> unmap(m, [&](void* q) { ::munmap(q, std::size_t(st.st_size)); });
            ::madvise(m, std::size_t(st.st_size), MADV_SEQUENTIAL);
            LineCarry carry;
            const std::string_view all(static_cast<const char*>(m), std::size_t(st.st_size));
            constexpr std::size_t kPiece = 8 << 20;  // progress every 8 MiB
            for (std::size_t at = 0; at < all.size(); at += kPiece) {
                const bool last = at + kPiece >= all.size();
                complete = forEachLine(all.substr(at, kPiece), carry, last, feed);
                // Done with this piece (a line across its end was copied into `carry`): its pages
                // leave the process's memory now, not when the kernel needs them (a file-backed
                // private mapping reads them again from the file if ever touched).
                ::madvise(static_cast<char*>(m) + at, std::min(kPiece, all.size() - at), MADV_DONTNEED);
                if (o.progress && !o.progress(double(std::min(all.size(), at + kPiece)) / double(all.size()))) throw TraceReadCancelled();
            }
        } else {
            ::close(fd);
        }
    } catch (const NotATraceYet&) {
        checkIsTrace(t, p);
    }
    p.finish(complete);
    checkIsTrace(t, p);
    return t;
}

Trace readTrace(const std::string& path, const TraceReadOptions& o) {
    return looksLikeTraceDat(path) ? readTraceDat(path, o) : readFtraceText(path, o);
}

std::pair<std::int64_t, std::int64_t> traceSpan(const Trace& t) {
    if (t.events.empty()) return {0, 0};
    std::int64_t lo = t.events.front().time, hi = lo;
    for (const auto& e : t.events) {
        lo = std::min(lo, e.time);
        hi = std::max(hi, e.time);
    }
    return {lo, hi};
}

std::string Trace::commOf(std::int32_t pid) const {
    const auto it = comm.find(pid);
    return it != comm.end() ? it->second : std::string("<...>");
}

HrtimerStats hrtimerStats(const Trace& t) {
    HrtimerStats s;
    std::unordered_map<std::int32_t, std::int16_t> armedOn;  // timer -> the CPU of its last hrtimer_start
    for (const SchedEvent& e : t.events) {
        if (e.kind == EvKind::hrtimer_start) {
            ++s.started;
            if (hrtimerFunction(e) == kHrtimerWakeup) {
                ++s.sleeps_started;
                armedOn[e.pid] = e.cpu;
            }
        } else if (e.kind == EvKind::hrtimer_expire_entry) {
            ++s.expired;
            if (hrtimerFunction(e) != kHrtimerWakeup) continue;
            ++s.sleeps_expired;
            const auto it = armedOn.find(e.pid);
            if (it == armedOn.end()) continue;
            if (it->second == e.cpu) ++s.sleeps_local;
            else ++s.sleeps_moved;
            armedOn.erase(it);
        }
    }
    return s;
}

std::string Trace::summary() const {
    std::string o = fmt::format("{}: {} events on {} CPUs", file, events.size(), nr_cpus);
    if (!events.empty()) {
        const auto [lo, hi] = traceSpan(*this);
        o += ns_timestamps ? fmt::format(", {:.6f} s .. {:.6f} s ({:.3f} ms)", double(lo) / 1e9, double(hi) / 1e9, double(hi - lo) / 1e6)
                           : fmt::format(", stamps {} .. {} (not ns: clock {})", lo, hi, clock.empty() ? "unknown" : clock);
    }
    o += fmt::format("; clock {}; layout: {} flag columns, {}tgid column{}\n", clock.empty() ? "not given (local assumed)" : clock,
                     flag_columns < 0 ? 0 : flag_columns, tgid_column ? "" : "no ", sched_plugin_layout ? ", trace-cmd's sched plugin" : "");
    o += "  events:";
    for (const auto& [n, c] : event_counts) o += fmt::format(" {} {}", n, c);
    o += "\n";
    if (!skipped_events.empty()) {
        o += "  not imported:";
        for (const auto& [n, c] : skipped_events) o += fmt::format(" {} {}", n, c);
        o += "\n";
    }
    if (const HrtimerStats h = hrtimerStats(*this); h.sleeps_started || h.sleeps_expired) {
        const std::uint64_t seen = h.sleeps_local + h.sleeps_moved;
        o += fmt::format(
            "  sleep timers (hrtimer_wakeup): {} started, {} expired; of the {} whose start is in the trace, {} on the CPU that armed "
            "them, {} ({:.1f} %) on another (moved by get_nohz_timer_target())\n",
            h.sleeps_started, h.sleeps_expired, seen, h.sleeps_local, h.sleeps_moved, seen ? 100.0 * double(h.sleeps_moved) / double(seen) : 0.0);
    }
    if (entries_written > entries_in_buffer)
        o += fmt::format("  warning: the buffer overran ({} of {} entries kept)\n", entries_in_buffer, entries_written);
    for (const auto& g : gaps)
        o += fmt::format("  gap on CPU {} ({}, line {}): {} .. {}\n", g.cpu,
                         g.buffer_started ? "buffer started" : fmt::format("{} events lost", g.lost), g.line,
                         g.from < 0 ? std::string("trace start") : fmt::format("{:.6f} s", double(g.from) / 1e9),
                         g.to < 0 ? std::string("trace end") : fmt::format("{:.6f} s", double(g.to) / 1e9));
    if (workload_start >= 0 || workload_end >= 0)
        o += fmt::format("  workload: {} .. {}\n", workload_start < 0 ? std::string("?") : fmt::format("{:.6f} s", double(workload_start) / 1e9),
                         workload_end < 0 ? std::string("?") : fmt::format("{:.6f} s", double(workload_end) / 1e9));
    if (time_backwards) o += fmt::format("  {} records older than the one before (per-CPU clocks)\n", time_backwards);
    for (const auto& p : problems) o += p.line ? fmt::format("  {}:{}: {}\n", file, p.line, p.what) : fmt::format("  {}: {}\n", file, p.what);
    if (problem_count > problems.size()) o += fmt::format("  ... and {} more unparsable lines\n", problem_count - problems.size());
    if (truncated_line) o += fmt::format("  {}:{}: last line cut short (truncated file), skipped\n", file, truncated_line);
    return o;
}

}  // namespace sched
