// SPDX-License-Identifier: GPL-2.0-or-later
// trace_dat.cpp: trace-cmd's trace.dat (file versions 6 and 7, compressed or not) read through
// libtracecmd/libtraceevent into the same Trace as the text importer. Forked children read the
// CPUs' buffers (tracecmd_read_data, one CPU after another) into shared memory; the parent merges
// them in time order as tracecmd_iterate_events() would; Trace::records[i].line is the record's
// ordinal in that order.
#include "trace/trace.h"

#include "util/input_error.h"
#include "util/pid_table.h"

#include <fmt/format.h>

#include <event-parse.h>
#include <nlohmann/json.hpp>

// libtracecmd's API as trace-cmd.h declares it (libtracecmd 1.x). trace-cmd.h itself is not
// included: it pulls in tracefs.h, whose inline helpers pass an int as an enum, which C
// allows and C++ (GCC and clang) rejects.
extern "C" {
struct tracecmd_input;
struct tracecmd_input* tracecmd_open(const char* file, int flags);
void tracecmd_close(struct tracecmd_input* handle);
struct tep_handle* tracecmd_get_tep(struct tracecmd_input* handle);
const char* tracecmd_get_trace_clock(struct tracecmd_input* handle);
struct tep_record* tracecmd_read_data(struct tracecmd_input* handle, int cpu);
void tracecmd_free_record(struct tep_record* record);
// Not in trace-cmd.h (trace-cmd-private.h) but exported by libtracecmd 1.x: the size of a CPU's
// buffer data, for the progress. Weak: without it the progress counts CPUs.
unsigned long long tracecmd_get_cpu_file_size(struct tracecmd_input* handle, int cpu) __attribute__((weak));
int tracecmd_page_size(struct tracecmd_input* handle) __attribute__((weak));
}
constexpr int TRACECMD_FL_LOAD_NO_PLUGINS = 1 << 0;
constexpr int TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS = 1 << 1;

#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <limits>
#include <memory>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include <atomic>
#include <csignal>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sched {

namespace {

constexpr int kTraceFlagNmi = 0x40;  // kernel's TRACE_FLAG_NMI (not in libtraceevent's enum)

/// One record as a child hands it over: imported (an event) or not (a marker that only keeps
/// the record's place in time order, for the ordinals). The CPU is its stream's.
constexpr std::uint8_t kMarker = 0xff;
struct Streamed {
    SchedEvent e;  ///< e.kind == EvKind(kMarker): a record not imported
    std::int32_t current = 0;
    char context = '?';
};
static_assert(std::is_trivially_copyable_v<Streamed> && std::is_trivially_copyable_v<WakeInputs>);
/// A schedlab_wake print: the inputs of the sched_waking that is the child's record `waking`.
struct StreamedInputs {
    std::uint64_t waking = 0;
    WakeInputs in;
};
static_assert(std::is_trivially_copyable_v<StreamedInputs>);

/// Appends to a memfd in batches of kBatch elements (write(), no page faults in the child) and
/// publishes how many are whole, so that the parent reads them once the child has ended, also
/// after a crash.
constexpr std::size_t kBatch = 4096;
template <class T>
struct ShmAppender {
    int fd = -1;
    std::atomic<std::uint64_t>* published = nullptr;
    std::vector<T> buf;
    std::uint64_t flushed = 0;
    bool ok = true;
    std::uint64_t size() const { return flushed + buf.size(); }
    /// A new element at index size() - 1 (the batch before it written out first when full).
    T& next() {
        if (buf.size() == kBatch) flush();
        if (buf.capacity() < kBatch) buf.reserve(kBatch);
        return buf.emplace_back();
    }
    void flush() {
        const char* p = reinterpret_cast<const char*>(buf.data());
        std::size_t n = buf.size() * sizeof(T);
        while (n && ok) {
            const ssize_t w = ::write(fd, p, n);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) ok = false;
            else p += w, n -= std::size_t(w);
        }
        if (ok) flushed += buf.size();
        buf.clear();
        if (published) published->store(flushed, std::memory_order_release);
    }
};

struct Ctx {
    Trace* t = nullptr;
    tep_handle* tep = nullptr;
    tep_event *waking = nullptr, *wakeup = nullptr, *wakeup_new = nullptr, *migrate = nullptr;  ///< the events read
    tep_event *sw = nullptr, *idle = nullptr, *fork = nullptr, *exit = nullptr, *print = nullptr;
    bool swap = false;          ///< the file's byte order is not the host's: libtraceevent reads the numbers
    std::uint64_t ordinal = 0;  ///< the record being read: its index in the child's list, plus 1
    /// The last imported event of the CPU being read, when it is a sched_waking: its pid and index.
    std::int32_t lastWakingPid = -1;
    std::uint64_t lastWakingAt = 0;
    ShmAppender<StreamedInputs>* inputs = nullptr;  ///< where schedlab_wake prints go
    std::int64_t cpuLast = -1;                      ///< the previous record's time on the CPU being read
    /// Looked up once per (event, field name): tep_find_field() compares names.
    struct FieldKey {
        tep_event* ev;
        const char* name;  ///< a string literal: compared by address
        tep_format_field* f;
    };
    std::array<FieldKey, 256> fields{};  ///< direct-mapped: a collision only costs a lookup again
    std::vector<tep_event*> byType;      ///< tep_find_event() once per type (it bisects)
    std::vector<bool> typeLooked;
    tep_format_field *commonType = nullptr, *commonPid = nullptr, *commonFlags = nullptr;
    /// Records per event, counted by event pointer and named at the end (no string per record).
    std::vector<std::pair<tep_event*, std::uint64_t>> counts, skipped;

