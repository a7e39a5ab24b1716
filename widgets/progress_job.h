// SPDX-License-Identifier: GPL-2.0-or-later
// progress_job.h: a job on a background thread behind a window-modal progress dialog with Cancel
// (reading a trace, writing a run's trace): the dialog polls the job's progress every 100 ms, Cancel
// sets a flag the job reads, and the result comes back on the GUI thread through a Mailbox (the
// hand-offs are std::mutex ones, which ThreadSanitizer sees; mailbox.h).
#pragma once

#include "mailbox.h"

#include <QProgressDialog>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>

namespace schedlab {

/// What a job and its dialog share.
struct JobProgress {
    std::atomic<bool> cancel{false};  ///< Cancel was pressed: the job should stop
    std::atomic<int> value{-1};       ///< the job's progress in the dialog's range; -1 none yet
};

/// The threads of the progress jobs (joined at exit, as Qt's global thread pool waits for its jobs).
inline JobThreads& progressJobThreads() {
    static JobThreads threads;
    return threads;
}

/// Runs `job` on a background thread behind a progress dialog on `parent` labelled `label` (shown
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
    auto* mail = new Mailbox(parent);  // the result comes back here; gone with `parent`, and then so is the delivery
    progressJobThreads().start([job = std::move(job), state, box = mail->handle(), mail, dialog, done = std::move(done)]() mutable {
        auto result = std::make_shared<R>(job(*state));
        box.post([result, mail, dialog, state, done = std::move(done)] {
            mail->deleteLater();
            dialog->deleteLater();
            done(std::move(*result), state->cancel.load());
        });
    });
}

}  // namespace schedlab
