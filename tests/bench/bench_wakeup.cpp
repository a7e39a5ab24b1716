// SPDX-License-Identifier: GPL-2.0-or-later
// bench_wakeup.cpp: wakeup decisions per second (select_task_rq, the whole
// fair path) on idle, half-busy and fully busy machines.
//   build/release/tests/bench/bench_wakeup
#include "kernel/wakeup_path.h"

#include <benchmark/benchmark.h>

#include <random>

using namespace sched;

namespace {

enum Load { Idle = 0, Half = 1, Busy = 2 };

struct Setup {
    std::unique_ptr<MachineState> st;
    Knobs k;
    std::vector<std::pair<int, int>> pairs;  // (waker cpu, prev cpu)
};

Setup make(const std::string& preset, Load load) {
    Setup s;
    s.st = std::make_unique<MachineState>(std::make_shared<const Topology>(Topology::preset(preset)));
    const int n = s.st->nrCpus();
    std::mt19937_64 rng(42);
    for (int c = 0; c < n; ++c) {
        Rq& rq = s.st->rq[c];
        bool busy = load == Busy || (load == Half && (rng() & 1));
        if (busy) {
            rq.curr = CurrKind::Normal;
            rq.nr_running = rq.h_nr_running = 1;
            rq.load_avg = 1024;
            rq.util_avg = 1024;
        }
    }
    // nr_idle_scan as update_idle_cpu_scan would set it for this load (busy: 0, half: ~10 of 16).
    const std::int64_t util = load == Busy ? 1024 : load == Half ? 512 : 0;
    for (int c = 0; c < n; ++c)
        if (s.st->sd->sd_llc_shared(c) == c)
            s.st->shared[c].nr_idle_scan = update_idle_cpu_scan(s.st->sd->sd_llc_size(c), util * s.st->sd->sd_llc_size(c), 117);
    for (int i = 0; i < 4096; ++i) {
        int w = int(rng() % unsigned(n));
        int p = int(rng() % unsigned(n));
        if (load == Busy) s.st->rq[w].curr = CurrKind::Normal;
        s.pairs.emplace_back(w, p);
    }
    return s;
}

void BM_select_task_rq(benchmark::State& state, const std::string& preset, Load load) {
    Setup s = make(preset, load);
    Task p;
    p.pid = 1;
    p.setAffinity(s.st->topo->allCpus());
    p.avg.load_avg = 512;
    Waker w;
    w.current.pid = 2;
    w.current.setAffinity(s.st->topo->allCpus());
    size_t i = 0;
    std::int64_t examined = 0;
    for (auto _ : state) {
        auto [wc, pc] = s.pairs[i++ & 4095];
        w.cpu = wc;
        p.cpu = p.wake_cpu = pc;
        p.recent_used_cpu = pc;
        w.current.last_wakee = -1;  // every wakeup is a "flip"; decays keep it bounded
        Decision d;
        WakeCtx c{*s.st, s.k, w, d, false};
        int cpu = select_task_rq(c, p, pc, WF_TTWU);
        examined += std::int64_t(d.examined.size());
        benchmark::DoNotOptimize(cpu);
        if (w.current.wakee_flips > 4) w.current.wakee_flips = 0;  // keep wake_wide out of the picture
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["cpus"] = s.st->nrCpus();
    state.counters["examined/decision"] = double(examined) / double(state.iterations());
}

void BM_try_to_wake_up_trace(benchmark::State& state) {
    // The explain path: full try_to_wake_up with the text trace on (for the GUI inspector).
    Setup s = make("epyc-9654-2s", Half);
    Task p;
    p.setAffinity(s.st->topo->allCpus());
    Waker w;
    w.current.setAffinity(s.st->topo->allCpus());
    size_t i = 0;
    for (auto _ : state) {
        auto [wc, pc] = s.pairs[i++ & 4095];
        w.cpu = wc;
        p.cpu = p.wake_cpu = pc;
        p.on_rq = false;
        Decision d = try_to_wake_up(*s.st, s.k, p, w, 0, true);
        // undo the enqueue so the machine stays half busy
        Rq& rq = s.st->rq[d.cpu];
        if (d.wakelist) rq.ttwu_pending = false;
        else {
            rq.nr_running--;
            rq.h_nr_running--;
        }
        benchmark::DoNotOptimize(d.cpu);
    }
    state.SetItemsProcessed(state.iterations());
}

}  // namespace

#define MACHINE(name, preset)                                                          \
    BENCHMARK_CAPTURE(BM_select_task_rq, name##_idle, std::string(preset), Idle);      \
    BENCHMARK_CAPTURE(BM_select_task_rq, name##_half_busy, std::string(preset), Half); \
    BENCHMARK_CAPTURE(BM_select_task_rq, name##_busy, std::string(preset), Busy);
MACHINE(i7_4790, "i7-4790")
MACHINE(epyc_9654_2s, "epyc-9654-2s")
MACHINE(bergamo_9754_2s, "bergamo-9754-2s")
BENCHMARK(BM_try_to_wake_up_trace);

BENCHMARK_MAIN();
