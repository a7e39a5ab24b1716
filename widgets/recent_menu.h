// SPDX-License-Identifier: GPL-2.0-or-later
// recent_menu.h: File > Open recent: the last scenario files opened or saved, newest first, kept
// in QSettings ("recentFiles") across runs.
#pragma once

#include <QMenu>
#include <QString>

namespace schedlab {

class RecentMenu : public QMenu {
    Q_OBJECT

public:
    static constexpr int kMax = 8;  ///< files kept
    RecentMenu(const QString& title, QWidget* parent);
    /// `path` goes first (once; the oldest beyond kMax drop off), in the settings and the menu.
    void add(const QString& path);

signals:
    /// A file was picked from the menu.
    void picked(const QString& path);

private:
    void rebuild();
};

}  // namespace schedlab
