// trace_dat.cpp: trace-cmd's trace.dat (file versions 6 and 7, compressed or not) read through
// libtracecmd/libtraceevent into the same Trace as the text importer. Records come merged in
// time order from tracecmd_iterate_events(); Trace::records[i].line is the record's ordinal.
#include "trace.h"

#include "input_error.h"

#include <fmt/format.h>

#include <event-parse.h>
#include <nlohmann/json.hpp>

#include <sched.h>

// libtracecmd's API as trace-cmd.h declares it (libtracecmd 1.x). trace-cmd.h itself is not
// included: it pulls in tracefs.h, whose inline helpers pass an int as an enum, which C
// allows and C++ (GCC and clang) rejects.
extern "C" {
struct tracecmd_input;
struct tracecmd_input* tracecmd_open(const char* file, int flags);
void tracecmd_close(struct tracecmd_input* handle);
struct tep_handle* tracecmd_get_tep(struct tracecmd_input* handle);
const char* tracecmd_get_trace_clock(struct tracecmd_input* handle);
int tracecmd_iterate_events(struct tracecmd_input* handle, cpu_set_t* cpus, int cpu_size,
                            int (*callback)(struct tracecmd_input* handle, struct tep_record*, int, void*), void* callback_data);
}
constexpr int TRACECMD_FL_LOAD_NO_PLUGINS = 1 << 0;
constexpr int TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS = 1 << 1;

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sched {

namespace {

constexpr int kTraceFlagNmi = 0x40;  // kernel's TRACE_FLAG_NMI (not in libtraceevent's enum)

struct Ctx {
    Trace* t = nullptr;
    tep_handle* tep = nullptr;
    tep_event *waking = nullptr, *wakeup = nullptr, *wakeup_new = nullptr, *migrate = nullptr;  ///< the events read
    tep_event *sw = nullptr, *idle = nullptr, *fork = nullptr, *exit = nullptr, *print = nullptr;
    std::uint32_t ordinal = 0;
    std::uint32_t pushed = 0;                      ///< events imported so far (batches are flushed)
    std::int32_t lastWakingPid = -1;               ///< pid of the last imported event if it is a sched_waking
    std::vector<std::pair<std::uint32_t, WakeInputs>> inputs;  ///< schedlab_wake prints, by event index
    std::vector<std::int64_t> cpuLast;
    std::int64_t lastTime = std::numeric_limits<std::int64_t>::min();
    /// Looked up once per (event, field name): tep_find_field() compares names.
    struct FieldKey {
        tep_event* ev;
        const char* name;  ///< a string literal: compared by address
        tep_format_field* f;
    };
    std::array<FieldKey, 256> fields{};  ///< direct-mapped: a collision only costs a lookup again
    /// Records per event, counted by event pointer and named at the end (no string per record).
    std::vector<std::pair<tep_event*, std::uint64_t>> counts, skipped;

    tep_format_field* field(tep_event* ev, const char* name) {
        FieldKey& k = fields[((std::uintptr_t(ev) >> 4) ^ (std::uintptr_t(name) >> 1) ^ (std::uintptr_t(name) >> 9)) & 255];
        if (k.ev != ev || k.name != name) k = {ev, name, ev ? tep_find_field(ev, name) : nullptr};
        return k.f;
    }
    static void count(std::vector<std::pair<tep_event*, std::uint64_t>>& v, tep_event* ev) {
        for (auto& [e, n] : v)
            if (e == ev) {
                ++n;
                return;
            }
        v.push_back({ev, 1});
    }
};

void setComm(Trace& t, std::int32_t pid, std::string_view s) {
    const auto it = t.comm.find(pid);
    if (it == t.comm.end()) t.comm.emplace(pid, std::string(s));
    else if (it->second != s) it->second.assign(s);
}

bool num(Ctx& c, tep_event* ev, const char* name, const tep_record* rec, long long& v) {
    tep_format_field* f = c.field(ev, name);
    unsigned long long u = 0;
    if (!f || tep_read_number_field(f, rec->data, &u) != 0) return false;
    // Sign-extend signed fields narrower than 64 bits.
    if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
        const int bits = f->size * 8;
        const unsigned long long sign = 1ull << (bits - 1);
        u &= (sign << 1) - 1;
        v = (long long)((u ^ sign) - sign);
    } else {
        v = (long long)u;
    }
    return true;
}

/// A string field of the record, pointing into the record's data.
std::string_view str(Ctx& c, tep_event* ev, const char* name, const tep_record* rec) {
    tep_format_field* f = c.field(ev, name);
    if (!f || rec->size < 0 || unsigned(f->offset) + unsigned(f->size) > unsigned(rec->size)) return {};
    const char* p = static_cast<const char*>(rec->data) + f->offset;
    if (f->size == 0) return std::string_view(p, ::strnlen(p, unsigned(rec->size) - unsigned(f->offset)));  // char buf[]
    if (f->flags & TEP_FIELD_IS_DYNAMIC) {  // __data_loc: offset and length packed in 32 bits
        unsigned long long loc = 0;
        if (tep_read_number_field(f, rec->data, &loc) != 0) return {};
        const unsigned off = unsigned(loc & 0xffff), len = unsigned(loc >> 16);
        if (off + len > unsigned(rec->size)) return {};
        p = static_cast<const char*>(rec->data) + off;
        return std::string_view(p, ::strnlen(p, len));
    }
    return std::string_view(p, ::strnlen(p, f->size));
}

char contextOf(int flags) {
    if (flags & kTraceFlagNmi) return 'z';
    if ((flags & TRACE_FLAG_HARDIRQ) && (flags & TRACE_FLAG_SOFTIRQ)) return 'H';
    if (flags & TRACE_FLAG_HARDIRQ) return 'h';
    if (flags & TRACE_FLAG_SOFTIRQ) return 's';
    return '.';
}

/// 6.1's prev_state: TASK_REPORT bits S D T t X Z P I (0x01..0x80), 0 = R; 0x100 = preempted (R+).
char prevStateLetter(long long st) {
    static const char letters[] = "SDTtXZPI";
    for (int b = 0; b < 8; ++b)
        if (st & (1ll << b)) return letters[b];
    return 'R';
}

int onRecord(tracecmd_input*, tep_record* rec, int cpu, void* data) {
    Ctx& c = *static_cast<Ctx*>(data);
    Trace& t = *c.t;
    ++c.ordinal;
    const int type = tep_data_type(c.tep, rec);
    tep_event* ev = tep_find_event(c.tep, type);
    const std::int64_t time = std::int64_t(rec->ts);
    if (cpu < 0 || cpu >= 4096) return 0;
    if (std::size_t(cpu) >= c.cpuLast.size()) c.cpuLast.resize(std::size_t(cpu) + 1, -1);
    if (rec->missed_events) {
        t.gaps.push_back({cpu, c.cpuLast[std::size_t(cpu)], time, c.ordinal, rec->missed_events > 0 ? std::uint64_t(rec->missed_events) : 0, false});
    }
    c.cpuLast[std::size_t(cpu)] = time;
    if (time < c.lastTime) ++t.time_backwards;
    c.lastTime = std::max(c.lastTime, time);
    if (!ev) {
        ++t.problem_count;
        if (t.problems.size() < Trace::kMaxProblems) t.problems.push_back({c.ordinal, fmt::format("record of unknown event type {}", type)});
        return 0;
    }
    const char* name = ev->name ? ev->name : "?";
    Ctx::count(c.counts, ev);
    const std::int32_t current = tep_data_pid(c.tep, rec);
    SchedEvent e;
    e.time = time;
    e.cpu = std::int16_t(cpu);
    long long v = 0, w = 0, x = 0;
    auto bad = [&](const char* what) {
        ++t.problem_count;
        if (t.problems.size() < Trace::kMaxProblems) t.problems.push_back({c.ordinal, fmt::format("{}: {}", name, what)});
        return 0;
    };
    auto wakeLike = [&](EvKind k) {
        if (!num(c, ev, "pid", rec, v) || !num(c, ev, "target_cpu", rec, w)) return false;
        e.kind = k;
        e.pid = std::int32_t(v);
        e.target_cpu = std::int16_t(w);
        setComm(t, e.pid, str(c, ev, "comm", rec));
        if (num(c, ev, "prio", rec, x)) t.prio[e.pid] = int(x);
        return true;
    };
    if (ev == c.waking || ev == c.wakeup || ev == c.wakeup_new) {
        const EvKind k = ev == c.waking ? EvKind::sched_waking : ev == c.wakeup ? EvKind::sched_wakeup : EvKind::sched_wakeup_new;
        if (!wakeLike(k)) return bad("missing pid/target_cpu");
    } else if (ev == c.sw) {
        long long pp = 0, np = 0, st = 0;
        if (!num(c, ev, "prev_pid", rec, pp) || !num(c, ev, "next_pid", rec, np) || !num(c, ev, "prev_state", rec, st))
            return bad("missing prev_pid/next_pid/prev_state");
        e.kind = EvKind::sched_switch;
        e.pid = std::int32_t(pp);
        e.pid2 = std::int32_t(np);
        e.prev_state = prevStateLetter(st);
        if (e.pid) setComm(t, e.pid, str(c, ev, "prev_comm", rec));
        if (e.pid2) setComm(t, e.pid2, str(c, ev, "next_comm", rec));
        if (num(c, ev, "prev_prio", rec, x) && e.pid) t.prio[e.pid] = int(x);
        if (num(c, ev, "next_prio", rec, x) && e.pid2) t.prio[e.pid2] = int(x);
    } else if (ev == c.migrate) {
        long long o = 0, d = 0;
        if (!num(c, ev, "pid", rec, v) || !num(c, ev, "orig_cpu", rec, o) || !num(c, ev, "dest_cpu", rec, d))
            return bad("missing pid/orig_cpu/dest_cpu");
        e.kind = EvKind::sched_migrate_task;
        e.pid = std::int32_t(v);
        e.orig_cpu = std::int16_t(o);
        e.target_cpu = std::int16_t(d);
        e.cause = kMigrationCauseUnknown;
        setComm(t, e.pid, str(c, ev, "comm", rec));
    } else if (ev == c.idle) {
        if (!num(c, ev, "state", rec, v) || !num(c, ev, "cpu_id", rec, w)) return bad("missing state/cpu_id");
        e.kind = EvKind::cpu_idle;
        e.state = std::uint32_t(v);
        e.cpu = std::int16_t(w);
    } else if (ev == c.fork) {
        if (!num(c, ev, "parent_pid", rec, v) || !num(c, ev, "child_pid", rec, w)) return bad("missing parent_pid/child_pid");
        e.kind = EvKind::sched_process_fork;
        e.pid = std::int32_t(v);
        e.pid2 = std::int32_t(w);
        setComm(t, e.pid, str(c, ev, "parent_comm", rec));
        setComm(t, e.pid2, str(c, ev, "child_comm", rec));
    } else if (ev == c.exit) {
        if (!num(c, ev, "pid", rec, v)) return bad("missing pid");
        e.kind = EvKind::sched_process_exit;
        e.pid = std::int32_t(v);
    } else {
        if (ev == c.print) {
            const std::string buf(str(c, ev, "buf", rec));
            if (buf.rfind("schedlab_wake ", 0) == 0) {
                // schedlab's own export: the untraced inputs of the waking just before (sched_event.h).
                WakeInputs in;
                std::string why;
                std::string_view msg(buf);
                msg.remove_prefix(14);
                while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.remove_suffix(1);
                if (!parseWakeInputs(msg, in, why)) return bad(why.c_str()), 0;
                if (c.lastWakingPid != in.pid || c.pushed == 0) return bad("schedlab_wake: not right after the sched_waking of its pid"), 0;
                in.time = time;
                in.cpu = std::int16_t(cpu);
                c.inputs.push_back({c.pushed - 1, in});
                return 0;
            }
            if (buf.find("WORKLOAD_START") != std::string::npos) t.workload_start = time;
            if (buf.find("WORKLOAD_END") != std::string::npos) t.workload_end = time;
        } else {
            Ctx::count(c.skipped, ev);
        }
        return 0;
    }
    if (current > 0 && t.comm.find(current) == t.comm.end()) {
        const char* cm = tep_data_comm_from_pid(c.tep, current);
        if (cm) t.comm[current] = cm;
    }
    t.events.push_back(e);
    t.records.push_back({c.ordinal, current, contextOf(tep_data_flags(c.tep, rec))});
    ++c.pushed;
    c.lastWakingPid = e.kind == EvKind::sched_waking ? e.pid : -1;
    return 0;
}

}  // namespace

