// SPDX-License-Identifier: GPL-2.0-or-later
// sim_worker.cpp: the simulation thread. Runs A and B in lockstep in short chunks from a
// zero-interval timer, so queued commands are served between chunks, and publishes frames.
#include "sim_worker.h"

#include "sim/report.h"
#include "util/output_files.h"

#include <QElapsedTimer>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <thread>

namespace schedlab {
namespace {

qint64 wallNs() {
    static QElapsedTimer clock = [] {
        QElapsedTimer t;
        t.start();
        return t;
    }();
    return clock.nsecsElapsed();
}

constexpr qint64 kSliceNs = 8'000'000;   ///< wall time per tick before serving commands
constexpr qint64 kFrameNs = 16'666'667;  ///< at most 60 frames a second
// Running as fast as possible on a machine with fewer than 4 hardware threads, the window's
// painting (GUI thread and the heatmaps' pool, about 0.75 of a core at 45 frames a second on
// the 384-CPU default) takes its time from A's and B's threads: then at most 30 frames a
// second, and the simulation gets the difference (bench_gui BM_Throughput/1, 2-core VM:
// 32 -> 38 simulated ms per second, medians of 5). Paced runs and machines with cores to spare keep 60.
constexpr qint64 kFastFrameNs = 33'333'333;
const int kHardwareThreads = QThread::idealThreadCount();

constexpr std::int64_t kChunkSimNs = 200'000;  ///< lockstep granularity (simulated)

}  // namespace

// A thread that runs one job at a time for the worker (side B's chunk while A runs its own):
// start() hands it the job, wait() returns when it is done (and rethrows what it threw).
class SideThread {
public:
    SideThread() : m_thread([this] { loop(); }) {}
    ~SideThread() {
        {
            std::lock_guard<std::mutex> l(m_m);
            m_quit = true;
        }
        m_cv.notify_all();
    }  // m_thread (declared last) joins first
    void start(std::function<void()> job) {
        {
            std::lock_guard<std::mutex> l(m_m);
            m_job = std::move(job);
            m_busy = true;
        }
        m_cv.notify_all();
    }
    void wait() {
        std::unique_lock<std::mutex> l(m_m);
        m_cv.wait(l, [this] { return !m_busy; });
        if (m_error) std::rethrow_exception(std::exchange(m_error, nullptr));
    }

private:
    void loop() {
        std::unique_lock<std::mutex> l(m_m);
        for (;;) {
            m_cv.wait(l, [this] { return m_busy || m_quit; });
            if (m_quit) return;
            std::function<void()> job = std::move(m_job);
            l.unlock();
            std::exception_ptr err;
            try {
                job();
            } catch (...) {
                err = std::current_exception();
            }
            l.lock();
            m_error = err;
            m_busy = false;
            m_cv.notify_all();
        }
    }
    std::mutex m_m;
    std::condition_variable m_cv;
    std::function<void()> m_job;
    std::exception_ptr m_error;
    bool m_busy = false, m_quit = false;
    std::jthread m_thread;
};

SimWorker::SimWorker() = default;
SimWorker::~SimWorker() {
    // Jobs never run are destroyed here, taken out under the lock that queued them.
    std::deque<std::function<void(SimWorker&)>> left;
    std::lock_guard<std::mutex> lock(m_jobsMutex);
    left.swap(m_jobs);
}

void SimWorker::enqueue(std::function<void(SimWorker&)> job) {
    {
        std::lock_guard<std::mutex> lock(m_jobsMutex);
        m_jobs.push_back(std::move(job));
    }
    QMetaObject::invokeMethod(this, "runPosted", Qt::QueuedConnection);
}

void SimWorker::runPosted() {
    std::function<void(SimWorker&)> job;
    {
        std::lock_guard<std::mutex> lock(m_jobsMutex);
        if (m_jobs.empty()) return;
        job = std::move(m_jobs.front());
        m_jobs.pop_front();
    }
    job(*this);
}

std::shared_ptr<const Frame> SimWorker::latest() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_latest;
}

void SimWorker::restart(const sched::Scenario& s, const sched::Knobs& a, const sched::Knobs& b, bool ab, quint64 seed, const std::string& labelA) {
    ensureTimer();
    if (m_a) endFastForward();
    const sched::SimOptions o = sideOptions(s);
    m_a = std::make_unique<sched::Simulation>(s, a, labelA, o, seed);
    m_b = ab ? std::make_unique<sched::Simulation>(s, b, "B", o, seed) : nullptr;
    resetRates();
    publish();
}

