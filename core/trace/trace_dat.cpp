// SPDX-License-Identifier: GPL-2.0-or-later
// trace_dat.cpp: trace-cmd's trace.dat (file versions 6 and 7, compressed or not) read through
// libtracecmd/libtraceevent into the same Trace as the text importer. Two reader processes
// (`schedlab-trace-reader`, trace_dat_child.cpp) read the CPUs' buffers into shared memory; this
// side merges them in time order as tracecmd_iterate_events() would; Trace::records[i].line is
// the record's ordinal in that order.
#include "trace/trace.h"
#include "trace/trace_dat_internal.h"

#include "util/input_error.h"
#include "util/install_paths.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

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
#include <spawn.h>

namespace sched {

bool looksLikeTraceDat(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[10] = {};
    return in.read(magic, 10) && std::memcmp(magic, "\x17\x08\x44tracing", 10) == 0;
}

namespace {

using namespace datio;

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

/// Starts `schedlab-trace-reader` (posix_spawn: no fork of this process, whose other threads'
/// locks then stay here) for part `part` of `parts`, its pipe end, progress page and memfds as
/// fds 3 to 6 (dup2 clears their close-on-exec there). The child's pid, or -1 with errno set.
pid_t spawnReader(const std::string& reader, const std::string& path, int part, int parts, unsigned long long limit, bool stall, int pipeFd,
                  int hdrFd, int recFd, int inFd, int errFd) {
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return -1;
    // Each one first to a number above every source and above 6, then to 3..6: neither step
    // can overwrite a source still to be copied (a fixed staging number could be one).
    // The fifth, the child's stderr, goes to 2: libtracecmd's own messages are kept, not shown.
    const int src[5] = {pipeFd, hdrFd, recFd, inFd, errFd};
    const int stage = std::max({pipeFd, hdrFd, recFd, inFd, errFd, 6}) + 1;
    int rc = 0;
    for (int i = 0; i < 5 && rc == 0; ++i) rc = posix_spawn_file_actions_adddup2(&fa, src[i], stage + i);
    for (int i = 0; i < 4 && rc == 0; ++i) rc = posix_spawn_file_actions_adddup2(&fa, stage + i, 3 + i);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, stage + 4, 2);
    for (int i = 0; i < 5 && rc == 0; ++i) rc = posix_spawn_file_actions_addclose(&fa, stage + i);
    const std::string a1 = std::to_string(part), a2 = std::to_string(parts), a3 = std::to_string(limit);
    std::vector<char*> argv = {const_cast<char*>(reader.c_str()), const_cast<char*>(path.c_str()), const_cast<char*>(a1.c_str()),
                               const_cast<char*>(a2.c_str()), const_cast<char*>(a3.c_str())};
    if (stall) argv.push_back(const_cast<char*>("stall"));
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (rc == 0) rc = posix_spawn(&pid, reader.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return pid;
}

constexpr int kParts = 2;

/// One reader process: its pid, its pipe and the frame being read from it, its memfds and
/// progress page, and what it has sent.
struct Child {
    pid_t pid = -1;
    int fd = -1, recFd = -1, inFd = -1, hdrFd = -1;
    int errFd = -1;  ///< the reader's stderr (a memfd): what libtracecmd printed
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

/// The reader processes of one attempt: started, their pipes read until they end, waited for;
/// killed when the object goes first (an exception, Cancel), their memfds closed with it.
class Readers {
public:
    std::array<Child, kParts> ch;

    Readers() = default;
    Readers(const Readers&) = delete;
    Readers& operator=(const Readers&) = delete;
    ~Readers() {
        release(true);
        closeShm();
    }
    /// Stops the readers (`kill`: without waiting for them to end) and closes their pipes.
    void release(bool kill) {
        for (Child& c : ch) {
            if (kill && c.pid > 0) ::kill(c.pid, SIGKILL);
            if (c.fd >= 0) ::close(c.fd);
            c.fd = -1;
            if (c.pid > 0)
                while (::waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR) {
                }
            c.pid = -1;
        }
    }

