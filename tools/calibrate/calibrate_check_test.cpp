// SPDX-License-Identifier: GPL-2.0-or-later
// calibrate_check_test.cpp: runs schedlab-calibrate as a user would. CalibrateShort (calibrate.short):
// --short -o FILE gives a JSON whose available figures are sane distributions (a derived figure may
// instead be unavailable for a median that is not positive), trace_event_cost among them wherever the
// ttwu windows are measured, and each same-CPU tail counts the events inside it. CalibrateSignal
// (calibrate.sigterm_removes_instance): SIGTERM while the trace instance exists removes it and the
// workload; not as root, the figures carry the not-root reason instead. CalibrateNoTrace
// (calibrate.no_trace): --no-trace leaves every trace-derived figure out. CalibrateOnlyTails
// (calibrate.only_waker_tail): the waker_tail and waker_tail_same_cpu prefixes select six and three
// figures, and with one CPU the same-CPU tails are still measured.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

bool exists(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

// A started schedlab-calibrate with its stdout and stderr read into strings by finish().
class Program {
public:
    explicit Program(const std::vector<std::string>& args) {
        int out[2], err[2];
        if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) std::abort();
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, err[1], 2);
        std::vector<std::string> all = {SCHEDLAB_CALIBRATE};
        all.insert(all.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& a : all) argv.push_back(a.data());
        argv.push_back(nullptr);
        m_started = Clock::now();
        if (posix_spawn(&m_pid, SCHEDLAB_CALIBRATE, &fa, nullptr, argv.data(), environ) != 0) m_pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        close(err[1]);
        m_out = out[0];
        m_err = err[0];
    }
    ~Program() {
        if (m_pid > 0 && !m_reaped) {
            kill(m_pid, SIGKILL);
            waitpid(m_pid, nullptr, 0);
        }
        close(m_out);
        close(m_err);
    }
    pid_t pid() const { return m_pid; }

    /// Reads both outputs until the program closes them, then reaps it; false after `timeout`
    /// (the program is then killed).
    bool finish(std::chrono::seconds timeout) {
        const auto deadline = Clock::now() + timeout;
        bool outOpen = true, errOpen = true;
        while (outOpen || errOpen) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) return false;
            pollfd p[2] = {{m_out, short(outOpen ? POLLIN : 0), 0}, {m_err, short(errOpen ? POLLIN : 0), 0}};
            if (poll(p, 2, int(left)) < 0) continue;
            char buf[4096];
            for (int i = 0; i < 2; ++i) {
                if (!(p[i].revents & (POLLIN | POLLHUP))) continue;
                const ssize_t n = read(p[i].fd, buf, sizeof buf);
                if (n > 0) {
                    (i == 0 ? stdoutText : stderrText).append(buf, std::size_t(n));
                } else {
                    (i == 0 ? outOpen : errOpen) = false;
                }
            }
        }
        waitpid(m_pid, &waitStatus, 0);
        m_reaped = true;
        seconds = std::chrono::duration<double>(Clock::now() - m_started).count();
        return true;
    }

    std::string stdoutText, stderrText;
    int waitStatus = 0;
    double seconds = 0;

private:
    pid_t m_pid = -1;
    int m_out = -1, m_err = -1;
    bool m_reaped = false;
    Clock::time_point m_started;
};

bool inPath(const std::string& program) {
    std::stringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
    std::string dir;
    while (std::getline(path, dir, ':')) {
        if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    }
    return false;
}

// Any process whose command line is /bin/sh -c `command` (the workload's shell).
bool shellRunning(const std::string& command) {
    const std::string wanted = std::string("/bin/sh") + '\0' + "-c" + '\0' + command + '\0';
    DIR* proc = opendir("/proc");
    if (!proc) return false;
    bool found = false;
    while (dirent* e = readdir(proc)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (cmdline == wanted) found = true;
    }
    closedir(proc);
    return found;
}

