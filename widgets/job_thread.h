// SPDX-License-Identifier: GPL-2.0-or-later
// job_thread.h: one background thread that runs jobs one at a time (the heatmap's render of a
// frame). The hand-offs are a std::mutex and condition variables, which ThreadSanitizer sees;
// QtConcurrent's go through QThreadPool's QMutex, a bare futex in Debian's uninstrumented Qt,
// so a job's captures, written before it was queued, looked like races to it.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace schedlab {

class JobThread {
public:
    JobThread() : m_thread([this] { loop(); }) {}
    ~JobThread() {
        {
            std::lock_guard<std::mutex> l(m_m);
            m_quit = true;
        }
        m_cv.notify_all();
        m_thread.join();
    }
    JobThread(const JobThread&) = delete;
    JobThread& operator=(const JobThread&) = delete;

    /// Runs `job` on the thread, once the previous one has finished (waits for that).
    void run(std::function<void()> job) {
        std::unique_lock<std::mutex> l(m_m);
        m_done.wait(l, [this] { return !m_job && !m_busy; });
        m_job = std::move(job);
        m_cv.notify_all();
    }
    /// Waits until no job is queued or running: what the job wrote is then the caller's to read.
    void wait() const {
        std::unique_lock<std::mutex> l(m_m);
        m_done.wait(l, [this] { return !m_job && !m_busy; });
    }

private:
    void loop() {
        std::unique_lock<std::mutex> l(m_m);
        for (;;) {
            m_cv.wait(l, [this] { return m_quit || m_job; });
            if (!m_job) return;  // quit, nothing queued
            std::function<void()> job = std::move(m_job);
            m_job = nullptr;
            m_busy = true;
            l.unlock();
            job();
            job = nullptr;  // its captures released here, before it counts as done
            l.lock();
            m_busy = false;
            m_done.notify_all();
        }
    }

    mutable std::mutex m_m;
    mutable std::condition_variable m_cv, m_done;
    std::function<void()> m_job;
    bool m_busy = false, m_quit = false;
    std::thread m_thread;  ///< last: started once the rest exists
};

}  // namespace schedlab
