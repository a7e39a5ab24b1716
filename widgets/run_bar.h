// SPDX-License-Identifier: GPL-2.0-or-later
// run_bar.h: the window's run toolbar: play / pause (Space), one event (.), the next wakeup (W),
// 1 ms (M), fast-forward (Ctrl+G), restart (Ctrl+R), the speed, the heatmaps' colour metric,
// colormap and arrow span, and the simulated clock.
#pragma once

#include <QToolBar>

class QAction;
class QComboBox;
class QLabel;

namespace schedlab {

class RunBar : public QToolBar {
    Q_OBJECT

public:
    explicit RunBar(QWidget* parent);
    /// The status line of a fast-forward: its progress while it runs (simulated time, share,
    /// simulated ms per wall second), its end when `done`. `toSteady`: a fast-forward to the
    /// steady state, whose end is not known ahead (`target` is only its limit).
    static QString fastForwardText(qint64 now, qint64 target, double simNsPerWallS, bool done, bool toSteady = false);

    /// The Play action shows Pause while running.
    void setPlaying(bool on);
    /// Simulated seconds per wall second (<= 0: as fast as possible).
    double speed() const;
    /// Picks the listed speed equal to `simPerWall` (the default one when none is).
    void setSpeed(double simPerWall);
    /// The clock's text, and the simulated time the fast-forward dialog starts from.
    void setClock(const QString& text, qint64 nowNs);

signals:
    void playToggled();
    void stepEventRequested();
    void stepWakeupRequested();
    void stepTimeRequested(qint64 ns);
    void fastForwardRequested(qint64 ns);
    void restartRequested();
    void speedChanged(double simPerWall);
    void metricChanged(int metric);      ///< TopologyHeatmap::Metric
    void colormapChanged(int colormap);  ///< Colormap
    /// Migrations drawn as arrows: those of the last `ns` (0: none).
    void arrowSpanChanged(qint64 ns);
    /// A one-line message for the status bar (a bad fast-forward time).
    void message(const QString& text);

private:
    QAction* m_play = nullptr;
    QComboBox* m_speed = nullptr;
    QLabel* m_clock = nullptr;
    qint64 m_now = 0;
};

}  // namespace schedlab
