// SPDX-License-Identifier: GPL-2.0-or-later
// sim_worker.h: the thread that owns the A and B simulations, runs them in lockstep and
// publishes immutable frames; the GUI sends it commands by queued calls and takes the
// newest frame at most 60 times a second (older ones are dropped, never queued).
#pragma once

#include "kernel/knobs.h"
#include "sim/scenario.h"
#include "sim/checkpoint.h"
#include "sim/simulation.h"

#include <QObject>
#include <QThread>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

class QTimer;

namespace schedlab {

class SideThread;

/// What the GUI paints: both sides at one simulated instant.
struct Frame {
    std::shared_ptr<const sched::Snapshot> a, b;  ///< b null when A/B is off
    std::optional<sched::DecisionRecord> traced;  ///< the last wakeup stepped into (side A), with its steps
    std::uint64_t seq = 0;                        ///< increases with every published frame
    bool running = false;                         ///< playing (not paused)
    bool done = false;                            ///< every side finished
    double simNsPerWallS = 0;                     ///< simulated ns per wall-clock second (recent)
    double eventsPerWallS = 0;                    ///< events of both sides per wall-clock second (recent)
};

/// Speed: simulated time per wall-clock second, or as fast as possible (<= 0).
struct Speed {
    double simPerWall = 0;  ///< e.g. 1e-3: one simulated ms per second; <= 0: as fast as possible
};

/// Owns the simulations; lives on its own QThread (see SimController).
class SimWorker : public QObject {
    Q_OBJECT
public:
    SimWorker();
    ~SimWorker() override;

    /// The newest frame (thread-safe; never blocks for more than a pointer swap).
    std::shared_ptr<const Frame> latest() const;
    /// Least wall time between two frames: 60 a second, but 30 while running as fast as possible
    /// (`speed` <= 0) on a machine with fewer than 4 hardware threads, where the window's painting
    /// would take its time from A's and B's threads.
    static qint64 frameIntervalNs(double speed, int hardwareThreads);
    /// How long side A must have been steady before a fast-forward to the steady state stops
    /// (1 s of simulated time, as `reproduce`'s hackbench runs).
    static constexpr std::int64_t kSteadyHoldNs = 1'000'000'000;
    /// Abort flag for a quick shutdown (checked between chunks).
    void requestStop() { m_stop = true; }

