// SPDX-License-Identifier: GPL-2.0-or-later
// tsan_canary.cpp: a deliberate data race (two threads increment one plain int), for
// scripts/tsan.sh: under the tsan preset ThreadSanitizer must report it, or its silence about
// the real tests would prove nothing. Not a test; nothing else runs it.
#include <cstdio>
#include <thread>

namespace {
int g_counter = 0;  // not atomic, not locked: the race
}

int main() {
    std::thread a([] {
        for (int i = 0; i < 100000; ++i) ++g_counter;
    });
    std::thread b([] {
        for (int i = 0; i < 100000; ++i) ++g_counter;
    });
    a.join();
    b.join();
    std::printf("%d\n", g_counter);
    return 0;
}
