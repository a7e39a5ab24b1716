// SPDX-License-Identifier: GPL-2.0-or-later
// core_trace_test.cpp: ftrace text import (every layout of docs/trace-formats.md: ftrace text, the rules
// of docs/trace-formats.md: Tolerance, the recorded 6.1 sample) and export of simulated runs (round trip).
#include "util/input_error.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "trace/rq_csv.h"
#include "sim/scenario.h"
#include "trace/trace.h"
#include "util/install_paths.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace {

using sched::EvKind;
using sched::InputError;
using sched::parseFtraceText;
using sched::SchedEvent;
using sched::Trace;

const std::string kSample = std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz";

const char* kHeader5 =
    "# tracer: nop\n"
    "#\n"
    "# entries-in-buffer/entries-written: 4/4   #P:8\n"
    "#\n"
    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
    "#              | |         |   |||||     |         |\n";

/// The imported event recorded on `line`, or nullptr.
const SchedEvent* atLine(const Trace& t, std::uint32_t line, const sched::TraceRecord** rec = nullptr) {
    for (std::size_t i = 0; i < t.events.size(); ++i)
        if (t.records[i].line == line) {
            if (rec) *rec = &t.records[i];
            return &t.events[i];
        }
    return nullptr;
}

TEST(FtraceText, RecordedSampleOpensWithItsLayoutAndNoProblems) {
    const Trace t = sched::readFtraceText(kSample);
    EXPECT_EQ(t.nr_cpus, 8);
    EXPECT_TRUE(t.tgid_column);
    EXPECT_EQ(t.flag_columns, 5);
    EXPECT_TRUE(t.ns_timestamps);
    EXPECT_EQ(t.problem_count, 0u) << t.summary();
    EXPECT_EQ(t.truncated_line, 0u);
    EXPECT_TRUE(t.gaps.empty());
    EXPECT_EQ(t.entries_in_buffer, 8414u);
    EXPECT_EQ(t.entries_written, 8414u);
    EXPECT_EQ(t.lines, 8426u);
    // Every record of the body is an event; the ones schedlab does not model are counted, not lost.
    std::uint64_t all = 0;
    for (const auto& [name, n] : t.event_counts) all += n;
    EXPECT_EQ(all, 8414u);
    EXPECT_GT(t.event_counts.at("sched_waking"), 500u);
    EXPECT_EQ(t.events.size(), t.records.size());
    EXPECT_GE(t.workload_start, 0);

    // Lines 32-34 (a replay test oracle): softirq waking on CPU 4, migrate 4 -> 7, wakeup from the IPI on 7.
    const sched::TraceRecord* r = nullptr;
    const SchedEvent* w = atLine(t, 32, &r);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->kind, EvKind::sched_waking);
    EXPECT_EQ(w->cpu, 4);
    EXPECT_EQ(w->pid, 15);
    EXPECT_EQ(w->target_cpu, 4);
    EXPECT_EQ(w->time, 8'983'288'000);
    EXPECT_EQ(r->context, 's');
    EXPECT_EQ(r->current, 1056);
    const SchedEvent* m = atLine(t, 33);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->kind, EvKind::sched_migrate_task);
    EXPECT_EQ(m->orig_cpu, 4);
    EXPECT_EQ(m->target_cpu, 7);
    const SchedEvent* u = atLine(t, 34, &r);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->kind, EvKind::sched_wakeup);
    EXPECT_EQ(u->cpu, 7);
    EXPECT_EQ(u->target_cpu, 7);
    EXPECT_EQ(r->context, 'h');
    EXPECT_EQ(r->current, 0);
    EXPECT_EQ(t.commOf(15), "rcu_preempt");
    // Line 273: a sleeping switch-out in D state.
    const SchedEvent* s = atLine(t, 273);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->kind, EvKind::sched_switch);
    EXPECT_EQ(s->pid, 1063);
    EXPECT_EQ(s->pid2, 0);
    EXPECT_EQ(s->prev_state, 'D');
}

