// main_window.cpp: placeholder main window; see main_window.h.
#include "main_window.h"

#include "topology.h"

#include <QApplication>
#include <QDockWidget>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTreeWidget>

#include <exception>
#include <string>

namespace schedlab {

namespace {

constexpr int kNameColumn = 0;
constexpr int kDescriptionColumn = 1;

QString toQString(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(QStringLiteral("schedlab"));
    setObjectName(QStringLiteral("MainWindow"));
    resize(1100, 680);

    m_placeholder = new QLabel(this);
    m_placeholder->setObjectName(QStringLiteral("placeholder"));
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setMargin(24);
    m_placeholder->setText(tr("<h2>schedlab</h2>"
                              "<p>A laboratory for the Linux CFS wakeup path.</p>"
                              "<p>The simulation views (topology heatmap, runqueue plots, latency histograms, "
                              "decision inspector) arrive with the engine.</p>"
                              "<p>The machine topology presets are listed on the right.</p>"));
    setCentralWidget(m_placeholder);

    createMenus();
    createPresetDock();
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus() {
    QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
    QAction* quitAction = fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    quitAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quitAction->setMenuRole(QAction::QuitRole);

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    QAction* aboutAction = helpMenu->addAction(tr("&About schedlab"), this, &MainWindow::showAbout);
    aboutAction->setMenuRole(QAction::AboutRole);
}

void MainWindow::createPresetDock() {
    auto* dock = new QDockWidget(tr("Topology presets"), this);
    dock->setObjectName(QStringLiteral("topologyPresetsDock"));  // saveState() keys docks by object name
    dock->setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);

    m_presetList = new QTreeWidget(dock);
    m_presetList->setObjectName(QStringLiteral("topologyPresetList"));
    m_presetList->setColumnCount(2);
    m_presetList->setHeaderLabels({tr("Preset"), tr("Machine")});
    m_presetList->setRootIsDecorated(false);
    m_presetList->setUniformRowHeights(true);
    m_presetList->setAlternatingRowColors(true);
    m_presetList->setSelectionMode(QAbstractItemView::SingleSelection);
    m_presetList->setWordWrap(false);

    // The core reports problems by exception; a broken preset table must not keep the window from opening.
    int count = 0;
    try {
        for (const std::string& name : sched::Topology::presetNames()) {
            QString description;
            try {
                description = toQString(sched::Topology::presetDescription(name));
            } catch (const std::exception& e) {
                description = tr("(no description: %1)").arg(QString::fromLocal8Bit(e.what()));
            }
            auto* item = new QTreeWidgetItem(m_presetList);
            item->setText(kNameColumn, toQString(name));
            item->setText(kDescriptionColumn, description);
            item->setToolTip(kNameColumn, description);
            item->setToolTip(kDescriptionColumn, description);
            ++count;
        }
    } catch (const std::exception& e) {
        statusBar()->showMessage(tr("Could not list topology presets: %1").arg(QString::fromLocal8Bit(e.what())));
    }
    m_presetList->resizeColumnToContents(kNameColumn);
    m_presetList->setColumnWidth(kNameColumn, m_presetList->columnWidth(kNameColumn) + 16);  // breathing room
    m_presetList->header()->setStretchLastSection(true);
    connect(m_presetList, &QTreeWidget::itemSelectionChanged, this, &MainWindow::onPresetSelectionChanged);

    dock->setWidget(m_presetList);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    resizeDocks({dock}, {480}, Qt::Horizontal);

    if (statusBar()->currentMessage().isEmpty())
        statusBar()->showMessage(tr("No simulation loaded · %1 topology presets available").arg(count));
}

void MainWindow::onPresetSelectionChanged() {
    const QList<QTreeWidgetItem*> selected = m_presetList->selectedItems();
    if (selected.isEmpty())
        return;
    const QTreeWidgetItem* item = selected.front();
    statusBar()->showMessage(item->text(kNameColumn) + QStringLiteral(": ") + item->text(kDescriptionColumn));
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About schedlab"),
                       tr("<h3>schedlab %1</h3>"
                          "<p>A desktop laboratory for the Linux scheduler wakeup path: a deterministic "
                          "simulation of <code>select_task_rq_fair()</code> on real machine topologies, "
                          "and views of what the scheduler did and why.</p>"
                          "<p>Built with Qt %2.</p>")
                           .arg(QStringLiteral(SCHEDLAB_VERSION), QString::fromLatin1(qVersion())));
}

}  // namespace schedlab
