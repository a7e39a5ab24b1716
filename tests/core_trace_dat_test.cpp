// SPDX-License-Identifier: GPL-2.0-or-later
// core_trace_dat_test.cpp: trace-cmd trace.dat through libtracecmd: versions 6 and 7, the reader
// processes and their watchdog, the same recording as `trace-cmd report` text, progress and
// Cancel, corrupt pages, cut files and files that are not a trace.dat.
#include "trace/trace.h"
#include "trace/trace_dat_internal.h"
#include "util/input_error.h"
#include "util/install_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using sched::EvKind;
using sched::InputError;
using sched::SchedEvent;
using sched::Trace;

const std::string kSample = std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz";

const std::string kDat = std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small-dat/";

bool sameEvent(const SchedEvent& a, const SchedEvent& b) {
    return a.kind == b.kind && a.time == b.time && a.cpu == b.cpu && a.pid == b.pid && a.pid2 == b.pid2 && a.target_cpu == b.target_cpu &&
           a.orig_cpu == b.orig_cpu && a.prev_state == b.prev_state && a.state == b.state && a.cause == b.cause;
}

TEST(TraceDat, Version6AndVersion7ZstdGiveTheRecordedEvents) {
    const Trace v6 = sched::readTraceDat(kDat + "trace.dat");
    const Trace v7 = sched::readTraceDat(kDat + "trace.v7-zstd.dat");
    // The recording's own counts (its README, from trace-cmd report --stat and the kernel's buffers).
    for (const Trace* t : {&v6, &v7}) {
        EXPECT_EQ(t->nr_cpus, 8);
        EXPECT_EQ(t->problem_count, 0u) << t->summary();
        EXPECT_TRUE(t->gaps.empty());
        EXPECT_EQ(t->event_counts.at("sched_switch"), 4538u);
        EXPECT_EQ(t->event_counts.at("sched_waking"), 2444u);
        EXPECT_EQ(t->event_counts.at("sched_wakeup"), 2440u);
        EXPECT_EQ(t->event_counts.at("cpu_idle"), 495u);
        EXPECT_EQ(t->event_counts.at("sched_migrate_task"), 93u);
        EXPECT_EQ(t->event_counts.at("sched_process_fork"), 36u);
        EXPECT_EQ(t->event_counts.at("print"), 2u);
        EXPECT_EQ(t->events.size(), 10121u - 2u);  // all but the two WORKLOAD markers
        EXPECT_GE(t->workload_start, 0);
        EXPECT_GT(t->workload_end, t->workload_start);
        EXPECT_EQ(t->clock, "global");  // record_cmd.txt: trace-cmd record -C global
        // Two readers merge their CPUs' records back into one time order: every record has its
        // ordinal once, in order (the 2 prints included in the count, not imported).
        EXPECT_EQ(t->lines, 10121u);
        for (std::size_t i = 1; i < t->records.size(); ++i) ASSERT_LT(t->records[i - 1].line, t->records[i].line);
        for (std::size_t i = 1; i < t->events.size(); ++i) ASSERT_TRUE(t->events[i - 1].time <= t->events[i].time) << "record " << t->records[i].line;
        EXPECT_TRUE(t->ns_timestamps);
    }
    ASSERT_EQ(v6.events.size(), v7.events.size());
    for (std::size_t i = 0; i < v6.events.size(); ++i) ASSERT_TRUE(sameEvent(v6.events[i], v7.events[i])) << "record " << v6.records[i].line;
}

// A reader child that stops (as one that inherited a lock at fork() from another thread of
// the process does) is found by the watchdog, killed with its pair, and the file read again:
// the same events, no hang.
TEST(TraceDat, AStuckReaderIsKilledAndTheFileReadAgain) {
    const Trace plain = sched::readTraceDat(kDat + "trace.dat");
    sched::TraceReadOptions o;
    o.reader_stall_ms = 300;
    o.test_stall_first_reader = true;
    const auto t0 = std::chrono::steady_clock::now();
    const Trace again = sched::readTraceDat(kDat + "trace.dat", o);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(ms, 300);  // it waited for the watchdog
    ASSERT_EQ(again.events.size(), plain.events.size());
    for (std::size_t i = 0; i < plain.events.size(); ++i) ASSERT_TRUE(sameEvent(plain.events[i], again.events[i])) << i;
}