const std::vector<std::string> kAllFigures = {
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

// Derived from other figures ((RT - 2(W+R)) / 2): unavailable, with the inputs' medians, when their
// median is not positive (other load during one input), never clamped.
const std::set<std::string> kDerivedFigures = {"ctx_switch_thread", "ctx_switch_process"};
constexpr const char* kDerivedNotPositive = "derived median ";

// Recorded from the ping-pongs on two CPUs, in the same kind of trace instance as the ttwu windows.
const std::vector<std::string> kPingPongTraceFigures = {
    "ttwu_window_pipe_cross", "ttwu_window_tcp_cross", "ttwu_window_futex_cross",
    "waker_tail_pipe",        "waker_tail_tcp",        "waker_tail_futex",
};

// Recorded from the ping-pongs with both threads on the first CPU: they need no second CPU.
const std::vector<std::string> kSameCpuTailFigures = {
    "waker_tail_same_cpu_pipe",
    "waker_tail_same_cpu_tcp",
    "waker_tail_same_cpu_futex",
};

// A same-CPU tail measured on `cpu`: it says so (both threads there, SCHED_BATCH) in the method and
// the extras, and counts its pairs per thread, not per CPU.
void expectSameCpuTail(const nlohmann::json& f, int cpu) {
    const std::string where = "both threads on CPU " + std::to_string(cpu) + ", SCHED_BATCH";
    EXPECT_NE(f.value("method", "").find(where), std::string::npos) << f.value("method", "");
    EXPECT_EQ(f["cpus"], nlohmann::json::array({cpu, cpu}));
    EXPECT_EQ(f.value("sched_policy", ""), "SCHED_BATCH");
    EXPECT_TRUE(f.contains("pairs_by_waker_thread"));
    EXPECT_FALSE(f.contains("pairs_by_waker_cpu"));
    // The trace events recorded inside the tail (at least the wakee's sched_wakeup on this CPU).
    ASSERT_TRUE(f.contains("events_inside_tail_median") && f["events_inside_tail_median"].is_number());
    const double inside = f["events_inside_tail_median"].get<double>();
    EXPECT_TRUE(std::isfinite(inside));
    EXPECT_GE(inside, 1.0);
}

// The first CPU of this process's affinity mask (the program's default cpuA).
int firstAllowedCpu() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) return c;
    }
    return 0;
}

