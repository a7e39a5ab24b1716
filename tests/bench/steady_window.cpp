// SPDX-License-Identifier: GPL-2.0-or-later
// steady_window.cpp: one window of the seed hackbench after its start-up, for instruction counts (a speed fixture: at 0.5 s the baseline is on its one-socket plateau, not yet spread over both sockets; its events per switch are that state's).
//
// This VM's wall-clock speed varies by up to 2x from one hour to the next (the steady bench gave
// 307 k and 470 k switches/s for the same binary), so engine changes are compared by the
// instructions they execute, which callgrind counts the same way every time:
//
//   valgrind --tool=callgrind --instr-atstart=no build/release/tests/bench/steady_window [--coalesce]
//
// runs the warm-up (0.5 s simulated) uninstrumented, then instruments the next window only
// (20 ms simulated by default). Without valgrind it times the window. It prints the window's
// switches, events and the run's digest (a speed-up that changes nothing keeps the digest).
#include "bench_hackbench.h"
#include "sim/scenario.h"

#include <valgrind/callgrind.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace sched;

int main(int argc, char** argv) {
    bool coalesce = false;
    double warm_ms = 500, window_ms = 20;
    int loops = 20000;
    std::vector<std::string> costs;  // --cost NAME=VALUE (e.g. off=pipe_lock: the model before pipe->mutex)
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--coalesce") coalesce = true;
        else if (a == "--warm-ms" && i + 1 < argc) warm_ms = std::atof(argv[++i]);
        else if (a == "--window-ms" && i + 1 < argc) window_ms = std::atof(argv[++i]);
        else if (a == "--loops" && i + 1 < argc) loops = std::atoi(argv[++i]);
        else if (a == "--cost" && i + 1 < argc) costs.emplace_back(argv[++i]);
        else {
            std::fprintf(stderr, "usage: steady_window [--coalesce] [--warm-ms MS] [--window-ms MS] [--loops N] [--cost NAME=VALUE]...\n");
            return 2;
        }
    }
    Scenario s = bench::hackbench("epyc-9654-2s", 32, loops);
    for (const auto& c : costs) s.cost.set(c);
    RunOptions o;
    o.decision_ring = 0;
    o.coalesce = coalesce;
    auto e = buildEngine(s, s.variants.front().knobs, s.cost, o);
    e->advance(std::int64_t(warm_ms * 1e6));
    const std::uint64_t s0 = e->metrics().ctx_switches, e0 = e->events(), p0 = e->plannedSteps(), m0 = e->plansMade(), c0 = e->plansCut();
    auto messages = [&] { return e->workloads().front()->progress(*e) * e->workloads().front()->messages(); };
    const double msg0 = messages();
    const auto t0 = std::chrono::steady_clock::now();
    CALLGRIND_START_INSTRUMENTATION;
    e->advance(std::int64_t(window_ms * 1e6));
    CALLGRIND_STOP_INSTRUMENTATION;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::uint64_t sw = e->metrics().ctx_switches - s0, ev = e->events() - e0;
    std::printf("window %.1f-%.1f ms: %llu switches, %llu events (%.2f per switch), %.3f s wall, %.0f k switches/s, digest %016llx\n", warm_ms,
                warm_ms + window_ms, (unsigned long long)sw, (unsigned long long)ev, double(ev) / double(sw ? sw : 1), wall, double(sw) / wall / 1e3,
                (unsigned long long)e->digest());
    // The simulated work itself: a switch carries as many messages as the model decides.
    std::printf("messages in the window: %.0f (%.2f per switch, %.1f events per message)\n", messages() - msg0,
                (messages() - msg0) / double(sw ? sw : 1), double(ev) / std::max(1.0, messages() - msg0));
    if (coalesce)
        std::printf("coalescing: %llu plans, %llu of them cut, %llu planned steps happened (%.1f%% of the events)\n",
                    (unsigned long long)(e->plansMade() - m0), (unsigned long long)(e->plansCut() - c0), (unsigned long long)(e->plannedSteps() - p0),
                    100.0 * double(e->plannedSteps() - p0) / double(ev ? ev : 1));
    return 0;
}
