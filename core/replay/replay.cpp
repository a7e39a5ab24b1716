// SPDX-License-Identifier: GPL-2.0-or-later
// replay.cpp: rebuilds the state behind each wakeup of a trace and asks schedlab's wakeup path.
// The rules it follows are in docs/replay.md, cited by section heading.
#include "replay/replay.h"
#include "replay/replay_state.h"
#include "replay/rq_walk.h"

#include "kernel/pelt.h"
#include "kernel/sched_balance.h"
#include "kernel/sched_state.h"
#include "kernel/wakeup_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <unordered_map>

namespace sched {

namespace {

using namespace replay_detail;

/// Pass 2 (docs/replay.md: Two passes): the trace's events applied in file order to the state they
/// rebuild, and at each waking that is a placement decision, schedlab's try_to_wake_up() on that
/// state, compared with the kernel's choice and, when they differ, classified (Disagreement classes).
class Replay : public TraceRqWalk<Replay> {
public:
    Replay(const Trace& t, std::shared_ptr<const Topology> topo, const Knobs& knobs, const AgreeOptions& o, AgreeReport& rep)
        : TraceRqWalk(topo->nrCpus()),
          t(t),
          ev(t.events),
          rec(t.records),
          topo(topo),
          knobs(knobs),
          o(o),
          rep(rep),
          ncpu(topo->nrCpus()),
          first(t, rep),
          st(topo),
          cpu(std::size_t(ncpu)),
          llcScanAt(std::size_t(ncpu), -1) {
        try {
            syncRe = std::regex(o.sync_comm);
        } catch (const std::regex_error&) {
            syncRe = std::regex("$^");
        }
        st.seedIdleMachineHints();  // as the engine's machine at t = 0: idle, and up for a while
        t0 = ev.empty() ? 0 : ev.front().time;
        queueMarks = std::any_of(ev.begin(), ev.end(), [](const SchedEvent& e) { return e.kind == EvKind::schedlab_ttwu_queue; });
        // SCHEDLAB_AGREE_DEBUG=LINE prints the state rebuilt for the decision on that line.
        const char* dbg = std::getenv("SCHEDLAB_AGREE_DEBUG");
        debugLine = dbg ? std::uint32_t(std::strtoul(dbg, nullptr, 10)) : 0;
    }

    void run() {
        const std::uint32_t progressEvery = std::uint32_t(std::clamp<std::size_t>(ev.size() / 100, 1, 16384));
        for (std::uint32_t i = 0; i < ev.size(); ++i) {
            if (o.progress && i % progressEvery == 0 && !o.progress(double(i) / double(ev.size()))) {
                rep.cancelled = true;
                break;
            }
            const SchedEvent& e = ev[i];
            const std::int64_t now = e.time;
            const int c = e.cpu;
            if (c < 0 || c >= ncpu) continue;
            RCpu& rc = cpu[std::size_t(c)];
            if (rc.first < 0) rc.first = now;
            if (e.kind != EvKind::sched_switch) followCurrent(i, rc, c, now);
            switch (e.kind) {
            case EvKind::sched_switch: onSwitch(e, rc, c, now); break;
            case EvKind::sched_wakeup:
            case EvKind::sched_wakeup_new: onWakeup(e, c, now); break;
            case EvKind::sched_migrate_task: onMigrate(e, now); break;
            case EvKind::sched_process_exit:
                dequeue(e.pid, now);
                task(e.pid, now).exited = true;
                break;
            case EvKind::sched_waking: onWaking(i, e, c, now); break;
            case EvKind::sched_process_fork: onFork(e, now); break;
            case EvKind::hrtimer_start: onHrtimerStart(e, c, now); break;
            case EvKind::hrtimer_cancel:  // a task's (not __run_hrtimer()'s, in the timer's interrupt just before its expiry)
                if (rec[i].context == '.') timerGuess.erase(e.pid);
                break;
            case EvKind::hrtimer_expire_entry: onHrtimerExpire(e, c); break;
            case EvKind::schedlab_ttwu_queue:  // schedlab's export: ttwu_queue() put it on the wakelist now
                if (e.target_cpu >= 0 && e.target_cpu < ncpu) ++cpu[std::size_t(e.target_cpu)].pending;
                break;
            case EvKind::cpu_idle:
            case EvKind::hrtimer_expire_exit: break;
            }
        }
    }

private:
    // What a task's name says (kthread, per-CPU kthread, a sync waker by --sync-comm): the name of
    // a pid is fixed for the trace, and the regular expressions cost more than the path itself
    // when asked per CPU per decision, so each pid is looked at once.
    struct CommFlags {
        bool kthread = false, percpu = false, sync = false;
    };

