// SPDX-License-Identifier: GPL-2.0-or-later
// recent_menu.cpp: see recent_menu.h.
#include "recent_menu.h"

#include <QFileInfo>
#include <QSettings>

namespace schedlab {

namespace {
const QString kKey = QStringLiteral("recentFiles");
}

RecentMenu::RecentMenu(const QString& title, QWidget* parent) : QMenu(title, parent) { rebuild(); }

void RecentMenu::add(const QString& path) {
    QSettings st;
    QStringList r = st.value(kKey).toStringList();
    r.removeAll(path);
    r.prepend(path);
    while (r.size() > kMax) r.removeLast();
    st.setValue(kKey, r);
    rebuild();
}

void RecentMenu::rebuild() {
    clear();
    const QStringList r = QSettings().value(kKey).toStringList();
    for (const QString& p : r) addAction(QFileInfo(p).fileName(), this, [this, p] { emit picked(p); });
    setEnabled(!r.isEmpty());
}

}  // namespace schedlab
