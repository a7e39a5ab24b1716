// SPDX-License-Identifier: GPL-2.0-or-later
// trace_dat_internal.h: what the trace.dat reader's parent (trace_dat.cpp) and its reader
// processes (trace_dat_child.cpp) share: the records as a reader hands them over in memfds, the
// shared progress page, and the pipe's frames.
#pragma once

#include "trace/trace.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace sched::datio {

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

/// The reader's side (a `schedlab-trace-reader` process, or a forked child): reads its share of
/// the CPUs of `path` into `recFd` / `inFd` (memfds), publishes its progress in `hdr`, sends the
/// frames through the pipe `fd`, and exits. `limit` > 0: the file is a cut one padded with
/// zeros: records at or past byte `limit` are the padding's. `stall`: tests only, it stops
/// before reading (as a child that inherited a lock at fork() would).
[[noreturn]] void readInChild(const std::string& path, int fd, ShmHeader* hdr, int recFd, int inFd, int part, int parts, unsigned long long limit,
                              bool stall = false);

/// A reader's decoding of records (the event formats of a real trace.dat, the records made up by
/// the caller), as tests/bench/fuzz/fuzz_trace_dat_record.cpp drives it: every record goes
/// through the code that turns a tep_record into a SchedEvent (onRecord), and the reader's
/// metadata is made of the result, as a reader process would send it.
///
/// Input: records one after another, each [u8 cpu][u8 missed][u16 size][u32 ts step][size bytes]
/// (little-endian; the payload as the ring buffer holds it, common fields first); a short tail is
/// dropped. Every decode() starts from a fresh state (no names, no problems).
class RecordDecoder {
public:
    /// Opens `path` with libtracecmd for its event formats; throws InputError when it cannot.
    explicit RecordDecoder(const std::string& path);
    ~RecordDecoder();
    RecordDecoder(const RecordDecoder&) = delete;
    RecordDecoder& operator=(const RecordDecoder&) = delete;

    struct Result {
        std::size_t records = 0, events = 0, inputs = 0, problems = 0, gaps = 0;
        std::string metadata;  ///< the 'M' frame's JSON
    };
    Result decode(std::span<const std::uint8_t> input) const;
    /// Up to `perCpu` records of each CPU of the file, each as a decode() input: seed inputs.
    std::vector<std::string> sampleInputs(int perCpu) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace sched::datio
