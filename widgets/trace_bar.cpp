// SPDX-License-Identifier: GPL-2.0-or-later
// trace_bar.cpp: see trace_bar.h.
#include "trace_bar.h"

#include "trace_timeline.h"

#include <QAction>
#include <QFontDatabase>
#include <QGridLayout>
#include <QLabel>
#include <QToolButton>

namespace schedlab {

TraceBar::TraceBar(QWidget* shortcutsOn) : QToolBar(tr("Trace"), shortcutsOn) {
    setObjectName(QStringLiteral("traceBar"));
    setAllowedAreas(Qt::TopToolBarArea | Qt::BottomToolBarArea);  // a timeline is horizontal
    m_timeline = new TraceTimeline(this);
    addWidget(m_timeline);
    // Beside the strip: the cursor, previous / next disagreement, the agreement in numbers.
    auto* side = new QWidget(this);
    auto* g = new QGridLayout(side);
    g->setContentsMargins(6, 0, 4, 0);
    g->setVerticalSpacing(2);
    m_cursor = new QLabel(side);
    m_cursor->setObjectName(QStringLiteral("traceCursor"));
    m_cursor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_agree = new QLabel(side);
    m_agree->setObjectName(QStringLiteral("agreeSummary"));
    m_agree->setWordWrap(true);
    m_agree->setFixedWidth(360);
    m_agree->setToolTip(
        tr("schedlab's wakeup path (baseline knobs) replayed on every placement decision of the trace, "
           "as schedlab-cli agree does: how often it picks the kernel's CPU, overall and on the "
           "decisions the kernel moved away from prev, against always staying on prev"));
    m_prev = new QAction(tr("◀"), this);
    m_prev->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_N));
    m_prev->setToolTip(tr("Previous disagreement (Shift+N)"));
    connect(m_prev, &QAction::triggered, this, [this] { emit stepRequested(-1); });
    m_next = new QAction(tr("▶"), this);
    m_next->setShortcut(Qt::Key_N);
    m_next->setToolTip(tr("Next disagreement (N)"));
    connect(m_next, &QAction::triggered, this, [this] { emit stepRequested(+1); });
    shortcutsOn->addAction(m_prev);  // shortcuts work wherever the focus is
    shortcutsOn->addAction(m_next);
    auto button = [side](QAction* act) {
        auto* b = new QToolButton(side);
        b->setDefaultAction(act);
        b->setAutoRaise(true);
        return b;
    };
    g->addWidget(m_cursor, 0, 0);
    g->addWidget(new QLabel(tr("disagreement"), side), 0, 1, Qt::AlignRight);
    g->addWidget(button(m_prev), 0, 2);
    g->addWidget(button(m_next), 0, 3);
    g->addWidget(m_agree, 1, 0, 1, 4);
    g->setColumnStretch(0, 1);
    side->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);  // the timeline takes the rest of the bar
    addWidget(side);
}

void TraceBar::setCursorText(const QString& text) { m_cursor->setText(text); }

void TraceBar::setAgreementText(const QString& text) { m_agree->setText(text); }

void TraceBar::setStepsEnabled(bool on) {
    m_prev->setEnabled(on);
    m_next->setEnabled(on);
}

}  // namespace schedlab
