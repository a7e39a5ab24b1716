// SPDX-License-Identifier: GPL-2.0-or-later
// burst_queue.h: the engine's pending CPU burst ends (at most one per CPU), in the order key
// (t, lo) with lo = creation time << kCpuBits | cpu: time first, then creation time, then CPU.
//
// A calendar queue for the near future with a winner tree behind it for the rest. Burst ends
// are mostly a few microseconds ahead (a write, a read, a context switch), so a ring of
// 4096 buckets of 4 ns (16.4 us ahead of the current time) holds nearly all of them: setting
// or clearing one is a list link or unlink and a bit, O(1) whatever the number of CPUs; the
// next one is the first non-empty bucket from the current time's (two-level bitmap, a few
// instructions) and the earliest entry of its short list. Ends further ahead (a CPU hog's
// slice, a long computation) go to a winner tree over the CPUs (log2 CPUs levels per update);
// the queue's first entry is the earlier of the ring's and the tree's. The keys are unique
// (they hold the CPU), so this is the same minimum the winner tree alone gave (engine.cpp
// used one for every CPU; its path update was a quarter of a steady hackbench's instructions).
//
// Precondition (checked): an entry is never set before the current time, and the current
// time never goes back; then every ring entry lies within the ring's span ahead of it and a
// bucket's index gives its lap.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace sched {

class BurstQueue {
public:
    static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
    static constexpr int kShift = 2;          ///< bucket width: 4 ns
    static constexpr int kBuckets = 64 * 64;  ///< ring span: 4096 x 4 ns = 16.4 us
    struct Top {
        std::int64_t t = kNever;  ///< kNever: the queue is empty
        std::uint64_t lo = ~std::uint64_t(0);
        int cpu = -1;
    };

    void reset(int nrCpus) {
        m_leaves = std::bit_ceil(std::size_t(nrCpus < 1 ? 1 : nrCpus));
        m_node.assign(m_leaves, Node{});
        m_head.assign(kBuckets, -1);
        for (auto& w : m_bits) w = 0;
        m_sum = 0;
        m_wt.assign(2 * m_leaves, WtNode{kNever, 0});
        for (std::size_t i = 0; i < m_leaves; ++i) m_wt[m_leaves + i].cpu = i;
        m_n = m_farN = 0;
    }

    /// The pending entry of `cpu`: its time (kNever: none) and its lo.
    std::int64_t t(int cpu) const { return m_node[std::size_t(cpu)].t; }
    std::uint64_t lo(int cpu) const { return m_node[std::size_t(cpu)].lo; }
    std::size_t size() const { return m_n; }
    /// Entries in the winner tree (beyond the ring's span when they were set).
    std::size_t farSize() const { return m_farN; }

    /// Sets (or moves) the entry of `cpu` to (t, lo); `now` is the current time, t >= now.
    void set(int cpu, std::int64_t t, std::uint64_t lo, std::int64_t now) {
        if (t < now || t == kNever) throw std::logic_error("burst queue: an entry at " + std::to_string(t) + " ns set at " + std::to_string(now));
        Node& n = m_node[std::size_t(cpu)];
        if (n.where != kNone) unlink(cpu, n);
        else m_n++;
        n.t = t;
        n.lo = lo;
        if (std::uint64_t((t >> kShift) - (now >> kShift)) < std::uint64_t(kBuckets)) {
            const int b = int((t >> kShift) & (kBuckets - 1));
            n.where = b;
            n.prev = -1;
            n.next = m_head[std::size_t(b)];
            if (n.next >= 0) m_node[std::size_t(n.next)].prev = cpu;
            else setBit(b);
            m_head[std::size_t(b)] = cpu;
        } else {
            n.where = kFar;
            m_farN++;
            wtSet(cpu, t);
        }
    }
    void clear(int cpu) {
        Node& n = m_node[std::size_t(cpu)];
        if (n.where == kNone) return;
        unlink(cpu, n);
        n.where = kNone;
        n.t = kNever;
        n.lo = ~std::uint64_t(0);
        m_n--;
    }

    /// The first entry by (t, lo); `now` is the current time (no entry is before it).
    /// Every pending burst end (its CPU, time and order word), for checkpoints; put() them back
    /// after reset() at the same `now` and the queue answers top() as before.
    template <class F>
    void forEach(F&& f) const {
        for (std::size_t c = 0; c < m_node.size(); ++c)
            if (m_node[c].where != kNone) f(int(c), m_node[c].t, m_node[c].lo);
    }

