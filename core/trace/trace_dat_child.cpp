// SPDX-License-Identifier: GPL-2.0-or-later
// trace_dat_child.cpp: the trace.dat reader's reading side (see trace_dat.cpp): a process that
// opens the file with libtracecmd, reads its share of the CPUs' buffers (tracecmd_read_data, one
// CPU after another) and hands the records over in memfds. It runs as `schedlab-trace-reader`
// (posix_spawn()ed: nothing of the caller's threads comes along), or forked when that program
// is not to be found.
#include "trace/trace_dat_internal.h"
#include "trace/trace_dat_reader.h"

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
#include <charconv>

namespace sched {
namespace datio {
namespace {

constexpr int kTraceFlagNmi = 0x40;  // kernel's TRACE_FLAG_NMI (not in libtraceevent's enum)

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
    tep_event *hrStart = nullptr, *hrCancel = nullptr, *hrEntry = nullptr, *hrExit = nullptr;
    bool swap = false;          ///< the file's byte order is not the host's: libtraceevent reads the numbers
    std::uint64_t ordinal = 0;  ///< the record being read: its index in the child's list, plus 1
    /// The last imported event of the CPU being read, when it is a sched_waking: its pid and index.
    std::int32_t lastWakingPid = -1;
    std::map<std::int32_t, std::string> affinity;  ///< allowed= of the schedlab_wake prints (a pinned run's export)
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
    // A field past the record's end (a corrupt or cut record) is missing: libtraceevent would read
    // past the record (the fuzz target found it).
    if (rec->size < 0 || f->offset < 0 || f->size < 0 || unsigned(f->offset) + unsigned(f->size) > unsigned(rec->size)) return false;
    if (!c.swap) {
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
    } else if (ev && (ev == c.hrStart || ev == c.hrCancel || ev == c.hrEntry || ev == c.hrExit)) {
        // The timer and callback numbered in this reader's tables (the merge renumbers them).
        if (!num(c, ev, "hrtimer", rec, v)) return bad("missing hrtimer");
        e.kind = ev == c.hrStart    ? EvKind::hrtimer_start
                 : ev == c.hrCancel ? EvKind::hrtimer_cancel
                 : ev == c.hrEntry  ? EvKind::hrtimer_expire_entry
                                    : EvKind::hrtimer_expire_exit;
        e.pid = hrtimerId(t, std::uint64_t(v));
        if (ev == c.hrStart || ev == c.hrEntry) {
            if (!num(c, ev, "function", rec, w)) return bad("missing function");
            const char* fn = tep_find_function(c.tep, std::uint64_t(w));
            e.prev_state = char(hrtimerFunctionIndex(t, fn ? std::string(fn) : fmt::format("0x{:x}", std::uint64_t(w))));
        }
        if (ev == c.hrEntry) {
            if (!num(c, ev, "now", rec, x)) return bad("missing now");
            setHrtimerTime(e, x);
        } else if (ev == c.hrStart) {
            long long soft = 0, mode = 0;
            if (!num(c, ev, "expires", rec, x) || !num(c, ev, "softexpires", rec, soft) || !num(c, ev, "mode", rec, mode))
                return bad("missing expires/softexpires/mode");
            if (soft > x || std::uint64_t(x - soft) > std::numeric_limits<std::uint32_t>::max())
                return bad("softexpires after expires, or a range over 4.29 s");
            setHrtimerTime(e, x);
            setHrtimerSlack(e, std::uint32_t(x - soft));
            e.cause = std::uint8_t(mode);
        }
    } else if (ev == c.print && str(c, ev, "buf", rec).starts_with("schedlab_ttwu_queue ")) {
        // schedlab's own export: the wakelist's ttwu_pending from here (an event, sched_event.h).
        std::string why;
        if (!parseTtwuQueueMark(str(c, ev, "buf", rec).substr(20), e, why)) return bad(why.c_str());
    } else {
        if (ev == c.print) {
            std::string_view msg = str(c, ev, "buf", rec);
            if (msg.starts_with("schedlab_wake ")) {
                // schedlab's own export: the untraced inputs of the waking just before on this CPU (sched_event.h).
                StreamedInputs si;
                std::string why;
                msg.remove_prefix(14);
                while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.remove_suffix(1);
                std::string allowed;
                if (!parseWakeInputs(msg, si.in, why, &allowed)) return bad(why.c_str());
                if (!allowed.empty()) c.affinity[si.in.pid] = allowed;
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

/// readInChild()'s reading: the open file, where the records and wake inputs go (the memfds and
/// the progress page), which CPUs are this child's, and how far it got.
struct ChildRead {
    tracecmd_input* h = nullptr;
    int fd = -1;  ///< the pipe to the parent
    ShmHeader* hdr = nullptr;
    int part = 0;
    unsigned long long limit = 0;
    Trace t;
    Ctx c;
    ShmAppender<Streamed> recs;
    ShmAppender<StreamedInputs> inputs;
    std::vector<unsigned long long> sizes;  ///< each CPU's buffer size (0s without tracecmd_get_cpu_file_size)
    std::vector<int> owner;                 ///< the child that reads each CPU
    bool bySize = false;                    ///< the progress counts bytes (else CPUs)
    std::string failed;
    unsigned long long doneBefore = 0;  ///< progress: the CPUs read before the one being read
    int lastCpu = -1;
};

/// The events read, and the common fields (type, flags, pid), looked up once.
void findEvents(Ctx& c) {
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
    c.hrStart = find("timer", "hrtimer_start");
    c.hrCancel = find("timer", "hrtimer_cancel");
    c.hrEntry = find("timer", "hrtimer_expire_entry");
    c.hrExit = find("timer", "hrtimer_expire_exit");
    // The common fields (type, flags, pid) are at the same place in every event.
    for (tep_event* ev : {c.sw, c.waking, c.wakeup, c.print})
        if (ev && !c.commonType) {
            c.commonType = tep_find_common_field(ev, "common_type");
            c.commonPid = tep_find_common_field(ev, "common_pid");
            c.commonFlags = tep_find_common_field(ev, "common_flags");
        }
}

/// This child's share of the CPUs, and the progress total: its CPUs' bytes (or their number).
void takeShare(ChildRead& r, int parts) {
    r.owner = assignCpus(r.h, r.t.nr_cpus, parts, r.sizes);
    r.bySize = bool(tracecmd_get_cpu_file_size);
    unsigned long long total = 0;
    for (int k = 0; k < r.t.nr_cpus; ++k)
        if (r.owner[std::size_t(k)] == r.part) total += r.bySize ? r.sizes[std::size_t(k)] : 1;
    r.hdr->total.store(std::max<unsigned long long>(total, 1), std::memory_order_relaxed);
}

/// Where the records of one CPU's buffer were in the file, and whether the file's cut ended them.
struct CpuExtent {
    unsigned long long first = 0, last = 0;  ///< file offsets of the first and last record
    std::int64_t lastTs = -1;
    bool any = false;
    bool cut = false;
};

/// Every record of `cpu` (up to the cut), into r.recs (and r.inputs).
CpuExtent readCpuRecords(ChildRead& r, int cpu) {
    Ctx& c = r.c;
    CpuExtent x;
    while (tep_record* rec = tracecmd_read_data(r.h, cpu)) {
        if (r.limit && rec->offset + (unsigned long long)std::max(rec->record_size, 0) > r.limit) {
            tracecmd_free_record(rec);
            x.cut = true;
            break;
        }
        Streamed& s = r.recs.next();
        c.ordinal = r.recs.size();
        if (!onRecord(c, rec, cpu, s)) {
            s.e = SchedEvent{};
            s.e.time = std::int64_t(rec->ts);
            s.e.kind = EvKind(kMarker);
            s.e.cpu = std::int16_t(cpu);
        }
        if (!x.any) x.first = rec->offset, x.any = true;
        x.last = rec->offset;
        x.lastTs = std::int64_t(rec->ts);
        if (r.recs.buf.size() == kBatch) {
            r.inputs.flush();
            if (r.bySize)
                r.hdr->done.store(r.doneBefore + std::min<unsigned long long>(rec->offset - x.first, r.sizes[std::size_t(cpu)]),
                                  std::memory_order_relaxed);
        }
        tracecmd_free_record(rec);
        if (!r.recs.ok || !r.inputs.ok) {
            r.failed = "out of memory for its records";
            break;
        }
    }
    return x;
}

/// A CPU whose records end early: at the file's cut, or where libtracecmd stopped; a problem
/// and a gap to the end of the trace.
void noteEarlyEnd(ChildRead& r, int cpu, const CpuExtent& x) {
    Trace& t = r.t;
    const unsigned long long limit = r.limit;
    // libtracecmd ends a CPU at a page it cannot read (it says "bad page read" on stderr): a
    // buffer that ends more than two pages before its size is cut there.
    const unsigned long long size = r.bySize ? r.sizes[std::size_t(cpu)] : 0;
    const unsigned long long page = tracecmd_page_size && tracecmd_page_size(r.h) > 0 ? (unsigned long long)tracecmd_page_size(r.h) : 4096;
    if (x.cut || (limit && !x.any && size > 0)) {
        // The cut: this CPU's records end at the end of the file (or its buffer is past it).
        ++t.problem_count;
        if (t.problems.size() < Trace::kMaxProblems)
            t.problems.push_back({std::uint32_t(x.any ? r.recs.size() : 0),
                                  x.any ? fmt::format("CPU {}: the file ends inside its buffer after this record (cut at byte {})", cpu, limit)
                                        : fmt::format("CPU {}: its buffer is past the end of the file (cut at byte {})", cpu, limit)});
        t.gaps.push_back({cpu, x.any ? x.lastTs : -1, -1, std::uint32_t(x.any ? r.recs.size() : 0), 0, false});  // 0: at the end
    } else if (r.failed.empty() && x.any && size > (x.last - x.first) + 2 * page) {
        ++t.problem_count;
        if (t.problems.size() < Trace::kMaxProblems)
            t.problems.push_back({std::uint32_t(r.recs.size()),
                                  fmt::format("CPU {}: libtracecmd stopped reading its buffer after this record, {} of its {} bytes in (a corrupt or "
                                              "cut page); the rest of the CPU's records are missing",
                                              cpu, x.last - x.first, size)});
        t.gaps.push_back({cpu, x.lastTs, -1, std::uint32_t(r.recs.size()), 0, false});
    }
}

/// One of this child's CPUs: its start to the parent, its records, what ended them, the progress.
void readCpu(ChildRead& r, int cpu) {
    const CpuStart cs{cpu, r.recs.size()};
    frame(r.fd, 'C', std::string(reinterpret_cast<const char*>(&cs), sizeof cs));
    r.lastCpu = cpu;
    r.c.lastWakingPid = -1;
    r.c.cpuLast = -1;
    const CpuExtent x = readCpuRecords(r, cpu);
    noteEarlyEnd(r, cpu, x);
    r.doneBefore += r.bySize ? r.sizes[std::size_t(cpu)] : 1;
    r.hdr->done.store(r.doneBefore, std::memory_order_relaxed);
}

/// The trace clock trace-cmd saved (its trace_clock file, "[local] global ..."; or the name).
std::string traceClock(tracecmd_input* h) {
    std::string clock = tracecmd_get_trace_clock(h) ? tracecmd_get_trace_clock(h) : "";
    if (const auto a = clock.find('['), b = clock.find(']'); a != std::string::npos && b != std::string::npos && b > a)
        clock = clock.substr(a + 1, b - a - 1);
    while (!clock.empty() && (clock.back() == '\n' || clock.back() == ' ')) clock.pop_back();
    return clock;
}

/// The 'M' frame's JSON: what the child read besides the records (names, priorities, counts,
/// problems, gaps, workload marks).
nlohmann::json metadata(const ChildRead& r) {
    const Trace& t = r.t;
    nlohmann::json m;
    m["nr_cpus"] = t.nr_cpus > 0 ? t.nr_cpus : r.lastCpu + 1;
    m["clock"] = traceClock(r.h);
    {
        unsigned long long data = 0;
        for (int k = 0; k < t.nr_cpus; ++k)
            if (r.owner[std::size_t(k)] == r.part) data += r.sizes[std::size_t(k)];
        m["unreadable"] = data > 0 && r.recs.size() == 0;  // buffers with data, not one record read
    }
    nlohmann::json comm = nlohmann::json::array(), prio = nlohmann::json::array();
    r.c.forEachSeen([&](std::int32_t pid, const Ctx::Seen& x) {
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
    nlohmann::json aff = nlohmann::json::array();
    for (const auto& [pid, list] : r.c.affinity) aff.push_back({pid, list});
    m["affinity"] = aff;
    m["hrtimer_ptr"] = t.hrtimer_ptr;
    m["hrtimer_functions"] = t.hrtimer_functions;
    return m;
}

}  // namespace

struct RecordDecoder::Impl {
    tracecmd_input* h = nullptr;
    ~Impl() {
        if (h) tracecmd_close(h);
    }
};

RecordDecoder::RecordDecoder(const std::string& path) : m(std::make_unique<Impl>()) {
    m->h = tracecmd_open(path.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
    if (!m->h) throw InputError(path, "", "libtracecmd cannot read it");
}

RecordDecoder::~RecordDecoder() = default;

RecordDecoder::Result RecordDecoder::decode(std::span<const std::uint8_t> input) const {
    ChildRead r;
    r.h = m->h;
    r.part = 0;
    Trace& t = r.t;
    Ctx& c = r.c;
    c.t = &t;
    c.inputs = &r.inputs;  // no descriptor: a batch is never full here (the input's records are fewer)
    c.tep = tracecmd_get_tep(m->h);
    c.swap = tep_is_file_bigendian(c.tep) != tep_is_local_bigendian(c.tep);
    t.nr_cpus = tep_get_cpus(c.tep);
    findEvents(c);
    r.owner.assign(std::size_t(std::max(t.nr_cpus, 0)), 0);
    r.sizes.assign(r.owner.size(), 0);
    Result out;
    std::vector<std::uint64_t> payload;  // 8-byte aligned, as a ring buffer's records are (4 at least)
    std::uint64_t ts = 0;
    int lastCpu = -1;
    for (std::size_t i = 0; i + 8 <= input.size();) {
        const int cpu = input[i];
        const int missed = input[i + 1];
        const std::size_t size = std::size_t(input[i + 2]) | std::size_t(input[i + 3]) << 8;
        const std::uint32_t step =
            std::uint32_t(input[i + 4]) | std::uint32_t(input[i + 5]) << 8 | std::uint32_t(input[i + 6]) << 16 | std::uint32_t(input[i + 7]) << 24;
        i += 8;
        const std::size_t n = std::min(size, input.size() - i);
        payload.assign(std::max<std::size_t>((n + 7) / 8, 1), 0);  // never a null data pointer (a ring buffer's never is)
        if (n) std::memcpy(payload.data(), input.data() + i, n);
        i += n;
        if (cpu != lastCpu) {  // a new CPU's buffer, as readCpu() starts one
            c.lastWakingPid = -1;
            c.cpuLast = -1;
            lastCpu = cpu;
        }
        ts += step;
        tep_record rec{};
        rec.ts = ts;
        rec.missed_events = missed == 0xff ? -1 : missed;
        rec.size = int(n);
        rec.record_size = int(n) + 8;
        rec.data = payload.data();
        rec.cpu = cpu;
        Streamed& s = r.recs.next();
        c.ordinal = r.recs.size();
        if (onRecord(c, &rec, cpu, s)) ++out.events;
        ++out.records;
    }
    r.lastCpu = lastCpu;
    for (const auto& [ev, k] : c.counts) t.event_counts[ev->name ? ev->name : "?"] += k;
    for (const auto& [ev, k] : c.skipped) t.skipped_events[ev->name ? ev->name : "?"] += k;
    out.inputs = r.inputs.size();
    out.problems = t.problem_count;
    out.gaps = t.gaps.size();
    out.metadata = metadata(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return out;
}

std::vector<std::string> RecordDecoder::sampleInputs(int perCpu) const {
    std::vector<std::string> out;
    tep_handle* tep = tracecmd_get_tep(m->h);
    for (int cpu = 0; cpu < tep_get_cpus(tep); ++cpu) {
        std::string in;
        unsigned long long last = 0;
        for (int k = 0; k < perCpu; ++k) {
            tep_record* rec = tracecmd_read_data(m->h, cpu);
            if (!rec) break;
            const std::uint32_t step = last ? std::uint32_t(std::min<unsigned long long>(rec->ts - last, 0xffffffffu)) : 1000;
            last = rec->ts;
            const auto size = std::uint16_t(std::min(rec->size, 0xffff));
            const std::uint8_t head[8] = {std::uint8_t(cpu),        0,
                                          std::uint8_t(size),       std::uint8_t(size >> 8),
                                          std::uint8_t(step),       std::uint8_t(step >> 8),
                                          std::uint8_t(step >> 16), std::uint8_t(step >> 24)};
            in.append(reinterpret_cast<const char*>(head), 8);
            in.append(static_cast<const char*>(rec->data), size);
            tracecmd_free_record(rec);
        }
        if (!in.empty()) out.push_back(std::move(in));
    }
    return out;
}

/// The child's side: read its CPUs, publish, exit.
/// `limit` > 0: the file is a cut one padded with zeros (readTraceDat): records at or past byte
/// `limit` of the file are the padding's, not the recording's.
[[noreturn]] void readInChild(const std::string& path, int fd, ShmHeader* hdr, int recFd, int inFd, int part, int parts, unsigned long long limit,
                              bool stall) {
    if (stall)
        for (;;) ::pause();
    tracecmd_input* h = tracecmd_open(path.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
    if (!h) {
        frame(fd, 'X', "libtracecmd cannot read it (truncated, corrupt, or an unsupported file version)");
        ::_exit(0);
    }
    ChildRead r;
    r.h = h;
    r.fd = fd;
    r.hdr = hdr;
    r.part = part;
    r.limit = limit;
    Trace& t = r.t;
    Ctx& c = r.c;
    r.recs.fd = recFd;
    r.inputs.fd = inFd;
    r.recs.published = &hdr->records;
    r.inputs.published = &hdr->inputs;
    c.t = &t;
    c.inputs = &r.inputs;
    c.tep = tracecmd_get_tep(h);
    c.swap = tep_is_file_bigendian(c.tep) != tep_is_local_bigendian(c.tep);
    t.nr_cpus = tep_get_cpus(c.tep);
    findEvents(c);
    takeShare(r, parts);
    for (int cpu = 0; cpu < t.nr_cpus && r.failed.empty(); ++cpu)
        if (r.owner[std::size_t(cpu)] == part) readCpu(r, cpu);
    r.recs.flush();
    r.inputs.flush();
    if (!r.recs.ok || !r.inputs.ok) r.failed = "out of memory for its records";
    if (!r.failed.empty()) {
        frame(fd, 'X', r.failed);
        ::_exit(0);
    }
    for (const auto& [ev, n] : c.counts) t.event_counts[ev->name ? ev->name : "?"] += n;
    for (const auto& [ev, n] : c.skipped) t.skipped_events[ev->name ? ev->name : "?"] += n;
    frame(fd, 'M', metadata(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    tracecmd_close(h);
    ::_exit(0);
}

}  // namespace datio

int traceReaderMain(int argc, char** argv) {
    // As readTraceDat() starts it: PATH PART PARTS LIMIT [stall]; fd 3 the pipe, 4 the progress
    // page, 5 and 6 the memfds of records and wake inputs.
    auto number = [](const char* text, unsigned long long& v) {
        const char* end = text + std::strlen(text);
        const auto r = std::from_chars(text, end, v);
        return r.ec == std::errc() && r.ptr == end;
    };
    unsigned long long part = 0, parts = 0, limit = 0;
    struct stat st {};
    if (argc < 5 || argc > 6 || !number(argv[2], part) || !number(argv[3], parts) || !number(argv[4], limit) || parts == 0 || parts > 64 ||
        part >= parts || (argc == 6 && std::strcmp(argv[5], "stall") != 0) || ::fstat(4, &st) != 0 || st.st_size < off_t(sizeof(datio::ShmHeader))) {
        std::fprintf(stderr, "schedlab-trace-reader: schedlab starts it to read a trace.dat; it is not run by hand\n");
        return 2;
    }
    void* h = ::mmap(nullptr, sizeof(datio::ShmHeader), PROT_READ | PROT_WRITE, MAP_SHARED, 4, 0);
    if (h == MAP_FAILED) {
        std::fprintf(stderr, "schedlab-trace-reader: cannot map its progress page: %s\n", std::strerror(errno));
        return 2;
    }
    datio::readInChild(argv[1], 3, static_cast<datio::ShmHeader*>(h), 5, 6, int(part), int(parts), limit, argc == 6);
}
}  // namespace sched
