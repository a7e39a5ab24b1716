// SPDX-License-Identifier: GPL-2.0-or-later
// cpumask.cpp: cpulist parsing/printing and bit scans for CpuMask.
#include "util/cpumask.h"

#include <charconv>
#include <mutex>
#include <set>

namespace sched {

CpuMask CpuMask::range(int first, int last) {
    CpuMask m;
    for (int c = first; c <= last; ++c) m.set(c);
    return m;
}

const CpuMask* CpuMask::intern(const CpuMask& m) {
    struct Less {
        bool operator()(const CpuMask& a, const CpuMask& b) const { return a.m_w < b.m_w; }
    };
    static std::mutex mu;
    static std::set<CpuMask, Less> pool;  // nodes never move: the pointers stay valid
    std::lock_guard lock(mu);
    return &*pool.insert(m).first;
}

int CpuMask::next(int from) const {
    if (from < 0) from = 0;
    int wi = from >> 6;
    if (wi >= m_n) return kMaxCpus;  // also from >= kMaxCpus: m_n <= kWords
    std::uint64_t w = m_w[wi] & (~0ull << (from & 63));
    while (true) {
        if (w) return wi * 64 + std::countr_zero(w);
        if (++wi >= m_n) return kMaxCpus;
        w = m_w[wi];
    }
}

int CpuMask::last() const {
    for (int wi = m_n - 1; wi >= 0; --wi)
        if (m_w[wi]) return wi * 64 + 63 - std::countl_zero(m_w[wi]);
    return -1;
}

std::vector<int> CpuMask::toVector() const {
    std::vector<int> v;
    forEach([&](int c) { v.push_back(c); });
    return v;
}

std::string CpuMask::toList() const {
    std::string out;
    int c = first();
    while (c < kMaxCpus) {
        int end = c;
        while (end + 1 < kMaxCpus && test(end + 1)) ++end;
        if (!out.empty()) out += ',';
        out += std::to_string(c);
        if (end > c) {
            out += '-';
            out += std::to_string(end);
        }
        c = next(end + 1);
    }
    return out;
}

std::optional<CpuMask> CpuMask::parseList(std::string_view text, int limit, std::string* error) {
    CpuMask m;
    auto fail = [&](const std::string& msg) -> std::optional<CpuMask> {
        if (error) *error = msg;
        return std::nullopt;
    };
    auto trim = [](std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
        return s;
    };
    text = trim(text);
    if (text.empty()) return m;
    auto num = [&](std::string_view s, int& out) {
        s = trim(s);
        if (s.empty()) return false;
        auto r = std::from_chars(s.data(), s.data() + s.size(), out);
        return r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0;
    };
    while (!text.empty()) {
        auto comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        auto dash = item.find('-');
        int a = 0, b = 0;
        if (dash == std::string_view::npos) {
            if (!num(item, a)) return fail("bad cpulist item '" + std::string(trim(item)) + "'");
            b = a;
        } else {
            if (!num(item.substr(0, dash), a) || !num(item.substr(dash + 1), b)) return fail("bad cpulist range '" + std::string(trim(item)) + "'");
            if (b < a) return fail("descending cpulist range '" + std::string(trim(item)) + "'");
        }
        if (b >= limit) return fail("CPU " + std::to_string(b) + " is outside the machine (0-" + std::to_string(limit - 1) + ")");
        for (int c = a; c <= b; ++c) m.set(c);
    }
    return m;
}

}  // namespace sched
