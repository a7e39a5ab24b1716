// SPDX-License-Identifier: GPL-2.0-or-later
// mailbox.h: work handed from any thread to the thread of a QObject (a background job's result to
// the GUI thread) through a std::mutex, which ThreadSanitizer sees. Qt's own queued calls carry a
// lambda's captures under a QMutex, a bare futex in Debian's uninstrumented Qt that it cannot see;
// here Qt only carries a call without arguments (drain), the work goes through the mutex.
#pragma once

#include <QObject>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace schedlab {

class Mailbox : public QObject {
    Q_OBJECT
public:
    explicit Mailbox(QObject* parent = nullptr);
    ~Mailbox() override;

    struct State;
    /// What a worker thread keeps: post() runs `f` later on the mailbox's thread, or not at all
    /// once the mailbox is gone.
    class Handle {
    public:
        void post(std::function<void()> f) const;

    private:
        friend class Mailbox;
        std::shared_ptr<State> m_state;
    };
    Handle handle() const;

private:
    Q_INVOKABLE void drain();  ///< runs the oldest posted work (one per post)
    std::shared_ptr<State> m_state;
};

/// Background jobs each on a thread of its own, joined when they are done (reaped at the next
/// start) or in the destructor; for jobs that watch a cancel flag.
class JobThreads {
public:
    JobThreads() = default;
    ~JobThreads() { joinAll(); }
    JobThreads(const JobThreads&) = delete;
    JobThreads& operator=(const JobThreads&) = delete;
    /// Starts `job` on a new thread (joining the threads already finished first).
    void start(std::function<void()> job);
    /// Waits for every job (their cancel flags should be set first).
    void joinAll();

private:
    struct Entry {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::vector<Entry> m_jobs;
};

}  // namespace schedlab
