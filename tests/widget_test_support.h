// SPDX-License-Identifier: GPL-2.0-or-later
// widget_test_support.h: what the widget tests share: their main() (a QApplication on the
// offscreen platform, settings kept apart from the user's) and the wait for a condition.
#pragma once

#include <gtest/gtest.h>

#include <QApplication>
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

/// The widget tests' main(): the offscreen platform, a QApplication whose settings are the
/// tests' own (not the user's), then every test.
inline int runWidgetTests(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("schedlab-test"));  // keep the user's settings out of it
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

}  // namespace schedlab::test