TEST(FtraceText, GzipAndPlainTextGiveTheSameTrace) {
    // The same sample decompressed by hand, read through the memory-mapped path.
    const Trace gz = sched::readFtraceText(kSample);
    const auto tmp = std::filesystem::temp_directory_path() / ("schedlab-trace-" + std::to_string(::getpid()) + ".txt");
    {
        const std::string cmd = "gzip -dc '" + kSample + "' > '" + tmp.string() + "'";
        ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    const Trace plain = sched::readFtraceText(tmp.string());
    std::filesystem::remove(tmp);
    ASSERT_EQ(plain.events.size(), gz.events.size());
    for (std::size_t i = 0; i < gz.events.size(); ++i) {
        EXPECT_EQ(plain.events[i].time, gz.events[i].time);
        EXPECT_EQ(plain.records[i].line, gz.records[i].line);
    }
}

TEST(FtraceText, ReadingReportsProgressAndCanBeCancelled) {
    // A plain file of more than one 8 MiB piece: the sample repeated (times going back are fine).
    const auto tmp = std::filesystem::temp_directory_path() / ("schedlab-progress-" + std::to_string(::getpid()) + ".txt");
    {
        const std::string cmd = "for i in $(seq 12); do gzip -dc '" + kSample + "'; done > '" + tmp.string() + "'";
        ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    ASSERT_GT(std::filesystem::file_size(tmp), std::uintmax_t(8 << 20));
    for (const std::string& file : {tmp.string(), kSample}) {
        std::vector<double> seen;
        sched::TraceReadOptions o;
        o.progress = [&](double f) { return seen.push_back(f), true; };
        const Trace t = sched::readFtraceText(file, o);
        EXPECT_GT(t.events.size(), 8000u);
        ASSERT_FALSE(seen.empty()) << file;
        EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << file;
        EXPECT_GT(seen.front(), 0.0);
        EXPECT_NEAR(seen.back(), 1.0, 1e-9) << file;
        if (file == tmp.string()) {
            EXPECT_GE(seen.size(), 2u);
        }
        int calls = 0;
        o.progress = [&](double) { return ++calls < 1; };
        EXPECT_THROW(sched::readFtraceText(file, o), sched::TraceReadCancelled) << file;
        EXPECT_EQ(calls, 1);
    }
    std::filesystem::remove(tmp);
}

TEST(FtraceText, EveryLineLayoutParses) {
    // tgid column or not; 5, 4 or no flag columns; comm with spaces and dashes; target_cpu=017.
    const std::string text =
        std::string(kHeader5) +
        "   my task-name-7-4242    [003] d..2.  5012.345678: sched_waking: comm=a b-c-9 pid=4301 prio=120 target_cpu=017\n"
        "       hackbench-4242  (   4200) [003] d..2  5012.345680: sched_migrate_task: comm=hackbench pid=4301 prio=120 orig_cpu=9 dest_cpu=17\n"
        "          <idle>-0       [017] 5012.345684: sched_wakeup: comm=hackbench pid=4301 prio=120 target_cpu=017\n"
        "          <idle>-0     (-------) [017] dNh2.  5012.345687: sched_switch: prev_comm=swapper/17 prev_pid=0 prev_prio=120 prev_state=R ==> "
        "next_comm=my prog pid=4301 next_pid=4301 next_prio=120\n";
    const Trace t = parseFtraceText(text, "layouts.txt");
    ASSERT_EQ(t.events.size(), 4u) << t.summary();
    // CPU 17 in a #P:8 trace: read as 18 CPUs, and said (they were once dropped without a word).
    ASSERT_EQ(t.problem_count, 1u) << t.summary();
    EXPECT_EQ(t.problems[0].what, "records on CPUs up to 17, but the header says #P:8: read as 18 CPUs");
    EXPECT_EQ(t.events[0].pid, 4301);
    EXPECT_EQ(t.events[0].target_cpu, 17);
    EXPECT_EQ(t.records[0].current, 4242);
    EXPECT_EQ(t.commOf(4242), "my task-name-7");
    EXPECT_EQ(t.events[1].kind, EvKind::sched_migrate_task);
    EXPECT_EQ(t.events[1].orig_cpu, 9);
    EXPECT_EQ(t.events[1].target_cpu, 17);
    EXPECT_EQ(t.records[1].context, '.');  // 4 flag columns: the third is still the context
    EXPECT_EQ(t.records[2].context, '?');  // no flags at all
    EXPECT_EQ(t.events[2].time, 5'012'345'684'000);
    EXPECT_EQ(t.events[3].pid, 0);
    EXPECT_EQ(t.events[3].pid2, 4301);
    EXPECT_EQ(t.commOf(4301), "my prog pid=4301");  // comm with " pid=" inside: anchored on the last next_pid=
    EXPECT_EQ(t.nr_cpus, 18);
}

TEST(FtraceText, IntegerTimestampsAndNanosecondFractions) {
    const Trace t = parseFtraceText(
        "  a-1 [000] ..... 123456789: sched_waking: comm=b pid=2 prio=120 target_cpu=001\n"
        "  a-1 [000] .....     1.000000007: sched_waking: comm=b pid=2 prio=120 target_cpu=001\n",
        "counter.txt");
    ASSERT_EQ(t.events.size(), 2u);
    EXPECT_EQ(t.events[0].time, 123456789);
    EXPECT_EQ(t.events[1].time, 1'000'000'007);
    EXPECT_FALSE(t.ns_timestamps);
    EXPECT_EQ(t.nr_cpus, 1);  // no #P: the highest CPU seen + 1
}

TEST(FtraceText, GapsUnknownEventsBadLinesAndATruncatedLastLine) {
    const std::string text = std::string(kHeader5) +
                             "  a-1 [002] d..2.     1.000010: sched_waking: comm=b pid=2 prio=120 target_cpu=002\n"     // 7
                             "CPU:2 [LOST 17 EVENTS]\n"                                                                 // 8
                             "  a-1 [001] d..2.     1.000020: sched_stat_runtime: comm=a pid=1 runtime=5 vruntime=9\n"  // 9
                             "  a-1 [002] d..2.     1.000030: sched_wakeup: comm=b pid=2 prio=120 target_cpu=002\n"     // 10
                             "##### CPU 5 buffer started ####\n"                                                        // 11
                             "  this is not a record\n"                                                                 // 12
                             "  a-1 [005] d..2.     1.000040: sched_wakeup: comm=b pid=2 prio=120 target_cpu=005\n"     // 13
                             "  a-1 [005] d..2.     1.000045: sched_waking: comm=b pid=x prio=120 target_cpu=005\n"     // 14
                             "  a-1 [005] d..2.     1.0000";                                                            // 15 (cut)
    const Trace t = parseFtraceText(text, "gaps.txt");
    ASSERT_EQ(t.gaps.size(), 2u);
    EXPECT_EQ(t.gaps[0].cpu, 2);
    EXPECT_EQ(t.gaps[0].lost, 17u);
    EXPECT_EQ(t.gaps[0].from, 1'000'010'000);
    EXPECT_EQ(t.gaps[0].to, 1'000'030'000);
    EXPECT_EQ(t.gaps[0].line, 8u);
    EXPECT_FALSE(t.gaps[0].buffer_started);
    EXPECT_EQ(t.gaps[1].cpu, 5);
    EXPECT_TRUE(t.gaps[1].buffer_started);
    EXPECT_EQ(t.gaps[1].from, -1);
    EXPECT_EQ(t.gaps[1].to, 1'000'040'000);
    EXPECT_EQ(t.skipped_events.at("sched_stat_runtime"), 1u);
    EXPECT_EQ(t.events.size(), 3u);
    ASSERT_EQ(t.problem_count, 2u) << t.summary();
    EXPECT_EQ(t.problems[0].line, 12u);
    EXPECT_EQ(t.problems[1].line, 14u);
    EXPECT_NE(t.problems[1].what.find("sched_waking"), std::string::npos);
    EXPECT_EQ(t.truncated_line, 15u);
    EXPECT_NE(t.summary().find("gaps.txt:15: last line cut short"), std::string::npos);
    // A complete bad last line is a bad line, not a truncation.
    const Trace u = parseFtraceText(
        std::string(kHeader5) + "  a-1 [005] d..2.     1.000040: sched_wakeup: comm=b pid=2 prio=120 target_cpu=005\nnonsense\n", "x");
    EXPECT_EQ(u.truncated_line, 0u);
    EXPECT_EQ(u.problem_count, 1u);
}

TEST(FtraceText, SchedlabWakeLinesAttachToTheirWakingAndBadOnesAreReported) {
    sched::WakeInputs in;
    in.pid = 2;
    in.prev = 3;
    in.this_load = 2048;
    in.prev_load = 977;
    in.p_load = 512;
    in.cur_load = 1000;
    in.sync = true;
    in.in_task = false;
    in.scan_this = 4;
    in.scan_prev = 0;
    in.cores_this = 1;
    in.cores_prev = 0;
    in.jiffies = 250;
    const std::string mark = sched::formatWakeInputs(in);
    const std::string text = std::string(kHeader5) +
                             "  a-1 [002] d.h2.     1.000010: sched_waking: comm=b pid=2 prio=120 target_cpu=003\n"  // 7
                             "  a-1 [002] d.h2.     1.000010: tracing_mark_write: " +
                             mark +
                             "\n"                                                                                    // 8
                             "  a-1 [002] d..2.     1.000020: tracing_mark_write: schedlab_wake pid=2 prev=3\n"      // 9: fields missing
                             "  a-1 [002] d..2.     1.000030: sched_waking: comm=c pid=4 prio=120 target_cpu=001\n"  // 10
                             "  a-1 [002] d..2.     1.000030: tracing_mark_write: " +
                             mark +
                             "\n"                                                                     // 11: pid 2, not 4
                             "  a-1 [002] d..2.     1.000040: tracing_mark_write: WORKLOAD_START\n";  // 12
    const Trace t = parseFtraceText(text, "marks.txt");
    ASSERT_EQ(t.events.size(), 2u);
    ASSERT_EQ(t.wake_inputs.size(), 1u);
    const sched::WakeInputs& got = t.wake_inputs.at(0);
    EXPECT_EQ(got.pid, 2);
    EXPECT_EQ(got.prev, 3);
    EXPECT_EQ(got.cpu, 2);
    EXPECT_EQ(got.time, 1'000'010'000);
    EXPECT_EQ(got.this_load, 2048);
    EXPECT_EQ(got.prev_load, 977);
    EXPECT_EQ(got.p_load, 512);
    EXPECT_EQ(got.cur_load, 1000);
    EXPECT_TRUE(got.sync);
    EXPECT_FALSE(got.in_task);
    EXPECT_EQ(got.scan_this, 4);
    EXPECT_EQ(got.scan_prev, 0);
    EXPECT_EQ(got.cores_this, 1);
    EXPECT_EQ(got.cores_prev, 0);
    EXPECT_EQ(got.jiffies, 250);
    EXPECT_EQ(t.records[0].context, 'h');
    ASSERT_EQ(t.problem_count, 2u) << t.summary();
    EXPECT_EQ(t.problems[0].line, 9u);
    EXPECT_NE(t.problems[0].what.find("missing"), std::string::npos);
    EXPECT_EQ(t.problems[1].line, 11u);
    EXPECT_NE(t.problems[1].what.find("not right after"), std::string::npos);
    EXPECT_EQ(t.workload_start, 1'000'040'000);
}

TEST(WakeInputs, AnyKeyOrderParsesAsSchedlabsOwnLayout) {
    sched::WakeInputs in;
    in.pid = 42;
    in.prev = 7;
    in.this_load = -3;
    in.prev_load = 977;
    in.p_load = 512;
    in.cur_load = 1000;
    in.sync = true;
    in.in_task = false;
    in.scan_this = 4;
    in.scan_prev = -1;
    in.cores_this = 1;
    in.cores_prev = -1;
    in.jiffies = 4294967296;
    const std::string own = sched::formatWakeInputs(in).substr(14);  // without "schedlab_wake "
    // The same fields backwards: the general parser, not the one-pass path for schedlab's layout.
    std::vector<std::string> kv;
    for (std::istringstream is(own); is;) {
        std::string w;
        if (is >> w) kv.insert(kv.begin(), w);
    }
    std::string back;
    for (const auto& w : kv) back += (back.empty() ? "" : " ") + w;
    ASSERT_NE(back, own);
    for (const std::string& msg : {own, back, own + " ", std::string(back + "  ")}) {
        sched::WakeInputs got;
        std::string why;
        ASSERT_TRUE(sched::parseWakeInputs(msg, got, why)) << msg << ": " << why;
        EXPECT_EQ(sched::formatWakeInputs(got), sched::formatWakeInputs(in)) << msg;
    }
    // Out of range for its field, a missing field, a stray word: refused by both paths.
    for (const std::string& msg :
         {own.substr(0, own.rfind(" jiffies")), own + " x", std::string("pid=99999999999 ") + own.substr(own.find(" prev=") + 1)}) {
        sched::WakeInputs got;
        std::string why;
        EXPECT_FALSE(sched::parseWakeInputs(msg, got, why)) << msg;
        EXPECT_FALSE(why.empty()) << msg;
    }
}

TEST(WakeInputs, ByEventFindsWhatWasAddedInAnyOrderTheLastOneForAnIndex) {
    sched::WakeInputsByEvent w;
    auto in = [](std::int32_t pid) {
        sched::WakeInputs x;
        x.pid = pid;
        return x;
    };
    for (const std::uint32_t ev : {9u, 3u, 5u, 3u, 0u}) w.add(ev, in(std::int32_t(ev * 10 + w.size())));
    w.finish();
    EXPECT_EQ(w.size(), 4u);
    EXPECT_EQ(w.find(3)->pid, 33);  // the second one for event 3
    EXPECT_EQ(w.at(9).pid, 90);
    EXPECT_EQ(w.at(0).pid, 4);
    EXPECT_EQ(w.find(4), nullptr);
    EXPECT_EQ(w.find(10), nullptr);
    EXPECT_THROW(w.at(1), std::out_of_range);
}

TEST(FtraceText, NotATraceEmptyAndLatencyFormatAreOneLineErrors) {
    EXPECT_THROW(parseFtraceText("", "empty.txt"), InputError);
    try {
        parseFtraceText("hello\nworld\n", "notes.txt");
        FAIL() << "no error";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.find('\n'), std::string::npos);
        EXPECT_NE(what.find("notes.txt"), std::string::npos);
        EXPECT_NE(what.find("not an ftrace text trace"), std::string::npos);
    }
    try {
        parseFtraceText("# tracer: nop\n#                  _------=> CPU#\n  a-1 3d..1 12us : sched_waking: comm=b pid=2\n", "lat.txt");
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("latency-format"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos);
    }
    // A header with nothing recorded: one line saying so (it was once "0 events", exit 0).
    try {
        (void)parseFtraceText(kHeader5, "nothing.txt");
        ADD_FAILURE() << "a header alone was read as a trace";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).find("nothing.txt: a header of "), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("lines and no event record (was tracing on, and the events enabled?)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(sched::readFtraceText("/nonexistent/trace.txt"), InputError);
}

TEST(FtraceText, SimulatedRunExportsAndReadsBackToTheSameEvents) {
    const sched::Scenario s =
        sched::parseScenario(nlohmann::json{{"topology", "qemu-2s2c2t"},
                                            {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 2}, {"fds", 2}, {"loops", 20}}})},
                                            {"variants", {{"A", "baseline"}}}},
                             "rt.json", ".");
    std::vector<SchedEvent> events;
    sched::RunOptions o;
    o.event_sink = [&](const SchedEvent& e) { events.push_back(e); };
    const sched::RunResult r = sched::runScenario(s, s.variants[0], s.cost, o);
    ASSERT_GT(events.size(), 100u);
    const sched::Engine& eng = *r.engine;
    std::ostringstream out;
    sched::FtraceTextWriter w(out, eng.nrCpus(), [&](std::int32_t pid) { return eng.taskComm(pid); });
    for (const auto& e : events) w.write(e);
    // Without the wake inputs the export is a kernel's trace: schedlab's own marks (the wakelist's
    // ttwu_queue()) are left out; everything else reads back as it was.
    const auto marks = std::count_if(events.begin(), events.end(), [](const SchedEvent& e) { return e.kind == EvKind::schedlab_ttwu_queue; });
    ASSERT_GT(marks, 0) << "a hackbench run queues some wakeups on a wakelist";
    std::erase_if(events, [](const SchedEvent& e) { return e.kind == EvKind::schedlab_ttwu_queue; });
    EXPECT_EQ(w.written(), events.size());
    const Trace t = parseFtraceText(out.str(), "export.txt");
    EXPECT_EQ(t.problem_count, 0u) << t.summary();
    EXPECT_EQ(t.nr_cpus, eng.nrCpus());
    ASSERT_EQ(t.events.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        const SchedEvent &a = events[i], &b = t.events[i];
        ASSERT_TRUE(a.kind == b.kind && a.time == b.time && a.cpu == b.cpu && a.pid == b.pid && a.pid2 == b.pid2 && a.target_cpu == b.target_cpu &&
                    a.orig_cpu == b.orig_cpu && a.prev_state == b.prev_state && a.state == b.state && a.cause == b.cause)
            << "event " << i << " (line " << t.records[i].line << ") differs: " << sched::toString(a.kind);
    }
    for (int id = 0; id < eng.taskCount(); ++id) EXPECT_EQ(t.commOf(eng.task(id).t.pid), eng.taskComm(eng.task(id).t.pid));
}

TEST(FtraceText, TheExportIsWhatPerfettosSystraceImporterReads) {
    // Perfetto (not packaged in Debian) reads ftrace text with its systrace importer
    // (src/trace_processor/importers/systrace/: systrace_line_tokenizer.cc, systrace_line_parser.cc).
    // Its rules, restated here: a text starting with "# tracer:"; each event line is TASK-PID,
    // an optional (TGID), [CPU], at most 5 flag characters, SECONDS.FRACTION: and EVENT:, then
    // arguments split at spaces into key=value; sched_switch needs numeric prev_pid, prev_prio,
    // next_pid and next_prio and a prev_state letter; sched_waking a numeric pid; cpu_idle
    // numeric state and cpu_id. The timestamp becomes int64(seconds * 1e9).
    const sched::Scenario s =
        sched::parseScenario(nlohmann::json{{"topology", "qemu-2s2c2t"},
                                            {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 2}, {"fds", 2}, {"loops", 20}}})},
                                            {"variants", {{"A", "baseline"}}}},
                             "pf.json", ".");
    std::ostringstream out;
    std::unique_ptr<sched::FtraceTextWriter> w;
    sched::RunOptions o;
    o.on_start = [&](const sched::Engine& e) {
        w = std::make_unique<sched::FtraceTextWriter>(out, e.nrCpus(), [&e](std::int32_t pid) { return e.taskComm(pid); });
    };
    o.event_sink = [&](const SchedEvent& e) { w->write(e); };
    o.wake_inputs_sink = [&](const sched::WakeInputs& in) { w->writeWakeInputs(in); };
    sched::runScenario(s, s.variants[0], s.cost, o);
    const std::string text = out.str();
    ASSERT_TRUE(text.starts_with("# tracer:"));
    const Trace t = parseFtraceText(text, "export.txt");  // ours, for what each line should say
    ASSERT_GT(t.events.size(), 100u);
    const std::regex line(R"(-([0-9]+)\s+(\(\s*([0-9]+|-+)\))?\s?\[([0-9]+)\]\s*[a-zA-Z0-9.]{0,5}\s*([0-9]+\.[0-9]+):\s+([^\s]+):)");
    std::istringstream in(text);
    std::string l;
    std::size_t lineNo = 0, ev = 0, marks = 0;
    std::map<std::string, std::size_t> kinds;
    while (std::getline(in, l)) {
        ++lineNo;
        if (l.empty() || l[0] == '#') continue;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(l, m, line)) << "line " << lineNo << ": " << l;
        const std::string name = m[6].str();
        const long long tsNs = static_cast<long long>(std::stod(m[5].str()) * 1e9);
        std::map<std::string, std::string> args;
        std::istringstream as(m.suffix().str());
        for (std::string tok; as >> tok;) {
            const auto eq = tok.find('=');
            if (eq != std::string::npos) args[tok.substr(0, eq)] = tok.substr(eq + 1);
        }
        auto isNum = [](const std::string& v) { return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos; };
        if (name == "tracing_mark_write") {  // a print event to Perfetto (not B|/E|/C|: left as it is)
            ++marks;
            // schedlab's ttwu_queue() mark is an event of ours (EvKind::schedlab_ttwu_queue).
            if (l.find("schedlab_ttwu_queue ") != std::string::npos) {
                ASSERT_LT(ev, t.events.size()) << "line " << lineNo;
                EXPECT_EQ(t.events[ev].kind, EvKind::schedlab_ttwu_queue) << "line " << lineNo;
                ++ev;
            }
            continue;
        }
        ASSERT_LT(ev, t.events.size()) << "line " << lineNo;
        const SchedEvent& e = t.events[ev];
        EXPECT_EQ(std::stoll(m[1].str()), t.records[ev].current) << "line " << lineNo;
        EXPECT_EQ(std::stoi(m[4].str()), name == "cpu_idle" ? std::stoi(args["cpu_id"]) : e.cpu) << "line " << lineNo;
        EXPECT_LE(std::llabs(tsNs - e.time), 1) << "line " << lineNo;  // the double's rounding
        EXPECT_EQ(name, sched::toString(e.kind)) << "line " << lineNo;
        if (name == "sched_switch") {
            for (const char* k : {"prev_pid", "prev_prio", "next_pid", "next_prio"}) EXPECT_TRUE(isNum(args[k])) << k << ", line " << lineNo;
            EXPECT_NE(std::string("RSDTtXZPI").find(args["prev_state"].substr(0, 1)), std::string::npos) << "line " << lineNo;
            EXPECT_EQ(std::stoi(args["prev_pid"]), e.pid);
            EXPECT_EQ(std::stoi(args["next_pid"]), e.pid2);
        } else if (name == "sched_waking" || name == "sched_wakeup" || name == "sched_wakeup_new") {
            ASSERT_TRUE(isNum(args["pid"])) << "line " << lineNo;
            EXPECT_EQ(std::stoi(args["pid"]), e.pid);
        } else if (name == "cpu_idle") {
            EXPECT_TRUE(isNum(args["state"]) && isNum(args["cpu_id"])) << "line " << lineNo;
        }
        ++kinds[name];
        ++ev;
    }
    EXPECT_EQ(ev, t.events.size());
    EXPECT_GT(marks, 10u);
    for (const char* k : {"sched_switch", "sched_waking", "sched_wakeup", "cpu_idle"}) EXPECT_GT(kinds[k], 0u) << k;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The seed's bpftrace runqueue-length CSV