    Top top(std::int64_t now) const {
        Top r;
        if (m_n > m_farN) {
            // Buckets of 4 ns mostly hold one entry: it is the first, the loop checks the others.
            const int b = firstBucketFrom(int((now >> kShift) & (kBuckets - 1)));
            int i = m_head[std::size_t(b)];
            const Node* n = &m_node[std::size_t(i)];
            r = Top{n->t, n->lo, i};
            while ((i = n->next) >= 0) {
                n = &m_node[std::size_t(i)];
                if (n->t < r.t || (n->t == r.t && n->lo < r.lo)) r = Top{n->t, n->lo, i};
            }
        }
        if (m_farN) {
            const WtNode w = m_wt[1];
            const std::uint64_t wlo = m_node[std::size_t(w.cpu)].lo;
            if (w.t < r.t || (w.t == r.t && wlo < r.lo)) r = Top{w.t, wlo, int(w.cpu)};
        }
        return r;
    }

private:
    static constexpr std::int32_t kNone = -1, kFar = -2;
    struct Node {
        std::int64_t t = kNever;
        std::uint64_t lo = ~std::uint64_t(0);
        std::int32_t next = -1, prev = -1;  ///< the bucket's list
        std::int32_t where = kNone;         ///< its bucket, kFar (the winner tree) or kNone
    };
    struct WtNode {
        std::int64_t t;     ///< the winner's time (kNever: none below)
        std::uint64_t cpu;  ///< the winner's CPU
    };

    void unlink(int cpu, Node& n) {
        if (n.where == kFar) {
            m_farN--;
            wtSet(cpu, kNever);
            return;
        }
        if (n.prev >= 0) m_node[std::size_t(n.prev)].next = n.next;
        else if ((m_head[std::size_t(n.where)] = n.next) < 0) clearBit(n.where);
        if (n.next >= 0) m_node[std::size_t(n.next)].prev = n.prev;
    }
    void setBit(int b) {
        m_bits[std::size_t(b >> 6)] |= std::uint64_t(1) << (b & 63);
        m_sum |= std::uint64_t(1) << (b >> 6);
    }
    void clearBit(int b) {
        if ((m_bits[std::size_t(b >> 6)] &= ~(std::uint64_t(1) << (b & 63))) == 0) m_sum &= ~(std::uint64_t(1) << (b >> 6));
    }
    // The first non-empty bucket at or after `c` in ring order (the ring is not empty): the
    // buckets from c on hold this lap, those before c the next one.
    int firstBucketFrom(int c) const {
        const int w = c >> 6;
        if (const std::uint64_t x = m_bits[std::size_t(w)] & (~std::uint64_t(0) << (c & 63))) return (w << 6) | std::countr_zero(x);
        std::uint64_t s = w < 63 ? m_sum & (~std::uint64_t(0) << (w + 1)) : 0;
        if (!s) s = m_sum;  // wrapped: what is left is below c
        const int w2 = std::countr_zero(s);
        return (w2 << 6) | std::countr_zero(m_bits[std::size_t(w2)]);
    }
    // The winner tree: leaf m_leaves + cpu holds the CPU's far time (kNever: none there); every
    // inner node the time and CPU of the earlier of its children by (t, lo). The path update
    // compares times with two conditional moves and reads lo only on equal times.
    void wtSet(int cpu, std::int64_t t) {
        WtNode* const w = m_wt.data();
        std::size_t i = m_leaves + std::size_t(cpu);
        std::int64_t kt = t;
        std::uint64_t kc = std::uint64_t(cpu);
        w[i] = WtNode{kt, kc};
        while (i > 1) {
            const std::int64_t st = w[i ^ 1].t;
            const std::uint64_t sc = w[i ^ 1].cpu;
            bool sibFirst = st < kt;
            if (st == kt) [[unlikely]]
                sibFirst = farLo(sc) < farLo(kc);
            kt = sibFirst ? st : kt;
            kc = sibFirst ? sc : kc;
            i >>= 1;
            // A node whose winner does not change leaves every node above it as it is (a spinner's
            // far entry mostly loses low in the tree, and its removal mostly was not the winner).
            if (w[i].t == kt && w[i].cpu == kc) break;
            w[i].t = kt;
            w[i].cpu = kc;
        }
    }
    std::uint64_t farLo(std::uint64_t cpu) const {
        const Node& n = m_node[std::size_t(cpu)];
        return n.where == kFar ? n.lo : ~std::uint64_t(0);
    }

    std::vector<Node> m_node;          ///< per CPU (padding leaves too)
    std::vector<std::int32_t> m_head;  ///< per bucket: its list's first CPU (-1 empty)
    std::uint64_t m_bits[64] = {};     ///< non-empty buckets
    std::uint64_t m_sum = 0;           ///< non-zero words of m_bits
    std::vector<WtNode> m_wt;          ///< far entries: root m_wt[1]
    std::size_t m_leaves = 1;
    std::size_t m_n = 0, m_farN = 0;
};

}  // namespace sched