    const Trace& t;
    const std::vector<SchedEvent>& ev;
    const std::vector<TraceRecord>& rec;
    std::shared_ptr<const Topology> topo;
    const Knobs& knobs;
    const AgreeOptions& o;
    AgreeReport& rep;
    const int ncpu;
    const FirstPass first;
    std::regex syncRe;
    MachineState st;
    std::vector<RCpu> cpu;
    std::unordered_map<std::int32_t, RTask> tasks;
    std::unordered_map<std::int32_t, Task> idleTasks;  // the idle task of each CPU, keyed by CPU (all print as pid 0)
    std::unordered_map<std::int32_t, CommFlags> commFlags;
    std::int64_t t0 = 0;
    std::uint32_t debugLine = 0;
    std::int64_t jiffiesOffset = 0;  // exported jiffies minus the trace clock's (see the wake inputs below)
    bool haveJiffiesOffset = false;
    std::vector<std::int64_t> llcScanAt;  // last nr_idle_scan update per LLC
    bool tailUnknown = false;             // a waking before had no wakeup in the trace
    bool queueMarks = false;              // schedlab's export with schedlab_ttwu_queue marks: pending from the mark, not the waking

    RTask& task(std::int32_t pid, std::int64_t now) {
        RTask& r = tasks[pid];
        if (r.first_seen < 0) r.first_seen = now;
        return r;
    }
    int prioOf(std::int32_t pid) const {
        const auto it = t.prio.find(pid);
        return it == t.prio.end() ? 120 : it->second;
    }
    static void touch(RTask& r, std::int64_t now) { r.pelt.advance(now, r.running, r.runnable); }
    // TraceRqWalk's hooks (rq_walk.h): PELT catches up before a queue change, util_est at a
    // sleeping dequeue, and the CPU's counts of queued tasks (CFS ones apart).
    friend class TraceRqWalk<Replay>;
    RTask* findTask(std::int32_t pid) {
        auto it = tasks.find(pid);
        return it == tasks.end() ? nullptr : &it->second;
    }
    RTask& taskAt(std::int32_t pid, std::int64_t now) { return task(pid, now); }
    void beforeQueueChange(RTask& r, std::int64_t now) { touch(r, now); }
    void sleeping(RTask& r, std::int64_t) {
        if (knobs.UTIL_EST) {  // util_est_update() at a sleeping dequeue
            r.ue.util_avg = std::uint32_t(std::max(0.0, r.pelt.util));
            util_est_update_task(r.ue, knobs.UTIL_EST_FASTUP);
        }
        r.running = false;
    }
    void nrChanged(int c, std::int32_t pid, int d, std::int64_t) {
        cpu[std::size_t(c)].nr += d;
        if (prioOf(pid) >= 100) cpu[std::size_t(c)].cfs += d;
    }
    bool inGap(std::int64_t now) const {
        for (const TraceGap& g : t.gaps)
            if ((g.from < 0 || now >= g.from) && (g.to < 0 || now <= g.to)) return true;
        return false;
    }
    const CommFlags& flagsOf(std::int32_t pid) {
        auto it = commFlags.find(pid);
        if (it == commFlags.end()) {
            const std::string c = t.commOf(pid);
            it = commFlags.emplace(pid, CommFlags{looksKthread(c), perCpuKthread(c), std::regex_search(c, syncRe)}).first;
        }
        return it->second;
    }
    // The runqueue state the path reads of CPU k, from the trace (PELT is filled at decisions).
    void fillRq(int k) {
        Rq& q = st.rq[std::size_t(k)];
        const RCpu& s = cpu[std::size_t(k)];
        q.curr = s.curr == 0 ? CurrKind::Idle : flagsOf(s.curr).kthread ? CurrKind::Kthread : CurrKind::Normal;
        q.nr_running = unsigned(std::max(0, s.nr));
        q.h_nr_running = unsigned(std::max(0, s.cfs));
        q.idle_h_nr_running = 0;
        q.ttwu_pending = s.pending > 0;
        q.idle_stamp = s.idle_stamp;
        q.clock_idle = s.clock_idle;
        q.idle_end_time = s.idle_end;
        q.claimed = s.claimed;
        q.cache_hot_timeout = s.cache_hot_timeout;
        q.exit_latency_ns = -1;
        q.curr_need_resched = false;
    }
    bool idleNow(int c) const { return cpu[std::size_t(c)].curr == 0 && cpu[std::size_t(c)].nr == 0 && cpu[std::size_t(c)].pending == 0; }
    std::string cpuRow() const {
        std::string s;
        for (int c = 0; c < ncpu; ++c) {
            const RCpu& r = cpu[std::size_t(c)];
            s += r.curr != 0 ? 'B' : (r.nr || r.pending) ? 'i' : 'I';
            s += std::to_string(r.nr);
            s += ' ';
        }
        if (!s.empty()) s.pop_back();
        return s;
    }
    // Racy decisions (docs/replay.md): the kernel chose somewhere between the waking line and its choice line (the
    // migrate; else the wakeup when it is recorded on the waker's CPU; else the waker CPU's next
    // event, by which try_to_wake_up() has returned). If another CPU of the LLCs of this_cpu and
    // prev changed curr, nr_running or ttwu_pending in between, the kernel may have seen either.
    bool racy(std::uint32_t i, int c, int prev, const Pass1& f) const {
        const std::int32_t self = ev[i].pid;  // p's own wakeup and migrate are the outcome, not a race
        std::uint32_t end = f.migrate;
        if (end == kNone && f.wakeup != kNone && ev[f.wakeup].cpu == c) end = f.wakeup;
        if (end == kNone) {
            for (std::uint32_t j = i + 1; j < ev.size() && j < i + 4096; ++j)
                if (ev[j].cpu == c) {
                    end = j;
                    break;
                }
        }
        if (end == kNone) return false;
        auto candidate = [&](int x) { return x >= 0 && x < ncpu && x != c && (st.sd->cpus_share_cache(x, c) || st.sd->cpus_share_cache(x, prev)); };
        for (std::uint32_t j = i + 1; j < end; ++j) {
            const SchedEvent& e = ev[j];
            switch (e.kind) {
            case EvKind::sched_switch:
                if (candidate(e.cpu)) return true;
                break;
            case EvKind::sched_wakeup:
            case EvKind::sched_wakeup_new:
                if (e.pid != self && (candidate(e.target_cpu) || candidate(e.cpu))) return true;
                break;
            case EvKind::sched_migrate_task:
                if (e.pid != self && (candidate(e.orig_cpu) || candidate(e.target_cpu))) return true;
                break;
            default: break;
            }
        }
        return false;
    }
    static std::string choiceKind(int choice, int prev, int waker) { return choice == prev ? "prev" : choice == waker ? "waker" : "other"; }

