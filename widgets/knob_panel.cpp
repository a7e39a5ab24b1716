// SPDX-License-Identifier: GPL-2.0-or-later
// knob_panel.cpp: see knob_panel.h. Every control maps to one named knob (Knobs::set), so
// what the panel shows is what the wakeup path reads.
#include "knob_panel.h"
#include "text_util.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>

namespace schedlab {
namespace {

/// The sched_features worth toggling while watching the wakeup path.
const char* const kFeatureToggles[] = {"SIS_UTIL",   "SIS_PROP",          "SIS_DEBOUNCE", "WA_IDLE",   "WA_WEIGHT",      "WA_BIAS",
                                       "TTWU_QUEUE", "WAKEUP_PREEMPTION", "UTIL_EST",     "NI_RANDOM", "timer_migration"};
constexpr int kDelayStepUs = 100;  ///< slider unit: 0.1 ms, 0..5 ms

}  // namespace

KnobPanel::KnobPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("knobPanel"));
    auto* top = new QVBoxLayout(this);

    auto* sides = new QGroupBox(tr("Variants"), this);
    auto* sf = new QFormLayout(sides);
    m_presetA = new QComboBox(sides);
    m_presetA->setObjectName(QStringLiteral("presetA"));
    m_presetB = new QComboBox(sides);
    m_presetB->setObjectName(QStringLiteral("presetB"));
    for (const auto& n : sched::Knobs::presetNames()) {
        m_presetA->addItem(q(n));
        m_presetB->addItem(q(n));
        m_presetA->setItemData(m_presetA->count() - 1, q(sched::Knobs::presetDescription(n)), Qt::ToolTipRole);
        m_presetB->setItemData(m_presetB->count() - 1, q(sched::Knobs::presetDescription(n)), Qt::ToolTipRole);
    }
    m_ab = new QCheckBox(tr("A/B side by side"), sides);
    m_ab->setChecked(true);
    sf->addRow(tr("A preset:"), m_presetA);
    sf->addRow(tr("B preset:"), m_presetB);
    sf->addRow(m_ab);
    auto* editRow = new QHBoxLayout;
    m_editA = new QRadioButton(tr("A"), sides);
    m_editB = new QRadioButton(tr("B"), sides);
    m_editB->setChecked(true);
    auto* group = new QButtonGroup(this);
    group->addButton(m_editA, 0);
    group->addButton(m_editB, 1);
    editRow->addWidget(m_editA);
    editRow->addWidget(m_editB);
    editRow->addStretch();
    sf->addRow(tr("Controls below edit:"), editRow);
    top->addWidget(sides);

    auto* delay = new QGroupBox(tr("Idle delay (treat a CPU as idle after it left idle)"), this);
    auto* dg = new QGridLayout(delay);
    m_delay = new QSlider(Qt::Horizontal, delay);
    m_delay->setObjectName(QStringLiteral("idleDelaySlider"));
    m_delay->setRange(0, 5000 / kDelayStepUs);
    m_delay->setPageStep(5);
    m_delay->setTickPosition(QSlider::TicksBelow);
    m_delay->setTickInterval(10);
    m_delayLabel = new QLabel(delay);
    m_delayLabel->setMinimumWidth(110);
    m_maxRun = new QSlider(Qt::Horizontal, delay);
    m_maxRun->setObjectName(QStringLiteral("maxRunningSlider"));
    m_maxRun->setRange(0, kNoLimit);
    m_maxRun->setPageStep(1);
    m_maxRun->setTickPosition(QSlider::TicksBelow);
    m_maxRun->setTickInterval(4);
    m_maxRunLabel = new QLabel(delay);
    m_clock = new QComboBox(delay);
    m_clock->addItem(QStringLiteral("idle_end_time (v1/v2)"), QStringLiteral("idle_end_time"));
    m_clock->addItem(QStringLiteral("clock_idle (v3)"), QStringLiteral("clock_idle"));
    dg->addWidget(new QLabel(tr("delay"), delay), 0, 0);
    dg->addWidget(m_delay, 0, 1);
    dg->addWidget(m_delayLabel, 0, 2);
    dg->addWidget(new QLabel(tr("while nr_running ≤"), delay), 1, 0);
    dg->addWidget(m_maxRun, 1, 1);
    dg->addWidget(m_maxRunLabel, 1, 2);
    dg->addWidget(new QLabel(tr("clock"), delay), 2, 0);
    dg->addWidget(m_clock, 2, 1, 1, 2);
    top->addWidget(delay);

    auto* other = new QGroupBox(tr("Other variants and sched_features"), this);
    auto* og = new QGridLayout(other);
    m_claim = new QComboBox(other);
    m_claim->addItem(QStringLiteral("off"), QStringLiteral("off"));
    m_claim->addItem(QStringLiteral("in select_idle_sibling"), QStringLiteral("sis"));
    m_claim->addItem(QStringLiteral("in select_task_rq"), QStringLiteral("select_task_rq"));
    og->addWidget(new QLabel(tr("claim idle CPU"), other), 0, 0);
    og->addWidget(m_claim, 0, 1);
    int i = 0;
    for (const char* name : kFeatureToggles) {
        auto* cb = new QCheckBox(QString::fromLatin1(name), other);
        cb->setObjectName(QString::fromLatin1(name));
        m_features[name] = cb;
        og->addWidget(cb, 1 + i / 2, i % 2);
        ++i;
        connect(cb, &QCheckBox::toggled, this, [this] { edited(); });
    }
    top->addWidget(other);

    // The idle-extension thread's follow-up patches, one row each: its name (the tooltip gives
    // author, title and date), its parts as knobs (docs/patch-variants.md: Follow-ups).
    auto* follow = new QGroupBox(tr("Follow-up patches (Aug-Nov 2023)"), this);
    follow->setObjectName(QStringLiteral("followUps"));
    auto* fg = new QGridLayout(follow);
    int row = 0;
    // A knob's checkbox at (row, col), its text `text` (the knob's name by default).
    auto check = [&](const char* name, const QString& tip, int col, const QString& text = {}) {
        auto* cb = new QCheckBox(text.isEmpty() ? QString::fromLatin1(name) : text, follow);
        cb->setObjectName(QString::fromLatin1(name));
        cb->setToolTip(tip);
        m_features[name] = cb;
        fg->addWidget(cb, row, col);
        connect(cb, &QCheckBox::toggled, this, [this] { edited(); });
    };
    // The row's first column: the patch's name, its tooltip the patch.
    auto rowLabel = [&](const QString& label, const QString& tip) {
        auto* l = new QLabel(label, follow);
        l->setToolTip(tip);
        fg->addWidget(l, row, 0);
    };
    auto patchRow = [&](const QString& label, const QString& tip, std::initializer_list<const char*> knobs) {
        rowLabel(label, tip);
        int col = 1;
        for (const char* name : knobs) check(name, tip, col++);
        return col;
    };
    // A row whose knob is a window in ns, shown in ms (0: off), in column 1.
    auto msRow = [&](const QString& label, const char* name, const QString& tip) {
        rowLabel(label, tip);
        auto* b = new QDoubleSpinBox(follow);
        b->setObjectName(QString::fromLatin1(name));
        b->setRange(0, 1000);
        b->setSingleStep(0.5);
        b->setDecimals(1);
        b->setSuffix(tr(" ms"));
        b->setSpecialValueText(tr("off"));
        b->setToolTip(tip);
        fg->addWidget(b, row, 1);
        return b;
    };
    {
        const int col = patchRow(tr("B almost-idle prev"),
                                 tr("Mathieu Desnoyers, \"sched: Favor almost idle previously used CPUs for wake affine\" (RFC, 2023-08-10): "
                                    "wake_affine_idle() keeps prev when its load without the wakee is at most the threshold"),
                                 {"WA_ALMOST_IDLE_PREV"});
        m_almostIdleLoad = new QSpinBox(follow);
        m_almostIdleLoad->setObjectName(QStringLiteral("almost_idle_load"));
        m_almostIdleLoad->setRange(0, 1000000);
        m_almostIdleLoad->setPrefix(tr("load ≤ "));
        m_almostIdleLoad->setToolTip(tr("almost_idle_load: the patch's threshold (5)"));
        fg->addWidget(m_almostIdleLoad, row++, col);
    }
    patchRow(tr("C wakelist across L2"),
             tr("Mathieu Desnoyers, \"sched: ttwu_queue_cond: skip queued wakeups across different l2 caches\" (v3, 2023-08-22): a remote "
                "wakeup takes the target's rq lock only within an L2, else wakelist + IPI"),
             {"ttwu_queue_l2c"});
    ++row;
    {
        const QString tip =
            tr("Mathieu Desnoyers, \"sched/eevdf: Rate limit task migration\" (RFC, 2023-09-05): an affine wakeup stays on prev "
               "within the window after a migration (2/2: a quota of migrations per window)");
        m_ratelimitMs = msRow(tr("D migration ratelimit"), "migration_ratelimit_ns", tip);
        check("migration_ratelimit_adaptive", tip, 2, QStringLiteral("adaptive"));
        ++row;
    }
    m_tgRatelimitMs = msRow(tr("E tg->load_avg ratelimit"), "tg_load_avg_ratelimit_ns",
                            tr("Aaron Lu, \"sched/fair: ratelimit update to tg->load_avg\" (2023-08-23, merged as afc1996859a2): "
                               "update_tg_load_avg() writes the task group's shared load at most once per window per cfs_rq (1 ms)"));
    ++row;
    patchRow(tr("G util fits / bias prev"),
             tr("Mathieu Desnoyers, \"sched/fair: Introduce UTIL_FITS_CAPACITY feature\" and \"Introduce SELECT_BIAS_PREV to reduce "
                "migrations\" (RFC v2, 2023-10-19)"),
             {"UTIL_FITS_CAPACITY", "SELECT_BIAS_PREV"});
    ++row;
    patchRow(tr("F SIS_CACHE"),
             tr("Chen Yu, \"Introduce SIS_CACHE to choose previous CPU during task wakeup\" (v2, 2023-11-21): a short sleeper's idle CPU "
                "is cache-hot for its average short sleep, and select_idle_cpu() passes it over"),
             {"SIS_CACHE"});
    ++row;
    patchRow(tr("H SIS_CURRENT"), tr("Chen Yu, \"sched/fair: Introduce SIS_CURRENT to wake up short task on current CPU\" (v8, 2023-04-29)"),
             {"SIS_CURRENT"});
    ++row;
    top->addWidget(follow);
    connect(m_almostIdleLoad, &QSpinBox::valueChanged, this, [this] { edited(); });
    connect(m_ratelimitMs, &QDoubleSpinBox::valueChanged, this, [this] { edited(); });
    connect(m_tgRatelimitMs, &QDoubleSpinBox::valueChanged, this, [this] { edited(); });

    auto* wl = new QGroupBox(tr("Workload (applies from t = 0: both sides restart)"), this);
    auto* wv = new QVBoxLayout(wl);
    m_commands = new QLabel(wl);
    m_commands->setWordWrap(true);
    m_commands->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_workloads = new QPlainTextEdit(wl);
    m_workloads->setObjectName(QStringLiteral("workloadEditor"));
    m_workloads->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_workloads->setMinimumHeight(90);
    m_workloads->setToolTip(
        tr("The scenario's \"workloads\" array (docs/scenario-format.md), e.g.\n"
           "[{\"type\": \"hackbench\", \"groups\": 8, \"fds\": 20, \"loops\": 2000}]"));
    auto* apply = new QPushButton(tr("Apply and restart"), wl);
    m_workloadError = new QLabel(wl);
    m_workloadError->setWordWrap(true);
    m_workloadError->setStyleSheet(QStringLiteral("color: #b00020"));
    m_workloadError->hide();
    wv->addWidget(m_commands);
    wv->addWidget(m_workloads);
    wv->addWidget(apply);
    wv->addWidget(m_workloadError);
    top->addWidget(wl);
    connect(apply, &QPushButton::clicked, this, [this] { emit workloadsApplied(m_workloads->toPlainText()); });
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    top->addWidget(m_summary);
    top->addStretch();

    connect(m_presetA, &QComboBox::textActivated, this, [this](const QString& n) { presetPicked(0, n); });
    connect(m_presetB, &QComboBox::textActivated, this, [this](const QString& n) { presetPicked(1, n); });
    connect(group, &QButtonGroup::idClicked, this, [this](int id) { setEditedSide(id); });
    connect(m_ab, &QCheckBox::toggled, this, [this](bool on) {
        if (!on && m_side == 1) setEditedSide(0);
        m_editB->setEnabled(on);
        emit abToggled(on);
    });
    connect(m_delay, &QSlider::valueChanged, this, [this] { edited(); });
    connect(m_maxRun, &QSlider::valueChanged, this, [this] { edited(); });
    connect(m_clock, &QComboBox::currentIndexChanged, this, [this] { edited(); });
    connect(m_claim, &QComboBox::currentIndexChanged, this, [this] { edited(); });
    refresh();
}

