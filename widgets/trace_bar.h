// SPDX-License-Identifier: GPL-2.0-or-later
// trace_bar.h: the window's bar below a recorded trace: its timeline (decisions and
// disagreements, zoom, the cursor), the cursor's time, previous / next disagreement (Shift+N / N)
// and the agreement in numbers.
#pragma once

#include <QToolBar>

class QAction;
class QLabel;

namespace schedlab {

class TraceTimeline;

class TraceBar : public QToolBar {
    Q_OBJECT

public:
    /// The N / Shift+N shortcuts are added to `shortcutsOn` (the window) so that they work
    /// wherever the focus is.
    explicit TraceBar(QWidget* shortcutsOn);

    TraceTimeline* timeline() const { return m_timeline; }
    void setCursorText(const QString& text);
    void setAgreementText(const QString& text);
    /// N and Shift+N work only while a trace is shown (they are free keys otherwise).
    void setStepsEnabled(bool on);

signals:
    /// Previous (-1) or next (+1) disagreement asked for.
    void stepRequested(int direction);

private:
    TraceTimeline* m_timeline = nullptr;
    QLabel* m_cursor = nullptr;
    QLabel* m_agree = nullptr;
    QAction* m_prev = nullptr;
    QAction* m_next = nullptr;
};

}  // namespace schedlab
