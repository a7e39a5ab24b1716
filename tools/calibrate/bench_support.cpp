// SPDX-License-Identifier: GPL-2.0-or-later
// bench_support.cpp: clock, spinning, pinning, /proc thread state, pipes and the run series.
#include "bench_support.h"

#include "interrupt.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace sched::calibrate {

void throwErrno(const std::string& what) { throw BenchError(what + ": " + std::strerror(errno)); }

void spinFor(std::int64_t ns) {
    const std::int64_t end = nowNs() + ns;
    while (nowNs() < end) cpuRelax();
}

double clockReadCostNs() {
    // 15 batches of 1000 back-to-back reads; the median batch, per read.
    std::vector<double> perRead;
    for (int b = 0; b < 15; ++b) {
        const std::int64_t t0 = nowNs();
        std::int64_t last = t0;
        for (int i = 0; i < 1000; ++i) last = nowNs();
        perRead.push_back(double(last - t0) / 1000.0);
    }
    std::sort(perRead.begin(), perRead.end());
    return perRead[perRead.size() / 2];
}

void pinThisThread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0) {
        errno = rc;
        throwErrno("pthread_setaffinity_np(CPU " + std::to_string(cpu) + ")");
    }
    // The migration is synchronous; a thread still elsewhere means something (cpusets) overrode us.
    if (const int now = sched_getcpu(); now != cpu) {
        throw BenchError("pinned to CPU " + std::to_string(cpu) + " but running on CPU " + std::to_string(now));
    }
}

void setThisThreadBatch() {
    sched_param sp{};
    if (int rc = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp); rc != 0) {
        errno = rc;
        throwErrno("pthread_setschedparam(SCHED_BATCH)");
    }
}

ScopedAffinity::ScopedAffinity() : m_mask(sizeof(cpu_set_t)) {
    if (pthread_getaffinity_np(pthread_self(), m_mask.size(), reinterpret_cast<cpu_set_t*>(m_mask.data())) != 0)
        m_mask.clear();
}

ScopedAffinity::~ScopedAffinity() {
    if (!m_mask.empty())
        pthread_setaffinity_np(pthread_self(), m_mask.size(), reinterpret_cast<const cpu_set_t*>(m_mask.data()));
}

std::vector<int> allowedCpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) throwErrno("sched_getaffinity");
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    return cpus;
}

pid_t thisTid() { return gettid(); }

ThreadState::ThreadState(pid_t tid) {
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
    m_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) throwErrno("open " + path);
}

ThreadState::~ThreadState() {
    if (m_fd >= 0) close(m_fd);
}

