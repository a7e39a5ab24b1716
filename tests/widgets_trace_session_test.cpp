// SPDX-License-Identifier: GPL-2.0-or-later
// widgets_trace_session_test.cpp: TraceSession, one recorded trace's side and its background jobs,
// watched with QSignalSpy: the replay gives agree()'s figures and the disagreements in time
// order; the index is made and gives the same machine as a replay from the start; a trace opened
// over one still being replayed drops the old jobs' results; close() stops them; an agreement
// already replayed is taken at once; a trace that cannot be replayed says why.
#include "trace_session.h"

#include "replay/replay.h"
#include "replay/trace_snapshot.h"
#include "trace/trace.h"

#include <QCoreApplication>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include <algorithm>

using namespace schedlab;

namespace {

std::string samplePath() { return std::string(SCHEDLAB_TEST_DATA) + "/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz"; }

std::shared_ptr<const sched::Trace> sample() {
    static const auto t = std::make_shared<const sched::Trace>(sched::readTrace(samplePath()));
    return t;
}

std::shared_ptr<const sched::Topology> topo() {
    static const auto t = std::make_shared<const sched::Topology>(sched::Topology::preset("qemu-2s2c2t"));
    return t;
}

/// A trace of two records with counter timestamps: no agreement can be replayed on it.
std::shared_ptr<const sched::Trace> counterTrace() {
    const std::string text =
        "# tracer: nop\n"
        "#\n"
        "            bash-100   [001] d..2.   1000: sched_waking: comm=cat pid=200 prio=120 target_cpu=002\n"
        "            bash-100   [001] d..2.   1010: sched_wakeup: comm=cat pid=200 prio=120 target_cpu=002\n";
    return std::make_shared<const sched::Trace>(sched::parseFtraceText(text, "counter.txt"));
}

}  // namespace

TEST(TraceSession, ReplaysTheSampleAsAgreeDoesAndMakesItsIndex) {
    TraceSession s;
    QSignalSpy finished(&s, &TraceSession::agreementFinished);
    QSignalSpy indexed(&s, &TraceSession::indexReady);
    EXPECT_FALSE(s.isOpen());
    EXPECT_TRUE(s.agreementSummary().isEmpty());
    s.open(sample(), topo(), QString::fromStdString(samplePath()));
    ASSERT_TRUE(s.isOpen());
    EXPECT_TRUE(s.side().agreeRunning);  // counts as running from open() on
    EXPECT_EQ(s.side().fileName(), QStringLiteral("trace.txt.gz"));
    const auto [t0, t1] = sched::traceSpan(*sample());
    EXPECT_EQ(s.side().t0, t0);
    EXPECT_EQ(s.side().t1, t1);
    s.start();
    EXPECT_EQ(finished.count(), 0);  // on the thread pool, not before start() returns
    EXPECT_TRUE(s.agreementSummary().startsWith(QStringLiteral("agreement: replaying"))) << s.agreementSummary().toStdString();
    ASSERT_TRUE(finished.wait(120000));
    EXPECT_EQ(finished.count(), 1);
    const TraceSide& side = s.side();
    EXPECT_FALSE(side.agreeRunning);
    ASSERT_TRUE(side.agree) << side.agreeError.toStdString();
    const sched::AgreeReport cli = sched::agree(*sample(), topo(), sched::Knobs{}, sched::AgreeOptions{});
    EXPECT_EQ(side.agree->decisions, cli.decisions);
    EXPECT_EQ(side.agree->agree, cli.agree);
    EXPECT_EQ(side.agree->knobs, "baseline");
    // The disagreements: every row where schedlab's CPU is not the kernel's, in time order.
    ASSERT_EQ(side.disagreements.size(), std::size_t(cli.decisions - cli.agree));
    ASSERT_GT(side.disagreements.size(), 1u);
    EXPECT_TRUE(std::is_sorted(side.disagreements.begin(), side.disagreements.end(),
                               [](const sched::AgreeRow* a, const sched::AgreeRow* b) { return a->time < b->time; }));
    for (const sched::AgreeRow* r : side.disagreements) EXPECT_NE(r->sim, r->kernel);
    EXPECT_EQ(side.disagreement(0), side.disagreements.front());
    EXPECT_EQ(side.disagreement(-1), nullptr);
    EXPECT_EQ(side.disagreement(int(side.disagreements.size())), nullptr);
    EXPECT_TRUE(s.agreementSummary().contains(QStringLiteral("%1 decisions").arg(cli.decisions))) << s.agreementSummary().toStdString();
    EXPECT_TRUE(s.agreementSummary().endsWith(QStringLiteral("%1 disagreements").arg(side.disagreements.size())));
    // The index: the same machine at a mid-trace cursor as a replay from the start, reasons included.
    if (!side.index) {
        ASSERT_TRUE(indexed.wait(120000));
    }
    EXPECT_EQ(indexed.count(), 1);
    ASSERT_TRUE(side.index);
    const std::int64_t mid = t0 + (t1 - t0) / 2;
    const sched::Snapshot viaIndex = side.snapshot(mid, "trace");
    sched::Snapshot plain = sched::traceSnapshot(*sample(), topo(), mid, "trace");
    EXPECT_EQ(viaIndex.now, plain.now);
    ASSERT_EQ(viaIndex.cpus.size(), plain.cpus.size());
    for (std::size_t c = 0; c < plain.cpus.size(); ++c) EXPECT_EQ(viaIndex.cpus[c].nr_running, plain.cpus[c].nr_running) << "CPU " << c;
    EXPECT_EQ(viaIndex.reasons, sched::AgreeReasonIndex(*side.agree).upTo(viaIndex.now));
}

