// main_window.cpp: placeholder main window; see main_window.h.
#include "main_window.h"

#include "sched_domain.h"
#include "topology.h"
#include "topology_report.h"

#include <QApplication>
#include <QDockWidget>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QVBoxLayout>
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
                              "<p>Pick a machine on the right to see its sched domains as Linux 6.1 builds them.</p>"));
    m_domains = new QPlainTextEdit(this);
    m_domains->setObjectName(QStringLiteral("domainView"));
    m_domains->setReadOnly(true);
    m_domains->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_domains->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->addWidget(m_placeholder, 0);
    layout->addWidget(m_domains, 1);
    setCentralWidget(central);

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
    resizeDocks({dock}, {360}, Qt::Horizontal);

    if (statusBar()->currentMessage().isEmpty())
        statusBar()->showMessage(tr("No simulation loaded · %1 topology presets available").arg(count));
    // Start on the machine of the seed thread (Mathieu's 2-socket EPYC).
    const auto found = m_presetList->findItems(QStringLiteral("epyc-9654-2s"), Qt::MatchExactly, kNameColumn);
    if (!found.isEmpty()) found.front()->setSelected(true);
}

void MainWindow::onPresetSelectionChanged() {
    const QList<QTreeWidgetItem*> selected = m_presetList->selectedItems();
    if (selected.isEmpty())
        return;
    const QTreeWidgetItem* item = selected.front();
    statusBar()->showMessage(item->text(kNameColumn) + QStringLiteral(": ") + item->text(kDescriptionColumn));
    try {
        const sched::Topology topo = sched::Topology::preset(item->text(kNameColumn).toStdString());
        const sched::SchedDomains sd(topo);
        m_domains->setPlainText(QString::fromStdString(sched::topologyReport(topo, sd, 0)));
    } catch (const std::exception& e) {
        m_domains->setPlainText(tr("Cannot build this machine: %1").arg(QString::fromLocal8Bit(e.what())));
    }
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
