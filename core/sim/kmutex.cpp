// SPDX-License-Identifier: GPL-2.0-or-later
// kmutex.cpp: struct mutex (kernel/locking/mutex.c, Linux 6.1); the rules are in kmutex.h.
#include "sim/kmutex.h"

#include "util/state_archive.h"

#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace sched {

void MutexStats::merge(const MutexStats& o) {
    acquisitions += o.acquisitions;
    contended += o.contended;
    spun += o.spun;
    slept += o.slept;
    handoffs += o.handoffs;
    spin_ns += o.spin_ns;
    sleep_ns += o.sleep_ns;
    hold_ns += o.hold_ns;
    wait.merge(o.wait);
}

KMutex::Contender* KMutex::find(int id) {
    if (!m_c) return nullptr;
    for (auto& c : m_c->cont)
        if (c.id == id) return &c;
    return nullptr;
}
const KMutex::Contender* KMutex::find(int id) const {
    for (const auto& c : cont())
        if (c.id == id) return &c;
    return nullptr;
}

void KMutex::erase(int id) {
    if (!m_c) return;
    cont().erase(std::remove_if(cont().begin(), cont().end(), [id](const Contender& c) { return c.id == id; }), cont().end());
    // __mutex_remove_waiter(): the WAITERS flag goes with the last waiter (an empty list).
    list().erase(std::remove(list().begin(), list().end(), id), list().end());
    if (m_compact && m_c && m_c->cont.empty()) m_c.reset();
}

// owner_on_cpu(): the owner is running (a handed-on lock's new owner too).
bool KMutex::ownerOnCpu(const Engine& e) const { return m_owner >= 0 && e.task(m_owner).state == TaskState::Running; }

void KMutex::watch(Engine& e, int id, int delta) {
    SimTask& t = e.task(id);
    t.watch_off_cpu = std::uint8_t(int(t.watch_off_cpu) + delta);
}

int KMutex::firstWaiter() const { return list().empty() ? -1 : list().front(); }

int KMutex::firstSpinner() const {
    const Contender* best = nullptr;
    for (const auto& c : cont())
        if (c.phase == Phase::Spinning && (!best || c.spinOrder < best->spinOrder)) best = &c;
    return best ? best->id : -1;
}

// Its spinning or sleeping ends now: the time goes to the stats.
void KMutex::endPhase(Engine& e, Contender& c) {
    if (c.phase == Phase::Spinning) {
        st().spin_ns += e.now() - c.phaseSince;
        watch(e, c.id, -1);
    } else if (c.phase == Phase::Sleeping) {
        st().sleep_ns += e.now() - c.phaseSince;
    }
    c.phase = Phase::SpinFailed;
}

void KMutex::acquire(Engine& e, int id, const Contender* c) {
    if (c) {
        (c->slept ? st().slept : st().spun)++;
        st().wait.record(e.now() - c->since);
        erase(id);
    }
    st().acquisitions++;
    m_owner = id;
    m_pickup = false;
    m_acquiredAt = e.now();
    watch(e, id, +1);
    if (c) e.setBlockedOn(id, nullptr);  // __mutex_lock_common()'s acquired: set_task_blocked_on(current, NULL)
}

// The slow path's sleep: on the wait list (at its tail the first time: __mutex_add_waiter()),
// schedule().
KMutex::Lock KMutex::sleep(Engine& e, Contender& c) {
    if (!c.onList) {
        list().push_back(c.id);
        c.onList = true;
    }
    c.phase = Phase::Sleeping;
    c.phaseSince = e.now();
    c.slept = true;
    e.setBlockedOn(c.id, this);  // proxy execution: p->blocked_on = lock, not waking; it stays queued (a donor)
    return Lock::Sleep;
}

// The lock is taken: spin on its owner while it runs (mutex_can_spin_on_owner() /
// mutex_spin_on_owner(): owner_on_cpu() and no need_resched()), else sleep. A waiter spins only
// as the first one (mutex_optimistic_spin(waiter)); a woken first waiter that finds it taken
// sets MUTEX_FLAG_HANDOFF first (__mutex_trylock_or_handoff()).
KMutex::Lock KMutex::spinOrSleep(Engine& e, Contender& c, bool woken, bool wasSpinning) {
    const bool first = c.onList && firstWaiter() == c.id;
    if (woken && first) m_handoff = true;
    // Proxy execution v6 (10/20): MUTEX_SPIN_ON_OWNER depends on !PROXY_EXEC: no optimistic
    // spinning (and so no need_resched() yield in it): the wait list.
    if (e.proxyExec()) return sleep(e, c);
    const bool maySpin = !c.onList || first;
    if (maySpin && e.needResched(e.task(c.id).t.cpu)) {
        // mutex_optimistic_spin()'s fail path: __set_current_state(TASK_RUNNING) and
        // schedule_preempt_disabled(), a preemption; the slow path (a waiter: its loop, whose
        // schedule() then returns at once) goes on when it runs again.
        c.phase = Phase::Yielded;
        c.phaseSince = e.now();
        return Lock::Yield;
    }
    if (maySpin && ownerOnCpu(e)) {
        c.phase = Phase::Spinning;
        c.phaseSince = e.now();
        if (!wasSpinning) c.spinOrder = m_c->nextOrder++;  // an OSQ spinner keeps its place in the queue
        watch(e, c.id, +1);
        return Lock::Spin;
    }
    return sleep(e, c);
}