    tep_format_field* field(tep_event* ev, const char* name) {
        FieldKey& k = fields[((std::uintptr_t(ev) >> 4) ^ (std::uintptr_t(name) >> 1) ^ (std::uintptr_t(name) >> 9)) & 255];
        if (k.ev != ev || k.name != name) k = {ev, name, ev ? tep_find_field(ev, name) : nullptr};
        return k.f;
    }
    tep_event* event(int type) {
        if (type < 0 || type > 0xffff) return nullptr;
        if (std::size_t(type) >= byType.size()) {
            byType.resize(std::size_t(type) + 1, nullptr);
            typeLooked.resize(std::size_t(type) + 1, false);
        }
        if (!typeLooked[std::size_t(type)]) {
            byType[std::size_t(type)] = tep_find_event(tep, type);
            typeLooked[std::size_t(type)] = true;
        }
        return byType[std::size_t(type)];
    }
    /// Names and priorities with where they were seen (time, recording CPU): the children read
    /// one CPU after another, so the one seen last in time order is kept (ties: the higher CPU,
    /// which a time-ordered reading gives last; on one CPU, the later record).
    struct Seen {
        std::string name;
        char raw[16] = {};  ///< the comm field as recorded (char[TASK_COMM_LEN]), when it was one
        bool has_raw = false;
        int prio = 0;
        bool has_name = false, has_prio = false;
        std::int64_t name_ts = 0, prio_ts = 0;
        std::int16_t name_cpu = 0, prio_cpu = 0;
    };
    PidTable<Seen> seenByPid;
    std::int64_t ts = 0;  ///< the record being read
    std::int16_t cpu = 0;
    Seen& seen(std::int32_t pid) { return seenByPid[pid]; }
    const Seen* seenIf(std::int32_t pid) const { return seenByPid.find(pid); }
    bool later(std::int64_t t0, std::int16_t c0) const { return ts > t0 || (ts == t0 && cpu >= c0); }
    void setComm(std::int32_t pid, std::string_view s) {
        Seen& x = seen(pid);
        if (x.has_name && !later(x.name_ts, x.name_cpu)) return;
        if (!x.has_name || x.name != s) x.name.assign(s);
        x.has_raw = false;
        x.has_name = true;
        x.name_ts = ts;
        x.name_cpu = cpu;
    }
    /// A comm field of a record: 16 bytes compared as they are with the ones seen last (most
    /// records name a task already named so), else its string taken.
    void setComm(std::int32_t pid, tep_event* ev, const char* field, const tep_record* rec);
    void setCommSeen(Seen& x, const char* p) {
        if (x.has_name && !later(x.name_ts, x.name_cpu)) return;
        if (!x.has_raw || std::memcmp(x.raw, p, 16) != 0) {
            x.name.assign(p, ::strnlen(p, 16));
            std::memcpy(x.raw, p, 16);
            x.has_raw = true;
        }
        x.has_name = true;
        x.name_ts = ts;
        x.name_cpu = cpu;
    }
    void setPrio(std::int32_t pid, int p) {
        Seen& x = seen(pid);
        if (x.has_prio && !later(x.prio_ts, x.prio_cpu)) return;
        x.prio = p;
        x.has_prio = true;
        x.prio_ts = ts;
        x.prio_cpu = cpu;
    }
    template <class F>
    void forEachSeen(F&& f) const {
        seenByPid.forEach([&](std::int32_t pid, const Seen& x) {
            if (x.has_name || x.has_prio) f(pid, x);
        });
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

/// A number field of the record: read in place when the file has the host's byte order (the
/// common case; libtraceevent's reader is a call and a switch per field), else by libtraceevent.
bool readField(const Ctx& c, const tep_format_field* f, const tep_record* rec, unsigned long long& u) {
    if (!f) return false;
    if (!c.swap && rec->size >= 0 && unsigned(f->offset) + unsigned(f->size) <= unsigned(rec->size)) {
        const char* p = static_cast<const char*>(rec->data) + f->offset;
        switch (f->size) {
        case 1: u = *reinterpret_cast<const std::uint8_t*>(p); return true;
        case 2: {
            std::uint16_t v;
            std::memcpy(&v, p, 2);
            u = v;
            return true;
        }
        case 4: {
            std::uint32_t v;
            std::memcpy(&v, p, 4);
            u = v;
            return true;
        }
        case 8: {
            std::uint64_t v;
            std::memcpy(&v, p, 8);
            u = v;
            return true;
        }
        default: break;
        }
    }
    return tep_read_number_field(const_cast<tep_format_field*>(f), rec->data, &u) == 0;
}

bool num(Ctx& c, tep_event* ev, const char* name, const tep_record* rec, long long& v) {
    tep_format_field* f = c.field(ev, name);
    unsigned long long u = 0;
    if (!readField(c, f, rec, u)) return false;
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
        if (!readField(c, f, rec, loc)) return {};
        const unsigned off = unsigned(loc & 0xffff), len = unsigned(loc >> 16);
        if (off + len > unsigned(rec->size)) return {};
        p = static_cast<const char*>(rec->data) + off;
        return std::string_view(p, ::strnlen(p, len));
    }
    return std::string_view(p, ::strnlen(p, f->size));
}

void Ctx::setComm(std::int32_t pid, tep_event* ev, const char* name, const tep_record* rec) {
    const tep_format_field* f = field(ev, name);
    if (f && f->size == 16 && !(f->flags & TEP_FIELD_IS_DYNAMIC) && rec->size >= 0 && unsigned(f->offset) + 16u <= unsigned(rec->size))
        return setCommSeen(seen(pid), static_cast<const char*>(rec->data) + f->offset);
    setComm(pid, str(*this, ev, name, rec));
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

/// One record of CPU `cpu` (c.ordinal already set to its place in the child's list): an event
/// into `s` (returns true), or not imported (false: `s` is left for the caller to mark).
bool onRecord(Ctx& c, tep_record* rec, int cpu, Streamed& s) {
    Trace& t = *c.t;
    unsigned long long u = 0;
    const int type = c.commonType && readField(c, c.commonType, rec, u) ? int(u) : tep_data_type(c.tep, rec);
    tep_event* ev = c.event(type);
    const std::int64_t time = std::int64_t(rec->ts);
    c.ts = time;
    c.cpu = std::int16_t(cpu);
    if (rec->missed_events)
        t.gaps.push_back({cpu, c.cpuLast, time, std::uint32_t(c.ordinal), rec->missed_events > 0 ? std::uint64_t(rec->missed_events) : 0, false});
    c.cpuLast = time;
    if (!ev) {
        ++t.problem_count;
        if (t.problems.size() < Trace::kMaxProblems)
            t.problems.push_back({std::uint32_t(c.ordinal), fmt::format("record of unknown event type {}", type)});
        return false;
    }
    const char* name = ev->name ? ev->name : "?";
    Ctx::count(c.counts, ev);
    SchedEvent& e = s.e;
    e = SchedEvent{};
    e.time = time;
    e.cpu = std::int16_t(cpu);
    long long v = 0, w = 0, x = 0;
    auto bad = [&](const char* what) {
        ++t.problem_count;
        if (t.problems.size() < Trace::kMaxProblems) t.problems.push_back({std::uint32_t(c.ordinal), fmt::format("{}: {}", name, what)});
        return false;
    };
    auto wakeLike = [&](EvKind k) {
        if (!num(c, ev, "pid", rec, v) || !num(c, ev, "target_cpu", rec, w)) return false;
        e.kind = k;
        e.pid = std::int32_t(v);
        e.target_cpu = std::int16_t(w);
        c.setComm(e.pid, ev, "comm", rec);
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
        if (e.pid) c.setComm(e.pid, ev, "prev_comm", rec);
        if (e.pid2) c.setComm(e.pid2, ev, "next_comm", rec);
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
        c.setComm(e.pid, ev, "comm", rec);
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
        c.setComm(e.pid, ev, "parent_comm", rec);
        c.setComm(e.pid2, ev, "child_comm", rec);
    } else if (ev == c.exit) {
        if (!num(c, ev, "pid", rec, v)) return bad("missing pid");
        e.kind = EvKind::sched_process_exit;
        e.pid = std::int32_t(v);
    } else {
        if (ev == c.print) {
            std::string_view msg = str(c, ev, "buf", rec);
            if (msg.starts_with("schedlab_wake ")) {
                // schedlab's own export: the untraced inputs of the waking just before on this CPU (sched_event.h).
                StreamedInputs si;
                std::string why;
                msg.remove_prefix(14);
                while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.remove_suffix(1);
                if (!parseWakeInputs(msg, si.in, why)) return bad(why.c_str());
                if (c.lastWakingPid != si.in.pid) return bad("schedlab_wake: not right after the sched_waking of its pid");
                si.in.time = time;
                si.in.cpu = std::int16_t(cpu);
                si.waking = c.lastWakingAt;
                c.inputs->next() = si;
                return false;
            }
            if (msg.find("WORKLOAD_START") != std::string_view::npos) t.workload_start = time;
            if (msg.find("WORKLOAD_END") != std::string_view::npos) t.workload_end = time;
        } else {
            Ctx::count(c.skipped, ev);
        }
        return false;
    }
    const std::int32_t current = c.commonPid && readField(c, c.commonPid, rec, u) ? std::int32_t(std::uint32_t(u)) : tep_data_pid(c.tep, rec);
    if (current > 0) {
        const Ctx::Seen* x = c.seenIf(current);
        if (!x || !x->has_name)
            if (const char* cm = tep_data_comm_from_pid(c.tep, current)) c.setComm(current, cm);
    }
    s.current = current;
    s.context = contextOf(c.commonFlags && readField(c, c.commonFlags, rec, u) ? int(u) : tep_data_flags(c.tep, rec));
    c.lastWakingPid = e.kind == EvKind::sched_waking ? e.pid : -1;
    c.lastWakingAt = c.ordinal - 1;
    return true;
}

}  // namespace

bool looksLikeTraceDat(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[10] = {};
    return in.read(magic, 10) && std::memcmp(magic, "\x17\x08\x44tracing", 10) == 0;
}

namespace {

// libtracecmd 1.3 can crash on a truncated or corrupt file (seen: SIGSEGV in tracecmd_open_fd's
// error path, and in the record reader of a cut version-6 file). So the reading runs in forked
// children: a crash costs the child, and the records it read before stay usable. Each child
// reads its share of the CPUs, one CPU's buffer after another, into memfds (records and wake
// inputs, see ShmAppender); a pipe carries the rest: [u8 type][u32 length][payload] frames,
// 'C' a CPU's records start here, 'M' the rest of the Trace as JSON, 'X' an error message.

/// What a child publishes while it reads (a shared page): whole elements so far, progress.
struct ShmHeader {
    std::atomic<std::uint64_t> records{0}, inputs{0};
    std::atomic<std::uint64_t> done{0}, total{0};  ///< bytes of CPU data read / to read (or CPUs)
};
struct CpuStart {
    std::int32_t cpu = 0;
    std::uint64_t start = 0;
};
static_assert(std::is_trivially_copyable_v<CpuStart>);

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

/// Which child reads which CPU: the biggest buffers first, each to the child with the least data
/// so far (ties: the lower child). Every child computes the same from the file.
std::vector<int> assignCpus(tracecmd_input* h, int nrCpus, int parts, std::vector<unsigned long long>& sizes) {
    sizes.assign(std::size_t(std::max(nrCpus, 0)), 0);
    std::vector<int> owner(sizes.size(), 0);
    if (!tracecmd_get_cpu_file_size) {
        for (int k = 0; k < nrCpus; ++k) owner[std::size_t(k)] = k % parts;
        return owner;
    }
    std::vector<int> order(sizes.size());
    for (int k = 0; k < nrCpus; ++k) {
        sizes[std::size_t(k)] = tracecmd_get_cpu_file_size(h, k);
        order[std::size_t(k)] = k;
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sizes[std::size_t(a)] > sizes[std::size_t(b)]; });
    std::vector<unsigned long long> load(std::size_t(parts), 0);
    for (const int k : order) {
        const auto least = std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
        owner[std::size_t(k)] = int(least);
        load[least] += sizes[std::size_t(k)];
    }
    return owner;
}

/// The child's side: read its CPUs, publish, exit.
/// `limit` > 0: the file is a cut one padded with zeros (readTraceDat): records at or past byte
/// `limit` of the file are the padding's, not the recording's.
[[noreturn]] void readInChild(const std::string& path, int fd, ShmHeader* hdr, int recFd, int inFd, int part, int parts, unsigned long long limit) {
    tracecmd_input* h = tracecmd_open(path.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
    if (!h) {
        frame(fd, 'X', "libtracecmd cannot read it (truncated, corrupt, or an unsupported file version)");
        ::_exit(0);
    }
    Trace t;
    Ctx c;
    ShmAppender<Streamed> recs;
    ShmAppender<StreamedInputs> inputs;
    recs.fd = recFd;
    inputs.fd = inFd;
    recs.published = &hdr->records;
    inputs.published = &hdr->inputs;
    c.t = &t;
    c.inputs = &inputs;
    c.tep = tracecmd_get_tep(h);
    c.swap = tep_is_file_bigendian(c.tep) != tep_is_local_bigendian(c.tep);
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
    // The common fields (type, flags, pid) are at the same place in every event.
    for (tep_event* ev : {c.sw, c.waking, c.wakeup, c.print})
        if (ev && !c.commonType) {
            c.commonType = tep_find_common_field(ev, "common_type");
            c.commonPid = tep_find_common_field(ev, "common_pid");
            c.commonFlags = tep_find_common_field(ev, "common_flags");
        }
    std::vector<unsigned long long> sizes;
    const std::vector<int> owner = assignCpus(h, t.nr_cpus, parts, sizes);
    const bool bySize = bool(tracecmd_get_cpu_file_size);
    {
        unsigned long long total = 0;
        for (int k = 0; k < t.nr_cpus; ++k)
            if (owner[std::size_t(k)] == part) total += bySize ? sizes[std::size_t(k)] : 1;
        hdr->total.store(std::max<unsigned long long>(total, 1), std::memory_order_relaxed);
    }
    std::string failed;
    unsigned long long doneBefore = 0;
    int lastCpu = -1;
    for (int cpu = 0; cpu < t.nr_cpus && failed.empty(); ++cpu) {
        if (owner[std::size_t(cpu)] != part) continue;
        const CpuStart cs{cpu, recs.size()};
        frame(fd, 'C', std::string(reinterpret_cast<const char*>(&cs), sizeof cs));
        lastCpu = cpu;
        c.lastWakingPid = -1;
        c.cpuLast = -1;
        unsigned long long first = 0, last = 0;
        std::int64_t lastTs = -1;
        bool any = false;
        bool cut = false;
        while (tep_record* rec = tracecmd_read_data(h, cpu)) {
            if (limit && rec->offset + (unsigned long long)std::max(rec->record_size, 0) > limit) {
                tracecmd_free_record(rec);
                cut = true;
                break;
            }
            Streamed& s = recs.next();
            c.ordinal = recs.size();
            if (!onRecord(c, rec, cpu, s)) {
                s.e = SchedEvent{};
                s.e.time = std::int64_t(rec->ts);
                s.e.kind = EvKind(kMarker);
                s.e.cpu = std::int16_t(cpu);
            }
            if (!any) first = rec->offset, any = true;
            last = rec->offset;
            lastTs = std::int64_t(rec->ts);
            if (recs.buf.size() == kBatch) {
                inputs.flush();
                if (bySize)
                    hdr->done.store(doneBefore + std::min<unsigned long long>(rec->offset - first, sizes[std::size_t(cpu)]),
                                    std::memory_order_relaxed);
            }
            tracecmd_free_record(rec);
            if (!recs.ok || !inputs.ok) {
                failed = "out of memory for its records";
                break;
            }
        }
        // libtracecmd ends a CPU at a page it cannot read (it says "bad page read" on stderr): a
        // buffer that ends more than two pages before its size is cut there.
        const unsigned long long size = bySize ? sizes[std::size_t(cpu)] : 0;
        const unsigned long long page = tracecmd_page_size && tracecmd_page_size(h) > 0 ? (unsigned long long)tracecmd_page_size(h) : 4096;
        if (cut || (limit && !any && size > 0)) {
            // The cut: this CPU's records end at the end of the file (or its buffer is past it).
            ++t.problem_count;
            if (t.problems.size() < Trace::kMaxProblems)
                t.problems.push_back({std::uint32_t(any ? recs.size() : 0),
                                      any ? fmt::format("CPU {}: the file ends inside its buffer after this record (cut at byte {})", cpu, limit)
                                          : fmt::format("CPU {}: its buffer is past the end of the file (cut at byte {})", cpu, limit)});
            t.gaps.push_back({cpu, any ? lastTs : -1, -1, std::uint32_t(any ? recs.size() : 0), 0, false});  // 0: at the end
        } else if (failed.empty() && any && size > (last - first) + 2 * page) {
            ++t.problem_count;
            if (t.problems.size() < Trace::kMaxProblems)
                t.problems.push_back(
                    {std::uint32_t(recs.size()),
                     fmt::format("CPU {}: libtracecmd stopped reading its buffer after this record, {} of its {} bytes in (a corrupt or "
                                 "cut page); the rest of the CPU's records are missing",
                                 cpu, last - first, size)});
            t.gaps.push_back({cpu, lastTs, -1, std::uint32_t(recs.size()), 0, false});
        }
        doneBefore += bySize ? sizes[std::size_t(cpu)] : 1;
        hdr->done.store(doneBefore, std::memory_order_relaxed);
    }
    recs.flush();
    inputs.flush();
    if (!recs.ok || !inputs.ok) failed = "out of memory for its records";
    if (!failed.empty()) {
        frame(fd, 'X', failed);
        ::_exit(0);
    }
    for (const auto& [ev, n] : c.counts) t.event_counts[ev->name ? ev->name : "?"] += n;
    for (const auto& [ev, n] : c.skipped) t.skipped_events[ev->name ? ev->name : "?"] += n;
    nlohmann::json m;
    m["nr_cpus"] = t.nr_cpus > 0 ? t.nr_cpus : lastCpu + 1;
    // The trace clock trace-cmd saved (its trace_clock file, "[local] global ..."; or the name).
    std::string clock = tracecmd_get_trace_clock(h) ? tracecmd_get_trace_clock(h) : "";
    if (const auto a = clock.find('['), b = clock.find(']'); a != std::string::npos && b != std::string::npos && b > a)
        clock = clock.substr(a + 1, b - a - 1);
    while (!clock.empty() && (clock.back() == '\n' || clock.back() == ' ')) clock.pop_back();
    m["clock"] = clock;
    {
        unsigned long long data = 0;
        for (int k = 0; k < t.nr_cpus; ++k)
            if (owner[std::size_t(k)] == part) data += sizes[std::size_t(k)];
        m["unreadable"] = data > 0 && recs.size() == 0;  // buffers with data, not one record read
    }
    nlohmann::json comm = nlohmann::json::array(), prio = nlohmann::json::array();
    c.forEachSeen([&](std::int32_t pid, const Ctx::Seen& x) {
        if (x.has_name) comm.push_back({pid, x.name, x.name_ts, x.name_cpu});
        if (x.has_prio) prio.push_back({pid, x.prio, x.prio_ts, x.prio_cpu});
    });
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
    frame(fd, 'M', m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    tracecmd_close(h);
    ::_exit(0);
}

/// Tens of MB written once from the start: transparent huge pages where the system offers them
/// on request (Debian's default), a fault per 2 MiB instead of per 4 KiB.
void hugePages(void* p, std::size_t bytes) {
    constexpr std::uintptr_t kHuge = 2u << 20;
    const std::uintptr_t a = (std::uintptr_t(p) + kHuge - 1) & ~(kHuge - 1), b = (std::uintptr_t(p) + bytes) & ~(kHuge - 1);
    if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);
}

/// A run [next, end) of a child's memfd read in chunks with pread() (no mapping: the pages are
/// copied once, into a buffer that stays in cache).
template <class T>
struct Chunked {
    int fd = -1;
    std::uint64_t next = 0, end = 0;
    std::size_t cap = 4096, pos = 0;
    std::vector<T> buf;
    /// The current element, reading the next chunk when needed; nullptr at the end (or on a read error).
    const T* get() {
        if (pos < buf.size()) return &buf[pos];
        // The chunk read before is done with: its memory goes back (the memfd keeps its size).
        if (!buf.empty())
            ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t((next - buf.size()) * sizeof(T)), off_t(buf.size() * sizeof(T)));
        if (next >= end) return nullptr;
        const std::size_t n = std::size_t(std::min<std::uint64_t>(cap, end - next));
        buf.resize(n);
        char* p = reinterpret_cast<char*>(buf.data());
        std::size_t want = n * sizeof(T), got = 0;
        while (got < want) {
            const ssize_t r = ::pread(fd, p + got, want - got, off_t(next * sizeof(T) + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += std::size_t(r);
        }
        buf.resize(got / sizeof(T));
        next = got == want ? next + n : end;
        pos = 0;
        return buf.empty() ? nullptr : &buf[0];
    }
    void pop() { ++pos; }
};

/// Whole elements of T in a memfd: what the child published, and no more than the file holds.
template <class T>
std::uint64_t wholeIn(int fd, std::uint64_t published) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) return 0;
    return std::min<std::uint64_t>(published, std::uint64_t(st.st_size) / sizeof(T));
}

/// Element `i` of a memfd of T (for a bisection).
template <class T>
T elementAt(int fd, std::uint64_t i) {
    T v{};
    if (::pread(fd, &v, sizeof v, off_t(i * sizeof(T))) != ssize_t(sizeof v)) v = T{};
    return v;
}

}  // namespace

