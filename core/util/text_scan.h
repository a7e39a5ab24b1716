// SPDX-License-Identifier: GPL-2.0-or-later
// text_scan.h: the small text helpers the line-oriented importers share (ftrace text, the
// rq-length CSV): trimming blanks and strict integer conversion of a whole field.
#pragma once

#include <charconv>
#include <string_view>

namespace sched::text {

inline std::string_view trimLeft(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    return s;
}
inline std::string_view trimRight(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}
inline std::string_view trim(std::string_view s) { return trimRight(trimLeft(s)); }
inline bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// The whole field (blanks around it ignored) as an integer; false if anything else is in it.
template <typename T>
bool toInt(std::string_view s, T& v) {
    s = trim(s);
    if (s.empty()) return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace sched::text