bool looksLikeTraceDat(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[10] = {};
    return in.read(magic, 10) && std::memcmp(magic, "\x17\x08\x44tracing", 10) == 0;
}

namespace {

// libtracecmd 1.3 can crash on a truncated or corrupt file (seen: SIGSEGV in tracecmd_open_fd's
// error path, and in the record reader of a cut version-6 file). So the reading runs in a
// forked child that streams what it read through a pipe: a crash costs the child, and the
// records read before it stay usable.
//
// Frames on the pipe: [u8 type][u32 length][payload]; 'B' a batch of (SchedEvent,
// TraceRecord) pairs, 'M' the rest of the Trace as JSON, 'X' an error message.
static_assert(std::is_trivially_copyable_v<SchedEvent> && std::is_trivially_copyable_v<TraceRecord>);
constexpr std::size_t kBatch = 4096;

bool writeAll(int fd, const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n) {
        const ssize_t w = ::write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w;
        n -= std::size_t(w);
    }
    return true;
}
bool readAll(int fd, void* p, std::size_t n) {
    char* c = static_cast<char*>(p);
    while (n) {
        const ssize_t r = ::read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        c += r;
        n -= std::size_t(r);
    }
    return true;
}
bool frame(int fd, char type, const std::string& payload) {
    const std::uint32_t n = std::uint32_t(payload.size());
    return writeAll(fd, &type, 1) && writeAll(fd, &n, 4) && writeAll(fd, payload.data(), payload.size());
}

