// SPDX-License-Identifier: GPL-2.0-or-later
// caption.cpp: see caption.h.
#include "caption.h"

#include "text_util.h"
#include "trace_session.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace schedlab {
namespace {

QString tr(const char* s) { return QCoreApplication::translate("Caption", s); }

QString disagreementText(const TraceSide& a, int k, const QString& prefix) {
    const sched::AgreeRow* r = a.disagreement(k);
    if (!r) return {};
    return QStringLiteral(" · %1disagreement %2 (line %3, pid %4): kernel CPU %5, schedlab CPU %6, %7")
        .arg(prefix)
        .arg(k + 1)
        .arg(r->line)
        .arg(r->pid)
        .arg(r->kernel)
        .arg(r->sim)
        .arg(QString::fromLatin1(sched::toString(sched::DisagreeClass(r->cls))));
}

}  // namespace

QString runCaption(const sched::Scenario& s, const QString& scenarioPath, quint64 seed, const sched::Snapshot& a, const sched::Snapshot* b) {
    QString wl;
    for (const auto& r : a.reports) wl += (wl.isEmpty() ? QString() : QStringLiteral(" + ")) + q(r.command);
    // The knobs now, and the live changes that led there (a picture of a run whose knobs moved
    // must say when).
    auto live = [](const sched::Snapshot& x) {
        QString t;
        for (const auto& m : x.knob_marks) t += QStringLiteral(", %1 at t = %2").arg(q(m.change), simTime(m.t));
        return t;
    };
    QString c = QStringLiteral("schedlab %1 · %2 (%3 CPUs) · %4 · A: %5%6")
                    .arg(QStringLiteral(SCHEDLAB_VERSION), q(s.topo->name()))
                    .arg(s.topo->nrCpus())
                    .arg(wl, q(a.knobs), live(a));
    if (b) c += QStringLiteral(" · B: %1%2").arg(q(b->knobs), live(*b));
    const auto diff = s.cost.diffFrom(sched::CostModel::forTopology(*s.topo));
    QString cost = diff.empty() ? QStringLiteral("defaults") : QString();
    for (const auto& d : diff) cost += (cost.isEmpty() ? QString() : QStringLiteral(", ")) + q(d);
    c += QStringLiteral(" · seed %1 · t = %2 simulated · cost: %3 (%4)").arg(seed).arg(simTime(a.now), cost, q(s.cost.machine));
    if (!scenarioPath.isEmpty()) c += QStringLiteral(" · %1").arg(QFileInfo(scenarioPath).fileName());
    return c;
}

QString traceCaption(const TraceCaption& in) {
    const TraceSide& a = *in.a;
    if (in.b) {
        const TraceSide& b = *in.b;
        // Two traces: both files, the machine, the shared cursor (time since each one's first event).
        QString c = QStringLiteral("schedlab %1 · A: recorded trace %2 (%3 events, %4) · B: recorded trace %5 (%6 events, %7) · %8 (%9 CPUs)")
                        .arg(QStringLiteral(SCHEDLAB_VERSION), a.fileName())
                        .arg(a.trace->events.size())
                        .arg(simTime(a.span()), b.fileName())
                        .arg(b.trace->events.size())
                        .arg(simTime(b.span()), q(a.topo->name()))
                        .arg(a.topo->nrCpus());
        c += QStringLiteral(" · cursor t = %1 since each trace's first event").arg(simTime(in.cursor));
        auto agreeText = [](const QString& side, const TraceSide& t, const QString& summary) {
            if (t.agree) return QStringLiteral(" · agree %1 (knobs %2, sync %3): %4").arg(side, q(t.agree->knobs), q(t.agree->sync), summary);
            return !t.agreeError.isEmpty() ? QStringLiteral(" · %1: %2").arg(side, summary) : QString();
        };
        c += agreeText(QStringLiteral("A"), a, in.aSummary);
        c += agreeText(QStringLiteral("B"), b, in.bSummary);
        return c + disagreementText(a, in.openedDisagreement, QStringLiteral("A's "));
    }
    QString c = QStringLiteral("schedlab %1 · recorded trace %2 · %3 (%4 CPUs) · %5 events · cursor t = %6 of %7 from the first event")
                    .arg(QStringLiteral(SCHEDLAB_VERSION), a.fileName(), q(a.topo->name()))
                    .arg(a.topo->nrCpus())
                    .arg(a.trace->events.size())
                    .arg(simTime(in.cursor), simTime(a.span()));
    if (a.agree) c += QStringLiteral(" · agree (knobs %1, sync %2): %3").arg(q(a.agree->knobs), q(a.agree->sync), in.aSummary);
    else if (!a.agreeError.isEmpty()) c += QStringLiteral(" · ") + in.aSummary;
    c += disagreementText(a, in.openedDisagreement, QString());
    if (in.beside) {
        const sched::Snapshot* b = in.besideSnap;
        c += QStringLiteral(
                 " · B: simulated %1 (%2, %3 CPUs), knobs %4, seed %5, t = %6 simulated (the cursor's time since the trace's first event%7)")
                 .arg(QFileInfo(in.besidePath).fileName(), q(in.beside->topo->name()))
                 .arg(in.beside->topo->nrCpus())
                 .arg(b ? q(b->knobs) : QStringLiteral("-"))
                 .arg(in.besideSeed)
                 .arg(simTime(b ? b->now : 0),
                      b && b->now < in.besideTarget ? (b->done ? tr("; the run ended first") : tr("; still running")) : QString());
    }
    return c;
}

}  // namespace schedlab