void SimWorker::ensureTimer() {
    if (m_timer) return;
    m_timer = new QTimer(this);
    m_timer->setInterval(0);
    connect(m_timer, &QTimer::timeout, this, &SimWorker::tick);
}

sched::SimOptions SimWorker::sideOptions(const sched::Scenario& s) {
    sched::SimOptions o;
    const int n = s.topo->nrCpus();
    o.sample_period_ns = 100'000;
    o.sample_rows = std::size_t(std::clamp(400'000 / std::max(n, 1), 200, 2000));
    return o;
}

void SimWorker::resetRates() {
    m_traced.reset();
    m_playSim0 = m_a ? m_a->now() : 0;
    m_playWall0 = wallNs();
    m_rateWall0 = wallNs();
    m_rateSim0 = m_playSim0;
    m_rateEv0 = m_a ? m_a->engine().events() + (m_b ? m_b->engine().events() : 0) : 0;
    m_simRate = m_evRate = 0;
}

void SimWorker::setKnobs(int side, const sched::Knobs& k) {
    sched::Simulation* s = side == 0 ? m_a.get() : m_b.get();
    if (s) s->setKnobs(k);
    publish();
}

void SimWorker::play() {
    if (!m_a) return;
    m_running = true;
    m_playSim0 = m_a->now();
    m_playWall0 = wallNs();
    m_timer->start();
}

void SimWorker::pause() {
    m_running = false;
    if (m_timer) m_timer->stop();
    if (m_a) endFastForward();
    publish();
}

void SimWorker::setSpeed(double simPerWall) {
    m_speed = simPerWall;
    if (m_a) {
        m_playSim0 = m_a->now();
        m_playWall0 = wallNs();
    }
}

void SimWorker::setStopAt(qint64 ns) { m_stopAt = ns; }

void SimWorker::syncB() {
    if (!m_a || !m_b) return;
    if (m_a->done()) return;
    if (m_b->now() < m_a->now()) m_b->advance(m_a->now() - m_b->now());
}

bool SimWorker::chunk(std::int64_t ns) {
    if (!m_a) return false;
    const bool aDone = m_a->done();
    static const bool kTwoCores = std::thread::hardware_concurrency() > 1;  // glibc reads /sys for it: once
    if (m_b && !aDone && !m_b->done() && kTwoCores) {
        // B on its own thread, to where A is going (its run does not depend on how it is
        // chunked; when A finishes inside this chunk, B ends the chunk a little ahead of it).
        if (!m_bThread) m_bThread = std::make_unique<SideThread>();
        sched::Simulation* b = m_b.get();
        const std::int64_t target = m_a->now() + ns;
        m_bThread->start([b, target] {
            if (b->now() < target) b->advance(target - b->now());
        });
        m_a->advance(ns);
        m_bThread->wait();
        return !(m_a->done() && m_b->done());
    }
    if (!aDone) m_a->advance(ns);
    if (m_b) {
        if (aDone) m_b->advance(ns);
        else syncB();
    }
    return !(m_a->done() && (!m_b || m_b->done()));
}

void SimWorker::stepEvent() {
    if (!m_a) return;
    if (!m_a->done()) m_a->stepEvent();
    else if (m_b) m_b->stepEvent();
    syncB();
    publish();
}

void SimWorker::stepWakeup() {
    if (!m_a) return;
    if (m_a->stepWakeup() && m_a->lastTraced()) m_traced = *m_a->lastTraced();
    syncB();
    publish();
}

void SimWorker::stepTime(qint64 ns) {
    chunk(ns);
    publish();
}

void SimWorker::tick() {
    if (!m_a || !m_running || m_stop) return;
    const qint64 start = wallNs();
    bool more = true;
    while (more && !m_stop && wallNs() - start < kSliceNs) {
        std::int64_t ns = kChunkSimNs;
        if (m_speed > 0) {
            const std::int64_t target = m_playSim0 + std::int64_t(m_speed * double(wallNs() - m_playWall0));
            if (target <= m_a->now()) break;  // ahead of the clock: wait for the next tick
            ns = std::min(ns, target - m_a->now());
        }
        if (m_stopAt > 0) ns = std::min(ns, std::max<std::int64_t>(m_stopAt - m_a->now(), 0));
        if (ns > 0) more = chunk(ns);
        if (m_stopAt > 0 && m_a->now() >= m_stopAt) {
            m_running = false;
            break;
        }
        // To the steady state: ask A's detector every 10 ms whether A has held its steady
        // state for a second (reproduce's rule: a plateau the job later leaves, such as the
        // seed hackbench's one socket from 0.46 to 1.00 s, does not count).
        if (m_ffSteady && m_a->now() >= m_ffSteadyCheck) {
            m_ffSteadyCheck = m_a->now() + 10'000'000;
            if (sched::steadyHeld(m_a->engine(), kSteadyHoldNs)) {
                m_running = false;
                break;
            }
        }
    }
    if (!more) m_running = false;
    if (!m_running) {
        m_timer->stop();
        endFastForward();
        publish();
        return;
    }
    if (m_ffTarget >= 0) {  // fast-forward: progress only, no frames
        const qint64 w = wallNs();
        if (w - m_ffLastProgress >= 200'000'000) {
            m_ffLastProgress = w;
            const double dt = double(w - m_ffWall0) / 1e9;
            emit fastForwardProgress(m_a->now(), m_ffTarget, dt > 0 ? double(m_a->now() - m_ffSim0) / dt : 0.0, false, steadyFrom());
        }
        return;
    }
    if (m_speed > 0 && m_timer->interval() == 0) m_timer->setInterval(4);  // real-time pacing: no busy loop
    if (m_speed <= 0 && m_timer->interval() != 0) m_timer->setInterval(0);
    // No snapshots the GUI would drop: publish only once it has taken the previous frame.
    if (wallNs() - m_lastPublish >= frameIntervalNs(m_speed, kHardwareThreads) && !m_notified) publish();
}

void SimWorker::publishNow() { publish(); }

qint64 SimWorker::steadyFrom() const {
    if (!m_a) return -1;
    const sched::SteadyResult r = m_a->engine().metrics().steady.result();
    return r.reached && !r.drifting && r.from_ns >= 0 ? r.from_ns : -1;
}

qint64 SimWorker::frameIntervalNs(double speed, int hardwareThreads) { return speed <= 0 && hardwareThreads < 4 ? kFastFrameNs : kFrameNs; }

void SimWorker::fastForward(qint64 ns, bool untilSteady) {
    if (!m_a) return;
    m_ffSteady = untilSteady;
    m_ffSteadyCheck = 0;
    if (m_a->now() >= ns || (m_a->done() && (!m_b || m_b->done()))) {
        emit fastForwardProgress(m_a->now(), ns, 0.0, true, steadyFrom());
        publish();
        return;
    }
    m_ffTarget = ns;
    m_ffWall0 = m_ffLastProgress = wallNs();
    m_ffSim0 = m_a->now();
    m_ffPrevSpeed = m_speed;
    m_speed = 0;
    m_stopAt = ns;
    play();
}

void SimWorker::branch(int into) {
    sched::Simulation* src = into == 1 ? m_a.get() : m_b.get();
    std::unique_ptr<sched::Simulation>& dst = into == 1 ? m_b : m_a;
    if (!src || !dst) {
        emit error(tr("B from here: needs A and B"));
        emit branched(m_seq, false);
        return;
    }
    pause();
    const sched::Knobs knobs = dst->knobs();
    const char* from = into == 1 ? "A" : "B";
    std::unique_ptr<sched::Simulation> sim;
    try {
        sim = sched::Simulation::copyOf(*src, into == 1 ? "B" : "A");
    } catch (const std::exception& e) {
        emit error(tr("B from here: %1").arg(QString::fromUtf8(e.what())));
        emit branched(m_seq, false);
        return;
    }
    sim->addMark(std::string("branched from ") + from);
    sim->setKnobs(knobs);
    dst = std::move(sim);
    publish();
    emit branched(m_seq, true);
}

std::string SimWorker::stateBytes() {
    if (!m_a) return {};
    return m_a->checkpoint(m_b ? m_b->checkpoint() : std::string());
}

void SimWorker::saveState(const std::string& path) {
    try {
        const std::string bytes = stateBytes();
        if (bytes.empty()) throw std::runtime_error("no run to save");
        sched::writeFileAtomic(path, bytes);
        emit stateSaved(QString::fromStdString(path), QString());
    } catch (const std::exception& e) {
        emit stateSaved(QString::fromStdString(path), QString::fromUtf8(e.what()));
    }
}

void SimWorker::restoreState(std::shared_ptr<const sched::Checkpoint> a, std::shared_ptr<const sched::Checkpoint> b, const sched::Knobs& bKnobs,
                             bool ab) {
    ensureTimer();
    if (m_a) endFastForward();
    pause();
    try {
        const sched::SimOptions o = sideOptions(a->scenario);
        auto sa = sched::Simulation::fromCheckpoint(*a, "A", o);
        std::unique_ptr<sched::Simulation> sb;
        if (b) {
            sb = sched::Simulation::fromCheckpoint(*b, "B", o);
        } else if (ab) {
            sb = sched::Simulation::copyOf(*sa, "B");
            sb->addMark("branched from A");
            sb->setKnobs(bKnobs);
        }
        m_a = std::move(sa);
        m_b = std::move(sb);
    } catch (const std::exception& e) {
        emit stateRestored(false, QString::fromUtf8(e.what()), m_seq);
        return;
    }
    resetRates();
    publish();
    emit stateRestored(true, QString(), m_seq);
}

void SimWorker::endFastForward() {
    m_ffSteady = false;
    if (m_ffTarget < 0) return;
    const double dt = double(wallNs() - m_ffWall0) / 1e9;
    const qint64 target = std::exchange(m_ffTarget, -1);
    m_stopAt = 0;
    m_speed = m_ffPrevSpeed;  // the speed chosen before, for the next play
    emit fastForwardProgress(m_a->now(), target, dt > 0 ? double(m_a->now() - m_ffSim0) / dt : 0.0, true, steadyFrom());
}

void SimWorker::runTo(const sched::Scenario& s, const sched::Knobs& k, quint64 seed, qint64 ns) {
    if (!m_a || m_b || m_a->now() > ns) restart(s, k, k, false, seed, "simulated");  // shown beside a trace, as its side B
    if (m_a->now() >= ns || m_a->done()) {
        m_running = false;
        if (m_timer) m_timer->stop();
        publish();
        return;
    }
    m_speed = 0;
    m_stopAt = ns;
    play();
}

void SimWorker::requestCompareText() {
    QString text;
    if (m_a && m_b) text = QString::fromStdString(sched::compareTable(m_a->scenario(), m_a->result(), m_b->result()));
    emit compareTextReady(text);
}

std::string SimWorker::rqlenCsv(int side) const {
    const sched::Simulation* sim = side == 0 ? m_a.get() : m_b.get();
    return sim ? sched::bpftraceRqlenCsv(sim->result()) : std::string();
}

void SimWorker::publish() {
    if (!m_a) return;
    auto f = std::make_shared<Frame>();
    f->a = std::make_shared<const sched::Snapshot>(m_a->snapshot());
    if (m_b) f->b = std::make_shared<const sched::Snapshot>(m_b->snapshot());
    f->traced = m_traced;
    f->seq = ++m_seq;
    f->running = m_running;
    f->done = m_a->done() && (!m_b || m_b->done());
    // Rates over the last half second or more.
    const qint64 now = wallNs();
    const std::uint64_t ev = m_a->engine().events() + (m_b ? m_b->engine().events() : 0);
    if (now - m_rateWall0 >= 500'000'000 || !m_running) {
        const double dt = double(now - m_rateWall0) / 1e9;
        if (dt > 0 && m_running) {
            m_simRate = double(m_a->now() - m_rateSim0) / dt;
            m_evRate = double(ev - m_rateEv0) / dt;
        }
        m_rateWall0 = now;
        m_rateSim0 = m_a->now();
        m_rateEv0 = ev;
    }
    f->simNsPerWallS = m_running ? m_simRate : 0;
    f->eventsPerWallS = m_running ? m_evRate : 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_latest = std::move(f);
    }
    m_lastPublish = wallNs();
    if (!m_notified.exchange(true)) emit frameReady();
}

// ---------------------------------------------------------------------------

SimController::SimController(QObject* parent) : QObject(parent) {
    m_worker = new SimWorker;
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &SimWorker::frameReady, this, &SimController::frameReady, Qt::QueuedConnection);
    m_thread.setObjectName(QStringLiteral("schedlab-sim"));
    m_thread.start();
}

SimController::~SimController() { shutdown(); }

std::shared_ptr<const Frame> SimController::take() {
    if (!m_thread.isRunning()) return {};
    m_worker->m_notified = false;
    return m_worker->latest();
}

void SimController::shutdown() {
    if (!m_thread.isRunning()) return;
    m_worker->requestStop();
    m_thread.quit();
    m_thread.wait();
}

}  // namespace schedlab
