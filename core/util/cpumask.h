// SPDX-License-Identifier: GPL-2.0-or-later
// cpumask.h: a fixed-capacity CPU bitmap with the kernel's cpumask operations,
// including the live-mask wrap iteration used by select_idle_cpu().
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched {

/// Largest machine schedlab models (the kernel's nr_cpumask_bits plays this role).
inline constexpr int kMaxCpus = 1024;

/// A set of CPU numbers in [0, kMaxCpus). Value type, cheap to copy (136 bytes).
/// Sized to its machine: the operations scan only the words below m_n (every word from m_n
/// on is zero), so a 384-CPU machine's masks cost 6 words, an 8-CPU machine's one, as the
/// kernel's nr_cpumask_bits = nr_cpu_ids does. m_n only grows (clear() keeps it).
class CpuMask {
public:
    static constexpr int kWords = kMaxCpus / 64;

    CpuMask() = default;
    static CpuMask range(int first, int last);  ///< [first, last] inclusive
    static CpuMask single(int cpu) {
        CpuMask m;
        m.set(cpu);
        return m;
    }

    void set(int cpu) {
        const unsigned wi = unsigned(cpu) >> 6;
        m_w[wi] |= (1ull << (cpu & 63));
        if (wi >= m_n) m_n = std::uint8_t(wi + 1);
    }
    void clear(int cpu) { m_w[unsigned(cpu) >> 6] &= ~(1ull << (cpu & 63)); }
    [[nodiscard]] bool test(int cpu) const { return cpu >= 0 && cpu < kMaxCpus && (m_w[unsigned(cpu) >> 6] >> (cpu & 63)) & 1u; }
    [[nodiscard]] int weight() const {
        int n = 0;
        for (int i = 0; i < m_n; ++i) n += std::popcount(m_w[i]);
        return n;
    }
    [[nodiscard]] bool empty() const {
        for (int i = 0; i < m_n; ++i)
            if (m_w[i]) return false;
        return true;
    }
    /// First set bit at or after `from`, or kMaxCpus.
    [[nodiscard]] int next(int from) const;
    /// First set bit, or kMaxCpus (the kernel's cpumask_first returns nr_cpu_ids).
    [[nodiscard]] int first() const { return next(0); }
    [[nodiscard]] int last() const;

    [[nodiscard]] bool intersects(const CpuMask& o) const {
        const int n = m_n < o.m_n ? m_n : o.m_n;
        for (int i = 0; i < n; ++i)
            if (m_w[i] & o.m_w[i]) return true;
        return false;
    }
    [[nodiscard]] bool subsetOf(const CpuMask& o) const {
        for (int i = 0; i < m_n; ++i)
            if (m_w[i] & ~o.m_w[i]) return false;
        return true;
    }
    CpuMask& operator|=(const CpuMask& o) {
        for (int i = 0; i < o.m_n; ++i) m_w[i] |= o.m_w[i];
        if (o.m_n > m_n) m_n = o.m_n;
        return *this;
    }
    CpuMask& operator&=(const CpuMask& o) {
        for (int i = 0; i < m_n; ++i) m_w[i] &= o.m_w[i];  // zero from o.m_n on
        if (o.m_n < m_n) m_n = o.m_n;
        return *this;
    }
    CpuMask& andNot(const CpuMask& o) {
        const int n = m_n < o.m_n ? m_n : o.m_n;
        for (int i = 0; i < n; ++i) m_w[i] &= ~o.m_w[i];
        return *this;
    }
    friend CpuMask operator|(CpuMask a, const CpuMask& b) { return a |= b; }
    friend CpuMask operator&(CpuMask a, const CpuMask& b) { return a &= b; }
    /// The same CPUs (however far each mask's words reach).
    friend bool operator==(const CpuMask& a, const CpuMask& b) {
        const int n = a.m_n > b.m_n ? a.m_n : b.m_n;
        for (int i = 0; i < n; ++i)
            if (a.m_w[i] != b.m_w[i]) return false;
        return true;
    }
    /// Words that may hold set bits (for tests): every word from here on is zero.
    [[nodiscard]] int words() const { return m_n; }

    /// Ascending list of members.
    [[nodiscard]] std::vector<int> toVector() const;
    /// Kernel cpulist format: "0-3,8,10-11"; "" for the empty mask.
    [[nodiscard]] std::string toList() const;
    /// Parses a cpulist ("0-3,8"); returns nullopt and fills `error` on bad syntax
    /// or a CPU >= limit.
    static std::optional<CpuMask> parseList(std::string_view text, int limit, std::string* error);

    /// The one shared copy of `m` (process-wide, never freed, thread-safe): what a task's
    /// cpus_ptr points at. Affinities repeat (all CPUs, one CPU, one LLC), so a task carries
    /// a pointer, as in the kernel, not 128 bytes of bitmap.
    static const CpuMask* intern(const CpuMask& m);

    template <class F>
    void forEach(F&& f) const {
        for (int wi = 0; wi < m_n; ++wi) {
            std::uint64_t w = m_w[wi];
            while (w) {
                int b = std::countr_zero(w);
                f(wi * 64 + b);
                w &= w - 1;
            }
        }
    }

private:
    std::array<std::uint64_t, kWords> m_w{};
    std::uint8_t m_n = 0;  ///< words in use: m_w[i] == 0 for i >= m_n
};

/// The empty mask (what a Task's cpus_ptr points at before setAffinity()).
inline constexpr CpuMask kNoCpus{};

/// for_each_cpu_wrap(cpu, mask, start) of Linux 6.1 (include/linux/find.h,
/// find_next_bit_wrap + __for_each_wrap): visits the set bits from `start` upwards,
/// wraps to 0 and stops before `start`. The mask is read live at each step, so a
/// callback that clears bits (select_idle_core) changes what is visited next.
/// The callback returns true to stop (the kernel's `break`/`return`).
template <class F>
void for_each_cpu_wrap(const CpuMask& mask, int start, int size, F&& f) {
    auto nextIn = [&](int from, int limit) {  // find_next_bit(mask, limit, from)
        int b = mask.next(from);
        return b < limit ? b : limit;
    };
    int bit = start < size ? nextIn(start, size) : size;
    if (bit >= size) {
        bit = nextIn(0, start < size ? start : size);
        if (bit >= (start < size ? start : size)) return;
    }
    while (bit < size) {
        if (f(bit)) return;
        int n = bit + 1;
        if (n > start) {
            int b = nextIn(n, size);
            if (b < size) {
                bit = b;
                continue;
            }
            n = 0;
        }
        int lim = start < size ? start : size;
        int b = nextIn(n, lim);
        bit = b < lim ? b : size;
    }
}

}  // namespace sched