void flushBatch(int fd, Trace& t) {
    if (t.events.empty()) return;
    std::string b;
    b.reserve(t.events.size() * (sizeof(SchedEvent) + sizeof(TraceRecord)));
    for (std::size_t i = 0; i < t.events.size(); ++i) {
        b.append(reinterpret_cast<const char*>(&t.events[i]), sizeof(SchedEvent));
        b.append(reinterpret_cast<const char*>(&t.records[i]), sizeof(TraceRecord));
    }
    frame(fd, 'B', b);
    t.events.clear();
    t.records.clear();
}

struct ChildCtx {
    Ctx c;
    int fd = -1;
};

int onRecordStreamed(tracecmd_input* h, tep_record* rec, int cpu, void* data) {
    auto& cc = *static_cast<ChildCtx*>(data);
    onRecord(h, rec, cpu, &cc.c);
    if (cc.c.t->events.size() >= kBatch) flushBatch(cc.fd, *cc.c.t);
    return 0;
}

/// The child's side: read the file, stream it, exit.
[[noreturn]] void readInChild(const std::string& path, int fd) {
    tracecmd_input* h = tracecmd_open(path.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
    if (!h) {
        frame(fd, 'X', "libtracecmd cannot read it (truncated, corrupt, or an unsupported file version)");
        ::_exit(0);
    }
    Trace t;
    ChildCtx cc;
    cc.fd = fd;
    Ctx& c = cc.c;
    c.t = &t;
    c.tep = tracecmd_get_tep(h);
    t.nr_cpus = tep_get_cpus(c.tep);
    auto find = [&](const char* sys, const char* name) { return tep_find_event_by_name(c.tep, sys, name); };
    c.waking = find("sched", "sched_waking");
    c.wakeup = find("sched", "sched_wakeup");
    c.wakeup_new = find("sched", "sched_wakeup_new");
    c.migrate = find("sched", "sched_migrate_task");
    c.sw = find("sched", "sched_switch");
    c.idle = find("power", "cpu_idle");
    c.fork = find("sched", "sched_process_fork");
    c.exit = find("sched", "sched_process_exit");
    c.print = find("ftrace", "print");
    const int rc = tracecmd_iterate_events(h, nullptr, 0, onRecordStreamed, &cc);
    flushBatch(fd, t);
    for (const auto& [ev, n] : c.counts) t.event_counts[ev->name ? ev->name : "?"] += n;
    for (const auto& [ev, n] : c.skipped) t.skipped_events[ev->name ? ev->name : "?"] += n;
    static_assert(std::is_trivially_copyable_v<WakeInputs>);
    for (std::size_t k = 0; k < c.inputs.size(); k += kBatch) {
        std::string b;
        for (std::size_t q = k; q < std::min(c.inputs.size(), k + kBatch); ++q) {
            b.append(reinterpret_cast<const char*>(&c.inputs[q].first), sizeof(std::uint32_t));
            b.append(reinterpret_cast<const char*>(&c.inputs[q].second), sizeof(WakeInputs));
        }
        frame(fd, 'W', b);
    }
    nlohmann::json m;
    m["nr_cpus"] = t.nr_cpus > 0 ? t.nr_cpus : int(c.cpuLast.size());
    // The trace clock trace-cmd saved (its trace_clock file, "[local] global ..."; or the name).
    std::string clock = tracecmd_get_trace_clock(h) ? tracecmd_get_trace_clock(h) : "";
    if (const auto a = clock.find('['), b = clock.find(']'); a != std::string::npos && b != std::string::npos && b > a)
        clock = clock.substr(a + 1, b - a - 1);
    while (!clock.empty() && (clock.back() == '\n' || clock.back() == ' ')) clock.pop_back();
    m["clock"] = clock;
    m["records"] = c.ordinal;
    m["iterate_failed"] = rc < 0;
    nlohmann::json comm = nlohmann::json::array(), prio = nlohmann::json::array();
    for (const auto& [pid, name] : t.comm) comm.push_back({pid, name});
    for (const auto& [pid, p] : t.prio) prio.push_back({pid, p});
    m["comm"] = comm;
    m["prio"] = prio;
    m["event_counts"] = t.event_counts;
    m["skipped_events"] = t.skipped_events;
    nlohmann::json probs = nlohmann::json::array(), gaps = nlohmann::json::array();
    for (const auto& p : t.problems) probs.push_back({p.line, p.what});
    for (const auto& g : t.gaps) gaps.push_back({g.cpu, g.from, g.to, g.line, g.lost});
    m["problems"] = probs;
    m["problem_count"] = t.problem_count;
    m["gaps"] = gaps;
    m["workload"] = {t.workload_start, t.workload_end};
    m["time_backwards"] = t.time_backwards;
    frame(fd, 'M', m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    tracecmd_close(h);
    ::_exit(0);
}

}  // namespace

Trace readTraceDat(const std::string& path) {
    if (!looksLikeTraceDat(path)) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw InputError(path, "", "cannot open");
        throw InputError(path, "", "not a trace-cmd trace.dat (no \"\\027\\010Dtracing\" magic at the start)");
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw InputError(path, "", fmt::format("cannot read: pipe: {}", std::strerror(errno)));
    std::fflush(nullptr);  // nothing buffered may be written twice
    const pid_t child = ::fork();
    if (child < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw InputError(path, "", fmt::format("cannot read: fork: {}", std::strerror(errno)));
    }
    if (child == 0) {
        ::close(fds[0]);
        readInChild(path, fds[1]);
    }
    ::close(fds[1]);
    Trace t;
    t.file = path;
    t.flag_columns = 5;  // the binary records carry the flags (context kept per record)
    t.ns_timestamps = true;
    std::string error, meta, inputs;
    for (;;) {
        char type = 0;
        std::uint32_t n = 0;
        if (!readAll(fds[0], &type, 1) || !readAll(fds[0], &n, 4)) break;
        std::string payload(n, '\0');
        if (n && !readAll(fds[0], payload.data(), n)) break;
        if (type == 'B') {
            constexpr std::size_t one = sizeof(SchedEvent) + sizeof(TraceRecord);
            for (std::size_t off = 0; off + one <= payload.size(); off += one) {
                SchedEvent e;
                TraceRecord r;
                std::memcpy(&e, payload.data() + off, sizeof e);
                std::memcpy(&r, payload.data() + off + sizeof e, sizeof r);
                t.events.push_back(e);
                t.records.push_back(r);
            }
        } else if (type == 'W') {
            inputs.append(payload);  // (u32 index, WakeInputs) pairs, put in the map at the end
        } else if (type == 'M') {
            meta = std::move(payload);
        } else if (type == 'X') {
            error = std::move(payload);
        }
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!error.empty()) throw InputError(path, "", error);
    {
        constexpr std::size_t one = sizeof(std::uint32_t) + sizeof(WakeInputs);
        t.wake_inputs.reserve(inputs.size() / one);
        for (std::size_t off = 0; off + one <= inputs.size(); off += one) {
            std::uint32_t idx = 0;
            WakeInputs in;
            std::memcpy(&idx, inputs.data() + off, sizeof idx);
            std::memcpy(&in, inputs.data() + off + sizeof idx, sizeof in);
            t.wake_inputs[idx] = in;
        }
    }
    if (!meta.empty()) {
        const nlohmann::json m = nlohmann::json::parse(meta);
        t.nr_cpus = m.at("nr_cpus").get<int>();
        t.clock = m.value("clock", std::string());
        // counter, uptime (jiffies) and x86-tsc stamps are not ns (trace-replay.md §1).
        if (t.clock == "counter" || t.clock == "uptime" || t.clock == "x86-tsc") t.ns_timestamps = false;
        t.lines = m.at("records").get<std::uint64_t>();
        for (const auto& p : m.at("comm")) t.comm[p[0].get<std::int32_t>()] = p[1].get<std::string>();
        for (const auto& p : m.at("prio")) t.prio[p[0].get<std::int32_t>()] = p[1].get<int>();
        t.event_counts = m.at("event_counts").get<std::map<std::string, std::uint64_t>>();
        t.skipped_events = m.at("skipped_events").get<std::map<std::string, std::uint64_t>>();
        for (const auto& p : m.at("problems")) t.problems.push_back({p[0].get<std::uint32_t>(), p[1].get<std::string>()});
        t.problem_count = m.at("problem_count").get<std::uint64_t>();
        for (const auto& g : m.at("gaps"))
            t.gaps.push_back({g[0].get<int>(), g[1].get<std::int64_t>(), g[2].get<std::int64_t>(), g[3].get<std::uint32_t>(),
                              g[4].get<std::uint64_t>(), false});
        t.workload_start = m.at("workload")[0].get<std::int64_t>();
        t.workload_end = m.at("workload")[1].get<std::int64_t>();
        t.time_backwards = m.at("time_backwards").get<std::uint64_t>();
        if (m.at("iterate_failed").get<bool>() && t.events.empty())
            throw InputError(path, "", "libtracecmd could not read its records (corrupt data section)");
        return t;
    }
    // The child died before it finished: keep what it sent.
    const std::string how = WIFSIGNALED(status) ? fmt::format("crashed (signal {})", WTERMSIG(status)) : std::string("stopped");
    if (t.events.empty())
        throw InputError(path, "", fmt::format("libtracecmd {} reading it: truncated or corrupt file", how));
    t.lines = t.records.back().line;
    t.truncated_line = t.records.back().line + 1;
    ++t.problem_count;
    t.problems.push_back({t.truncated_line, fmt::format("libtracecmd {} after record {}: truncated or corrupt data; the {} records before are kept",
                                                        how, t.records.back().line, t.events.size())});
    std::int32_t maxCpu = -1;
    for (const auto& e : t.events) {
        ++t.event_counts[toString(e.kind)];
        maxCpu = std::max<std::int32_t>(maxCpu, e.cpu);
    }
    t.nr_cpus = maxCpu + 1;
    return t;
}

}  // namespace sched
