// SPDX-License-Identifier: GPL-2.0-or-later
// gui_main.cpp: entry point of the `schedlab` GUI. With --screenshot it runs headless: loads the
// scenario, simulates --run-for of simulated time as fast as possible, exports the window (or one
// view) with its caption, and exits, so tests, CI and the README's images use the real window.
#include "gui_soak.h"
#include "main_window.h"
#include "trace_session.h"
#include "topology/topology_json.h"
#include "trace/trace.h"
#include "replay/trace_snapshot.h"

#include "kernel/knobs.h"
#include "util/install_paths.h"
#include "util/output_files.h"
#include "sim/scenario.h"

#include <QApplication>
#include <QIcon>
#include <unistd.h>
#include <QElapsedTimer>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QImage>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace {

constexpr int kExitUsage = 2;

/// True when Qt would try xcb/wayland and fail: no display and no platform chosen by the user
/// (neither QT_QPA_PLATFORM nor Qt's own `-platform NAME` option).
bool noDisplay(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-platform") == 0 || std::strcmp(argv[i], "--platform") == 0) return false;
    }
    return qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

int usage(const QString& msg) {
    std::fprintf(stderr, "schedlab: %s (try --help)\n", qPrintable(msg));
    return kExitUsage;
}

}  // namespace

namespace {
QElapsedTimer g_sinceMain;  ///< SCHEDLAB_TIMING's stages
std::string g_stages;
void stage(const char* what) {
    if (qEnvironmentVariableIsSet("SCHEDLAB_TIMING")) g_stages += fmt::format(" {} {}", what, g_sinceMain.elapsed());
}
}  // namespace

namespace {

/// `schedlab`'s command line: the options, checked, then the files they name read and checked, all
/// before any window exists (a bad one is one line and exit status 2); then the window is opened
/// on them, for a person or headless (--screenshot).
class GuiMain {
public:
    explicit GuiMain(bool forcedOffscreen) : forcedOffscreen(forcedOffscreen) {
        parser.setApplicationDescription(
            QStringLiteral("schedlab: a laboratory for the Linux CFS wakeup path.\n"
                           "Without options: the default scenario (hackbench on 2 x EPYC 9654, baseline vs idle-delay-v2)."));
        parser.addHelpOption();
        for (const auto* o : {&besideVarOpt, &scenarioOpt, &runForOpt, &ffOpt,     &shotOpt,   &viewOpt,  &aOpt,    &bOpt,  &setAOpt,
                              &setBOpt,      &noAbOpt,     &seedOpt,   &traceOpt,  &pausedOpt, &recOpt,   &topoOpt, &atOpt, &disOpt,
                              &recBOpt,      &besideOpt,   &soakOpt,   &changeOpt, &branchOpt, &stateOpt, &freshOpt})
            parser.addOption(*o);
    }

    /// -1 when the window may open, else the exit status.
    int prepare() {
        if (const int rc = checkOptions(); rc >= 0) return rc;
        if (const int rc = loadScenario(); rc >= 0) return rc;
        return loadTraces();
    }

