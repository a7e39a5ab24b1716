// SPDX-License-Identifier: GPL-2.0-or-later
// delta_table.cpp: see delta_table.h.
#include "delta_table.h"

#include "text_util.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>
#include <vector>

namespace schedlab {
namespace {

QString tr(const char* s) { return QCoreApplication::translate("MainWindow", s); }

struct Col {
    QString label;
    double a, b;
    int decimals;
};

/// Four lines: a header, A, B and B vs A in %; led by the "since" column unless `since` is empty.
QString table(const std::vector<Col>& cols, const QString& since) {
    QStringList rows(4);
    rows[0] = QStringLiteral("%1").arg(QString(), -7);
    rows[1] = QStringLiteral("%1").arg(QStringLiteral("A"), -7);
    rows[2] = QStringLiteral("%1").arg(QStringLiteral("B"), -7);
    rows[3] = QStringLiteral("%1").arg(QStringLiteral("B vs A"), -7);
    if (!since.isEmpty()) {
        const int w = int(since.size()) + 1;
        rows[0] += QStringLiteral("%1").arg(tr("since"), -w);
        rows[1] += QStringLiteral("%1").arg(since, -w);
        rows[2] += QStringLiteral("%1").arg(since, -w);
        rows[3] += QString(w, QLatin1Char(' '));
    }
    for (const Col& c : cols) {
        const QString va = QString::number(c.a, 'f', c.decimals), vb = QString::number(c.b, 'f', c.decimals);
        const QString ch =
            c.a != 0 ? QStringLiteral("%1%2%").arg(c.b >= c.a ? "+" : "").arg((c.b - c.a) / c.a * 100, 0, 'f', 1) : QStringLiteral("-");
        const int w = int(std::max({c.label.size(), va.size(), vb.size(), ch.size()})) + 3;
        rows[0] += QStringLiteral("%1").arg(c.label, w);
        rows[1] += QStringLiteral("%1").arg(va, w);
        rows[2] += QStringLiteral("%1").arg(vb, w);
        rows[3] += QStringLiteral("%1").arg(ch, w);
    }
    return rows.join(QLatin1Char('\n'));
}

}  // namespace

namespace {

/// The last window's start (ns): the outcome series' last kDeltaWindowPoints points cover it.
std::int64_t windowStart(const sched::Snapshot& s) {
    const auto& pts = s.outcome;
    const std::int64_t period = pts.size() >= 2 ? pts[pts.size() - 1].t - pts[pts.size() - 2].t : s.outcome_period_ns;
    return pts.back().t - std::int64_t(kDeltaWindowPoints) * period;
}

}  // namespace

bool deltaShowsWindow(const sched::Snapshot& a, const sched::Snapshot& b, DeltaSince since, bool finished) {
    const bool have = a.outcome.size() >= kDeltaWindowPoints && b.outcome.size() >= kDeltaWindowPoints && a.outcome.back().t == b.outcome.back().t;
    if (!have || since == DeltaSince::start) return false;
    if (since == DeltaSince::window) return true;
    if (finished) return false;
    // Steady over the whole window: settled before it began, and not winding down.
    auto steady = [](const sched::Snapshot& s) {
        return s.steady.reached && s.steady.from_ns >= 0 && s.steady.wind_down_ns < 0 && windowStart(s) >= s.steady.from_ns;
    };
    return steady(a) && steady(b);
}

QString deltaTable(const sched::Snapshot& a, const sched::Snapshot& b, bool finished, bool recorded, DeltaSince since) {
    std::vector<Col> cols;
    auto mig = [](const sched::Snapshot& s) {
        std::uint64_t n = 0;
        for (std::size_t i = 0; i < s.migrations_by_cause.size(); ++i)
            if (i != std::size_t(sched::MigrationCause::fork)) n += s.migrations_by_cause[i];
        return double(n);
    };
    const bool window = !recorded && deltaShowsWindow(a, b, since, finished);
    QString from = QStringLiteral("t = 0");
    if (window) {
        // The rates of the last 100 ms of the outcome series: the workload's own figure, then the machine's.
        from = QStringLiteral("t = %1 s").arg(double(windowStart(a)) / 1e9, 0, 'f', 3);
        auto last = [](const sched::Snapshot& s, float sched::OutcomePoint::*f) {
            double m = 0;
            for (std::size_t i = s.outcome.size() - kDeltaWindowPoints; i < s.outcome.size(); ++i) m += double(s.outcome[i].*f);
            return m / double(kDeltaWindowPoints);
        };
        if (!a.outcome_unit.empty()) cols.push_back({q(a.outcome_unit), last(a, &sched::OutcomePoint::rate), last(b, &sched::OutcomePoint::rate), 0});
        cols.push_back({tr("busy CPUs"), last(a, &sched::OutcomePoint::busy_cpus), last(b, &sched::OutcomePoint::busy_cpus), 1});
        cols.push_back({tr("migrations/s"), last(a, &sched::OutcomePoint::migrations_per_s), last(b, &sched::OutcomePoint::migrations_per_s), 0});
        // schbench's own unit is wakeups/s: the machine's then goes by the kernel's name.
        const QString wakeups = q(a.outcome_unit) == QStringLiteral("wakeups/s") ? QStringLiteral("ttwu/s") : tr("wakeups/s");
        cols.push_back({wakeups, last(a, &sched::OutcomePoint::wakeups_per_s), last(b, &sched::OutcomePoint::wakeups_per_s), 0});
        cols.push_back(
            {tr("ctx switches/s"), last(a, &sched::OutcomePoint::ctx_switches_per_s), last(b, &sched::OutcomePoint::ctx_switches_per_s), 0});
        return table(cols, from);
    }
    // The workloads' own headline numbers once both sides have finished (mid-run they are partial).
    if (finished)
        for (std::size_t w = 0; w < a.reports.size() && w < b.reports.size(); ++w)
            for (std::size_t i = 0; i < a.reports[w].headline.size() && i < b.reports[w].headline.size() && i < 3; ++i)
                cols.push_back({q(a.reports[w].headline[i].label), a.reports[w].headline[i].value, b.reports[w].headline[i].value,
                                a.reports[w].headline[i].decimals});
    // A recorded trace counts its sched_waking records (the wakeups the views show).
    cols.push_back({recorded ? QStringLiteral("sched_waking") : tr("wakeups"), double(a.ttwu_count), double(b.ttwu_count), 0});
    cols.push_back({tr("migrations"), mig(a), mig(b), 0});
    cols.push_back({tr("ctx switches"), double(a.ctx_switches), double(b.ctx_switches), 0});
    cols.push_back({tr("wakeup p50 µs"), double(a.wakeup_latency.percentile(50)) / 1e3, double(b.wakeup_latency.percentile(50)) / 1e3, 1});
    cols.push_back({tr("wakeup p99 µs"), double(a.wakeup_latency.percentile(99)) / 1e3, double(b.wakeup_latency.percentile(99)) / 1e3, 1});
    if (!recorded || a.idle_delay_hits || b.idle_delay_hits)  // a trace has none
        cols.push_back({tr("idle-delay hits"), double(a.idle_delay_hits), double(b.idle_delay_hits), 0});
    if (!recorded || a.ttwu_races || b.ttwu_races)  // the wakeup's window: the chosen CPU looked idle, another wakee was on its way
        cols.push_back({tr("stacked by a race"), double(a.ttwu_races), double(b.ttwu_races), 0});
    // Sleep timers: the share of timer wakeups that came from another CPU's interrupt.
    if (a.timers_armed || b.timers_armed) {
        auto remote = [](const sched::Snapshot& s) {
            const std::uint64_t n = s.wake_by_timer_local + s.wake_by_timer_remote;
            return n ? 100.0 * double(s.wake_by_timer_remote) / double(n) : 0.0;
        };
        cols.push_back({tr("remote timer %"), remote(a), remote(b), 1});
    }
    // Kernel mutexes (pipe->mutex, locktorture's): the share of mutex_lock() calls that found the lock taken.
    auto counter = [](const sched::Snapshot& s, const char* key) {
        double v = 0;
        for (const auto& r : s.reports)
            for (const auto& c : r.counters)
                if (c.key == key) v += c.value;
        return v;
    };
    const double takenA = counter(a, "mutex_acquisitions"), takenB = counter(b, "mutex_acquisitions");
    if (takenA > 0 || takenB > 0) {
        auto share = [&](const sched::Snapshot& s, double taken) { return taken > 0 ? 100.0 * counter(s, "mutex_contended") / taken : 0.0; };
        cols.push_back({tr("mutex contended %"), share(a, takenA), share(b, takenB), 1});
    }
    return table(cols, recorded ? QString() : from);
}

}  // namespace schedlab
