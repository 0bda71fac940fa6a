// The message of the ScenarioError a call throws ("(no error)" when it throws none): the tests of
// bad input compare what the user would read.
#pragma once

#include <string>

#include "models/core/scenario_error.hpp"

namespace trainsim::test {

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace trainsim::test
