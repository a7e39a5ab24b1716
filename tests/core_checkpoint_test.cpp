// SPDX-License-Identifier: GPL-2.0-or-later
// Checkpoints (sim/checkpoint.h): a run saved at a cut point and restored goes on exactly as
// the uninterrupted run (same digest, same reports, the same state bytes at its end), for every
// shipped scenario; damaged, truncated and foreign files are refused with one line.
#include "sim/checkpoint.h"
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "util/output_files.h"
#include "util/input_error.h"
#include "util/state_archive.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace sched;

namespace {

std::string engineBytes(Engine& e) {
    StateArchive ar;
    e.state(ar);
    return ar.take();
}

std::string reportsText(const Engine& e) {
    std::string out;
    for (const WorkloadReport& r : workloadReports(e)) {
        for (const auto& l : r.output) out += l + "\n";
        for (const auto& h : r.headline) out += fmt::format("{} {}\n", h.key, h.value);
        for (const auto& h : r.counters) out += fmt::format("{} {}\n", h.key, h.value);
    }
    return out;
}

std::string firstDifference(const std::string& a, const std::string& b);

// The small i7-4790 hackbench (into `s`) stopping at `stop_s`, run to `t`.
std::unique_ptr<Engine> smallRunAt(Scenario& s, double stop_s, std::int64_t t) {
    s = loadScenario(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios/i7-4790-hackbench-small.json");
    s.stop_s = stop_s;
    auto e = buildEngine(s, s.variants.front().knobs, s.cost, RunOptions{});
    e->advance(t);
    return e;
}

// Runs `s` as `v` to its stop with a checkpoint at `cut` (encoded, decoded, restored into a new
// engine that runs on); the engine that ends the run.
std::unique_ptr<Engine> runThroughCheckpoint(const Scenario& s, const Variant& v, std::int64_t cut, std::uint64_t* savedDigest = nullptr) {
    RunOptions o;
    o.decision_ring = 64;
    auto first = buildEngine(s, v.knobs, s.cost, o);
    while (first->now() < cut && first->advance(cut - first->now())) {
    }
    const std::string bytes = encodeCheckpoint(s, v.name, s.cost, o.seed, *first);
    if (savedDigest) *savedDigest = first->digest();
    first.reset();
    const Checkpoint c = decodeCheckpoint(bytes, "cut.state");
    auto e = restoreEngine(c, o, std::int64_t(s.stop_s * 1e9));
    // Saved again at once, the restored engine gives the bytes it was restored from.
    const std::string again = engineBytes(*e);
    EXPECT_TRUE(again == c.engine) << "restored and saved again, the state differs" << firstDifference(again, c.engine);
    e->run();
    return e;
}

// Where two states first differ, and in which section (Engine::state()'s tags).
std::string firstDifference(const std::string& a, const std::string& b) {
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    std::string section = "?";
    for (const auto& [tag, name] : std::vector<std::pair<std::uint32_t, const char*>>{{0x454e4731, "engine"},
                                                                                      {0x43505553, "cpus"},
                                                                                      {0x45564e54, "events"},
                                                                                      {0x464c4954, "flights"},
                                                                                      {0x50525859, "proxy"},
                                                                                      {0x574b4c44, "workloads"},
                                                                                      {0x4d455452, "metrics"}}) {
        const std::string t(reinterpret_cast<const char*>(&tag), 4);
        const std::size_t at = a.find(t);
        if (at != std::string::npos && at <= i) section = name;
    }
    return fmt::format(": at byte {} of {} / {} (section {})", i, a.size(), b.size(), section);
}

}  // namespace

// Every shipped scenario (first variant; the second too where a patch's knobs differ), shortened
// as the golden digests are, cut at a third and at two thirds of the run.
TEST(Checkpoint, RestoredRunsAreTheUninterruptedRunsForEveryShippedScenario) {
    std::vector<std::filesystem::path> files;
    for (const auto& f : std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios"))
        if (f.path().extension() == ".json") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 20u);
    for (const auto& f : files) {
        Scenario s = loadScenario(f.string());
        s.stop_s = s.topo->nrCpus() <= 16 ? 0.1 : 0.024;
        const std::int64_t stop = std::int64_t(s.stop_s * 1e9);
        const std::size_t sides = std::min<std::size_t>(s.variants.size(), 2);
        for (std::size_t vi = 0; vi < sides; ++vi) {
            const Variant& v = s.variants[vi];
            RunOptions o;
            o.decision_ring = 64;
            auto ref = buildEngine(s, v.knobs, s.cost, o);
            ref->run();
            const std::string refBytes = engineBytes(*ref);
            const std::string refReports = reportsText(*ref);
            for (const std::int64_t cut : {stop / 3 + 777, 2 * stop / 3}) {
                SCOPED_TRACE(fmt::format("{} {} cut at {} ns", f.filename().string(), v.name, cut));
                auto e = runThroughCheckpoint(s, v, cut);
                const std::string got = engineBytes(*e);  // before the reports (report() may apply what plans left behind)
                EXPECT_TRUE(got == refBytes) << "the state at the end differs" << firstDifference(got, refBytes);
                EXPECT_EQ(e->digest(), ref->digest());
                EXPECT_EQ(e->events(), ref->events());
                EXPECT_EQ(reportsText(*e), refReports);
            }
        }
    }
}

// The checkpoint carries the knobs as they stand: a live change before the cut is kept.
TEST(Checkpoint, KeepsLiveKnobChangesAndTheHeader) {
    Scenario s;
    auto e = smallRunAt(s, 0.05, 10'000'000);
    RunOptions o;
    Knobs k = e->knobs();
    k.set("idle_delay_ns", "1000000");
    e->setKnobs(k);
    e->advance(5'000'000);
    const Checkpoint c = decodeCheckpoint(encodeCheckpoint(s, "A", s.cost, 7, *e), "x.state");
    EXPECT_EQ(c.knobs.get("idle_delay_ns"), k.get("idle_delay_ns"));
    EXPECT_EQ(c.variant, "A");
    EXPECT_EQ(c.seed, 7u);
    EXPECT_EQ(c.time_ns, 15'000'000);
    EXPECT_EQ(c.digest, e->digest());
    auto r = restoreEngine(c, o, 50'000'000);
    EXPECT_EQ(r->knobs().get("idle_delay_ns"), k.get("idle_delay_ns"));
    r->run();
    e->run();
    EXPECT_EQ(r->digest(), e->digest());
}

// Damaged, truncated, foreign and non-state files: one InputError naming the file, never a crash.
TEST(Checkpoint, RefusesDamagedTruncatedAndForeignFiles) {
    Scenario s;
    auto e = smallRunAt(s, 0.02, 10'000'000);
    const std::string good = encodeCheckpoint(s, "A", s.cost, 1, *e);
    const auto refused = [](const std::string& bytes) -> std::string {
        try {
            const Checkpoint c = decodeCheckpoint(bytes, "bad.state");
            RunOptions ro;
            restoreEngine(c, ro, 0);
        } catch (const InputError& err) {
            return err.what();
        }
        return "accepted";
    };
    EXPECT_EQ(refused(good), "accepted");
    EXPECT_EQ(refused("{\"name\": \"a scenario\"}"), "bad.state: not a schedlab state file");
    std::string flipped = good;
    flipped[flipped.size() / 2] ^= 0x10;
    EXPECT_EQ(refused(flipped), "bad.state: damaged state: checksum mismatch");
    EXPECT_EQ(refused(good.substr(0, good.size() / 2)), "bad.state: damaged state: checksum mismatch");
    EXPECT_EQ(refused(good.substr(0, 20)), "bad.state: damaged state: truncated");
    std::string foreign = good;
    foreign[15] ^= 0x01;  // the format hash's first byte
    EXPECT_NE(refused(foreign).find("bad.state: state format "), std::string::npos) << refused(foreign);
    EXPECT_NE(refused(foreign).find("is not this schedlab's"), std::string::npos);

    // A body cut short, with lengths and checksum made consistent (as a buggy writer would
    // leave it): the reader stops at the end of the bytes and says where.
    const auto withBody = [&](const std::string& body) {
        std::string out = good.substr(0, 15 + 8);
        std::uint64_t n = 0;
        std::memcpy(&n, good.data() + 23, 8);
        out += good.substr(23, 8 + n);  // the header part as it was
        const std::uint64_t bn = body.size();
        out.append(reinterpret_cast<const char*>(&bn), 8);
        out += body;
        const std::uint64_t en = 0;
        out.append(reinterpret_cast<const char*>(&en), 8);
        std::uint64_t h = 0xcbf29ce484222325ULL;
        for (unsigned char ch : out) h = (h ^ ch) * 0x100000001b3ULL;
        out.append(reinterpret_cast<const char*>(&h), 8);
        return out;
    };
    const Checkpoint c = decodeCheckpoint(good, "bad.state");
    const std::string cut = refused(withBody(c.engine.substr(0, c.engine.size() / 2)));
    EXPECT_NE(cut.find("bad.state: damaged state: "), std::string::npos) << cut;
    std::string garbage = c.engine;
    for (std::size_t i = 16; i < garbage.size(); i += 7) garbage[i] = char(0xff);
    const std::string g = refused(withBody(garbage));
    EXPECT_NE(g.find("bad.state: "), std::string::npos) << g;
    EXPECT_EQ(refused(withBody(c.engine)), "accepted");
}

// The window's state of the default scenario (both sides: 384 CPUs, 1 281 tasks each, their
// timelines) is larger than the 16 MB a JSON input may be, and loads.
TEST(Checkpoint, TheDefaultWindowStateLoadsFromAFile) {
    const Scenario s = loadScenario(std::string(SCHEDLAB_SOURCE_DIR) + "/resources/scenarios/default.json");
    SimOptions o;
    o.sample_period_ns = 1000;  // 5 000 rows of 384 CPUs each side in 5 ms: a state as large as the window's at 2 s
    o.sample_rows = 5000;
    Simulation a(s, s.variants[0].knobs, "A", o), b(s, s.variants[1].knobs, "B", o);
    a.advance(5'000'000);
    b.advance(5'000'000);
    const std::string path = testing::TempDir() + "/default-window.state";
    writeFileAtomic(path, a.checkpoint(b.checkpoint()));
    EXPECT_GT(std::filesystem::file_size(path), std::uintmax_t(16) << 20);
    const Checkpoint c = loadCheckpoint(path);
    const Checkpoint cb = decodeCheckpoint(Simulation::companionOf(c), path + " (side B)");
    EXPECT_EQ(Simulation::fromCheckpoint(c)->engine().digest(), a.engine().digest());
    EXPECT_EQ(Simulation::fromCheckpoint(cb)->engine().digest(), b.engine().digest());
    std::filesystem::remove(path);
}
