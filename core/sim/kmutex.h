// SPDX-License-Identifier: GPL-2.0-or-later
// kmutex.h: struct mutex as kernel/locking/mutex.c (Linux 6.1) has it, for the simulated
// tasks: the owner word with its MUTEX_FLAG_WAITERS / HANDOFF / PICKUP flags, the FIFO
// wait list, optimistic spinning on a running owner (the OSQ), and the handoff to a
// first waiter that found it taken after a wakeup. Workloads take it where the kernel code they model takes one.
//
// How a task uses it, in its workload's step():
//   switch (m.lock(e, id)) {
//   case KMutex::Lock::Acquired: ...the critical section: return Action::run(hold);
//   case KMutex::Lock::Spin: return KMutex::spin();   // step() runs again when it should retry
//   case KMutex::Lock::Sleep: return Action::block(); // step() runs again when unlock wakes it
//   }
// and m.unlock(e, id) at the end of the critical section. A spinner's step() runs again
// (its work is interrupted, Engine::interruptWork) when the owner lets go, when the owner
// leaves its CPU, or — at its next run — when it was preempted while spinning; it then calls
// lock() again, which picks up where mutex_lock() was. The workload forwards its offCpu()
// for the tasks concerned to offCpu() here.
//
// What is not modelled: the time a spinner takes to see the owner change (cpu_relax()
// loops; the hand-over is instantaneous); when the owner leaves its CPU, every spinner gives
// up at once (in 6.1 the OSQ's head notices and the others follow as each becomes head, a
// few nanoseconds apart). A spinner sees need_resched() when its CPU acts on it (the resched
// IPI's delay), not when the flag is written. (A woken first waiter that spins has set
// MUTEX_FLAG_HANDOFF first, so the next unlock hands it the lock: it never races the OSQ.)
#pragma once

#include "util/histogram.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sched {

class StateArchive;

class Engine;

/// What a mutex did over a run (the workload's report prints it).
struct MutexStats {
    std::int64_t acquisitions = 0;  ///< mutex_lock() calls that returned
    std::int64_t contended = 0;     ///< of those, the ones that found the lock taken (slow path)
    std::int64_t spun = 0;          ///< acquisitions by optimistic spinning (never slept)
    std::int64_t slept = 0;         ///< acquisitions after sleeping on the wait list
    std::int64_t handoffs = 0;      ///< unlocks that handed the lock to the first waiter (MUTEX_FLAG_HANDOFF)
    std::int64_t spin_ns = 0;       ///< time spent spinning (CPU time: a spinner runs)
    std::int64_t sleep_ns = 0;      ///< time from going to sleep on the wait list to acquiring
    std::int64_t hold_ns = 0;       ///< time held (acquire to unlock)
    LatencyHistogram wait;          ///< contended acquisitions: from mutex_lock() to owning it
    void merge(const MutexStats& o);
    void state(StateArchive& ar);
};

class KMutex {
public:
    enum class Lock : std::uint8_t {
        Acquired,  ///< the caller owns the lock
        Spin,      ///< spinning on a running owner: step() returns spin()
        Sleep,     ///< on the wait list: step() returns Action::block()
        Yield,     ///< need_resched(): schedule() as a preemption (step() returns Action::run(0)); it goes on when it runs again
    };
    /// What a spinner's step() returns: CPU work that only an interruption ends.
    static constexpr std::int64_t kSpinNs = std::int64_t(1) << 46;

    /// mutex_lock() by the stepping task `id`, or its retry (after a wakeup, or after its
    /// spinning ended). Sets the owner's and the spinners' watch_off_cpu.
    Lock lock(Engine& e, int id);
    /// mutex_unlock() by the owner `id` (the stepping task).
    void unlock(Engine& e, int id);
    /// `id` left its CPU (Workload::offCpu): a spinner stops spinning (mutex_spin_on_owner()'s
    /// need_resched() or its own preemption); an owner's spinners stop (owner_on_cpu() false).
    void offCpu(Engine& e, int id);

    /// Exact coalescing applies a planned (uncontended) mutex_lock() or mutex_unlock() later,
    /// at its own time `t`: the lock must be free and nobody in mutex_lock() for the first,
    /// owned by `id` with nobody in mutex_lock() for the second (the workload's plan made sure).
    void fastLock(Engine& e, int id, std::int64_t t);
    void fastUnlock(Engine& e, int id, std::int64_t t);
    /// Nobody is in mutex_lock() (spinning, asleep or about to retry).
    bool uncontended() const { return !m_c || m_c->cont.empty(); }
    /// Where its figures go: a workload with many mutexes (a pipe each) sums them in one
    /// MutexStats; without one the mutex keeps its own.
    void setStats(MutexStats* s) { m_stats = s; }
    /// Give the contenders' lists back to the allocator whenever nobody contends (many
    /// mutexes, most of them idle: bounded memory, at the price of an allocation per episode).
    void setCompact(bool on) { m_compact = on; }

