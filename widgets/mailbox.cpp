// SPDX-License-Identifier: GPL-2.0-or-later
// mailbox.cpp: see mailbox.h.
#include "mailbox.h"

#include <atomic>

namespace schedlab {

struct Mailbox::State {
    std::mutex m;
    Mailbox* box = nullptr;  ///< null once the mailbox is gone
    std::deque<std::function<void()>> q;
};

Mailbox::Mailbox(QObject* parent) : QObject(parent), m_state(std::make_shared<State>()) { m_state->box = this; }

Mailbox::~Mailbox() {
    std::deque<std::function<void()>> left;  // destroyed after the lock is released
    std::lock_guard<std::mutex> l(m_state->m);
    m_state->box = nullptr;
    left.swap(m_state->q);
}

Mailbox::Handle Mailbox::handle() const {
    Handle h;
    h.m_state = m_state;
    return h;
}

void Mailbox::Handle::post(std::function<void()> f) const {
    std::lock_guard<std::mutex> l(m_state->m);  // held: the mailbox cannot go away meanwhile
    if (!m_state->box) return;
    m_state->q.push_back(std::move(f));
    QMetaObject::invokeMethod(m_state->box, "drain", Qt::QueuedConnection);
}

void Mailbox::drain() {
    std::function<void()> f;
    {
        std::lock_guard<std::mutex> l(m_state->m);
        if (m_state->q.empty()) return;
        f = std::move(m_state->q.front());
        m_state->q.pop_front();
    }
    f();
}

void JobThreads::start(std::function<void()> job) {
    // Reap the finished ones (their threads end right after setting the flag).
    for (auto it = m_jobs.begin(); it != m_jobs.end();) {
        if (it->done->load(std::memory_order_acquire)) {
            it->thread.join();
            it = m_jobs.erase(it);
        } else {
            ++it;
        }
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    m_jobs.push_back({std::thread([job = std::move(job), done]() mutable {
                          job();
                          job = nullptr;
                          done->store(true, std::memory_order_release);
                      }),
                      done});
}

void JobThreads::joinAll() {
    for (auto& e : m_jobs) e.thread.join();
    m_jobs.clear();
}

}  // namespace schedlab
