// SPDX-License-Identifier: GPL-2.0-or-later
// calibrate_main.cpp: schedlab-calibrate's command line, the choice of figures and CPUs, the order
// of the measurements, and the outputs.
#include "bench_support.h"
#include "figure.h"
#include "interrupt.h"
#include "machine_info.h"
#include "measures.h"
#include "report.h"
#include "trace_window.h"
#include "waker_tail.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace sched::calibrate;

namespace {

// Every figure, in the order of the table and of the JSON.
const std::vector<std::string> kFigures = {
    "pipe_write_nowake",
    "pipe_read_nowake",
    "pipe_write_wake_local",
    "pipe_write_wake_remote",
    "pipe_read_remote_data",
    "pipe_roundtrip_same_cpu_thread",
    "pipe_roundtrip_same_cpu_process",
    "ctx_switch_thread",
    "ctx_switch_process",
    "cacheline_transfer",
    "loopback_tcp_rtt_same_cpu",
    "loopback_tcp_rtt_cross_cpu",
    "socket_send_wake_remote",
    "socket_recv_data",
    "wake_to_run_remote",
    "futex_wake_remote",
    "futex_wake_nowaiter",
    "ttwu_window_same_cpu",
    "ttwu_window_other_cpu",
    "ttwu_window_pipe_cross",
    "ttwu_window_tcp_cross",
    "ttwu_window_futex_cross",
    "waker_tail_pipe",
    "waker_tail_tcp",
    "waker_tail_futex",
    "waker_tail_same_cpu_pipe",
    "waker_tail_same_cpu_tcp",
    "waker_tail_same_cpu_futex",
    "trace_event_cost",
};

// The figures recorded with tracefs (--no-trace leaves them out).
const std::vector<std::string> kTraceFigures = {
    "ttwu_window_same_cpu",    "ttwu_window_other_cpu",     "ttwu_window_pipe_cross",
    "ttwu_window_tcp_cross",   "ttwu_window_futex_cross",   "waker_tail_pipe",
    "waker_tail_tcp",          "waker_tail_futex",          "waker_tail_same_cpu_pipe",
    "waker_tail_same_cpu_tcp", "waker_tail_same_cpu_futex", "trace_event_cost",
};

// What a derived figure needs measured.
const std::map<std::string, std::vector<std::string>> kNeeds = {
    {"ctx_switch_thread", {"pipe_roundtrip_same_cpu_thread", "pipe_write_wake_local", "pipe_read_nowake"}},
    {"ctx_switch_process", {"pipe_roundtrip_same_cpu_process", "pipe_write_wake_local", "pipe_read_nowake"}},
};

struct Options {
    bool shortMode = false;
    std::string runsText;
    std::string jsonPath;
    std::string only;
    std::string cpus;
    std::string windowCmd;
    bool noTrace = false;
};

// A bad command line: one line on stderr, exit status 2.
struct UsageError {
    std::string line;
};

std::vector<std::string> splitCommas(const std::string& s) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = s.find(',', start);
        parts.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) return parts;
        start = comma + 1;
    }
}

bool parseInt(const std::string& s, long lo, long hi, long& out) {
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    out = std::stol(s);
    return out >= lo && out <= hi;
}

// --only: figure keys, or prefixes of keys that end at an underscore (waker_tail: every waker_tail_*,
// waker_tail_same_cpu: the three same-CPU ones).
std::set<std::string> selectFigures(const Options& o) {
    std::set<std::string> chosen;
    if (o.only.empty()) {
        chosen.insert(kFigures.begin(), kFigures.end());
    } else {
        for (const std::string& name : splitCommas(o.only)) {
            bool matched = false;
            for (const std::string& f : kFigures) {
                if (f == name || (!name.empty() && f.rfind(name + "_", 0) == 0)) {
                    chosen.insert(f);
                    matched = true;
                }
            }
            if (!matched) throw UsageError{fmt::format("--only: unknown figure '{}' (see --help for the names)", name)};
        }
    }
    if (o.noTrace) {
        for (const std::string& f : kTraceFigures) chosen.erase(f);
        if (chosen.empty()) throw UsageError{"--no-trace: nothing is left to measure with --only " + o.only};
    }
    for (const auto& [derived, needs] : kNeeds) {
        if (chosen.count(derived)) chosen.insert(needs.begin(), needs.end());
    }
    return chosen;
}

