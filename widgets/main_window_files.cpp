// SPDX-License-Identifier: GPL-2.0-or-later
// main_window_files.cpp: the window's files: simulation states (File > Open / Save state, the
// steady start's cache), exports (a view, the rq pair, the run as a trace, the rq-length CSV) and
// the scenario saved with its variants. The rest of MainWindow is main_window.cpp.
#include "main_window.h"
#include "caption.h"
#include "counters_plot.h"
#include "outcome_plot.h"
#include "delta_table.h"
#include "decision_inspector.h"
#include "flow_view.h"
#include "knob_panel.h"
#include "progress_job.h"
#include "recent_menu.h"
#include "latency_plot.h"
#include "rq_plot.h"
#include "run_bar.h"
#include "view_export.h"
#include "text_util.h"
#include "topology_heatmap.h"
#include "trace_session.h"
#include "trace_mode.h"
#include "util/input_error.h"
#include "util/install_paths.h"
#include "kernel/knobs.h"
#include "sim/checkpoint.h"
#include "sim/report.h"
#include "run_export.h"
#include "topology/topology_json.h"
#include "replay/trace_compare.h"
#include "replay/trace_snapshot.h"
#include <qcustomplot.h>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QStandardPaths>
#include <QGridLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QProgressDialog>
#include <QHBoxLayout>
#include <QProgressBar>
#include <QImage>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QPointer>
#include <QSaveFile>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <atomic>
#include <cmath>
#include <cstdlib>

namespace schedlab {

QString MainWindow::openSimState(const QString& path, std::function<void()> done) {
    std::shared_ptr<const sched::Checkpoint> a, b;
    try {
        auto ca = std::make_shared<sched::Checkpoint>(sched::loadCheckpoint(path.toStdString()));
        const std::string companion = sched::Simulation::companionOf(*ca);
        if (!companion.empty()) b = std::make_shared<const sched::Checkpoint>(sched::decodeCheckpoint(companion, path.toStdString() + " (side B)"));
        a = ca;
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    const sched::Scenario& s = a->scenario;
    StartOptions o;
    o.a = a->knobs;
    if (b) o.b = b->knobs;
    o.ab = b || s.variants.size() > 1;
    o.seed = a->seed;
    o.autoplay = false;
    setRunning(false);
    present(s, o);
    m_scenarioPath.clear();
    m_heatB->setVisible(o.ab);
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("dockRqB"))) d->setVisible(o.ab);
    const sched::Knobs bKnobs = m_knobs->knobs(1);
    const bool ab = o.ab;
    m_proxyRun[0] = a->knobs.proxy_exec;
    m_proxyRun[1] = bKnobs.proxy_exec;
    m_frame.reset();
    m_whenRestored = std::move(done);
    m_restoreSeq = std::numeric_limits<quint64>::max();
    m_sim->post([a, b, bKnobs, ab](SimWorker& w) { w.restoreState(a, b, bKnobs, ab); });
    return {};
}

void MainWindow::saveSimState(const QString& path, std::function<void(const QString&)> done) {
    if (traceMode() || !m_scenario) {
        if (done) done(tr("no simulated run to save"));
        return;
    }
    m_whenSaved = std::move(done);
    m_sim->post([p = path.toStdString()](SimWorker& w) { w.saveState(p); });
}

QString MainWindow::steadyCachePath() const {
    // Keyed by what makes the state: the scenario document, the seed, both sides' knobs, the state
    // format, and this build (a schedlab built again may move results with the format unchanged).
    const QFileInfo exe(QCoreApplication::applicationFilePath());
    std::string key = m_scenario ? m_scenario->doc.dump() : std::string();
    key += fmt::format("|seed {}|A {}|B {}|format {:016x}|build {} {} {}", m_seed, m_knobs->knobs(0).describe(), m_knobs->knobs(1).describe(),
                       sched::stateFormatHash(), exe.size(), exe.lastModified().toMSecsSinceEpoch(), SCHEDLAB_VERSION);
    for (const std::string& n : sched::Knobs::names()) key += "|" + m_knobs->knobs(0).get(n) + "," + m_knobs->knobs(1).get(n);
    const QByteArray h = QCryptographicHash::hash(QByteArray::fromStdString(key), QCryptographicHash::Sha256).toHex().left(20);
    return QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/steady-%1.state").arg(QString::fromLatin1(h));
}

