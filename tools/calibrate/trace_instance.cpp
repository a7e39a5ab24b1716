// SPDX-License-Identifier: GPL-2.0-or-later
// trace_instance.cpp: the tracefs instance (created, configured, removed on every exit path), stale
// instances of killed runs, and the event parser built from the instance's formats.
#include "trace_instance.h"

#include "interrupt.h"

#include <fmt/format.h>

#include <sched.h>

// libtracefs's API as tracefs.h (libtracefs 1.6) declares it, for the functions used here. tracefs.h
// itself is not included: its inline histogram helpers pass an int as an enum, which C++ rejects.
extern "C" {
tracefs_instance* tracefs_instance_create(const char* name);
tracefs_instance* tracefs_instance_alloc(const char* tracing_dir, const char* name);
int tracefs_instance_destroy(tracefs_instance* instance);
void tracefs_instance_free(tracefs_instance* instance);
char* tracefs_instance_get_dir(tracefs_instance* instance);
void tracefs_put_tracing_file(char* name);
const char* tracefs_tracing_dir(void);
int tracefs_trace_on(tracefs_instance* instance);
int tracefs_trace_off(tracefs_instance* instance);
int tracefs_instance_file_write(tracefs_instance* instance, const char* file, const char* str);
int tracefs_instance_file_clear(tracefs_instance* instance, const char* file);
char* tracefs_instance_file_read(tracefs_instance* instance, const char* file, int* psize);
int tracefs_instance_set_buffer_size(tracefs_instance* instance, size_t size, int cpu);
char* tracefs_get_clock(tracefs_instance* instance);
int tracefs_event_enable(tracefs_instance* instance, const char* system, const char* event);
int tracefs_event_disable(tracefs_instance* instance, const char* system, const char* event);
int tracefs_iterate_raw_events(tep_handle* tep, tracefs_instance* instance, cpu_set_t* cpus, int cpu_size,
                               int (*callback)(tep_event*, tep_record*, int, void*), void* callback_context);
}

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace sched::calibrate {

namespace {

std::string errnoText() { return std::strerror(errno); }

// Instances named schedlab-calibrate-PID whose process is gone (killed by SIGKILL, say): removed.
// (Listed with readdir: libtracefs 1.6's tracefs_instances() leaks its compiled regex.)
int removeStaleInstances(const std::string& tracingDir) {
    static constexpr std::string_view kPrefix = "schedlab-calibrate-";
    DIR* dir = opendir((tracingDir + "/instances").c_str());
    if (!dir) return 0;
    std::vector<std::string> stale;
    while (const dirent* e = readdir(dir)) {
        const std::string_view name = e->d_name;
        if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size()) continue;
        const std::string_view digits = name.substr(kPrefix.size());
        if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
        const pid_t pid = pid_t(std::stol(std::string(digits)));
        if (pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH) stale.emplace_back(name);
    }
    closedir(dir);
    int removed = 0;
    for (const std::string& name : stale) {
        if (tracefs_instance* inst = tracefs_instance_alloc(nullptr, name.c_str())) {
            if (tracefs_instance_destroy(inst) == 0) {
                ++removed;
                std::fprintf(stderr, "schedlab-calibrate: removed the stale trace instance %s (its process is gone)\n",
                             name.c_str());
            }
            tracefs_instance_free(inst);
        }
    }
    return removed;
}

// A tracefs file's whole text (their size in stat is 0: read to the end).
std::string readTracefsFile(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw TraceError(fmt::format("cannot read {}: {}", path, errnoText()));
    std::string text;
    char buf[8192];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, std::size_t(n));
    close(fd);
    return text;
}

}  // namespace

std::string instanceName() { return fmt::format("schedlab-calibrate-{}", getpid()); }

std::string openTracingDir(int& staleRemoved) {
    const char* dir = tracefs_tracing_dir();
    if (!dir) throw TraceError("tracefs is not mounted and mounting it at /sys/kernel/tracing failed: " + errnoText());
    const std::string tracingDir = dir;
    if (access((tracingDir + "/instances").c_str(), W_OK) != 0) {
        throw TraceError(fmt::format("cannot create instances in {}/instances: {}", tracingDir, errnoText()));
    }
    staleRemoved = removeStaleInstances(tracingDir);
    return tracingDir;
}

TraceInstance::TraceInstance(const std::string& name) : m_name(name) {
    m_instance = tracefs_instance_create(name.c_str());
    if (!m_instance) throw TraceError(fmt::format("cannot create the tracefs instance {}: {}", name, errnoText()));
    if (char* dir = tracefs_instance_get_dir(m_instance)) {
        m_dir = dir;
        tracefs_put_tracing_file(dir);
    }
    setInstanceDir(m_dir);
    // A new instance starts with tracing on: off before any event is enabled.
    tracefs_trace_off(m_instance);
}

