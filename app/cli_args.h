// SPDX-License-Identifier: GPL-2.0-or-later
// cli_args.h: schedlab-cli's command line: the subcommands and options (CLI11), their checks, and
// the values they bind. Kept apart from running them so that tests/bench/fuzz/fuzz_cli_args.cpp
// parses command lines exactly as schedlab-cli does.
#pragma once

#include "cli_sim.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace sched {

// The option values, bound to CLI11 while main() parses, and the subcommands given.
struct Cli {
    CLI::App *topo = nullptr, *explain = nullptr, *knobs = nullptr, *run = nullptr, *agree = nullptr, *compareTraces = nullptr, *trace = nullptr,
             *compare = nullptr, *sweep = nullptr, *reproduce = nullptr, *demo = nullptr, *scenarios = nullptr;
    std::string topoName;
    bool topoJson = false, topoList = false;
    int topoCpu = -1;
    std::string statePath, knobPreset;
    bool explainJson = false;
    std::vector<std::string> sets;
    SimArgs sim;
    AgreeArgs ag;
    CompareTracesArgs ct;
    std::string tracePath, traceClock;
    bool traceQueued = false;
    std::string traceCsv;
    ReproduceArgs rep;
};

/// Adds every subcommand and option to `app`, bound to `o`, in the order --help lists them.
void addSubcommands(CLI::App& app, Cli& o);

/// Adds the subcommands to `app` and parses the command line into `o`: -1 when a subcommand is to run,
/// else the exit status (0 after --help or --version, printed; 2 after a bad command line,
/// with its one line "schedlab-cli: ... (see --help)" on stderr).
int parseCommandLine(CLI::App& app, Cli& o, int argc, char** argv);

}  // namespace sched