bool MainWindow::openSteady(const std::optional<sched::Scenario>& s, std::function<void()> done) {
    StartOptions o;
    o.autoplay = false;
    if (s) start(*s, o);
    else openDefault(o);
    const QString cache = steadyCachePath();
    const sched::Scenario scenario = *m_scenario;
    // From t = 0 to the steady state; cached once there (`done` after the cache is written: a
    // window closed at once still leaves it for the next start).
    auto fastForwardThere = [this, done, cache] {
        fastForwardToSteady(std::int64_t(60) * 1000000000, [this, done, cache] {
            const auto f = m_frame;
            if (!(f && f->a && f->a->steady.reached)) {
                if (done) done();
                return;
            }
            QDir().mkpath(QFileInfo(cache).absolutePath());
            saveSimState(cache, [this, done](const QString& err) {
                if (!err.isEmpty()) statusBar()->showMessage(tr("The steady state could not be cached: %1").arg(err), 8000);
                if (done) done();
            });
        });
    };
    if (QFileInfo::exists(cache)) {
        // A cache that does not restore (damaged, or its state refused) is made again.
        auto failed = std::make_shared<QMetaObject::Connection>();
        *failed = connect(this, &MainWindow::stateFailed, this, [this, failed, cache, scenario, fastForwardThere](const QString& err) {
            disconnect(*failed);
            statusBar()->showMessage(tr("The cached steady state did not restore (%1): to the steady state from t = 0").arg(err), 10000);
            QFile::remove(cache);
            StartOptions o2;
            o2.autoplay = false;
            start(scenario, o2);
            fastForwardThere();
        });
        const QString err = openSimState(cache, [this, done, cache, failed] {
            disconnect(*failed);
            statusBar()->showMessage(tr("The steady state, from the cache of an earlier start (%1). Ctrl+R: from t = 0").arg(cache), 10000);
            if (done) done();
        });
        if (err.isEmpty()) return true;
        disconnect(*failed);
        statusBar()->showMessage(tr("The cached steady state cannot be read (%1): to the steady state from t = 0").arg(err), 10000);
        QFile::remove(cache);
        start(scenario, o);
    }
    fastForwardThere();
    return false;
}

void MainWindow::exportDialog(QWidget* w) {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export"), QStringLiteral("schedlab.png"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
    if (p.isEmpty()) return;
    const QString err = exportView(w, p);
    if (!err.isEmpty()) QMessageBox::warning(this, tr("Export failed"), err);
    else statusBar()->showMessage(tr("Exported %1").arg(p), 4000);
}

QString MainWindow::exportRunTrace(const QString& path, const std::function<bool(qint64)>& keepGoing) const {
    if (traceMode() || !m_scenario || !m_frame) return tr("no simulated run is shown");
    return exportRunFtrace(*m_scenario, m_knobs->knobs(0), m_seed, m_frame->a->now, path, keepGoing);
}

void MainWindow::exportTraceDialog() {
    if (traceMode() || !m_scenario || !m_frame) return;
    const QString p =
        QFileDialog::getSaveFileName(this, tr("Export trace"), QStringLiteral("schedlab-trace.txt"), tr("ftrace text (*.txt);;All files (*)"));
    if (p.isEmpty()) return;
    setRunning(false);
    // The run is replayed from t = 0 on the thread pool (runs are deterministic); Cancel drops the file.
    const qint64 until = m_frame->a->now;
    runWithProgress<QString>(
        this, tr("Writing %1…").arg(QFileInfo(p).fileName()), int(std::max<qint64>(1, until / 1'000'000)),
        [s = *m_scenario, k = m_knobs->knobs(0), seed = m_seed, until, p](JobProgress& jp) {
            return exportRunFtrace(s, k, seed, until, p, [&jp](std::int64_t now) {
                jp.value = int(now / 1'000'000);
                return !jp.cancel.load();
            });
        },
        [this, p](const QString& err, bool) {
            if (err == QLatin1String("cancelled")) return;
            if (!err.isEmpty()) QMessageBox::warning(this, tr("Export trace"), err);
            else statusBar()->showMessage(tr("Exported side A's run as ftrace text to %1").arg(p), 6000);
        });
}

void MainWindow::exportRqCsvDialog() {
    const QString p =
        QFileDialog::getSaveFileName(this, tr("Export runqueue lengths"), QStringLiteral("rqlen50-bpftrace.csv"), tr("CSV (*.csv);;All files (*)"));
    if (p.isEmpty()) return;
    exportRqCsv(p, [this, p](const QString& err) {
        if (!err.isEmpty()) QMessageBox::warning(this, tr("Export rq-length CSV"), err);
        else statusBar()->showMessage(tr("Exported the runqueue lengths to %1").arg(p), 6000);
    });
}

