// SPDX-License-Identifier: GPL-2.0-or-later
// gui_soak.cpp: see gui_soak.h.
#include "gui_soak.h"

#include "knob_panel.h"
#include "main_window.h"
#include "replay/trace_snapshot.h"
#include "sim/scenario.h"
#include "trace/trace.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <QTimer>

#include <cstdio>
#include <exception>
#include <unistd.h>

namespace schedlab {

long residentKiB() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return 0;
    long size = 0, resident = 0;
    const int n = std::fscanf(f, "%ld %ld", &size, &resident);
    std::fclose(f);
    return n == 2 ? resident * (::sysconf(_SC_PAGESIZE) / 1024) : 0;
}

namespace {

/// The soak's state, owned by the timer's lambdas.
struct Soak {
    MainWindow* window = nullptr;
    SoakOptions o;
    StartOptions so;
    QElapsedTimer clock;
    long actions = 0, traceOpens = 0, restarts = 0, failures = 0;
    qint64 nextSample = 0;
    qint64 traceStart = 0;  ///< the shown trace's first event

    void sample() {
        std::printf("soak %7.1f s rss %ld KiB actions %ld restarts %ld trace-opens %ld\n", double(clock.elapsed()) / 1000.0, residentKiB(), actions,
                    restarts, traceOpens);
        std::fflush(stdout);
    }
    void restart() {
        StartOptions s = so;
        s.autoplay = true;
        if (o.scenario) window->openScenario(*o.scenario, o.scenarioPath, s);
        else window->openDefault(s);
        ++restarts;
    }
    void openTrace() {
        if (o.tracePath.isEmpty()) return restart();
        try {
            auto t = std::make_shared<const sched::Trace>(sched::readTrace(o.tracePath.toStdString()));
            traceStart = sched::traceSpan(*t).first;
            window->showTrace(std::move(t), o.traceTopology, o.tracePath);
            ++traceOpens;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "schedlab: --soak: %s\n", e.what());
            ++failures;
        }
    }
    /// One action of the cycle (a deterministic sequence: the k-th action is always the same).
    void act() {
        const long k = actions++;
        KnobPanel* p = window->knobPanel();
        auto slide = [k](QSlider* s) {
            if (!s || !s->isEnabled()) return;
            const int span = s->maximum() - s->minimum();
            s->setValue(s->minimum() + int((k * 7919) % (span + 1)));
        };
        switch (k % 8) {
        case 0: slide(p->idleDelaySlider()); break;
        case 1: slide(p->maxRunningSlider()); break;
        case 2: restart(); break;
        case 3: slide(p->idleDelaySlider()); break;
        case 4: openTrace(); break;
        case 5:
            if (window->traceMode()) {
                if (!window->openDisagreement(int(k % 7))) window->setTraceTime(traceStart + window->traceCursor() / 2);
            }
            break;
        case 6:
            if (window->traceMode()) window->setTraceTime(traceStart + window->traceCursor() / 3);
            break;
        case 7: restart(); break;
        }
    }
};

}  // namespace

void startSoak(MainWindow& window, const SoakOptions& o, const StartOptions& so) {
    auto s = std::make_shared<Soak>();
    s->window = &window;
    s->o = o;
    s->so = so;
    s->clock.start();
    s->sample();
    auto* timer = new QTimer(&window);
    timer->setInterval(o.actionMs);
    QObject::connect(timer, &QTimer::timeout, &window, [s] {
        const qint64 now = s->clock.elapsed();
        if (now >= s->nextSample) {
            s->sample();
            s->nextSample = now + 10000;
        }
        if (double(now) >= s->o.seconds * 1000.0) {
            s->sample();
            std::printf("soak done: %ld actions, %ld restarts, %ld trace opens, %ld failures\n", s->actions, s->restarts, s->traceOpens, s->failures);
            std::fflush(stdout);
            QApplication::exit(s->failures ? 1 : 0);
            return;
        }
        s->act();
    });
    timer->start();
}

}  // namespace schedlab