namespace {

/// readTraceDat() of `path` as the file `name`; `limit` > 0: `path` is `name` cut at byte
/// `limit` and padded with zeros.
// The watchdog (TraceReadOptions::reader_stall_ms): a reader child that shows no progress for
// that long is stuck, not slow: its parsing moves the shared counters many times a second. (A
// child forked from a process with other threads can inherit a lock one of them held at
// fork(), e.g. a sanitizer allocator's that has no fork handler; it then waits forever.) The
// pair is killed and the file read again, once.
Trace readTraceDatAs(const std::string& path, const std::string& name, const TraceReadOptions& o, unsigned long long limit, int attempt = 0) {
    // Two children, each reading about half of the CPUs' data (the parsing is most of the time,
    // and it runs on both cores); their per-CPU lists are merged here as
    // tracecmd_iterate_events() merges CPUs: the earliest record next, ties to the lower CPU, so
    // the result is one reader's, record ordinals included.
    constexpr int kParts = 2;
    struct Child {
        pid_t pid = -1;
        int fd = -1, recFd = -1, inFd = -1;
        ShmHeader* hdr = nullptr;
        char hdr5[5] = {};  ///< the frame header being read
        std::size_t hdrAt = 0, need = 0;
        bool inHeader = true;
        char type = 0;
        std::string payload;  ///< the frame being read
        std::vector<CpuStart> starts;
        std::string meta, error;
        bool eof = false;
        int status = 0;
    };
    std::array<Child, kParts> ch;
    auto release = [&](bool kill) {
        for (Child& c : ch) {
            if (kill && c.pid > 0) ::kill(c.pid, SIGKILL);
            if (c.fd >= 0) ::close(c.fd);
            c.fd = -1;
            if (c.pid > 0)
                while (::waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR) {
                }
            c.pid = -1;
        }
    };
    auto closeShm = [&] {
        for (Child& c : ch) {
            if (c.recFd >= 0) ::close(c.recFd);
            if (c.inFd >= 0) ::close(c.inFd);
            if (c.hdr) ::munmap(c.hdr, sizeof(ShmHeader));
            c.recFd = c.inFd = -1;
            c.hdr = nullptr;
        }
    };
    struct Cleanup {
        std::function<void()> f;
        ~Cleanup() { f(); }
    } cleanup{[&] {
        release(true);
        closeShm();
    }};
    std::fflush(nullptr);  // nothing buffered may be written twice
    for (int k = 0; k < kParts; ++k) {
        Child& c = ch[std::size_t(k)];
        int fds[2] = {-1, -1};
        c.recFd = ::memfd_create("schedlab-trace-records", MFD_CLOEXEC);
        c.inFd = ::memfd_create("schedlab-trace-inputs", MFD_CLOEXEC);
        void* h = ::mmap(nullptr, sizeof(ShmHeader), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (c.recFd < 0 || c.inFd < 0 || h == MAP_FAILED || ::pipe2(fds, O_CLOEXEC) != 0)
            throw InputError(path, "", fmt::format("cannot read: {}", std::strerror(errno)));
        c.hdr = new (h) ShmHeader();
        const pid_t pid = ::fork();
        if (pid < 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            throw InputError(path, "", fmt::format("cannot read: fork: {}", std::strerror(errno)));
        }
        if (pid == 0) {
            ::close(fds[0]);
            for (int q = 0; q < k; ++q) ::close(ch[std::size_t(q)].fd);
            if (o.test_stall_first_reader && attempt == 0 && k == 0)
                for (;;) ::pause();
            readInChild(path, fds[1], c.hdr, c.recFd, c.inFd, k, kParts, limit);
        }
        ::close(fds[1]);
        c.pid = pid;
        c.fd = fds[0];
    }
    // The pipes: read each frame as it comes (its 5-byte header, then its payload).
    auto step = [](Child& c) {
        if (c.need == 0) {  // a new frame: its header
            c.hdrAt = 0;
            c.need = 5;
            c.inHeader = true;
        }
        char* dst = c.inHeader ? c.hdr5 + c.hdrAt : c.payload.data() + (c.payload.size() - c.need);
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
            c.type = c.hdr5[0];
            std::uint32_t n = 0;
            std::memcpy(&n, c.hdr5 + 1, 4);
            c.inHeader = false;
            c.need = n;
            c.payload.assign(n, '\0');
            if (n) return;
        } else if (c.need) {
            return;
        }
        // A whole frame is in.
        if (c.type == 'C' && c.payload.size() == sizeof(CpuStart)) {
            CpuStart cs;
            std::memcpy(&cs, c.payload.data(), sizeof cs);
            c.starts.push_back(cs);
        } else if (c.type == 'M') {
            c.meta = std::move(c.payload);
        } else if (c.type == 'X') {
            c.error = std::move(c.payload);
        }
        c.payload.clear();
    };
    // The watchdog: what the children have shown so far, and when it last changed.
    auto shown = [&] {
        std::uint64_t v = 0;
        for (const Child& c : ch)
            for (const std::uint64_t x :
                 {c.hdr->done.load(std::memory_order_relaxed), c.hdr->records.load(std::memory_order_relaxed), std::uint64_t(c.starts.size()),
                  std::uint64_t(c.need), std::uint64_t(c.payload.size()), std::uint64_t(c.eof)})
                v = v * 1000003u + x;
        return v;
    };
    std::uint64_t lastShown = shown();
    auto lastChange = std::chrono::steady_clock::now();
    for (;;) {
        std::array<pollfd, kParts> pf{};
        int open = 0;
        for (int k = 0; k < kParts; ++k) {
            pf[std::size_t(k)] = {ch[std::size_t(k)].eof ? -1 : ch[std::size_t(k)].fd, POLLIN, 0};
            open += !ch[std::size_t(k)].eof;
        }
        if (!open) break;
        const int ready = ::poll(pf.data(), kParts, o.progress ? 50 : std::min(500, std::max(1, o.reader_stall_ms / 4)));
        if (ready < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < kParts; ++k) {
            Child& c = ch[std::size_t(k)];
            if (!c.eof && (pf[std::size_t(k)].revents & (POLLIN | POLLHUP | POLLERR))) step(c);
        }
        const auto now = std::chrono::steady_clock::now();
        if (const std::uint64_t v = shown(); v != lastShown) {
            lastShown = v;
            lastChange = now;
        } else if (now - lastChange > std::chrono::milliseconds(o.reader_stall_ms)) {
            release(true);
            closeShm();
            if (attempt > 0) throw InputError(path, "", fmt::format("cannot read: the reader made no progress for {} ms, twice", o.reader_stall_ms));
            return readTraceDatAs(path, name, o, limit, attempt + 1);
        }
        if (o.progress) {
            double done = 0, total = 0;
            for (const Child& c : ch) {
                const double n = double(c.hdr->total.load(std::memory_order_relaxed));
                if (n > 0) done += std::min(1.0, double(c.hdr->done.load(std::memory_order_relaxed)) / n), total += 1;
            }
            if (!o.progress(total > 0 ? 0.97 * done / kParts : 0.0)) throw TraceReadCancelled();  // the merge is the rest
        }
    }
    release(false);
    for (const Child& c : ch)
        if (!c.error.empty()) throw InputError(path, "", c.error);

    // Each child's lists, as far as they are whole.
    std::array<std::uint64_t, kParts> nRec{}, nIn{};
    for (int k = 0; k < kParts; ++k) {
        const Child& c = ch[std::size_t(k)];
        nRec[std::size_t(k)] = wholeIn<Streamed>(c.recFd, c.hdr->records.load(std::memory_order_acquire));
        nIn[std::size_t(k)] = wholeIn<StreamedInputs>(c.inFd, c.hdr->inputs.load(std::memory_order_acquire));
    }

    Trace t;
    t.file = name;
    t.flag_columns = 5;  // the binary records carry the flags (context kept per record)
    t.ns_timestamps = true;
    // The merge of the per-CPU lists: global ordinals for every record, events in order with
    // their wake inputs (each stream's inputs are a run of its child's list, in record order),
    // and, only for a child that reported problems or gaps, its records' ordinals.
    std::array<nlohmann::json, kParts> meta;
    std::array<std::vector<std::uint32_t>, kParts> ordOf;
    std::array<std::uint32_t, kParts> lastOrd{};  ///< each child's last record, as a global ordinal
    /// A child that ended without its counts (crashed): its events counted by kind in the merge
    /// (the merge gives the memfds' pages back as it goes).
    std::array<std::vector<std::uint64_t>, kParts> kinds;
    for (int k = 0; k < kParts; ++k)
        if (ch[std::size_t(k)].meta.empty()) kinds[std::size_t(k)].assign(256, 0);
    for (int k = 0; k < kParts; ++k) {
        const Child& c = ch[std::size_t(k)];
        if (c.meta.empty()) continue;
        meta[std::size_t(k)] = nlohmann::json::parse(c.meta);
        if (!meta[std::size_t(k)].at("problems").empty() || !meta[std::size_t(k)].at("gaps").empty())
            ordOf[std::size_t(k)].resize(nRec[std::size_t(k)]);
    }
    struct Stream {
        int k = 0;
        std::uint64_t at = 0;  ///< the child's index of the current record
        Chunked<Streamed> recs;
        Chunked<StreamedInputs> ins;  ///< its inputs not yet placed
    };
    std::vector<Stream> streams;
    struct Head {
        std::int64_t time;  ///< of the stream's current record
        int cpu;
        std::uint32_t s;
    };
    std::vector<Head> heap;
    std::size_t total = 0, inputs = 0;
    for (int k = 0; k < kParts; ++k) {
        const Child& c = ch[std::size_t(k)];
        const std::uint64_t n = nRec[std::size_t(k)], ni = nIn[std::size_t(k)];
        // The first input at or after child record x (inputs are in record order).
        auto inputAt = [&](std::uint64_t x) {
            std::uint64_t lo = 0, hi = ni;
            while (lo < hi) {
                const std::uint64_t mid = lo + (hi - lo) / 2;
                if (elementAt<StreamedInputs>(c.inFd, mid).waking < x) lo = mid + 1;
                else hi = mid;
            }
            return lo;
        };
        const auto& st = c.starts;
        for (std::size_t q = 0; q < st.size(); ++q) {
            const std::uint64_t b = std::min<std::uint64_t>(st[q].start, n);
            const std::uint64_t e = q + 1 < st.size() ? std::min<std::uint64_t>(st[q + 1].start, n) : n;
            if (b >= e) continue;
            Stream& s = streams.emplace_back();
            s.k = k;
            s.at = b;
            s.recs.fd = c.recFd;
            s.recs.next = b;
            s.recs.end = e;
            s.ins.fd = c.inFd;
            s.ins.next = inputAt(b);
            s.ins.end = inputAt(e);
            heap.push_back({0, st[q].cpu, std::uint32_t(streams.size() - 1)});
        }
        total += n;
        inputs += ni;
    }
    // About 16 MiB of chunks in all, at least 256 records a stream.
    for (Stream& s : streams) {
        s.recs.cap = std::max<std::size_t>(256, (16u << 20) / sizeof(Streamed) / streams.size());
        s.ins.cap = std::max<std::size_t>(64, (4u << 20) / sizeof(StreamedInputs) / streams.size());
    }
    for (Head& h : heap) {
        const Streamed* r = streams[h.s].recs.get();
        h.time = r ? r->e.time : std::numeric_limits<std::int64_t>::max();
    }
    t.events.reserve(total);
    t.records.reserve(total);
    t.wake_inputs.reserve(inputs);
    hugePages(t.events.data(), total * sizeof(SchedEvent));
    hugePages(t.records.data(), total * sizeof(TraceRecord));
    // A binary heap of the streams by their current record's (time, CPU).
    auto before = [](const Head& a, const Head& b) { return a.time < b.time || (a.time == b.time && a.cpu < b.cpu); };
    auto siftDown = [&](std::size_t i) {
        const std::size_t n = heap.size();
        for (;;) {
            std::size_t l = 2 * i + 1, m = i;
            if (l < n && before(heap[l], heap[m])) m = l;
            if (l + 1 < n && before(heap[l + 1], heap[m])) m = l + 1;
            if (m == i) return;
            std::swap(heap[i], heap[m]);
            i = m;
        }
    };
    for (std::size_t i = heap.size(); i-- > 0;) siftDown(i);
    std::uint32_t ord = 0;
    std::int64_t lastTime = std::numeric_limits<std::int64_t>::min();
    while (!heap.empty()) {
        // The stream on top runs on while its records come before the second one's (no heap
        // work per record: a CPU's records often come several in a row).
        Head& top = heap.front();
        Stream& s = streams[top.s];
        Head bound{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<int>::max(), 0};
        if (heap.size() > 1) bound = heap[1];
        if (heap.size() > 2 && before(heap[2], bound)) bound = heap[2];
        const Streamed* r = s.recs.get();
        while (r) {
            ++ord;
            if (!ordOf[std::size_t(s.k)].empty()) ordOf[std::size_t(s.k)][s.at] = ord;
            if (r->e.time < lastTime) ++t.time_backwards;
            lastTime = std::max(lastTime, r->e.time);
            if (r->e.kind != EvKind(kMarker)) {
                const StreamedInputs* in = s.ins.get();
                while (in && in->waking < s.at) s.ins.pop(), in = s.ins.get();
                if (in && in->waking == s.at) {
                    t.wake_inputs.add(std::uint32_t(t.events.size()), in->in);
                    s.ins.pop();
                }
                if (!kinds[std::size_t(s.k)].empty() && std::size_t(r->e.kind) < kinds[std::size_t(s.k)].size())
                    ++kinds[std::size_t(s.k)][std::size_t(r->e.kind)];
                t.events.push_back(r->e);
                t.records.push_back({ord, r->current, r->context});
            }
            s.recs.pop();
            ++s.at;
            r = s.recs.get();
            if (r && (r->e.time > bound.time || (r->e.time == bound.time && top.cpu > bound.cpu))) break;
        }
        lastOrd[std::size_t(s.k)] = ord;
        if (r) {
            top.time = r->e.time;
        } else {  // the stream ended (or a read error ended it)
            heap.front() = heap.back();
            heap.pop_back();
        }
        if (!heap.empty()) siftDown(0);
    }
    auto globalOrd = [&](int k, std::uint32_t line) {
        const auto& om = ordOf[std::size_t(k)];
        return line >= 1 && line <= om.size() && om[line - 1] ? om[line - 1] : line;
    };
    struct Latest {
        std::int64_t ts;
        std::int16_t cpu;
    };
    std::unordered_map<std::int32_t, Latest> commAt, prioAt;
    std::string crashed;
    bool unreadable = true;  ///< every child found data it could not read a record of
    for (int k = 0; k < kParts; ++k) {
        const Child& c = ch[std::size_t(k)];
        if (c.meta.empty()) {
            // This child died before it finished: keep what it published, say where it stopped.
            const std::string how = WIFSIGNALED(c.status) ? fmt::format("crashed (signal {})", WTERMSIG(c.status)) : std::string("stopped");
            for (std::size_t q = 0; q < kinds[std::size_t(k)].size(); ++q)
                if (kinds[std::size_t(k)][q]) t.event_counts[toString(EvKind(q))] += kinds[std::size_t(k)][q];
            if (crashed.empty()) crashed = how;
            const std::uint32_t after = nRec[std::size_t(k)] ? lastOrd[std::size_t(k)] : 0;
            const int cpu = c.starts.empty() ? -1 : c.starts.back().cpu;
            t.truncated_line = std::max(t.truncated_line, after + 1);
            ++t.problem_count;
            t.problems.push_back({after + 1, fmt::format("libtracecmd {} reading CPU {}'s buffer after record {}: truncated or corrupt data; "
                                                         "the records before are kept",
                                                         how, cpu, after)});
            continue;
        }
        const nlohmann::json& m = meta[std::size_t(k)];
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
        // Line 0: a CPU with no record at all (its buffer past a cut): at the end.
        for (const auto& p : m.at("problems"))
            t.problems.push_back({p[0].get<std::uint32_t>() ? globalOrd(k, p[0].get<std::uint32_t>()) : ord + 1, p[1].get<std::string>()});
        t.problem_count += m.at("problem_count").get<std::uint64_t>();
        for (const auto& g : m.at("gaps"))
            t.gaps.push_back({g[0].get<int>(), g[1].get<std::int64_t>(), g[2].get<std::int64_t>(),
                              g[3].get<std::uint32_t>() ? globalOrd(k, g[3].get<std::uint32_t>()) : ord + 1, g[4].get<std::uint64_t>(), false});
        const std::int64_t ws = m.at("workload")[0].get<std::int64_t>(), we = m.at("workload")[1].get<std::int64_t>();
        if (ws >= 0) t.workload_start = std::max(t.workload_start, ws);
        if (we >= 0) t.workload_end = std::max(t.workload_end, we);
        unreadable = unreadable && m.value("unreadable", false);
    }
    if (unreadable) throw InputError(path, "", "libtracecmd could not read one record of its CPU buffers (truncated or corrupt data section)");
    t.lines = ord;
    // counter, uptime (jiffies) and x86-tsc stamps are not ns (trace-replay.md §1).
    if (t.clock == "counter" || t.clock == "uptime" || t.clock == "x86-tsc") t.ns_timestamps = false;
    std::stable_sort(t.problems.begin(), t.problems.end(), [](const TraceProblem& a, const TraceProblem& b) { return a.line < b.line; });
    if (t.problems.size() > Trace::kMaxProblems) t.problems.resize(Trace::kMaxProblems);
    std::sort(t.gaps.begin(), t.gaps.end(),
              [](const TraceGap& a, const TraceGap& b) { return a.line < b.line || (a.line == b.line && a.cpu < b.cpu); });
    if (!crashed.empty()) {
        if (t.events.empty()) throw InputError(path, "", fmt::format("libtracecmd {} reading it: truncated or corrupt file", crashed));
        if (t.nr_cpus <= 0) {
            std::int32_t maxCpu = -1;
            for (const auto& e : t.events) maxCpu = std::max<std::int32_t>(maxCpu, e.cpu);
            t.nr_cpus = maxCpu + 1;
        }
    }
    if (o.progress && !o.progress(1.0)) throw TraceReadCancelled();
    return t;
}

/// The file format version after the magic ("6", "7": a NUL-terminated string at byte 10).
std::string datVersion(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char b[16] = {};
    in.read(b, sizeof b);
    return in.gcount() > 11 ? std::string(b + 10, ::strnlen(b + 10, 4)) : std::string();
}

}  // namespace

