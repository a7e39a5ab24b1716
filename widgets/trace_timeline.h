// SPDX-License-Identifier: GPL-2.0-or-later
// trace_timeline.h: the trace bar's timeline strip. The whole span of a recorded trace, binned
// to the strip's pixel width (any trace size paints in time proportional to the width): the
// density of wakeup decisions per column, a tick in each column that holds a disagreement
// between the kernel and schedlab (coloured by its class, docs/replay.md: Disagreement classes), the
// trace's gaps hatched and the cursor. Wheel zooms around the pointer, drag or the scroll bar
// pans, double-click shows the whole trace again; a click moves the cursor or, on a tick,
// picks the nearest disagreement; the arrow keys move the cursor by columns.
#pragma once

#include "replay/replay.h"

#include <QColor>
#include <QWidget>

#include <array>
#include <cstdint>
#include <vector>

class QScrollBar;

namespace schedlab {

inline constexpr int kDisagreeClasses = int(sched::DisagreeClass::count_);

/// One disagreement on the timeline.
struct TimelineMark {
    std::int64_t time = 0;  ///< ns, trace time
    int cls = 0;            ///< sched::DisagreeClass
};

/// Decisions and disagreements counted per pixel column of [from, to] (see timelineColumn()).
struct TimelineBins {
    std::vector<std::uint32_t> decisions;                                    ///< per column
    std::vector<std::array<std::uint32_t, kDisagreeClasses>> disagreements;  ///< per column, by class
    std::uint32_t maxDecisions = 0;                                          ///< the fullest column
};

/// Column of time `t` when [from, to] is split into `columns` equal columns: floor((t - from) *
/// columns / (to - from)), `to` itself in the last one; -1 outside [from, to].
int timelineColumn(std::int64_t t, std::int64_t from, std::int64_t to, int columns);
/// Bins sorted decision times and marks sorted by time into `columns` columns of [from, to],
/// each item in its timelineColumn() (binary search per column edge: O(columns log n)).
TimelineBins binTimeline(const std::vector<std::int64_t>& decisionTimes, const std::vector<TimelineMark>& marks, std::int64_t from, std::int64_t to,
                         int columns);
/// Colour of a disagreement class (docs/replay.md) on the timeline (Okabe–Ito: colour-blind safe).
QColor disagreeColor(int cls);

/// The timeline strip with its scroll bar.
class TraceTimeline : public QWidget {
    Q_OBJECT
public:
    explicit TraceTimeline(QWidget* parent = nullptr);

    /// The trace's span (ns); shows all of it and forgets decisions, marks and gaps.
    void setSpan(std::int64_t t0, std::int64_t t1);
    /// Decision times (any order) and disagreements (sorted here by time; markAt() indexes the
    /// sorted list).
    void setDecisions(std::vector<std::int64_t> times, std::vector<TimelineMark> marks);
    /// A second, thinner lane under the strip: another trace's disagreements (times already on
    /// this timeline's clock), coloured by class; `shown` false removes the lane.
    void setSecondLane(std::vector<TimelineMark> marks, bool shown);
    bool hasSecondLane() const { return m_laneShown; }
    const std::vector<TimelineMark>& secondLane() const { return m_lane; }
    /// Stretches of missing events (ns; drawn hatched), clamped to the span.
    void setGaps(std::vector<std::pair<std::int64_t, std::int64_t>> gaps);
    /// Text drawn over the strip while there are no decisions ("replaying…", an error); "" none.
    void setMessage(const QString& text);
    void setCursorTime(std::int64_t ns);
    std::int64_t cursorTime() const { return m_cursor; }
    /// The disagreement drawn as selected (index into marks()), -1 none.
    void setSelectedMark(int index);
    int selectedMark() const { return m_selected; }

    /// The visible part of the trace (ns), clamped to the span, at least kMinViewNs long.
    void setView(std::int64_t from, std::int64_t to);
    void resetView() { setView(m_t0, m_t1); }
    std::int64_t viewFrom() const { return m_from; }
    std::int64_t viewTo() const { return m_to; }
    /// Zooms by `factor` (> 1 in) keeping the time under strip x `x` in place.
    void zoomAt(double x, double factor);

    /// The strip (widget coordinates); one column per pixel of its width.
    QRect stripRect() const;
    /// Centre x of the column that holds `t` (widget coordinates); NaN outside the view.
    double xForTime(std::int64_t t) const;
    /// Time at widget x (clamped to the view).
    std::int64_t timeAtX(double x) const;
    /// The visible mark nearest to widget x within `tolerancePx`, -1 none.
    int markNear(double x, double tolerancePx = 4) const;
    const std::vector<TimelineMark>& marks() const { return m_marks; }
    /// The bins painted for the current view and width.
    const TimelineBins& bins() const;
    QScrollBar* scrollBar() const { return m_scroll; }
    /// The tooltip at `p` (widget coordinates): the disagreement under it, or the column's counts.
    QString tooltipAt(QPoint p) const;

    static constexpr std::int64_t kMinViewNs = 10'000;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    /// A click away from any disagreement: move the cursor here.
    void cursorRequested(std::int64_t ns);
    /// A click on (or within a few pixels of) a disagreement's tick: index into marks().
    void markClicked(int index);

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    /// Left / Right: the cursor one column earlier / later (Shift: ten); Home / End: the view's ends.
    void keyPressEvent(QKeyEvent* e) override;
    bool event(QEvent* e) override;

private:
    void syncScrollBar();

    std::int64_t m_t0 = 0, m_t1 = 1, m_from = 0, m_to = 1, m_cursor = 0;
    std::vector<std::int64_t> m_times;  ///< sorted
    std::vector<TimelineMark> m_marks;  ///< sorted by time
    std::array<std::uint32_t, kDisagreeClasses> m_classTotals{};
    std::vector<std::pair<std::int64_t, std::int64_t>> m_gaps;
    std::vector<TimelineMark> m_lane;  ///< the second lane, sorted by time
    bool m_laneShown = false;
    int laneExtra() const;
    QString m_message;
    int m_selected = -1;
    QScrollBar* m_scroll = nullptr;
    std::int64_t m_scrollUnit = 1;  ///< ns per scroll bar step (its range is an int)
    mutable TimelineBins m_bins;
    mutable bool m_binsValid = false;
    mutable std::array<std::int64_t, 3> m_binsKey{};  ///< from, to, columns of m_bins
    // Dragging: where the press was and the view then.
    bool m_pressed = false, m_dragging = false;
    double m_pressX = 0;
    std::int64_t m_pressFrom = 0;
};

}  // namespace schedlab
