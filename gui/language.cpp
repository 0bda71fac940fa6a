#include "gui/language.hpp"

#include <QApplication>
#include <QEvent>
#include <QFont>
#include <QFontDatabase>
#include <QLibraryInfo>
#include <QTranslator>

namespace trainsim::gui {
namespace {

QTranslator* g_app_translator = nullptr;
QTranslator* g_qt_translator = nullptr;
QString g_language = "en";

void ensure_cjk_font() {
  // Offscreen and minimal X sessions have no fontconfig fallback order that is sure to reach a
  // CJK face; name one explicitly (fonts-noto-cjk) after the default family.
  QFont font = QApplication::font();
  QStringList families = font.families();
  if (families.isEmpty()) families << font.family();
  for (const char* cjk : {"Noto Sans CJK SC", "Noto Serif CJK SC", "WenQuanYi Micro Hei", "Droid Sans Fallback"}) {
    if (QFontDatabase::hasFamily(cjk)) {
      if (!families.contains(cjk)) families << cjk;
      break;
    }
  }
  font.setFamilies(families);
  QApplication::setFont(font);
}

}  // namespace

QStringList available_languages() { return {"en", "zh_CN"}; }

QString current_language() { return g_language; }

bool set_language(const QString& code) {
  if (g_app_translator) {
    QCoreApplication::removeTranslator(g_app_translator);
    delete g_app_translator;
    g_app_translator = nullptr;
  }
  if (g_qt_translator) {
    QCoreApplication::removeTranslator(g_qt_translator);
    delete g_qt_translator;
    g_qt_translator = nullptr;
  }
  g_language = code;
  ensure_cjk_font();
  auto* app = new QTranslator;
  const bool ok = app->load(":/i18n/trainsim_" + code + ".qm");
  if (ok) {
    QCoreApplication::installTranslator(app);
    g_app_translator = app;
  } else {
    delete app;
  }
  if (code != "en") {
    auto* qt = new QTranslator;
    if (qt->load("qtbase_" + code, QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
      QCoreApplication::installTranslator(qt);
      g_qt_translator = qt;
    } else {
      delete qt;
    }
  }
  // installTranslator posts LanguageChange; deliver it now so that the switch is immediate
  // (and observable by callers that do not return to the event loop, such as tests).
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
  // English is the source language: no .qm needed for it to work.
  return ok || code == "en";
}

}  // namespace trainsim::gui
