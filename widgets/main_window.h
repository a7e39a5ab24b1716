// main_window.h: the schedlab main window. For now a placeholder shell (menus, status bar,
// topology preset list) that the simulation views will replace once the engine exists.
#pragma once

#include <QMainWindow>

class QLabel;
class QPlainTextEdit;
class QTreeWidget;

namespace schedlab {

/// Top-level window of the `schedlab` GUI.
///
/// Central area: a placeholder label until the simulation views arrive. Right dock:
/// the machine topology presets known to the core (`sched::Topology::presetNames()`).
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

private slots:
    void showAbout();
    /// Shows the selected preset's sched domains (CPU 0) and its description in the status bar.
    void onPresetSelectionChanged();

private:
    void createMenus();
    void createPresetDock();

    QLabel* m_placeholder = nullptr;
    QPlainTextEdit* m_domains = nullptr;  ///< the selected preset's sched domains (CPU 0)
    QTreeWidget* m_presetList = nullptr;
};

}  // namespace schedlab