TEST(CalibrateShort, JsonParsesAndEveryAvailableFigureIsASaneDistribution) {
    const std::string json = std::string(SCHEDLAB_CALIBRATE_OUT) + "/calibrate_short.json";
    std::remove(json.c_str());
    Program p({"--short", "-o", json});
    ASSERT_TRUE(p.finish(std::chrono::seconds(50))) << "did not finish in 50 s";
    ASSERT_TRUE(WIFEXITED(p.waitStatus) && WEXITSTATUS(p.waitStatus) == 0) << "wait status " << p.waitStatus << "\n"
                                                                           << p.stderrText;
    EXPECT_LT(p.seconds, 30.0) << "--short is meant to take a few seconds";
    EXPECT_FALSE(exists(json + ".tmp." + std::to_string(p.pid()))) << "temporary left behind";
    EXPECT_FALSE(exists("/sys/kernel/tracing/instances/schedlab-calibrate-" + std::to_string(p.pid())))
        << "trace instance left behind";

    std::ifstream in(json);
    ASSERT_TRUE(in) << json << " not written";
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(in));
    EXPECT_EQ(j.value("format", ""), "schedlab-calibrate/1");
    EXPECT_FALSE(j["cpu"].value("vendor", "").empty());
    EXPECT_FALSE(j.value("kernel", "").empty());
    EXPECT_EQ(j.value("mode", ""), "short");
    ASSERT_TRUE(j["figures"].is_object());
    for (const std::string& name : kAllFigures) EXPECT_TRUE(j["figures"].contains(name)) << name << " missing";

    for (const auto& [name, f] : j["figures"].items()) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(f.contains("available"));
        const bool derived = kDerivedFigures.count(name) > 0;
        if (!f["available"].get<bool>()) {
            const std::string reason = f.value("reason", "");
            EXPECT_FALSE(reason.empty()) << "unavailable without a reason";
            if (reason.rfind(kDerivedNotPositive, 0) == 0) {
                EXPECT_TRUE(derived) << "only a derived figure may lack a positive median: " << reason;
                // It names the three medians it came from.
                for (const char* input :
                     {"pipe_roundtrip_same_cpu_", "pipe_write_wake_local median", "pipe_read_nowake median"})
                    EXPECT_NE(reason.find(input), std::string::npos) << reason;
            } else if (derived) {
                // Otherwise only because an input is unavailable.
                EXPECT_NE(reason.find(" is unavailable: "), std::string::npos) << reason;
            }
            continue;
        }
        const double mn = f["min_ns"].get<double>(), p25 = f["p25_ns"].get<double>(),
                     med = f["median_ns"].get<double>();
        const double p75 = f["p75_ns"].get<double>(), mx = f["max_ns"].get<double>();
        EXPECT_TRUE(std::isfinite(mn) && std::isfinite(med) && std::isfinite(mx));
        EXPECT_GT(med, 0.0);
        // A derived figure's single runs are differences, not clamped: only its median must be positive.
        if (!derived) {
            EXPECT_GT(mn, 0.0);
        }
        EXPECT_GT(mx, 0.0);
        EXPECT_LE(mn, p25);
        EXPECT_LE(p25, med);
        EXPECT_LE(med, p75);
        EXPECT_LE(p75, mx);
        if (f.value("spread", "") == "p10-p90") {
            // A distribution over single events: its tails too, and how many events it holds.
            ASSERT_TRUE(f.contains("p10_ns") && f.contains("p90_ns") && f.contains("p99_ns") && f.contains("count"));
            const double p10 = f["p10_ns"].get<double>(), p90 = f["p90_ns"].get<double>(),
                         p99 = f["p99_ns"].get<double>();
            EXPECT_TRUE(std::isfinite(p10) && std::isfinite(p90) && std::isfinite(p99));
            EXPECT_LE(mn, p10);
            EXPECT_LE(p10, p25);
            EXPECT_LE(p75, p90);
            EXPECT_LE(p90, p99);
            EXPECT_LE(p99, mx);
            EXPECT_EQ(f["count"].get<long>(), f["runs"].get<long>());
        }
        if (name.rfind("waker_tail_", 0) == 0) {
            EXPECT_TRUE(f.contains("skipped_preempted") && f["skipped_preempted"].is_number_unsigned());
        }
        EXPECT_GE(f["runs"].get<long>(), 1);
        EXPECT_GE(f["iterations"].get<long>(), 1);
        EXPECT_EQ(f.value("unit", ""), "ns");
        EXPECT_FALSE(f.value("method", "").empty());
    }

    // The ttwu windows must be measured wherever they can be: as root, with tracefs there or mountable.
    const bool root = geteuid() == 0;
    const bool tracefs = exists("/sys/kernel/tracing");
    for (const char* name : {"ttwu_window_same_cpu", "ttwu_window_other_cpu"}) {
        const auto& f = j["figures"][name];
        if (root && tracefs && inPath("hackbench")) {
            EXPECT_TRUE(f.value("available", false)) << name << ": " << f.value("reason", "");
        } else if (root && tracefs) {
            EXPECT_NE(f.value("reason", "").find("hackbench"), std::string::npos)
                << name << ": " << f.value("reason", "");
        } else {
            EXPECT_FALSE(f.value("reason", "").empty()) << name;
        }
    }
    // The ping-pong recordings need no hackbench, only the instance and a second CPU: available
    // whenever the ttwu windows are.
    const bool windowsMeasured = j["figures"]["ttwu_window_same_cpu"].value("available", false) ||
                                 j["figures"]["ttwu_window_other_cpu"].value("available", false);
    const bool twoCpus = j["cpus_used"].is_array() && j["cpus_used"].size() == 2;
    for (const std::string& name : kPingPongTraceFigures) {
        const auto& f = j["figures"][name];
        if (windowsMeasured && twoCpus) {
            EXPECT_TRUE(f.value("available", false)) << name << ": " << f.value("reason", "");
        } else if (!root && twoCpus) {
            EXPECT_NE(f.value("reason", "").find("not root"), std::string::npos)
                << name << ": " << f.value("reason", "");
        }
    }
    for (const std::string& name : kSameCpuTailFigures) {
        SCOPED_TRACE(name);
        const auto& f = j["figures"][name];
        if (windowsMeasured) {
            ASSERT_TRUE(f.value("available", false)) << f.value("reason", "");
            ASSERT_TRUE(j["cpus_used"].is_array() && !j["cpus_used"].empty());
            expectSameCpuTail(f, j["cpus_used"][0].get<int>());
        } else if (!root) {
            EXPECT_NE(f.value("reason", "").find("not root"), std::string::npos) << f.value("reason", "");
        }
    }
    // The cost of one recorded event: the same instance and one CPU, so measured wherever the windows are.
    {
        SCOPED_TRACE("trace_event_cost");
        const auto& f = j["figures"]["trace_event_cost"];
        if (windowsMeasured) {
            ASSERT_TRUE(f.value("available", false)) << f.value("reason", "");
            EXPECT_EQ(f.value("spread", ""), "p25-p75");
            for (const char* key : {"median_ns", "p25_ns", "p75_ns", "min_ns", "max_ns"}) {
                EXPECT_TRUE(std::isfinite(f[key].get<double>())) << key;
                EXPECT_GT(f[key].get<double>(), 0.0) << key;
            }
            EXPECT_EQ(f["runs"].get<long>(), j["runs_per_figure"].get<long>());
            EXPECT_GT(f.value("events_per_round_trip_median", 0.0), 0.0);
        } else if (!root) {
            EXPECT_NE(f.value("reason", "").find("not root"), std::string::npos) << f.value("reason", "");
        }
    }
}

