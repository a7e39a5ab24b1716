// decision_inspector.h: the teaching view. Lists the newest wakeup decisions of side A; the
// selected one is shown step by step in kernel function names, and the CPUs it examined are
// handed to the heatmap to be highlighted in order.
#pragma once

#include "metrics.h"

#include <QWidget>

#include <optional>
#include <vector>

class QListWidget;
class QPushButton;
class QTextBrowser;

namespace schedlab {

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
    QListWidget* list() const { return m_list; }

signals:
    /// CPUs the shown decision examined, in order, and the CPU it chose (-1 none).
    void highlight(const std::vector<int>& cpus, int chosen);
    /// "Step to the next wakeup" was pressed.
    void stepWakeupRequested();

private:
    QListWidget* m_list = nullptr;
    QTextBrowser* m_text = nullptr;
    QPushButton* m_next = nullptr;
    std::vector<sched::DecisionRecord> m_shown;  ///< list rows (newest first), traced one first when present
    std::int64_t m_tracedTime = -1;
};

}  // namespace schedlab