    /// Opens the window on the scenario or the traces, then runs the event loop.
    int exec();
    void runWithChanges(schedlab::MainWindow& window, bool ff, qint64 end, std::function<void()> done);
    std::function<void(std::size_t)> changeStep;  ///< runWithChanges()' next leg

private:
    QCommandLineParser parser;
    const QCommandLineOption scenarioOpt{QStringLiteral("scenario"),
                                         QStringLiteral("Scenario JSON file to open, or a shipped scenario's name (schedlab-cli scenarios)."),
                                         QStringLiteral("file")};
    const QCommandLineOption stateOpt{QStringLiteral("state"),
                                      QStringLiteral("Open a saved state (File > Save state, or schedlab-cli run --save-state) instead of a "
                                                     "scenario from t = 0: the run goes on from there."),
                                      QStringLiteral("file")};
    const QCommandLineOption freshOpt{QStringLiteral("fresh"),
                                      QStringLiteral("The default scenario from t = 0 (without it, the window opens the default scenario at its "
                                                     "steady state: fast-forwarded there the first time, from the user's cache after)")};
    const QCommandLineOption runForOpt{QStringLiteral("run-for"), QStringLiteral("With --screenshot: simulated time to run first (2s, 50ms, 500us)."),
                                       QStringLiteral("time")};
    const QCommandLineOption ffOpt{QStringLiteral("fast-forward"),
                                   QStringLiteral("Run to simulated time <time> first without drawing (progress on stderr), then show the "
                                                  "window there, paused (2s, 500ms; steady: until side A's steady-state detector says it "
                                                  "has been settled for a second); with --screenshot, then capture."),
                                   QStringLiteral("time")};
    const QCommandLineOption shotOpt{QStringLiteral("screenshot"),
                                     QStringLiteral("Render offscreen to <file> (.png, .svg or .pdf) with its caption, and exit."),
                                     QStringLiteral("file")};
    const QCommandLineOption viewOpt{
        QStringLiteral("view"),
        QStringLiteral("With --screenshot: window (default), heatmapA, heatmapB, rq, rqB, rqAB (A and B side by side), latency, counters, inspector, "
                       "flow (the decision flow), knobs (the knob panel), outcome (the workload's rate, busy CPUs and migrations over time)."),
        QStringLiteral("name"), QStringLiteral("window")};
    const QCommandLineOption aOpt{QStringLiteral("a"), QStringLiteral("Knob preset of side A."), QStringLiteral("preset")};
    const QCommandLineOption bOpt{QStringLiteral("b"), QStringLiteral("Knob preset of side B."), QStringLiteral("preset")};
    const QCommandLineOption setAOpt{QStringLiteral("set-a"), QStringLiteral("Knob override for A (repeatable)."), QStringLiteral("knob=value")};
    const QCommandLineOption setBOpt{QStringLiteral("set-b"), QStringLiteral("Knob override for B (repeatable)."), QStringLiteral("knob=value")};
    const QCommandLineOption noAbOpt{QStringLiteral("no-ab"), QStringLiteral("Side A only.")};
    const QCommandLineOption seedOpt{QStringLiteral("seed"), QStringLiteral("RNG seed (default: the scenario's)."), QStringLiteral("n")};
    const QCommandLineOption traceOpt{QStringLiteral("step-wakeup"),
                                      QStringLiteral("With --screenshot: after --run-for, step to the next wakeup and show its path.")};
    const QCommandLineOption pausedOpt{QStringLiteral("paused"), QStringLiteral("Start paused.")};
    const QCommandLineOption recOpt{QStringLiteral("trace"),
                                    QStringLiteral("Show a recorded trace (ftrace text, .gz, or trace-cmd trace.dat) instead of a simulation."),
                                    QStringLiteral("file")};
    const QCommandLineOption topoOpt{QStringLiteral("topology"),
                                     QStringLiteral("With --trace: the machine it was recorded on (a preset or an hwloc XML)."),
                                     QStringLiteral("name")};
    const QCommandLineOption atOpt{
        QStringLiteral("at"), QStringLiteral("With --trace: the cursor, as time after the first event (default: the end)."), QStringLiteral("time")};
    const QCommandLineOption disOpt{QStringLiteral("disagreement"),
                                    QStringLiteral("With --trace: open the K-th disagreement with the kernel (1 = the first in time) in the "
                                                   "decision inspector and move the cursor to it (instead of --at)."),
                                    QStringLiteral("K")};
    const QCommandLineOption recBOpt{QStringLiteral("trace-b"),
                                     QStringLiteral("With --trace: a second recorded trace on the same machine as side B (before/after a patch); "
                                                    "both are shown at the same time since their first event."),
                                     QStringLiteral("file")};
    const QCommandLineOption besideOpt{QStringLiteral("beside-sim"),
                                       QStringLiteral("With --trace: side B simulates this scenario (the trace's topology, or as many CPUs) "
                                                      "to the cursor's time since the trace's first event."),
                                       QStringLiteral("scenario")};
    const QCommandLineOption besideVarOpt{QStringLiteral("beside-variant"),
                                          QStringLiteral("With --beside-sim: which of the scenario's variants runs (default: its first)."),
                                          QStringLiteral("name")};

    const QCommandLineOption soakOpt{QStringLiteral("soak"),
                                     QStringLiteral("Drive the window for <seconds> of wall time (sliders, restarts, --trace opened again and again) "
                                                    "and print its resident memory every 10 s, then exit (tests/soak/window_soak.sh)."),
                                     QStringLiteral("seconds")};