TEST(CalibrateNoTrace, NoTraceLeavesOutEveryTraceDerivedFigure) {
    // Prefixes: futex and socket select two figures each, waker_tail, waker_tail_same_cpu and ttwu_window
    // the trace-derived ones, which --no-trace then removes with trace_event_cost.
    const std::string json = std::string(SCHEDLAB_CALIBRATE_OUT) + "/calibrate_no_trace.json";
    std::remove(json.c_str());
    Program p({"--short", "--no-trace", "--only",
               "futex,socket,waker_tail,waker_tail_same_cpu,ttwu_window,trace_event_cost", "-o", json});
    ASSERT_TRUE(p.finish(std::chrono::seconds(50))) << "did not finish in 50 s";
    ASSERT_TRUE(WIFEXITED(p.waitStatus) && WEXITSTATUS(p.waitStatus) == 0) << "wait status " << p.waitStatus << "\n"
                                                                           << p.stderrText;
    EXPECT_FALSE(exists("/sys/kernel/tracing/instances/schedlab-calibrate-" + std::to_string(p.pid())))
        << "a trace instance was created";
    std::ifstream in(json);
    ASSERT_TRUE(in) << json << " not written";
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(in));
    std::set<std::string> keys;
    for (const auto& [name, f] : j["figures"].items()) keys.insert(name);
    EXPECT_EQ(keys, (std::set<std::string>{"futex_wake_nowaiter", "futex_wake_remote", "socket_recv_data",
                                           "socket_send_wake_remote"}));
}

// Runs `args` (with --short and -o) and returns its figures; a failed run fails the test.
nlohmann::json shortRunFigures(std::vector<std::string> args, const std::string& jsonName) {
    const std::string json = std::string(SCHEDLAB_CALIBRATE_OUT) + "/" + jsonName;
    std::remove(json.c_str());
    args.insert(args.end(), {"--short", "-o", json});
    Program p(args);
    EXPECT_TRUE(p.finish(std::chrono::seconds(30))) << "did not finish in 30 s";
    EXPECT_TRUE(WIFEXITED(p.waitStatus) && WEXITSTATUS(p.waitStatus) == 0) << "wait status " << p.waitStatus << "\n"
                                                                           << p.stderrText;
    std::ifstream in(json);
    EXPECT_TRUE(in) << json << " not written";
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << json << " does not parse";
    return j.is_object() && j.contains("figures") ? j["figures"] : nlohmann::json::object();
}

std::set<std::string> keysOf(const nlohmann::json& figures) {
    std::set<std::string> keys;
    for (const auto& [name, f] : figures.items()) keys.insert(name);
    return keys;
}