namespace {

// What was once taken silently. A CPU column twice, a row whose time goes back, a file where
// no row is good.
TEST(RqLenCsv, DuplicateColumnsBackwardRowsAndAllBadFilesAreSaid) {
    auto errorOf = [](const std::string& text) {
        try {
            (void)sched::parseRqLenCsv(text, "r.csv");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(errorOf("[   Timestamp],CPU  0,CPU  1,CPU  0,\n[20],1,0,2,\n"), "r.csv: line 1, column 4: CPU0 is also column 2");
    const sched::RqLenCsv b = sched::parseRqLenCsv("[   Timestamp],CPU  0,\n[40],1,\n[20],2,\n[60],0,\n", "r.csv");
    EXPECT_EQ(b.rows(), 2u);
    ASSERT_EQ(b.problem_count, 1u);
    EXPECT_EQ(b.problems[0].line, 3u);
    EXPECT_EQ(b.problems[0].what, "timestamp 20 is before the previous row's 40");
    EXPECT_EQ(errorOf("[   Timestamp],CPU  0,\nnonsense\n[x],1,\n"),
              "r.csv: line 2: expected \"[<elapsed ns>]\" first (and no row of the 2 was good)");
    // A header alone is a run shorter than one sampling period: zero rows, no error.
    EXPECT_EQ(sched::parseRqLenCsv("[   Timestamp],CPU  0,\n", "r.csv").rows(), 0u);
}

TEST(RqLenCsv, SeedScriptLayoutWithPaddingTrailingCommasAndSparseCpus) {
    // As the script in the seed prints it: "[%12s]," then "CPU%3d," per CPU, rows "[%12lld]," and "%3d,".
    const std::string text =
        "[   Timestamp],CPU  0,CPU  1,CPU128,CPU129,\n"
        "[    20001573],  1,  0,  2,  0,\n"
        "[    40002981],  0,  0,  1,  3,\n"
        "[    60000412],  2,  1,\n";  // missing trailing values: no sample
    const sched::RqLenCsv r = sched::parseRqLenCsv(text, "rqlen.csv");
    EXPECT_EQ(r.cpus, (std::vector<int>{0, 1, 128, 129}));
    ASSERT_EQ(r.rows(), 3u);
    EXPECT_EQ(r.time[1], 40002981);
    EXPECT_EQ(r.value(1, 3), 3);
    EXPECT_EQ(r.value(2, 1), 1);
    EXPECT_EQ(r.value(2, 2), -1);
    EXPECT_EQ(r.problem_count, 0u);
    // The compact form (no padding, no trailing comma; docs/trace-formats.md: Runqueue-length CSV) reads the same.
    const sched::RqLenCsv c = sched::parseRqLenCsv("[   Timestamp],CPU  0,CPU  1\n[20001573],  1,  0\n", "c.csv");
    ASSERT_EQ(c.rows(), 1u);
    EXPECT_EQ(c.value(0, 0), 1);
    // The stock runqlen tool counts queued tasks only: queued > 0 means one more runs.
    const sched::RqLenCsv q = sched::parseRqLenCsv("[   Timestamp],CPU  0,CPU  1\n[1],  2,  0\n", "q.csv", false);
    EXPECT_EQ(q.nrRunning(0, 0), 3);
    EXPECT_EQ(q.nrRunning(0, 1), 0);
}

TEST(RqLenCsv, BadRowsAreListedATruncatedLastRowIsReportedAndOtherFilesRefused) {
    const sched::RqLenCsv r = sched::parseRqLenCsv(
        "[   Timestamp],CPU  0,CPU  1,\n"
        "[10],  1,  x,\n"
        "[20],  1,  2,  3,\n"
        "20,  1,  2,\n"
        "[30],  1,  1,\n"
        "[40],  1",
        "bad.csv");
    EXPECT_EQ(r.rows(), 1u);
    ASSERT_EQ(r.problem_count, 3u);
    EXPECT_EQ(r.problems[0].line, 2u);
    EXPECT_EQ(r.problems[1].line, 3u);
    EXPECT_EQ(r.problems[2].line, 4u);
    EXPECT_EQ(r.truncated_line, 6u);
    EXPECT_THROW(sched::parseRqLenCsv("time,cpu0\n1,2\n", "other.csv"), InputError);
    EXPECT_THROW(sched::parseRqLenCsv("[   Timestamp],CPU  0,core 1\n", "hdr.csv"), InputError);
    EXPECT_THROW(sched::parseRqLenCsv("", "empty.csv"), InputError);
}

TEST(RqLenCsv, ASimulatedRunsCsvReadsBackSampleForSample) {
    const sched::Scenario s = sched::parseScenario(
        nlohmann::json{{"topology", "qemu-2s2c2t"},
                       {"workloads", nlohmann::json::array({{{"type", "hackbench"}, {"groups", 2}, {"fds", 2}, {"loops", 12000}}})},
                       {"variants", {{"A", "baseline"}}}},
        "csv.json", ".");  // ~60 ms of simulated time: a few 50 Hz samples
    const sched::RunResult r = sched::runScenario(s, s.variants[0], s.cost, {});
    const auto& t = r.engine->metrics().bpf_timeline;
    ASSERT_GT(t.rows(), 0u);
    const sched::RqLenCsv c = sched::parseRqLenCsv(sched::bpftraceRqlenCsv(r), "rqlen50-bpftrace.csv");
    EXPECT_EQ(c.problem_count, 0u);
    ASSERT_EQ(c.rows(), t.rows());
    ASSERT_EQ(int(c.cpus.size()), t.ncpus());
    for (std::size_t row = 0; row < t.rows(); ++row) {
        EXPECT_EQ(c.time[row], t.time(row));
        for (int cpu = 0; cpu < t.ncpus(); ++cpu) EXPECT_EQ(c.value(row, std::size_t(cpu)), int(t.at(row, cpu)));
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// A trace as the views see it

#include "replay/trace_snapshot.h"

namespace {

TEST(TraceSnapshot, StateAtACursorMatchesTheRecord) {
    const Trace t = sched::readFtraceText(kSample);
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    const auto [t0, t1] = sched::traceSpan(t);
    EXPECT_EQ(t0, 8'978'732'000);
    EXPECT_EQ(t1, 9'499'953'000);
    // Between lines 33 (migrate 4 -> 7 of pid 15 in its waking) and 34 (its wakeup on 7).
    const sched::Snapshot a = sched::traceSnapshot(t, topo, 8'983'400'000, "trace");
    ASSERT_EQ(a.cpus.size(), 8u);
    EXPECT_EQ(a.cpus[4].curr_pid, 1056);
    EXPECT_EQ(a.cpus[4].kind, sched::CpuKind::busy);
    EXPECT_EQ(a.cpus[7].curr_pid, 0);
    EXPECT_EQ(a.cpus[7].nr_running, 0);  // not woken yet
    ASSERT_FALSE(a.migrations.empty());
    const sched::MigrationView& m = a.migrations.back();
    EXPECT_EQ(m.pid, 15);
    EXPECT_EQ(m.from, 4);
    EXPECT_EQ(m.to, 7);
    EXPECT_EQ(m.cause, sched::MigrationCause::wakeup);
    EXPECT_EQ(m.dist, sched::DistClass::llc);  // CPUs 4-7 share socket 1's LLC
    // After line 36 (CPU 7 switched to rcu_preempt): busy, 1 runnable.
    const sched::Snapshot b = sched::traceSnapshot(t, topo, 8'983'600'000, "trace");
    EXPECT_EQ(b.cpus[7].curr_pid, 15);
    EXPECT_EQ(b.cpus[7].nr_running, 1);
    // The whole trace: every migrate counted once by cause, latencies for the switched-in wakees.
    const sched::Snapshot z = sched::traceSnapshot(t, topo, t1, "trace");
    std::uint64_t causes = 0;
    for (auto n : z.migrations_by_cause) causes += n;
    EXPECT_EQ(causes, t.event_counts.at("sched_migrate_task"));
    EXPECT_EQ(z.ttwu_count, t.event_counts.at("sched_waking"));
    EXPECT_EQ(z.ctx_switches, t.event_counts.at("sched_switch"));
    EXPECT_GT(z.wakeup_latency.count(), 1500u);
    EXPECT_GT(z.migrations_by_cause[std::size_t(sched::MigrationCause::wakeup)], 50u);
    ASSERT_GT(z.sample_t.size(), 100u);
    EXPECT_EQ(z.sample_len.size(), z.sample_t.size() * 8);
    EXPECT_TRUE(std::is_sorted(z.sample_t.begin(), z.sample_t.end()));
    EXPECT_TRUE(z.done);
    // The cursor is clamped to the trace.
    EXPECT_EQ(sched::traceSnapshot(t, topo, 0, "trace").now, t0);
}

}  // namespace

namespace {

TEST(TraceSnapshot, RqLengthCsvOfATraceHasTheStateAtEachSampleInstant) {
    const Trace t = sched::readFtraceText(kSample);
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    const auto [t0, t1] = sched::traceSpan(t);
    const std::int64_t period = 20'000'000;
    const sched::RqLenCsv c = sched::parseRqLenCsv(sched::traceRqLenCsv(t, topo, period), "trace-rqlen.csv");
    EXPECT_EQ(c.problem_count, 0u);
    ASSERT_EQ(c.rows(), std::size_t((t1 - t0) / period));
    ASSERT_EQ(c.cpus.size(), 8u);
    int busy = 0;
    for (std::size_t row = 0; row < c.rows(); ++row) {
        EXPECT_EQ(c.time[row], std::int64_t(row + 1) * period);
        // The sample sees every event before its instant.
        const sched::Snapshot s = sched::traceSnapshot(t, topo, t0 + c.time[row] - 1, "at");
        for (std::size_t cpu = 0; cpu < 8; ++cpu) {
            EXPECT_EQ(c.nrRunning(row, cpu), int(s.cpus[cpu].nr_running)) << "row " << row << " CPU " << cpu;
            busy += c.nrRunning(row, cpu) > 0;
        }
    }
    EXPECT_GT(busy, 20);  // hackbench's runqueues are not empty
}

}  // namespace

namespace {

// The cursor's index (checkpoints + rq rows) gives what a replay from the first event gives.
TEST(TraceSnapshot, AnIndexedCursorEqualsAReplayFromTheStart) {
    const Trace t = sched::readFtraceText(kSample);
    auto topo = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    const auto [t0, t1] = sched::traceSpan(t);
    sched::TraceIndexOptions io;
    io.checkpoint_events = 300;
    io.rows = 500;
    int calls = 0;
    io.progress = [&](double) { return ++calls, true; };
    const sched::TraceIndex idx(t, topo, io);
    EXPECT_FALSE(idx.cancelled());
    EXPECT_GE(idx.checkpoints(), t.events.size() / 300);
    EXPECT_GE(calls, 1);
    sched::TraceViewOptions plainRows;
    plainRows.sample_period_ns = idx.samplePeriod();
    plainRows.sample_rows = 100000;
    std::uint64_t migrations = 0;
    for (int k = 0; k <= 40; ++k) {
        const std::int64_t at = t0 + (t1 - t0) * k / 40 + (k % 3) * 777;  // not on checkpoint boundaries
        const sched::Snapshot a = idx.snapshot(at, "i", plainRows);
        const sched::Snapshot b = sched::traceSnapshot(t, topo, at, "p", plainRows);
        ASSERT_EQ(a.now, b.now);
        EXPECT_EQ(a.events, b.events) << "at " << at;
        EXPECT_EQ(a.ttwu_count, b.ttwu_count);
        EXPECT_EQ(a.ttwu_local, b.ttwu_local);
        EXPECT_EQ(a.ttwu_wakelist, b.ttwu_wakelist);
        EXPECT_EQ(a.ctx_switches, b.ctx_switches);
        EXPECT_EQ(a.migrations_by_cause, b.migrations_by_cause);
        EXPECT_EQ(a.wakeup_latency.count(), b.wakeup_latency.count());
        EXPECT_EQ(a.wakeup_latency.percentile(99), b.wakeup_latency.percentile(99));
        ASSERT_EQ(a.migrations.size(), b.migrations.size()) << "at " << at;
        for (std::size_t m = 0; m < a.migrations.size(); ++m) {
            EXPECT_EQ(a.migrations[m].time, b.migrations[m].time);
            EXPECT_EQ(a.migrations[m].pid, b.migrations[m].pid);
            EXPECT_EQ(a.migrations[m].to, b.migrations[m].to);
        }
        migrations += a.migrations.size();
        for (std::size_t c = 0; c < a.cpus.size(); ++c) {
            EXPECT_EQ(a.cpus[c].curr_pid, b.cpus[c].curr_pid);
            EXPECT_EQ(a.cpus[c].nr_running, b.cpus[c].nr_running);
            EXPECT_EQ(a.cpus[c].idle_since_ns, b.cpus[c].idle_since_ns);
            EXPECT_EQ(a.cpus[c].cstate, b.cpus[c].cstate);
            EXPECT_FLOAT_EQ(a.cpus[c].rq_avg, b.cpus[c].rq_avg);
            EXPECT_FLOAT_EQ(a.cpus[c].busy_frac, b.cpus[c].busy_frac);
        }
        EXPECT_EQ(a.sample_t, b.sample_t) << "at " << at;
        EXPECT_EQ(a.sample_len, b.sample_len) << "at " << at;
    }
    EXPECT_GT(migrations, 0u);  // some cursors have arrows to compare
    // Thinned to the view's row budget.
    sched::TraceViewOptions few;
    few.sample_rows = 50;
    EXPECT_LE(idx.snapshot(t1, "i", few).sample_t.size(), 50u);
    // Cancelled from the progress callback.
    io.progress = [](double) { return false; };
    EXPECT_TRUE(sched::TraceIndex(t, topo, io).cancelled());
}

}  // namespace

// A line of megabytes (a file without newlines) is skipped and said, not kept: the
// reader's memory stays flat whatever the input.
TEST(FtraceText, AnOverlongLineIsSkippedAndSaid) {
    const std::string rec = "  a-1 [000] d..2. 1.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=001\n";
    const std::string text = "# tracer: nop\n" + rec + std::string(3u << 20, 'x') + "\n" + rec;
    const Trace t = parseFtraceText(text, "long.txt");
    EXPECT_EQ(t.events.size(), 2u);
    ASSERT_EQ(t.problem_count, 1u);
    EXPECT_EQ(t.problems[0].line, 3u);
    EXPECT_EQ(t.problems[0].what, "longer than 1 MiB: skipped");
    // The same through the file reader, the long line across its 8 MiB pieces and at the very end.
    const auto path = std::filesystem::temp_directory_path() / ("schedlab-long-" + std::to_string(::getpid()) + ".txt");
    {
        std::ofstream f(path, std::ios::binary);
        f << "# tracer: nop\n" << rec << std::string(9u << 20, 'y') << "\n" << rec << std::string(2u << 20, 'z');
    }
    const Trace u = sched::readFtraceText(path.string());
    std::filesystem::remove(path);
    EXPECT_EQ(u.events.size(), 2u);
    ASSERT_EQ(u.problem_count, 2u) << u.summary();
    EXPECT_EQ(u.problems[0].line, 3u);
    EXPECT_EQ(u.problems[1].what, "longer than 1 MiB: skipped");
}