// --cpus A[,B], else the first two CPUs of the affinity mask.
std::vector<int> chooseCpus(const Options& o, std::string& noSecond) {
    const std::vector<int> allowed = allowedCpus();
    std::vector<int> cpus;
    if (o.cpus.empty()) {
        cpus.assign(allowed.begin(), allowed.begin() + std::min<std::size_t>(2, allowed.size()));
        if (cpus.size() < 2) noSecond = fmt::format("only one CPU ({}) is in this process's affinity mask", cpus.at(0));
        return cpus;
    }
    const std::vector<std::string> parts = splitCommas(o.cpus);
    if (parts.size() > 2)
        throw UsageError{fmt::format("--cpus: expected one or two CPUs (A or A,B), got '{}'", o.cpus)};
    for (const std::string& p : parts) {
        long cpu = 0;
        if (!parseInt(p, 0, 1 << 20, cpu)) throw UsageError{fmt::format("--cpus: '{}' is not a CPU number", p)};
        if (std::find(allowed.begin(), allowed.end(), int(cpu)) == allowed.end()) {
            throw UsageError{fmt::format("--cpus: CPU {} is not in this process's affinity mask", cpu)};
        }
        if (!cpus.empty() && cpus[0] == int(cpu)) throw UsageError{fmt::format("--cpus: CPU {} is named twice", cpu)};
        cpus.push_back(int(cpu));
    }
    if (cpus.size() < 2) noSecond = fmt::format("--cpus named one CPU ({})", cpus[0]);
    return cpus;
}

const char* kFooter =
    R"(Figures (JSON keys; --only takes keys, or prefixes ending at an underscore such as waker_tail or ttwu_window):
  pipe_write_nowake pipe_read_nowake pipe_write_wake_local pipe_write_wake_remote pipe_read_remote_data
  pipe_roundtrip_same_cpu_thread pipe_roundtrip_same_cpu_process ctx_switch_thread ctx_switch_process
  cacheline_transfer loopback_tcp_rtt_same_cpu loopback_tcp_rtt_cross_cpu socket_send_wake_remote socket_recv_data
  wake_to_run_remote futex_wake_remote futex_wake_nowaiter
  ttwu_window_same_cpu ttwu_window_other_cpu ttwu_window_pipe_cross ttwu_window_tcp_cross ttwu_window_futex_cross
  waker_tail_pipe waker_tail_tcp waker_tail_futex
  waker_tail_same_cpu_pipe waker_tail_same_cpu_tcp waker_tail_same_cpu_futex trace_event_cost
  (ctx_switch_* also measure the round trip and the two pipe figures they are derived from; they are unavailable,
  with those figures' medians, when their own median is not positive.)
Each figure is the median of R runs (each run: enough iterations for ~30 ms, ~10 ms with --short), with its spread.
"Same CPU" is the first CPU of --cpus (default: the first allowed CPU), "across CPUs" is it and the second; with a
single CPU the cross-CPU figures are reported unavailable. The trace-derived figures are recorded in a private
tracefs instance (root only; never the top-level buffer; --no-trace skips them) and, but for trace_event_cost, are
distributions over single events. ttwu_window_same_cpu and ttwu_window_other_cpu: sched_waking -> sched_wakeup while
the window command runs (default: hackbench -g 2 -f 10 --threads --pipe -l 200 -s 100, rt-tests, recorded R times;
a --window-cmd once).
waker_tail_{pipe,tcp,futex} and ttwu_window_*_cross: a ping-pong of two threads pinned to the two CPUs (over pipes,
loopback TCP, futexes) recorded for 0.3 s each (0.05 s with --short); the tail is how long the waker runs on after its
sched_waking until its sched_switch into a sleep (pairs where it was preempted are skipped and counted).
waker_tail_same_cpu_*: the same ping-pongs with both threads on the first CPU, SCHED_BATCH (a woken thread does not
preempt its waker), so the tail holds no IPI to another CPU; they need only one CPU. Each tail includes the cost
of the trace events recorded inside it: trace_event_cost is ns per recorded event, from R pairs of an untraced and
a traced run of the same-CPU pipe ping-pong (a traced run ~0.3 s, ~0.05 s with --short), and each same-CPU tail's
events_inside_tail_median (JSON) counts its events.
Times are read with clock_gettime(CLOCK_MONOTONIC) (vDSO); threads are pinned with pthread_setaffinity_np().
Exit status: 0 done (figures that cannot be measured here are reported unavailable, with the reason); 1 an
error while measuring or writing; 2 a bad command line. SIGINT, SIGTERM or SIGHUP: the trace instance and the
workload are removed, no JSON is written, and the program ends by that signal (the shell shows 130 for Ctrl+C,
143 for SIGTERM).)";

