// SPDX-License-Identifier: GPL-2.0-or-later
// cost_model.cpp: the default cost table per machine and its sources
// (docs/workloads.md: Cost-model figures and their sources). Figures marked (estimate) there are estimates here too.
#include "sim/cost_model.h"

#include "sim/calibration.h"
#include "topology/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace sched {

const char* toString(CostTerm t) {
    switch (t) {
    case CostTerm::ctx_switch: return "ctx_switch";
    case CostTerm::syscall: return "syscall";
    case CostTerm::wakeup: return "wakeup";
    case CostTerm::ipi: return "ipi";
    case CostTerm::idle_exit: return "idle_exit";
    case CostTerm::cache_refill: return "cache_refill";
    case CostTerm::smt: return "smt";
    case CostTerm::tg_load_avg: return "tg_load_avg";
    case CostTerm::rq_lock: return "rq_lock";
    case CostTerm::sis_scan: return "sis_scan";
    case CostTerm::load_balance: return "load_balance";
    case CostTerm::pipe_lock: return "pipe_lock";
    case CostTerm::msg_trip: return "msg_trip";
    case CostTerm::count_: break;
    }
    return "?";
}

namespace {

struct Field {
    const char* name;
    std::int64_t CostModel::*member;
    const char* doc;
};

// Every scalar parameter, in a stable order (names(), get(), set(), reports).
constexpr Field kFields[] = {
    {"ctx_switch_thread", &CostModel::ctx_switch_thread, "voluntary switch, same mm: ~1.1 us pinned pipe ping-pong (6.6, Intel 11th gen)"},
    {"ctx_switch_process", &CostModel::ctx_switch_process, "switch with mm change: ~2.4 us (same source)"},
    {"pipe_write", &CostModel::pipe_write, "100-byte pipe write without wakeup (estimate)"},
    {"pipe_read", &CostModel::pipe_read, "100-byte pipe read (estimate)"},
    {"pipe_write_locked", &CostModel::pipe_write_locked,
     "of pipe_write, the part under pipe->mutex: the checks, the merge or page allocation, the copy (estimate)"},
    {"pipe_read_locked", &CostModel::pipe_read_locked, "of pipe_read, the part under pipe->mutex: the copy and the buffer release (estimate)"},
    {"socket_send", &CostModel::socket_send, "AF_UNIX stream send, skb alloc (estimate)"},
    {"socket_recv", &CostModel::socket_recv, "AF_UNIX stream recv (estimate)"},
    {"futex_wake", &CostModel::futex_wake, "futex syscall around a wakeup (estimate)"},
    {"socket_wake_tail", &CostModel::socket_wake_tail,
     "a loopback sender after the softirq receive woke its peer: the rest of send(), the return, recv() until it sleeps (estimate)"},
    {"pipe_wake_tail", &CostModel::pipe_wake_tail,
     "a pipe writer after it woke the reader: the rest of pipe_write(), read() until it sleeps (estimate)"},
    {"wakeup_local", &CostModel::wakeup_local, "ttwu on this CPU: select_task_rq + enqueue + check_preempt"},
    {"wakeup_remote_direct", &CostModel::wakeup_remote_direct, "remote rq lock + enqueue, plus lock wait"},
    {"wakeup_remote_queued", &CostModel::wakeup_remote_queued, "wakelist + IPI send, sender side"},
    {"sis_scan_per_cpu", &CostModel::sis_scan_per_cpu, "per CPU examined by the wakeup path (estimate)"},
    {"ttwu_select", &CostModel::ttwu_select,
     "of each wakeup_* figure, sched_waking to ttwu_queue(): select_task_rq()'s fixed part and set_task_cpu() (the wakeup's window)"},
    {"ipi_same_socket", &CostModel::ipi_same_socket, "IPI until the handler runs, same socket (estimate)"},
    {"ipi_cross_socket", &CostModel::ipi_cross_socket, "IPI until the handler runs, other socket (estimate)"},
    {"refill_smt_line", &CostModel::refill_smt_line, "per 64-B line after a move to the SMT sibling (shared L1/L2)"},
    {"refill_llc_line", &CostModel::refill_llc_line, "per line, same LLC: L2 miss, L3 hit (12 ns)"},
    {"refill_cross_llc_line", &CostModel::refill_cross_llc_line, "per line, other LLC same socket: 90 ns Zen 4 cross-CCX, 60 ns SPR mesh"},
    {"refill_cross_socket_line", &CostModel::refill_cross_socket_line, "per line, other socket (140 ns)"},
    {"hot_set_bytes", &CostModel::hot_set_bytes, "default per-task hot set: hackbench 16-64 KB (estimate)"},
    {"msg_lines", &CostModel::msg_lines,
     "lines a message read on another core pulls from the writer's: a 100-byte payload's two, the socket's or pipe's head, its wait queue "
     "(estimate), each at the refill_*_line figure of the distance"},
    {"smt_busy_speed", &CostModel::smt_busy_speed, "speed per 1024 while an SMT sibling is busy: 0.6 x86, 0.5 SMT4, 0.35 SMT8 (estimate)"},
    {"tg_update_base", &CostModel::tg_update_base,
     "one access to the tg->load_avg line (update_tg_load_avg() writes it, update_cfs_group() reads it on every enqueue, dequeue and tick), "
     "uncontended (estimate)"},
    {"tg_update_per_cpu", &CostModel::tg_update_per_cpu, "per update of tg->load_avg within the window before the access, read or write (estimate)"},
    {"tg_update_window", &CostModel::tg_update_window, "contention window (1 us)"},
    {"tg_update_cap", &CostModel::tg_update_cap, "cap per access (5 us)"},
    {"tg_ratelimit_ns", &CostModel::tg_ratelimit_ns, "Aaron Lu's ratelimit of tg->load_avg updates per cfs_rq (commit afc1996859a2: 1 ms); 0 = 6.1"},
    {"rq_lock_hold", &CostModel::rq_lock_hold, "rq lock hold time of a remote enqueue"},
    {"fork_thread", &CostModel::fork_thread, "pthread_create on the parent (estimate)"},
    {"fork_process", &CostModel::fork_process, "fork() on the parent (estimate)"},
    {"exit_cost", &CostModel::exit_cost, "task exit (estimate)"},
    {"timer_slack", &CostModel::timer_slack, "current->timer_slack_ns: a sleep timer expires up to this late (usleep(100) returns after ~150 us)"},
    {"lb_newidle_base", &CostModel::lb_newidle_base,
     "one newidle load_balance() of a domain: the line through sd->max_newidle_lb_cost 2236/3444/4590 ns of SMT/MC/NUMA (spans 2/24/48) on 2x "
     "E5-2680 v3, 6.8.1 (Vitalii Bursov, LKML 2024-03-28)"},
    {"lb_newidle_per_cpu", &CostModel::lb_newidle_per_cpu, "per CPU of the domain's span (same line: 51 ns per CPU)"},
};

const Field* findField(const std::string& name) {
    for (const auto& f : kFields)
        if (name == f.name) return &f;
    return nullptr;
}

int termIndex(const std::string& name) {
    for (int i = 0; i < kCostTerms; ++i)
        if (name == toString(CostTerm(i))) return i;
    return -1;
}

std::string joinedTerms() {
    std::string s;
    for (int i = 0; i < kCostTerms; ++i) s += (i ? ", " : "") + std::string(toString(CostTerm(i)));
    return s;
}

bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

CostModel CostModel::forTopology(const Topology& t) {
    CostModel m;
    const std::string& n = t.name();
    if (startsWith(n, "epyc") || startsWith(n, "bergamo") || startsWith(n, "genoa") || startsWith(n, "milan")) {
        // AMD Zen 3/4: LLC = CCX; cross-CCX refill is DRAM-like (90 ns per line);
        // acpi_idle: C1 (FFH MWAIT) 1 us / 2 us, C2 (CC6) from firmware: 100 us default, residency 800 us.
        // C1 is entered with MWAIT (acpi_processor_ffh_cstate_enter -> mwait_idle_with_hints: a
        // polling state, woken without an IPI); C2 is a SystemIO port read: it needs the IPI.
        m.machine = "amd-zen";
        m.refill_cross_llc_line = 90;
        m.cstates = {{"POLL", 0, 0, true}, {"C1", 1000, 2000, true}, {"C2", 100000, 800000, false}};
    } else if (startsWith(n, "spr")) {
        // Intel SPR intel_idle spr_cstates: C1 1/1 us, C1E 2/4 us, C6 190/600 us (PC6 off);
        // mesh: cross-LLC refill 60 ns (only cross-socket on SPR: one LLC per socket).
        m.machine = "intel-spr";
        m.refill_cross_llc_line = 60;
        // intel_idle enters every state with MWAIT: all of them poll (no IPI to wake them).
        m.cstates = {{"POLL", 0, 0, true}, {"C1", 1000, 1000, true}, {"C1E", 2000, 4000, true}, {"C6", 190000, 600000, true}};
    } else if (startsWith(n, "power10")) {
        // POWER10 SMT8: per-thread speed ~0.35 when siblings run (estimate); stop states (estimate).
        m.machine = "power10";
        m.smt_busy_speed = 358;
        // snooze_loop() sets TIF_POLLING_NRFLAG; the stop states need a doorbell IPI.
        m.cstates = {{"snooze", 0, 0, true}, {"stop0_lite", 1000, 10000, false}, {"stop2", 20000, 200000, false}};
    } else if (startsWith(n, "pixel2")) {
        // Snapdragon 835: WFI and cluster power-down (estimate).
        m.machine = "arm64-phone";
        // arm64 has no TIF_POLLING_NRFLAG: every wakeup of an idle CPU is an IPI.
        m.cstates = {{"WFI", 1000, 1000, false}, {"cpu-pd", 100000, 500000, false}};
    } else {
        // Typical Xeon (Skylake/Cascade Lake intel_idle): C1 2/2, C1E 10/20, C6 133/400 us.
        m.machine = "x86-generic";
        // intel_idle: MWAIT states, all polling. A qemu guest (the qemu-* presets) has no MWAIT
        // (qemu's CPU models hide it; the 6.1 recordings in tests/data/traces idle in HLT): its
        // idle CPUs need an IPI.
        if (startsWith(n, "qemu")) {
            // A qemu guest has no cpuidle driver ("cpuidle driver: none" in the 6.1 recordings,
            // whose cpu_idle events are all state=1): do_idle() -> default_idle_call() -> HLT, one
            // state, not polling, whatever the PM QoS limit. Its exit is taken as bare metal's C1
            // (2 us); the host's own cost of waking a vCPU is not modelled.
            m.cpuidle_driver = false;
            m.cstates = {{"HLT", 2000, 0, false}};
        } else {
            m.cstates = {{"POLL", 0, 0, true}, {"C1", 2000, 2000, true}, {"C1E", 10000, 20000, true}, {"C6", 133000, 400000, true}};
        }
    }
    // Every x86 family takes the per-core figures (the syscalls, the local wakeup and its window,
    // the waker's tails) from the committed schedlab-calibrate run of the one x86 core measured;
    // the families differ in what a VM cannot measure: C-states, IPIs, cache distances
    // (docs/workloads.md: Calibration).
    if (m.machine != "power10" && m.machine != "arm64-phone" && !applyCalibration(m, x86Calibration()).empty())
        m.machine += ", per-core figures measured (" + x86Calibration().file + ")";
    return m;
}

std::vector<std::string> CostModel::names() {
    std::vector<std::string> v;
    for (const auto& f : kFields) v.push_back(f.name);
    return v;
}

std::vector<std::string> CostModel::termNames() {
    std::vector<std::string> v;
    for (int i = 0; i < kCostTerms; ++i) v.push_back(toString(CostTerm(i)));
    return v;
}

std::string CostModel::get(const std::string& name) const {
    if (const Field* f = findField(name)) return std::to_string(this->*(f->member));
    if (startsWith(name, "scale.")) {
        int i = termIndex(name.substr(6));
        if (i >= 0) return fmt::format("{}", scale[i]);
    }
    throw CostError(fmt::format("unknown cost parameter '{}'", name));
}

void CostModel::set(const std::string& assignment) {
    auto eq = assignment.find('=');
    if (eq == std::string::npos) throw CostError(fmt::format("'{}': expected NAME=VALUE", assignment));
    set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

void CostModel::set(const std::string& name, const std::string& value) {
    if (name == "off") {
        std::size_t pos = 0;
        while (pos <= value.size()) {
            auto comma = value.find(',', pos);
            std::string term = value.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            int i = termIndex(term);
            if (i < 0) throw CostError(fmt::format("off: unknown cost term '{}' (terms: {})", term, joinedTerms()));
            scale[i] = 0.0;
            if (comma == std::string::npos) break;
            pos = comma + 1;
        }
        return;
    }
    if (startsWith(name, "scale.")) {
        int i = termIndex(name.substr(6));
        if (i < 0) throw CostError(fmt::format("{}: unknown cost term '{}' (terms: {})", name, name.substr(6), joinedTerms()));
        char* end = nullptr;
        double v = std::strtod(value.c_str(), &end);
        if (value.empty() || *end || !std::isfinite(v) || v < 0 || v > 1000)
            throw CostError(fmt::format("{}: '{}' is not a scale factor (a number from 0 to 1000)", name, value));
        scale[i] = v;
        return;
    }
    const Field* f = findField(name);
    if (!f) throw CostError(fmt::format("unknown cost parameter '{}'", name));
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size() || v < 0)
        throw CostError(fmt::format("{}: '{}' is not a non-negative integer (ns)", name, value));
    if (name == "smt_busy_speed" && (v < 1 || v > 1024)) throw CostError(fmt::format("{}: {} is outside 1..1024", name, v));
    this->*(f->member) = v;
}

std::vector<std::string> CostModel::diffFrom(const CostModel& base) const {
    std::vector<std::string> out;
    for (const auto& f : kFields)
        if (this->*(f.member) != base.*(f.member)) out.push_back(fmt::format("{}={}", f.name, this->*(f.member)));
    for (int i = 0; i < kCostTerms; ++i)
        if (scale[i] != base.scale[i]) out.push_back(fmt::format("scale.{}={}", toString(CostTerm(i)), scale[i]));
    bool sameC = cstates.size() == base.cstates.size();
    for (std::size_t i = 0; sameC && i < cstates.size(); ++i)
        sameC = cstates[i].exit_ns == base.cstates[i].exit_ns && cstates[i].residency_ns == base.cstates[i].residency_ns &&
                cstates[i].polling == base.cstates[i].polling;
    if (!sameC) {
        std::string c = "cstates=";
        for (std::size_t i = 0; i < cstates.size(); ++i)
            c += fmt::format("{}{}:{}/{}{}", i ? "," : "", cstates[i].name, cstates[i].exit_ns, cstates[i].residency_ns,
                             cstates[i].polling ? "/polling" : "");
        out.push_back(c);
    }
    return out;
}

}  // namespace sched
