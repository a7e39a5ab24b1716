// SPDX-License-Identifier: GPL-2.0-or-later
// topology_json.h: a topology from JSON: a preset name, a file (JSON or
// lstopo XML), or an inline parametric object.
#pragma once

#include <cstdint>

#include "util/input_error.h"
#include "topology/topology.h"

#include <nlohmann/json.hpp>

#include <string>

namespace sched {

/// `v` is the value of the "topology" key of `file`; `key` its JSON path for
/// messages; relative file paths are resolved against `baseDir`.
/// Throws InputError naming file and key.
Topology topologyFromJson(const nlohmann::json& v, const std::string& file, const std::string& key, const std::string& baseDir);

/// Loads a topology named on the command line: preset name, .json or .xml file.
Topology loadTopology(const std::string& nameOrPath);

/// The largest JSON input file read (scenario, state, topology): 16 MiB.
inline constexpr std::uintmax_t kMaxJsonFileBytes = std::uintmax_t(16) << 20;
/// Reads a whole file; throws InputError(file, "", "cannot read ..."), also for a directory or a
/// file larger than kMaxJsonFileBytes.
std::string readFileOrThrow(const std::string& path, std::uintmax_t maxBytes = kMaxJsonFileBytes,
                            const char* what = "a scenario, state or topology file");
/// Deepest nesting of objects and arrays a schedlab JSON file may have (the shipped ones use 4).
inline constexpr int kMaxJsonDepth = 64;
/// Parses JSON text; syntax errors become InputError with the line and column, nesting deeper
/// than kMaxJsonDepth and numbers a double cannot hold an InputError naming the file.
nlohmann::json parseJsonOrThrow(const std::string& text, const std::string& file);

}  // namespace sched
