// SPDX-License-Identifier: GPL-2.0-or-later
// progress_job.h: a job on the thread pool behind a window-modal progress dialog with Cancel
// (reading a trace, writing a run's trace): the dialog polls the job's progress every 100 ms, Cancel
// sets a flag the job reads, and the result comes back on the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QProgressDialog>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <functional>
#include <memory>

namespace schedlab {

/// What a job and its dialog share.
struct JobProgress {
    std::atomic<bool> cancel{false};  ///< Cancel was pressed: the job should stop
    std::atomic<int> value{-1};       ///< the job's progress in the dialog's range; -1 none yet
};

/// Runs `job` on the thread pool behind a progress dialog on `parent` labelled `label` (shown
/// after 300 ms). `maximum` 0: the dialog is busy until the job reports a value, then counts to
/// 100. `done` runs on the GUI thread with the result and whether Cancel was pressed.
template <class R>
void runWithProgress(QWidget* parent, const QString& label, int maximum, std::function<R(JobProgress&)> job,
                     std::function<void(R, bool cancelled)> done) {
    auto* dialog = new QProgressDialog(label, QObject::tr("Cancel"), 0, maximum, parent);
    dialog->setWindowModality(Qt::WindowModal);
    dialog->setMinimumDuration(300);
    auto state = std::make_shared<JobProgress>();
    QObject::connect(dialog, &QProgressDialog::canceled, dialog, [state] { state->cancel = true; });
    auto* poll = new QTimer(dialog);
    QObject::connect(poll, &QTimer::timeout, dialog, [dialog, state] {
        const int v = state->value.load();
        if (v < 0) return;
        if (dialog->maximum() == 0) dialog->setRange(0, 100);
        dialog->setValue(v);
    });
    poll->start(100);
    auto* watcher = new QFutureWatcher<R>(parent);
    QObject::connect(watcher, &QFutureWatcherBase::finished, parent, [watcher, dialog, state, done = std::move(done)] {
        R result = watcher->result();
        watcher->deleteLater();
        dialog->deleteLater();
        done(std::move(result), state->cancel.load());
    });
    watcher->setFuture(QtConcurrent::run([job = std::move(job), state] { return job(*state); }));
}

}  // namespace schedlab