void KnobPanel::setKnobs(const sched::Knobs& a, const sched::Knobs& b) {
    m_a = a;
    m_b = b;
    m_updating = true;
    m_presetA->setCurrentText(q(a.presetName));
    m_presetB->setCurrentText(q(b.presetName));
    m_updating = false;
    refresh();
}

void KnobPanel::setWorkloads(const QString& json, const QString& commands) {
    m_workloads->setPlainText(json);
    m_commands->setText(commands);
    setWorkloadError({});
}

void KnobPanel::setWorkloadError(const QString& message) {
    m_workloadError->setText(message);
    m_workloadError->setVisible(!message.isEmpty());
}

void KnobPanel::setEditedSide(int side) {
    m_side = side == 1 && abEnabled() ? 1 : 0;
    (m_side ? m_editB : m_editA)->setChecked(true);
    refresh();
}

bool KnobPanel::abEnabled() const { return m_ab->isChecked(); }
void KnobPanel::setAbEnabled(bool on) { m_ab->setChecked(on); }

void KnobPanel::presetPicked(int side, const QString& name) {
    if (m_updating) return;
    sched::Knobs k = sched::Knobs::preset(name.toStdString());
    k.hz = (side ? m_b : m_a).hz;
    (side ? m_b : m_a) = k;
    setEditedSide(side);
    emit knobsChanged(side, k);
}