KMutex::Lock KMutex::lock(Engine& e, int id) {
    Contender* c = find(id);
    const Phase was = c ? c->phase : Phase::Spinning;
    if (c) endPhase(e, *c);
    // __mutex_trylock_fast() / __mutex_trylock() / __mutex_trylock_or_handoff(): a free lock,
    // or one handed to this task (MUTEX_FLAG_PICKUP).
    if (m_owner < 0 || (m_owner == id && m_pickup)) {
        acquire(e, id, c);
        return Lock::Acquired;
    }
    if (!c) {  // mutex_lock()'s slow path: optimistic spinning on the OSQ, else the wait list
        cont().push_back(Contender{id, Phase::Spinning, false, false, e.now(), e.now(), 0});
        st().contended++;
        return spinOrSleep(e, cont().back(), false, false);
    }
    switch (was) {
    case Phase::Spinning:  // the owner changed under its spinning: spin on the new one while it runs
        return spinOrSleep(e, *c, false, true);
    case Phase::SpinFailed:  // its spinning failed: the slow path's trylock failed, schedule()
        return sleep(e, *c);
    case Phase::Sleeping:  // woken by an unlock, and someone took the lock first
        return spinOrSleep(e, *c, true, false);
    case Phase::Yielded:  // back after yielding: a waiter's loop retries as if woken; else the slow path
        return c->onList ? spinOrSleep(e, *c, true, false) : sleep(e, *c);
    }
    return sleep(e, *c);
}

void KMutex::fastLock(Engine& e, int id, std::int64_t t) {
    if (m_owner >= 0 || !uncontended()) throw std::logic_error(fmt::format("a planned mutex_lock() by task {} found the mutex taken", id));
    st().acquisitions++;
    m_owner = id;
    m_acquiredAt = t;
    watch(e, id, +1);
}

void KMutex::fastUnlock(Engine& e, int id, std::int64_t t) {
    if (m_owner != id || m_pickup || !uncontended())
        throw std::logic_error(fmt::format("a planned mutex_unlock() by task {} found the mutex contended or not its own", id));
    st().hold_ns += t - m_acquiredAt;
    m_owner = -1;
    m_handoff = false;
    watch(e, id, -1);
}

void KMutex::unlock(Engine& e, int id) {
    if (m_owner != id || m_pickup) throw std::logic_error(fmt::format("mutex_unlock by task {} which does not own it (owner {})", id, m_owner));
    st().hold_ns += e.now() - m_acquiredAt;
    watch(e, id, -1);
    if (e.proxyExec()) {
        // Proxy execution v6: __mutex_unlock_slowpath() always hands off (10/20: owner =
        // MUTEX_FLAG_HANDOFF), to the owner's blocked_donor when it waits for this lock, else
        // to the first waiter (19/20), which it wakes with blocked_on_waking set (09/20).
        int next = -1;
        if (const int d = e.blockedDonor(id); d >= 0 && e.blockedOn(d) == this && isWaiting(d)) {
            next = d;
            e.clearBlockedDonor(id);
        }
        if (next < 0) next = firstWaiter();
        m_handoff = false;
        if (next < 0) {
            m_owner = -1;
            return;
        }
        m_owner = next;
        m_pickup = true;
        st().handoffs++;
        e.setBlockedOnWaking(next);
        e.wake(next, false);
        return;
    }
    if (m_handoff && m_c && !m_c->list.empty()) {
        // __mutex_unlock_slowpath() with MUTEX_FLAG_HANDOFF: __mutex_handoff() to the first
        // waiter (owner = it | PICKUP), then wake_up_q(). Spinners see a new owner.
        const int next = list().front();
        m_owner = next;
        m_pickup = true;
        m_handoff = false;
        st().handoffs++;
        for (const auto& c : m_c->cont)
            if (c.phase == Phase::Spinning) e.interruptWork(c.id);
        if (const Contender* n = find(next); !n || n->phase != Phase::Spinning) e.wake(next, false);
        return;
    }
    m_handoff = false;
    m_owner = -1;
    // MUTEX_FLAG_WAITERS: wake the first waiter (it retries, and may find the lock taken again).
    if (const int w = firstWaiter(); w >= 0 && find(w)->phase == Phase::Sleeping) e.wake(w, false);
    // The spinner at the head (the OSQ's, or the first waiter spinning) takes the lock.
    if (const int s = firstSpinner(); s >= 0) e.interruptWork(s);
}