TEST(TraceSession, ATraceOpenedOverAReplayDropsTheOldJobs) {
    TraceSession s;
    QSignalSpy finished(&s, &TraceSession::agreementFinished);
    s.open(sample(), topo(), QStringLiteral("first.txt"));
    s.start();
    // Replaced at once: the first replay is cancelled and its result ignored; only the second
    // trace's agreement arrives.
    s.open(counterTrace(), topo(), QStringLiteral("counter.txt"));
    EXPECT_EQ(s.side().path, QStringLiteral("counter.txt"));
    EXPECT_FALSE(s.side().agree);
    s.start();
    ASSERT_TRUE(finished.wait(120000));
    QCoreApplication::processEvents();
    EXPECT_FALSE(finished.wait(500));  // and nothing more from the first trace
    EXPECT_EQ(finished.count(), 1);
    EXPECT_EQ(s.side().path, QStringLiteral("counter.txt"));
    EXPECT_FALSE(s.side().agree);
    EXPECT_TRUE(s.side().agreeError.contains(QStringLiteral("not in ns"))) << s.side().agreeError.toStdString();
    EXPECT_TRUE(s.agreementSummary().startsWith(QStringLiteral("no agreement: ")));
    EXPECT_TRUE(s.side().disagreements.empty());
}

TEST(TraceSession, CloseStopsTheJobsAndEmptiesTheSide) {
    TraceSession s;
    QSignalSpy finished(&s, &TraceSession::agreementFinished);
    QSignalSpy indexed(&s, &TraceSession::indexReady);
    s.open(sample(), topo(), QStringLiteral("sample"));
    s.start();
    s.close();
    EXPECT_FALSE(s.isOpen());
    EXPECT_FALSE(s.side().agreeRunning);
    EXPECT_EQ(s.progressPermille(), 0);
    EXPECT_FALSE(finished.wait(1000));  // the cancelled replay's end is not reported
    EXPECT_EQ(indexed.count(), 0);
    EXPECT_FALSE(s.side().agree);
    EXPECT_FALSE(s.side().index);
}

TEST(TraceSession, AnAgreementAlreadyReplayedIsTakenAtOnce) {
    auto [agreed, err] = TraceSession::replayAgreement(*sample(), topo());
    ASSERT_TRUE(agreed) << err.toStdString();
    TraceSession s;
    QSignalSpy finished(&s, &TraceSession::agreementFinished);
    s.open(sample(), topo(), QStringLiteral("sample"));
    s.start(agreed);
    EXPECT_EQ(finished.count(), 1);  // before start() returned
    EXPECT_EQ(s.side().agree, agreed);
    EXPECT_EQ(s.side().disagreements.size(), std::size_t(agreed->decisions - agreed->agree));
    // replayAgreement keeps the decisions and traces the disagreeing ones (for the inspector).
    EXPECT_EQ(agreed->rows.size(), std::size_t(agreed->decisions));
    // Cancelled through its progress callback: null and "cancelled".
    const auto [none, why] = TraceSession::replayAgreement(*sample(), topo(), [](double) { return false; });
    EXPECT_FALSE(none);
    EXPECT_EQ(why, QStringLiteral("cancelled"));
}

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
