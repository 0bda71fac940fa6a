#include "cli/command_registry.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include "cli/cli_args.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim::cli {

namespace {

std::string& program_storage() {
  static std::string name = "trainsim";
  return name;
}

// One CLI11 App per command, laid out the same way.
std::unique_ptr<CLI::App> make_app(const std::string& name) {
  auto app = std::make_unique<CLI::App>("", "trainsim " + name);
  app->formatter(help_formatter());
  app->set_help_flag("-h,--help", "show this help");
  app->option_defaults()->always_capture_default(false);
  // A repeated option: the last one counts (as in most Unix tools); lists (--set) keep every one.
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return app;
}

// "--model is required" (CLI11) -> "--model: missing", the form every other message has.
std::string parse_message(const CLI::ParseError& e) {
  std::string m = e.what();
  const std::string tail = " is required";
  if (m.size() > tail.size() && m.compare(m.size() - tail.size(), tail.size(), tail) == 0 &&
      m.find(' ') == m.size() - tail.size())
    return m.substr(0, m.size() - tail.size()) + ": missing";
  return m;
}

// Commands that read their own argv get "--opt value" for "--opt=value", so both spellings
// work there too.
std::vector<std::string> split_equals(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") options_done = true;
    const auto eq = a.find('=');
    if (i > 0 && !options_done && a.rfind("--", 0) == 0 && a.size() > 2 && eq != std::string::npos && eq > 2 &&
        a.find(' ') == std::string::npos) {
      out.push_back(a.substr(0, eq));
      out.push_back(a.substr(eq + 1));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

int run_raw(const Command& cmd, std::vector<std::string> args) {
  args = split_equals(args);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  return cmd.raw(static_cast<int>(args.size()), cargs.data());
}

int run_declared(const std::string& name, const Command& cmd, std::vector<std::string> args) {
  auto app = make_app(name);  // `name`: as the user called it (calibrate --from-torch-trace)
  const std::function<int()> runner = cmd.declare(*app);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  try {
    app->parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::CallForHelp&) {
    std::fputs(app->help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "trainsim %s: error: %s\n  (see trainsim help %s)\n", name.c_str(), parse_message(e).c_str(),
                 name.c_str());
    return kExitBadInput;
  }
  return runner();
}

// A failed write of the standard output (a full disk, /dev/full) must not exit 0.
int check_stdout(int rc, const std::string& name) {
  std::cout.flush();
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return rc;
  std::fprintf(stderr, "trainsim %s: error: cannot write the standard output%s%s\n", name.c_str(),
               errno ? ": " : "", errno ? std::strerror(errno) : "");
  return rc == kExitOk ? kExitBadInput : rc;
}

void print_usage(const char* title) {
  std::printf("trainsim %s - %s\n\nusage: trainsim <command> [options]\n       trainsim help <command>    "
              "(or trainsim <command> --help)\n\ncommands:\n",
              TRAINSIM_VERSION, title);
  for (const auto& [name, cmd] : command_registry()) std::printf("  %-20s %s\n", name.c_str(), cmd.summary.c_str());
  std::printf("  %-20s %s\n", "help", "help of a command: trainsim help run");
  std::printf("  %-20s %s\n", "completion", "bash completion: source <(trainsim completion bash)");
  std::printf("\n%s\n", exit_codes_help());
}

// Bash completion from the option tables: commands, then each command's options, else files.
void print_completion() {
  std::string commands = "help completion --help --version";
  std::string cases;
  for (const auto& [name, cmd] : command_registry()) {
    commands += " " + name;
    if (!cmd.declare) continue;
    auto app = make_app(name);
    cmd.declare(*app);
    std::string opts;
    for (const CLI::Option* o : app->get_options()) {
      for (const auto& l : o->get_lnames()) opts += " --" + l;
      for (const auto& s : o->get_snames()) opts += " -" + s;
    }
    cases += "    " + name + ") opts=\"" + opts.substr(opts.empty() ? 0 : 1) + "\" ;;\n";
  }
  std::printf(
      "# bash completion for trainsim: source <(trainsim completion bash)\n"
      "_trainsim() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} opts=\"\"\n"
      "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
      "    COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return\n"
      "  fi\n"
      "  case ${COMP_WORDS[1]} in\n%s"
      "    help) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n"
      "  esac\n"
      "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"));\n"
      "  else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
      "}\n"
      "complete -o filenames -F _trainsim trainsim\n",
      commands.c_str(), cases.c_str(), commands.c_str());
}

int unknown_command(const std::string& name) {
  std::fprintf(stderr, "trainsim: unknown command \"%s\"; expected one of:", name.c_str());
  for (const auto& [n, cmd] : command_registry()) std::fprintf(stderr, " %s", n.c_str());
  std::fprintf(stderr, " (trainsim help lists them)\n");
  return kExitBadInput;
}

}  // namespace

std::map<std::string, Command>& command_registry() {
  static std::map<std::string, Command> registry;
  return registry;
}

const std::string& program_name() { return program_storage(); }

namespace {
std::vector<std::string>& args_storage() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace

const std::vector<std::string>& command_args() { return args_storage(); }

int run_command(const std::vector<std::string>& args, const std::string& shown_as) {
  const std::string name = args.empty() ? std::string() : args[0];
  const std::string shown = shown_as.empty() ? name : shown_as;
  const auto it = command_registry().find(name);
  if (it == command_registry().end()) return unknown_command(name);
  args_storage() = args;
  try {
    return it->second.raw ? run_raw(it->second, args) : run_declared(shown, it->second, args);
  } catch (const ScenarioError& e) {
    std::fprintf(stderr, "trainsim %s: error: %s\n", shown.c_str(), e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim %s: internal error (a bug; please report it): %s\n", shown.c_str(), e.what());
    return kExitFailure;
  }
}

int dispatch(int argc, char** argv, const char* title) {
  if (argc > 0 && argv[0]) program_storage() = argv[0];
  const std::string first = argc >= 2 ? argv[1] : "";
  if (argc < 2 || first == "--help" || first == "-h" || (first == "help" && argc == 2)) {
    print_usage(title);
    return check_stdout(argc < 2 ? kExitBadInput : kExitOk, "help");
  }
  if (first == "--version") {
    std::printf("trainsim %s\n", TRAINSIM_VERSION);
    return check_stdout(kExitOk, "--version");
  }
  if (first == "completion") {
    if (argc > 2 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h")) {
      std::printf("usage: trainsim completion [bash]\n\nPrints a bash completion script for trainsim's commands and "
                  "options:\n  source <(trainsim completion bash)\n");
      return check_stdout(kExitOk, "completion");
    }
    if (argc > 2 && std::string(argv[2]) != "bash") {
      std::fprintf(stderr, "trainsim completion: error: only bash completion is generated, not \"%s\"\n", argv[2]);
      return kExitBadInput;
    }
    print_completion();
    return check_stdout(kExitOk, "completion");
  }
  if (first == "help") {
    const std::string name = argv[2];
    if (name == "--help" || name == "-h" || name == "help") {
      print_usage(title);
      return check_stdout(kExitOk, "help");
    }
    if (!command_registry().count(name)) return unknown_command(name);
    return check_stdout(run_command({name, "--help"}), name);
  }
  if (!command_registry().count(first)) return unknown_command(first);
  std::vector<std::string> args(argv + 1, argv + argc);
  return check_stdout(run_command(args), first);
}

}  // namespace trainsim::cli