    const QCommandLineOption changeOpt{
        QStringLiteral("change"),
        QStringLiteral("With --run-for or --fast-forward: at simulated time T set a knob of side A or B live, as a slider would "
                       "(e.g. 300ms:B:idle_delay_ns=1ms; repeatable). The outcome view marks each change."),
        QStringLiteral("T:side:knob=value")};
    const QCommandLineOption branchOpt{QStringLiteral("branch-at"),
                                       QStringLiteral("With --run-for or --fast-forward: at simulated time T side B starts again from side A's "
                                                      "state with B's knobs (Run → B from here)."),
                                       QStringLiteral("T")};
    /// A --change (or, with an empty knob, a --branch-at): when, which side, the knob and its value.
    struct Change {
        qint64 t = 0;
        int side = 0;
        QString knob, value;
    };
    std::vector<Change> changes;  ///< in time order

    const bool forcedOffscreen;
    double soakSeconds = 0;  ///< --soak, 0: none
    QString shot, viewName;
    qint64 fastForward = -1, runFor = 0;
    bool ffSteady = false;  ///< --fast-forward steady: until A's steady-state detector says settled
    qint64 at = -1;         ///< --at, -1: none
    int disagreement = 0;   ///< --disagreement, 1-based; 0: none
    schedlab::StartOptions so;
    std::optional<sched::Scenario> scenario;
    std::shared_ptr<const sched::Trace> rec, recB;
    std::shared_ptr<const sched::Topology> recTopo;
    std::optional<sched::Scenario> beside;
    std::shared_ptr<const sched::AgreeReport> agreed, agreedB;

    /// The flags and their values (durations, knobs, the view); -1 or the exit status.
    int checkOptions() {
        if (!parser.parse(QApplication::arguments())) return usage(parser.errorText());
        if (parser.isSet(QStringLiteral("help"))) parser.showHelp(0);  // exits
        if (!parser.positionalArguments().isEmpty())
            return usage(QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().front()));

