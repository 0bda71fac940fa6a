// Bad input: a ScenarioError names the JSON path and what was expected (CONVENTIONS.md #4, #6).
// The CLI maps it to exit code 2. Plans that are well-formed but cannot run are not errors:
// they are results with feasible=false (see result.hpp).
#pragma once

#include <stdexcept>
#include <string>

namespace trainsim {

class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string path, std::string message)
      : std::runtime_error(path.empty() ? message : path + ": " + message),
        path_(std::move(path)),
        message_(std::move(message)) {}
  const std::string& path() const { return path_; }
  // What was wrong, without the path (to say it again of another field).
  const std::string& message() const { return message_; }

 private:
  std::string path_;
  std::string message_;
};

}  // namespace trainsim
