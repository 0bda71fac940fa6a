#include "kernels/cli_args.hpp"

#include <cstdlib>
#include <sstream>

namespace trainsim::kernels {

ArgParser::ArgParser(std::string usage, std::string description)
    : usage_(std::move(usage)), description_(std::move(description)) {}

void ArgParser::add_flag(const std::string& name, const std::string& help, bool* out) {
  options_.push_back({name, help, "", false, [out](const std::string&) { *out = true; return true; }});
}

void ArgParser::add_int(const std::string& name, const std::string& help, int* out) {
  options_.push_back({name, help, std::to_string(*out), true, [out](const std::string& v) {
                        char* end = nullptr;
                        long x = std::strtol(v.c_str(), &end, 10);
                        if (v.empty() || *end) return false;
                        *out = int(x);
                        return true;
                      }});
}

void ArgParser::add_double(const std::string& name, const std::string& help, double* out) {
  std::ostringstream os;
  os << *out;
  options_.push_back({name, help, os.str(), true, [out](const std::string& v) {
                        char* end = nullptr;
                        double x = std::strtod(v.c_str(), &end);
                        if (v.empty() || *end) return false;
                        *out = x;
                        return true;
                      }});
}

void ArgParser::add_string(const std::string& name, const std::string& help, std::string* out) {
  options_.push_back({name, help, *out, true, [out](const std::string& v) { *out = v; return true; }});
}

int ArgParser::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") { print_help(stdout); return 1; }
    std::string value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    const Option* opt = nullptr;
    for (const auto& o : options_) if ("--" + o.name == a) opt = &o;
    if (!opt) {
      std::fprintf(stderr, "%s: unknown argument \"%s\" (see --help)\n", usage_.c_str(), argv[i]);
      return 2;
    }
    if (opt->takes_value && !has_value) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: argument %s needs a value\n", usage_.c_str(), a.c_str());
        return 2;
      }
      value = argv[++i];
    }
    if (!opt->takes_value && has_value) {
      std::fprintf(stderr, "%s: argument %s takes no value\n", usage_.c_str(), a.c_str());
      return 2;
    }
    if (!opt->set(value)) {
      std::fprintf(stderr, "%s: argument %s: malformed value \"%s\"\n", usage_.c_str(), a.c_str(), value.c_str());
      return 2;
    }
  }
  return 0;
}

void ArgParser::print_help(std::FILE* f) const {
  std::fprintf(f, "usage: %s\n\n%s\n\noptions:\n", usage_.c_str(), description_.c_str());
  for (const auto& o : options_) {
    std::string lhs = "--" + o.name + (o.takes_value ? " VALUE" : "");
    std::fprintf(f, "  %-26s %s", lhs.c_str(), o.help.c_str());
    if (o.takes_value && !o.default_text.empty()) std::fprintf(f, " (default: %s)", o.default_text.c_str());
    std::fprintf(f, "\n");
  }
  std::fprintf(f, "  %-26s %s\n", "--help", "show this help");
}

}  // namespace trainsim::kernels