void KnobPanel::refresh() {
    const sched::Knobs& k = m_side ? m_b : m_a;
    m_updating = true;
    m_delay->setValue(int(k.idle_delay_ns / 1000 / kDelayStepUs));
    m_maxRun->setValue(k.idle_delay_max_running < 0 ? kNoLimit : std::min(k.idle_delay_max_running, kNoLimit - 1));
    m_clock->setCurrentIndex(k.idle_delay_clock == sched::IdleDelayClock::ClockIdle ? 1 : 0);
    m_claim->setCurrentIndex(int(k.claim));
    for (auto& [name, cb] : m_features) cb->setChecked(k.get(name) == "1" || k.get(name) == "true");
    m_almostIdleLoad->setValue(int(k.almost_idle_load));
    m_ratelimitMs->setValue(double(k.migration_ratelimit_ns) / 1e6);
    m_tgRatelimitMs->setValue(double(k.tg_load_avg_ratelimit_ns) / 1e6);
    m_updating = false;
    const double ms = double(k.idle_delay_ns) / 1e6;
    m_delayLabel->setText(k.idle_delay_ns == 0 ? tr("off") : QStringLiteral("%1 ms").arg(ms, 0, 'f', 1));
    m_maxRunLabel->setText(k.idle_delay_max_running < 0 ? tr("no limit") : QString::number(k.idle_delay_max_running));
    m_summary->setText(QStringLiteral("<b>A</b>: %1<br><b>B</b>: %2")
                           .arg(q(m_a.describe()).toHtmlEscaped(), abEnabled() ? q(m_b.describe()).toHtmlEscaped() : tr("(off)")));
}

void KnobPanel::edited() {
    if (m_updating) return;
    sched::Knobs& k = m_side ? m_b : m_a;
    sched::Knobs n = k;
    n.idle_delay_ns = std::int64_t(m_delay->value()) * kDelayStepUs * 1000;
    n.idle_delay_max_running = m_maxRun->value() == kNoLimit ? -1 : m_maxRun->value();
    n.set("idle_delay_clock", m_clock->currentData().toString().toStdString());
    n.set("claim", m_claim->currentData().toString().toStdString());
    for (auto& [name, cb] : m_features) n.set(name, cb->isChecked() ? "1" : "0");
    n.almost_idle_load = m_almostIdleLoad->value();
    n.migration_ratelimit_ns = std::llround(m_ratelimitMs->value() * 1e6);
    n.tg_load_avg_ratelimit_ns = std::llround(m_tgRatelimitMs->value() * 1e6);
    if (n == k) {
        refresh();
        return;
    }
    k = n;
    refresh();
    emit knobsChanged(m_side, k);
}

}  // namespace schedlab
