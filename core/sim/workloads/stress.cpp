// SPDX-License-Identifier: GPL-2.0-or-later
// stress.cpp: stress-ng --cpu N --cpu-load P: background load (busy/sleep duty cycles).
// (The workloads' common contract: sim/workloads.h.)
#include "sim/workloads.h"

#include <fmt/format.h>

#include <algorithm>

namespace sched {
namespace {

class Stress final : public Workload {
public:
    Stress(const StressParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return "stress-ng"; }
    std::string commandLine() const override {
        return fmt::format("stress-ng --cpu {} --cpu-load {}{}", m_p.workers, m_p.load,
                           m_p.slice_ms ? fmt::format(" --cpu-load-slice {}", m_p.slice_ms) : std::string());
    }
    bool background() const override { return true; }
    bool finished() const override { return true; }
    void start(Engine& e) override {
        m_n = m_p.workers > 0 ? m_p.workers : e.nrCpus();
        m_main = e.spawn(m_index, "stress-ng", 3000000 * (m_index + 1), -1, 0, 0, 0);
    }
    Action step(Engine& e, SimTask& t) override {
        if (t.role == 0) {
            if (t.a < m_n) {
                e.spawn(m_index, "stress-ng-cpu", 3000000 * (m_index + 1) + 1 + int(t.a), e.current(), 1, int(t.a), 0);
                t.a++;
                return Action::run(1000);
            }
            return Action::block();
        }
        // Hog: busy R, then sleep R * (100 - P) / P.
        if (t.b == 0) {
            const std::int64_t r = m_p.slice_ms > 0 ? m_p.slice_ms * 1000000 : e.rng().uniform(1000000, 500000000);
            t.c = r;
            t.b = 1;
            m_busyNs += r;
            return Action::run(r);
        }
        t.b = 0;
        if (m_p.load >= 100) return Action::run(0);
        return Action::sleep(t.c * (100 - m_p.load) / std::max(1, m_p.load), e.cost().timer_slack);  // nanosleep(): the task's timer_slack_ns
    }
    void report(const Engine&, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        r.output.push_back(fmt::format("stress-ng: info: dispatching hogs: {} cpu ({}% load)", m_n, m_p.load));
    }

private:
    void state(StateArchive& ar) override { ar(m_n, m_main, m_busyNs); }

    StressParams m_p;
    std::uint16_t m_index;
    int m_n = 0;
    int m_main = -1;
    std::int64_t m_busyNs = 0;
};

// ---------------------------------------------------------------------------
// tbench / netperf RR: buddy pairs

}  // namespace

std::unique_ptr<Workload> makeStress(const StressParams& p, std::uint16_t index) { return std::make_unique<Stress>(p, index); }

}  // namespace sched
