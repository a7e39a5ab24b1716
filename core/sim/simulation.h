// SPDX-License-Identifier: GPL-2.0-or-later
// simulation.h: one scenario side (A or B) as the GUI drives it: an Engine plus the
// buffers a live view needs (rq-length samples at a fixed simulated period, recent
// migrations), stepping by time / event / wakeup, live knob changes, and immutable
// Snapshot values copied out for painting. No Qt: the GUI's worker thread owns these.
#pragma once

#include "sim/engine.h"
#include "util/histogram.h"
#include "kernel/knobs.h"
#include "sim/metrics.h"
#include "sim/snapshot.h"
#include "sim/scenario.h"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sched {

struct Checkpoint;
class StateArchive;

struct SimOptions {
    std::int64_t sample_period_ns = 1000000;  ///< live rq-length sampling (GUI side only)
    std::size_t sample_rows = 2000;
    std::int64_t arrow_span_ns = 5000000;       ///< migrations kept for arrows
    std::size_t max_migrations = 20000;         ///< cap of the kept migrations (oldest dropped)
    std::size_t decisions = 256;                ///< decisions copied into a snapshot
    std::int64_t outcome_period_ns = 10000000;  ///< the outcome series' period (10 ms)
    std::size_t outcome_rows = 6000;            ///< outcome points kept (60 s of simulated time at 10 ms)
};

/// One side of an A/B run.
class Simulation {
public:
    /// Builds the engine for `knobs` from the scenario (seed and cost from the scenario unless `seed` != 0).
    Simulation(const Scenario& s, Knobs knobs, std::string label, SimOptions o = {}, std::uint64_t seed = 0);

    /// Advances by `ns` of simulated time, sampling rq lengths on the way. False when done.
    bool advance(std::int64_t ns);
    /// Runs exactly one event (false when done).
    bool stepEvent();
    /// Runs until the next wakeup decision has been made, at most `limit_ns` ahead; the wakeup is
    /// traced step by step (lastTraced()). False when none came.
    bool stepWakeup(std::int64_t limit_ns = 1000000000);
    /// Applies new knobs from now on (hz cannot change live: it is kept); the change is marked
    /// in the outcome series (Snapshot::knob_marks).
    void setKnobs(const Knobs& k);
    /// A mark of its own at the current time in Snapshot::knob_marks ("branched from A").
    void addMark(std::string text) { m_knobMarks.push_back({now(), std::move(text)}); }
    /// The side's whole state as a checkpoint file's bytes (sim/checkpoint.h): the engine's, and
    /// the window's own buffers (samples, migrations, the outcome series, knob marks), and
    /// `companion`: bytes carried along (the window's file: side B's checkpoint inside A's).
    std::string checkpoint(std::string companion = {});
    /// A side in the state a checkpoint holds (the window's buffers too when it has them),
    /// labelled `label` ("": the checkpoint's). InputError when the file's state does not restore.
    static std::unique_ptr<Simulation> fromCheckpoint(const Checkpoint& c, std::string label = {}, SimOptions o = {},
                                                      std::string* companion = nullptr);
    /// The bytes a checkpoint of checkpoint(companion) carries along ("" for none: the CLI's).
    static std::string companionOf(const Checkpoint& c);
    /// "B from here": a new simulation in the state `src` is in now (through a checkpoint in
    /// memory: the same digest, outcome series, samples and marks), labelled `label`.
    static std::unique_ptr<Simulation> copyOf(Simulation& src, std::string label);
    /// Saves or restores the window's buffers (the engine's state is the checkpoint's).
    void state(StateArchive& ar);
    const Knobs& knobs() const { return m_engine->knobs(); }

    Snapshot snapshot() const;
    const Engine& engine() const { return *m_engine; }
    std::int64_t now() const { return m_engine->now(); }
    bool done() const { return m_engine->done(); }
    /// The run so far as the CLI's reports take it (reports and digest brought up to date).
    const RunResult& result() const;
    const Scenario& scenario() const { return m_scenario; }
    /// The last wakeup traced by stepWakeup (with its steps), or nullptr.
    const DecisionRecord* lastTraced() const { return m_engine->lastTraced(); }

private:
    Simulation(const Checkpoint& c, std::string label, SimOptions o);
    void attachSinks();
    void collect();

    Scenario m_scenario;
    std::string m_label;
    SimOptions m_opt;
    std::uint64_t m_seed = 0;                                   ///< as given (0: the scenario's)
    Knobs m_initialKnobs;                                       ///< at t = 0
    std::vector<std::pair<std::int64_t, Knobs>> m_knobHistory;  ///< every setKnobs(): when, and the knobs from then on
    mutable RunResult m_run;                                    ///< owns the engine
    Engine* m_engine = nullptr;
    std::int64_t m_nextSample = 0;
    std::deque<std::int64_t> m_sampleT;
    std::deque<std::uint16_t> m_sampleLen;
    std::deque<MigrationView> m_migrations;
    std::uint64_t m_seenEvents = 0;
    // The outcome series: the counters at the last point, and the points kept.
    struct OutcomeMark {
        double work = 0, busy_ns = 0, migrations = 0, wakeups = 0, ctx_switches = 0;
    };
    OutcomeMark outcomeNow() const;
    std::int64_t m_nextOutcome = 0;
    OutcomeMark m_lastOutcome;
    std::deque<OutcomePoint> m_outcome;
    std::vector<KnobMark> m_knobMarks;
    std::string m_companion;  ///< fromCheckpoint(): what the checkpoint carried along
};

}  // namespace sched