// The readers are `schedlab-trace-reader` processes started with posix_spawn (no fork() of this
// process): found in the build tree, and a reader that cannot be started is one line naming it.
// Without one (SCHEDLAB_TRACE_READER set and empty) the reader forks, with the same result.
TEST(TraceDat, TheReaderProgramIsSpawnedAndTheForkFallbackGivesTheSameTrace) {
    ASSERT_EQ(std::getenv("SCHEDLAB_TRACE_READER"), nullptr);
    const std::string reader = sched::traceReaderPath();
    ASSERT_FALSE(reader.empty());
    EXPECT_NE(reader.find("schedlab-trace-reader"), std::string::npos) << reader;
    const Trace spawned = sched::readTraceDat(kDat + "trace.v7-zstd.dat");
    struct Env {
        explicit Env(const char* v) { ::setenv("SCHEDLAB_TRACE_READER", v, 1); }
        ~Env() { ::unsetenv("SCHEDLAB_TRACE_READER"); }
    };
    {
        Env e("/nonexistent/schedlab-trace-reader");
        EXPECT_EQ(sched::traceReaderPath(), "/nonexistent/schedlab-trace-reader");
        try {
            sched::readTraceDat(kDat + "trace.v7-zstd.dat");
            ADD_FAILURE() << "read without its reader";
        } catch (const sched::InputError& err) {
            const std::string what = err.what();
            EXPECT_NE(what.find("cannot start its reader /nonexistent/schedlab-trace-reader: No such file or directory"), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
    Env e("");
    EXPECT_EQ(sched::traceReaderPath(), "");
    const Trace forked = sched::readTraceDat(kDat + "trace.v7-zstd.dat");
    EXPECT_EQ(forked.lines, spawned.lines);
    EXPECT_EQ(forked.event_counts, spawned.event_counts);
    EXPECT_EQ(forked.comm, spawned.comm);
    ASSERT_EQ(forked.events.size(), spawned.events.size());
    for (std::size_t i = 0; i < spawned.events.size(); ++i) ASSERT_TRUE(sameEvent(spawned.events[i], forked.events[i])) << i;
}

// The reader's descriptors are handed over as fds 3 to 6 through staging numbers; with the
// caller's low descriptors taken, its own memfds and pipe get numbers such staging could
// collide with (a fixed staging range 10..13 overwrote the records' memfd with the pipe).
TEST(TraceDat, TheReaderGetsItsDescriptorsWhateverNumbersTheyHave) {
    const Trace plain = sched::readTraceDat(kDat + "trace.dat");
    std::vector<int> taken;
    for (int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC); fd >= 0; fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
        taken.push_back(fd);
        if (fd >= 9) break;  // the reader's memfds and pipe come next: 10, 11, ...
    }
    const Trace t = sched::readTraceDat(kDat + "trace.dat");
    for (const int fd : taken) ::close(fd);
    ASSERT_EQ(t.events.size(), plain.events.size());
    for (std::size_t i = 0; i < plain.events.size(); ++i) ASSERT_TRUE(sameEvent(plain.events[i], t.events[i])) << i;
}

TEST(TraceDat, TheSameRecordingAsTraceCmdReportTextGivesTheSameEvents) {
    const Trace dat = sched::readTraceDat(kDat + "trace.dat");
    const Trace txt = sched::readFtraceText(kDat + "report.txt.gz");
    EXPECT_EQ(txt.problem_count, 0u) << txt.summary();
    EXPECT_EQ(txt.nr_cpus, 8);  // from report's "cpus=8"
    ASSERT_EQ(dat.events.size(), txt.events.size());
    std::size_t contexts = 0;
    for (std::size_t i = 0; i < dat.events.size(); ++i) {
        SchedEvent a = dat.events[i];
        a.time = (a.time + 500) / 1000 * 1000;  // report prints µs, rounded
        ASSERT_TRUE(sameEvent(a, txt.events[i])) << "record " << i + 1 << " vs report line " << txt.records[i].line << ": " << sched::toString(a.kind)
                                                 << " t " << dat.events[i].time << " cpu " << a.cpu << " pid " << a.pid << " vs "
                                                 << sched::toString(txt.events[i].kind) << " t " << txt.events[i].time << " cpu " << txt.events[i].cpu
                                                 << " pid " << txt.events[i].pid;
        EXPECT_EQ(dat.records[i].current, txt.records[i].current);
        if (dat.records[i].context != '.') ++contexts;
    }
    EXPECT_GT(contexts, 100u);  // IPI wakeups in hard IRQ context, read from the binary flags
    for (const auto& [pid, name] : txt.comm)
        if (pid != 0 && dat.comm.count(pid)) {
            EXPECT_EQ(dat.comm.at(pid), name) << pid;
        }
}

TEST(TraceDat, ReadingReportsProgressAndCanBeCancelled) {
    for (const char* f : {"trace.dat", "trace.v7-zstd.dat"}) {
        std::vector<double> seen;
        sched::TraceReadOptions o;
        o.progress = [&](double x) { return seen.push_back(x), true; };
        const Trace t = sched::readTraceDat(kDat + f, o);
        EXPECT_EQ(t.events.size(), 10119u) << f;
        ASSERT_FALSE(seen.empty()) << f;
        EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << f;
        EXPECT_GE(seen.front(), 0.0);
        EXPECT_DOUBLE_EQ(seen.back(), 1.0) << f;
        // Cancelled at the first call: TraceReadCancelled, and no child left behind.
        int calls = 0;
        o.progress = [&](double) { return ++calls < 1; };
        EXPECT_THROW(sched::readTraceDat(kDat + f, o), sched::TraceReadCancelled) << f;
        EXPECT_EQ(calls, 1);
        errno = 0;
        EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
        EXPECT_EQ(errno, ECHILD);
    }
}

TEST(TraceDat, ACorruptPageEndsItsCpuWithAProblemAndAGapTheRestIsKept) {
    // In this sample CPU 1's buffer starts at byte 3952640, in pages of 4096 bytes that start
    // with an 8-byte time stamp and an 8-byte commit (the page's data size): a page claiming
    // 2 GB is one libtracecmd cannot read, and it ends that CPU there.
    const auto cut = std::filesystem::temp_directory_path() / ("schedlab-badpage-" + std::to_string(::getpid()) + ".dat");
    std::filesystem::copy_file(kDat + "trace.dat", cut, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(cut, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    {
        std::fstream f(cut, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(3952640 + 2 * 4096 + 8);
        const std::uint64_t commit = 0x7fffffff;
        f.write(reinterpret_cast<const char*>(&commit), sizeof commit);
    }
    const Trace whole = sched::readTraceDat(kDat + "trace.dat");
    const Trace t = sched::readTraceDat(cut.string());
    std::filesystem::remove(cut);
    EXPECT_LT(t.events.size(), whole.events.size());
    EXPECT_GT(t.events.size(), 8000u);
    // Every other CPU's events are all there.
    auto count = [](const Trace& x, int cpu) {
        std::size_t n = 0;
        for (std::size_t i = 0; i < x.events.size(); ++i) n += x.events[i].cpu == cpu && x.events[i].kind != EvKind::cpu_idle;
        return n;
    };
    for (int cpu = 0; cpu < 8; ++cpu)
        if (cpu != 1) {
            EXPECT_EQ(count(t, cpu), count(whole, cpu)) << cpu;
        }
    EXPECT_LT(count(t, 1), count(whole, 1));
    bool problem = false;
    for (const auto& p : t.problems) problem = problem || p.what.starts_with("CPU 1: libtracecmd stopped reading its buffer after this record");
    EXPECT_TRUE(problem) << t.summary();
    // What libtracecmd printed in its reader is a problem of the trace, not noise on our stderr.
    bool said = false;
    for (const auto& p : t.problems)
        said = said || p.what.find("printed 38 bytes, the first line: \"bad page read, with size of 134217727\"") != std::string::npos;
    EXPECT_TRUE(said) << t.summary();
    bool gap = false;
    for (const auto& g : t.gaps) gap = gap || (g.cpu == 1 && g.to == -1 && g.from > 0);
    EXPECT_TRUE(gap);
    // The whole file has no such problem.
    for (const auto& p : whole.problems) EXPECT_EQ(p.what.find("stopped reading"), std::string::npos) << p.what;
}

TEST(TraceDat, ACutVersion6FileKeepsEachCpusRecordsBeforeTheCut) {
    const Trace whole = sched::readTraceDat(kDat + "trace.dat");
    const auto dir = std::filesystem::temp_directory_path();
    // Cuts inside CPU 1's buffer, between two CPUs' buffers, and inside CPU 6's.
    for (const std::uintmax_t keep : {std::uintmax_t(3'990'000), std::uintmax_t(4'030'000), std::uintmax_t(4'200'000)}) {
        const auto cut = dir / ("schedlab-cut6-" + std::to_string(::getpid()) + ".dat");
        std::filesystem::copy_file(kDat + "trace.dat", cut, std::filesystem::copy_options::overwrite_existing);
        std::filesystem::permissions(cut, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
        std::filesystem::resize_file(cut, keep);
        const Trace t = sched::readTraceDat(cut.string());
        std::filesystem::remove(cut);
        EXPECT_EQ(t.file, cut.string());
        ASSERT_GT(t.events.size(), 100u) << keep;
        EXPECT_LT(t.events.size(), whole.events.size()) << keep;
        EXPECT_EQ(t.truncated_line, t.lines + 1) << keep;
        ASSERT_FALSE(t.problems.empty());
        EXPECT_EQ(t.problems.back().what.find("the file is cut at byte " + std::to_string(keep)), 0u) << t.problems.back().what;
        // Each CPU's records are the first ones of that CPU in the whole file (recording CPU:
        // cpu_idle events carry the idle CPU, so they are left out).
        for (int cpu = 0; cpu < 8; ++cpu) {
            std::vector<std::int64_t> a, b;
            for (const auto& e : t.events)
                if (e.cpu == cpu && e.kind != EvKind::cpu_idle) a.push_back(e.time);
            for (const auto& e : whole.events)
                if (e.cpu == cpu && e.kind != EvKind::cpu_idle) b.push_back(e.time);
            ASSERT_LE(a.size(), b.size());
            EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << "cut " << keep << ", CPU " << cpu;
        }
        // A CPU cut short has a gap to the end.
        bool gap = false;
        for (const auto& g : t.gaps) gap = gap || g.to == -1;
        EXPECT_TRUE(gap) << keep;
    }
}

TEST(TraceDat, OtherFilesAndTruncatedOnesAreOneLineErrorsOrPartialNeverACrash) {
    EXPECT_THROW(sched::readTraceDat(kSample), InputError);  // a text trace
    EXPECT_THROW(sched::readTraceDat("/nonexistent.dat"), InputError);
    const auto dir = std::filesystem::temp_directory_path();
    for (const std::uintmax_t keep : {std::uintmax_t(16), std::uintmax_t(200'000), std::uintmax_t(4'400'000)}) {
        const auto cut = dir / ("schedlab-cut-" + std::to_string(::getpid()) + ".dat");
        std::filesystem::copy_file(kDat + "trace.dat", cut, std::filesystem::copy_options::overwrite_existing);
        std::filesystem::resize_file(cut, keep);
        try {
            const Trace t = sched::readTraceDat(cut.string());
            EXPECT_LT(t.events.size(), 10119u) << "cut at " << keep;
        } catch (const InputError& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        }
        std::filesystem::remove(cut);
    }
}

}  // namespace

// Found by tests/bench/fuzz/fuzz_trace_dat_record: a record shorter than its event's fields made
// the reader ask libtraceevent for a field past the record's end, which read out of bounds
// (SIGSEGV on an empty record). Fields past the end are missing: the record is a problem.
TEST(TraceDat, ARecordShorterThanItsFieldsIsAProblemNotARead) {
    const sched::datio::RecordDecoder dec(kDat + "trace.dat");
    // Records of the file, each cut to 0..N bytes (a cut page): none may crash; every cut one is not an event.
    const auto inputs = dec.sampleInputs(4);
    ASSERT_FALSE(inputs.empty());
    for (const std::string& in : inputs) {
        const std::size_t size = std::size_t(std::uint8_t(in[2])) | std::size_t(std::uint8_t(in[3])) << 8;
        ASSERT_GT(size, 12u);
        for (std::size_t cut : {std::size_t(0), std::size_t(2), std::size_t(8), size - 1}) {
            std::string r = in.substr(0, 8 + size);
            r[2] = char(cut & 0xff);
            r[3] = char(cut >> 8);
            r.resize(8 + cut);
            const auto out = dec.decode(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(r.data()), r.size()));
            EXPECT_EQ(out.records, 1u);
            EXPECT_FALSE(out.metadata.empty());
            if (cut < 8) EXPECT_EQ(out.events, 0u) << "cut at " << cut;
        }
        // Whole, the record decodes.
        const std::string whole = in.substr(0, 8 + size);
        const auto ok = dec.decode(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(whole.data()), whole.size()));
        EXPECT_EQ(ok.records, 1u);
    }
}
