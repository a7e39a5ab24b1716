// reproduce.cpp: see reproduce.h.
#include "reproduce.h"

#include "engine.h"
#include "input_error.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <variant>

namespace sched {

std::string ClaimSide::label() const {
    std::string s = preset;
    for (const auto& k : knobs) s += " " + k;
    for (const auto& c : cost) s += " " + c;
    return s;
}

namespace {
ClaimSide side(const std::string& preset, std::vector<std::string> knobs = {}, std::vector<std::string> cost = {}) {
    return ClaimSide{preset, std::move(knobs), std::move(cost)};
}

Claim mathieu(const std::string& id, const ClaimSide& patch, double published) {
    Claim c;
    c.id = id;
    c.source = "Mathieu Desnoyers 2023-07-25/26, 2 x EPYC 9654 (384 CPUs), hackbench -g 32 -f 20 --threads --pipe -s 100";
    c.scenario = "mathieu-hackbench-epyc-9654.json";
    c.loops = 20000;  // 1/24 of the original -l 480000; the machine settles from about 0.3 s
    c.quick_loops = 2000;
    c.base = side("baseline");
    c.patch = patch;
    c.published_base = 49;
    c.published_patch = published;
    return c;
}

Claim aaron(int groups, const ClaimSide& patch, double base, double published) {
    Claim c;
    c.id = fmt::format("aaron-g{}-{}", groups, patch.preset == "baseline" ? "tg-ratelimit" : "v2");
    c.source = fmt::format("Aaron Lu 2023-08-01, 2 x Sapphire Rapids (224 CPUs), hackbench -g {} -f 20 (threads, pipes)", groups);
    c.scenario = fmt::format("aaron-hackbench-spr-g{}.json", groups);
    c.loops = 0;  // as shipped (-l 10000)
    c.quick_loops = 2000;
    c.base = side("baseline");
    c.patch = patch;
    c.published_base = base;
    c.published_patch = published;
    return c;
}
}  // namespace

const std::vector<Claim>& seedClaims() {
    static const std::vector<Claim> claims = [] {
        std::vector<Claim> v;
        v.push_back(mathieu("mathieu-v1", side("idle-delay-v1"), 34));
        v.push_back(mathieu("mathieu-v2-k1", side("idle-delay-v2", {"idle_delay_max_running=1"}), 40));
        v.push_back(mathieu("mathieu-v2-k2", side("idle-delay-v2", {"idle_delay_max_running=2"}), 32));
        v.push_back(mathieu("mathieu-v2-k4", side("idle-delay-v2"), 30));
        v.push_back(mathieu("mathieu-v2-k8", side("idle-delay-v2", {"idle_delay_max_running=8"}), 31));
        v.push_back(mathieu("mathieu-clock-idle", side("idle-delay-v3"), 28));
        const double base[] = {43, 65, 150}, v2[] = {32, 45, 57}, tg[] = {37, 48, 73};
        const int groups[] = {10, 20, 32};
        for (int i = 0; i < 3; ++i) v.push_back(aaron(groups[i], side("idle-delay-v2"), base[i], v2[i]));
        for (int i = 0; i < 3; ++i) v.push_back(aaron(groups[i], side("baseline", {}, {"tg_ratelimit_ns=1000000"}), base[i], tg[i]));
        return v;
    }();
    return claims;
}

const std::vector<ClaimNotRun>& claimsNotRun() {
    static const std::vector<ClaimNotRun> v = {
        {"swapnil-tbench", "Swapnil Sapkal 2023-08, 2 x EPYC 9754 Bergamo (512 CPUs), tbench 1-2048 clients",
         "not in the table yet: needs one run per client count (swapnil-tbench-bergamo.json runs one)"},
        {"swapnil-hackbench", "Swapnil Sapkal 2023-08, Bergamo, hackbench 1-16 groups", "not in the table yet: no shipped scenario"},
        {"shrikanth-schbench", "Shrikanth Hegde 2023, POWER10, schbench beside 50 % stress-ng",
         "not in the table yet: p99 by message-thread count (shrikanth-schbench-50pct-power10.json runs one count)"},
        {"mike-sis-debounce", "Mike Galbraith, SIS_DEBOUNCE tbench", "not in the table yet"},
        {"atish-claim-wakeup", "Atish Patra 2017, claim_wakeup schbench", "not in the table yet"},
        {"wa-weight-stacking", "the WA_WEIGHT stacking case", "not in the table yet"},
    };
    return v;
}

std::string ClaimRun::key() const { return fmt::format("{}|{}|{}", scenario, loops, side.label()); }

ClaimRun claimRun(const Claim& c, bool patch, bool quick) {
    ClaimRun r;
    r.scenario = c.scenario;
    r.loops = quick && c.quick_loops ? c.quick_loops : c.loops;
    r.side = patch ? c.patch : c.base;
    return r;
}

PreparedRun prepareClaimRun(const ClaimRun& r, const std::string& scenariosDir) {
    const std::string path = (std::filesystem::path(scenariosDir) / r.scenario).string();
    PreparedRun p{loadScenario(path), {}, {}};
    if (r.loops > 0)
        for (auto& w : p.scenario.workloads)
            if (auto* h = std::get_if<HackbenchParams>(&w)) h->loops = r.loops;
    try {
        p.variant.knobs = Knobs::preset(r.side.preset);
        for (const auto& kv : r.side.knobs) {
            const auto eq = kv.find('=');
            p.variant.knobs.set(kv.substr(0, eq), kv.substr(eq + 1));
        }
    } catch (const KnobError& e) {
        throw InputError(path, "knobs", e.what());
    }
    p.variant.name = r.side.label();
    p.cost = p.scenario.cost;
    for (const auto& kv : r.side.cost) {
        const auto eq = kv.find('=');
        try {
            p.cost.set(kv.substr(0, eq), kv.substr(eq + 1));
        } catch (const CostError& e) {
            throw InputError(path, "cost." + kv.substr(0, eq), e.what());
        }
    }
    return p;
}

double ClaimOutcome::publishedChange() const {
    return claim->published_base != 0 ? (claim->published_patch - claim->published_base) / claim->published_base * 100 : 0;
}
double ClaimOutcome::change() const { return base != 0 ? (patch - base) / base * 100 : 0; }
bool ClaimOutcome::directionMatches() const {
    auto sign = [](double pct) { return std::fabs(pct) < 1.0 ? 0 : (pct > 0 ? 1 : -1); };
    return sign(change()) == sign(publishedChange());
}

ClaimOutcome evaluateClaim(const Claim& c, const RunResult& base, const RunResult& patch) {
    ClaimOutcome o;
    o.claim = &c;
    auto metric = [&](const RunResult& r) {
        for (const auto& rep : r.reports)
            for (const auto& h : rep.headline)
                if (h.label == c.metric) return h.value;
        throw InputError(c.scenario, "", fmt::format("claim {}: the run reports no \"{}\"", c.id, c.metric));
    };
    o.base = metric(base);
    o.patch = metric(patch);
    auto fill = [](const RunResult& r, bool& steady, double& from, double& job, double& busy, double& migr_s, std::uint64_t& migr,
                   double& tg, double& refill) {
        const Metrics& m = r.engine->metrics();
        const SteadyResult s = m.steady.result();
        steady = s.reached;
        from = s.reached ? double(s.from_ns) / 1e9 : -1;
        job = s.steadyJobTime();
        busy = s.busy_cpus;
        migr_s = s.migrations_per_s;
        migr = m.migrationsTotal();
        tg = double(m.cost_tg) / 1e6;
        refill = double(m.cost_refill) / 1e6;
    };
    fill(base, o.base_steady, o.base_steady_from, o.base_job_at_steady, o.base_busy, o.base_migr_s, o.base_migrations, o.base_tg_ms,
         o.base_refill_ms);
    fill(patch, o.patch_steady, o.patch_steady_from, o.patch_job_at_steady, o.patch_busy, o.patch_migr_s, o.patch_migrations,
         o.patch_tg_ms, o.patch_refill_ms);
    o.patch_idle_delay_hits = patch.engine->metrics().idle_delay_hits;
    return o;
}

namespace {
std::string si(double v) {
    const double a = std::fabs(v);
    if (a >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
    if (a >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
    if (a >= 1e4) return fmt::format("{:.1f} k", v / 1e3);
    return fmt::format("{:.0f}", v);
}
std::string pct(double a, double b) { return a != 0 ? fmt::format("{:+.0f} %", (b - a) / a * 100) : "new"; }
std::string steadyWord(bool s, double from) { return s ? fmt::format("from {:.2f} s", from) : "NOT steady"; }
}  // namespace

std::string reproduceTable(const std::vector<ClaimOutcome>& out, bool quick, double wall_s) {
    std::string o;
    o += "# schedlab reproduce: the seed threads' claims (shared/spec/workloads.md 4), each on its shipped scenario\n";
    o += quick ? "# --quick: shorter runs (start-up, mostly not at steady state): the directions here are NOT results\n"
               : "# full runs: every figure is the tool's whole-run figure; 'steady' says where each run settled\n";
    o += fmt::format("# {} claims run in {:.0f} s of wall time\n\n", out.size(), wall_s);
    o += fmt::format("{:<22} {:<23} {:<26} {}\n", "claim", "published", "schedlab", "direction");
    int match = 0;
    for (const auto& c : out) {
        const Claim& k = *c.claim;
        const std::string pub = fmt::format("{:g} -> {:g} ({:+.0f} %)", k.published_base, k.published_patch, c.publishedChange());
        const std::string sim = fmt::format("{:.3f} -> {:.3f} ({:+.0f} %)", c.base, c.patch, c.change());
        const bool ok = c.directionMatches();
        match += ok;
        o += fmt::format("{:<22} {:<23} {:<26} {}\n", k.id, pub, sim, ok ? "matches" : "DOES NOT match");
    }
    o += fmt::format("\n{} of {} claims go the published way{}.\n", match, out.size(), quick ? " (quick runs)" : "");
    o += "\nwhy (base -> patch): busy CPUs and migrations/s from the steady state (or the last windows), whole-run migrations,\n"
         "idle-delay hits, CPU time in tg->load_avg updates and cache refills, where each run settled\n";
    for (const auto& c : out) {
        const Claim& k = *c.claim;
        o += fmt::format("{}: {} vs {}, {} ({})\n", k.id, k.patch.label(), k.base.label(), k.metric, k.source);
        o += fmt::format("  busy CPUs {:.0f} -> {:.0f}; migrations/s {} -> {} ({}); migrations {} -> {} ({})\n", c.base_busy, c.patch_busy,
                         si(c.base_migr_s), si(c.patch_migr_s), pct(c.base_migr_s, c.patch_migr_s), si(double(c.base_migrations)),
                         si(double(c.patch_migrations)), pct(double(c.base_migrations), double(c.patch_migrations)));
        o += fmt::format("  idle-delay hits {}; tg_load_avg {:.0f} -> {:.0f} ms; cache refill {:.0f} -> {:.0f} ms; steady: {} / {}", si(double(c.patch_idle_delay_hits)),
                         c.base_tg_ms, c.patch_tg_ms, c.base_refill_ms, c.patch_refill_ms, steadyWord(c.base_steady, c.base_steady_from),
                         steadyWord(c.patch_steady, c.patch_steady_from));
        if (c.base_job_at_steady > 0 && c.patch_job_at_steady > 0)
            o += fmt::format("; at the steady rate {:.3f} -> {:.3f} s ({})", c.base_job_at_steady, c.patch_job_at_steady,
                             pct(c.base_job_at_steady, c.patch_job_at_steady));
        o += "\n";
    }
    o += "\nnot run yet:\n";
    for (const auto& n : claimsNotRun()) o += fmt::format("  {:<20} {}: {}\n", n.id, n.source, n.why);
    return o;
}

nlohmann::json reproduceJson(const std::vector<ClaimOutcome>& out, bool quick, double wall_s) {
    using nlohmann::json;
    json claims = json::array();
    for (const auto& c : out) {
        const Claim& k = *c.claim;
        claims.push_back({{"id", k.id},
                          {"source", k.source},
                          {"scenario", k.scenario},
                          {"loops", quick && k.quick_loops ? k.quick_loops : k.loops},
                          {"base", k.base.label()},
                          {"patch", k.patch.label()},
                          {"metric", k.metric},
                          {"published", {{"base", k.published_base}, {"patch", k.published_patch}, {"change_pct", c.publishedChange()}}},
                          {"schedlab", {{"base", c.base}, {"patch", c.patch}, {"change_pct", c.change()}}},
                          {"direction_matches", c.directionMatches()},
                          {"steady", {{"base", c.base_steady}, {"patch", c.patch_steady}, {"base_from_s", c.base_steady_from},
                                      {"patch_from_s", c.patch_steady_from}}},
                          {"busy_cpus", {c.base_busy, c.patch_busy}},
                          {"migrations_per_s", {c.base_migr_s, c.patch_migr_s}},
                          {"migrations", {c.base_migrations, c.patch_migrations}},
                          {"idle_delay_hits", c.patch_idle_delay_hits},
                          {"tg_load_avg_ms", {c.base_tg_ms, c.patch_tg_ms}},
                          {"cache_refill_ms", {c.base_refill_ms, c.patch_refill_ms}}});
    }
    json notRun = json::array();
    for (const auto& n : claimsNotRun()) notRun.push_back({{"id", n.id}, {"source", n.source}, {"why", n.why}});
    return {{"quick", quick}, {"wall_s", wall_s}, {"claims", claims}, {"not_run", notRun}};
}

}  // namespace sched
