// A small arithmetic/comparison language for sweep constraints and objectives:
//   memory.peak_bytes < 0.9 * hbm        plan.tp <= gpus_per_node
//   step_time_s * gpus                   mfu >= 0.4 && plan.pp <= 8
// Numbers, dotted names, + - * / ( ), comparisons < <= > >= == !=, && and ||. Names are looked
// up by the caller (result keys, scenario paths, shortcuts); an unknown name is an error at
// parse time when a validator is given, else at evaluation.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainsim {

class Expression {
 public:
  // Throws ScenarioError(path, ...) on a syntax error, naming the column.
  static Expression parse(const std::string& text, const std::string& path);

  using Lookup = std::function<std::optional<double>(const std::string& name)>;
  // Comparisons and logic give 1 or 0. Throws ScenarioError when a name is unknown.
  double evaluate(const Lookup& lookup) const;
  const std::string& text() const { return text_; }
  std::vector<std::string> names() const;

  struct Node;

 private:
  std::string text_;
  std::string path_;
  std::shared_ptr<const Node> root_;
};

// A constraint's value holds when it is a finite number other than 0 (a comparison's 1): an
// arithmetic that overflows or divides 0 by 0 (inf, NaN) is no evidence the plan qualifies.
inline bool constraint_met(double value) { return std::isfinite(value) && value != 0; }

}  // namespace trainsim
