// SPDX-License-Identifier: GPL-2.0-or-later
// knob_panel.h: the knobs of A and B: preset selectors, the idle-delay and nr_running-threshold
// sliders, the claim and idle-clock choices and sched_feature toggles. Edits one side at a time.
#pragma once

#include "kernel/knobs.h"

#include <QWidget>

#include <map>
#include <string>

class QCheckBox;
class QPlainTextEdit;
class QPushButton;
class QComboBox;
class QLabel;
class QRadioButton;
class QSlider;
class QSpinBox;
class QDoubleSpinBox;

namespace schedlab {

/// Knob editor for the two sides of an A/B run.
class KnobPanel : public QWidget {
    Q_OBJECT
public:
    explicit KnobPanel(QWidget* parent = nullptr);

    /// Sets both sides (e.g. from a scenario) without emitting knobsChanged.
    void setKnobs(const sched::Knobs& a, const sched::Knobs& b);
    const sched::Knobs& knobs(int side) const { return side == 0 ? m_a : m_b; }
    /// Which side the controls edit (0 = A, 1 = B).
    int editedSide() const { return m_side; }
    void setEditedSide(int side);
    bool abEnabled() const;
    void setAbEnabled(bool on);

    /// Slider positions for tests and shortcuts.
    QSlider* idleDelaySlider() const { return m_delay; }
    QSlider* maxRunningSlider() const { return m_maxRun; }
    QComboBox* presetCombo(int side) const { return side == 0 ? m_presetA : m_presetB; }

    /// The slider value meaning "no limit" on the nr_running threshold.
    static constexpr int kNoLimit = 17;

    /// The scenario's workloads as JSON text (the "workloads" array), shown for editing.
    void setWorkloads(const QString& json, const QString& commands);
    /// Shows a problem with the edited workloads (empty: none).
    void setWorkloadError(const QString& message);
    QPlainTextEdit* workloadEditor() const { return m_workloads; }

signals:
    /// The user applied edited workloads (JSON text of the "workloads" array); both sides restart.
    void workloadsApplied(const QString& json);
    /// One side's knobs changed (apply live).
    void knobsChanged(int side, const sched::Knobs& k);
    void abToggled(bool on);

private:
    void refresh();  ///< controls from the edited side's knobs
    void edited();   ///< edited side's knobs from the controls
    void presetPicked(int side, const QString& name);

    sched::Knobs m_a, m_b;
    int m_side = 1;
    bool m_updating = false;
    QComboBox* m_presetA = nullptr;
    QComboBox* m_presetB = nullptr;
    QCheckBox* m_ab = nullptr;
    QRadioButton* m_editA = nullptr;
    QRadioButton* m_editB = nullptr;
    QSlider* m_delay = nullptr;
    QLabel* m_delayLabel = nullptr;
    QSlider* m_maxRun = nullptr;
    QLabel* m_maxRunLabel = nullptr;
    QComboBox* m_clock = nullptr;
    QComboBox* m_claim = nullptr;
    std::map<std::string, QCheckBox*> m_features;
    QSpinBox* m_almostIdleLoad = nullptr;       ///< B: almost_idle_load
    QDoubleSpinBox* m_ratelimitMs = nullptr;    ///< D: migration_ratelimit_ns, in ms
    QDoubleSpinBox* m_tgRatelimitMs = nullptr;  ///< E: tg_load_avg_ratelimit_ns in ms
    QLabel* m_summary = nullptr;
    QPlainTextEdit* m_workloads = nullptr;
    QLabel* m_commands = nullptr;
    QLabel* m_workloadError = nullptr;
};

}  // namespace schedlab
