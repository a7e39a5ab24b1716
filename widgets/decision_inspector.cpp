// SPDX-License-Identifier: GPL-2.0-or-later
// decision_inspector.cpp: see decision_inspector.h.
#include "decision_inspector.h"
#include "text_util.h"

#include "kernel/decision.h"
#include "kernel/wakeup_path.h"

#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace schedlab {
namespace {

QString agreementRowText(const AgreementItem& it) {
    const sched::AgreeRow& r = it.row;
    return QStringLiteral("#%1  %2 ms  pid %3  prev %4: kernel %5, schedlab %6  %7")
        .arg(it.index + 1)
        .arg(double(r.time - it.t0) / 1e6, 0, 'f', 3)
        .arg(r.pid)
        .arg(r.prev)
        .arg(r.kernel)
        .arg(r.sim)
        .arg(r.cls >= 0 ? QString::fromLatin1(sched::toString(sched::DisagreeClass(r.cls))) : QString());
}

/// The path (steps, under `title`) and the CPUs examined of a decision; `untraced` when it has no steps.
QString pathHtml(const sched::Decision& d, const QString& title, const QString& untraced) {
    QString h;
    if (!d.steps.empty()) {
        h += QStringLiteral("<h4>%1</h4><ol>").arg(title);
        for (const auto& s : d.steps)
            h += QStringLiteral("<li><tt>%1()</tt> %2</li>").arg(QString::fromLatin1(sched::toString(s.fn)), q(s.text).toHtmlEscaped());
        h += QStringLiteral("</ol>");
    } else {
        h += QStringLiteral("<p><i>%1</i></p>").arg(untraced);
    }
    h += QStringLiteral("<h4>CPUs examined (%1)</h4><ol>").arg(d.examined.size());
    for (const auto& e : d.examined)
        h += QStringLiteral("<li>CPU %1 by <tt>%2()</tt>: %3</li>")
                 .arg(e.cpu)
                 .arg(QString::fromLatin1(sched::toString(e.fn)), QString::fromLatin1(sched::toString(e.seen)));
    h += QStringLiteral("</ol>");
    return h;
}

QString flagsText(const sched::Decision& d) {
    QStringList flags;
    if (d.wake_flags & sched::WF_SYNC) flags << QStringLiteral("WF_SYNC");
    if (d.wake_flags & sched::WF_FORK) flags << QStringLiteral("WF_FORK");
    if (d.wake_flags & sched::WF_TTWU) flags << QStringLiteral("WF_TTWU");
    if (d.wakelist) flags << QStringLiteral("wakelist (IPI)");
    if (d.migrated) flags << QStringLiteral("migrated");
    if (d.preempted_curr) flags << QStringLiteral("preempted curr");
    if (d.claim_set) flags << QStringLiteral("claimed");
    if (d.idle_delay_hit) flags << QStringLiteral("idle-delay hit");
    if (d.raced) flags << QStringLiteral("stacked by a race");
    return flags.join(QStringLiteral(", "));
}

QString rowText(const sched::DecisionRecord& r, bool traced) {
    return QStringLiteral("%1%2 ms  pid %3  %4→%5  %6")
        .arg(traced ? QStringLiteral("▶ ") : QString())
        .arg(double(r.time) / 1e6, 0, 'f', 6)
        .arg(r.pid)
        .arg(r.d.prev_cpu)
        .arg(r.d.cpu)
        .arg(q(r.d.reasons()));
}

}  // namespace

QString DecisionInspector::decisionsHint() {
    return tr(
        "Pick a wakeup above, or press W (Step wakeup) to run to the next one and see its "
        "path in kernel function names; the heatmap numbers the CPUs it examined.");
}

DecisionInspector::DecisionInspector(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("decisionInspector"));
    auto* lay = new QVBoxLayout(this);
    m_next = new QPushButton(tr("Step to the next wakeup (W)"), this);
    lay->addWidget(m_next);
    auto* split = m_split = new QSplitter(Qt::Vertical, this);
    m_list = new QListWidget(split);
    m_list->setUniformItemSizes(true);
    m_text = new QTextBrowser(split);
    m_text->setPlaceholderText(decisionsHint());
    split->addWidget(m_list);
    split->addWidget(m_text);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 4);
    split->setSizes({70, 400});  // a few rows of the list, the rest for the path
    lay->addWidget(split, 1);
    connect(m_next, &QPushButton::clicked, this, [this] {
        if (m_agreementMode) emit nextDisagreementRequested();
        else emit stepWakeupRequested();
    });
    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        if (m_agreementMode) {
            if (row >= 0 && row < int(m_disagreements.size())) emit disagreementPicked(row);
        } else if (row >= 0 && row < int(m_shown.size())) {
            show(m_shown[std::size_t(row)]);
        }
    });
}