Trace readTraceDat(const std::string& path, const TraceReadOptions& o) {
    if (!looksLikeTraceDat(path)) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw InputError(path, "", "cannot open");
        throw InputError(path, "", "not a trace-cmd trace.dat (no \"\\027\\010Dtracing\" magic at the start)");
    }
    try {
        return readTraceDatAs(path, path, o, 0);
    } catch (const InputError& first) {
        // A cut version-6 file: libtracecmd refuses it (or crashes on it) as soon as a CPU's
        // buffer runs past the end. A sparse copy padded with zeros to beyond any offset the file
        // can name reads as the recording up to the cut (a zero page is an empty one); the
        // records at or past the cut are dropped. Compressed (version 7) data cannot be read
        // past a cut chunk this way.
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        if (ec || datVersion(path) != "6") throw;
        std::string tmpl = (std::filesystem::temp_directory_path(ec) / "schedlab-cut-XXXXXX").string();
        const int fd = ::mkstemp(tmpl.data());  // a name of our own; the copy goes over it
        if (fd < 0) throw;
        ::close(fd);
        struct Remove {
            std::string p;
            ~Remove() { ::unlink(p.c_str()); }
        } remove{tmpl};
        std::filesystem::copy_file(path, tmpl, std::filesystem::copy_options::overwrite_existing, ec);
        if (!ec)
            std::filesystem::permissions(tmpl, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                         ec);                                                // copied as the source's
        if (!ec) std::filesystem::resize_file(tmpl, size + (std::uintmax_t(64) << 30), ec);  // sparse: no blocks for the zeros
        if (ec) throw first;
        Trace t;
        try {
            t = readTraceDatAs(tmpl, path, o, size);
        } catch (const InputError&) {
            throw first;  // not a cut file libtracecmd reads when padded: the first reason
        }
        if (t.events.empty()) throw first;
        t.truncated_line = std::max<std::uint32_t>(t.truncated_line, std::uint32_t(t.lines + 1));
        ++t.problem_count;
        const TraceProblem cutAt{
            std::uint32_t(t.lines + 1),
            fmt::format("the file is cut at byte {} (libtracecmd reads it only padded with zeros): truncated; the {} records before "
                        "the cut are kept",
                        size, t.lines)};
        if (t.problems.size() < Trace::kMaxProblems) t.problems.push_back(cutAt);  // the last line: last in line order
        else t.problems.back() = cutAt;
        return t;
    }
}

}  // namespace sched