    void closeShm() {
        for (Child& c : ch) {
            if (c.recFd >= 0) ::close(c.recFd);
            if (c.inFd >= 0) ::close(c.inFd);
            if (c.hdrFd >= 0) ::close(c.hdrFd);
            if (c.errFd >= 0) ::close(c.errFd);
            if (c.hdr) ::munmap(c.hdr, sizeof(ShmHeader));
            c.recFd = c.inFd = c.hdrFd = c.errFd = -1;
            c.hdr = nullptr;
        }
    }

    /// Two readers, each of about half of the CPUs' data (the parsing is most of the time, and it
    /// runs on both cores): `schedlab-trace-reader` processes, or forked ones without it.
    void start(const std::string& path, const TraceReadOptions& o, unsigned long long limit, int attempt) {
        std::fflush(nullptr);  // nothing buffered may be written twice (by a forked reader)
        const std::string reader = traceReaderPath();
        for (int k = 0; k < kParts; ++k) {
            Child& c = ch[std::size_t(k)];
            int fds[2] = {-1, -1};
            c.recFd = ::memfd_create("schedlab-trace-records", MFD_CLOEXEC);
            c.inFd = ::memfd_create("schedlab-trace-inputs", MFD_CLOEXEC);
            c.hdrFd = ::memfd_create("schedlab-trace-progress", MFD_CLOEXEC);
            c.errFd = ::memfd_create("schedlab-trace-stderr", MFD_CLOEXEC);
            if (c.recFd < 0 || c.inFd < 0 || c.hdrFd < 0 || c.errFd < 0 || ::ftruncate(c.hdrFd, sizeof(ShmHeader)) != 0)
                throw InputError(path, "", fmt::format("cannot read: {}", std::strerror(errno)));
            void* h = ::mmap(nullptr, sizeof(ShmHeader), PROT_READ | PROT_WRITE, MAP_SHARED, c.hdrFd, 0);
            if (h == MAP_FAILED || ::pipe2(fds, O_CLOEXEC) != 0) throw InputError(path, "", fmt::format("cannot read: {}", std::strerror(errno)));
            c.hdr = new (h) ShmHeader();
            const bool stall = o.test_stall_first_reader && attempt == 0 && k == 0;
            pid_t pid = -1;
            if (!reader.empty()) {
                pid = spawnReader(reader, path, k, kParts, limit, stall, fds[1], c.hdrFd, c.recFd, c.inFd, c.errFd);
            } else {
                // No schedlab-trace-reader beside this program: a forked child reads (in a process
                // with other threads it may inherit a lock; the watchdog below is for that).
                pid = ::fork();
                if (pid == 0) {
                    ::dup2(c.errFd, 2);
                    ::close(fds[0]);
                    for (int q = 0; q < k; ++q) ::close(ch[std::size_t(q)].fd);
                    readInChild(path, fds[1], c.hdr, c.recFd, c.inFd, k, kParts, limit, stall);
                }
            }
            const int err = errno;
            ::close(fds[1]);
            if (pid < 0) {
                ::close(fds[0]);
                throw InputError(path, "",
                                 fmt::format("cannot read: cannot start its reader {}: {}", reader.empty() ? "(fork)" : reader, std::strerror(err)));
            }
            c.pid = pid;
            c.fd = fds[0];
        }
    }

    /// Reads the pipes until every reader has closed its own, reporting the progress (false
    /// from o.progress: TraceReadCancelled). False when the readers showed no progress for
    /// `stallMs` (the watchdog).
    bool pump(const TraceReadOptions& o, int stallMs) {
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
            const int ready = ::poll(pf.data(), kParts, o.progress ? 50 : std::min(500, std::max(1, stallMs / 4)));
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
            } else if (now - lastChange > std::chrono::milliseconds(stallMs)) {
                return false;
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
        return true;
    }

private:
    /// Reads what the pipe has of the current frame; a whole frame is taken in.
    static void step(Child& c) {
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
    }

