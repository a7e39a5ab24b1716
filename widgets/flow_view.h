// SPDX-License-Identifier: GPL-2.0-or-later
// flow_view.h: the wakeup path as a picture (the "Decision flow" dock, --view flow). The graph
// of core/kernel/decision_flow.h drawn as a tree in the kernel's control-flow order: one row per
// function, branch or reason code, the connector into each row as wide as the share of the
// decisions that took it (A above, B below, mirrored), A's and B's counts and shares beside it.
// The traced decision (Step wakeup, a decision picked in the inspector, a trace disagreement)
// is lit; a click on a row asks for the decisions behind its edge.
#pragma once

#include "kernel/decision_flow.h"

#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

namespace schedlab {

class FlowView : public QWidget {
    Q_OBJECT
public:
    explicit FlowView(QWidget* parent = nullptr);

    /// A's counts and, when `b` is given, B's; the column heads ("baseline", "idle-delay-v2").
    void setCounts(const sched::FlowCounts& a, const sched::FlowCounts* b, const QString& nameA, const QString& nameB);
    /// Per node, the replayed trace's decisions there that disagree with the kernel (null: none shown).
    void setDisagreements(const sched::FlowCounts* d);
    /// The decision lit on the diagram (nullopt: none).
    void setLit(const std::optional<sched::Decision>& d);
    /// Rows no decision reached on either side: shown (faded) or left out (the default).
    void setShowAll(bool on);
    bool showAll() const { return m_showAll; }
    /// The scenario's description (a lesson's text), shown above the diagram; "" none.
    void setDescription(const QString& text);

    /// For tests: the rows drawn (node indices, top to bottom), a node's row rectangle (empty when
    /// not drawn), the node at a point (-1 none), the nodes lit, the width of the connector into a
    /// node for side 0 (A) or 1 (B).
    const std::vector<int>& rows() const { return m_rows; }
    QRect rowRect(int node) const;
    QRect boxRect(int node) const;
    int nodeAt(const QPoint& p) const;
    const std::vector<int>& litNodes() const { return m_lit; }
    double connectorWidth(int node, int side) const;
    /// A node's tooltip: its function, the condition it tests, its counts.
    QString toolTipFor(int node) const;
    /// The counts shown for side 0 (A) or 1 (B).
    const sched::FlowCounts& counts(int side) const { return side == 0 ? m_a : m_b; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

signals:
    /// A row was clicked: the edge into its node (DecisionFlow edge index).
    void edgeClicked(int edge);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    bool event(QEvent* e) override;

private:
    void relayout();
    double share(int node, int side) const;

    sched::FlowCounts m_a, m_b, m_dis;
    bool m_hasB = false, m_hasDis = false, m_showAll = false;
    QString m_nameA, m_nameB, m_description;
    std::vector<int> m_lit;
    std::vector<int> m_rows;      ///< nodes drawn, in order
    std::vector<int> m_rowOf;     ///< per node: its row, -1 when not drawn
    std::vector<int> m_boxWidth;  ///< per node: its label box's width
    int m_rowH = 24, m_indent = 20, m_treeW = 300, m_top = 30, m_descH = 0;
    static constexpr int kMargin = 8, kColW = 170, kChangeW = 70;
};

}  // namespace schedlab
