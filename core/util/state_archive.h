// SPDX-License-Identifier: GPL-2.0-or-later
// state_archive.h: one function per class saves and restores its state (checkpoints,
// sim/checkpoint.h). A class writes `void state(StateArchive& ar)` that names its fields in
// order; the same function writes them (ar.saving()) and reads them back (ar.loading()), so
// the two directions cannot disagree. Fields are written one by one in native byte order
// (a checkpoint is read by the build that wrote it: the format hash says so), never as whole
// structs, so that padding never reaches a file and the same state gives the same bytes.
#pragma once

#include "util/input_error.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace sched {

template <class T>
concept StateScalar = std::is_arithmetic_v<T> || std::is_enum_v<T>;

class StateArchive {
public:
    /// An archive that writes.
    StateArchive() = default;
    /// An archive that reads `bytes` (a view: they must outlive it); `file` names them in errors.
    StateArchive(std::string_view bytes, std::string file) : m_in(bytes), m_file(std::move(file)), m_load(true) {}

    bool loading() const { return m_load; }
    bool saving() const { return !m_load; }
    /// What has been written.
    const std::string& bytes() const { return m_out; }
    std::string take() { return std::move(m_out); }
    /// Reading: the bytes not read yet.
    std::size_t remaining() const { return m_in.size() - m_pos; }
    std::size_t offset() const { return m_load ? m_pos : m_out.size(); }
    const std::string& file() const { return m_file; }

    /// Scalars, in order: ar(a, b, c).
    template <StateScalar... T>
    void operator()(T&... v) {
        (scalar(v), ...);
    }
    template <StateScalar T>
    void scalar(T& v) {
        if constexpr (std::is_same_v<T, bool>) {
            // A bool is one byte, 0 or 1: any other byte is a damaged file, not a bool to load.
            std::uint8_t b = v ? 1 : 0;
            scalar(b);
            if (m_load && b > 1) fail("a flag that is neither 0 nor 1");
            v = b != 0;
            return;
        }
        if (m_load) {
            need(sizeof(T), "a field");
            std::memcpy(&v, m_in.data() + m_pos, sizeof(T));
            m_pos += sizeof(T);
        } else {
            m_out.append(reinterpret_cast<const char*>(&v), sizeof(T));
        }
    }
    /// A value that must read back as written (a section tag, a count the reader already knows):
    /// a different one is a damaged or foreign file.
    template <StateScalar T>
    void expect(T v, const char* what) {
        T got = v;
        scalar(got);
        if (m_load && got != v) fail(std::string("expected ") + what);
    }
    /// A length, checked on reading against the bytes left (each element takes at least `minBytes`).
    std::size_t count(std::size_t n, std::size_t minBytes = 1) {
        std::uint64_t v = n;
        scalar(v);
        if (m_load && minBytes && v > remaining() / minBytes) fail("a length past the end of the file");
        return std::size_t(v);
    }
    void str(std::string& s) {
        const std::size_t n = count(s.size());
        if (m_load) {
            s.assign(m_in.data() + m_pos, n);
            m_pos += n;
        } else {
            m_out.append(s);
        }
    }
    /// A vector of scalars.
    template <StateScalar T>
    void vec(std::vector<T>& v) {
        const std::size_t n = count(v.size(), sizeof(T));
        if (m_load) {
            v.resize(n);
            if (n) std::memcpy(v.data(), m_in.data() + m_pos, n * sizeof(T));
            m_pos += n * sizeof(T);
        } else if (n) {
            m_out.append(reinterpret_cast<const char*>(v.data()), n * sizeof(T));
        }
    }
    /// A container of anything, each element by `each(ar, element)`.
    template <class C, class F>
    void each(C& v, F&& f) {
        const std::size_t n = count(v.size());
        if (m_load) {
            v.clear();
            v.resize(n);
        }
        for (auto& x : v) f(*this, x);
    }
    /// A container of elements that have their own state(StateArchive&).
    template <class C>
    void items(C& v) {
        each(v, [](StateArchive& ar, auto& x) { x.state(ar); });
    }
    template <StateScalar T>
    void deq(std::deque<T>& v) {
        each(v, [](StateArchive& ar, T& x) { ar.scalar(x); });
    }
    /// A section: a tag that must match when read (where a reader lost its way, the error says so).
    void section(std::uint32_t tag, const char* name) {
        std::uint32_t t = tag;
        scalar(t);
        if (m_load && t != tag) fail(std::string("section ") + name + " not where it belongs");
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(m_file, "", "damaged state: " + what + " at byte " + std::to_string(m_pos));
    }

private:
    void need(std::size_t n, const char* what) {
        if (remaining() < n) fail(std::string("truncated (") + what + ")");
    }
    std::string m_out;
    std::string_view m_in;
    std::size_t m_pos = 0;
    std::string m_file;
    bool m_load = false;
};

}  // namespace sched