    // Commands: call on the worker's thread (SimController::post queues them there).
    /// New run from t = 0: scenario, knobs of A and B (B ignored unless `ab`), seed (0: the scenario's);
    /// `labelA` is side A's Snapshot::label ("simulated" for a run beside a recorded trace).
    void restart(const sched::Scenario& s, const sched::Knobs& a, const sched::Knobs& b, bool ab, quint64 seed, const std::string& labelA = "A");
    void setKnobs(int side, const sched::Knobs& k);
    void play();
    void pause();
    void setSpeed(double simPerWall);
    /// Stop (pause) when simulated time reaches `ns` (0: no stop).
    void setStopAt(qint64 ns);
    void stepEvent();
    void stepWakeup();
    void stepTime(qint64 ns);
    /// Side A only, paused at simulated time `ns`: runs on as fast as possible from where it is, or
    /// starts `s` again from t = 0 (knobs `k`, `seed`) when there is no run or it is already past
    /// `ns` (a simulation beside a recorded trace follows the trace's cursor this way). Publishes.
    void runTo(const sched::Scenario& s, const sched::Knobs& k, quint64 seed, qint64 ns);
    /// Fast-forward: runs both sides as fast as possible to simulated time `ns` without
    /// frames (a progress signal instead, a few times a second), then pauses and publishes.
    /// `untilSteady`: stop once side A's steady-state detector says it has been settled for
    /// kSteadyHoldNs (at most at `ns`): the way to the steady state without knowing when it comes.
    void fastForward(qint64 ns, bool untilSteady = false);
    /// Publishes a frame now (e.g. after a resize, or for a screenshot).
    void publishNow();
    /// "B from here" (`into` 1) or "A from here" (0): that side is replaced by a copy of the other
    /// side's state now (Simulation::copyOf: the same digest) with its own knobs from here on,
    /// marked "branched from A (B)". Paused; error() when A/B is off.
    void branch(int into);
    /// The window's state: side A's checkpoint with side B's inside it ("" without a run).
    std::string stateBytes();
    /// Writes stateBytes() to `path` (atomically); stateSaved() says how it went.
    void saveState(const std::string& path);
    /// Both sides from checkpoints, paused: A from `a`; B from `b`, or without one (a checkpoint
    /// of the command line's) a copy of A with `bKnobs` when `ab`. stateRestored() says how it went.
    void restoreState(std::shared_ptr<const sched::Checkpoint> a, std::shared_ptr<const sched::Checkpoint> b, const sched::Knobs& bKnobs, bool ab);
    /// A command for the worker's thread, from any thread: queued in order (SimController::post).
    /// The job goes through a std::mutex-guarded queue and a call without arguments wakes the
    /// worker (runPosted), so the hand-off is one ThreadSanitizer sees; a lambda carried by Qt's
    /// event queue would cross threads under a QMutex, which it cannot see.
    void enqueue(std::function<void(SimWorker&)> job);
    /// Runs the oldest job enqueue()d (one per call; enqueue() queues one call per job).
    Q_INVOKABLE void runPosted();
    /// The CLI's compare table of the run so far (A/B on), answered with compareTextReady.
    void requestCompareText();
    /// Side A's (0) or B's (1) runqueue lengths so far as the seed's bpftrace CSV (`run --csv`'s
    /// rqlen50-bpftrace.csv); "" without that side. On the worker's thread.
    std::string rqlenCsv(int side) const;

signals:
    /// A new frame is available from latest() (coalesced: emitted at most once until the GUI reads it).
    void frameReady();
    /// The answer to requestCompareText ("" when A/B is off).
    void compareTextReady(const QString& text);
    /// A command failed (bad knobs); one line.
    void error(const QString& message);
    /// During a fast-forward: side A's simulated time, the target, simulated ns per wall second.
    /// `done`: the fast-forward ended (reached, finished or paused); a frame follows.
    /// `steadyFrom`: where A's steady state began by its detector's verdict so far (-1: none yet,
    /// or drifting); a fast-forward to the steady state ends once A has held it kSteadyHoldNs.
    void fastForwardProgress(qint64 now, qint64 target, double simNsPerWallS, bool done, qint64 steadyFrom);
    /// branch() ended: the frame numbered `seq` (Frame::seq) shows it; `ok` false when it failed.
    void branched(quint64 seq, bool ok);
    /// saveState() wrote `path` (`error` empty) or failed (one line).
    void stateSaved(const QString& path, const QString& error);
    /// restoreState() ended: a frame follows when `ok`.
    void stateRestored(bool ok, const QString& error, quint64 seq);

private:
    std::mutex m_jobsMutex;
    std::deque<std::function<void(SimWorker&)>> m_jobs;  ///< enqueue()d, oldest first
    void tick();
    void endFastForward();
    /// A's steady state's start by its detector so far, -1 when none (or drifting).
    qint64 steadyFrom() const;
    void ensureTimer();
    void resetRates();
    static sched::SimOptions sideOptions(const sched::Scenario& s);
    void publish();
    void syncB();
    bool chunk(std::int64_t ns);

    std::unique_ptr<sched::Simulation> m_a, m_b;
    std::unique_ptr<SideThread> m_bThread;  ///< B's own thread: each chunk, B advances while A does
    qint64 m_ffTarget = -1;                 ///< fast-forward target (-1: none)
    bool m_ffSteady = false;                ///< the fast-forward stops once A is steady
    std::int64_t m_ffSteadyCheck = 0;       ///< the next simulated time to ask A's detector (every 10 ms)
    qint64 m_ffWall0 = 0, m_ffLastProgress = 0;
    double m_ffPrevSpeed = 0;
    std::int64_t m_ffSim0 = 0;
    std::optional<sched::DecisionRecord> m_traced;
    QTimer* m_timer = nullptr;
    bool m_running = false;
    double m_speed = 0;
    std::int64_t m_stopAt = 0;
    std::int64_t m_playSim0 = 0;
    qint64 m_playWall0 = 0;
    qint64 m_lastPublish = -1000;
    std::uint64_t m_seq = 0;
    // rate measurement
    qint64 m_rateWall0 = 0;
    std::int64_t m_rateSim0 = 0;
    std::uint64_t m_rateEv0 = 0;
    double m_simRate = 0, m_evRate = 0;
    mutable std::mutex m_mutex;
    std::shared_ptr<const Frame> m_latest;
    std::atomic<bool> m_notified{false};
    std::atomic<bool> m_stop{false};
    friend class SimController;
};

/// Starts the worker on its own thread and stops it cleanly (abort flag, quit, wait).
class SimController : public QObject {
    Q_OBJECT
public:
    explicit SimController(QObject* parent = nullptr);
    ~SimController() override;
    SimWorker* worker() const { return m_worker; }
    /// Runs `fn(worker)` on the worker's thread, after the commands already queued.
    template <class F>
    void post(F fn) {
        if (!m_thread.isRunning()) return;  // shut down: the worker is gone
        m_worker->enqueue(std::function<void(SimWorker&)>(std::move(fn)));
    }
    /// The newest frame, or null (also after shutdown); marks it read so the next frameReady is emitted.
    std::shared_ptr<const Frame> take();
    void shutdown();

signals:
    void frameReady();

private:
    QThread m_thread;
    SimWorker* m_worker = nullptr;
};

}  // namespace schedlab
