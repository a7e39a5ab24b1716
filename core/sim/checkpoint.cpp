// SPDX-License-Identifier: GPL-2.0-or-later
#include "sim/checkpoint.h"

#include "sim/engine.h"
#include "topology/topology_json.h"
#include "util/state_archive.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>

namespace sched {

namespace {

constexpr char kMagic[] = "SCHEDLAB-STATE\n";
constexpr std::size_t kMagicLen = sizeof(kMagic) - 1;

std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

void putU64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

nlohmann::json knobsJson(const Knobs& k) {
    nlohmann::json j = nlohmann::json::object();
    for (const std::string& n : Knobs::names()) j[n] = k.get(n);
    return j;
}

Knobs knobsOf(const nlohmann::json& j, const std::string& file) {
    Knobs k;
    if (!j.is_object()) throw InputError(file, "knobs", "damaged state header");
    try {
        for (auto it = j.begin(); it != j.end(); ++it) k.set(it.key(), it.value().get<std::string>());
    } catch (const std::exception& e) {
        throw InputError(file, "knobs", e.what());
    }
    return k;
}

}  // namespace

std::uint64_t stateFormatHash() {
    const std::string f = fmt::format("schedlab state v{} SchedAvg {} Task {} SimTask {} Rq {} TimerInfo {} Metrics {} Decision {} SteadyWindow {}",
                                      kStateFormatVersion, sizeof(SchedAvg), sizeof(Task), sizeof(SimTask), sizeof(Rq), sizeof(TimerInfo),
                                      sizeof(Metrics), sizeof(Decision), sizeof(SteadyWindow));
    return fnv1a(f);
}

std::string encodeCheckpoint(const Scenario& s, const std::string& variant, const CostModel& cost, std::uint64_t seed, Engine& e,
                             const nlohmann::json& extraHeader, const std::string& extra) {
    StateArchive ar;
    e.state(ar);
    const std::string body = ar.take();
    nlohmann::json h;
    h["scenario"] = s.doc;
    h["scenario_file"] = s.file;
    h["variant"] = variant;
    h["preset"] = e.knobs().presetName;
    h["knobs"] = knobsJson(e.knobs());
    h["cost"] = cost.diffFrom(s.cost);
    h["seed"] = seed;
    h["time_ns"] = e.now();
    h["digest"] = e.digest();
    h["events"] = e.events();
    if (!extraHeader.is_null()) h["window"] = extraHeader;
    const std::string head = h.dump();
    std::string out(kMagic, kMagicLen);
    putU64(out, stateFormatHash());
    for (const std::string* part : {&head, &body, &extra}) {
        putU64(out, part->size());
        out += *part;
    }
    putU64(out, fnv1a(out));
    return out;
}

Checkpoint decodeCheckpoint(const std::string& bytes, const std::string& file) {
    if (bytes.size() < kMagicLen || bytes.compare(0, kMagicLen, kMagic) != 0) throw InputError(file, "", "not a schedlab state file");
    if (bytes.size() < kMagicLen + 16) throw InputError(file, "", "damaged state: truncated");
    std::uint64_t format = 0, sum = 0;
    std::memcpy(&format, bytes.data() + kMagicLen, 8);
    if (format != stateFormatHash())
        throw InputError(file, "",
                         fmt::format("state format {:016x} is not this schedlab's ({:016x}): save it again with the schedlab that reads it", format,
                                     stateFormatHash()));
    std::memcpy(&sum, bytes.data() + bytes.size() - 8, 8);
    if (sum != fnv1a(std::string_view(bytes).substr(0, bytes.size() - 8))) throw InputError(file, "", "damaged state: checksum mismatch");
    std::size_t pos = kMagicLen + 8;
    std::string parts[3];
    for (std::string& p : parts) {
        std::uint64_t n = 0;
        if (bytes.size() - 8 - pos < 8) throw InputError(file, "", "damaged state: truncated");
        std::memcpy(&n, bytes.data() + pos, 8);
        pos += 8;
        if (n > bytes.size() - 8 - pos) throw InputError(file, "", "damaged state: truncated");
        p.assign(bytes, pos, n);
        pos += n;
    }
    Checkpoint c;
    c.file = file;
    nlohmann::json h;
    try {
        h = nlohmann::json::parse(parts[0]);
        const std::string sfile = h.at("scenario_file").get<std::string>();
        const std::string base = std::filesystem::path(sfile).parent_path().string();
        c.scenario = parseScenario(h.at("scenario"), sfile, base.empty() ? "." : base);
        c.variant = h.at("variant").get<std::string>();
        c.knobs = knobsOf(h.at("knobs"), file);
        c.knobs.presetName = h.at("preset").get<std::string>();
        c.cost = c.scenario.cost;
        for (const auto& a : h.at("cost")) c.cost.set(a.get<std::string>());
        c.seed = h.at("seed").get<std::uint64_t>();
        c.time_ns = h.at("time_ns").get<std::int64_t>();
        c.digest = h.at("digest").get<std::uint64_t>();
        c.events = h.at("events").get<std::uint64_t>();
        if (h.contains("window")) c.extra_header = h["window"];
    } catch (const InputError&) {
        throw;
    } catch (const std::exception& e) {
        throw InputError(file, "", std::string("damaged state header: ") + e.what());
    }
    c.engine = std::move(parts[1]);
    c.extra = std::move(parts[2]);
    return c;
}

Checkpoint loadCheckpoint(const std::string& path) {
    // A checkpoint holds every task and the timelines: tens of MB for the largest scenarios.
    return decodeCheckpoint(readFileOrThrow(path, std::uintmax_t(4) << 30, "a checkpoint"), path);
}

std::unique_ptr<Engine> restoreEngine(const Checkpoint& c, const RunOptions& o, std::int64_t stop_ns) {
    RunOptions ro = o;
    ro.seed = c.seed;
    auto e = buildEngine(c.scenario, c.knobs, c.cost, ro);
    StateArchive ar(c.engine, c.file);
    e->state(ar);
    if (ar.remaining() != 0) ar.fail("bytes after the engine's state");
    e->setStop(stop_ns);
    if (e->digest() != c.digest)
        throw InputError(c.file, "", fmt::format("restored state's digest {:016x} is not the saved {:016x}", e->digest(), c.digest));
    return e;
}

}  // namespace sched
