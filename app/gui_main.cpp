// gui_main.cpp: entry point of the `schedlab` GUI. `--screenshot FILE.png` renders the main
// window once it is shown and laid out, saves it and exits, so tests and CI can check it headless.
#include "main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QPixmap>
#include <QTimer>

#include <cstdio>
#include <cstring>

namespace {

constexpr int kExitUsage = 2;

/// True when Qt would try xcb/wayland and fail: no display and no platform chosen by the user
/// (neither QT_QPA_PLATFORM nor Qt's own `-platform NAME` option).
bool noDisplay(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-platform") == 0 || std::strcmp(argv[i], "--platform") == 0)
            return false;
    }
    return qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
           qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

}  // namespace

int main(int argc, char** argv) {
    // Without a display QApplication's constructor aborts before our flags are even looked at. Fall back to
    // offscreen so that --screenshot, --help and flag errors behave the same headless; a plain interactive run
    // is refused below with a one-line message instead.
    const bool forcedOffscreen = noDisplay(argc, argv);
    if (forcedOffscreen)
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);  // consumes Qt's own options (-platform, -style, ...)
    QApplication::setApplicationName(QStringLiteral("schedlab"));
    QApplication::setOrganizationName(QStringLiteral("schedlab"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("schedlab: a laboratory for the Linux CFS wakeup path"));
    parser.addHelpOption();
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"), QStringLiteral("Render the main window to <file> (PNG) and exit."),
        QStringLiteral("file"));
    parser.addOption(screenshotOption);

    if (!parser.parse(QApplication::arguments())) {
        std::fprintf(stderr, "schedlab: %s (try --help)\n", qPrintable(parser.errorText()));
        return kExitUsage;
    }
    if (parser.isSet(QStringLiteral("help")))
        parser.showHelp(0);  // exits
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "schedlab: unexpected argument '%s' (try --help)\n",
                     qPrintable(parser.positionalArguments().front()));
        return kExitUsage;
    }
    const QString screenshotPath = parser.value(screenshotOption);
    if (parser.isSet(screenshotOption) && screenshotPath.isEmpty()) {
        std::fprintf(stderr, "schedlab: --screenshot needs a file name\n");
        return kExitUsage;
    }

    if (forcedOffscreen && screenshotPath.isEmpty()) {
        std::fprintf(stderr,
                     "schedlab: no display (set DISPLAY, run under xvfb-run -a, or use --screenshot FILE.png)\n");
        return 1;
    }

    schedlab::MainWindow window;
    window.show();

    if (!screenshotPath.isEmpty()) {
        // Queued so that it runs after the show and layout events have been processed.
        QTimer::singleShot(0, &window, [&window, &screenshotPath] {
            const QPixmap pixmap = window.grab();
            if (pixmap.isNull() || !pixmap.save(screenshotPath, "PNG")) {
                std::fprintf(stderr, "schedlab: cannot write screenshot to '%s'\n", qPrintable(screenshotPath));
                QApplication::exit(1);
                return;
            }
            QApplication::exit(0);
        });
    }
    return QApplication::exec();
}
