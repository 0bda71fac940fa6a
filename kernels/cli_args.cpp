#include "kernels/cli_args.hpp"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace trainsim::kernels {
namespace {
// At most 40 printable characters of a value, for a message.
std::string printable(const std::string& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && out.size() < 40; ++i)
    out += v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?';
  return v.size() > 40 ? out + "..." : out;
}

// A parser that also refuses values outside [min, max], leaving *out as it was.
template <typename T>
std::function<bool(const std::string&)> within(std::function<bool(const std::string&)> parse, T* out, T min, T max) {
  return [parse, out, min, max](const std::string& v) {
    const T keep = *out;
    if (!parse(v)) return false;
    if (*out < min || *out > max) {
      *out = keep;
      return false;
    }
    return true;
  };
}
}  // namespace

ArgParser::ArgParser(std::string usage, std::string description)
    : usage_(std::move(usage)), description_(std::move(description)) {}

void ArgParser::add_flag(const std::string& name, const std::string& help, bool* out) {
  options_.push_back({name, help, "", false, [out](const std::string&) { *out = true; return true; }});
}

void ArgParser::add_int(const std::string& name, const std::string& help, int* out) {
  options_.push_back({name, help, std::to_string(*out), true, [out](const std::string& v) {
                        // Decimal digits only, and the value must fit an int: strtol's long
                        // would otherwise be cut to 32 bits (4294967360 -> 64).
                        char* end = nullptr;
                        errno = 0;
                        const long long x = std::strtoll(v.c_str(), &end, 10);
                        if (v.empty() || *end || errno == ERANGE || x < INT_MIN || x > INT_MAX)
                          return false;
                        *out = static_cast<int>(x);
                        return true;
                      }});
  options_.back().kind_hint = " (expected an integer between " + std::to_string(INT_MIN) + " and " +
                              std::to_string(INT_MAX) + ")";
}

void ArgParser::add_double(const std::string& name, const std::string& help, double* out) {
  std::ostringstream os;
  os << *out;
  options_.push_back({name, help, os.str(), true, [out](const std::string& v) {
                        // Finite numbers only: "nan", "inf" and 1e999 are not values of anything.
                        char* end = nullptr;
                        const double x = std::strtod(v.c_str(), &end);
                        if (v.empty() || *end || !std::isfinite(x)) return false;
                        *out = x;
                        return true;
                      }});
  options_.back().kind_hint = " (expected a finite number)";
}

void ArgParser::add_int(const std::string& name, const std::string& help, int* out, int min, int max) {
  add_int(name, help, out);
  options_.back().set = within(options_.back().set, out, min, max);
  options_.back().kind_hint = " (expected an integer between " + std::to_string(min) + " and " + std::to_string(max) + ")";
}

void ArgParser::add_double(const std::string& name, const std::string& help, double* out, double min, double max) {
  add_double(name, help, out);
  options_.back().set = within(options_.back().set, out, min, max);
  std::ostringstream os;
  os << " (expected a number between " << min << " and " << max << ")";
  options_.back().kind_hint = os.str();
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
      std::fprintf(stderr, "%s: argument %s: malformed value \"%s\"%s\n", usage_.c_str(), a.c_str(),
                   printable(value).c_str(), opt->kind_hint.c_str());
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