    // The TASK-PID column names the CPU's current task (docs/replay.md: The current-task column): a task
    // first seen running is back-filled.
    void followCurrent(std::uint32_t i, RCpu& rc, int c, std::int64_t now) {
        const std::int32_t cur = rec[i].current;
        if (cur == rc.curr) return;
        if (rc.curr) {
            auto it = tasks.find(rc.curr);
            if (it != tasks.end()) {
                touch(it->second, now);
                it->second.running = false;
            }
        }
        rc.curr = cur;
        if (cur) {
            enqueue(cur, c, now);
            tasks[cur].running = true;
        }
    }

    void onSwitch(const SchedEvent& e, RCpu& rc, int c, std::int64_t now) {
        if (e.pid) {
            RTask& r = task(e.pid, now);
            touch(r, now);
            r.running = false;
            r.exec_start = now;  // update_curr() at put_prev / dequeue
            if (r.ran_from >= 0) r.sum_exec += now - r.ran_from;
            r.ran_from = -1;
            if (e.prev_state != 'R') {
                dequeue(e.pid, now);
                dur_avg_update(r.sim, r.sum_exec);  // SIS_CURRENT's 1/2: a sleeping dequeue closes one run
                // SIS_CACHE: the sleep's stamp, and the CPU's reservation when it is left empty.
                Rq q;
                q.nr_running = unsigned(std::max(0, rc.nr));
                q.cache_hot_timeout = rc.cache_hot_timeout;
                sis_cache_dequeue(knobs, r.sim, q, true, now);
                rc.cache_hot_timeout = q.cache_hot_timeout;
            }
        }
        if (e.pid2) {
            enqueue(e.pid2, c, now);
            RTask& n = tasks[e.pid2];
            n.running = true;
            n.ran_from = now;
            n.exec_start = now;                                   // set_next_entity()
            if (rc.curr == 0) rc.idle_end = rc.clock_idle = now;  // leaving idle (v1/v2's idle_end_time; __schedule's rq clock)
        } else {
            rc.clock_idle = now;
            rc.claimed = false;  // set_next_task_idle() clears the claim
            if (!rc.pending) rc.idle_stamp = now;
            // set_next_task_idle(): __update_idle_core() as the path has it: the other SMT
            // siblings must be available_idle_cpu() (the idle-delay knobs count there too).
            rc.curr = 0;
            st.now_ns = now;
            topo->smtMask(c).forEach([&](int sib) {
                if (sib != c) fillRq(sib);
            });
            update_idle_core(st, knobs, c);
        }
        rc.curr = e.pid2;
    }

    void onWakeup(const SchedEvent& e, int c, std::int64_t now) {
        const int target = e.target_cpu;
        if (target < 0 || target >= ncpu) return;
        RCpu& tc = cpu[std::size_t(target)];
        if (tc.pending > 0 && e.kind == EvKind::sched_wakeup && target != -1 && c == target) --tc.pending;
        if (e.kind == EvKind::sched_wakeup) tc.idle_stamp = 0;  // ttwu activation clears idle_stamp (not wakeup_new)
        if (tc.curr == 0) tc.clock_idle = now;                  // any activation updates an idle rq's clock
        if (e.kind == EvKind::sched_wakeup_new) {
            // fair.c: post_init_entity_util_avg(): load = weight; util = a share of the CPU's (docs/replay.md: PELT from run intervals).
            RTask& r = task(e.pid, now);
            double cu = 0, cl = 0;
            for (auto& [tp, tr] : tasks)
                if (!tr.exited && tr.cpu == target && tp != e.pid) {
                    touch(tr, now);
                    cu += tr.pelt.util;
                    cl += tr.pelt.load;
                }
            const double cap = (1024.0 - std::min(cu, 1024.0)) / 2;
            r.pelt.load = 1024;
            r.pelt.util = cu > 0 ? std::min(cu * 1024.0 / (cl + 1), cap) : cap;
            r.pelt.last = now;
            if (!r.have_sim)
                r.sim.recent_used_cpu = c, r.recent_known = true;  // wake_up_new_task(): task_cpu(p) before select = the CPU of the wakeup_new line
        }
        // ENQUEUE_WAKEUP: the sleep ended (not for ttwu_runnable(), whose sched_wakeup enqueues nothing).
        if (RTask& w = task(e.pid, now); e.kind == EvKind::sched_wakeup && !w.runnable) sis_cache_wakeup(knobs, w.sim, now);
        enqueue(e.pid, target, now);
    }

