// SPDX-License-Identifier: GPL-2.0-or-later
// cyclictest.cpp: rt-tests' cyclictest in its clock_nanosleep(TIMER_ABSTIME) mode, as
// SCHED_OTHER threads at priority 0 (no -p): each thread sleeps to its next period, reads the
// clock and keeps min/act/avg/max of how late it woke. Its sleeps are hrtimers (engine.h:
// Action::sleep), so where their timers fire is where get_nohz_timer_target() put them.
// (The workloads' common contract: sim/workloads.h.)
#include "sim/workloads.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace sched {
namespace {

class Cyclictest final : public Workload {
public:
    Cyclictest(const CyclictestParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return "cyclictest"; }
    std::string commandLine() const override {
        std::string c = fmt::format("cyclictest -t {} -i {} -d {}", m_p.threads, m_p.interval_us, m_p.distance_us);
        if (m_p.loops > 0) c += fmt::format(" -l {}", m_p.loops);
        if (m_p.duration_s > 0) c += fmt::format(" -D {}", m_p.duration_s);
        c += " -q";
        if (m_p.mlock) c += " -m";
        if (m_p.loops <= 0 && m_p.duration_s <= 0) c += " (endless)";  // neither -l nor -D: cyclictest runs until stopped
        return c;
    }

    void start(Engine& e) override {
        m_main = e.spawn(m_index, "cyclictest", 4000000 * (m_index + 1), -1, kMain, 0, 0);
        m_thr.assign(std::size_t(m_p.threads), Thread{});
    }
    bool finished() const override { return m_done; }
    double work(const Engine&) const override {
        double c = 0;
        for (const auto& t : m_thr) c += double(t.cycles);
        return c;
    }
    std::string workUnit() const override { return "cycles/s"; }
    double progress(const Engine& e) const override {
        if (m_done) return 1;
        if (m_startAt < 0) return 0;
        if (m_p.duration_s > 0) return std::min(1.0, double(e.now() - m_startAt) / (m_p.duration_s * 1e9));
        std::int64_t c = 0;
        for (const auto& t : m_thr) c += t.cycles;
        return std::min(1.0, double(c) / double(std::max<std::int64_t>(1, m_p.loops * m_p.threads)));
    }

    Action step(Engine& e, SimTask& t) override { return t.role == kMain ? mainStep(e, t) : threadStep(e, t); }

    void onExit(Engine& e, SimTask& t) override {
        if (t.role != kThread) return;
        // pthread_join(): the exiting thread's CLONE_CHILD_CLEARTID futex wakes the main thread.
        if (++m_exited == m_p.threads && m_joining) e.wake(m_main, false);
    }

    void report(const Engine&, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        r.output.push_back("# /dev/cpu_dma_latency set to 0us");
        std::int64_t cycles = 0, min = std::numeric_limits<std::int64_t>::max(), max = 0;
        double sum = 0;
        for (std::size_t i = 0; i < m_thr.size(); ++i) {
            const Thread& th = m_thr[i];
            // print_stat(): "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld".
            const std::int64_t avg = th.cycles ? std::int64_t(th.sum / double(th.cycles)) : 0;
            r.output.push_back(fmt::format("T:{:2d} ({:5d}) P:{:2d} I:{} C:{:7d} Min:{:7d} Act:{:5d} Avg:{:5d} Max:{:8d}", int(i), th.tid, 0,
                                           th.interval_us, th.cycles, th.min, th.act, avg, th.max));
            cycles += th.cycles;
            sum += th.sum;
            if (th.cycles) min = std::min(min, th.min), max = std::max(max, th.max);
        }
        if (cycles == 0) min = 0;
        r.headline.push_back({"avg_us", "Avg latency (us)", cycles ? sum / double(cycles) : 0.0, true, 1});
        r.headline.push_back({"max_us", "Max latency (us)", double(max), true, 0});
        r.headline.push_back({"p99_us", "p99 latency (us)", double(m_lat.percentile(99)) / 1000.0, true, 1});
        r.counters.push_back({"cycles", "cycles", double(cycles), true, 0});
        r.counters.push_back({"min_us", "Min latency (us)", double(min), true, 0});
        r.histograms.push_back({"cyclictest latency", m_lat});
    }

private:
    enum Role : std::uint8_t { kMain = 0, kThread = 1 };
    enum Phase : std::int64_t { kStart = 0, kWoken = 1, kLoop = 2, kDone = 3 };
    struct Thread {
        std::int64_t next = 0;  ///< the period's expiry (CLOCK_MONOTONIC ns: the simulated clock)
        std::int64_t stop = 0;  ///< now + -D at its start (0: none)
        std::int64_t interval_us = 0;
        std::int64_t cycles = 0, min = 1000000, max = 0, act = 0;  // stat->min starts at 1000000 (printed so without cycles)
        double sum = 0;
        int tid = 0;
    };

    // calcdiff(): microseconds from t2 to t1 as cyclictest computes them from timespecs
    // (seconds apart, plus the nanoseconds apart divided by 1000, truncated).
    static std::int64_t calcdiff(std::int64_t t1, std::int64_t t2) {
        const std::int64_t s1 = t1 / 1000000000, s2 = t2 / 1000000000;
        return 1000000 * (s1 - s2) + ((t1 - s1 * 1000000000) - (t2 - s2 * 1000000000)) / 1000;
    }

