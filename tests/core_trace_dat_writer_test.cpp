// SPDX-License-Identifier: GPL-2.0-or-later
// core_trace_dat_writer_test.cpp: simulated runs written as trace-cmd trace.dat
// (trace_dat_writer.h): the ring-buffer pages read by libtraceevent's own kbuffer parser, a
// run read back by readTraceDat() to exactly what the ftrace text export gives, versions 6 and
// 7 (zstd), many pages per CPU, `trace-cmd report` on the file, and write failures.
#include "util/input_error.h"
#include "sim/scenario.h"
#include "replay/replay.h"
#include "trace/trace.h"
#include "trace/trace_dat_writer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern "C" {  // kbuffer.h has no extern "C" of its own
#include <traceevent/kbuffer.h>
}

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using sched::EvKind;
using sched::InputError;
using sched::RingBufferPageWriter;
using sched::SchedEvent;
using sched::Trace;
namespace fs = std::filesystem;

fs::path tempDir() {
    static const fs::path d = [] {
        const fs::path p = fs::temp_directory_path() / ("schedlab-dat-test-" + std::to_string(::getpid()));
        fs::create_directories(p);
        return p;
    }();
    return d;
}

/// Removes tempDir() when the test program ends.
struct CleanUp : ::testing::Environment {
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(tempDir(), ec);
    }
};
const auto* const kCleanUp = ::testing::AddGlobalTestEnvironment(new CleanUp);

// ---------------------------------------------------------------------------------------------
// The page format, read back by libtraceevent's kbuffer (what trace-cmd reads pages with)

struct Read {
    std::uint64_t ts;
    std::string data;
};

/// Every event of `pages` as kbuffer sees it (64-bit longs, little endian).
std::vector<Read> readPages(const std::vector<char>& pages, std::vector<unsigned>* commits = nullptr) {
    std::vector<Read> out;
    EXPECT_EQ(pages.size() % RingBufferPageWriter::kPageSize, 0u);
    kbuffer* kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
    for (std::size_t off = 0; off + RingBufferPageWriter::kPageSize <= pages.size(); off += RingBufferPageWriter::kPageSize) {
        std::vector<char> page(pages.begin() + std::ptrdiff_t(off), pages.begin() + std::ptrdiff_t(off + RingBufferPageWriter::kPageSize));
        kbuffer_load_subbuffer(kb, page.data());
        EXPECT_EQ(kbuffer_missed_events(kb), 0);
        std::uint64_t commit = 0;
        std::memcpy(&commit, page.data() + 8, 8);
        if (commits) commits->push_back(unsigned(commit));
        unsigned long long ts = 0;
        for (void* d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
            const int size = kbuffer_event_size(kb);
            out.push_back({ts, std::string(static_cast<const char*>(d), std::size_t(size))});
        }
    }
    kbuffer_free(kb);
    return out;
}

std::string payload(std::size_t len, char seed) {
    std::string s(len, '\0');
    for (std::size_t i = 0; i < len; ++i) s[i] = char(seed + char(i * 7));
    return s;
}

