// SPDX-License-Identifier: GPL-2.0-or-later
// report.cpp: the table, the JSON document and its all-or-nothing write.
#include "report.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace sched::calibrate {

namespace {

std::string temporaryFor(const std::string& path) { return fmt::format("{}.tmp.{}", path, getpid()); }

std::string cpuList(const std::vector<int>& cpus) {
    std::string s;
    for (int c : cpus) {
        if (!s.empty()) s += ',';
        s += std::to_string(c);
    }
    return s;
}

}  // namespace

std::string loadavg() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    if (!(in >> a >> b >> c)) return "";
    return a + " " + b + " " + c;
}

std::string isoDateUtc() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string formatTable(const MachineInfo& m, const RunInfo& run, const std::vector<Figure>& figures) {
    std::string out = fmt::format("schedlab-calibrate {}: {} ({}, family {} model {} stepping {}, {}), kernel {}, {}\n",
                                  run.toolVersion, m.modelName.empty() ? "unknown CPU" : m.modelName, m.vendor,
                                  m.family, m.model, m.stepping, m.microarchitecture, m.kernel,
                                  m.virtualized ? "virtual machine (" + m.hypervisor + ")" : "bare metal");
    out += fmt::format(
        "CPUs {}, {} mode, {} runs per figure, clocksource {}, cpuidle {}, load average before {}; times in ns per "
        "operation\n\n",
        cpuList(run.cpusUsed), run.shortMode ? "short" : "full", run.runs, m.clocksource.empty() ? "?" : m.clocksource,
        m.cpuidleDriver.empty() ? "?" : m.cpuidleDriver, run.loadavgAtStart.empty() ? "?" : run.loadavgAtStart);
    out += fmt::format("{:<32} {:>9}  {:>21}  {:>9} {:>9} {:>7} {:>9}  {}\n", "figure", "median", "p25-p75 (*p10-p90)",
                       "min", "max", "runs", "iters", "what");
    if (run.intervalSeconds > 0) {
        out.insert(out.rfind("\n\n") + 1,
                   fmt::format("during the microbenchmarks ({:.1f} s): other tasks took ~{:.0f}% of these CPUs, the "
                               "hypervisor stole {:.0f}%{}\n",
                               run.intervalSeconds, 100 * run.otherShare, 100 * run.stealShare,
                               run.otherShare > 0.1 || run.stealShare > 0.1
                                   ? " -- WARNING: the machine was not quiet, the figures are distorted"
                                   : ""));
    }
    bool anyDistribution = false;
    for (const Figure& f : figures) {
        if (!f.available) {
            out += fmt::format("{:<32} unavailable: {}\n", f.name, f.reason);
            continue;
        }
        const Summary s = summarize(f.samples);
        anyDistribution |= f.distribution;
        const std::string spread =
            f.distribution ? fmt::format("*{:.1f}-{:.1f}", s.p10, s.p90) : fmt::format("{:.1f}-{:.1f}", s.p25, s.p75);
        out += fmt::format("{:<32} {:>9.1f}  {:>21}  {:>9.1f} {:>9.1f} {:>7} {:>9}  {}\n", f.name, s.median, spread,
                           s.min, s.max, s.count, f.iterations, f.label);
    }
    if (anyDistribution) {
        out += "\n* a distribution over single events: runs = events (pairs), iters = recordings, spread p10-p90\n";
    }
    out += fmt::format("\n{:.1f} s in all; each figure's method (exactly what was timed) is in the JSON (-o FILE)\n",
                       run.seconds);
    return out;
}

nlohmann::ordered_json toJson(const MachineInfo& m, const RunInfo& run, const std::vector<Figure>& figures) {
    using nlohmann::ordered_json;
    ordered_json j;
    j["format"] = "schedlab-calibrate/1";
    j["tool_version"] = run.toolVersion;
    j["date"] = run.dateUtc;
    j["cpu"] = {{"vendor", m.vendor},     {"family", m.family},        {"model", m.model},
                {"stepping", m.stepping}, {"model_name", m.modelName}, {"microarchitecture", m.microarchitecture}};
    j["kernel"] = m.kernel;
    j["virtualized"] = m.virtualized;
    j["hypervisor"] = m.virtualized ? ordered_json(m.hypervisor) : ordered_json(nullptr);
    j["clocksource"] = m.clocksource;
    j["cpuidle_driver"] = m.cpuidleDriver;
    j["online_cpus"] = m.onlineCpus;
    j["cpus_used"] = run.cpusUsed;
    j["mode"] = run.shortMode ? "short" : "full";
    j["runs_per_figure"] = run.runs;
    j["loadavg_at_start"] = run.loadavgAtStart;
    if (run.intervalSeconds > 0) {
        j["interference"] = {{"interval_s", run.intervalSeconds},
                             {"other_tasks_cpu_share", run.otherShare},
                             {"steal_share", run.stealShare},
                             {"how",
                              "/proc/stat busy ticks of cpus_used minus this process's CPU time, over the "
                              "microbenchmarks; approximate (tick-based; softirq work done for the loopback TCP "
                              "figures counts as other)"}};
    }
    j["timer"] = {{"clock", "CLOCK_MONOTONIC (clock_gettime, vDSO)"}, {"read_cost_ns", run.clockReadCostNs}};
    ordered_json figs = ordered_json::object();
    for (const Figure& f : figures) {
        ordered_json o;
        o["available"] = f.available;
        if (!f.available) {
            o["reason"] = f.reason;
            figs[f.name] = o;
            continue;
        }
        const Summary s = summarize(f.samples);
        o["unit"] = "ns";
        o["median_ns"] = s.median;
        o["p25_ns"] = s.p25;
        o["p75_ns"] = s.p75;
        o["min_ns"] = s.min;
        o["max_ns"] = s.max;
        if (f.distribution) {
            o["p10_ns"] = s.p10;
            o["p90_ns"] = s.p90;
            o["p99_ns"] = s.p99;
            o["count"] = s.count;
            o["spread"] = "p10-p90";
        } else {
            o["spread"] = "p25-p75";
        }
        o["runs"] = s.count;
        o["iterations"] = f.iterations;
        o["method"] = f.method;
        for (const auto& [k, v] : f.extra.items()) o[k] = v;
        figs[f.name] = o;
    }
    j["figures"] = figs;
    j["seconds"] = run.seconds;
    return j;
}

std::string checkWritable(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return fmt::format("{} is a directory", path);
    const std::string tmp = temporaryFor(path);
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return fmt::format("cannot write {}: {}", path, std::strerror(errno));
    close(fd);
    unlink(tmp.c_str());
    return "";
}

void writeFileAtomically(const std::string& path, const std::string& text) {
    const std::string tmp = temporaryFor(path);
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t w = write(fd, text.data() + done, text.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            const std::string why = std::strerror(errno);
            close(fd);
            unlink(tmp.c_str());
            throw std::runtime_error(fmt::format("cannot write {}: {} (disk full?)", tmp, why));
        }
        done += std::size_t(w);
    }
    const bool synced = fsync(fd) == 0;
    const int syncErrno = errno;
    if (close(fd) != 0 || !synced) {
        const std::string why = std::strerror(synced ? errno : syncErrno);
        unlink(tmp.c_str());
        throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, why));
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        unlink(tmp.c_str());
        throw std::runtime_error(fmt::format("cannot rename {} to {}: {}", tmp, path, why));
    }
}

}  // namespace sched::calibrate
