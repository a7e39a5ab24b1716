// SPDX-License-Identifier: GPL-2.0-or-later
// checkpoint.h: a run's whole state at one instant in a file, and a run restored from it that
// goes on exactly as the saved one would have (same events, same digest). The file carries
// what builds the engine again (the scenario document, the side's knobs as they stand, the
// cost model, the seed) and the engine's state (Engine::state()), and optionally what the
// window keeps beside it (Simulation::state()). It is read only by a build of the same state
// format: the format hash (stateFormatHash()) says which.
//
// Layout: "SCHEDLAB-STATE\n", the format hash (8 bytes), then three length-prefixed parts (the
// JSON header, the engine's state, the window's buffers), then an FNV-1a checksum of
// everything before it. Every problem reading one is an InputError("FILE: ...").
#pragma once

#include "sim/scenario.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace sched {

/// The version of what Engine::state(), the workloads' state() and Simulation::state() (the
/// window's buffers) write; a change to any of them bumps it (their static_asserts on the
/// records' sizes point here). 2: an outcome point carries wakeups and context switches per second.
inline constexpr int kStateFormatVersion = 2;
/// A hash of the state format: kStateFormatVersion and the sizes of the records it writes
/// field by field (a record that changes size changes it).
std::uint64_t stateFormatHash();

struct Checkpoint {
    std::string file;  ///< where it was read from (messages)
    Scenario scenario;
    std::string variant;  ///< the side's name ("A", "baseline", ...)
    Knobs knobs;          ///< in force when saved (live changes included)
    CostModel cost;
    std::uint64_t seed = 1;
    std::int64_t time_ns = 0;  ///< the simulated time of the state
    std::uint64_t digest = 0;  ///< Engine::digest() when saved
    std::uint64_t events = 0;
    nlohmann::json extra_header;  ///< what the window adds (its label, marks); null from the CLI
    std::string engine;           ///< Engine::state()'s bytes
    std::string extra;            ///< the window's buffers (Simulation::state()), "" from the CLI
};

/// The bytes of a checkpoint of `e` (between events), which runs scenario `s` as `variant`.
std::string encodeCheckpoint(const Scenario& s, const std::string& variant, const CostModel& cost, std::uint64_t seed, Engine& e,
                             const nlohmann::json& extraHeader = nullptr, const std::string& extra = {});
/// Reads and checks a checkpoint: its magic, format hash, checksum and header. The scenario is
/// parsed again from the saved document (relative paths in it from `file`'s scenario's folder).
Checkpoint decodeCheckpoint(const std::string& bytes, const std::string& file);
Checkpoint loadCheckpoint(const std::string& path);
/// An engine built from the checkpoint's scenario, knobs and cost with options `o` (sinks, rings,
/// invariant checks), in the checkpoint's state; `stop_ns` its new hard stop (0: none). The
/// digest is checked against the saved one.
std::unique_ptr<Engine> restoreEngine(const Checkpoint& c, const RunOptions& o, std::int64_t stop_ns);

}  // namespace sched
