// SPDX-License-Identifier: GPL-2.0-or-later
// core_alloc_test.cpp: the engine allocates nothing per event once a run has settled.
// Its own executable: it replaces the global operator new/delete to count allocations
// (malloc/free underneath, so the sanitizers see matching pairs).
#include "sim/engine.h"
#include "sim/scenario.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_allocs{0};
void* counted(std::size_t n) {
    if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

std::uint64_t allocsDuring(sched::Engine& e, std::int64_t ns, std::uint64_t* events) {
    const std::uint64_t e0 = e.events();
    g_allocs = 0;
    g_counting = true;
    e.advance(ns);
    g_counting = false;
    *events = e.events() - e0;
    return g_allocs.load();
}

TEST(Allocations, NoneAtSteadyStateForHackbenchOnAnSmtMachine) {
    // Pipes and sockets, threads: wakeups, IPIs, wakelists, preemption, balancing, ticks.
    for (bool pipe : {true, false}) {
        const sched::Scenario s = sched::parseScenario(
            nlohmann::json{
                {"topology", "x86-20c40t"},
                {"workloads",
                 nlohmann::json::array({{{"type", "hackbench"}, {"groups", 4}, {"fds", 10}, {"loops", 100000}, {"threads", true}, {"pipe", pipe}}})}},
            "alloc.json", ".");
        sched::RunOptions o;
        o.decision_ring = 0;
        auto e = sched::buildEngine(s, s.variants.front().knobs, s.cost, o);
        e->advance(60'000'000);  // forks, GO, the first balancing; containers reach their sizes
        std::uint64_t events = 0;
        const std::uint64_t allocs = allocsDuring(*e, 5'000'000, &events);
        EXPECT_GT(events, 20000u) << "pipe=" << pipe;
        // A container may still grow now and then (a longer queue than ever before): far
        // fewer than one allocation per thousand events, none per event.
        EXPECT_LT(allocs * 1000, events) << "pipe=" << pipe << ": " << allocs << " allocations in " << events << " events";
    }
}

}  // namespace
