// SPDX-License-Identifier: GPL-2.0-or-later
// text_util.h: the small conversions every view's text uses.
#pragma once

#include <QString>

#include <cstdint>
#include <string>

namespace schedlab {

inline QString q(const std::string& s) { return QString::fromStdString(s); }

/// Simulated (or trace) time as the clock shows it: "12.345 ms".
inline QString simTime(std::int64_t ns) { return QStringLiteral("%1 ms").arg(double(ns) / 1e6, 0, 'f', 3); }

}  // namespace schedlab
