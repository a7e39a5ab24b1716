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

#include <algorithm>
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
#include <poll.h>
#include <sys/stat.h>
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
    /// Names and priorities with where they were last seen (time, recording CPU): the reading is
    /// split over children by CPU, and the last one seen in time order wins when they are merged.
    struct Seen {
        std::string name;
        int prio = 0;
        bool has_name = false, has_prio = false;
        std::int64_t name_ts = 0, prio_ts = 0;
        std::int16_t name_cpu = 0, prio_cpu = 0;
    };
    std::unordered_map<std::int32_t, Seen> seen;
    std::int64_t ts = 0;   ///< the record being read
    std::int16_t cpu = 0;
    void setComm(std::int32_t pid, std::string_view s) {
        Seen& x = seen[pid];
        if (!x.has_name || x.name != s) x.name.assign(s);
        x.has_name = true;
        x.name_ts = ts;
        x.name_cpu = cpu;
    }
    void setPrio(std::int32_t pid, int p) {
        Seen& x = seen[pid];
        x.prio = p;
        x.has_prio = true;
        x.prio_ts = ts;
        x.prio_cpu = cpu;
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
    c.ts = time;
    c.cpu = std::int16_t(cpu);
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
        c.setComm(e.pid, str(c, ev, "comm", rec));
        if (num(c, ev, "prio", rec, x)) c.setPrio(e.pid, int(x));
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
        if (e.pid) c.setComm(e.pid, str(c, ev, "prev_comm", rec));
        if (e.pid2) c.setComm(e.pid2, str(c, ev, "next_comm", rec));
        if (num(c, ev, "prev_prio", rec, x) && e.pid) c.setPrio(e.pid, int(x));
        if (num(c, ev, "next_prio", rec, x) && e.pid2) c.setPrio(e.pid2, int(x));
    } else if (ev == c.migrate) {
        long long o = 0, d = 0;
        if (!num(c, ev, "pid", rec, v) || !num(c, ev, "orig_cpu", rec, o) || !num(c, ev, "dest_cpu", rec, d))
            return bad("missing pid/orig_cpu/dest_cpu");
        e.kind = EvKind::sched_migrate_task;
        e.pid = std::int32_t(v);
        e.orig_cpu = std::int16_t(o);
        e.target_cpu = std::int16_t(d);
        e.cause = kMigrationCauseUnknown;
        c.setComm(e.pid, str(c, ev, "comm", rec));
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
        c.setComm(e.pid, str(c, ev, "parent_comm", rec));
        c.setComm(e.pid2, str(c, ev, "child_comm", rec));
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
    if (current > 0) {
        const auto it = c.seen.find(current);
        if (it == c.seen.end() || !it->second.has_name)
            if (const char* cm = tep_data_comm_from_pid(c.tep, current)) c.setComm(current, cm);
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
bool frame(int fd, char type, const std::string& payload) {
    const std::uint32_t n = std::uint32_t(payload.size());
    return writeAll(fd, &type, 1) && writeAll(fd, &n, 4) && writeAll(fd, payload.data(), payload.size());
}

/// One record as a child streams it: imported (an event) or not (a marker that only keeps the
/// record's place in time order, for the ordinals), with the CPU whose buffer held it.
constexpr std::uint8_t kMarker = 0xff;
struct Streamed {
    SchedEvent e;   ///< e.kind == EvKind(kMarker): a record not imported
    TraceRecord r;  ///< r.line: the child's ordinal
    std::int16_t rec_cpu = 0;
};
static_assert(std::is_trivially_copyable_v<Streamed>);

struct ChildCtx {
    Ctx c;
    int fd = -1;
    std::vector<Streamed> batch;
};

void flushBatch(ChildCtx& cc) {
    if (cc.batch.empty()) return;
    frame(cc.fd, 'B', std::string(reinterpret_cast<const char*>(cc.batch.data()), cc.batch.size() * sizeof(Streamed)));
    cc.batch.clear();
}

int onRecordStreamed(tracecmd_input* h, tep_record* rec, int cpu, void* data) {
    auto& cc = *static_cast<ChildCtx*>(data);
    Trace& t = *cc.c.t;
    const std::size_t before = t.events.size();
    onRecord(h, rec, cpu, &cc.c);
    Streamed s;
    if (t.events.size() > before) {
        s.e = t.events.back();
        s.r = t.records.back();
        t.events.pop_back();
        t.records.pop_back();
    } else {
        s.e.time = std::int64_t(rec->ts);
        s.e.kind = EvKind(kMarker);
        s.r.line = cc.c.ordinal;
    }
    s.rec_cpu = std::int16_t(cpu);
    cc.batch.push_back(s);
    if (cc.batch.size() >= kBatch) flushBatch(cc);
    return 0;
}

/// The child's side: read the file, stream it, exit.
[[noreturn]] void readInChild(const std::string& path, int fd, int part, int parts) {
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
    // This child's share of the CPUs: every parts-th one from `part`.
    cpu_set_t* set = CPU_ALLOC(std::max(t.nr_cpus, 1));
    const std::size_t setSize = CPU_ALLOC_SIZE(std::max(t.nr_cpus, 1));
    CPU_ZERO_S(setSize, set);
    bool any = false;
    for (int k = part; k < t.nr_cpus; k += parts) CPU_SET_S(std::size_t(k), setSize, set), any = true;
    const int rc = any ? tracecmd_iterate_events(h, set, int(setSize), onRecordStreamed, &cc) : 0;
    CPU_FREE(set);
    flushBatch(cc);
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
    for (const auto& [pid, x] : c.seen) {
        if (x.has_name) comm.push_back({pid, x.name, x.name_ts, x.name_cpu});
        if (x.has_prio) prio.push_back({pid, x.prio, x.prio_ts, x.prio_cpu});
    }
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
    // Two children, each reading every other CPU's buffers (the parsing is most of the time, and
    // it runs on both cores); their streams are merged here as tracecmd_iterate_events() merges
    // CPUs: the earliest record next, ties to the lower CPU, so the result is the same as one
    // reader's, record ordinals included.
    constexpr int kParts = 2;
    struct Child {
        pid_t pid = -1;
        int fd = -1;
        std::vector<Streamed> recs;
        char hdr[5] = {};         ///< the frame header being read
        std::size_t hdrAt = 0, need = 0, recsBytes = 0;
        bool inHeader = true;
        char type = 0;
        std::string other;        ///< a frame other than 'B' being read
        std::string inputs, meta, error;
        bool eof = false;
        int status = 0;
    };
    std::array<Child, kParts> ch;
    std::fflush(nullptr);  // nothing buffered may be written twice
    for (int k = 0; k < kParts; ++k) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw InputError(path, "", fmt::format("cannot read: pipe: {}", std::strerror(errno)));
        const pid_t pid = ::fork();
        if (pid < 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            for (int q = 0; q < k; ++q) ::close(ch[std::size_t(q)].fd), ::waitpid(ch[std::size_t(q)].pid, nullptr, 0);
            throw InputError(path, "", fmt::format("cannot read: fork: {}", std::strerror(errno)));
        }
        if (pid == 0) {
            ::close(fds[0]);
            for (int q = 0; q < k; ++q) ::close(ch[std::size_t(q)].fd);
            readInChild(path, fds[1], k, kParts);
        }
        ::close(fds[1]);
        ch[std::size_t(k)].pid = pid;
        ch[std::size_t(k)].fd = fds[0];
    }
    // Drain both pipes as data comes (a child blocked on a full pipe would stop reading).
    {
        // About 80 bytes of file per record: grow each child's record list once, not by doubling.
        struct stat st {};
        const std::size_t guess = ::stat(path.c_str(), &st) == 0 ? std::size_t(st.st_size) / 64 / kParts + 4096 : 0;
        for (Child& c : ch) c.recs.reserve(guess);
    }
    // Each frame is read straight into where it goes: its 5-byte header, then its payload (a
    // batch of records into the child's list, anything else into a string).
    auto step = [](Child& c) {
        if (c.need == 0) {  // a new frame: its header
            c.hdrAt = 0;
            c.need = 5;
            c.inHeader = true;
        }
        char* dst = nullptr;
        if (c.inHeader) {
            dst = c.hdr + c.hdrAt;
        } else if (c.type == 'B') {
            dst = reinterpret_cast<char*>(c.recs.data()) + c.recsBytes;
        } else {
            dst = c.other.data() + (c.other.size() - c.need);
        }
        const ssize_t r = ::read(c.fd, dst, c.need);
        if (r < 0 && errno == EINTR) return;
        if (r <= 0) {
            c.eof = true;
            return;
        }
        c.need -= std::size_t(r);
        if (c.inHeader) {
            c.hdrAt += std::size_t(r);
            if (c.need) return;
            c.type = c.hdr[0];
            std::uint32_t n = 0;
            std::memcpy(&n, c.hdr + 1, 4);
            c.inHeader = false;
            c.need = n;
            if (c.type == 'B') {
                c.recsBytes = c.recs.size() * sizeof(Streamed);
                c.recs.resize(c.recs.size() + n / sizeof(Streamed));
            } else {
                c.other.assign(n, '\0');
            }
            if (n) return;
        } else if (c.type == 'B') {
            c.recsBytes += std::size_t(r);
            if (c.need) return;
        } else if (c.need) {
            return;
        }
        // A whole frame is in.
        if (c.type == 'W') c.inputs.append(c.other);
        else if (c.type == 'M') c.meta = std::move(c.other);
        else if (c.type == 'X') c.error = std::move(c.other);
        c.other.clear();
    };
    for (;;) {
        std::array<pollfd, kParts> pf{};
        int open = 0;
        for (int k = 0; k < kParts; ++k) {
            pf[std::size_t(k)] = {ch[std::size_t(k)].eof ? -1 : ch[std::size_t(k)].fd, POLLIN, 0};
            open += !ch[std::size_t(k)].eof;
        }
        if (!open) break;
        if (::poll(pf.data(), kParts, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < kParts; ++k) {
            Child& c = ch[std::size_t(k)];
            if (!c.eof && (pf[std::size_t(k)].revents & (POLLIN | POLLHUP | POLLERR))) step(c);
        }
    }
    // A child that died mid-frame: drop the records of its half-read batch.
    for (Child& c : ch)
        if (!c.inHeader && c.type == 'B' && c.need) c.recs.resize(c.recsBytes / sizeof(Streamed));
    for (Child& c : ch) {
        ::close(c.fd);
        while (::waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR) {
        }
    }
    for (const Child& c : ch)
        if (!c.error.empty()) throw InputError(path, "", c.error);

    Trace t;
    t.file = path;
    t.flag_columns = 5;  // the binary records carry the flags (context kept per record)
    t.ns_timestamps = true;
    // The merge: global ordinals for every record, events in order, each child's event index
    // mapped to the global one (for its wake inputs) and its ordinals (for its problems and gaps).
    std::array<std::vector<std::uint32_t>, kParts> evMap, ordMap;
    std::array<std::size_t, kParts> next{};
    std::array<std::uint32_t, kParts> lastOrd{};  ///< each child's last record, as a global ordinal
    std::size_t total = 0;
    for (int k = 0; k < kParts; ++k) total += ch[std::size_t(k)].recs.size();
    t.events.reserve(total);
    t.records.reserve(total);
    std::uint32_t ord = 0;
    std::int64_t lastTime = std::numeric_limits<std::int64_t>::min();
    for (;;) {
        int pick = -1;
        for (int k = 0; k < kParts; ++k) {
            const Child& c = ch[std::size_t(k)];
            if (next[std::size_t(k)] >= c.recs.size()) continue;
            if (pick < 0) {
                pick = k;
                continue;
            }
            const Streamed& a = c.recs[next[std::size_t(k)]];
            const Streamed& b = ch[std::size_t(pick)].recs[next[std::size_t(pick)]];
            if (a.e.time < b.e.time || (a.e.time == b.e.time && a.rec_cpu < b.rec_cpu)) pick = k;
        }
        if (pick < 0) break;
        const Streamed& s = ch[std::size_t(pick)].recs[next[std::size_t(pick)]++];
        ++ord;
        auto& om = ordMap[std::size_t(pick)];
        if (om.size() <= s.r.line) om.resize(std::size_t(s.r.line) + 1, 0);
        om[s.r.line] = ord;
        lastOrd[std::size_t(pick)] = ord;
        if (s.e.time < lastTime) ++t.time_backwards;
        lastTime = std::max(lastTime, s.e.time);
        if (s.e.kind == EvKind(kMarker)) continue;
        evMap[std::size_t(pick)].push_back(std::uint32_t(t.events.size()));
        t.events.push_back(s.e);
        t.records.push_back({ord, s.r.current, s.r.context});
    }
    auto globalOrd = [&](int k, std::uint32_t line) {
        const auto& om = ordMap[std::size_t(k)];
        return line < om.size() && om[line] ? om[line] : line;
    };
    struct Latest {
        std::int64_t ts;
        std::int16_t cpu;
    };
    std::unordered_map<std::int32_t, Latest> commAt, prioAt;
    std::string crashed;
    {
        std::size_t n = 0;
        for (const Child& c : ch) n += c.inputs.size() / (sizeof(std::uint32_t) + sizeof(WakeInputs));
        t.wake_inputs.reserve(n);
    }
    for (int k = 0; k < kParts; ++k) {
        Child& c = ch[std::size_t(k)];
        constexpr std::size_t one = sizeof(std::uint32_t) + sizeof(WakeInputs);
        for (std::size_t off = 0; off + one <= c.inputs.size(); off += one) {
            std::uint32_t idx = 0;
            WakeInputs in;
            std::memcpy(&idx, c.inputs.data() + off, sizeof idx);
            std::memcpy(&in, c.inputs.data() + off + sizeof idx, sizeof in);
            if (idx < evMap[std::size_t(k)].size()) t.wake_inputs[evMap[std::size_t(k)][idx]] = in;
        }
        if (c.meta.empty()) {
            // This child died before it finished: keep what it sent, say where it stopped.
            const std::string how = WIFSIGNALED(c.status) ? fmt::format("crashed (signal {})", WTERMSIG(c.status)) : std::string("stopped");
            for (std::size_t q = 0; q < c.recs.size(); ++q)
                if (c.recs[q].e.kind != EvKind(kMarker)) ++t.event_counts[toString(c.recs[q].e.kind)];
            if (crashed.empty()) crashed = how;
            const std::uint32_t after = c.recs.empty() ? 0 : lastOrd[std::size_t(k)];
            t.truncated_line = std::max(t.truncated_line, after + 1);
            ++t.problem_count;
            t.problems.push_back({after + 1, fmt::format("libtracecmd {} reading CPUs {} of every {} after record {}: truncated or corrupt data; "
                                                         "the records before are kept",
                                                         how, k, kParts, after)});
            continue;
        }
        const nlohmann::json m = nlohmann::json::parse(c.meta);
        t.nr_cpus = std::max(t.nr_cpus, m.at("nr_cpus").get<int>());
        if (t.clock.empty()) t.clock = m.value("clock", std::string());
        for (const auto& p : m.at("comm")) {
            const auto pid = p[0].get<std::int32_t>();
            const Latest at{p[2].get<std::int64_t>(), p[3].get<std::int16_t>()};
            const auto it = commAt.find(pid);
            if (it == commAt.end() || at.ts > it->second.ts || (at.ts == it->second.ts && at.cpu > it->second.cpu)) {
                t.comm[pid] = p[1].get<std::string>();
                commAt[pid] = at;
            }
        }
        for (const auto& p : m.at("prio")) {
            const auto pid = p[0].get<std::int32_t>();
            const Latest at{p[2].get<std::int64_t>(), p[3].get<std::int16_t>()};
            const auto it = prioAt.find(pid);
            if (it == prioAt.end() || at.ts > it->second.ts || (at.ts == it->second.ts && at.cpu > it->second.cpu)) {
                t.prio[pid] = p[1].get<int>();
                prioAt[pid] = at;
            }
        }
        for (const auto& [name, n] : m.at("event_counts").get<std::map<std::string, std::uint64_t>>()) t.event_counts[name] += n;
        for (const auto& [name, n] : m.at("skipped_events").get<std::map<std::string, std::uint64_t>>()) t.skipped_events[name] += n;
        for (const auto& p : m.at("problems")) t.problems.push_back({globalOrd(k, p[0].get<std::uint32_t>()), p[1].get<std::string>()});
        t.problem_count += m.at("problem_count").get<std::uint64_t>();
        for (const auto& g : m.at("gaps"))
            t.gaps.push_back({g[0].get<int>(), g[1].get<std::int64_t>(), g[2].get<std::int64_t>(), globalOrd(k, g[3].get<std::uint32_t>()),
                              g[4].get<std::uint64_t>(), false});
        const std::int64_t ws = m.at("workload")[0].get<std::int64_t>(), we = m.at("workload")[1].get<std::int64_t>();
        if (ws >= 0) t.workload_start = std::max(t.workload_start, ws);
        if (we >= 0) t.workload_end = std::max(t.workload_end, we);
        if (m.at("iterate_failed").get<bool>() && t.events.empty())
            throw InputError(path, "", "libtracecmd could not read its records (corrupt data section)");
    }
    t.lines = ord;
    // counter, uptime (jiffies) and x86-tsc stamps are not ns (trace-replay.md §1).
    if (t.clock == "counter" || t.clock == "uptime" || t.clock == "x86-tsc") t.ns_timestamps = false;
    std::sort(t.problems.begin(), t.problems.end(), [](const TraceProblem& a, const TraceProblem& b) { return a.line < b.line; });
    if (t.problems.size() > Trace::kMaxProblems) t.problems.resize(Trace::kMaxProblems);
    std::sort(t.gaps.begin(), t.gaps.end(), [](const TraceGap& a, const TraceGap& b) { return a.line < b.line; });
    if (!crashed.empty()) {
        if (t.events.empty()) throw InputError(path, "", fmt::format("libtracecmd {} reading it: truncated or corrupt file", crashed));
        if (t.nr_cpus <= 0) {
            std::int32_t maxCpu = -1;
            for (const auto& e : t.events) maxCpu = std::max<std::int32_t>(maxCpu, e.cpu);
            t.nr_cpus = maxCpu + 1;
        }
    }
    return t;
}

}  // namespace sched