TEST(RingBufferPages, SmallLargeExtendedAndBackwardEventsReadBackThroughKbuffer) {
    RingBufferPageWriter w;
    struct In {
        std::uint64_t ts;
        std::string data;
    };
    const std::vector<In> in = {
        {1000, payload(8, 'a')},                   // the page's first: delta 0
        {1005, payload(36, 'b')},                  // type_len 9
        {1005, payload(112, 'c')},                 // type_len 28, the largest small one
        {2'000'000'000, payload(64, 'd')},         // delta >= 2^27: a time extend before it
        {2'000'000'001, payload(300, 'e')},        // type_len 0: length word
        {1'999'999'000, payload(16, 'f')},         // back in time: a new page
        {5'000'000'000'000ull, payload(13, 'g')},  // not a multiple of 4, a huge delta
    };
    for (const auto& e : in) w.add(e.ts, e.data.data(), e.data.size());
    w.finish();
    std::vector<unsigned> commits;
    const std::vector<Read> got = readPages(w.pages(), &commits);
    ASSERT_EQ(got.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(got[i].ts, in[i].ts) << i;
        ASSERT_GE(got[i].data.size(), in[i].data.size()) << i;  // 4-aligned
        EXPECT_LT(got[i].data.size(), in[i].data.size() + 4) << i;
        EXPECT_EQ(got[i].data.substr(0, in[i].data.size()), in[i].data) << i;
    }
    ASSERT_EQ(commits.size(), 2u);  // the backward event started the second page
    // Page 1: 4+8, 4+36, 4+112, (8 extend) 4+64, 8+300; page 2: 4+16, (8 extend) 4+16.
    EXPECT_EQ(commits[0], 12u + 40u + 116u + 8u + 68u + 308u);
    EXPECT_EQ(commits[1], 20u + 8u + 20u);
    // The headers: type_len in the low 5 bits, 30 = time extend.
    std::uint32_t h = 0;
    std::memcpy(&h, w.pages().data() + 16 + 12 + 40, 4);
    EXPECT_EQ(h & 31u, 28u);
    std::memcpy(&h, w.pages().data() + 16 + 12 + 40 + 116, 4);
    EXPECT_EQ(h & 31u, RingBufferPageWriter::kTypeTimeExtend);
    EXPECT_THROW(w.add(1, "x", 0), std::length_error);
    EXPECT_THROW(w.add(1, payload(RingBufferPageWriter::kMaxData + 1, 'x').data(), RingBufferPageWriter::kMaxData + 1), std::length_error);
}

TEST(RingBufferPages, EventsNeverStraddleAPageAndEveryPageIsFull) {
    RingBufferPageWriter w;
    std::vector<std::size_t> lens;
    std::uint64_t ts = 100;
    for (int i = 0; i < 5000; ++i) {
        const std::size_t len = 8 + std::size_t(i * 37 % 200);
        lens.push_back(len);
        ts += std::uint64_t(i % 3) * 977;
        const std::string d = payload(len, char(i));
        w.add(ts, d.data(), d.size());
    }
    w.finish();
    std::vector<unsigned> commits;
    const std::vector<Read> got = readPages(w.pages(), &commits);
    ASSERT_EQ(got.size(), lens.size());
    EXPECT_GT(commits.size(), 100u);
    for (std::size_t i = 0; i + 1 < commits.size(); ++i) {
        EXPECT_LE(commits[i], RingBufferPageWriter::kPageData);
        EXPECT_GT(commits[i], RingBufferPageWriter::kPageData - 220) << "page " << i << " closed early";
    }
    for (std::size_t i = 0; i < lens.size(); ++i) ASSERT_EQ(got[i].data.substr(0, lens[i]), payload(lens[i], char(i))) << i;
}

// ---------------------------------------------------------------------------------------------
// A simulated run: the text export and the trace.dat give the same events

struct Exported {
    std::string text;
    std::string dat;
    std::uint64_t events = 0, inputs = 0, switches = 0, pages = 0;
    std::uint64_t marks = 0;  ///< schedlab_ttwu_queue marks (events, written as prints)
    int cpus = 0;
};

Exported exportRun(int groups, int fds, int loops, const std::string& name, sched::TraceDatOptions opt = {}) {
    const sched::Scenario s = sched::parseScenario(
        nlohmann::json{
            {"topology", "qemu-2s2c2t"},
            {"workloads",
             nlohmann::json::array({{{"type", "hackbench"}, {"groups", groups}, {"fds", fds}, {"threads", true}, {"pipe", true}, {"loops", loops}}})},
            {"variants", {{"A", "baseline"}}}},
        "dat.json", ".");
    Exported r;
    r.dat = (tempDir() / name).string();
    std::ostringstream out;
    std::unique_ptr<sched::FtraceTextWriter> text;
    std::unique_ptr<sched::TraceDatWriter> dat;
    sched::RunOptions o;
    o.on_start = [&](const sched::Engine& e) {
        r.cpus = e.nrCpus();
        auto comm = [&e](std::int32_t pid) { return e.taskComm(pid); };
        text = std::make_unique<sched::FtraceTextWriter>(out, e.nrCpus(), comm);
        dat = std::make_unique<sched::TraceDatWriter>(r.dat, e.nrCpus(), comm, opt);
    };
    o.event_sink = [&](const SchedEvent& e) {
        text->write(e);
        dat->write(e);
        ++r.events;
        r.switches += e.kind == EvKind::sched_switch;
        r.marks += e.kind == EvKind::schedlab_ttwu_queue;
    };
    o.wake_inputs_sink = [&](const sched::WakeInputs& in) {
        text->writeWakeInputs(in);
        dat->writeWakeInputs(in);
        ++r.inputs;
    };
    const sched::RunResult run = sched::runScenario(s, s.variants[0], s.cost, o);
    EXPECT_EQ(dat->written(), r.events);
    r.pages = dat->bytesOfPages() / RingBufferPageWriter::kPageSize;
    dat->commit();
    r.text = out.str();
    return r;
}

/// The text trace's events in the order trace-cmd merges per-CPU buffers: each CPU's events in
/// file order, the earliest head next, ties to the lowest CPU (tracecmd_iterate_events()).
std::vector<std::size_t> mergedOrder(const Trace& t) {
    std::vector<std::vector<std::size_t>> per;
    for (std::size_t i = 0; i < t.events.size(); ++i) {
        const auto cpu = std::size_t(t.events[i].cpu);
        if (cpu >= per.size()) per.resize(cpu + 1);
        per[cpu].push_back(i);
    }
    std::vector<std::size_t> head(per.size(), 0), order;
    for (;;) {
        int best = -1;
        for (std::size_t c = 0; c < per.size(); ++c)
            if (head[c] < per[c].size() &&
                (best < 0 || t.events[per[c][head[c]]].time < t.events[per[std::size_t(best)][head[std::size_t(best)]]].time))
                best = int(c);
        if (best < 0) break;
        order.push_back(per[std::size_t(best)][head[std::size_t(best)]++]);
    }
    return order;
}

/// Asserts that `dat` holds exactly the events and records of the text trace `txt`, written
/// with TraceDatOptions::min_time_ns = `minTime`.
void expectSameAsText(const Trace& dat, const Trace& txt, std::int64_t minTime) {
    EXPECT_EQ(dat.problem_count, 0u) << dat.summary();
    EXPECT_TRUE(dat.gaps.empty());
    EXPECT_EQ(dat.nr_cpus, txt.nr_cpus);
    ASSERT_EQ(dat.events.size(), txt.events.size()) << dat.summary() << txt.summary();
    const std::vector<std::size_t> order = mergedOrder(txt);
    ASSERT_EQ(order.size(), txt.events.size());
    std::size_t hardirq = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const SchedEvent &a = dat.events[i], &b = txt.events[order[i]];
        ASSERT_TRUE(a.kind == b.kind && a.time == std::max(b.time, minTime) && a.cpu == b.cpu && a.pid == b.pid && a.pid2 == b.pid2 &&
                    a.prev_state == b.prev_state && a.target_cpu == b.target_cpu && a.orig_cpu == b.orig_cpu && a.state == b.state)
            << "record " << i << ": " << sched::toString(a.kind) << " t " << a.time << " cpu " << a.cpu << " pid " << a.pid << " vs line "
            << txt.records[order[i]].line << ": " << sched::toString(b.kind) << " t " << b.time << " cpu " << b.cpu << " pid " << b.pid;
        ASSERT_EQ(dat.records[i].current, txt.records[order[i]].current) << "record " << i;
        ASSERT_EQ(dat.records[i].context, txt.records[order[i]].context) << "record " << i;
        hardirq += dat.records[i].context == 'h';
    }
    EXPECT_GT(hardirq, 0u);  // IPI wakeups: the flags made it through
    for (const auto& [pid, name] : txt.comm)
        if (pid != 0) {
            ASSERT_TRUE(dat.comm.count(pid)) << pid;
            EXPECT_EQ(dat.comm.at(pid), name.substr(0, 15)) << pid;
        }
    for (const auto& [name, n] : txt.event_counts) {
        if (name == "tracing_mark_write") continue;
        EXPECT_EQ(dat.event_counts.at(name), n) << name;
    }
}

TEST(TraceDatWriter, ASimulatedRunReadsBackAsItsFtraceTextExport) {
    sched::TraceDatOptions exact;
    exact.min_time_ns = 0;  // every time as the text has it (t = 0 included)
    const Exported r = exportRun(4, 4, 50, "small.dat", exact);
    ASSERT_GT(r.events, 500u);
    ASSERT_GT(r.inputs, 50u);
    const Trace txt = sched::parseFtraceText(r.text, "small.txt");
    ASSERT_EQ(txt.problem_count, 0u) << txt.summary();
    ASSERT_EQ(txt.events.size(), r.events);
    EXPECT_TRUE(sched::looksLikeTraceDat(r.dat));
    const Trace dat = sched::readTraceDat(r.dat);
    expectSameAsText(dat, txt, 0);
    EXPECT_EQ(dat.nr_cpus, 8);
    ASSERT_GT(r.marks, 0u);
    EXPECT_EQ(dat.event_counts.at("print"), r.inputs + r.marks);  // the schedlab_wake and schedlab_ttwu_queue marks
    EXPECT_EQ(
        std::uint64_t(std::count_if(dat.events.begin(), dat.events.end(), [](const SchedEvent& e) { return e.kind == EvKind::schedlab_ttwu_queue; })),
        r.marks);
    EXPECT_TRUE(dat.skipped_events.empty());
    // ... attached to their wakings as the text importer attaches them: the round-trip test oracle
    // holds through trace.dat too.
    ASSERT_EQ(dat.wake_inputs.size(), r.inputs);
    ASSERT_EQ(txt.wake_inputs.size(), r.inputs);
    const auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    const sched::AgreeReport ag = sched::agree(dat, topo, sched::Knobs{});
    EXPECT_EQ(ag.inputs.decisions, ag.decisions);
    EXPECT_GT(ag.decisions, 50u);
    EXPECT_EQ(ag.agree, ag.decisions);
    EXPECT_FALSE(fs::exists(r.dat + ".tmp." + std::to_string(::getpid())));
    EXPECT_FALSE(fs::exists(r.dat + ".tmp." + std::to_string(::getpid()) + ".d"));
}

TEST(TraceDatWriter, ARunOfManyPagesPerCpuRoundTripsInVersion6AndVersion7Zstd) {
    const Exported r6 = exportRun(4, 4, 1500, "big.dat");
    ASSERT_GT(r6.pages, 8u * 50u) << "expected many pages per CPU";
    const Trace txt = sched::parseFtraceText(r6.text, "big.txt");
    ASSERT_EQ(txt.problem_count, 0u);
    // The default moves the events at t = 0 to 1 ns (KernelShark reads 0 as "unset").
    ASSERT_GT(std::count_if(txt.events.begin(), txt.events.end(), [](const SchedEvent& e) { return e.time == 0; }), 0);
    const Trace d6 = sched::readTraceDat(r6.dat);
    expectSameAsText(d6, txt, 1);
    EXPECT_EQ(std::count_if(d6.events.begin(), d6.events.end(), [](const SchedEvent& e) { return e.time == 0; }), 0);

    sched::TraceDatOptions v7;
    v7.version = 7;
    v7.compression = "zstd";
    const Exported r7 = exportRun(4, 4, 1500, "big.v7.dat", v7);
    ASSERT_EQ(r7.text, r6.text);  // the same (deterministic) run
    expectSameAsText(sched::readTraceDat(r7.dat), txt, 1);
    EXPECT_LT(fs::file_size(r7.dat) * 3, fs::file_size(r6.dat)) << "zstd did not compress";
}

// ---------------------------------------------------------------------------------------------
// trace-cmd itself on the file

/// Runs `cmd`, returns its stdout; `rc` its exit status.
std::string run(const std::string& cmd, int& rc) {
    std::string out;
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) {
        rc = -1;
        return out;
    }
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int st = ::pclose(p);
    rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

std::size_t countLines(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) ++n;
    return n;
}

TEST(TraceDatWriter, TraceCmdReportOpensItAndPrintsTheSameEvents) {
    const std::string tc = SCHEDLAB_TRACE_CMD;
    ASSERT_TRUE(!tc.empty() && fs::exists(tc)) << "trace-cmd not found when configuring (scripts/setup.sh installs it)";
    const Exported r = exportRun(4, 4, 50, "report.dat");
    int rc = 0;
    const std::string report = run("'" + tc + "' report -i '" + r.dat + "' 2>&1", rc);
    ASSERT_EQ(rc, 0) << report.substr(0, 2000);
    EXPECT_EQ(countLines(report, " sched_switch: "), r.switches);
    EXPECT_EQ(countLines(report, "tracing_mark_write: schedlab_wake "), r.inputs);
    EXPECT_EQ(report.find("[FAILED TO PARSE]"), std::string::npos);
    // The report, read by the text importer, holds the same events (its stamps are µs).
    const Trace rep = sched::parseFtraceText(report, "report.txt");
    EXPECT_EQ(rep.problem_count, 0u) << rep.summary();
    EXPECT_EQ(rep.wake_inputs.size(), r.inputs);  // "print: tracing_mark_write: schedlab_wake ..."
    const Trace dat = sched::readTraceDat(r.dat);
    ASSERT_EQ(rep.events.size(), dat.events.size());
    for (std::size_t i = 0; i < dat.events.size(); ++i) {
        const SchedEvent &a = dat.events[i], &b = rep.events[i];
        ASSERT_TRUE(a.kind == b.kind && a.cpu == b.cpu && a.pid == b.pid && a.pid2 == b.pid2 && a.target_cpu == b.target_cpu &&
                    a.prev_state == b.prev_state && std::abs((a.time + 500) / 1000 * 1000 - b.time) <= 1000)
            << "record " << i << " vs report line " << rep.records[i].line;
    }
    // report's default layout has no flag columns; -l (latency) prints them: the hard-IRQ
    // wakeups ("dNh2." from an IPI, "d.h2." wakings outside a task) are there.
    const std::string lat = run("'" + tc + "' report -l -i '" + r.dat + "' 2>&1", rc);
    ASSERT_EQ(rc, 0);
    std::size_t hardirq = 0;
    for (const auto& rec : dat.records) hardirq += rec.context == 'h';
    EXPECT_GT(hardirq, 0u);
    EXPECT_EQ(countLines(lat, "dNh2. ") + countLines(lat, "d.h2. "), hardirq);

    // The event formats in the file are the recorded 6.1 kernel's, byte for byte.
    const std::string recorded = std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.dat";
    const std::string ours = run("'" + tc + "' dump --events -i '" + r.dat + "' 2>/dev/null", rc);
    ASSERT_EQ(rc, 0);
    const std::string theirs = run("'" + tc + "' dump --events -i '" + recorded + "' 2>/dev/null", rc);
    ASSERT_EQ(rc, 0);
    for (const char* ev : {"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task", "sched_process_fork",
                           "sched_process_exit", "cpu_idle"}) {
        const std::string fmt(sched::traceDatEventFormat(ev));
        ASSERT_FALSE(fmt.empty()) << ev;
        EXPECT_NE(theirs.find(fmt), std::string::npos) << ev << " differs from the recorded kernel's format";
        EXPECT_NE(ours.find(fmt), std::string::npos) << ev << " is not in the written file";
    }
}

// ---------------------------------------------------------------------------------------------
// Failures

TEST(TraceDatWriter, ABadPathIsOneLineAndNothingIsLeftBehind) {
    const std::string bad = (tempDir() / "nodir" / "t.dat").string();
    try {
        sched::TraceDatWriter w(bad, 8, {});
        FAIL() << "no error for a missing directory";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(tempDir() / "nodir"));
    EXPECT_THROW(sched::TraceDatWriter((tempDir() / "v5.dat").string(), 8, {}, {5, "", "local"}), InputError);
    EXPECT_THROW(sched::TraceDatWriter((tempDir() / "v6z.dat").string(), 8, {}, {6, "zstd", "local"}), InputError);

    // Abandoned before commit (a failed run): neither the file nor the work directory stays.
    const std::string p = (tempDir() / "abandoned.dat").string();
    {
        sched::TraceDatWriter w(p, 2, {});
        SchedEvent e;
        e.kind = EvKind::sched_switch;
        e.pid2 = 7;
        w.write(e);
    }
    EXPECT_FALSE(fs::exists(p));
    for (const auto& f : fs::directory_iterator(tempDir())) EXPECT_EQ(f.path().string().find("abandoned"), std::string::npos) << f.path();

    // An unknown compression is refused with one line, and the temporary file is gone.
    {
        sched::TraceDatWriter w(p, 2, {}, {7, "lz-nope", "local"});
        try {
            w.commit();
            FAIL() << "no error for an unknown compression";
        } catch (const InputError& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
            EXPECT_NE(std::string(e.what()).find("compression lz-nope"), std::string::npos) << e.what();
        }
    }
    EXPECT_FALSE(fs::exists(p));
    EXPECT_FALSE(fs::exists(p + ".tmp." + std::to_string(::getpid())));
}

TEST(TraceDatWriter, AnEmptyRunIsAValidFile) {
    const std::string p = (tempDir() / "empty.dat").string();
    sched::TraceDatWriter w(p, 4, {});
    w.commit();
    const Trace t = sched::readTraceDat(p);
    EXPECT_EQ(t.events.size(), 0u);
    EXPECT_EQ(t.nr_cpus, 4);
}

}  // namespace
