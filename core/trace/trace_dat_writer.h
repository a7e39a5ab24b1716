// SPDX-License-Identifier: GPL-2.0-or-later
// trace_dat_writer.h: a simulated run written as a trace-cmd `trace.dat` (file version 6, or 7
// with zstd) that `trace-cmd report`, KernelShark and readTraceDat() open.
//
// The container (headers, event formats, cmdlines, options, flyrecord section) is written by
// libtracecmd's own output API from a fake tracefs directory holding Linux 6.1's event formats
// (as recorded from a real 6.1 kernel). The only hand-written binary is the per-CPU event data:
// the kernel ring buffer's pages, as trace_pipe_raw gives them (RingBufferPageWriter).
#pragma once

#include "kernel/sched_event.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sched {

/// One CPU's events in the kernel ring buffer's page format (kernel/trace/ring_buffer.c, 64-bit):
///
///   page  = u64 time_stamp | u64 commit (bytes of event data) | data[4080], zero-padded
///   event = u32 header: type_len (bits 0-4) | time_delta (bits 5-31, ns since the previous
///           event or, for the first, since the page's time_stamp), then
///           type_len 1..28: type_len * 4 bytes of data;
///           type_len 0:     u32 length (data bytes, 4-aligned, + 4), then the data;
///           type_len 30:    time extend: the next u32 is delta >> 27 (no data);
///           (29 padding and 31 absolute time stamp are not written).
///   data  = u16 common_type, u8 common_flags, u8 common_preempt_count, s32 common_pid, then the
///           event's fields at the offsets of its format file.
///
/// An event never straddles two pages; a time going backwards on the CPU starts a new page
/// (each page's time_stamp is absolute), so every delta is non-negative.
class RingBufferPageWriter {
public:
    static constexpr std::size_t kPageSize = 4096;
    static constexpr std::size_t kPageHeader = 16;  ///< time_stamp + commit (local_t, 8 bytes)
    static constexpr std::size_t kPageData = kPageSize - kPageHeader;
    static constexpr std::size_t kMaxData = kPageData - 8;  ///< the largest event data (type_len 0)
    static constexpr unsigned kTypePadding = 29, kTypeTimeExtend = 30, kTypeTimeStamp = 31;
    static constexpr unsigned kMaxSmallTypeLen = 28;  ///< data up to 112 bytes in type_len words

    /// Appends one event's data (common fields included; at most kMaxData bytes) at `ts` ns.
    void add(std::uint64_t ts, const void* data, std::size_t len);
    /// Closes the current page; full pages are in pages() (a multiple of kPageSize bytes).
    void finish();
    /// Completed pages so far (each kPageSize bytes).
    const std::vector<char>& pages() const { return m_pages; }
    /// Hands the completed pages over and forgets them (for writing them out in chunks).
    std::vector<char> takePages();
    std::uint64_t pagesWritten() const { return m_pageCount; }

private:
    void startPage(std::uint64_t ts);
    void closePage();
    std::vector<char> m_page;   ///< the page being filled (empty: none)
    std::size_t m_used = 0;     ///< data bytes used in m_page
    std::uint64_t m_last = 0;   ///< time of the last event (or the page's time_stamp)
    std::vector<char> m_pages;  ///< completed pages
    std::uint64_t m_pageCount = 0;
};

struct TraceDatOptions {
    int version = 6;              ///< trace.dat file version: 6 (uncompressed) or 7
    std::string compression;      ///< version 7 only: "" (none) or a libtracecmd algorithm ("zstd", "zlib")
    std::string clock = "local";  ///< the trace clock the file names (the simulator's ns)
    /// Earlier events are written at this time (ns). KernelShark 2.2 takes a timestamp of 0 for
    /// "unset" when it merges the CPUs (libkshark-tepdata.c, pick_next_cpu) and then puts the
    /// whole CPU after all others; a kernel never records 0, a simulation starts at 0. So the
    /// events at t = 0 are written at 1 ns; 0 keeps every time as it is.
    std::int64_t min_time_ns = 1;
};

/// Writes the scheduler events of a run as trace.dat: the same events, context and current
/// task per record as FtraceTextWriter writes as text (common_pid = the task current on the
/// CPU, common_flags = the text's flag columns: hard IRQ for IPI wakeups and non-task wakings),
/// each pid's name in saved_cmdlines, and WakeInputs as ftrace `print` events
/// (tracing_mark_write: schedlab_wake ...). Events are spooled as ring-buffer pages into a
/// work directory beside `path`; commit() builds the file under a temporary name and renames
/// it into place. Every failure is an InputError with one line ("PATH: ..."); a writer
/// destroyed before commit() leaves nothing behind.
///
/// commit() points libtracefs' process-wide tracing directory at the fake one while it creates
/// the output handle (and back to the default after), and lowers libtracecmd's log level to
/// critical (its warnings about a version-6 top buffer are noise): call it from one thread at a time.
class TraceDatWriter {
public:
    using CommOf = std::function<std::string(std::int32_t pid)>;
    TraceDatWriter(std::string path, int nrCpus, CommOf commOf, TraceDatOptions o = {});
    ~TraceDatWriter();
    TraceDatWriter(const TraceDatWriter&) = delete;
    TraceDatWriter& operator=(const TraceDatWriter&) = delete;

    void write(const SchedEvent& e);
    /// The next sched_waking's untraced inputs (as FtraceTextWriter::writeWakeInputs).
    void writeWakeInputs(const WakeInputs& in) { m_inputs = in, m_haveInputs = true, m_marks = true; }
    /// Writes the file (temporary name, then rename). Throws InputError.
    void commit();
    std::uint64_t written() const { return m_written; }  ///< sched events (not print events)
    std::uint64_t bytesOfPages() const;                  ///< event data written so far (pages)

private:
    struct Cpu;
    void flushCpu(int cpu, bool all);
    /// Fills the common fields of `rec` (len bytes, the event's fields from offset 8) and adds it to the CPU's pages.
    void emitRecord(int cpu, std::uint64_t ts, std::uint16_t type, std::uint8_t flags, std::uint8_t preempt, std::int32_t pid, char* rec,
                    std::size_t len);
    void removeWork() noexcept;
    std::string commOf(std::int32_t pid, int cpu);

    std::string m_path, m_work, m_tmp;
    int m_nrCpus;
    CommOf m_commOf;
    TraceDatOptions m_opt;
    std::vector<std::unique_ptr<Cpu>> m_cpus;
    std::vector<std::int32_t> m_curr;                      ///< current pid per CPU (common_pid)
    std::unordered_map<std::int32_t, int> m_wakingCpu;     ///< CPU of each pid's pending sched_waking
    std::unordered_map<std::int32_t, std::string> m_comm;  ///< every pid seen, for saved_cmdlines
    std::uint64_t m_written = 0;
    WakeInputs m_inputs;
    bool m_marks = false;  ///< schedlab_ttwu_queue prints too (an export with wake inputs)
    bool m_haveInputs = false;
    bool m_committed = false;
    std::vector<char> m_scratch;
};

/// The Linux 6.1 format file (events/SYSTEM/NAME/format) of `name` ("sched_switch", ...,
/// "cpu_idle", "print") as written into the file; empty if unknown. For tests.
std::string_view traceDatEventFormat(std::string_view name);

}  // namespace sched
