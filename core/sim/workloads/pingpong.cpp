// SPDX-License-Identifier: GPL-2.0-or-later
// pingpong.cpp: tbench / netperf RR pairs: request-response ping-pong between a client and a server task.
// (The workloads' common contract: sim/workloads.h.)
#include "sim/workloads.h"

#include <fmt/format.h>

#include <algorithm>

namespace sched {
namespace {

class PingPong final : public Workload {
public:
    PingPong(const PingPongParams& p, std::uint16_t index) : m_p(p), m_index(index) {}
    std::string name() const override { return m_p.context_switch1 ? "context-switch1" : m_p.netperf ? "netperf-rr" : "tbench"; }
    std::string commandLine() const override {
        const char* endless = m_p.runtime_s > 0 ? "" : " (endless)";  // a time of 0 is schedlab's: until the run stops
        if (m_p.context_switch1)
            return fmt::format("will-it-scale context_switch1_{} -t {} -s {}{}", m_p.threads ? "threads" : "processes", m_p.pairs, m_p.runtime_s,
                               endless);
        if (m_p.netperf)
            return fmt::format("netperf -t {} -l {} (x{} instances){}", m_p.udp ? "UDP_RR" : "TCP_RR", m_p.runtime_s, m_p.pairs, endless);
        return fmt::format("tbench -t {} {}{}", m_p.runtime_s, m_p.pairs, endless);
    }
    void start(Engine& e) override {
        m_main = e.spawn(m_index, mainComm(), 4000000 * (m_index + 1), -1, kMain, 0, 0);
        m_run.warm = std::int64_t(m_p.warmup_s * 1e9);
        m_run.end = m_run.warm + std::int64_t(m_p.runtime_s * 1e9);
        m_run.endless = m_p.runtime_s <= 0;
        m_client.assign(std::size_t(m_p.pairs), -1);
        m_server.assign(std::size_t(m_p.pairs), -1);
        m_donePer.assign(std::size_t(m_p.pairs), 0);
        // CPU per transaction: the scenario's, else context_switch1's two pipe syscalls per
        // side (a 1-byte write that wakes the other side, a read), else the 4 us estimate.
        const CostModel& cm = e.cost();
        const std::int64_t dflt = m_p.context_switch1 ? cm.pipe_write + cm.pipe_read : 4000;
        m_clientNs = m_p.client_ns >= 0 ? m_p.client_ns : dflt;
        m_serverNs = m_p.server_ns >= 0 ? m_p.server_ns : dflt;
        // The waker's tail (a wakeup over time): of each side's CPU per transaction, the part after
        // the wakeup of its peer, until it sleeps in its own receive. The loopback's softirq
        // receive runs in the sender's send() and wakes the peer there; the sender goes on.
        const std::int64_t tail = cm.c(CostTerm::syscall, m_p.context_switch1 ? cm.pipe_wake_tail : cm.socket_wake_tail);
        m_clientTail = std::min(tail, m_clientNs);
        m_serverTail = std::min(tail, m_serverNs);
    }
    bool finished() const override { return m_run.finished; }
    double progress(const Engine& e) const override { return m_run.progress(e); }
    // The tools' own figures: context_switch1's iterations (2 per round trip), netperf's
    // transactions, tbench's MB.
    double work(const Engine&) const override {
        if (m_p.context_switch1) return 2.0 * double(m_trips);
        if (m_p.netperf) return double(m_trips);
        return double(m_trips) * double(m_p.bytes) / 1e6;
    }
    std::string workUnit() const override { return m_p.context_switch1 ? "iterations/s" : m_p.netperf ? "transactions/s" : "MB/s"; }
    Action step(Engine& e, SimTask& t) override {
        m_run.check(e);
        const CostModel& cm = e.cost();
        if (t.role == kMain) {
            // Fork each pair: the server (tbench_srv's child), then the client, each its own
            // process. context_switch1: the instance (the client, which writes first) and its
            // child, a process or (_threads) a thread of it.
            if (t.a < m_p.pairs) {
                const int i = int(t.a);
                const int clientMm = t.mm + 2 + 2 * i;
                const int serverMm = m_p.context_switch1 && m_p.threads ? clientMm : t.mm + 1 + 2 * i;
                m_server[std::size_t(i)] = e.spawn(m_index, serverComm(), serverMm, e.current(), kServer, i, 16384);
                m_client[std::size_t(i)] = e.spawn(m_index, mainComm(), clientMm, e.current(), kClient, i, 16384);
                t.a++;
                return Action::run(1000);
            }
            m_run.start(e.now());
            return Action::block();
        }
        const std::size_t i = std::size_t(t.idx);
        if (t.role == kClient) {
            // b: 0 prepare a request (client CPU), 3 send it, 4 the send's tail, 1 wait for the reply.
            if (t.b == 4) {
                t.b = 1;
                if (!t.c) return Action::block();  // else the reply came during the tail: recv() finds it
            }
            std::int64_t trip = 0;
            if (t.b == 1) {
                if (!t.c) return Action::block();                    // no reply yet (spurious wakeup)
                trip = e.messageTrip(int(t.c - 1), e.currentCpu());  // the reply's lines, written on the server's CPU
                t.c = 0;
                m_trips++;
                if (measuring(e)) {
                    m_lat.record(e.now() - t.a);
                    m_done++;
                    m_donePer[i]++;
                }
                t.b = 0;
            }
            if (t.b == 0) {
                t.b = 3;
                return Action::run(cm.c(CostTerm::syscall, m_clientNs - m_clientTail) + trip);
            }
            // Send: the loopback receive runs in the sender's context and wakes the server (WF_SYNC).
            t.a = e.now();
            t.b = 1;
            SimTask& srv = e.task(m_server[i]);
            srv.c = 1 + e.currentCpu();  // a request is queued (written on this CPU)
            if (srv.b == 1) e.wake(m_server[i], true);
            if (m_clientTail > 0) {
                t.b = 4;
                return Action::run(m_clientTail);
            }
            return Action::block();
        }
        // Server: b 1 = waiting for a request, 2 = serving, 3 the reply's tail.
        if (t.b == 2) {
            // Reply: a sync wakeup of the client, then the rest of the send and the next receive.
            SimTask& cl = e.task(m_client[i]);
            cl.c = 1 + e.currentCpu();  // the reply, written on this CPU
            e.wake(m_client[i], true);
            if (m_serverTail > 0) {
                t.b = 3;
                return Action::run(m_serverTail);
            }
        }
        if (!t.c) {
            t.b = 1;
            return Action::block();
        }
        const std::int64_t trip = e.messageTrip(int(t.c - 1), e.currentCpu());  // the request's lines
        t.c = 0;
        t.b = 2;
        return Action::run(cm.c(CostTerm::syscall, m_serverNs - m_serverTail) + trip);
    }
    void report(const Engine& e, WorkloadReport& r) const override {
        r.name = name();
        r.command = commandLine();
        const double secs = std::max(1e-9, m_run.measuredSeconds(e));
        const double tps = double(m_done) / secs;
        const double mbs = tps * double(m_p.bytes) / 1e6;
        if (m_p.context_switch1 && !m_donePer.empty()) {
            // will-it-scale counts 2 iterations per round trip (a write and a read each side)
            // and prints the sum over the instances per second.
            const double ops = 2 * tps;
            const auto [lo, hi] = std::minmax_element(m_donePer.begin(), m_donePer.end());
            r.output.push_back(fmt::format("min:{:.0f} max:{:.0f} total:{:.0f} (iterations per second; {} instances)", 2 * double(*lo) / secs,
                                           2 * double(*hi) / secs, ops, m_p.pairs));
            r.headline.push_back({"ops_per_s", "Throughput (ops/s)", ops, false, 0});
        } else if (m_p.netperf) {
            r.output.push_back(fmt::format("Trans. Rate per sec: {:.2f} ({} instances, {:.2f} per instance)", tps, m_p.pairs, tps / m_p.pairs));
            r.headline.push_back({"trans_per_s", "Trans/s", tps, false, 0});
        } else {
            r.output.push_back(fmt::format("Throughput {:.4f} MB/sec  {} clients  {} procs  max_latency={:.3f} ms", mbs, m_p.pairs, m_p.pairs,
                                           double(m_lat.max()) / 1e6));
            r.headline.push_back({"mb_per_s", "Throughput (MB/s)", mbs, false, 2});
            r.headline.push_back({"max_latency_ms", "max latency (ms)", double(m_lat.max()) / 1e6, true, 3});
        }
        r.headline.push_back({"rtt_p50_us", "round trip p50 (us)", double(m_lat.percentile(50)) / 1000.0, true, 1});
        r.headline.push_back({"rtt_p99_us", "round trip p99 (us)", double(m_lat.percentile(99)) / 1000.0, true, 1});
        r.histograms.push_back({"round trip", m_lat});
    }
    std::string checkInvariants(const Engine& e) const override {
        // A client asleep without a reply must have its request with the server, and the
        // server must be running or queued to serve it (no lost wakeup).
        for (std::size_t i = 0; i < m_client.size(); ++i) {
            if (m_client[i] < 0) continue;
            const SimTask& c = e.task(m_client[i]);
            const SimTask& s = e.task(m_server[i]);
            if (c.state == TaskState::Blocked && c.b == 1 && !c.c && s.state == TaskState::Blocked && !s.c)
                return fmt::format("pingpong pair {}: client and server both asleep with nothing in flight", i);
            if (s.state == TaskState::Blocked && s.c) return fmt::format("pingpong pair {}: server asleep with a request queued", i);
        }
        return {};
    }

private:
    const char* mainComm() const { return m_p.context_switch1 ? "context_switch1" : m_p.netperf ? "netperf" : "tbench"; }
    const char* serverComm() const { return m_p.context_switch1 ? "context_switch1" : m_p.netperf ? "netserver" : "tbench_srv"; }
    enum Role : std::uint8_t { kMain = 0, kClient = 1, kServer = 2 };
    bool measuring(const Engine& e) const { return m_run.measuring(e); }

public:
    void state(StateArchive& ar) override {
        ar(m_main);
        ar.vec(m_client);
        ar.vec(m_server);
        m_run.state(ar);
        ar(m_done, m_trips);
        ar.vec(m_donePer);
        ar(m_clientNs, m_serverNs, m_clientTail, m_serverTail);
        m_lat.state(ar);
    }

private:
    PingPongParams m_p;
    std::uint16_t m_index;
    int m_main = -1;
    std::vector<int> m_client, m_server;
    TimedRun m_run;
    std::int64_t m_done = 0;
    std::int64_t m_trips = 0;             ///< round trips since the start, warm-up included (work())
    std::vector<std::int64_t> m_donePer;  ///< round trips per pair (will-it-scale's per-instance min and max)
    std::int64_t m_clientNs = 0, m_serverNs = 0;
    std::int64_t m_clientTail = 0, m_serverTail = 0;  ///< of those, the part after the peer's wakeup (scaled by the syscall term)
    LatencyHistogram m_lat;
};

}  // namespace

std::unique_ptr<Workload> makePingPong(const PingPongParams& p, std::uint16_t index) { return std::make_unique<PingPong>(p, index); }

}  // namespace sched
