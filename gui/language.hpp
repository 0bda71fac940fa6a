// Switching the UI language at run time (Qt translation system): the app's own .qm files are
// compiled from gui/i18n/*.ts at build time and embedded under :/i18n/; Qt's own strings
// (standard dialogs) come from the system's qtbase_*.qm when present.
#pragma once

#include <QString>
#include <QStringList>

namespace trainsim::gui {

// "en" or "zh_CN". Installs the translators (removing the previous ones) and, for Chinese, puts a
// CJK font first in the application's font fallback list. Returns false if the .qm is missing.
bool set_language(const QString& code);
QString current_language();
QStringList available_languages();

}  // namespace trainsim::gui
