// SPDX-License-Identifier: GPL-2.0-or-later
// pid_table.h: per-task state of a trace by pid. Most traces' pids are small: a table for the
// pids below a bound (grown to the highest one seen), a map for the others.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace sched {

template <class T>
class PidTable {
public:
    static constexpr std::int32_t kDense = 1 << 16;  ///< pids below: in the table

    T& operator[](std::int32_t pid) {
        if (pid >= 0 && pid < kDense) {
            if (std::size_t(pid) >= m_dense.size()) m_dense.resize(std::max(std::size_t(pid) + 1, std::min(std::size_t(kDense), m_dense.size() * 2)));
            return m_dense[std::size_t(pid)];
        }
        return m_sparse[pid];
    }
    /// nullptr when `pid` was never asked for.
    const T* find(std::int32_t pid) const {
        if (pid >= 0 && pid < kDense) return std::size_t(pid) < m_dense.size() ? &m_dense[std::size_t(pid)] : nullptr;
        const auto it = m_sparse.find(pid);
        return it == m_sparse.end() ? nullptr : &it->second;
    }
    /// f(pid, entry) for every entry (the table's all, asked for or not), pids below kDense first.
    template <class F>
    void forEach(F&& f) const {
        for (std::size_t pid = 0; pid < m_dense.size(); ++pid) f(std::int32_t(pid), m_dense[pid]);
        for (const auto& [pid, x] : m_sparse) f(pid, x);
    }

private:
    std::vector<T> m_dense;
    std::unordered_map<std::int32_t, T> m_sparse;
};

}  // namespace sched