void DecisionInspector::setDecisions(const std::vector<sched::DecisionRecord>& recent, const std::optional<sched::DecisionRecord>& traced) {
    if (m_agreementMode) {
        m_agreementMode = false;
        m_disagreements.clear();
        m_next->setText(tr("Step to the next wakeup (W)"));
        m_list->clear();
        m_text->clear();
        m_text->setPlaceholderText(decisionsHint());
    }
    if (!isVisible() && !traced) return;
    const bool newTrace = traced && traced->time != m_tracedTime;
    const int keep = newTrace ? 0 : m_list->currentRow();
    const std::int64_t keepTime = keep >= 0 && keep < int(m_shown.size()) ? m_shown[std::size_t(keep)].time : -1;
    const int keepPid = keep >= 0 && keep < int(m_shown.size()) ? m_shown[std::size_t(keep)].pid : -1;
    m_shown.clear();
    if (traced) m_shown.push_back(*traced);
    const std::size_t n = std::min<std::size_t>(recent.size(), 200);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& r = recent[recent.size() - 1 - i];
        if (traced && r.time == traced->time && r.pid == traced->pid) continue;
        m_shown.push_back(r);
    }
    m_list->blockSignals(true);
    m_list->clear();
    int sel = -1;
    for (std::size_t i = 0; i < m_shown.size(); ++i) {
        m_list->addItem(rowText(m_shown[i], traced && i == 0));
        if (!newTrace && m_shown[i].time == keepTime && m_shown[i].pid == keepPid) sel = int(i);
    }
    if (newTrace) {
        m_tracedTime = traced->time;
        sel = 0;
    }
    if (sel >= 0) m_list->setCurrentRow(sel);
    m_list->blockSignals(false);
    if (sel >= 0) show(m_shown[std::size_t(sel)]);
}

QString DecisionInspector::describe(const sched::DecisionRecord& r) {
    const sched::Decision& d = r.d;
    QString h;
    h += QStringLiteral("<b>pid %1</b> woken at %2 ms on CPU %3; prev_cpu %4 → <b>CPU %5</b><br>")
             .arg(r.pid)
             .arg(double(r.time) / 1e6, 0, 'f', 6)
             .arg(d.this_cpu)
             .arg(d.prev_cpu)
             .arg(d.cpu);
    h += QStringLiteral("reasons: <tt>%1</tt><br>").arg(q(d.reasons()).toHtmlEscaped());
    h += QStringLiteral("flags: %1<br>").arg(flagsText(d));
    // A wakeup over time: select_task_rq() read the machine at sched_waking; the task was queued
    // (ttwu_queue()) and activated (sched_wakeup) later, and other CPUs decided meanwhile.
    if (d.t_queue >= 0)
        h += tr("window: ttwu_queue() at +%1 µs, %2 at +%3 µs after sched_waking%4<br>")
                 .arg(double(d.t_queue - r.time) / 1e3, 0, 'f', 2)
                 .arg(d.wakelist ? tr("sched_ttwu_pending() on the target") : tr("sched_wakeup (activation)"))
                 .arg(double(d.t_activate - r.time) / 1e3, 0, 'f', 2)
                 .arg(d.raced ? tr("; <b>stacked by a race</b>: the CPU looked idle while another wakee was on its way there") : QString());
    h += pathHtml(d, tr("Path"), tr("Not traced: step to the next wakeup (W) to see the path function by function."));
    return h;
}

