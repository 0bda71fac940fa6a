// A small option parser for the measurement subcommands (calibrate, train): "--name value" or
// "--name=value", --help, and errors that name the argument (exit code 2 at the caller).
// Integers must fit an int (no silent truncation of 4294967360 to 64) and numbers must be
// finite (no "nan", "inf"); the ranges of what they mean are the caller's check
// (check_train_config, the calibrate command).
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace trainsim::kernels {

class ArgParser {
 public:
  ArgParser(std::string usage, std::string description);
  void add_flag(const std::string& name, const std::string& help, bool* out);
  void add_int(const std::string& name, const std::string& help, int* out);
  void add_double(const std::string& name, const std::string& help, double* out);
  // The same with a range [min, max] checked at parse time ("--max-bytes: expected a number
  // between 0 and 1.718e+10").
  void add_int(const std::string& name, const std::string& help, int* out, int min, int max);
  void add_double(const std::string& name, const std::string& help, double* out, double min, double max);
  void add_string(const std::string& name, const std::string& help, std::string* out);
  // 0: parsed; 1: --help printed (caller exits 0); 2: bad input, message printed to stderr.
  int parse(int argc, char** argv);
  void print_help(std::FILE* f) const;

 private:
  struct Option {
    std::string name, help, default_text;
    bool takes_value;
    std::function<bool(const std::string&)> set;  // false: the value is malformed
    std::string kind_hint = "";  // " (expected ...)" after a malformed value
  };
  std::string usage_, description_;
  std::vector<Option> options_;
};

}  // namespace trainsim::kernels
