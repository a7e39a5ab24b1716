// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_cli_args.cpp: libFuzzer target for schedlab-cli's command line (app/cli_args.h): the input,
// split at NUL bytes, is argv[1..] (at most 64 words), parsed by the same CLI11 app with the same
// checks as schedlab-cli's main(). Nothing runs. Any input must end in "run this subcommand",
// --help / --version (exit 0) or one refusal line (exit 2); never another exception, a crash, a
// sanitizer report, or checked values out of their range. Run with -close_fd_mask=3 (the help
// and the refusals are printed).
#include "cli_args.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> words{"schedlab-cli"};
    std::string w;
    for (std::size_t i = 0; i < size && words.size() <= 64; ++i) {
        if (data[i] == 0) {
            words.push_back(w);
            w.clear();
        } else {
            w += char(data[i]);
        }
    }
    if (words.size() <= 64) words.push_back(w);
    std::vector<char*> argv;
    for (auto& s : words) argv.push_back(s.data());
    argv.push_back(nullptr);

    CLI::App app{"schedlab-cli"};
    sched::Cli o;
    const int rc = sched::parseCommandLine(app, o, int(words.size()), argv.data());
    if (rc != -1 && rc != 0 && rc != 2) __builtin_trap();
    if (rc == -1) {
        // One subcommand, and the checked values within their checks.
        int given = 0;
        for (CLI::App* c :
             {o.topo, o.explain, o.knobs, o.run, o.agree, o.compareTraces, o.trace, o.compare, o.sweep, o.reproduce, o.demo, o.scenarios})
            given += c && c->parsed() > 0;
        if (given != 1) __builtin_trap();
        if (o.topoCpu < -1) __builtin_trap();
        if (o.sim.untilSteady < 0 || o.sim.untilSteady > 3600) __builtin_trap();
        if (o.rep.steadyHold < 0 || o.rep.steadyHold > 3600) __builtin_trap();
        if (o.ag.examples > 1000000) __builtin_trap();
        if (o.sim.seed && *o.sim.seed > std::uint64_t(INT64_MAX)) __builtin_trap();  // a wrapped negative number
        for (std::uint64_t s : o.rep.seeds)
            if (s > std::uint64_t(INT64_MAX)) __builtin_trap();
    }
    return 0;
}
