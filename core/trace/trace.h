// SPDX-License-Identifier: GPL-2.0-or-later
// trace.h: scheduler traces recorded from a real kernel (ftrace text as tracefs and
// `trace-cmd report` write it), read into the simulator's own event vocabulary
// (sched_event.h), and simulated runs written back as ftrace text.
// Layout and tolerance rules: docs/trace-formats.md (ftrace text, Tolerance).
#pragma once

#include "kernel/sched_event.h"

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sched {

/// Where an imported event came from: its line, the task current on the recording CPU
/// (the TASK-PID column; 0 = that CPU's idle task) and the context column of the flags
/// ('.' task, 'h'/'H' hard IRQ, 's' softirq, 'z'/'Z' NMI; '?' when the layout has no flags).
/// sched_migrate_task::cause of a kernel trace: the kernel does not say why it moved the task.
inline constexpr std::uint8_t kMigrationCauseUnknown = 0xff;

struct TraceRecord {
    std::uint32_t line = 0;
    std::int32_t current = 0;
    char context = '?';
};

/// A stretch of time where a CPU's events are missing: `[LOST N EVENTS]` (from its previous
/// event to its next) or `##### CPU N buffer started ####` (from the trace start to its next).
struct TraceGap {
    int cpu = 0;
    std::int64_t from = -1;  ///< ns; -1: from the start of the trace
    std::int64_t to = -1;    ///< ns; -1: to the end (no later event on the CPU)
    std::uint32_t line = 0;  ///< the marker's line
    std::uint64_t lost = 0;  ///< events lost, when the marker says (0 = unknown)
    bool buffer_started = false;
};

struct TraceProblem {
    std::uint32_t line = 0;
    std::string what;
};

/// schedlab_wake inputs by the index in Trace::events of their sched_waking: a vector sorted by
/// that index (the readers add them as they come and sort once at the end).
class WakeInputsByEvent {
public:
    void reserve(std::size_t n) { m_v.reserve(n); }
    void add(std::uint32_t event, const WakeInputs& in) {
        m_sorted = m_sorted && (m_v.empty() || m_v.back().first < event);
        m_v.push_back({event, in});
    }
    /// Sorts by event index; of two for one index, the one added last stays.
    void finish();
    const WakeInputs* find(std::uint32_t event) const;
    /// Throws std::out_of_range when `event` has none.
    const WakeInputs& at(std::uint32_t event) const;
    std::size_t size() const { return m_v.size(); }
    bool empty() const { return m_v.empty(); }

private:
    std::vector<std::pair<std::uint32_t, WakeInputs>> m_v;
    bool m_sorted = true;
};

/// A trace read into the simulator's event vocabulary, with what the reader had to skip.
struct Trace {
    std::string file;
    std::vector<SchedEvent> events;                            ///< in file order (times may go back across CPUs)
    std::vector<TraceRecord> records;                          ///< parallel to events
    std::unordered_map<std::int32_t, std::string> comm;        ///< last name seen per pid (0: "swapper")
    std::unordered_map<std::int32_t, int> prio;                ///< last prio seen per pid
    int nr_cpus = 0;                                           ///< `#P:N` from the header, else the highest CPU seen + 1
    std::string clock;                                         ///< trace clock if known ("global", "local", "counter", ...)
    bool ns_timestamps = true;                                 ///< `secs.frac` stamps; false: bare integers (counter/uptime/tsc)
    bool tgid_column = false;                                  ///< the `(tgid)` column was present
    int flag_columns = -1;                                     ///< 5, 4 or 0 (no flags); -1: no record seen
    bool sched_plugin_layout = false;                          ///< trace-cmd report's sched plugin wrote wakeups/switches
    std::uint64_t entries_in_buffer = 0, entries_written = 0;  ///< header; in < written: overrun
    std::vector<TraceGap> gaps;
    std::map<std::string, std::uint64_t> event_counts;    ///< every event name seen, imported or not
    std::map<std::string, std::uint64_t> skipped_events;  ///< names not imported (unknown to schedlab)
    std::vector<TraceProblem> problems;                   ///< the first kMaxProblems unparsable lines
    std::uint64_t problem_count = 0;                      ///< all of them
    std::uint32_t truncated_line = 0;                     ///< the last line was cut short (its number), 0 = no
    std::uint64_t time_backwards = 0;                     ///< records older than the one before (other CPU's clock)
    std::int64_t workload_start = -1, workload_end = -1;  ///< tracing_mark_write WORKLOAD_START/END
    /// schedlab's own exports: each decision's untraced inputs (`tracing_mark_write:
    /// schedlab_wake ...`, sched_event.h), by the index in `events` of the sched_waking before it.
    WakeInputsByEvent wake_inputs;
    /// hrtimer events: the pointer of each timer (an event's pid is its index here) and the
    /// callbacks' names (an event's hrtimerFunction() is its index here; 0 = hrtimer_wakeup).
    std::vector<std::uint64_t> hrtimer_ptr;
    std::vector<std::string> hrtimer_functions{"hrtimer_wakeup"};
    std::unordered_map<std::uint64_t, std::int32_t> hrtimer_ids;  ///< pointer -> index in hrtimer_ptr
    /// schedlab's exports of a pinned run: a task's cpulist (the `allowed=` of its schedlab_wake lines).
    std::unordered_map<std::int32_t, std::string> affinity;
    std::uint64_t lines = 0;

    static constexpr std::size_t kMaxProblems = 20;

    /// Name of `pid` for output ("<idle>" style names are the kernel's "swapper/N").
    std::string commOf(std::int32_t pid) const;
    /// One paragraph: events by kind, CPUs, clock, gaps, what was skipped and why.
    std::string summary() const;
};

struct TraceReadOptions {
    std::string clock;  ///< the trace clock when the file does not say ("" = look for a
                        ///< `trace_clock` file beside it, else assume "local")
    /// Text traces: called with the share of the file read (0..1) every 8 MiB (every 1 MiB of
    /// gzip output); returning false stops the read with TraceReadCancelled.
    std::function<bool(double)> progress;
    /// trace.dat: a reader that shows no progress for this long is killed and the file read
    /// again, once, allowing 4 times as long (then an InputError). Tests shorten it.
    int reader_stall_ms = 20000;
    /// Tests only: the first attempt's first reader child stops (as a child that inherited a
    /// lock at fork() does), so that the watchdog has something to find.
    bool test_stall_first_reader = false;
};

/// Thrown by the readers when TraceReadOptions::progress asked them to stop.
struct TraceReadCancelled : std::exception {
    const char* what() const noexcept override { return "cancelled"; }
};

/// Streaming parser of ftrace text: feed it the lines in order (without the newline).
class FtraceTextParser {
public:
    explicit FtraceTextParser(Trace& out) : m_t(out) {}
    void line(std::string_view text);
    /// After the last line; `lastLineComplete` = the input ended with a newline.
    void finish(bool lastLineComplete);
    /// Records parsed so far (the not-a-trace check looks at the first 1000 non-# lines).
    std::uint64_t parsedRecords() const { return m_records; }
    std::uint64_t dataLines() const { return m_dataLines; }

private:
    struct Head;
    static bool parseHead(std::string_view s, Head& h, std::string& why);
    static bool fail(std::string& why, const std::string& what);
    bool parseRecord(std::string_view s, std::string& why);
    /// The payload of a record whose head is `h` into `e`; `imported` false for a record that is
    /// counted but not an event. False with `why` (without the event's name) for a bad payload.
    bool parseEvent(const Head& h, SchedEvent& e, bool& imported, std::string& why);
    bool wakeLike(EvKind kind, std::string_view payload, SchedEvent& e, std::string& why);
    bool pluginWake(EvKind kind, std::string_view payload, SchedEvent& e);
    bool pluginSwitch(std::string_view payload, SchedEvent& e);
    bool rawSwitch(std::string_view payload, SchedEvent& e, std::string& why);
    bool migrateTask(std::string_view payload, SchedEvent& e, std::string& why);
    bool processFork(std::string_view payload, SchedEvent& e, std::string& why);
    bool hrtimerEvent(EvKind kind, std::string_view payload, SchedEvent& e, std::string& why);
    /// schedlab's own export: the untraced inputs of the decision whose sched_waking came just before.
    bool wakeInputsMark(std::string_view payload, const Head& h, std::string& why);
    void problem(const std::string& why);
    void closeGaps(int cpu, std::int64_t t);

    Trace& m_t;
    std::uint32_t m_line = 0;
    std::uint64_t m_records = 0, m_dataLines = 0;
    std::int64_t m_lastTime = INT64_MIN;
    std::string m_pendingLastProblem;     ///< a bad line that may be the truncated last one
    std::vector<std::int64_t> m_cpuLast;  ///< last event time per CPU
    std::vector<std::size_t> m_openGaps;  ///< gaps waiting for their CPU's next event
    int m_maxCpu = -1;
    std::uint32_t m_beyondLine = 0;  ///< the first record on a CPU past the header's #P:N
};

/// Reads an ftrace text trace (`.gz` decompressed on the fly; plain files memory-mapped and
/// read line by line). Throws InputError ("FILE: problem", one line) when the file cannot be
/// read, is not a trace (nothing parses in its first 1000 non-comment lines) or uses the
/// latency-format layout. Anything else wrong is recorded in Trace::problems and skipped.
Trace readFtraceText(const std::string& path, const TraceReadOptions& o = {});
/// The same on text in memory; `name` stands for the file in messages.
Trace parseFtraceText(std::string_view text, const std::string& name, const TraceReadOptions& o = {});

/// Any trace: trace.dat by its magic, else ftrace text (see readTraceDat, readFtraceText).
Trace readTrace(const std::string& path, const TraceReadOptions& o = {});
/// First and last event times of the trace (0, 0 when it has none).
std::pair<std::int64_t, std::int64_t> traceSpan(const Trace& t);

/// Whether the file starts with trace-cmd's trace.dat magic.
bool looksLikeTraceDat(const std::string& path);
/// Reads a trace-cmd trace.dat (versions 6 and 7, zstd/zlib compressed or not) through
/// libtracecmd into the same Trace as the text importer; records[i].line is the record's
/// ordinal in time order. Throws InputError (one line) for a file that is not a trace.dat or
/// that libtracecmd cannot open. Missed events become gaps. TraceReadOptions::progress is
/// called about every 50 ms with the share of the CPU buffers read (`clock` is not used: the
/// file says its clock).
Trace readTraceDat(const std::string& path, const TraceReadOptions& o = {});

/// Writes events as ftrace text in the layout of tracefs' `trace` file (header with `#P:N`,
/// 5 flag columns, no tgid column). Timestamps with 9 decimals (ns) unless `usecs`.
class FtraceTextWriter {
public:
    using CommOf = std::function<std::string(std::int32_t pid)>;
    FtraceTextWriter(std::ostream& out, int nrCpus, CommOf commOf, bool usecs = false);
    void write(const SchedEvent& e);
    /// The next sched_waking's untraced inputs: written as a `tracing_mark_write: schedlab_wake`
    /// line after it, and its context column says in_task() ('.' or 'h').
    /// Also turns on schedlab's other marks (schedlab_ttwu_queue lines): an export with inputs.
    void writeWakeInputs(const WakeInputs& in) { m_inputs = in, m_haveInputs = true, m_marks = true; }
    std::uint64_t written() const { return m_written; }

private:
    std::string comm(std::int32_t pid, int cpu) const;
    std::ostream& m_out;
    int m_nrCpus;
    CommOf m_commOf;
    bool m_usecs;
    std::vector<std::int32_t> m_curr;                   ///< current pid per CPU (TASK-PID column)
    std::unordered_map<std::int32_t, int> m_wakingCpu;  ///< CPU of each pid's pending sched_waking
    std::uint64_t m_written = 0;
    WakeInputs m_inputs;
    bool m_haveInputs = false;
    bool m_marks = false;
};

/// The `schedlab_ttwu_queue pid=N target_cpu=M` message of an EvKind::schedlab_ttwu_queue.
std::string formatTtwuQueueMark(const SchedEvent& e);
/// Parses such a message (after "schedlab_ttwu_queue ") into `e` (kind, pid, target_cpu).
bool parseTtwuQueueMark(std::string_view msg, SchedEvent& e, std::string& why);

/// The `schedlab_wake ...` message of a tracing_mark_write line (without the event name).
std::string formatWakeInputs(const WakeInputs& in);
/// Parses such a message (after "schedlab_wake "); false, with `why`, if a field is missing or bad.
bool parseWakeInputs(std::string_view msg, WakeInputs& in, std::string& why, std::string* allowed = nullptr);

/// The pointer schedlab's exports print for the sleep timer of task `id` (its pid): an address in
/// x86-64's vmalloc area, where task stacks (and so a sleeper's on-stack hrtimer) live.
inline constexpr std::uint64_t kHrtimerPointerBase = 0xffffc90000000000ull, kHrtimerPointerStride = 0x40;
std::uint64_t hrtimerPointer(std::int32_t id);
/// What the hrtimer events of a trace say about sleep timers (callback hrtimer_wakeup): how many
/// expired on the CPU whose task armed them and how many elsewhere (get_nohz_timer_target() moved
/// them: hrtimer_start is written on the arming CPU, hrtimer_expire_entry on the timer's).
struct HrtimerStats {
    std::uint64_t started = 0, expired = 0;  ///< every callback
    std::uint64_t sleeps_started = 0, sleeps_expired = 0;
    std::uint64_t sleeps_local = 0, sleeps_moved = 0;  ///< expiries whose hrtimer_start is in the trace
};
HrtimerStats hrtimerStats(const Trace& t);

/// The index of timer `ptr` in t.hrtimer_ptr (added when new): the pid of its events.
std::int32_t hrtimerId(Trace& t, std::uint64_t ptr);
/// The index of callback `fn` in t.hrtimer_functions (added when new; past 255 names, 255).
std::uint8_t hrtimerFunctionIndex(Trace& t, std::string_view fn);
/// The callback name of an hrtimer event (the trace's table when given, else hrtimer_wakeup).
std::string hrtimerFunctionName(const SchedEvent& e, const Trace* t = nullptr);

/// ns as ftrace prints a `secs.frac` timestamp with `decimals` (6 or 9) digits.
std::string ftraceTimestamp(std::int64_t ns, int decimals);

}  // namespace sched