char ThreadState::state() const {
    // "TID (COMM) S ...": COMM may hold ')' and spaces, so the state is after the last ')'.
    char buf[512];
    const ssize_t n = pread(m_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return '?';
    buf[n] = '\0';
    const char* close = std::strrchr(buf, ')');
    if (!close || close[1] != ' ' || close[2] == '\0') return '?';
    return close[2];
}

Pipe::Pipe(int flags) {
    if (pipe2(m_fd, flags | O_CLOEXEC) != 0) throwErrno("pipe2");
}

Pipe::~Pipe() {
    closeRead();
    closeWrite();
}

void Pipe::closeWrite() {
    if (m_fd[1] >= 0) close(m_fd[1]);
    m_fd[1] = -1;
}

void Pipe::closeRead() {
    if (m_fd[0] >= 0) close(m_fd[0]);
    m_fd[0] = -1;
}

void writeExact(int fd, const void* buf, std::size_t n, const char* what) {
    for (;;) {
        const ssize_t w = write(fd, buf, n);
        if (w == ssize_t(n)) return;
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throwErrno(what);
        throw BenchError(std::string(what) + ": short write");
    }
}

bool readExact(int fd, void* buf, std::size_t n, const char* what) {
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = read(fd, static_cast<char*>(buf) + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throwErrno(what);
        if (r == 0) {
            if (got == 0) return false;
            throw BenchError(std::string(what) + ": end of file in the middle of a message");
        }
        got += std::size_t(r);
    }
    return true;
}

LoopbackTcp::LoopbackTcp() {
    struct Listener {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ~Listener() {
            if (fd >= 0) close(fd);
        }
    } listener;
    if (listener.fd < 0) throwErrno("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(listener.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throwErrno("bind 127.0.0.1");
    if (listen(listener.fd, 1) != 0) throwErrno("listen");
    socklen_t len = sizeof addr;
    if (getsockname(listener.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) throwErrno("getsockname");
    m_client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_client < 0) throwErrno("socket");
    const int one = 1;
    // The constructor's exceptions skip the destructor: the client is closed here on failure.
    auto fail = [&](const char* what) {
        const int saved = errno;
        close(m_client);
        if (m_server >= 0) close(m_server);
        errno = saved;
        throwErrno(what);
    };
    if (setsockopt(m_client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("setsockopt(TCP_NODELAY)");
    if (connect(m_client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect 127.0.0.1");
    m_server = accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (m_server < 0) fail("accept");
    if (setsockopt(m_server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("setsockopt(TCP_NODELAY)");
}

LoopbackTcp::~LoopbackTcp() {
    close(m_client);
    close(m_server);
}

void sendExact(int fd, const void* buf, std::size_t n, const char* what) {
    for (;;) {
        const ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w == ssize_t(n)) return;
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throwErrno(what);
        throw BenchError(std::string(what) + ": short send");
    }
}

bool recvExact(int fd, void* buf, std::size_t n, const char* what) {
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = recv(fd, static_cast<char*>(buf) + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throwErrno(what);
        if (r == 0) {
            if (got == 0) return false;
            throw BenchError(std::string(what) + ": end of stream in the middle of a message");
        }
        got += std::size_t(r);
    }
    return true;
}

CpuTimes cpuTimes(const std::vector<int>& cpus) {
    CpuTimes t;
    std::ifstream in("/proc/stat");
    const double tick = double(sysconf(_SC_CLK_TCK));
    std::string line;
    while (std::getline(in, line)) {
        int cpu = -1;
        unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
        if (std::sscanf(line.c_str(), "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice, &system,
                        &idle, &iowait, &irq, &softirq, &steal) != 9) {
            continue;
        }
        if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
        t.busySeconds += double(user + nice + system + irq + softirq) / tick;
        t.stealSeconds += double(steal) / tick;
    }
    return t;
}

double ownCpuSeconds() {
    double total = 0;
    for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
        rusage ru;
        if (getrusage(who, &ru) != 0) continue;
        total +=
            double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    }
    return total;
}

Series runSeries(const SeriesPlan& plan, const RunFn& run, const std::function<void()>& beforeTimedRuns) {
    // Two warm-up runs: the first at the minimum count (threads, page faults, caches), the second at
    // the count the first suggests; the timed runs use what the second says.
    auto wallOf = [&](std::uint64_t n) {
        throwIfInterrupted();
        const std::int64_t t0 = nowNs();
        run(n);
        return std::max<std::int64_t>(1, nowNs() - t0);
    };
    auto scaled = [&](std::uint64_t n, std::int64_t wall) {
        const double perIter = double(wall) / double(n);
        return std::max<std::uint64_t>(plan.minIterations, std::uint64_t(double(plan.targetRunNs) / perIter));
    };
    std::uint64_t n = plan.minIterations;
    n = scaled(n, wallOf(n));
    n = scaled(n, wallOf(n));
    if (beforeTimedRuns) beforeTimedRuns();
    Series s;
    s.iterations = n;
    for (int r = 0; r < plan.runs; ++r) {
        throwIfInterrupted();
        const std::vector<double> perOp = run(n);
        if (s.perFigure.empty()) s.perFigure.resize(perOp.size());
        for (std::size_t f = 0; f < perOp.size(); ++f) s.perFigure[f].push_back(perOp[f]);
    }
    return s;
}

}  // namespace sched::calibrate
