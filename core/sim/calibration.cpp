// SPDX-License-Identifier: GPL-2.0-or-later
// calibration.cpp: see calibration.h. The committed JSON is compiled in (calibration_data.h,
// generated from resources/calibration/ by CMake), so a build's results do not depend on where
// it runs from.
#include "sim/calibration.h"

#include "sim/calibration_data.h"
#include "sim/cost_model.h"
#include "util/input_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace sched {

double Calibration::figure(const std::string& key) const {
    const auto it = median_ns.find(key);
    return it == median_ns.end() ? -1.0 : it->second;
}

Calibration parseCalibration(const std::string& text, const std::string& file) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file, "", fmt::format("not JSON: {}", e.what()));
    }
    if (!j.is_object() || j.value("format", "") != "schedlab-calibrate/1") throw InputError(file, "format", "not a schedlab-calibrate/1 file");
    Calibration c;
    c.file = file;
    const nlohmann::json& cpu = j.value("cpu", nlohmann::json::object());
    c.cpu = fmt::format("{} family {} model {} stepping {} ({}): {}", cpu.value("vendor", "?"), cpu.value("family", -1), cpu.value("model", -1),
                        cpu.value("stepping", -1), cpu.value("microarchitecture", "?"), cpu.value("model_name", "?"));
    c.kernel = j.value("kernel", "");
    c.date = j.value("date", "");
    c.virtualized = j.value("virtualized", false);
    c.hypervisor = j.value("hypervisor", "");
    const nlohmann::json& figs = j.value("figures", nlohmann::json::object());
    if (!figs.is_object()) throw InputError(file, "figures", "not an object");
    for (const auto& [key, f] : figs.items()) {
        if (!f.is_object() || !f.value("available", false)) continue;
        const auto m = f.find("median_ns");
        if (m == f.end() || !m->is_number() || !std::isfinite(m->get<double>()) || m->get<double>() <= 0)
            throw InputError(file, "figures." + key + ".median_ns", "not a positive number");
        c.median_ns[key] = m->get<double>();
        if (const auto ev = f.find("events_inside_tail_median"); ev != f.end() && ev->is_number()) c.events_inside[key] = ev->get<double>();
    }
    return c;
}

const Calibration& x86Calibration() {
    static const Calibration c = parseCalibration(kCalibrationX86, kCalibrationX86File);
    return c;
}

std::vector<CalibratedCost> applyCalibration(CostModel& m, const Calibration& c) {
    std::vector<CalibratedCost> set;
    auto put = [&](const char* param, double ns, std::string from) {
        if (ns <= 0) return;
        m.set(param, std::to_string(std::llround(ns)));
        set.push_back({param, std::llround(ns), std::move(from)});
    };
    auto fig = [&](const char* key) { return c.figure(key); };
    put("pipe_write", fig("pipe_write_nowake"), "pipe_write_nowake");
    put("pipe_read", fig("pipe_read_nowake"), "pipe_read_nowake");
    put("futex_wake", fig("futex_wake_nowaiter"), "futex_wake_nowaiter");
    // The waker's cost of a local wakeup: the write that wakes a reader on its own CPU less the
    // write that wakes nobody (the reader SCHED_BATCH: no preemption inside the write). From
    // sched_waking to the activation it is all but the activation's hold of the rq lock
    // (rq_lock_hold, an estimate): ttwu_select.
    if (fig("pipe_write_wake_local") > 0 && fig("pipe_write_nowake") > 0) {
        const double local = fig("pipe_write_wake_local") - fig("pipe_write_nowake");
        put("wakeup_local", local, "pipe_write_wake_local - pipe_write_nowake");
        const double select = std::max(0.0, local - double(m.rq_lock_hold));
        put("ttwu_select", select, "wakeup_local - rq_lock_hold");
        // A remote direct activation: the local figure plus the estimate's remote part (the other
        // rq's lock and lines); a wakelist's: the select plus the estimate's llist_add and IPI send.
        // The VM's own remote wakeups measure its IPI exits, not a machine's (docs/workloads.md).
        put("wakeup_remote_direct", local + 300, "wakeup_local + 300 (estimate: the remote rq's lock and lines)");
        put("wakeup_remote_queued", select + 400, "ttwu_select + 400 (estimate: llist_add and the IPI's send)");
    }
    // The waker's tails, from the same-CPU SCHED_BATCH ping-pongs (no IPI in them), less the trace
    // events recorded inside each tail and the share of its two bounding events.
    const double event = fig("trace_event_cost");
    auto tail = [&](const char* param, const char* key) {
        const auto inside = c.events_inside.find(key);
        if (fig(key) <= 0 || event <= 0 || inside == c.events_inside.end()) return;
        put(param, fig(key) - (inside->second + 1) * event, fmt::format("{} - ({} events inside + 1) x trace_event_cost", key, inside->second));
    };
    tail("pipe_wake_tail", "waker_tail_same_cpu_pipe");
    tail("socket_wake_tail", "waker_tail_same_cpu_tcp");
    return set;
}

}  // namespace sched
