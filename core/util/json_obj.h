// SPDX-License-Identifier: GPL-2.0-or-later
// json_obj.h: strict reading of one JSON object for input files (state,
// scenario): unknown keys, wrong types and out-of-range values become one
// InputError naming the file and the key path.
#pragma once

#include "util/input_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace sched {

using nlohmann::json;

// Reads the keys of one JSON object, rejecting unknown ones.
class Obj {
public:
    Obj(const json& j, std::string file, std::string path, std::set<std::string> allowed) : m_j(j), m_file(std::move(file)), m_path(std::move(path)) {
        if (!j.is_object()) throw InputError(m_file, m_path.empty() ? "(top level)" : m_path, "must be a JSON object");
        for (auto it = j.begin(); it != j.end(); ++it)
            if (!allowed.count(it.key())) throw InputError(m_file, key(it.key()), "unknown key");
    }
    std::string key(const std::string& k) const { return m_path.empty() ? k : m_path + "." + k; }
    bool has(const std::string& k) const { return m_j.contains(k); }
    const json& at(const std::string& k) const { return m_j.at(k); }
    std::optional<std::int64_t> i64(const std::string& k, std::int64_t lo = INT64_MIN, std::int64_t hi = INT64_MAX) const {
        if (!has(k)) return std::nullopt;
        const json& v = m_j.at(k);
        if (!v.is_number_integer()) throw InputError(m_file, key(k), "must be an integer");
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
            throw InputError(m_file, key(k), fmt::format("{} is too large (maximum {})", v.get<std::uint64_t>(), hi));
        std::int64_t x = v.get<std::int64_t>();
        if (x < lo) throw InputError(m_file, key(k), fmt::format("{} is {} (minimum {})", x, x < 0 && lo >= 0 ? "negative" : "too small", lo));
        if (x > hi) throw InputError(m_file, key(k), fmt::format("{} is too large (maximum {})", x, hi));
        return x;
    }
    std::optional<bool> boolean(const std::string& k) const {
        if (!has(k)) return std::nullopt;
        const json& v = m_j.at(k);
        if (v.is_boolean()) return v.get<bool>();
        if (v.is_number_integer() && (v == 0 || v == 1)) return v == 1;
        throw InputError(m_file, key(k), "must be true or false");
    }
    std::optional<double> number(const std::string& k, double lo, double hi) const {
        if (!has(k)) return std::nullopt;
        const json& v = m_j.at(k);
        if (!v.is_number()) throw InputError(m_file, key(k), "must be a number");
        double x = v.get<double>();
        if (x < lo || x > hi) throw InputError(m_file, key(k), fmt::format("{} is outside {}..{}", x, lo, hi));
        return x;
    }
    std::optional<std::string> str(const std::string& k) const {
        if (!has(k)) return std::nullopt;
        if (!m_j.at(k).is_string()) throw InputError(m_file, key(k), "must be a string");
        return m_j.at(k).get<std::string>();
    }
    int cpu(const std::string& k, int nr) const {
        auto v = i64(k, 0);
        if (!v) throw InputError(m_file, key(k), "missing");
        if (*v >= nr) throw InputError(m_file, key(k), fmt::format("CPU {} is outside the machine (0-{})", *v, nr - 1));
        return int(*v);
    }
    const std::string& file() const { return m_file; }

private:
    const json& m_j;
    std::string m_file, m_path;
};

}  // namespace sched