void KMutex::offCpu(Engine& e, int id) {
    if (Contender* c = find(id); c && c->phase == Phase::Spinning) {
        // Preempted while spinning (it saw need_resched()): on the OSQ its next step takes the
        // slow path; a first waiter's loop retries as if woken.
        endPhase(e, *c);
        if (c->onList) c->phase = Phase::Yielded;
        e.interruptWork(id);
    }
    if (id == m_owner && !m_pickup && m_c) {
        for (auto& c : m_c->cont)
            if (c.phase == Phase::Spinning) {
                endPhase(e, c);
                e.interruptWork(c.id);
            }
    }
}

std::vector<int> KMutex::waiters() const { return list(); }

std::vector<int> KMutex::spinners() const {
    std::vector<const Contender*> s;
    for (const auto& c : cont())
        if (c.phase == Phase::Spinning) s.push_back(&c);
    std::sort(s.begin(), s.end(), [](const Contender* a, const Contender* b) { return a->spinOrder < b->spinOrder; });
    std::vector<int> ids;
    for (const Contender* c : s) ids.push_back(c->id);
    return ids;
}

bool KMutex::isSpinning(int id) const {
    const Contender* c = find(id);
    return c && c->phase == Phase::Spinning;
}
bool KMutex::isWaiting(int id) const {
    const Contender* c = find(id);
    return c && c->onList;
}

std::string KMutex::check(const Engine& e) const {
    auto pid = [&](int id) { return e.task(id).t.pid; };
    if (m_owner >= 0) {
        if (e.task(m_owner).state == TaskState::Exited) return fmt::format("mutex owned by pid {}, which exited", pid(m_owner));
        const Contender* o = find(m_owner);
        // (Proxy execution hands the lock to the owner's blocked_donor, which may not be first.)
        if (m_pickup ? (!o || !o->onList || (!e.proxyExec() && firstWaiter() != m_owner)) : o != nullptr)
            return fmt::format("mutex owner pid {} is {}", pid(m_owner),
                               m_pickup ? "handed the lock but not its first waiter" : "also waiting for it");
    } else if (m_pickup || m_handoff) {
        return "a free mutex has HANDOFF or PICKUP set";
    }
    for (const auto& c : cont()) {
        if (c.phase == Phase::Spinning && e.task(c.id).state != TaskState::Running)
            return fmt::format("pid {} spins on the mutex but is not running", pid(c.id));
        if (c.phase == Phase::Sleeping && !c.onList) return fmt::format("pid {} sleeps for the mutex but is not on its wait list", pid(c.id));
        if (c.onList != (std::find(list().begin(), list().end(), c.id) != list().end()))
            return fmt::format("pid {}: the wait list and its waiter disagree", pid(c.id));
    }
    if (list().size() != static_cast<std::size_t>(std::count_if(cont().begin(), cont().end(), [](const Contender& c) { return c.onList; })))
        return "the mutex's wait list holds a task that is not waiting";
    // No lost wakeup: a free lock with waiters has its first waiter woken (it retries when it runs).
    if (m_owner < 0 && !list().empty()) {
        const SimTask& w = e.task(list().front());
        const bool woken = w.state != TaskState::Blocked && !(w.pending == Action::Block && !w.wake_pending);
        if (!woken && firstSpinner() < 0)
            return fmt::format("mutex free with waiters, and its first waiter pid {} sleeps and nobody spins (lost wakeup)", pid(list().front()));
    }
    return {};
}

}  // namespace sched

namespace sched {

void MutexStats::state(StateArchive& ar) {
    ar(acquisitions, contended, spun, slept, handoffs, spin_ns, sleep_ns, hold_ns);
    wait.state(ar);
}

void KMutex::state(StateArchive& ar) {
    ar(m_owner, m_handoff, m_pickup, m_acquiredAt);
    bool contention = m_c != nullptr;
    ar(contention);
    if (ar.loading()) m_c = contention ? std::make_unique<Contention>() : nullptr;
    if (contention) {
        ar.each(m_c->cont, [](StateArchive& a, Contender& c) { a(c.id, c.phase, c.onList, c.slept, c.since, c.phaseSince, c.spinOrder); });
        ar.vec(m_c->list);
        ar(m_c->nextOrder);
    }
    bool own = m_own != nullptr && m_stats == m_own.get();
    ar(own);
    if (own) {
        if (ar.loading()) {
            m_own = std::make_unique<MutexStats>();
            m_stats = m_own.get();
        }
        m_own->state(ar);
    }
}

}  // namespace sched
