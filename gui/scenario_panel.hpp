// The left panel: the scenario being edited. It shows an Evaluation and turns each user edit into
// a (JSON path, JSON value) pair for the main window to apply to the raw scenario, so that the
// raw JSON stays the one source of truth (and saves exactly what the CLI reads).
#pragma once

#include <QHash>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "gui/evaluation.hpp"

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QAbstractButton;

namespace trainsim::gui {

class ScenarioPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ScenarioPanel(QWidget* parent = nullptr);

  void set_presets(const QStringList& models, const QStringList& clusters, const QStringList& gpus);
  // Shows the scenario's values and flags the control at the error path (red) or the controls
  // named in an infeasible reason (orange).
  void show_evaluation(const Evaluation& ev);

  // The control that edits a JSON path ("plan.tp"), or the closest enclosing one; for tests.
  QWidget* control_for_path(const QString& json_path) const;
  QString message_text() const;
  // "Hold DP": when off (the default), editing another degree or the GPU count re-derives DP
  // from the GPU count; when on, DP keeps the value the scenario gives.
  bool dp_locked() const;
  QCheckBox* dp_lock() const { return dp_lock_; }
  QList<QWidget*> flagged_controls() const { return flagged_; }

 signals:
  // value is JSON text ("4", "\"1f1b\"", "true"); an empty value removes the key.
  void field_edited(const QString& json_path, const QString& value);
  void edit_json_requested();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QSpinBox* add_spin(QWidget* parent, const QString& path, int min, int max);
  QComboBox* add_combo(const QString& path, const QStringList& items);
  QCheckBox* add_check(const QString& path, const char* text);
  QLabel* add_label(const char* text);
  QGroupBox* add_group(const char* title);
  void retranslate_ui();
  void flag(const QString& json_path, const QString& message, bool is_error);
  void clear_flags();
  void populate(const Evaluation& ev);
  void rebuild_compression(const nlohmann::json& stages);
  void emit_compression();
  void emit_recompute_modules();
  static void set_combo_text(QComboBox* combo, const QString& text);

  struct Translated {
    QObject* object;
    const char* text;
  };
  std::vector<Translated> translated_;
  QHash<QString, QWidget*> controls_;
  QList<QWidget*> flagged_;

  QLabel* scenario_name_ = nullptr;
  QLabel* message_ = nullptr;
  QLabel* cluster_summary_ = nullptr;
  QComboBox* model_combo_ = nullptr;
  QComboBox* cluster_combo_ = nullptr;
  QComboBox* gpu_combo_ = nullptr;
  QTableWidget* compression_ = nullptr;
  QPushButton* add_stage_ = nullptr;
  QPushButton* remove_stage_ = nullptr;
  QPushButton* edit_json_ = nullptr;
  QCheckBox* dp_lock_ = nullptr;
  QList<QCheckBox*> recompute_modules_;  // one per recompute_module_names(), in that order
  nlohmann::json shown_compression_ = nlohmann::json::array();
  bool populating_ = false;
};

}  // namespace trainsim::gui