struct Measured {
    std::map<std::string, Figure> byName;
    void add(Figure f) { byName[f.name] = std::move(f); }
};

}  // namespace

int main(int argc, char** argv) {
    const auto started = std::chrono::steady_clock::now();
    Options o;
    CLI::App app("schedlab-calibrate: measures this machine's per-core costs of the scheduler's wakeup path",
                 "schedlab-calibrate");
    app.set_version_flag("--version", std::string("schedlab-calibrate ") + SCHEDLAB_VERSION);
    app.add_flag("--short", o.shortMode,
                 "R = 3 runs of ~10 ms each (and 3 trace recordings): the whole program in a few seconds");
    app.add_option("--runs", o.runsText, "R, the runs per figure (default 15, 3 with --short; 1-1000)")->type_name("N");
    app.add_option("-o,--json", o.jsonPath, "also write the figures as JSON (format schedlab-calibrate/1) to FILE")
        ->type_name("FILE");
    app.add_option("--only", o.only, "measure only these figures (comma-separated; see below)")
        ->type_name("NAME[,NAME]");
    app.add_option("--cpus", o.cpus, "the CPU for same-CPU figures and the second CPU for cross-CPU ones")
        ->type_name("A,B");
    app.add_option("--window-cmd", o.windowCmd, "the workload recorded for ttwu_window (run by /bin/sh -c, once)")
        ->type_name("CMD");
    app.add_flag("--no-trace", o.noTrace,
                 "skip the trace-derived figures, ttwu_window_*, waker_tail_* and trace_event_cost (no tracefs)");
    app.footer(kFooter);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::fprintf(stderr, "schedlab-calibrate: %s (see --help)\n", msg.c_str());
        return 2;
    }

    std::set<std::string> wanted;
    std::vector<int> cpus;
    std::string noSecond;
    int runs = o.shortMode ? 3 : 15;
    try {
        if (!o.runsText.empty()) {
            long r = 0;
            if (!parseInt(o.runsText, 1, 1000, r))
                throw UsageError{fmt::format("--runs: '{}' is not a whole number from 1 to 1000", o.runsText)};
            runs = int(r);
        }
        if (app.count("--window-cmd") && o.windowCmd.find_first_not_of(" \t") == std::string::npos) {
            throw UsageError{"--window-cmd: the command is empty"};
        }
        wanted = selectFigures(o);
        cpus = chooseCpus(o, noSecond);
        if (!o.jsonPath.empty()) {
            if (const std::string why = checkWritable(o.jsonPath); !why.empty()) throw UsageError{"-o: " + why};
        }
    } catch (const UsageError& e) {
        std::fprintf(stderr, "schedlab-calibrate: %s\n", e.line.c_str());
        return 2;
    }

    signal(SIGPIPE, SIG_IGN);  // a closed pipe or socket is an error return, not death
    installInterruptHandling();
    const bool progress = isatty(STDERR_FILENO);
    auto want = [&](std::initializer_list<const char*> names) {
        return std::any_of(names.begin(), names.end(), [&](const char* n) { return wanted.count(n) > 0; });
    };
    try {
        const std::string loadBefore = loadavg();
        const MachineInfo machine = probeMachine();
        MeasureContext ctx;
        ctx.cpuA = cpus[0];
        ctx.cpuB = cpus.size() > 1 ? cpus[1] : -1;
        ctx.noCpuBReason = noSecond;
        ctx.plan.runs = runs;
        ctx.plan.targetRunNs = o.shortMode ? 10'000'000 : 30'000'000;
        {
            ScopedAffinity keep;
            pinThisThread(ctx.cpuA);
            ctx.clockCostNs = clockReadCostNs();
        }

        Measured m;
        const CpuTimes cpu0 = cpuTimes(cpus);
        const double own0 = ownCpuSeconds();
        const auto benchStart = std::chrono::steady_clock::now();
        // One microbenchmark: its figures, or each of them unavailable with the failure's reason.
        auto measure = [&](std::vector<std::string> names, const std::function<std::vector<Figure>()>& fn) {
            if (progress) std::fprintf(stderr, "schedlab-calibrate: measuring %s\n", names[0].c_str());
            try {
                for (Figure& f : fn()) m.add(std::move(f));
            } catch (const BenchError& e) {
                for (const std::string& n : names)
                    m.add(Figure::unavailable(n, std::string("measurement failed: ") + e.what()));
            }
        };
        auto one = [](Figure f) { return std::vector<Figure>{std::move(f)}; };
        if (want({"pipe_write_nowake", "pipe_read_nowake"})) {
            measure({"pipe_write_nowake", "pipe_read_nowake"}, [&] { return measurePipeNowake(ctx); });
        }
        if (want({"pipe_write_wake_local"}))
            measure({"pipe_write_wake_local"}, [&] { return one(measurePipeWriteWake(ctx, false)); });
        if (want({"pipe_write_wake_remote"}))
            measure({"pipe_write_wake_remote"}, [&] { return one(measurePipeWriteWake(ctx, true)); });
        if (want({"pipe_read_remote_data"}))
            measure({"pipe_read_remote_data"}, [&] { return one(measurePipeReadRemoteData(ctx)); });
        for (bool process : {false, true}) {
            const std::string rt = process ? "pipe_roundtrip_same_cpu_process" : "pipe_roundtrip_same_cpu_thread";
            if (wanted.count(rt)) measure({rt}, [&] { return one(measurePipeRoundtrip(ctx, process)); });
            const std::string cs = process ? "ctx_switch_process" : "ctx_switch_thread";
            if (wanted.count(cs)) {
                m.add(deriveCtxSwitch(m.byName.at(rt), m.byName.at("pipe_write_wake_local"),
                                      m.byName.at("pipe_read_nowake"), process));
            }
        }
        if (want({"cacheline_transfer"}))
            measure({"cacheline_transfer"}, [&] { return one(measureCachelineTransfer(ctx)); });
        if (want({"loopback_tcp_rtt_same_cpu"})) {
            measure({"loopback_tcp_rtt_same_cpu"}, [&] { return one(measureLoopbackTcp(ctx, false)); });
        }
        if (want({"loopback_tcp_rtt_cross_cpu"})) {
            measure({"loopback_tcp_rtt_cross_cpu"}, [&] { return one(measureLoopbackTcp(ctx, true)); });
        }
        if (want({"socket_send_wake_remote"}))
            measure({"socket_send_wake_remote"}, [&] { return one(measureSocketSendWake(ctx)); });
        if (want({"socket_recv_data"})) measure({"socket_recv_data"}, [&] { return one(measureSocketRecvData(ctx)); });
        if (want({"wake_to_run_remote", "futex_wake_remote"})) {
            measure({"wake_to_run_remote", "futex_wake_remote"}, [&] { return measureFutexWake(ctx); });
        }
        if (want({"futex_wake_nowaiter"}))
            measure({"futex_wake_nowaiter"}, [&] { return one(measureFutexWakeNowaiter(ctx)); });
        RunInfo info;
        info.intervalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - benchStart).count();
        if (std::any_of(m.byName.begin(), m.byName.end(), [](const auto& f) { return f.second.available; })) {
            const CpuTimes cpu1 = cpuTimes(cpus);
            const double capacity = info.intervalSeconds * double(cpus.size());
            info.otherShare =
                std::max(0.0, (cpu1.busySeconds - cpu0.busySeconds) - (ownCpuSeconds() - own0)) / capacity;
            info.stealShare = (cpu1.stealSeconds - cpu0.stealSeconds) / capacity;
        } else {
            info.intervalSeconds = 0;
        }
        if (want({"ttwu_window_same_cpu", "ttwu_window_other_cpu"})) {
            if (progress) std::fprintf(stderr, "schedlab-calibrate: recording ttwu_window\n");
            WindowPlan plan;
            if (app.count("--window-cmd")) {
                plan.command = o.windowCmd;
                plan.isDefault = false;
            }
            plan.recordings = plan.isDefault ? runs : 1;
            for (Figure& f : measureTtwuWindow(plan)) m.add(std::move(f));
        }
        TailPlan tails;
        tails.cpuA = ctx.cpuA;
        tails.cpuB = ctx.cpuB;
        tails.noCpuBReason = noSecond;
        tails.seconds = o.shortMode ? 0.05 : 0.3;
        for (PingPongKind k : {PingPongKind::Pipe, PingPongKind::Tcp, PingPongKind::Futex}) {
            const std::string kind = kindName(k);
            if (wanted.count("waker_tail_" + kind) || wanted.count("ttwu_window_" + kind + "_cross"))
                tails.kinds.push_back(k);
            if (wanted.count("waker_tail_same_cpu_" + kind)) tails.sameCpuKinds.push_back(k);
        }
        tails.eventCost = wanted.count(kTraceEventCost) > 0;
        tails.eventCostRepetitions = runs;
        if (!tails.kinds.empty() || !tails.sameCpuKinds.empty() || tails.eventCost) {
            if (progress) std::fprintf(stderr, "schedlab-calibrate: recording waker_tail\n");
            for (Figure& f : measureWakerTails(tails)) m.add(std::move(f));
        }
        throwIfInterrupted();

        std::vector<Figure> figures;
        for (const std::string& name : kFigures) {
            if (wanted.count(name) && m.byName.count(name)) figures.push_back(m.byName.at(name));
        }
        info.toolVersion = SCHEDLAB_VERSION;
        info.dateUtc = isoDateUtc();
        info.cpusUsed = cpus;
        info.shortMode = o.shortMode;
        info.runs = runs;
        info.clockReadCostNs = ctx.clockCostNs;
        info.loadavgAtStart = loadBefore;
        info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (!o.jsonPath.empty()) writeFileAtomically(o.jsonPath, toJson(machine, info, figures).dump(2) + "\n");
        std::fputs(formatTable(machine, info, figures).c_str(), stdout);
        if (!o.jsonPath.empty()) std::printf("JSON: %s\n", o.jsonPath.c_str());
        std::fflush(stdout);
    } catch (const Interrupted& e) {
        const char* abbrev = sigabbrev_np(e.signal);
        std::fprintf(stderr,
                     "schedlab-calibrate: interrupted by SIG%s: nothing written, trace instance (if any) removed\n",
                     abbrev ? abbrev : "?");
        dieBySignal(e.signal);
    } catch (const std::exception& e) {
        stopInterruptHandling();
        std::fprintf(stderr, "schedlab-calibrate: %s\n", e.what());
        return 1;
    }
    stopInterruptHandling();
    return 0;
}