TraceInstance::~TraceInstance() {
    tracefs_trace_off(m_instance);
    if (tracefs_instance_destroy(m_instance) != 0 && !m_dir.empty()) rmdir(m_dir.c_str());
    tracefs_instance_free(m_instance);
    setInstanceDir("");
}

std::string TraceInstance::useMonoClock() {
    tracefs_instance_file_write(m_instance, "trace_clock", "mono");
    std::string clock = "local";
    if (char* c = tracefs_get_clock(m_instance)) {
        clock = c;
        std::free(c);
    }
    return clock;
}

std::size_t TraceInstance::sizeBuffers() {
    const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_CONF));
    const std::size_t perCpuKb =
        std::clamp<std::size_t>(std::size_t(1024 * 1024 / cpus), 1024, 16384);  // <= 1 GiB in all
    if (tracefs_instance_set_buffer_size(m_instance, perCpuKb, -1) != 0) {
        throw TraceError(fmt::format("cannot set the instance's buffer to {} KiB per CPU: {}", perCpuKb, errnoText()));
    }
    return perCpuKb;
}

void TraceInstance::enableSchedEvent(const char* event) {
    if (tracefs_event_enable(m_instance, "sched", event) != 0)
        throw TraceError(fmt::format("cannot enable sched:{} in the instance: {}", event, errnoText()));
}

void TraceInstance::disableSchedEvent(const char* event) {
    if (tracefs_event_disable(m_instance, "sched", event) != 0)
        throw TraceError(fmt::format("cannot disable sched:{} in the instance: {}", event, errnoText()));
}

bool TraceInstance::restrictToPids(const std::vector<pid_t>& pids, bool followForks) {
    std::string list;
    for (pid_t p : pids) {
        if (!list.empty()) list += ' ';
        list += std::to_string(p);
    }
    // set_event_pid is opened with O_TRUNC: the list replaces whatever an earlier call wrote.
    return tracefs_instance_file_write(m_instance, "options/event-fork", followForks ? "1" : "0") > 0 &&
           tracefs_instance_file_write(m_instance, "set_event_pid", list.c_str()) > 0;
}

// Opening set_event_pid with O_TRUNC is what clears the list (the write itself is empty).
void TraceInstance::clearPidFilter() { tracefs_instance_file_clear(m_instance, "set_event_pid"); }

void TraceInstance::start() {
    tracefs_instance_file_clear(m_instance, "trace");
    if (tracefs_trace_on(m_instance) != 0) throw TraceError("cannot turn tracing on in the instance: " + errnoText());
}

void TraceInstance::stop() { tracefs_trace_off(m_instance); }

// As tracefs_local_events_system() would build it but for the named events only and without its
// kallsyms and printk-format mappings (not needed for numeric fields; slow under ASan).
TepHandle TraceInstance::parser(const std::string& tracingDir, const std::vector<const char*>& events) const {
    TepHandle tep(tep_alloc());
    if (!tep) throw TraceError("tep_alloc failed");
    std::string header = readTracefsFile(tracingDir + "/events/header_page");
    tep_parse_header_page(tep.get(), header.data(), header.size(), sizeof(long));
    for (const char* ev : events) {
        const std::string format = readTracefsFile(fmt::format("{}/events/sched/{}/format", m_dir, ev));
        if (tep_parse_event(tep.get(), format.data(), format.size(), "sched") != 0) {
            throw TraceError(fmt::format("cannot parse the format of sched:{}", ev));
        }
    }
    tep_set_cpus(tep.get(), int(std::max(1L, sysconf(_SC_NPROCESSORS_CONF))));
    tep_set_long_size(tep.get(), tep_get_header_page_size(tep.get()));
    return tep;
}

void TraceInstance::iterate(tep_handle* tep, RecordCallback callback, void* context) {
    if (tracefs_iterate_raw_events(tep, m_instance, nullptr, 0, callback, context) != 0) {
        throw TraceError("cannot read the instance's ring buffer: " + errnoText());
    }
}

long long TraceInstance::overruns() const {
    long long total = 0;
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (long cpu = 0; cpu < cpus; ++cpu) {
        const std::string file = fmt::format("per_cpu/cpu{}/stats", cpu);
        int size = 0;
        char* text = tracefs_instance_file_read(m_instance, file.c_str(), &size);
        if (!text) continue;
        if (const char* o = std::strstr(text, "overrun:")) total += std::atoll(o + std::strlen("overrun:"));
        std::free(text);
    }
    return total;
}

}  // namespace sched::calibrate
