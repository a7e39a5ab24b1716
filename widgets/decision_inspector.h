// SPDX-License-Identifier: GPL-2.0-or-later
// decision_inspector.h: the teaching view. Lists the newest wakeup decisions of side A; the
// selected one is shown step by step in kernel function names, and the CPUs it examined are
// handed to the heatmap to be highlighted in order. For a recorded trace it lists the
// disagreements between the kernel and schedlab instead, each with both choices.
#pragma once

#include "sim/metrics.h"
#include "replay/replay.h"

#include <QString>

#include <QWidget>

#include <optional>
#include <vector>

class QListWidget;
class QPushButton;
class QSplitter;
class QTextBrowser;

namespace schedlab {

/// One disagreement of a replayed trace, as the inspector shows it.
struct AgreementItem {
    sched::AgreeRow row;      ///< both answers; row.decision is schedlab's (traced: steps)
    int index = 0;            ///< 0-based, in time order
    int total = 0;            ///< disagreements in the trace
    std::int64_t t0 = 0;      ///< the trace's first event (ns), for times "into the trace"
    QString file;             ///< the trace's file name
    QString comm, wakerComm;  ///< names of the woken task and of the waker
};

/// Recent decisions and one decision's path.
class DecisionInspector : public QWidget {
    Q_OBJECT
public:
    explicit DecisionInspector(QWidget* parent = nullptr);

    /// New decisions (oldest first) and the last traced wakeup, if any. Keeps the selection
    /// on the traced one when it is new.
    void setDecisions(const std::vector<sched::DecisionRecord>& recent, const std::optional<sched::DecisionRecord>& traced);
    /// Shows one decision (steps when it was traced).
    void show(const sched::DecisionRecord& r);
    /// The text shown for a decision (also used by tests).
    static QString describe(const sched::DecisionRecord& r);

    /// A recorded trace's disagreements (in time order) replace the decision list; the button
    /// steps to the next disagreement. setDecisions() goes back to decisions.
    void setDisagreements(std::vector<AgreementItem> items);
    /// Shows disagreement `index` of setDisagreements() (selects its row), with the kernel's
    /// choice; the heatmap marks schedlab's examined and chosen CPUs and the kernel's CPU.
    void showDisagreement(int index);
    /// Shows any replayed decision with both answers.
    void showAgreement(const AgreementItem& item);
    /// The text shown for a replayed decision (also used by tests).
    static QString describeAgreement(const AgreementItem& item);
    /// The text shown now, as plain text.
    QString text() const;
    QListWidget* list() const { return m_list; }

signals:
    /// CPUs the shown decision examined, in order, the CPU it chose (-1 none) and, for a replayed
    /// trace, the kernel's CPU (-1 none).
    void highlight(const std::vector<int>& cpus, int chosen, int kernel);
    /// A decision is shown (picked in the list, stepped into, a disagreement opened): the flow view lights its path.
    void decisionShown(const sched::Decision& d);
    /// "Step to the next wakeup" was pressed.
    void stepWakeupRequested();
    /// A disagreement's row was picked (index into setDisagreements()).
    void disagreementPicked(int index);
    /// "Next disagreement" was pressed.
    void nextDisagreementRequested();

private:
    static QString decisionsHint();

    QListWidget* m_list = nullptr;
    QTextBrowser* m_text = nullptr;
    QSplitter* m_split = nullptr;
    QPushButton* m_next = nullptr;
    std::vector<sched::DecisionRecord> m_shown;  ///< list rows (newest first), traced one first when present
    std::int64_t m_tracedTime = -1;
    std::vector<AgreementItem> m_disagreements;  ///< list rows in agreement mode
    bool m_agreementMode = false;
};

}  // namespace schedlab
