// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_rq_csv.cpp: libFuzzer target for the bpftrace rq-length CSV reader (core/trace/rq_csv.h).
#include "util/input_error.h"
#include "trace/rq_csv.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const sched::RqLenCsv r = sched::parseRqLenCsv(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv");
        if (r.values.size() != r.rows() * r.cpus.size()) __builtin_trap();
        for (std::size_t row = 0; row < r.rows(); ++row)
            for (std::size_t c = 0; c < r.cpus.size(); ++c)
                if (r.nrRunning(row, c) < -1) __builtin_trap();
    } catch (const sched::InputError&) {
    }
    return 0;
}
