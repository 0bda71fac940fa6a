#include "cli/cli_args.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "models/core/scenario_error.hpp"

namespace trainsim::cli {

namespace {

std::string option_names(const CLI::Option* opt) {
  std::string out;
  for (const auto& s : opt->get_snames()) out += (out.empty() ? "-" : ", -") + s;
  for (const auto& l : opt->get_lnames()) out += (out.empty() ? "--" : ", --") + l;
  // The type name without the validators' descriptions ("N", not "N:INT in [1 - 1024]"): the
  // option's text says the range or the choices.
  const std::string type = opt->get_type_name().substr(0, opt->get_type_name().find(':'));
  if (opt->get_type_size() != 0 && !type.empty()) out += " " + type;
  if (opt->get_expected_max() > 1 && !opt->get_positional()) out += " ...";
  return out;
}

std::string option_text(const CLI::Option* opt) {
  std::string text = opt->get_description();
  if (!opt->get_default_str().empty()) text += " (default: " + opt->get_default_str() + ")";
  return text;
}

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(30); }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode) const override {
    std::ostringstream out;
    out << "usage: " << (name.empty() ? app->get_name() : name);
    const auto positionals = app->get_options([](const CLI::Option* o) { return o->get_positional(); });
    for (const CLI::Option* p : positionals) {
      std::string n = p->get_name();
      if (p->get_expected_max() > 1) n += "...";
      out << " " << (p->get_required() ? n : "[" + n + "]");
    }
    for (const CLI::Option* o : app->get_options([](const CLI::Option* o) { return !o->get_positional() && o->get_required(); })) {
      const auto& l = o->get_lnames();
      out << " " << (l.empty() ? "-" + o->get_snames().front() : "--" + l.front());
      if (o->get_type_size() != 0) out << " " << o->get_type_name().substr(0, o->get_type_name().find(':'));
    }
    out << " [options]\n";
    if (!app->get_description().empty()) out << "\n" << app->get_description() << "\n";
    if (!positionals.empty()) {
      out << "\narguments:\n";
      for (const CLI::Option* p : positionals) CLI::detail::format_help(out, p->get_name(), option_text(p), column_width_);
    }
    // Options by group, in the order the table declares them; the help flag last.
    std::vector<std::string> groups;
    const auto options = app->get_options([](const CLI::Option* o) { return !o->get_positional(); });
    for (const CLI::Option* o : options)
      if (!o->get_group().empty() && std::find(groups.begin(), groups.end(), o->get_group()) == groups.end())
        groups.push_back(o->get_group());
    for (const std::string& g : groups) {
      out << "\n" << (g == "Options" ? std::string("options") : g) << ":\n";
      for (const CLI::Option* o : options) {
        if (o->get_group() != g || o == app->get_help_ptr()) continue;
        CLI::detail::format_help(out, option_names(o), option_text(o), column_width_);
      }
    }
    if (app->get_help_ptr()) CLI::detail::format_help(out, option_names(app->get_help_ptr()), "show this help", column_width_);
    const std::string footer = app->get_footer();
    if (!footer.empty()) out << "\n" << footer << (footer.back() == '\n' ? "" : "\n");
    out << "\n" << exit_codes_help() << "\n";
    return out.str();
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<HelpFormatter>(); }

const char* exit_codes_help() {
  return "exit codes: 0 ok, 2 bad input (files and paths included), 3 plan infeasible, 4 a check "
         "failed,\n            1 an internal error (a bug)";
}

std::pair<std::string, std::string> parse_set(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ScenarioError("--set", "expected path=value (e.g. plan.tp=4), got \"" + text + "\"");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<std::pair<std::string, std::string>> parse_sets(const std::vector<std::string>& texts) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& t : texts) out.push_back(parse_set(t));
  return out;
}

CLI::Validator finite_range(double min, double max) {
  std::ostringstream desc;
  desc << "[" << min << ", " << max << "]";
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
          return "expected a finite number, got \"" + value + "\"";
        if (v < min || v > max) {
          std::ostringstream o;
          o << "expected a value between " << min << " and " << max << ", got " << value;
          return o.str();
        }
        return std::string();
      },
      desc.str());
}

CLI::Option* add_set_option(CLI::App& app, std::vector<std::string>& sets, const std::string& what) {
  return app.add_option("--set", sets, "override " + what + " before loading, e.g. --set plan.tp=4 (repeatable)")
      ->type_name("PATH=VALUE")
      ->allow_extra_args(false);
}

CLI::Option* add_presets_option(CLI::App& app, std::vector<std::string>& dirs) {
  return app.add_option("--presets", dirs, "extra folder with models/, clusters/, gpus/ presets (repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);
}

CLI::Option* add_json_flag(CLI::App& app, bool& json, const std::string& what) {
  return app.add_flag("--json", json, what);
}

CLI::Option* add_jobs_option(CLI::App& app, int& jobs, const std::string& what) {
  jobs = hardware_jobs();
  return app.add_option("-j,--jobs", jobs, what + " (default: the processor count)")
      ->type_name("N")
      ->check(CLI::Range(1, 1024));
}

void add_progress_options(CLI::App& app, ProgressMode& mode) {
  app.add_flag_callback("--progress", [&mode] { mode = ProgressMode::kOn; },
                        "progress with rate and ETA on stderr even when it is not a terminal");
  app.add_flag_callback("--quiet", [&mode] { mode = ProgressMode::kOff; },
                        "no progress on stderr (default: progress only when stderr is a terminal)");
}

int hardware_jobs() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::string option_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw ScenarioError(argv[i], "needs a value");
  return argv[++i];
}

long long parse_int_option(const std::string& option, const std::string& value, long long min,
                           long long max) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < min || v > max)
    throw ScenarioError(option, "expected an integer between " + std::to_string(min) + " and " +
                                    std::to_string(max) + ", got \"" + value + "\"");
  return v;
}

}  // namespace trainsim::cli
