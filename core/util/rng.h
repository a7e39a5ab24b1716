// SPDX-License-Identifier: GPL-2.0-or-later
// rng.h: a small deterministic PRNG (xoshiro256** seeded by splitmix64) with portable
// draws; no std::*_distribution, so a seed gives the same run on every standard library.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sched {

class Rng {
public:
    explicit Rng(std::uint64_t seed) {
        for (auto& w : m_s) {  // splitmix64
            std::uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            w = z ^ (z >> 31);
        }
    }

    /// xoshiro256**.
    std::uint64_t next() {
        const std::uint64_t result = std::rotl(m_s[1] * 5, 7) * 9;
        const std::uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = std::rotl(m_s[3], 45);
        return result;
    }

    std::uint32_t next32() { return std::uint32_t(next() >> 32); }

    /// Unbiased draw in [0, n), n > 0 (Lemire's multiply-shift with rejection).
    std::uint64_t below(std::uint64_t n) {
        __extension__ using u128 = unsigned __int128;
        u128 m = u128(next()) * n;
        if (std::uint64_t(m) < n) {
            const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
            while (std::uint64_t(m) < threshold) m = u128(next()) * n;
        }
        return std::uint64_t(m >> 64);
    }

    /// Uniform in [lo, hi], both ends inclusive; lo <= hi.
    std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
        const std::uint64_t span = std::uint64_t(hi) - std::uint64_t(lo);
        const std::uint64_t off = span == std::numeric_limits<std::uint64_t>::max() ? next() : below(span + 1);
        return std::int64_t(std::uint64_t(lo) + off);
    }

    /// Uniform in [0, 1) with 53 random bits.
    double unit() { return double(next() >> 11) * 0x1.0p-53; }

    /// Exponentially distributed with the given mean (inverse transform), rounded, >= 0.
    std::int64_t exponential(std::int64_t mean) {
        if (mean <= 0) return 0;
        const double x = -std::log(1.0 - unit()) * double(mean);
        if (x >= 0x1.0p63) return std::numeric_limits<std::int64_t>::max();
        return std::llround(x);
    }

    /// True with probability p (p <= 0: never, p >= 1: always).
    bool chance(double p) { return unit() < p; }

    /// The generator's state (checkpoints): four words.
    std::uint64_t* words() { return m_s; }

private:
    std::uint64_t m_s[4]{};
};

}  // namespace sched