void MainWindow::exportRqCsv(const QString& path, std::function<void(const QString&)> done) {
    if (traceMode()) {  // the recorded trace's runqueue lengths every 20 ms, as schedlab-cli trace --rq-csv
        done(saveFileAtomic(path, QByteArray::fromStdString(sched::traceRqLenCsv(*m_trace->sideA().trace, m_trace->sideA().topo))));
        return;
    }
    if (!m_scenario) {
        done(tr("no run is shown"));
        return;
    }
    // The worker owns the simulation: it makes the CSV of side A's run so far; the answer comes back queued.
    QPointer<MainWindow> self(this);
    m_sim->post([self, path, done](SimWorker& w) {
        const QByteArray csv = QByteArray::fromStdString(w.rqlenCsv(0));
        QMetaObject::invokeMethod(
            qApp,
            [self, path, done, csv] {
                if (!self) return;
                done(csv.isEmpty() ? tr("no run is shown") : saveFileAtomic(path, csv));
            },
            Qt::QueuedConnection);
    });
}

void MainWindow::saveScenario() {
    if (!m_scenario) return;
    const QString p = QFileDialog::getSaveFileName(this, tr("Save scenario"), QStringLiteral("scenario.json"), tr("Scenarios (*.json)"));
    if (p.isEmpty()) return;
    const sched::Knobs b = m_knobs->knobs(1);
    const QString err = saveFileAtomic(p, scenarioWithVariants(*m_scenario, m_knobs->knobs(0), m_knobs->abEnabled() ? &b : nullptr, m_seed));
    if (!err.isEmpty()) {
        QMessageBox::warning(this, tr("Save failed"), err);
        return;
    }
    m_scenarioPath = p;
    m_recentMenu->add(p);
}

QString MainWindow::exportView(QWidget* w, const QString& path) {
    if (!w) w = this;
    // A view in a hidden tab has no size of its own and QCustomPlot only refreshes its buffers when
    // shown: give it a readable size and refresh the plots before painting.
    if (w != this) {
        for (QWidget* up = w->parentWidget(); up; up = up->parentWidget())
            if (auto* dock = qobject_cast<QDockWidget*>(up)) {
                dock->show();
                dock->raise();  // its tab comes to the front
                break;
            }
        QApplication::processEvents();  // lay it out at its real size
    }
    if (w == m_rqB && m_frame && m_frame->b) m_rqB->setSnapshot(m_frame->b);  // not fed while its tab is hidden
    if (w == m_outcome && m_frame) m_outcome->setSnapshots(m_frame->a, m_frame->b);
    for (QCustomPlot* plot : w->findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);
    QFont capFont = font();
    capFont.setPointSizeF(std::max(7.0, capFont.pointSizeF() * 0.9));
    return exportWithCaption(w, caption(), capFont, path);
}

QString MainWindow::exportRqPair(const QString& path) {
    if (!m_knobs->abEnabled() || !m_frame || !m_frame->b) return tr("--view rqAB: needs an A/B run");
    setRqSideBySide(true);
    QApplication::processEvents();  // lay them out side by side at their real sizes
    m_rq->setSnapshot(m_frame->a);
    m_rqB->setSnapshot(m_frame->b);
    for (RqPlot* r : {m_rq, m_rqB})
        for (QCustomPlot* plot : r->findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);
    // One picture: A's plots, then B's, each with its variant above it.
    const QPixmap pa = m_rq->grab(), pb = m_rqB->grab();
    QFont titleFont = font();
    titleFont.setBold(true);
    const int titleH = QFontMetrics(titleFont).height() + 6;
    QPixmap pair(pa.width() + pb.width() + 12, std::max(pa.height(), pb.height()) + titleH);
    pair.fill(Qt::white);
    {
        QPainter p(&pair);
        p.setFont(titleFont);
        const auto& fa = *m_frame->a;
        const auto& fb = *m_frame->b;
        p.drawText(QRect(0, 0, pa.width(), titleH), Qt::AlignCenter, QStringLiteral("A: %1").arg(q(fa.knobs)));
        p.drawText(QRect(pa.width() + 12, 0, pb.width(), titleH), Qt::AlignCenter, QStringLiteral("B: %1").arg(q(fb.knobs)));
        p.drawPixmap(0, titleH, pa);
        p.drawPixmap(pa.width() + 12, titleH, pb);
    }
    QLabel holder;
    holder.setPixmap(pair);
    holder.resize(pair.size());
    QFont capFont = font();
    capFont.setPointSizeF(std::max(7.0, capFont.pointSizeF() * 0.9));
    return exportWithCaption(&holder, caption(), capFont, path);
}

}  // namespace schedlab
