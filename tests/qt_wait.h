// SPDX-License-Identifier: GPL-2.0-or-later
// qt_wait.h: the widget tests' wait: run the event loop until a condition holds.
#pragma once

#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <functional>

namespace schedlab::test {

/// Runs the event loop in 5-ms turns until `pred` holds (true) or `ms` of wall time have passed (false).
inline bool waitFor(const std::function<bool()>& pred, qint64 ms) {
    QElapsedTimer t;
    t.start();
    while (!pred()) {
        if (t.elapsed() > ms) return false;
        QEventLoop loop;
        QTimer::singleShot(5, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return true;
}

}  // namespace schedlab::test