    std::int64_t loopCost(const Engine& e) const { return e.cost().c(CostTerm::syscall, m_p.loop_ns); }

    Action mainStep(Engine& e, SimTask& t) {
        const CostModel& cm = e.cost();
        switch (t.b) {
        case 0:  // the command starts `delay_s` late (the shell's sleep before it)
            t.b = 1;
            if (m_p.delay_s > 0) return Action::sleep(std::int64_t(m_p.delay_s * 1e9), cm.timer_slack);
            [[fallthrough]];
        case 1:
            // set_latency_target(): /dev/cpu_dma_latency = 0 while cyclictest runs.
            e.setCpuLatencyQos(0);
            m_startAt = e.now();
            t.b = 2;
            [[fallthrough]];
        case 2:
            if (t.a < m_p.threads) {
                const int i = int(t.a++);
                // Pinned threads are created on their CPU (the recording's were moved there by the
                // stopper a few microseconds after they started: not modelled).
                const CpuMask* pin = nullptr;
                if (m_p.pin_threads) {
                    std::vector<int> usable;
                    for (int c = 0; c < e.nrCpus(); ++c)
                        if (!cpus() || cpus()->test(c)) usable.push_back(c);
                    pin = CpuMask::intern(CpuMask::single(usable[std::size_t(i) % usable.size()]));
                }
                const int id = e.spawn(m_index, "cyclictest", t.mm, e.current(), kThread, i, 0, pin);
                m_thr[std::size_t(i)].tid = e.task(id).t.pid;
                m_thr[std::size_t(i)].interval_us = m_p.interval_us + std::int64_t(i) * m_p.distance_us;
                return Action::run(1000);  // spawn() charged the thread's creation
            }
            t.b = 3;
            [[fallthrough]];
        case 3:
            // while (!shutdown && !allstopped) usleep(10000) (-q prints nothing meanwhile): a thread
            // past -D sets shutdown; allstopped once every thread ended its -l cycles.
            if (!m_shutdown && m_exited < m_p.threads) return Action::sleep(10000000, cm.timer_slack);
            t.b = 4;
            [[fallthrough]];
        case 4:
            if (m_exited < m_p.threads) {  // pthread_join()
                m_joining = true;
                return Action::block();
            }
            m_joining = false;
            t.b = 5;
            return Action::run(loopCost(e));  // print_stat()
        default:
            e.setCpuLatencyQos(std::numeric_limits<std::int64_t>::max());  // the fd closes: the request goes
            m_done = true;
            e.workloadFinished();
            return Action::exit();
        }
    }

    Action threadStep(Engine& e, SimTask& t) {
        Thread& th = m_thr[std::size_t(t.idx)];
        const CostModel& cm = e.cost();
        const std::int64_t interval = th.interval_us * 1000;
        switch (t.b) {
        case kStart:  // timerthread(): now; next = now + interval; stop = now + duration
            th.next = e.now() + interval;
            if (m_p.duration_s > 0) th.stop = e.now() + std::int64_t(m_p.duration_s * 1e9);
            t.b = kLoop;
            return Action::run(loopCost(e));
        case kWoken: {  // clock_nanosleep() returned: clock_gettime(), the statistics
            const std::int64_t now = e.now();
            const std::int64_t diff = calcdiff(now, th.next);
            th.min = std::min(th.min, diff);
            th.max = std::max(th.max, diff);
            th.act = diff;
            th.sum += double(diff);
            th.cycles++;
            m_lat.record(std::max<std::int64_t>(0, now - th.next));
            th.next += interval;
            while (now > th.next) th.next += interval;                      // periods it missed are skipped
            if (th.stop && calcdiff(now, th.stop) >= 0) m_shutdown = true;  // shutdown++: every thread stops
            t.b = m_p.loops > 0 && th.cycles >= m_p.loops ? kDone : kLoop;  // -l: this thread breaks out of its loop
            return Action::run(loopCost(e));
        }
        case kLoop:
            if (m_shutdown) {
                t.b = kDone;
                return Action::exit();
            }
            t.b = kWoken;
            // clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next): the timer is armed even when
            // `next` has passed (do_nanosleep() has no early return).
            return Action::sleepUntil(th.next, cm.timer_slack);
        default: return Action::exit();
        }
    }

public:
    void state(StateArchive& ar) override {
        ar(m_main);
        ar.each(m_thr, [](StateArchive& a, Thread& t) { a(t.next, t.stop, t.interval_us, t.cycles, t.min, t.max, t.act, t.sum, t.tid); });
        m_lat.state(ar);
        ar(m_startAt, m_exited, m_shutdown, m_joining, m_done);
    }

private:
    CyclictestParams m_p;
    std::uint16_t m_index;
    int m_main = -1;
    std::vector<Thread> m_thr;
    LatencyHistogram m_lat;  ///< every cycle's latency (ns)
    std::int64_t m_startAt = -1;
    int m_exited = 0;
    bool m_shutdown = false, m_joining = false, m_done = false;
};

}  // namespace

std::unique_ptr<Workload> makeCyclictest(const CyclictestParams& p, std::uint16_t index) { return std::make_unique<Cyclictest>(p, index); }

}  // namespace sched
