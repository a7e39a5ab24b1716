// SPDX-License-Identifier: GPL-2.0-or-later
// trace_window.cpp: the workload run under a private tracefs instance, and the pairing of
// sched_waking with sched_wakeup.
#include "trace_window.h"

#include "interrupt.h"
#include "trace_instance.h"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <unordered_map>

extern char** environ;

namespace sched::calibrate {

namespace {

bool inPath(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= p.size()) {
        const std::size_t end = std::min(p.find(':', start), p.size());
        const std::string dir = end > start ? p.substr(start, end - start) : ".";
        const std::string file = dir + "/" + program;
        struct stat st;
        if (stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(file.c_str(), X_OK) == 0) return true;
        start = end + 1;
    }
    return false;
}

struct WorkloadResult {
    int waitStatus = 0;
    std::string lastLine;  ///< the output's last non-empty line
    double seconds = 0;
};

// Runs `command` by /bin/sh -c in its own process group (the interrupt watcher kills the group),
// stdin from /dev/null, stdout and stderr kept in a memfd.
WorkloadResult runWorkload(const std::string& command) {
    const int out = memfd_create("schedlab-calibrate-workload", MFD_CLOEXEC);
    if (out < 0) throw TraceError(std::string("memfd_create: ") + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { close(fd); }
    } closer{out};

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_adddup2(&actions, out, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, deflt;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    sigemptyset(&deflt);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&deflt, s);
    posix_spawnattr_setsigdefault(&attr, &deflt);

    std::string sh = "/bin/sh", dashC = "-c", cmd = command;
    char* argv[] = {sh.data(), dashC.data(), cmd.data(), nullptr};
    pid_t pid = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw TraceError(fmt::format("cannot start /bin/sh: {}", std::strerror(rc)));
    setWorkloadGroup(pid);
    // Wait without reaping first, so the group id cannot be reused while the watcher may still kill it.
    siginfo_t info;
    while (waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    setWorkloadGroup(0);
    kill(-pid, SIGKILL);  // whatever the command left behind in its group
    WorkloadResult r;
    while (waitpid(pid, &r.waitStatus, 0) < 0 && errno == EINTR) {
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::string text(std::size_t(std::max<off_t>(0, std::min<off_t>(lseek(out, 0, SEEK_END), 65536))), '\0');
    if (pread(out, text.data(), text.size(), 0) < 0) text.clear();
    std::size_t end = text.find_last_not_of(" \n\r\t");
    if (end != std::string::npos) {
        const std::size_t start = text.rfind('\n', end);
        r.lastLine = text.substr(start == std::string::npos ? 0 : start + 1,
                                 end + 1 - (start == std::string::npos ? 0 : start + 1));
    }
    return r;
}

struct RawEvent {
    unsigned long long ts;
    int cpu;
    bool waking;
    int pid;
    int targetCpu;  // sched_wakeup only
};

struct Parser {
    int wakingId = -1, wakeupId = -1;
    tep_format_field* wakingPid = nullptr;
    tep_format_field* wakeupPid = nullptr;
    tep_format_field* wakeupTarget = nullptr;
    std::vector<RawEvent> events;
    long long missedEvents = 0;  // records' missed_events (> 0: counted; -1: "some", counted as 1)
};

int onEvent(tep_event* event, tep_record* record, int cpu, void* context) {
    auto* p = static_cast<Parser*>(context);
    if (record->missed_events != 0) p->missedEvents += record->missed_events > 0 ? record->missed_events : 1;
    unsigned long long pid = 0, target = 0;
    if (event->id == p->wakingId) {
        if (tep_read_number_field(p->wakingPid, record->data, &pid) == 0)
            p->events.push_back({record->ts, cpu, true, int(pid), -1});
    } else if (event->id == p->wakeupId) {
        if (tep_read_number_field(p->wakeupPid, record->data, &pid) == 0 &&
            tep_read_number_field(p->wakeupTarget, record->data, &target) == 0) {
            p->events.push_back({record->ts, cpu, false, int(pid), int(target)});
        }
    }
    return pendingSignal() != 0 ? 1 : 0;
}

struct Pairs {
    std::vector<double> sameCpu, otherCpu;
    std::uint64_t unpairedWaking = 0, wakeupWithoutWaking = 0, ownWakeups = 0;
};

// This process's thread ids (their wakeups are schedlab-calibrate's, not the workload's).
std::set<int> ownThreads() {
    std::set<int> tids;
    if (DIR* dir = opendir("/proc/self/task")) {
        while (const dirent* e = readdir(dir)) {
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.insert(std::atoi(e->d_name));
        }
        closedir(dir);
    }
    return tids;
}

// Each sched_waking is paired with the next sched_wakeup of the same pid, in timestamp order over all
// CPUs; a second waking before that wakeup leaves the first unpaired.
void pairEvents(std::vector<RawEvent>& events, const std::set<int>& ownThreads, Pairs& out) {
    std::stable_sort(events.begin(), events.end(), [](const RawEvent& a, const RawEvent& b) { return a.ts < b.ts; });
    struct Pending {
        unsigned long long ts;
        int cpu;
    };
    std::unordered_map<int, Pending> pending;
    for (const RawEvent& e : events) {
        if (e.waking) {
            auto [it, inserted] = pending.try_emplace(e.pid, Pending{e.ts, e.cpu});
            if (!inserted) {
                ++out.unpairedWaking;
                it->second = Pending{e.ts, e.cpu};
            }
            continue;
        }
        const auto it = pending.find(e.pid);
        if (it == pending.end()) {
            ++out.wakeupWithoutWaking;
            continue;
        }
        if (ownThreads.count(e.pid)) {
            ++out.ownWakeups;
            pending.erase(it);
            continue;
        }
        const double window = double(e.ts - it->second.ts);
        (it->second.cpu == e.targetCpu ? out.sameCpu : out.otherCpu).push_back(window);
        pending.erase(it);
    }
    out.unpairedWaking += pending.size();
}

std::vector<Figure> both(const std::string& reason) {
    return {Figure::unavailable("ttwu_window_same_cpu", reason), Figure::unavailable("ttwu_window_other_cpu", reason)};
}

std::vector<Figure> record(const WindowPlan& plan) {
    int stale = 0;
    const std::string tracingDir = openTracingDir(stale);

    TraceInstance inst(instanceName());
    const TepHandle tep = inst.parser(tracingDir, {"sched_waking", "sched_wakeup"});
    Parser parser;
    tep_event* waking = tep_find_event_by_name(tep.get(), "sched", "sched_waking");
    tep_event* wakeup = tep_find_event_by_name(tep.get(), "sched", "sched_wakeup");
    if (!waking || !wakeup) throw TraceError("this kernel has no sched:sched_waking or sched:sched_wakeup event");
    parser.wakingId = waking->id;
    parser.wakeupId = wakeup->id;
    parser.wakingPid = tep_find_field(waking, "pid");
    parser.wakeupPid = tep_find_field(wakeup, "pid");
    parser.wakeupTarget = tep_find_field(wakeup, "target_cpu");
    if (!parser.wakingPid || !parser.wakeupPid || !parser.wakeupTarget) {
        throw TraceError("sched_waking/sched_wakeup lack the pid or target_cpu field");
    }

    const std::string clock = inst.useMonoClock();
    const std::size_t perCpuKb = inst.sizeBuffers();
    for (const char* ev : {"sched_waking", "sched_wakeup"}) inst.enableSchedEvent(ev);
    // Only the workload's wakeups: the events of this process's main thread and, through event-fork,
    // of every task it forks from here on (the workload's shell and its descendants). The kernel then
    // records a waking/wakeup when the waker or the wakee is one of them; wakeups of our own threads
    // (the workload's exit waking us) are left out when pairing.
    const bool workloadOnly = inst.restrictToPids({getpid()}, true);

    Pairs pairs;
    std::size_t eventCount = 0;
    double workloadSeconds = 0;
    for (int r = 0; r < plan.recordings; ++r) {
        throwIfInterrupted();
        inst.start();
        const WorkloadResult w = runWorkload(plan.command);
        inst.stop();
        throwIfInterrupted();
        workloadSeconds += w.seconds;
        if (!WIFEXITED(w.waitStatus) || WEXITSTATUS(w.waitStatus) != 0) {
            const std::string how = WIFEXITED(w.waitStatus)
                                        ? fmt::format("exit status {}", WEXITSTATUS(w.waitStatus))
                                        : fmt::format("killed by {}", strsignal(WTERMSIG(w.waitStatus)));
            throw TraceError(fmt::format("the window command '{}' failed ({}){}", plan.command, how,
                                         w.lastLine.empty() ? "" : ": " + w.lastLine));
        }
        parser.events.clear();
        inst.iterate(tep.get(), onEvent, &parser);
        throwIfInterrupted();
        eventCount += parser.events.size();
        pairEvents(parser.events, ownThreads(), pairs);
    }
    const long long lost = inst.overruns();

    const std::string recorded = fmt::format("{} recording{} of `{}` (unpinned, {:.3f} s in all)", plan.recordings,
                                             plan.recordings == 1 ? "" : "s", plan.command, workloadSeconds);
    std::vector<Figure> out;
    for (bool same : {true, false}) {
        const std::string name = same ? "ttwu_window_same_cpu" : "ttwu_window_other_cpu";
        std::vector<double>& v = same ? pairs.sameCpu : pairs.otherCpu;
        if (v.empty()) {
            out.push_back(Figure::unavailable(
                name, fmt::format("no sched_waking/sched_wakeup pair of this kind in {} ({} pairs of the other kind)",
                                  recorded, (same ? pairs.otherCpu : pairs.sameCpu).size())));
            continue;
        }
        Figure f;
        f.name = name;
        f.available = true;
        f.distribution = true;
        f.samples = std::move(v);
        f.iterations = std::uint64_t(plan.recordings);
        f.label = same ? "sched_waking->sched_wakeup, wakee's CPU" : "sched_waking->sched_wakeup, other CPU";
        f.method = fmt::format(
            "sched_wakeup timestamp - sched_waking timestamp of the same pid (each waking paired with the next "
            "wakeup), from a private tracefs instance (trace_clock={}, {}); {} = the CPU that recorded sched_waking "
            "{} sched_wakeup's target_cpu; {}; every pair pooled, runs = pairs, spread p10-p90",
            clock,
            workloadOnly ? "events of the workload's tasks only: set_event_pid + event-fork"
                         : "every task's events: set_event_pid/event-fork unavailable",
            same ? "same CPU" : "other CPU", same ? "is" : "is not", recorded);
        f.extra["recordings"] = plan.recordings;
        f.extra["command"] = plan.command;
        f.extra["trace_clock"] = clock;
        f.extra["events"] = eventCount;
        f.extra["unpaired_waking"] = pairs.unpairedWaking;
        f.extra["wakeup_without_waking"] = pairs.wakeupWithoutWaking;
        f.extra["own_thread_wakeups_left_out"] = pairs.ownWakeups;
        f.extra["workload_tasks_only"] = workloadOnly;
        f.extra["buffer_overruns"] = lost;
        f.extra["missed_events"] = parser.missedEvents;
        f.extra["buffer_kb_per_cpu"] = perCpuKb;
        if (stale > 0) f.extra["stale_instances_removed"] = stale;
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace

std::vector<Figure> measureTtwuWindow(const WindowPlan& plan) {
    if (geteuid() != 0) return both(kNotRootReason);
    if (plan.isDefault && !inPath("hackbench")) return both("hackbench not found in PATH (Debian package rt-tests)");
    try {
        return record(plan);
    } catch (const TraceError& e) {
        return both(e.what());
    }
}

}  // namespace sched::calibrate
