// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_ftrace_text.cpp: libFuzzer target for the ftrace text importer (core/trace/trace.h). Any input
// must give a Trace or an InputError, never a crash, a hang or a sanitizer report.
#include "util/input_error.h"
#include "trace/trace.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const sched::Trace t = sched::parseFtraceText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.txt");
        // Invariants every accepted trace keeps.
        if (t.events.size() != t.records.size()) __builtin_trap();
        if (t.problems.size() > sched::Trace::kMaxProblems || t.problem_count < t.problems.size()) __builtin_trap();
        for (const auto& e : t.events)
            if (e.cpu < 0 || e.cpu >= 4096) __builtin_trap();
        (void)t.summary();
    } catch (const sched::InputError&) {
    }
    return 0;
}