QString DecisionInspector::describeAgreement(const AgreementItem& it) {
    const sched::AgreeRow& r = it.row;
    const bool agree = r.sim == r.kernel;
    QString h;
    if (agree) h += tr("<b>Agreement</b>: schedlab and the kernel chose the same CPU<br>");
    else
        h += tr("<b>Disagreement %1 of %2</b>: <i>%3</i><br>")
                 .arg(it.index + 1)
                 .arg(it.total)
                 .arg(r.cls >= 0 ? QString::fromLatin1(sched::toString(sched::DisagreeClass(r.cls))) : tr("unclassified"));
    h += tr("%1 line %2 · t = %3 ms into the trace (stamp %4)<br>")
             .arg(it.file.toHtmlEscaped())
             .arg(r.line)
             .arg(double(r.time - it.t0) / 1e6, 0, 'f', 6)
             .arg(q(sched::ftraceTimestamp(r.time, 6)));
    h += tr("<b>pid %1</b> (%2) woken on CPU %3 by %4 (%5)%6; prev_cpu %7<br>")
             .arg(r.pid)
             .arg(it.comm.toHtmlEscaped())
             .arg(r.this_cpu)
             .arg(r.waker ? tr("pid %1").arg(r.waker) : tr("the idle task"))
             .arg(it.wakerComm.toHtmlEscaped())
             .arg(r.sync ? tr(", WF_SYNC inferred") : QString())
             .arg(r.prev);
    // Both answers side by side, in the heatmap's colours (kernel: sky blue frame, schedlab: orange).
    h += QStringLiteral(
             "<table cellspacing=0 cellpadding=3 style='margin:4px 0'><tr>"
             "<td style='background:#56B4E9'>kernel chose <b>CPU %1</b>%2</td><td>&nbsp;</td>"
             "<td style='background:#E69F00'>schedlab chose <b>CPU %3</b>%4</td></tr></table>")
             .arg(r.kernel)
             .arg(r.kernel == r.prev ? tr(" (stayed on prev)") : QString())
             .arg(r.sim)
             .arg(r.sim == r.prev       ? tr(" (prev)")
                  : r.sim == r.this_cpu ? tr(" (the waker's CPU)")
                                        : QString());
    h += QStringLiteral("schedlab's reasons: <tt>%1</tt><br>").arg(q(r.reasons).toHtmlEscaped());
    QStringList notes;
    if (r.late) notes << tr("late (woken mid-switch, then placed)");
    if (r.cold) notes << tr("cold (PELT or wakee_flips still warming up)");
    if (r.racy) notes << tr("racy (a candidate CPU changed between the waking and the kernel's choice: it may have seen either)");
    if (!notes.isEmpty()) h += tr("note: %1<br>").arg(notes.join(QStringLiteral("; ")));
    if (r.decision) h += QStringLiteral("flags: %1<br>").arg(flagsText(*r.decision));
    if (r.decision) h += pathHtml(*r.decision, tr("schedlab's path"), tr("schedlab's path was not traced for this decision."));
    // The state the replay rebuilt, per CPU: I idle, i curr idle but runnable/pending, B busy; nr_running.
    const QStringList cpus = q(r.cpus).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (!cpus.isEmpty() && cpus.size() <= 64) {
        h += tr("<h4>CPUs at the decision</h4><tt>");
        for (int c = 0; c < cpus.size(); ++c) {
            QString cell = QStringLiteral("%1:%2").arg(c).arg(cpus[c]);
            if (c == r.kernel || c == r.sim) cell = QStringLiteral("<b>%1</b>").arg(cell);
            h += cell + (c + 1 < cpus.size() ? ((c + 1) % 8 ? QStringLiteral(" ") : QStringLiteral("<br>")) : QString());
        }
        h += tr("</tt><br><small>I idle · i idle but a wakeup is pending or queued · B busy; then nr_running</small>");
    }
    return h;
}

void DecisionInspector::setDisagreements(std::vector<AgreementItem> items) {
    m_agreementMode = true;
    m_disagreements = std::move(items);
    m_shown.clear();
    m_tracedTime = -1;
    m_next->setText(tr("Next disagreement (N)"));
    if (m_split->sizes().value(0) < 120) m_split->setSizes({130, 400});  // room for a few more disagreements
    m_list->blockSignals(true);
    m_list->clear();
    // A list widget of a million rows is slow to fill: the rest is on the timeline and one N away.
    constexpr std::size_t kMaxRows = 20000;
    for (std::size_t i = 0; i < m_disagreements.size() && i < kMaxRows; ++i) m_list->addItem(agreementRowText(m_disagreements[i]));
    if (m_disagreements.size() > kMaxRows)
        m_list->addItem(tr("… %1 more: N steps to the next one, the timeline shows them all").arg(m_disagreements.size() - kMaxRows));
    m_list->blockSignals(false);
    m_text->clear();
    m_text->setPlaceholderText(
        tr("Pick a disagreement above or a tick on the trace timeline (N / Shift+N: next / previous): "
           "schedlab's path beside the kernel's choice."));
}

void DecisionInspector::showDisagreement(int index) {
    if (!m_agreementMode || index < 0 || index >= int(m_disagreements.size())) return;
    m_list->blockSignals(true);
    if (index < m_list->count() - (m_list->count() < int(m_disagreements.size()) ? 1 : 0)) {
        m_list->setCurrentRow(index);
        m_list->scrollToItem(m_list->currentItem(), QAbstractItemView::PositionAtCenter);
    } else {
        m_list->setCurrentRow(-1);  // past the listed rows
    }
    m_list->blockSignals(false);
    showAgreement(m_disagreements[std::size_t(index)]);
}

void DecisionInspector::showAgreement(const AgreementItem& it) {
    m_text->setHtml(describeAgreement(it));
    std::vector<int> cpus;
    if (it.row.decision) {
        cpus.reserve(it.row.decision->examined.size());
        for (const auto& e : it.row.decision->examined) cpus.push_back(e.cpu);
    }
    emit highlight(cpus, it.row.sim, it.row.kernel);
    if (it.row.decision) emit decisionShown(*it.row.decision);
}

QString DecisionInspector::text() const { return m_text->toPlainText(); }

void DecisionInspector::show(const sched::DecisionRecord& r) {
    m_text->setHtml(describe(r));
    std::vector<int> cpus;
    cpus.reserve(r.d.examined.size());
    for (const auto& e : r.d.examined) cpus.push_back(e.cpu);
    emit highlight(cpus, r.d.cpu, -1);
    emit decisionShown(r.d);
}

}  // namespace schedlab
