// SPDX-License-Identifier: GPL-2.0-or-later
// trace_session.cpp: see trace_session.h.
#include "trace_session.h"

#include <QFileInfo>
#include <QTimer>

#include <algorithm>

namespace schedlab {

QString TraceSide::fileName() const { return QFileInfo(path).fileName(); }

sched::Snapshot TraceSide::snapshot(qint64 ns, const std::string& label) const {
    sched::Snapshot s = index ? index->snapshot(ns, label) : sched::traceSnapshot(*trace, topo, ns, label);
    if (reasons) s.reasons = reasons->upTo(s.now);  // schedlab's path on the trace's decisions so far
    return s;
}

QString TraceSide::agreementSummary(int progressPermille) const {
    if (!trace) return {};
    if (agreeRunning) return TraceSession::tr("agreement: replaying the decisions… %1 %").arg(progressPermille / 10);
    if (!agree) return TraceSession::tr("no agreement: %1").arg(agreeError);
    const sched::AgreeReport& r = *agree;
    auto pct = [](std::uint64_t a, std::uint64_t n) { return n ? QString::number(100.0 * double(a) / double(n), 'f', 1) : QStringLiteral("-"); };
    return TraceSession::tr("%1 decisions · agreement %2 % · moved %3: %4 % · stay-on-prev %5 % · %6 disagreements")
        .arg(r.decisions)
        .arg(pct(r.agree, r.decisions))
        .arg(r.moved)
        .arg(pct(r.agree_moved, r.moved), pct(r.stay_prev, r.decisions))
        .arg(disagreements.size());
}

TraceSession::TraceSession(QObject* parent) : QObject(parent) {
    m_progressTimer = new QTimer(this);
    m_progressTimer->setInterval(200);
    connect(m_progressTimer, &QTimer::timeout, this, [this] { emit agreementProgress(progressPermille()); });
    m_mail = new Mailbox(this);
}

TraceSession::~TraceSession() {
    cancel();
    m_jobs.joinAll();  // they see the cancel flags; their results, posted to m_mail, are dropped with it
}

void TraceSession::cancel() {
    for (const auto& c : {m_agreeCancel, m_indexCancel})
        if (c) *c = true;
}

void TraceSession::open(std::shared_ptr<const sched::Trace> trace, std::shared_ptr<const sched::Topology> topo, const QString& path) {
    close();
    m_side.trace = std::move(trace);
    m_side.topo = std::move(topo);
    m_side.path = path;
    std::tie(m_side.t0, m_side.t1) = sched::traceSpan(*m_side.trace);
    m_side.agreeRunning = true;
}

void TraceSession::close() {
    cancel();
    ++m_generation;  // a replay or an index still being made is dropped when it ends
    m_side = TraceSide{};
    m_agreeCancel.reset();
    m_indexCancel.reset();
    m_progress.reset();
    m_progressTimer->stop();
}

std::pair<std::shared_ptr<const sched::AgreeReport>, QString> TraceSession::replayAgreement(const sched::Trace& trace,
                                                                                            std::shared_ptr<const sched::Topology> topo,
                                                                                            const std::function<bool(double)>& progress) {
    try {
        if (!trace.ns_timestamps)
            return {nullptr, tr("timestamps are not in ns (counter/uptime/tsc clock): PELT and wakee_flips decay cannot be rebuilt")};
        // Baseline knobs and the default options, as `schedlab-cli agree TRACE --topology T` uses
        // them; every Decision is kept, the disagreeing ones with their steps for the inspector.
        sched::AgreeOptions o;
        o.keep_decisions = true;
        o.trace_disagreements = true;
        o.progress = progress;
        auto r = std::make_shared<const sched::AgreeReport>(sched::agree(trace, std::move(topo), sched::Knobs{}, o));
        if (r->cancelled) return {nullptr, tr("cancelled")};
        return {std::move(r), QString()};
    } catch (const std::exception& e) {
        return {nullptr, QString::fromUtf8(e.what())};
    }
}

void TraceSession::start(std::shared_ptr<const sched::AgreeReport> agreed) {
    if (!isOpen()) return;
    if (agreed) {
        finishAgreement(std::move(agreed), QString());
    } else {
        const int gen = m_generation;
        m_agreeCancel = std::make_shared<std::atomic<bool>>(false);
        m_progress = std::make_shared<std::atomic<int>>(0);
        m_progressTimer->start();
        m_jobs.start([this, mail = m_mail->handle(), gen, trace = m_side.trace, topo = m_side.topo, cancel = m_agreeCancel, done = m_progress] {
            auto result = replayAgreement(*trace, topo, [cancel, done](double share) {
                *done = int(share * 1000);
                return !cancel->load();
            });
            mail.post([this, gen, result = std::move(result)] {
                if (gen != m_generation) return;  // another trace (or none) by now
                finishAgreement(result.first, result.second);
            });
        });
    }
    startIndex();
}

void TraceSession::finishAgreement(std::shared_ptr<const sched::AgreeReport> r, const QString& err) {
    m_progressTimer->stop();
    m_side.agreeRunning = false;
    m_side.agree = std::move(r);
    m_side.agreeError = err;
    m_side.disagreements.clear();
    if (m_side.agree) {
        for (const auto& row : m_side.agree->rows)
            if (row.sim != row.kernel) m_side.disagreements.push_back(&row);
        std::stable_sort(m_side.disagreements.begin(), m_side.disagreements.end(),
                         [](const sched::AgreeRow* a, const sched::AgreeRow* b) { return a->time < b->time; });
        m_side.reasons = std::make_shared<const sched::AgreeReasonIndex>(*m_side.agree);
    }
    emit agreementFinished();
}

void TraceSession::startIndex() {
    const int gen = m_generation;
    m_indexCancel = std::make_shared<std::atomic<bool>>(false);
    using Index = std::shared_ptr<const sched::TraceIndex>;
    m_jobs.start([this, mail = m_mail->handle(), gen, trace = m_side.trace, topo = m_side.topo, cancel = m_indexCancel] {
        // The index refers to its trace: one allocation holds both, the pointer is the index.
        struct Held {
            std::shared_ptr<const sched::Trace> trace;
            std::unique_ptr<sched::TraceIndex> index;
        };
        auto h = std::make_shared<Held>();
        h->trace = trace;
        sched::TraceIndexOptions o;
        o.progress = [cancel](double) { return !cancel->load(); };
        h->index = std::make_unique<sched::TraceIndex>(*trace, topo, o);
        Index idx(h, h->index.get());
        mail.post([this, gen, idx = std::move(idx)]() mutable {
            if (gen != m_generation || !idx || idx->cancelled()) return;
            m_side.index = std::move(idx);
            emit indexReady();
        });
    });
}

}  // namespace schedlab
