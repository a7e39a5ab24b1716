// SPDX-License-Identifier: GPL-2.0-or-later
// run_bar.cpp: see run_bar.h.
#include "run_bar.h"

#include "kernel/knobs.h"

#include <QAction>
#include <QComboBox>
#include <QFontDatabase>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>

#include <cmath>
#include <iterator>
#include <utility>
#include <vector>

namespace schedlab {
namespace {

struct SpeedChoice {
    const char* label;
    double simPerWall;  ///< simulated s per wall s; <= 0: as fast as possible
};
constexpr SpeedChoice kSpeeds[] = {
    {"1 µs/s", 1e-6},  {"10 µs/s", 1e-5},  {"100 µs/s", 1e-4}, {"1 ms/s", 1e-3},
    {"10 ms/s", 1e-2}, {"100 ms/s", 1e-1}, {"real time", 1.0}, {"as fast as possible", 0},
};
constexpr int kDefaultSpeed = 7;

}  // namespace

RunBar::RunBar(QWidget* parent) : QToolBar(tr("Run"), parent) {
    setObjectName(QStringLiteral("runToolbar"));
    m_play = addAction(tr("▶ Play"), this, [this] { emit playToggled(); });
    m_play->setShortcut(Qt::Key_Space);
    m_play->setToolTip(tr("Play / pause (Space)"));
    auto* ev = addAction(tr("Step event"), this, [this] { emit stepEventRequested(); });
    ev->setShortcut(Qt::Key_Period);
    ev->setToolTip(tr("Run one event (.)"));
    auto* wk = addAction(tr("Step wakeup"), this, [this] { emit stepWakeupRequested(); });
    wk->setShortcut(Qt::Key_W);
    wk->setToolTip(tr("Run to the next wakeup and trace it in the decision inspector (W)"));
    auto* ms = addAction(tr("Step 1 ms"), this, [this] { emit stepTimeRequested(1000000); });
    ms->setShortcut(Qt::Key_M);
    ms->setToolTip(tr("Advance 1 ms of simulated time (M)"));
    auto* ff = addAction(tr("» Fast-forward…"), this, [this] {
        const double nowS = double(m_now) / 1e9;
        bool ok = false;
        const QString t = QInputDialog::getText(parentWidget(), tr("Fast-forward"),
                                                tr("Run without drawing to simulated time (e.g. 500ms, 2s; now %1 s):").arg(nowS, 0, 'f', 3),
                                                QLineEdit::Normal, QStringLiteral("%1s").arg(nowS + 0.5, 0, 'f', 3), &ok);
        if (!ok) return;
        const auto ns = sched::parseDurationNs(t.trimmed().toStdString());
        if (!ns || *ns <= 0) {
            emit message(tr("Fast-forward: '%1' is not a duration (e.g. 500ms, 2s)").arg(t));
            return;
        }
        emit fastForwardRequested(*ns);
    });
    ff->setObjectName(QStringLiteral("fastForward"));
    ff->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    ff->setToolTip(tr("Run both sides without frames to a simulated time, then show them there (Ctrl+G): reach the steady state quickly"));
    auto* rs = addAction(tr("⟲ Restart"), this, [this] { emit restartRequested(); });
    rs->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    rs->setToolTip(tr("Rerun both sides from t = 0 with the same seed (Ctrl+R)"));
    addSeparator();
    addWidget(new QLabel(tr(" speed "), this));
    m_speed = new QComboBox(this);
    for (const auto& s : kSpeeds) m_speed->addItem(QString::fromUtf8(s.label), s.simPerWall);
    m_speed->setCurrentIndex(kDefaultSpeed);
    connect(m_speed, &QComboBox::currentIndexChanged, this, [this] { emit speedChanged(speed()); });
    addWidget(m_speed);
    addSeparator();
    addWidget(new QLabel(tr(" colour "), this));
    auto* metric = new QComboBox(this);
    metric->addItem(tr("runqueue length"));
    metric->addItem(tr("utilisation"));
    metric->addItem(tr("idle / busy / idle-delay"));
    connect(metric, &QComboBox::currentIndexChanged, this, [this](int i) { emit metricChanged(i); });
    addWidget(metric);
    auto* cmap = new QComboBox(this);
    cmap->setObjectName(QStringLiteral("colormap"));
    cmap->addItem(QStringLiteral("viridis"));
    cmap->addItem(QStringLiteral("cividis"));
    cmap->setToolTip(tr("Colormap (both perceptually uniform and colour-blind safe)"));
    connect(cmap, &QComboBox::currentIndexChanged, this, [this](int i) { emit colormapChanged(i); });
    addWidget(cmap);
    addSeparator();
    addWidget(new QLabel(tr(" arrows "), this));
    auto* span = new QComboBox(this);
    span->setObjectName(QStringLiteral("arrowSpan"));
    span->setToolTip(tr("Migrations drawn as arrows: those of the last N ms of simulated time, fading with age"));
    for (const auto& [label, ns] : std::vector<std::pair<QString, qint64>>{{tr("off"), 0}, {tr("last 1 ms"), 1000000}, {tr("last 5 ms"), 5000000}})
        span->addItem(label, ns);
    span->setCurrentIndex(2);
    connect(span, &QComboBox::currentIndexChanged, this, [this, span] { emit arrowSpanChanged(span->currentData().toLongLong()); });
    addWidget(span);
    addSeparator();
    m_clock = new QLabel(this);
    m_clock->setObjectName(QStringLiteral("simClock"));
    m_clock->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_clock->setMinimumWidth(160);
    addWidget(m_clock);
}

void RunBar::setPlaying(bool on) { m_play->setText(on ? tr("❚❚ Pause") : tr("▶ Play")); }

double RunBar::speed() const { return m_speed->currentData().toDouble(); }

void RunBar::setSpeed(double simPerWall) {
    int best = kDefaultSpeed;
    for (int i = 0; i < int(std::size(kSpeeds)); ++i)
        if (std::abs(kSpeeds[i].simPerWall - simPerWall) < 1e-12) best = i;
    m_speed->setCurrentIndex(best);
}

void RunBar::setClock(const QString& text, qint64 nowNs) {
    m_clock->setText(text);
    m_now = nowNs;
}

QString RunBar::fastForwardText(qint64 now, qint64 target, double rate, bool done, bool toSteady) {
    if (done) return tr("Fast-forwarded to %1 s simulated (%2 simulated ms per second)").arg(double(now) / 1e9, 0, 'f', 3).arg(rate / 1e6, 0, 'f', 1);
    if (toSteady)
        return tr("Fast-forward to the steady state: t = %1 s simulated, %2 simulated ms per second; Space stops")
            .arg(double(now) / 1e9, 0, 'f', 3)
            .arg(rate / 1e6, 0, 'f', 1);
    return tr("Fast-forward: %1 of %2 s simulated (%3 %), %4 simulated ms per second; Space stops")
        .arg(double(now) / 1e9, 0, 'f', 3)
        .arg(double(target) / 1e9, 0, 'f', 3)
        .arg(target > 0 ? 100.0 * double(now) / double(target) : 0.0, 0, 'f', 0)
        .arg(rate / 1e6, 0, 'f', 1);
}

}  // namespace schedlab
