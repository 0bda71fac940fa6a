// Colours shared by the views so that one category looks the same everywhere (Tableau 10).
#pragma once

#include <QColor>

namespace trainsim::gui::palette {

inline const QColor kCompute{0x4e, 0x79, 0xa7};
inline const QColor kTpComm{0xf2, 0x8e, 0x2b};
inline const QColor kPpComm{0xb0, 0x7a, 0xa1};
inline const QColor kDpComm{0xe1, 0x57, 0x59};
inline const QColor kEpComm{0x76, 0xb7, 0xb2};
inline const QColor kCpComm{0xed, 0xc9, 0x48};
inline const QColor kBubble{0xba, 0xb0, 0xac};
inline const QColor kOptimizer{0x9c, 0x75, 0x5f};
inline const QColor kOffload{0xff, 0x9d, 0xa7};

inline const QColor kParams{0x4e, 0x79, 0xa7};
inline const QColor kGrads{0xf2, 0x8e, 0x2b};
inline const QColor kOptimizerState{0x59, 0xa1, 0x4f};
inline const QColor kActivations{0xe1, 0x57, 0x59};
inline const QColor kOther{0xba, 0xb0, 0xac};

inline const QColor kForward{0x4e, 0x79, 0xa7};
inline const QColor kBackward{0x59, 0xa1, 0x4f};
inline const QColor kBackwardWeight{0xed, 0xc9, 0x48};

}  // namespace trainsim::gui::palette

#include <QChart>
#include <QChartView>

namespace trainsim::gui {

// QChartView::setChart releases the previous chart without deleting it.
inline void replace_chart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

// A time axis unit that keeps tick labels short: seconds for long steps, else milliseconds.
struct TimeUnit {
  double per_second;  // axis units per second
  const char* name;   // "s" or "ms"
};
inline TimeUnit time_unit_for(double max_s) { return max_s >= 2.0 ? TimeUnit{1.0, "s"} : TimeUnit{1e3, "ms"}; }

}  // namespace trainsim::gui
