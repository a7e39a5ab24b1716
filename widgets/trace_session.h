// SPDX-License-Identifier: GPL-2.0-or-later
// trace_session.h: one recorded trace shown as a side of the window (A, or B beside it) and the
// background work behind it: the agreement replay (sched::agree() with baseline knobs, as
// `schedlab-cli agree` runs it) and the cursor's TraceIndex, each on the thread pool with its own
// cancel flag. No widgets: the window reads the side and listens to the signals.
#pragma once

#include "mailbox.h"
#include "replay/replay.h"
#include "replay/trace_snapshot.h"
#include "trace/trace.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

class QTimer;

namespace schedlab {

/// What the window shows of one recorded trace. Everything in it belongs to the same trace.
struct TraceSide {
    std::shared_ptr<const sched::Trace> trace;
    std::shared_ptr<const sched::Topology> topo;  ///< the machine it was recorded on
    QString path;
    qint64 t0 = 0, t1 = 0;                                   ///< its first and last event (trace clock)
    std::shared_ptr<const sched::TraceIndex> index;          ///< null until made in the background
    std::shared_ptr<const sched::AgreeReport> agree;         ///< null while replaying, after an error, or without a trace
    std::shared_ptr<const sched::AgreeReasonIndex> reasons;  ///< schedlab's final reasons over time (the counters)
    std::vector<const sched::AgreeRow*> disagreements;       ///< into *agree, in time order
    bool agreeRunning = false;                               ///< opened and its agreement not finished (or not started) yet
    QString agreeError;                                      ///< why there is no agreement ("" while it runs or when it ran)

    QString fileName() const;
    qint64 span() const { return t1 - t0; }
    /// The machine at trace time `ns`: from the index once it is made, else replayed from the start;
    /// `reasons` filled up to that time once the agreement is known.
    sched::Snapshot snapshot(qint64 ns, const std::string& label) const;
    const sched::AgreeRow* disagreement(int k) const { return k >= 0 && k < int(disagreements.size()) ? disagreements[std::size_t(k)] : nullptr; }
    /// "2089 decisions · agreement 96.8 % · moved 120: 61.9 % · stay-on-prev 95.5 % · 67 disagreements",
    /// the replay's progress while it runs, or "no agreement: why". "" without a trace.
    QString agreementSummary(int progressPermille) const;
};

/// Owns one TraceSide and its background jobs. open() drops whatever ran for the previous trace
/// (its jobs are cancelled and their results ignored); start() begins the replay and the index.
class TraceSession : public QObject {
    Q_OBJECT

public:
    explicit TraceSession(QObject* parent = nullptr);
    ~TraceSession() override;  ///< cancels the jobs still running

    /// Shows `trace` recorded on `topo`: the side is set, its agreement counts as running, nothing
    /// is started yet.
    void open(std::shared_ptr<const sched::Trace> trace, std::shared_ptr<const sched::Topology> topo, const QString& path);
    /// Starts the agreement replay (or takes `agreed`, already replayed: agreementFinished() is
    /// emitted before this returns) and the cursor index, on the thread pool.
    void start(std::shared_ptr<const sched::AgreeReport> agreed = nullptr);
    /// No trace: the jobs are cancelled, the side is empty.
    void close();
    /// Cancels the jobs (closing the window); the side stays as it is.
    void cancel();

    bool isOpen() const { return bool(m_side.trace); }
    const TraceSide& side() const { return m_side; }
    /// The replay's share done, per mille (0 when none runs).
    int progressPermille() const { return m_progress ? m_progress->load() : 0; }
    QString agreementSummary() const { return m_side.agreementSummary(progressPermille()); }

    /// The agreement the window shows for a trace: sched::agree() with baseline knobs and the
    /// CLI's default options, every Decision kept, the disagreeing ones traced. Null and the
    /// one-line reason when it cannot run. Any thread. `progress` (any thread): the share replayed
    /// (0..1); false stops it (then null and "cancelled").
    static std::pair<std::shared_ptr<const sched::AgreeReport>, QString> replayAgreement(const sched::Trace& trace,
                                                                                         std::shared_ptr<const sched::Topology> topo,
                                                                                         const std::function<bool(double)>& progress = {});

signals:
    /// The agreement is known (side().agree) or has failed (side().agreeError).
    void agreementFinished();
    /// While the replay runs, every 200 ms.
    void agreementProgress(int permille);
    /// side().index has been made: the cursor moves without replaying from the start.
    void indexReady();

private:
    void finishAgreement(std::shared_ptr<const sched::AgreeReport> r, const QString& err);
    void startIndex();

    TraceSide m_side;
    int m_generation = 0;  ///< a job made for an older trace (or none) is ignored
    std::shared_ptr<std::atomic<bool>> m_agreeCancel, m_indexCancel;
    std::shared_ptr<std::atomic<int>> m_progress;
    QTimer* m_progressTimer = nullptr;
    Mailbox* m_mail = nullptr;  ///< the jobs' results, back on the GUI thread
    JobThreads m_jobs;          ///< the agreement replay and the cursor index, each on a thread of its own
};

}  // namespace schedlab
