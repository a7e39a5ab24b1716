// SPDX-License-Identifier: GPL-2.0-or-later
// trace_reader_main.cpp: `schedlab-trace-reader`, started by readTraceDat() (see trace_dat.cpp).
#include "trace/trace_dat_reader.h"

int main(int argc, char** argv) { return sched::traceReaderMain(argc, argv); }