    void onMigrate(const SchedEvent& e, std::int64_t now) {
        RTask& r = task(e.pid, now);
        touch(r, now);
        if (e.orig_cpu != e.target_cpu) {
            r.exec_start = 0;                           // enqueued with ENQUEUE_MIGRATED
            migrate_task_ratelimit(knobs, r.sim, now);  // migrate_task_rq_fair(): the migration ratelimit's window
        }
        const bool queued = r.runnable;
        if (queued) r.sim.last_dequeue_time = 0;  // a queued task's migration dequeues it without a sleep (SIS_CACHE)
        migrate(e.pid, e.target_cpu, now);
        // attach_task() updates the destination's rq clock: clock_idle when it is idle.
        if (queued && e.target_cpu >= 0 && e.target_cpu < ncpu && cpu[std::size_t(e.target_cpu)].curr == 0)
            cpu[std::size_t(e.target_cpu)].clock_idle = now;
    }

    void onFork(const SchedEvent& e, std::int64_t now) {
        // The child copies the parent's task_struct (fork.c: dup_task_struct()): wakee_flips, last_wakee, decay stamp.
        RTask& ch = task(e.pid2, now);
        ch.forked = true;
        auto par = tasks.find(e.pid);
        if (par != tasks.end() && par->second.have_sim) {
            ch.sim.wakee_flips = par->second.sim.wakee_flips;
            ch.sim.wakee_flip_decay_ts = par->second.sim.wakee_flip_decay_ts;
            ch.sim.last_wakee = par->second.sim.last_wakee;
        }
    }

    // Why a waking is not a placement decision ("" when it is; docs/replay.md: Which wakings are decisions); `late` when the kernel's
    // choice comes after p's own switch-out.
    std::string notADecision(std::uint32_t i, std::int32_t pid, std::int32_t waker, bool percpu, const RTask& r, const Pass1& f, int c,
                             bool& late) const {
        bool currSomewhere = false;
        for (int k = 0; k < ncpu; ++k)
            if (cpu[std::size_t(k)].curr == pid) currSomewhere = true;
        if (waker == pid) return "self-wakeup";
        if (percpu) return "pinned (per-CPU kthread)";
        if (first.pinned(pid, i)) return "pinned (moved by the stopper, never again)";
        if (currSomewhere || r.running) {
            if (f.sleep == kNone || (f.wakeup != kNone && f.wakeup < f.sleep)) return "current, still on_rq (ttwu_runnable)";
            if (f.migrate != kNone || (f.wakeup != kNone && ev[f.wakeup].cpu == c)) {
                late = true;
                return {};
            }
            return "mid-switch, on_cpu wakelist";
        }
        if (r.runnable) return "still queued (ttwu_runnable)";
        return {};
    }