    /// The watchdog: what the children have shown so far (it changes many times a second while
    /// they parse).
    std::uint64_t shown() const {
        std::uint64_t v = 0;
        for (const Child& c : ch)
            for (const std::uint64_t x :
                 {c.hdr->done.load(std::memory_order_relaxed), c.hdr->records.load(std::memory_order_relaxed), std::uint64_t(c.starts.size()),
                  std::uint64_t(c.need), std::uint64_t(c.payload.size()), std::uint64_t(c.eof)})
                v = v * 1000003u + x;
        return v;
    }
};

/// What the merge of the readers' records leaves for their metadata.
struct Merged {
    std::array<std::uint64_t, kParts> nRec{}, nIn{};  ///< each reader's records and inputs, as far as they are whole
    std::array<nlohmann::json, kParts> meta;
    std::array<std::vector<std::uint32_t>, kParts> ordOf;  ///< only for a reader that reported problems or gaps
    std::array<std::uint32_t, kParts> lastOrd{};           ///< each child's last record, as a global ordinal
    /// A child that ended without its counts (crashed): its events counted by kind in the merge
    /// (the merge gives the memfds' pages back as it goes).
    std::array<std::vector<std::uint64_t>, kParts> kinds;
    std::uint32_t ord = 0;  ///< records merged
};

/// The merge of the per-CPU lists into t's events, records and wake inputs, as
/// tracecmd_iterate_events() merges CPUs (the earliest record next, ties to the lower CPU): global
/// ordinals for every record, events in order with their wake inputs (each stream's inputs are a
/// run of its child's list, in record order), and, only for a child that reported problems or
/// gaps, its records' ordinals.
Merged mergeRecords(const std::array<Child, kParts>& ch, Trace& t) {
    Merged mg;
    auto& nRec = mg.nRec;
    auto& nIn = mg.nIn;
    auto& meta = mg.meta;
    auto& ordOf = mg.ordOf;
    auto& lastOrd = mg.lastOrd;
    auto& kinds = mg.kinds;
    std::uint32_t& ord = mg.ord;
    // Each child's lists, as far as they are whole.
    for (int k = 0; k < kParts; ++k) {
        const Child& c = ch[std::size_t(k)];
        nRec[std::size_t(k)] = wholeIn<Streamed>(c.recFd, c.hdr->records.load(std::memory_order_acquire));
        nIn[std::size_t(k)] = wholeIn<StreamedInputs>(c.inFd, c.hdr->inputs.load(std::memory_order_acquire));
    }
    for (int k = 0; k < kParts; ++k)
        if (ch[std::size_t(k)].meta.empty()) kinds[std::size_t(k)].assign(256, 0);
    for (int k = 0; k < kParts; ++k) {
        const Child& c = ch[std::size_t(k)];
        if (c.meta.empty()) continue;
        meta[std::size_t(k)] = nlohmann::json::parse(c.meta);
        if (!meta[std::size_t(k)].at("problems").empty() || !meta[std::size_t(k)].at("gaps").empty())
            ordOf[std::size_t(k)].resize(nRec[std::size_t(k)]);
    }
    // hrtimer events: each child numbered the timers and callbacks it saw (its own tables in its
    // metadata); the merge gives them the trace's numbers. A child without metadata (it crashed):
    // its timer events keep no timer (-1).
    std::array<std::vector<std::int32_t>, kParts> timerOf;
    std::array<std::vector<std::uint8_t>, kParts> fnOf;
    for (int k = 0; k < kParts; ++k) {
        const nlohmann::json& m = meta[std::size_t(k)];
        if (!m.is_object()) continue;
        if (m.contains("hrtimer_ptr"))
            for (const auto& p : m.at("hrtimer_ptr")) timerOf[std::size_t(k)].push_back(hrtimerId(t, p.get<std::uint64_t>()));
        if (m.contains("hrtimer_functions"))
            for (const auto& f : m.at("hrtimer_functions")) fnOf[std::size_t(k)].push_back(hrtimerFunctionIndex(t, f.get<std::string>()));
    }
    auto mapTimer = [&](int k, SchedEvent& e) {
        const auto& tm = timerOf[std::size_t(k)];
        e.pid = e.pid >= 0 && std::size_t(e.pid) < tm.size() ? tm[std::size_t(e.pid)] : -1;
        if (e.kind == EvKind::hrtimer_start || e.kind == EvKind::hrtimer_expire_entry) {
            const auto& fm = fnOf[std::size_t(k)];
            const std::uint8_t f = hrtimerFunction(e);
            e.prev_state = char(f < fm.size() ? fm[f] : 255);
        }
    };
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
                if (isHrtimerEvent(r->e.kind)) mapTimer(s.k, t.events.back());
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
    return mg;
}

/// What the readers' libtracecmd printed on their stderr, as one problem per reader: its first
/// line (printable characters only, at most 160) and how much there was.
void readerMessages(const std::array<Child, kParts>& ch, Trace& t) {
    for (int k = 0; k < kParts; ++k) {
        const int fd = ch[std::size_t(k)].errFd;
        struct stat st {};
        if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) continue;
        char buf[512];
        const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
        if (n <= 0) continue;
        std::string line;
        for (ssize_t i = 0; i < n && buf[i] != '\n' && line.size() < 160; ++i) line += (buf[i] >= 0x20 && buf[i] < 0x7f) ? buf[i] : '?';
        ++t.problem_count;
        t.problems.push_back({0, fmt::format("libtracecmd (reader {}) printed {} bytes, the first line: \"{}\"", k + 1, st.st_size, line)});
    }
}

/// The readers' metadata (names, priorities, counts, problems and gaps at their global ordinals,
/// the workload markers) into t, and a problem for a reader that ended before it sent them.
/// `crashed`: how the first such one ended ("" none); `unreadable`: every reader found data
/// it could not read a record of.
void mergeMeta(const std::array<Child, kParts>& ch, const Merged& mg, Trace& t, std::string& crashed, bool& unreadable) {
    const auto& nRec = mg.nRec;
    const auto& meta = mg.meta;
    const auto& ordOf = mg.ordOf;
    const auto& lastOrd = mg.lastOrd;
    const auto& kinds = mg.kinds;
    const std::uint32_t ord = mg.ord;
    auto globalOrd = [&](int k, std::uint32_t line) {
        const auto& om = ordOf[std::size_t(k)];
        return line >= 1 && line <= om.size() && om[line - 1] ? om[line - 1] : line;
    };
    struct Latest {
        std::int64_t ts;
        std::int16_t cpu;
    };
    std::unordered_map<std::int32_t, Latest> commAt, prioAt;
    unreadable = true;
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
        if (m.contains("affinity"))
            for (const auto& p : m.at("affinity")) t.affinity[p[0].get<std::int32_t>()] = p[1].get<std::string>();
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
}

/// readTraceDat() of `path` as the file `name`; `limit` > 0: `path` is `name` cut at byte
/// `limit` and padded with zeros.
// The watchdog (TraceReadOptions::reader_stall_ms): a reader that shows no progress for that
// long is stuck, not slow: its parsing moves the shared counters many times a second. (A child
// forked from a process with other threads can inherit a lock one of them held at fork(), e.g. a
// sanitizer allocator's that has no fork handler; it then waits forever.) The pair is killed and
// the file read again, once, with 4 times the patience: a machine that is only loaded (a reader
// process still starting, its pages swapped out) gets the benefit of the doubt.
Trace readTraceDatAs(const std::string& path, const std::string& name, const TraceReadOptions& o, unsigned long long limit, int attempt = 0) {
    Readers readers;
    readers.start(path, o, limit, attempt);
    const int stallMs = attempt == 0 ? o.reader_stall_ms : 4 * o.reader_stall_ms;
    if (!readers.pump(o, stallMs)) {
        readers.release(true);  // the stuck pair goes before the file is read again
        readers.closeShm();
        if (attempt > 0)
            throw InputError(path, "",
                             fmt::format("cannot read: the reader made no progress for {} ms, and again for {} ms", o.reader_stall_ms, stallMs));
        return readTraceDatAs(path, name, o, limit, attempt + 1);
    }
    readers.release(false);
    for (const Child& c : readers.ch)
        if (!c.error.empty()) throw InputError(path, "", c.error);
    Trace t;
    t.file = name;
    t.flag_columns = 5;  // the binary records carry the flags (context kept per record)
    t.ns_timestamps = true;
    const Merged mg = mergeRecords(readers.ch, t);
    std::string crashed;
    bool unreadable = true;
    mergeMeta(readers.ch, mg, t, crashed, unreadable);
    readerMessages(readers.ch, t);
    const std::uint32_t ord = mg.ord;
    if (unreadable) throw InputError(path, "", "libtracecmd could not read one record of its CPU buffers (truncated or corrupt data section)");
    t.lines = ord;
    // counter, uptime (jiffies) and x86-tsc stamps are not ns (docs/replay.md: Clocks and timestamps).
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