    /// The owner (a task id), -1 when free. With a pending handoff (PICKUP) the waiter it was
    /// handed to, which takes it when it runs.
    int owner() const { return m_owner; }
    bool pickup() const { return m_pickup; }
    bool handoff() const { return m_handoff; }
    /// The wait list, first waiter first (task ids).
    std::vector<int> waiters() const;
    /// The spinners in the order they take the lock (task ids).
    std::vector<int> spinners() const;
    /// Whether `id` is spinning, waiting (on the list), or neither.
    bool isSpinning(int id) const;
    bool isWaiting(int id) const;
    const MutexStats& stats() const {
        static const MutexStats none;
        return m_stats ? *m_stats : none;
    }
    /// The mutex's own rules, checked against the engine's task states; "" when they hold:
    /// one owner; a free lock with waiters has its first waiter woken or someone spinning;
    /// spinners run; nobody both owns and waits.
    std::string check(const Engine& e) const;
    /// Saves or restores the lock (owner, flags, contenders and wait list) and, when it keeps
    /// its own figures, those (checkpoints); setStats() and setCompact() are the owner's to redo.
    void state(StateArchive& ar);

private:
    enum class Phase : std::uint8_t {
        Spinning,    ///< mutex_optimistic_spin(): on the OSQ, or as the woken first waiter (on the list)
        SpinFailed,  ///< its spinning ended because the owner or it left its CPU: the slow path's trylock comes next
        Sleeping,    ///< on the wait list, asleep or woken and not yet retried
        Yielded,     ///< it saw need_resched() where it would spin and was preempted: a waiter retries as if woken, else the slow path
    };
    struct Contender {
        int id = -1;
        Phase phase = Phase::Spinning;
        bool onList = false;          ///< on the wait list (__mutex_add_waiter())
        bool slept = false;           ///< it went to sleep at least once in this mutex_lock()
        std::int64_t since = 0;       ///< when its mutex_lock() found the lock taken
        std::int64_t phaseSince = 0;  ///< when its spinning or sleeping began
        std::int64_t spinOrder = 0;   ///< spinners take the lock in this order
    };
    Contender* find(int id);
    const Contender* find(int id) const;
    void erase(int id);
    bool ownerOnCpu(const Engine& e) const;
    void acquire(Engine& e, int id, const Contender* c);
    Lock spinOrSleep(Engine& e, Contender& c, bool woken, bool wasSpinning);
    Lock sleep(Engine& e, Contender& c);
    void endPhase(Engine& e, Contender& c);
    void watch(Engine& e, int id, int delta);
    int firstWaiter() const;
    int firstSpinner() const;

    // The tasks in mutex_lock() that found it taken, and the wait list (FIFO), only while some
    // task contends (the uncontended mutex is a few words: a pipe has one).
    struct Contention {
        std::vector<Contender> cont;
        std::vector<int> list;
        std::int64_t nextOrder = 0;
    };
    std::vector<Contender>& cont() {
        if (!m_c) m_c = std::make_unique<Contention>();
        return m_c->cont;
    }
    const std::vector<Contender>& cont() const {
        static const std::vector<Contender> none;
        return m_c ? m_c->cont : none;
    }
    std::vector<int>& list() {
        if (!m_c) m_c = std::make_unique<Contention>();
        return m_c->list;
    }
    const std::vector<int>& list() const {
        static const std::vector<int> none;
        return m_c ? m_c->list : none;
    }
    MutexStats& st() {
        if (!m_stats) {
            m_own = std::make_unique<MutexStats>();
            m_stats = m_own.get();
        }
        return *m_stats;
    }

    int m_owner = -1;
    bool m_handoff = false;  ///< MUTEX_FLAG_HANDOFF: the next unlock hands the lock to the first waiter
    bool m_pickup = false;   ///< MUTEX_FLAG_PICKUP: handed to m_owner, which has not taken it yet
    bool m_compact = false;
    std::int64_t m_acquiredAt = 0;
    std::unique_ptr<Contention> m_c;
    MutexStats* m_stats = nullptr;
    std::unique_ptr<MutexStats> m_own;
};

}  // namespace sched