    // docs/replay.md, State at the decision instant: PELT of every CPU from its tasks, the runqueues,
    // nr_idle_scan per LLC.
    void decisionState(std::int64_t now) {
        std::vector<double> util(std::size_t(ncpu), 0.0), load(std::size_t(ncpu), 0.0);
        std::vector<std::int64_t> ue(std::size_t(ncpu), 0);
        for (auto& [tp, tr] : tasks) {
            touch(tr, now);
            if (!tr.exited && tr.cpu >= 0 && tr.cpu < ncpu) {  // p included: its blocked load is still on prev (wake_affine_weight subtracts it)
                util[std::size_t(tr.cpu)] += tr.pelt.util;
                load[std::size_t(tr.cpu)] += tr.pelt.load;
                if (tr.runnable) ue[std::size_t(tr.cpu)] += std::int64_t(task_util_est(tr.ue));  // cfs_rq util_est.enqueued
            }
        }
        st.now_ns = now;
        // ns -> jiffies without overflow for any 64-bit timestamp (a corrupt trace's included).
        st.jiffies = std::int64_t((__int128(now) * o.hz) / 1'000'000'000) + jiffiesOffset;
        for (int k = 0; k < ncpu; ++k) {
            fillRq(k);
            Rq& q = st.rq[std::size_t(k)];
            q.util_avg = std::int64_t(util[std::size_t(k)]);
            q.load_avg = std::int64_t(load[std::size_t(k)]);
            q.runnable_avg = q.load_avg;
            q.util_est = knobs.UTIL_EST ? ue[std::size_t(k)] : 0;
        }
        // nr_idle_scan from the LLC's summed cpu_util_cfs: at the decision (the default) or at
        // modelled LLC balances (seeded at the first computation).
        for (int k = 0; k < ncpu; ++k) {
            if (st.sd->sd_llc_shared(k) != k) continue;
            const SchedDomain* llc = st.sd->sd_llc(k);
            if (!llc) continue;
            std::int64_t sum = 0;
            bool anyIdle = false;
            for (int m = 0; m < ncpu; ++m)
                if (st.sd->sd_llc_shared(m) == k) {
                    const Rq& q = st.rq[std::size_t(m)];  // cpu_util_cfs(): util_est counts when UTIL_EST is on
                    sum += std::min<std::int64_t>(q.cpu_capacity, std::max(q.util_avg, q.util_est));
                    anyIdle = anyIdle || idleNow(m);
                }
            std::int64_t& last = llcScanAt[std::size_t(k)];
            const std::int64_t interval = std::int64_t(llc->span_weight) * 1'000'000 * (anyIdle ? 1 : 16);
            if (o.nr_idle_scan_at == "balance" && last >= 0 && now - last < interval) continue;
            last = now;
            st.shared[std::size_t(k)].nr_idle_scan = update_idle_cpu_scan(llc->span_weight, sum, llc->imbalance_pct);
        }
    }

    // schedlab's own export says what the decision read that no tracepoint shows: count where the
    // rebuild differs from it and, with --wake-inputs use, take its figures.
    void applyWakeInputs(const WakeInputs& in, int c, int prev, Task& p, Task* cur, Waker& w, bool& sync) {
        auto& ic = rep.inputs;
        ++ic.decisions;
        const Rq& qt = st.rq[std::size_t(c)];
        const Rq& qp = st.rq[std::size_t(prev)];
        const SdShared* shT = st.llcShared(c);
        const SdShared* shP = st.llcShared(prev);
        ic.sync += sync != in.sync;
        ic.in_task += w.in_task != in.in_task;
        ic.scan += (shT && shT->nr_idle_scan != in.scan_this) || (shP && shP->nr_idle_scan != in.scan_prev);
        ic.cores += (shT && int(shT->has_idle_cores) != in.cores_this) || (shP && int(shP->has_idle_cores) != in.cores_prev);
        // A trace's clock does not say where jiffies started (the kernel's are
        // INITIAL_JIFFIES plus the uptime; the engine's start at its uptime): the first
        // exported jiffies fix the offset, and a later decision is off if it moves.
        if (!haveJiffiesOffset) {
            jiffiesOffset = in.jiffies - st.jiffies;
            st.jiffies = in.jiffies;
            haveJiffiesOffset = true;
        }
        ic.jiffies += st.jiffies != in.jiffies;
        const double n = double(ic.decisions);
        auto off = [](std::int64_t a, std::int64_t b) { return std::abs(a - b) * 16 > std::max<std::int64_t>(std::abs(b), 16); };
        ic.load_err += ((std::abs(qt.load_avg - in.this_load) + std::abs(qp.load_avg - in.prev_load)) / 2.0 - ic.load_err) / n;
        ic.task_err += (double(std::abs(p.h_load() - in.p_load)) - ic.task_err) / n;
        ic.load_off += off(qt.load_avg, in.this_load) || off(qp.load_avg, in.prev_load) || off(p.h_load(), in.p_load) ||
                       (sync && off(cur->h_load(), in.cur_load));
        if (o.wake_inputs == "use") {
            ic.used = true;
            st.rq[std::size_t(c)].load_avg = in.this_load;
            st.rq[std::size_t(prev)].load_avg = in.prev_load;
            p.avg.load_avg = std::uint64_t(in.p_load);
            p.task_h_load = -1;
            cur->avg.load_avg = std::uint64_t(in.cur_load);
            cur->task_h_load = -1;
            sync = in.sync;
            w.in_task = in.in_task;
            if (SdShared* sh = st.llcShared(c)) sh->nr_idle_scan = in.scan_this;
            if (SdShared* sh = st.llcShared(prev)) sh->nr_idle_scan = in.scan_prev;
            st.jiffies = in.jiffies;
        }
    }

    /// One decision's inputs as they were before schedlab's call, to decide again on copies.
    struct Inputs {
        MachineState st;
        Task p, cur;
        Waker w;
        std::int32_t waker = 0;
        std::uint32_t flags = 0;
    };
    // The same decision again on copies of its inputs, one of them changed by `change`
    // (the disagreement classes), or traced step by step for the window's inspector.
    template <class Change>
    Decision redecide(const Inputs& in, Change&& change, bool traced) const {
        MachineState s2 = in.st;
        Task p2 = in.p, c2 = in.cur;
        Waker w2 = in.w;
        w2.current_ptr = in.waker == 0 ? nullptr : &c2;
        if (in.waker == 0) w2.current = in.cur;
        Knobs k2 = knobs;
        std::uint32_t f2 = in.flags;
        change(s2, p2, c2, k2, f2);
        return try_to_wake_up(s2, k2, p2, w2, f2, traced);
    }

    // Disagreement classes (docs/replay.md): observed first, then re-decide with one input changed.
    DisagreeClass classify(const Inputs& in, const Decision& d, int choice, int sim, int c, int prev) const {
        auto redo = [&](auto&& change) { return redecide(in, change, false).cpu; };
        const int llcSize = st.sd->sd_llc_size(prev);
        if (idleNow(choice) && idleNow(sim)) return DisagreeClass::different_idle;
        if (redo([&](MachineState& s2, Task&, Task&, Knobs&, std::uint32_t&) {
                for (int k = 0; k < ncpu; ++k)
                    if (s2.sd->sd_llc_shared(k) == k) s2.shared[std::size_t(k)].nr_idle_scan = llcSize;
            }) == choice ||
            redo([&](MachineState& s2, Task&, Task&, Knobs&, std::uint32_t&) {
                for (int k = 0; k < ncpu; ++k)
                    if (s2.sd->sd_llc_shared(k) == k) s2.shared[std::size_t(k)].nr_idle_scan = 0;
            }) == choice)
            return DisagreeClass::sis_util_cutoff;
        if (redo([&](MachineState&, Task& p2, Task& c2, Knobs&, std::uint32_t&) {
                if (d.stage1 == Stage1::WAKE_WIDE) {
                    p2.wakee_flips = 0;
                    c2.wakee_flips = 0;
                } else {
                    p2.wakee_flips = 1000;
                    c2.wakee_flips = 1000u * unsigned(std::max(1, llcSize)) + 1000;
                    p2.wakee_flip_decay_ts = c2.wakee_flip_decay_ts = in.st.jiffies;
                }
            }) == choice)
            return DisagreeClass::wake_wide;
        if (redo([&](MachineState&, Task&, Task&, Knobs&, std::uint32_t& f2) { f2 ^= WF_SYNC; }) == choice ||
            redo([&](MachineState& s2, Task&, Task&, Knobs&, std::uint32_t&) {
                // wake_affine_weight's outcome inverted: the side it chose made heavy, the other empty.
                const bool choseThis = d.stage1 == Stage1::AFFINE_WEIGHT_THIS || d.stage1 == Stage1::AFFINE_WEIGHT_SYNC_THIS ||
                                       d.stage1 == Stage1::AFFINE_SYNC || d.stage1 == Stage1::AFFINE_IDLE_THIS;
                Rq& heavy = s2.rq[std::size_t(choseThis ? c : prev)];
                Rq& light = s2.rq[std::size_t(choseThis ? prev : c)];
                heavy.load_avg = heavy.runnable_avg = 1024 * 64;
                light.load_avg = light.runnable_avg = 0;
            }) == choice)
            return DisagreeClass::wake_affine;
        return DisagreeClass::unexplained;
    }

    // The waker's current task as the path reads it (the idle task of CPU c when waker is 0).
    // Where a replayed task may run: every CPU, unless the trace is schedlab's export of a pinned
    // run, whose schedlab_wake lines name the task's mask (allowed=).
    CpuMask affinityOf(std::int32_t pid) const {
        const auto it = t.affinity.find(pid);
        if (it == t.affinity.end()) return topo->allCpus();
        const auto m = CpuMask::parseList(it->second, kMaxCpus, nullptr);
        return m && !m->empty() ? *m & topo->allCpus() : topo->allCpus();
    }
    Task* currentOf(std::int32_t waker, int c, std::int64_t now) {
        if (waker == 0) {
            Task& it = idleTasks[c];
            it.pid = 0;
            return &it;
        }
        RTask& wr = task(waker, now);
        if (!wr.have_sim) {
            wr.sim.pid = waker;
            wr.sim.kthread = looksKthread(t.commOf(waker));
            wr.sim.recent_used_cpu = c;
            wr.sim.setAffinity(affinityOf(waker));  // set once
            wr.have_sim = true;
        }
        wr.sim.cpu = c;
        wr.sim.avg.load_avg = std::uint64_t(wr.pelt.load);  // task_h_load(current) for the sync rule of wake_affine_weight
        wr.sim.avg.util_avg = std::uint64_t(wr.pelt.util);
        wr.sim.avg.runnable_avg = wr.sim.avg.load_avg;
        return &wr.sim;
    }

    // Sleep timers (docs/replay.md: Timer placement): get_nohz_timer_target() on the rebuilt
    // runqueues at each hrtimer_start of a sleeper's timer, against the CPU whose interrupt
    // expires it. The trace does not say each CPU's next clock event, so a timer the target would
    // have taken but that stayed on the arming CPU is counted apart (hrtimer_check_target() keeps
    // a timer that expires before the target's next event).
    struct TimerGuess {
        std::int16_t armed = -1, guess = -1;
        TimerTarget::Why why = TimerTarget::Why::ThisBusy;
    };
    std::unordered_map<std::int32_t, TimerGuess> timerGuess;
    void onHrtimerStart(const SchedEvent& e, int c, std::int64_t now) {
        timerGuess.erase(e.pid);
        if (hrtimerFunction(e) != kHrtimerWakeup || inGap(now) || tailUnknown) return;
        TimerGuess g;
        g.armed = std::int16_t(c);
        if ((e.cause & HRTIMER_MODE_PINNED) || !knobs.timer_migration) {
            g.guess = std::int16_t(c);
            g.why = TimerTarget::Why::Pinned;
        } else {
            st.now_ns = now;
            for (int k = 0; k < ncpu; ++k) fillRq(k);
            const TimerTarget tt = get_nohz_timer_target(st, knobs, c);
            g.guess = std::int16_t(tt.cpu);
            g.why = tt.why;
        }
        timerGuess[e.pid] = g;
    }
    void onHrtimerExpire(const SchedEvent& e, int c) {
        const auto it = timerGuess.find(e.pid);
        if (it == timerGuess.end()) return;
        const TimerGuess g = it->second;
        timerGuess.erase(it);
        auto& tc = rep.timers;
        ++tc.checked;
        tc.moved_by_kernel += c != g.armed;
        if (c == g.guess) {
            ++tc.agree;
            tc.agree_moved += c != g.armed;
        } else if (c == g.armed) {
            ++tc.kept_local;  // schedlab would move it; hrtimer_check_target() may have kept it
        } else {
            ++tc.disagree;
            if (tc.examples.size() < 10)
                tc.examples.push_back(fmt::format("{:.6f} s: timer of CPU {} expired on CPU {}, schedlab: CPU {} ({})", double(e.time) / 1e9, g.armed,
                                                  c, g.guess, toString(g.why)));
        }
    }

    void onWaking(std::uint32_t i, const SchedEvent& e, int c, std::int64_t now) {
        const std::int32_t pid = e.pid;
        const int prio = prioOf(pid);
        if (prio < 100) {
            ++rep.not_decisions["not CFS (prio < 100)"];
            return;
        }
        ++rep.wakings;
        const Pass1& f = first.p1[i];
        RTask& r = task(pid, now);
        const std::int32_t waker = rec[i].current;
        const int prev = e.target_cpu;
        const std::string comm = t.commOf(pid);
        bool late = false;
        const std::string no = notADecision(i, pid, waker, flagsOf(pid).percpu, r, f, c, late);
        // A waking whose wakeup is not in the trace (it ends first): where it went, and which CPU
        // has it pending, is unknown from here on, so later decisions are "state unknown".
        if (f.wakeup == kNone && waker != pid && !first.wokenLater(pid, i)) tailUnknown = true;
        if (!no.empty()) {
            ++rep.not_decisions[no];
            // A wakelist wakeup still marks its target pending until the IPI runs.
            if (!queueMarks && f.wakeup != kNone && ev[f.wakeup].cpu != c && ev[f.wakeup].cpu >= 0 && ev[f.wakeup].cpu < ncpu)
                ++cpu[std::size_t(ev[f.wakeup].cpu)].pending;
            return;
        }
        if (f.wakeup == kNone) {
            ++rep.no_choice;
            return;
        }
        const int choice = f.migrate != kNone ? ev[f.migrate].target_cpu : prev;
        if (f.migrate != kNone && ev[f.migrate].orig_cpu != prev) ++rep.prev_mismatch;
        if (r.cpu >= 0 && r.cpu != prev) ++rep.prev_mismatch;
        if (ev[f.wakeup].target_cpu != choice) ++rep.choice_mismatch;
        const bool workload =
            !o.workload_only || ((t.workload_start < 0 || now >= t.workload_start) && (t.workload_end < 0 || now <= t.workload_end));
        const int wakeupCpu = ev[f.wakeup].cpu;
        if (!workload || inGap(now) || tailUnknown) {
            if (workload) ++rep.unknown_state;
            if (!queueMarks && wakeupCpu != c && wakeupCpu >= 0 && wakeupCpu < ncpu) ++cpu[std::size_t(wakeupCpu)].pending;
            return;
        }

        decisionState(now);
        // The wakee and the waker's current task (their flips and recent_used_cpu persist).
        if (!r.have_sim) {
            r.sim.pid = pid;
            if (!r.recent_known) r.sim.recent_used_cpu = prev;  // first seen mid-trace: its first prev (docs/replay.md: Per-task memory)
            r.sim.kthread = looksKthread(comm);
            r.sim.setAffinity(affinityOf(pid));
            r.have_sim = true;
        }
        Task& p = r.sim;
        p.cpu = prev;
        p.wake_cpu = prev;
        p.on_rq = p.on_cpu = false;
        p.setAverages(std::int64_t(r.pelt.load), std::int64_t(r.pelt.util), std::int64_t(r.pelt.load), 0);
        if (knobs.UTIL_EST) {
            p.avg.util_est_enqueued = r.ue.util_est_enqueued;
            p.avg.util_est_ewma = r.ue.util_est_ewma;
        }
        p.avg.last_update_time = 1;
        p.exec_start = r.exec_start;
        Waker w;
        w.cpu = c;
        w.in_task = rec[i].context == '.' || rec[i].context == '?';
        Task* cur = currentOf(waker, c, now);
        w.current_ptr = cur;
        bool sync = false;
        if (w.in_task && waker != 0 && !task(waker, now).exited) {
            if (o.sync == "task") sync = true;
            else if (o.sync == "comm") sync = flagsOf(waker).sync;
        }
        if (const WakeInputs* wi = t.wake_inputs.find(std::uint32_t(i))) applyWakeInputs(*wi, c, prev, p, cur, w, sync);
        const std::uint32_t flags = WF_TTWU | (sync ? WF_SYNC : 0u);
        // Decide on copies for the classes' re-decisions; the real call mutates the replay's tasks.
        const Inputs before{st, p, *cur, w, waker, flags};
        if (debugLine && rec[i].line == debugLine) {
            std::string lo;
            for (int k = 0; k < ncpu; ++k) lo += fmt::format(" {}:{}/{}", k, st.rq[std::size_t(k)].load_avg, st.rq[std::size_t(k)].util_avg);
            std::fprintf(stderr, "line %u: p %d load %lld util %lld; current %d load %lld; rq load/util:%s\n", rec[i].line, pid,
                         (long long)p.avg.load_avg, (long long)p.avg.util_avg, waker, (long long)cur->avg.load_avg, lo.c_str());
        }
        const Decision d = try_to_wake_up(st, knobs, p, w, flags);
        const int sim = d.cpu;
        for (int k = 0; k < ncpu; ++k) cpu[std::size_t(k)].claimed = st.rq[std::size_t(k)].claimed;  // the path's claims persist
        AgreeRow row;
        if (o.keep_decisions) {
            if (o.trace_disagreements && sim != choice) {
                row.decision = std::make_shared<const Decision>(redecide(
                    before, [](MachineState&, Task&, Task&, Knobs&, std::uint32_t&) {}, true));
            } else {
                row.decision = std::make_shared<const Decision>(d);
            }
        }

        row.line = rec[i].line;
        row.time = now;
        row.pid = pid;
        row.waker = waker;
        row.this_cpu = c;
        row.prev = prev;
        row.kernel = choice;
        row.sim = sim;
        row.sync = sync;
        row.late = late;
        // PELT-cold: 128 ms after the trace starts (pre-existing tasks start at 0); flips-cold:
        // a task (or waker) first seen mid-trace, not forked in it, for 1 s.
        auto flipsCold = [&](std::int32_t q) {
            if (q == 0) return false;
            const RTask& x = tasks[q];
            return !x.forked && now - x.first_seen < kFlipsColdNs;
        };
        row.cold = now - t0 < kColdNs || flipsCold(pid) || flipsCold(waker);
        row.racy = racy(i, c, prev, f);
        row.reasons = d.reasons();
        row.stage2 = d.stage2;
        ++rep.decisions;
        if (late) ++rep.late;
        if (choice != prev) ++rep.moved;
        if (choice == prev) ++rep.stay_prev;
        if (!row.cold) ++rep.warm;
        if (row.racy) ++rep.racy, rep.agree_racy += sim == choice;
        if (sim == choice) {
            ++rep.agree;
            if (choice != prev) ++rep.agree_moved;
            if (!row.cold) ++rep.agree_warm;
        } else {
            const DisagreeClass cls = classify(before, d, choice, sim, c, prev);
            row.cls = int(cls);
            ++rep.by_class[std::size_t(cls)];
            auto& ex = rep.examples[std::size_t(cls)];
            row.cpus = cpuRow();
            if (ex.size() < o.examples_per_class) ex.push_back(row);
        }
        for (const auto& [who, ch] : {std::pair<const char*, int>{"kernel", choice}, {"schedlab", sim}}) {
            const std::string key = fmt::format("{} {}", who, choiceKind(ch, prev, c));
            ++rep.choice_kinds[key][idleNow(ch) ? 0 : 1];
        }
        rep.rows.push_back(std::move(row));
        // The kernel's wakeup then goes by the wakelist (pending on the target) or directly; in
        // an export with schedlab's marks, the wakelist's pending starts at its mark instead.
        if (!queueMarks && wakeupCpu != c && wakeupCpu >= 0 && wakeupCpu < ncpu) ++cpu[std::size_t(wakeupCpu)].pending;
        r.cpu = prev;  // the trace, not the simulator, says where p goes next (its migrate / wakeup)
    }
};

}  // namespace

AgreeReport agree(const Trace& t, std::shared_ptr<const Topology> topo, const Knobs& knobs, const AgreeOptions& o) {
    const auto wall0 = std::chrono::steady_clock::now();
    AgreeReport rep;
    rep.file = t.file;
    rep.topology = topo->name();
    rep.knobs = knobs.presetName;
    rep.sync = o.sync == "comm" ? fmt::format("task-context wakings by /{}/", o.sync_comm) : o.sync;
    rep.nr_idle_scan_at = o.nr_idle_scan_at;
    Replay(t, std::move(topo), knobs, o, rep).run();
    rep.windows = o.workload_only ? wakeupWindows(t, t.workload_start < 0 ? std::numeric_limits<std::int64_t>::min() : t.workload_start,
                                                  t.workload_end < 0 ? std::numeric_limits<std::int64_t>::max() : t.workload_end)
                                  : wakeupWindows(t);
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return rep;
}

}  // namespace sched
