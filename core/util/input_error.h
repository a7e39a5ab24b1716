// SPDX-License-Identifier: GPL-2.0-or-later
// input_error.h: one error type for bad input files (state, topology, scenario):
// what() is the single line "FILE: KEY: problem" the CLI prints before exit 2.
#pragma once

#include <stdexcept>
#include <string>

namespace sched {

struct InputError : std::runtime_error {
    InputError(const std::string& file, const std::string& key, const std::string& problem)
        : std::runtime_error(file + ": " + (key.empty() ? std::string{} : key + ": ") + problem), file(file), key(key), problem(problem) {}
    std::string file, key, problem;
};

}  // namespace sched
