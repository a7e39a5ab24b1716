// decision_inspector.cpp: see decision_inspector.h.
#include "decision_inspector.h"

#include "decision.h"
#include "wakeup_path.h"

#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace schedlab {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

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

DecisionInspector::DecisionInspector(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("decisionInspector"));
    auto* lay = new QVBoxLayout(this);
    m_next = new QPushButton(tr("Step to the next wakeup (W)"), this);
    lay->addWidget(m_next);
    auto* split = new QSplitter(Qt::Vertical, this);
    m_list = new QListWidget(split);
    m_list->setUniformItemSizes(true);
    m_text = new QTextBrowser(split);
    m_text->setPlaceholderText(tr("Pick a wakeup above, or press W (Step wakeup) to run to the next one and see its "
                                  "path in kernel function names; the heatmap numbers the CPUs it examined."));
    split->addWidget(m_list);
    split->addWidget(m_text);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 4);
    split->setSizes({70, 400});  // a few rows of the list, the rest for the path
    lay->addWidget(split, 1);
    connect(m_next, &QPushButton::clicked, this, &DecisionInspector::stepWakeupRequested);
    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && row < int(m_shown.size())) show(m_shown[std::size_t(row)]);
    });
}

void DecisionInspector::setDecisions(const std::vector<sched::DecisionRecord>& recent,
                                     const std::optional<sched::DecisionRecord>& traced) {
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
    QStringList flags;
    if (d.wake_flags & sched::WF_SYNC) flags << QStringLiteral("WF_SYNC");
    if (d.wake_flags & sched::WF_FORK) flags << QStringLiteral("WF_FORK");
    if (d.wake_flags & sched::WF_TTWU) flags << QStringLiteral("WF_TTWU");
    if (d.wakelist) flags << QStringLiteral("wakelist (IPI)");
    if (d.migrated) flags << QStringLiteral("migrated");
    if (d.preempted_curr) flags << QStringLiteral("preempted curr");
    if (d.claim_set) flags << QStringLiteral("claimed");
    if (d.idle_delay_hit) flags << QStringLiteral("idle-delay hit");
    h += QStringLiteral("flags: %1<br>").arg(flags.join(QStringLiteral(", ")));
    if (!d.steps.empty()) {
        h += QStringLiteral("<h4>Path</h4><ol>");
        for (const auto& s : d.steps)
            h += QStringLiteral("<li><tt>%1()</tt> %2</li>").arg(QString::fromLatin1(sched::toString(s.fn)),
                                                               q(s.text).toHtmlEscaped());
        h += QStringLiteral("</ol>");
    } else {
        h += QStringLiteral("<p><i>Not traced: step to the next wakeup (W) to see the path function by function.</i></p>");
    }
    h += QStringLiteral("<h4>CPUs examined (%1)</h4><ol>").arg(d.examined.size());
    for (const auto& e : d.examined)
        h += QStringLiteral("<li>CPU %1 by <tt>%2()</tt>: %3</li>")
                 .arg(e.cpu)
                 .arg(QString::fromLatin1(sched::toString(e.fn)), QString::fromLatin1(sched::toString(e.seen)));
    h += QStringLiteral("</ol>");
    return h;
}

void DecisionInspector::show(const sched::DecisionRecord& r) {
    m_text->setHtml(describe(r));
    std::vector<int> cpus;
    cpus.reserve(r.d.examined.size());
    for (const auto& e : r.d.examined) cpus.push_back(e.cpu);
    emit highlight(cpus, r.d.cpu);
}

}  // namespace schedlab