        shot = parser.value(shotOpt);
        if (parser.isSet(shotOpt) && shot.isEmpty()) return usage(QStringLiteral("--screenshot needs a file name"));
        if (!shot.isEmpty()) {
            const QString suf = QFileInfo(shot).suffix().toLower();
            if (suf != QLatin1String("png") && suf != QLatin1String("svg") && suf != QLatin1String("pdf"))
                return usage(QStringLiteral("--screenshot %1: use a .png, .svg or .pdf file name").arg(shot));
            // Its directory before anything is simulated (a picture that cannot be saved is a bad flag).
            const QFileInfo dir(QFileInfo(shot).absolutePath());
            if (!dir.isDir()) return usage(QStringLiteral("--screenshot %1: directory %2 does not exist").arg(shot, dir.filePath()));
            if (!dir.isWritable()) return usage(QStringLiteral("--screenshot %1: directory %2 is not writable").arg(shot, dir.filePath()));
            if (QFileInfo(shot).isDir()) return usage(QStringLiteral("--screenshot %1: is a directory (give a file name)").arg(shot));
        }
        if (parser.isSet(ffOpt) && parser.value(ffOpt) == QLatin1String("steady")) {
            if (parser.isSet(runForOpt)) return usage(QStringLiteral("--fast-forward and --run-for: give one of them"));
            ffSteady = true;
            fastForward = std::int64_t(60) * 1000000000;  // at most a minute of simulated time
        } else if (parser.isSet(ffOpt)) {
            const auto d = sched::parseDurationNs(parser.value(ffOpt).toStdString());
            if (!d || *d <= 0) return usage(QStringLiteral("--fast-forward '%1': not a duration (e.g. 2s, 500ms)").arg(parser.value(ffOpt)));
            if (parser.isSet(runForOpt)) return usage(QStringLiteral("--fast-forward and --run-for: give one of them"));
            fastForward = *d;
        }
        if (parser.isSet(runForOpt)) {
            const auto d = sched::parseDurationNs(parser.value(runForOpt).toStdString());
            if (!d || *d < 0) return usage(QStringLiteral("--run-for '%1': not a duration (e.g. 2s, 50ms, 500us)").arg(parser.value(runForOpt)));
            runFor = *d;
        }
        so.ab = !parser.isSet(noAbOpt);
        if (parser.isSet(seedOpt)) {
            bool ok = false;
            so.seed = parser.value(seedOpt).toULongLong(&ok);
            if (!ok) return usage(QStringLiteral("--seed '%1': not a non-negative integer").arg(parser.value(seedOpt)));
        }
        auto knobs = [&](const QCommandLineOption& preset, const QCommandLineOption& sets, std::optional<sched::Knobs>& out) -> QString {
            if (!parser.isSet(preset) && !parser.isSet(sets)) return {};
            try {
                sched::Knobs k = sched::Knobs::preset(parser.isSet(preset) ? parser.value(preset).toStdString() : "baseline");
                for (const QString& kv : parser.values(sets)) {
                    const int eq = kv.indexOf(QLatin1Char('='));
                    if (eq <= 0) return QStringLiteral("--%1 '%2': expected knob=value").arg(sets.names().front(), kv);
                    k.set(kv.left(eq).toStdString(), kv.mid(eq + 1).toStdString());
                }
                out = k;
            } catch (const std::exception& e) {
                return QStringLiteral("--%1: %2").arg(preset.names().front(), QString::fromUtf8(e.what()));
            }
            return {};
        };
        if (const QString e = knobs(aOpt, setAOpt, so.a); !e.isEmpty()) return usage(e);
        if (const QString e = knobs(bOpt, setBOpt, so.b); !e.isEmpty()) return usage(e);
        viewName = parser.value(viewOpt);
        for (const QString& c : parser.values(changeOpt)) {
            const QStringList parts = c.split(QLatin1Char(':'));
            const int eq = parts.size() == 3 ? parts[2].indexOf(QLatin1Char('=')) : -1;
            const auto t = parts.size() == 3 ? sched::parseDurationNs(parts[0].toStdString()) : std::nullopt;
            if (!t || *t < 0 || (parts[1] != QLatin1String("A") && parts[1] != QLatin1String("B")) || eq <= 0)
                return usage(QStringLiteral("--change '%1': expected T:A|B:knob=value (e.g. 300ms:B:idle_delay_ns=1ms)").arg(c));
            Change ch{*t, parts[1] == QLatin1String("B") ? 1 : 0, parts[2].left(eq), parts[2].mid(eq + 1)};
            try {
                sched::Knobs probe;  // the knob and its value, checked before anything runs
                probe.set(ch.knob.toStdString(), ch.value.toStdString());
            } catch (const std::exception& e) {
                return usage(QStringLiteral("--change '%1': %2").arg(c, QString::fromUtf8(e.what())));
            }
            if (ch.knob == QLatin1String("proxy_exec")) return usage(QStringLiteral("--change '%1': proxy_exec is a boot parameter").arg(c));
            changes.push_back(ch);
        }
        if (parser.isSet(branchOpt)) {
            const auto t = sched::parseDurationNs(parser.value(branchOpt).toStdString());
            if (!t || *t <= 0) return usage(QStringLiteral("--branch-at '%1': not a simulated time (e.g. 1s, 300ms)").arg(parser.value(branchOpt)));
            if (parser.isSet(noAbOpt)) return usage(QStringLiteral("--branch-at: needs A and B (not --no-ab)"));
            changes.push_back({*t, 1, QString(), QString()});
        }
        std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) { return x.t < y.t; });
        if (!changes.empty() && ffSteady) return usage(QStringLiteral("--change, --branch-at: give --fast-forward a time, not steady"));
        if (!changes.empty() && fastForward < 0 && runFor <= 0)
            return usage(QStringLiteral("--change, --branch-at: give --run-for or --fast-forward (the time to run to)"));
        if (!changes.empty() && changes.back().t >= std::max(fastForward, runFor))
            return usage(QStringLiteral("--change, --branch-at: the time is past the --run-for / --fast-forward end"));

        if (parser.isSet(soakOpt)) {
            bool ok = false;
            soakSeconds = parser.value(soakOpt).toDouble(&ok);
            if (!ok || !(soakSeconds > 0) || soakSeconds > 7 * 86400.0)
                return usage(QStringLiteral("--soak '%1': not a number of seconds (1 to 604800)").arg(parser.value(soakOpt)));
            if (!shot.isEmpty()) return usage(QStringLiteral("--soak and --screenshot: give one of them"));
        }
        if (forcedOffscreen && shot.isEmpty() && soakSeconds <= 0) {
            std::fprintf(stderr, "schedlab: no display (set DISPLAY, run under xvfb-run -a, or use --screenshot FILE.png)\n");
            return 1;
        }

        static const QStringList kViews = {QStringLiteral("window"),   QStringLiteral("heatmapA"),  QStringLiteral("heatmapB"),
                                           QStringLiteral("rq"),       QStringLiteral("rqB"),       QStringLiteral("latency"),
                                           QStringLiteral("counters"), QStringLiteral("inspector"), QStringLiteral("rqAB"),
                                           QStringLiteral("flow"),     QStringLiteral("knobs"),     QStringLiteral("outcome")};
        if (!kViews.contains(viewName)) return usage(QStringLiteral("--view '%1': unknown view").arg(viewName));
        return -1;
    }

    int loadScenario() {
        if (parser.isSet(stateOpt)) {  // a bad state file is refused before any window exists
            for (const auto* o :
                 {&scenarioOpt, &recOpt, &runForOpt, &ffOpt, &aOpt, &bOpt, &setAOpt, &setBOpt, &seedOpt, &noAbOpt, &freshOpt, &soakOpt})
                if (parser.isSet(*o))
                    return usage(QStringLiteral("--state and --%1: the state file carries its run (give one of them)").arg(o->names().front()));
            try {
                (void)sched::loadCheckpoint(parser.value(stateOpt).toStdString());
            } catch (const std::exception& e) {
                std::fprintf(stderr, "schedlab: %s\n", e.what());
                return kExitUsage;
            }
        }
        if (parser.isSet(scenarioOpt)) {  // bad scenario files are refused before any window exists
            try {
                scenario = sched::loadScenario(sched::resolveScenarioPath(parser.value(scenarioOpt).toStdString()));
                for (const std::string& w : scenario->warnings) std::fprintf(stderr, "schedlab: warning: %s\n", w.c_str());
            } catch (const std::exception& e) {
                std::fprintf(stderr, "schedlab: %s\n", e.what());
                return kExitUsage;
            }
        }
        return -1;
    }

    /// --trace, --trace-b, --beside-sim and, headless, the agreements; -1 or the exit status.
    int loadTraces() {
        // A recorded trace: read and checked before any window exists, like a scenario.
        if (parser.isSet(disOpt)) {
            if (!parser.isSet(recOpt)) return usage(QStringLiteral("--disagreement needs --trace"));
            bool ok = false;
            disagreement = parser.value(disOpt).toInt(&ok);
            if (!ok || disagreement < 1)
                return usage(QStringLiteral("--disagreement '%1': not a positive integer (1 = the first disagreement)").arg(parser.value(disOpt)));
        }
        if (parser.isSet(recBOpt) && !parser.isSet(recOpt)) return usage(QStringLiteral("--trace-b needs --trace (side A)"));
        if (parser.isSet(besideOpt) && !parser.isSet(recOpt)) return usage(QStringLiteral("--beside-sim needs --trace"));
        if (parser.isSet(besideVarOpt) && !parser.isSet(besideOpt)) return usage(QStringLiteral("--beside-variant needs --beside-sim"));
        if (parser.isSet(recBOpt) && parser.isSet(besideOpt)) return usage(QStringLiteral("--trace-b and --beside-sim: side B is one or the other"));
        if (parser.isSet(recOpt)) {
            if (parser.isSet(atOpt)) {
                const auto d = sched::parseDurationNs(parser.value(atOpt).toStdString());
                if (!d || *d < 0) return usage(QStringLiteral("--at '%1': not a duration (e.g. 120ms)").arg(parser.value(atOpt)));
                at = *d;
            }
            try {
                const std::string p = parser.value(recOpt).toStdString();
                rec = std::make_shared<const sched::Trace>(sched::readTrace(p));
                stage("read");
                if (!parser.isSet(topoOpt)) {
                    QStringList same;
                    for (const auto& n : sched::Topology::presetsWithCpus(rec->nr_cpus)) same << QString::fromStdString(n);
                    return usage(QStringLiteral("--trace needs --topology: the trace has %1 CPUs (presets with %1 CPUs: %2; or an hwloc XML)")
                                     .arg(rec->nr_cpus)
                                     .arg(same.isEmpty() ? QStringLiteral("none") : same.join(QStringLiteral(", "))));
                }
                recTopo = std::make_shared<const sched::Topology>(sched::loadTopology(parser.value(topoOpt).toStdString()));
                if (recTopo->nrCpus() < rec->nr_cpus)
                    return usage(QStringLiteral("--topology %1: has %2 CPUs, the trace %3")
                                     .arg(parser.value(topoOpt))
                                     .arg(recTopo->nrCpus())
                                     .arg(rec->nr_cpus));
            } catch (const std::exception& e) {
                std::fprintf(stderr, "schedlab: %s\n", e.what());
                return kExitUsage;
            }
        }
        // Side B: a second trace on the same machine, or a scenario simulated beside the trace.
        try {
            if (parser.isSet(recBOpt)) {
                recB = std::make_shared<const sched::Trace>(sched::readTrace(parser.value(recBOpt).toStdString()));
                if (recB->nr_cpus > recTopo->nrCpus())
                    return usage(QStringLiteral("--trace-b %1: has %2 CPUs, more than --topology %3 (%4 CPUs)")
                                     .arg(parser.value(recBOpt))
                                     .arg(recB->nr_cpus)
                                     .arg(parser.value(topoOpt))
                                     .arg(recTopo->nrCpus()));
            }
            if (parser.isSet(besideOpt)) {
                beside = sched::loadScenario(parser.value(besideOpt).toStdString());
                if (parser.isSet(besideVarOpt)) {  // refused before any window exists, like the rest
                    QStringList names;
                    bool found = false;
                    for (const auto& v : beside->variants) {
                        names << QString::fromStdString(v.name);
                        found = found || QString::fromStdString(v.name) == parser.value(besideVarOpt);
                    }
                    if (!found)
                        return usage(QStringLiteral("%1: no variant '%2' (the scenario's: %3)")
                                         .arg(parser.value(besideOpt), parser.value(besideVarOpt), names.join(QStringLiteral(", "))));
                }
                if (beside->topo->name() != recTopo->name() && beside->topo->nrCpus() != recTopo->nrCpus())
                    return usage(QStringLiteral("--beside-sim %1: topology %2 (%3 CPUs) is not the trace's %4 (%5 CPUs)")
                                     .arg(parser.value(besideOpt), QString::fromStdString(beside->topo->name()))
                                     .arg(beside->topo->nrCpus())
                                     .arg(QString::fromStdString(recTopo->name()))
                                     .arg(recTopo->nrCpus()));
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "schedlab: %s\n", e.what());
            return kExitUsage;
        }

        // Headless: the agreement is replayed before any window exists too, so that a --disagreement past the
        // last one is refused like any bad value (the window shows this report, it does not replay it again).
        if (rec && !shot.isEmpty()) {
            QString why;
            std::tie(agreed, why) = schedlab::TraceSession::replayAgreement(*rec, recTopo);
            if (disagreement > 0 && !agreed) return usage(QStringLiteral("--disagreement: no agreement: %1").arg(why));
            if (disagreement > 0) {
                int n = 0;
                for (const auto& row : agreed->rows) n += row.sim != row.kernel;
                if (disagreement > n) return usage(QStringLiteral("--disagreement %1: the trace has %2 disagreements").arg(disagreement).arg(n));
            }
        }
        if (recB && !shot.isEmpty()) agreedB = schedlab::TraceSession::replayAgreement(*recB, recTopo).first;
        return -1;
    }

    /// SCHEDLAB_TIMING: the moment the trace is drawn, on stderr.
    static void reportWhenDrawn(schedlab::MainWindow& window) {
        if (qEnvironmentVariableIsSet("SCHEDLAB_TIMING")) {
            // For tests/bench/open_vs_kernelshark.sh: the moment the trace is drawn, as the wall
            // clock ("exit" quits then). One turn of the event loop: the first paint and showFrame's
            // refresh of the histograms have run, the agreement replay and the cursor index are not
            // started yet (showTrace starts them two turns later, after the histograms' paint); the
            // grab paints every view once more (as bench_gui's BM_OpenTraceDat), histograms included.
            QTimer::singleShot(0, &window, [&window] {
                const QImage img = window.grab().toImage();
                stage("drawn");
                if (const QByteArray f = qgetenv("SCHEDLAB_TIMING_PNG"); !f.isEmpty()) img.save(QString::fromLocal8Bit(f));
                timespec ts{};
                ::clock_gettime(CLOCK_REALTIME, &ts);
                std::fprintf(stderr, "schedlab-timing: drawn %lld (%dx%d; ms since main:%s)\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec,
                             img.width(), img.height(), g_stages.c_str());
                std::fflush(stderr);
                if (qgetenv("SCHEDLAB_TIMING") == "exit") QApplication::exit(0);
            });
        }
    }

    /// Side B beside the shown trace, the cursor, --disagreement, then `capture` (headless).
    int showTraceSides(schedlab::MainWindow& window, const std::function<void()>& capture) {
        if (recB) {
            const QString why = window.showTraceB(recB, parser.value(recBOpt), agreedB);
            if (!why.isEmpty()) return usage(why);
        }
        if (beside) {
            const QString why = window.showSimulationBeside(*beside, parser.value(besideOpt), parser.value(besideVarOpt));
            if (!why.isEmpty()) return usage(why);
        }
        if (at >= 0) window.setTraceTime(sched::traceSpan(*rec).first + at);
        // The agreement runs in the background: the timeline and --disagreement need it; side B's
        // simulation runs to the cursor's time on the worker.
        auto ready = [&window, capture, shot = shot] {
            if (shot.isEmpty()) return;
            window.whenBesideReady(capture);
        };
        window.whenAgreed([&window, disagreement = disagreement, ready] {
            if (disagreement > 0) {
                if (!window.agreement()) {
                    std::fprintf(stderr, "schedlab: --disagreement: %s\n", qPrintable(window.agreementSummary()));
                    QApplication::exit(kExitUsage);
                    return;
                }
                if (!window.openDisagreement(disagreement - 1)) {
                    std::fprintf(stderr, "schedlab: --disagreement %d: the trace has %d disagreements\n", disagreement, window.disagreementCount());
                    QApplication::exit(kExitUsage);
                    return;
                }
            }
            ready();
        });
        return -1;
    }
};

