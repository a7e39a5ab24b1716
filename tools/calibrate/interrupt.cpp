// SPDX-License-Identifier: GPL-2.0-or-later
// interrupt.cpp: the signal handler (async-signal-safe: an atomic store and a write to a self-pipe)
// and the watcher thread that acts on it in normal thread context.
#include "interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

namespace sched::calibrate {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kGraceMs = 10'000;

std::atomic<int> g_signal{0};
int g_selfPipe[2] = {-1, -1};
std::thread g_watcher;
std::atomic<bool> g_quit{false};

std::mutex g_mutex;  // guards the two below
pid_t g_workloadGroup = 0;
std::string g_instanceDir;

void onSignal(int sig) {
    const int savedErrno = errno;
    int expected = 0;
    g_signal.compare_exchange_strong(expected, sig);
    const char byte = char(sig);
    [[maybe_unused]] ssize_t ignored = write(g_selfPipe[1], &byte, 1);
    errno = savedErrno;
}

void killWorkload() {
    std::lock_guard lock(g_mutex);
    if (g_workloadGroup > 0) kill(-g_workloadGroup, SIGKILL);
}

void watch() {
    bool signalled = false;
    for (;;) {
        pollfd p{g_selfPipe[0], POLLIN, 0};
        const int rc = poll(&p, 1, signalled ? kGraceMs : -1);
        if (g_quit.load()) return;
        if (rc < 0 && errno == EINTR) continue;
        if (rc > 0) {
            char byte;
            [[maybe_unused]] ssize_t ignored = read(g_selfPipe[0], &byte, 1);
            if (g_quit.load()) return;
            killWorkload();
            if (!signalled) {
                signalled = true;  // the main thread unwinds; give it the grace period
                continue;
            }
        }
        // A second signal, or the main thread did not end in time: remove the instance here.
        std::string dir;
        {
            std::lock_guard lock(g_mutex);
            dir = g_instanceDir;
        }
        if (!dir.empty()) rmdir(dir.c_str());
        std::fprintf(stderr, "schedlab-calibrate: interrupted (%s); forced exit%s\n", strsignal(g_signal.load()),
                     dir.empty() ? "" : ", trace instance removed");
        dieBySignal(g_signal.load());
    }
}

}  // namespace

void installInterruptHandling() {
    if (pipe2(g_selfPipe, O_CLOEXEC) != 0) {
        std::perror("schedlab-calibrate: pipe2");
        return;
    }
    g_watcher = std::thread(watch);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = onSignal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int s : kSignals) sigaction(s, &sa, nullptr);
}

void stopInterruptHandling() {
    if (!g_watcher.joinable()) return;
    g_quit.store(true);
    const char byte = 0;
    [[maybe_unused]] ssize_t ignored = write(g_selfPipe[1], &byte, 1);
    g_watcher.join();
}

int pendingSignal() { return g_signal.load(); }

void throwIfInterrupted() {
    if (const int s = g_signal.load()) throw Interrupted(s);
}

void setWorkloadGroup(pid_t pgid) {
    std::lock_guard lock(g_mutex);
    g_workloadGroup = pgid;
    if (pgid > 0 && g_signal.load() != 0) kill(-pgid, SIGKILL);  // the signal came before we knew the group
}

void setInstanceDir(const std::string& dir) {
    std::lock_guard lock(g_mutex);
    g_instanceDir = dir;
}

void dieBySignal(int sig) {
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    _exit(128 + sig);  // not reached for the signals handled here
}

}  // namespace sched::calibrate
