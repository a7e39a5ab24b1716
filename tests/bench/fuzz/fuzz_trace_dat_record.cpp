// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_trace_dat_record.cpp: libFuzzer target for the trace.dat record decoding (the reader's
// onRecord, core/trace/trace_dat_child.cpp, through datio::RecordDecoder): records made of the
// input's bytes, decoded with the event formats of a real trace.dat, then the reader's metadata
// frame. The input's first byte picks the formats: a schedlab export (every event schedlab
// reads, timers and prints included) or the Linux 6.1 recording (sched_migrate_task, the
// kernel's own field layout). Any input must decode without a crash or a sanitizer report.
//
// SCHEDLAB_FUZZ_SEEDS=DIR: write seed inputs (real records of both files) to DIR and exit.
#include "trace/trace_dat_internal.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <span>
#include <string>

namespace {
std::unique_ptr<sched::datio::RecordDecoder> g_decoders[2];
const char* const kFiles[2] = {SCHEDLAB_FUZZ_BASE_DIR "/tests/bench/fuzz/corpus/formats/schedlab-export.dat",
                               SCHEDLAB_FUZZ_BASE_DIR "/tests/data/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.dat"};
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    for (int k = 0; k < 2; ++k) g_decoders[k] = std::make_unique<sched::datio::RecordDecoder>(kFiles[k]);
    if (const char* dir = std::getenv("SCHEDLAB_FUZZ_SEEDS")) {
        int n = 0;
        for (int k = 0; k < 2; ++k)
            for (const std::string& in : g_decoders[k]->sampleInputs(24)) {
                std::ofstream f(std::string(dir) + "/seed-" + std::to_string(k) + "-" + std::to_string(n++), std::ios::binary);
                f.put(char(k));
                f.write(in.data(), std::streamsize(in.size()));
            }
        std::printf("%d seed inputs in %s\n", n, dir);
        std::exit(0);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto r = g_decoders[data[0] & 1]->decode(std::span<const std::uint8_t>(data + 1, size - 1));
    if (r.events > r.records || r.metadata.empty()) __builtin_trap();
    return 0;
}
