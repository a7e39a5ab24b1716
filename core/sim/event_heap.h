// SPDX-License-Identifier: GPL-2.0-or-later
// event_heap.h: the engine's pending events other than CPU burst ends (ticks, timers, IPIs,
// reschedules, samples), a 4-ary min-heap of 32-byte entries in the engine's order key
// (t, ctime, tag, seq).
//
// The key is a strict total order (seq is unique), so every correct priority queue pops the
// same sequence: this one gives the same runs, bit for bit, as the binary std::push_heap /
// std::pop_heap over 40-byte events it replaces. It is shallower (log4 n levels), a node's
// four children are adjacent (128 bytes), and an entry is a half cache line: the event's type
// and targets are not stored twice, they are decoded from the tag (type << 56 | a << 32 | b,
// a < 2^24 checked by the engine). On a 512-CPU machine the binary heap's comparisons were
// one L1 data miss in thirteen of a wakeup-bound run (bench_engine WakeupCostVsCpus).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sched {

class EventHeap {
public:
    struct Entry {
        std::int64_t t;
        std::int64_t ctime;
        std::uint64_t tag;
        std::uint64_t seq;
        /// The tag of an event of `type` on target `a` (< 2^24) with argument `b`; the accessors below decode it.
        static std::uint64_t makeTag(std::uint8_t type, std::int32_t a, std::uint32_t b) {
            return std::uint64_t(type) << 56 | (std::uint64_t(std::uint32_t(a)) & 0xffffffULL) << 32 | b;
        }
        [[nodiscard]] std::uint8_t type() const { return std::uint8_t(tag >> 56); }
        [[nodiscard]] std::int32_t a() const { return std::int32_t((tag >> 32) & 0xffffffULL); }
        [[nodiscard]] std::uint32_t b() const { return std::uint32_t(tag); }
    };
    static_assert(sizeof(Entry) == 32);

    /// The order key: x comes before y.
    static bool before(const Entry& x, const Entry& y) {
        if (x.t != y.t) return x.t < y.t;
        if (x.ctime != y.ctime) return x.ctime < y.ctime;
        if (x.tag != y.tag) return x.tag < y.tag;
        return x.seq < y.seq;
    }

    [[nodiscard]] bool empty() const { return m_v.empty(); }
    [[nodiscard]] std::size_t size() const { return m_v.size(); }
    [[nodiscard]] const Entry& top() const { return m_v.front(); }

    void push(const Entry& e) {
        std::size_t i = m_v.size();
        m_v.push_back(e);
        while (i > 0) {
            const std::size_t p = (i - 1) >> 2;
            if (!before(e, m_v[p])) break;
            m_v[i] = m_v[p];
            i = p;
        }
        m_v[i] = e;
    }

    /// Removes and returns the first entry. Precondition: not empty.
    Entry pop() {
        const Entry first = m_v.front();
        const Entry last = m_v.back();
        m_v.pop_back();
        const std::size_t n = m_v.size();
        if (n == 0) return first;
        std::size_t i = 0;
        for (;;) {
            const std::size_t c = 4 * i + 1;
            if (c >= n) break;
            std::size_t m = c;
            const std::size_t end = c + 4 < n ? c + 4 : n;
            for (std::size_t k = c + 1; k < end; ++k)
                if (before(m_v[k], m_v[m])) m = k;
            if (!before(m_v[m], last)) break;
            m_v[i] = m_v[m];
            i = m;
        }
        m_v[i] = last;
        return first;
    }

    void clear() { m_v.clear(); }
    /// The heap's array, for checkpoints (restored as it was, it pops in the same order).
    std::vector<Entry>& entries() { return m_v; }

private:
    std::vector<Entry> m_v;
};

}  // namespace sched
