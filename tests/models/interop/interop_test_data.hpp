// Where tests/data lives, from this file's own path (no compile definition needed).
#pragma once

#include <filesystem>
#include <string>

namespace trainsim::test {
inline std::string data_path(const std::string& relative) {
  return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "data" / relative).string();
}
}  // namespace trainsim::test