TEST(CalibrateOnlyTails, PrefixesSelectTheTailsAndSameCpuTailsNeedOneCpu) {
    // One CPU named: the two-CPU tails are unavailable for that reason, the same-CPU ones are recorded
    // (as root with tracefs) on it.
    const int cpu = firstAllowedCpu();
    const bool recordable = geteuid() == 0 && exists("/sys/kernel/tracing");
    const nlohmann::json all =
        shortRunFigures({"--only", "waker_tail", "--cpus", std::to_string(cpu)}, "calibrate_only_waker_tail.json");
    EXPECT_EQ(keysOf(all), (std::set<std::string>{"waker_tail_pipe", "waker_tail_tcp", "waker_tail_futex",
                                                  "waker_tail_same_cpu_pipe", "waker_tail_same_cpu_tcp",
                                                  "waker_tail_same_cpu_futex"}));
    for (const char* name : {"waker_tail_pipe", "waker_tail_tcp", "waker_tail_futex"}) {
        EXPECT_FALSE(all[name].value("available", true)) << name;
        EXPECT_NE(all[name].value("reason", "").find("--cpus named one CPU"), std::string::npos)
            << name << ": " << all[name].value("reason", "");
    }
    for (const std::string& name : kSameCpuTailFigures) {
        SCOPED_TRACE(name);
        const auto& f = all[name];
        if (recordable) {
            ASSERT_TRUE(f.value("available", false)) << f.value("reason", "");
            expectSameCpuTail(f, cpu);
            EXPECT_GT(f["median_ns"].get<double>(), 0.0);
        } else if (geteuid() != 0) {
            EXPECT_NE(f.value("reason", "").find("not root"), std::string::npos) << f.value("reason", "");
        }
    }

    const nlohmann::json same = shortRunFigures({"--only", "waker_tail_same_cpu"}, "calibrate_only_same_cpu.json");
    EXPECT_EQ(keysOf(same), (std::set<std::string>(kSameCpuTailFigures.begin(), kSameCpuTailFigures.end())));
}

TEST(CalibrateSignal, SigtermRemovesTheTraceInstanceAndTheWorkload) {
    // A marker in the workload's shell command line: the shell must be gone afterwards too.
    const std::string marker = "schedlab-sigterm-test-" + std::to_string(getpid());
    const std::string cmd = "sleep 5; : " + marker;
    if (geteuid() != 0) {
        Program p({"--only", "ttwu_window", "--window-cmd", cmd});
        ASSERT_TRUE(p.finish(std::chrono::seconds(20)));
        EXPECT_TRUE(WIFEXITED(p.waitStatus) && WEXITSTATUS(p.waitStatus) == 0) << p.stderrText;
        EXPECT_NE(
            p.stdoutText.find("unavailable: not root: recording sched_waking/sched_wakeup needs a tracefs instance"),
            std::string::npos)
            << p.stdoutText;
        EXPECT_LT(p.seconds, 5.0) << "the workload ran although it cannot be recorded";
        return;
    }
    Program p({"--only", "ttwu_window", "--window-cmd", cmd});
    ASSERT_GT(p.pid(), 0);
    const std::string dir = "/sys/kernel/tracing/instances/schedlab-calibrate-" + std::to_string(p.pid());
    const auto deadline = Clock::now() + std::chrono::seconds(4);
    // The instance appears before the workload starts; its shell shows that the workload has started.
    while (!(exists(dir) && shellRunning(cmd)) && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(exists(dir)) << dir << " never appeared";
    ASSERT_TRUE(shellRunning(cmd)) << "the workload never started";
    ASSERT_EQ(kill(p.pid(), SIGTERM), 0);
    ASSERT_TRUE(p.finish(std::chrono::seconds(15))) << "no exit within 15 s of SIGTERM";
    EXPECT_TRUE(WIFSIGNALED(p.waitStatus) && WTERMSIG(p.waitStatus) == SIGTERM)
        << "wait status " << p.waitStatus << "\n"
        << p.stderrText;
    EXPECT_LT(p.seconds, 5.0) << "it waited for the workload instead of killing it";
    EXPECT_FALSE(exists(dir)) << dir << " left behind";
    EXPECT_FALSE(shellRunning(cmd)) << "the workload's shell survived";
    EXPECT_NE(p.stderrText.find("interrupted by SIGTERM"), std::string::npos) << p.stderrText;
}

}  // namespace