// Runs (fast-forwards, or runs with frames) to each --change's time, sets its knob there as the
// slider would, and goes on to `end`; then `done`.
void GuiMain::runWithChanges(schedlab::MainWindow& window, bool ff, qint64 end, std::function<void()> done) {
    changeStep = [this, &window, ff, end, done = std::move(done)](std::size_t i) {
        const bool last = i >= changes.size();
        auto next = [this, &window, i, last, done] {
            if (last) return done();
            const Change& c = changes[i];
            if (c.knob.isEmpty()) return window.branchHere(c.side, [this, i] { changeStep(i + 1); });  // --branch-at
            if (const QString err = window.changeKnob(c.side, c.knob, c.value); !err.isEmpty()) {
                std::fprintf(stderr, "schedlab: --change: %s\n", qPrintable(err));
                QApplication::exit(2);
                return;
            }
            changeStep(i + 1);
        };
        const qint64 t = last ? end : changes[i].t;
        if (ff && ffSteady) window.fastForwardToSteady(t, next);
        else if (ff) window.fastForward(t, next);
        else window.runUntil(t, next);
    };
    changeStep(0);
}

int GuiMain::exec() {
    schedlab::MainWindow window;
    stage("window");
    if (fastForward >= 0 && rec) return usage(QStringLiteral("--fast-forward: a recorded trace is shown, not simulated (use --at)"));
    // A trace is shown instead: no run in the background (the soak starts on the simulation and opens the trace later).
    so.autoplay = shot.isEmpty() && !parser.isSet(pausedOpt) && (!rec || soakSeconds > 0) && fastForward < 0;
    // The default scenario opens at its steady state unless something else says where the run starts.
    const bool steadyStart = !scenario && !rec && !parser.isSet(stateOpt) && !parser.isSet(freshOpt) && soakSeconds <= 0 && fastForward < 0 &&
                             runFor <= 0 && !parser.isSet(aOpt) && !parser.isSet(bOpt) && !parser.isSet(setAOpt) && !parser.isSet(setBOpt) &&
                             !parser.isSet(seedOpt) && !parser.isSet(noAbOpt);
    if (parser.isSet(stateOpt)) {
        QObject::connect(&window, &schedlab::MainWindow::stateFailed, &window, [](const QString& err) {
            std::fprintf(stderr, "schedlab: %s\n", qPrintable(err));
            QApplication::exit(kExitUsage);
        });
    }
    if (scenario) window.openScenario(*scenario, parser.value(scenarioOpt), so);
    else if (!steadyStart && !parser.isSet(stateOpt)) window.openDefault(so);
    stage("scenario");
    window.show();
    // Headless: export the asked view with its caption once the views took the last frame and laid out.
    auto capture = [&window, shot = shot, viewName = viewName] {
        QTimer::singleShot(50, &window, [&window, shot, viewName] {
            const QString err = viewName == QLatin1String("rqAB") ? window.exportRqPair(shot) : window.exportView(window.view(viewName), shot);
            if (!err.isEmpty()) {
                std::fprintf(stderr, "schedlab: %s\n", qPrintable(err));
                QApplication::exit(1);
                return;
            }
            std::printf("%s\n", qPrintable(window.caption()));
            QApplication::exit(0);
        });
    };
    // A state opened, or the steady state reached: the picture (after a wakeup stepped into), or play.
    auto shown = [&window, trace = parser.isSet(traceOpt), capture, shot = shot, play = !parser.isSet(pausedOpt)] {
        if (!shot.isEmpty()) {
            if (trace) window.stepWakeupThen(capture);
            else capture();
        } else if (play) {
            window.setRunning(true);
        }
    };
    if (soakSeconds > 0) {
        schedlab::SoakOptions o;
        o.seconds = soakSeconds;
        o.actionMs = int(std::min(2000.0, soakSeconds * 1000.0 / 12));  // a short soak still goes through every action
        o.scenario = scenario ? &*scenario : nullptr;
        o.scenarioPath = parser.value(scenarioOpt);
        if (rec) o.tracePath = parser.value(recOpt), o.traceTopology = recTopo;
        schedlab::startSoak(window, o, so);
    } else if (rec) {
        window.showTrace(rec, recTopo, parser.value(recOpt), agreed);
        stage("shown");
        reportWhenDrawn(window);
        if (const int rc = showTraceSides(window, capture); rc >= 0) return rc;
    } else if (parser.isSet(stateOpt)) {
        const QString err = window.openSimState(parser.value(stateOpt), shown);
        if (!err.isEmpty()) {
            std::fprintf(stderr, "schedlab: %s\n", qPrintable(err));
            return kExitUsage;
        }
    } else if (steadyStart) {
        QObject::connect(&window, &schedlab::MainWindow::fastForwardProgress, &window, [](qint64 now, qint64, double rate, bool done) {
            if (!done && !::isatty(2)) return;  // a log gets the last line only
            std::fprintf(stderr, "\rschedlab: to the steady state: %.3f s simulated (%.1f simulated ms/s)%s", double(now) / 1e9, rate / 1e6,
                         done ? "\n" : "");
            std::fflush(stderr);
        });
        const bool cached = window.openSteady(std::nullopt, shown);
        std::fprintf(stderr,
                     cached ? "schedlab: the steady state from the cache of an earlier start (%s)\n"
                            : "schedlab: to the steady state from t = 0 (cached in %s for the next start; --fresh: stay at t = 0)\n",
                     qPrintable(window.steadyCachePath()));
    } else if (fastForward >= 0) {
        QObject::connect(&window, &schedlab::MainWindow::fastForwardProgress, &window, [](qint64 now, qint64 target, double rate, bool done) {
            if (!done && !::isatty(2)) return;  // a log gets the last line only
            std::fprintf(stderr, "\rschedlab: fast-forward %.3f of %.3f s simulated (%.1f simulated ms/s)%s", double(now) / 1e9, double(target) / 1e9,
                         rate / 1e6, done ? "\n" : "");
            std::fflush(stderr);
        });
        const bool trace = parser.isSet(traceOpt);
        runWithChanges(window, true, fastForward, [&window, trace, capture, shot = shot] {
            if (shot.isEmpty()) return;
            if (trace) window.stepWakeupThen(capture);
            else capture();
        });
    } else if (!shot.isEmpty()) {
        const bool trace = parser.isSet(traceOpt);
        runWithChanges(window, false, runFor, [&window, trace, capture] {
            if (trace) window.stepWakeupThen(capture);
            else capture();
        });
    }
    return QApplication::exec();
}

}  // namespace

int main(int argc, char** argv) {
    sched::installInterruptCleanup("schedlab");  // Ctrl+C in the terminal: no temporaries left, one line, exit 2
    g_sinceMain.start();
    // Without a display QApplication's constructor aborts before our flags are even looked at. Fall back to
    // offscreen so that --screenshot, --help and flag errors behave the same headless; a plain interactive run
    // is refused below with a one-line message instead.
    const bool forcedOffscreen = noDisplay(argc, argv);
    if (forcedOffscreen) qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);  // consumes Qt's own options (-platform, -style, ...)
    stage("qt");
    QApplication::setApplicationName(QStringLiteral("schedlab"));
    QApplication::setOrganizationName(QStringLiteral("schedlab"));
    QApplication::setDesktopFileName(QStringLiteral("schedlab"));  // the installed schedlab.desktop
    {
        QIcon icon;
        for (int size : {16, 32, 48, 64, 128, 256}) icon.addFile(QStringLiteral(":/icons/schedlab-%1.png").arg(size), QSize(size, size));
        QApplication::setWindowIcon(icon);
    }
    GuiMain gui(forcedOffscreen);
    if (const int rc = gui.prepare(); rc >= 0) return rc;
    return gui.exec();
}
