// SPDX-License-Identifier: GPL-2.0-or-later
// The engine's event heap (event_heap.h) against std::priority_queue over the same key:
// the pop sequences must be identical, with many ties on time, creation time and tag.
#include "sim/event_heap.h"

#include <gtest/gtest.h>

#include <queue>
#include <random>
#include <vector>

namespace sched {
namespace {

struct After {
    bool operator()(const EventHeap::Entry& x, const EventHeap::Entry& y) const { return EventHeap::before(y, x); }
};

bool same(const EventHeap::Entry& x, const EventHeap::Entry& y) { return x.t == y.t && x.ctime == y.ctime && x.tag == y.tag && x.seq == y.seq; }

TEST(EventHeap, PopsTheSameSequenceAsAReferenceQueue) {
    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
        std::mt19937_64 rng(seed);
        EventHeap h;
        std::priority_queue<EventHeap::Entry, std::vector<EventHeap::Entry>, After> ref;
        std::uint64_t seq = 0;
        std::int64_t now = 0;
        for (int op = 0; op < 20000; ++op) {
            const bool doPush = ref.empty() || rng() % 100 < 55;
            if (doPush) {
                // Small ranges so that time, creation time and tag all tie often.
                const EventHeap::Entry e{now + std::int64_t(rng() % 8), now - std::int64_t(rng() % 3),
                                         (rng() % 3) << 56 | (rng() % 4) << 32 | rng() % 2, seq++};
                h.push(e);
                ref.push(e);
            } else {
                ASSERT_TRUE(same(h.top(), ref.top())) << "seed " << seed << " op " << op;
                const EventHeap::Entry got = h.pop();
                ASSERT_TRUE(same(got, ref.top())) << "seed " << seed << " op " << op;
                now = got.t;
                ref.pop();
            }
            ASSERT_EQ(h.size(), ref.size());
        }
        while (!ref.empty()) {
            ASSERT_TRUE(same(h.pop(), ref.top()));
            ref.pop();
        }
        EXPECT_TRUE(h.empty());
    }
}

TEST(EventHeap, DecodesTheTag) {
    const EventHeap::Entry e{5, 1, std::uint64_t(3) << 56 | std::uint64_t(0xabcdef) << 32 | 0x12345678u, 0};
    EXPECT_EQ(e.type(), 3);
    EXPECT_EQ(e.a(), 0xabcdef);
    EXPECT_EQ(e.b(), 0x12345678u);
}

}  // namespace
}  // namespace sched
