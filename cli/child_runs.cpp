#include "cli/child_runs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/output_file.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim::cli {
namespace fs = std::filesystem;

std::string self_executable(const char* argv0) {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
  return argv0;
}

namespace {

constexpr const char* kFolderPrefix = "trainsim-children-";

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }

// SIGINT/SIGTERM/SIGHUP set a flag while children run; the wait loop sees it, stops the
// children, removes the folder and then dies of the same signal.
class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~SignalGuard() {
    for (std::size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

 private:
  struct sigaction old_[3];
};

// The folder and the children in it; the destructor stops what still runs and removes it.
class ChildrenFolder {
 public:
  explicit ChildrenFolder(const std::string& parent) {
    std::string base = parent;
    if (base.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp && *tmp ? tmp : "/tmp";
    }
    reap_stale_children_folders(base);
    std::string tmpl = (fs::path(base) / (std::string(kFolderPrefix) + std::to_string(getpid()) + "-XXXXXX")).string();
    if (!mkdtemp(tmpl.data()))
      throw ScenarioError("children folder", "cannot create a folder for child runs in \"" + base + "\": " + std::strerror(errno));
    dir = tmpl;
  }
  ~ChildrenFolder() { remove(); }
  ChildrenFolder(const ChildrenFolder&) = delete;
  ChildrenFolder& operator=(const ChildrenFolder&) = delete;
  // Stops the children still running and removes the folder (again: a no-op).
  void remove() {
    for (const auto& [pid, i] : running) kill(pid, SIGTERM);
    for (const auto& [pid, i] : running) waitpid(pid, nullptr, 0);
    running.clear();
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
    dir.clear();
  }
  fs::path dir;
  std::map<pid_t, std::size_t> running;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int reap_stale_children_folders(const std::string& parent_dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kFolderPrefix, 0) != 0) continue;
    const std::string rest = name.substr(std::strlen(kFolderPrefix));
    const auto dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;
    const std::string digits = rest.substr(0, dash);  // strtol's end points into it: keep it alive
    char* end = nullptr;
    const long pid = std::strtol(digits.c_str(), &end, 10);
    if (*end != '\0' || pid <= 0 || pid == getpid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still alive (or not ours)
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
    if (!rm) ++removed;
  }
  return removed;
}

void run_children(const std::string& self, std::vector<ChildRun>& runs, int jobs,
                  const std::vector<std::string>& extra_args,
                  const std::function<void(std::size_t)>& on_done, const std::string& parent_dir) {
  const SignalGuard signals;
  ChildrenFolder folder(parent_dir);
  const fs::path dir = folder.dir;
  auto& running = folder.running;
  const pid_t parent = getpid();
  std::size_t next = 0;
  auto finish = [&](pid_t pid, int status) {
    auto it = running.find(pid);
    if (it == running.end()) return;
    const std::size_t i = it->second;
    running.erase(it);
    ChildRun& r = runs[i];
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    r.output = slurp(dir / (std::to_string(i) + ".out"));
    r.error = slurp(dir / (std::to_string(i) + ".err"));
    on_done(i);
  };
  while (next < runs.size() || !running.empty()) {
    while (!g_signal && next < runs.size() && static_cast<int>(running.size()) < std::max(1, jobs)) {
      const std::size_t i = next++;
      const fs::path scenario = dir / (std::to_string(i) + ".json");
      write_output_file(scenario.string(), runs[i].scenario_json, "children folder");
      const std::string out = (dir / (std::to_string(i) + ".out")).string();
      const std::string err = (dir / (std::to_string(i) + ".err")).string();
      std::vector<std::string> args = {self, "run", scenario.string()};
      for (const auto& a : extra_args) args.push_back(a);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      const pid_t pid = fork();
      if (pid < 0) throw ScenarioError("children", std::string("cannot start a child process: ") + std::strerror(errno));
      if (pid == 0) {
        // A child does not outlive its parent (a SIGKILLed sweep leaves no simulations running).
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        const int fo = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int fe = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo >= 0) dup2(fo, 1);
        if (fe >= 0) dup2(fe, 2);
        execv(self.c_str(), argv.data());
        _exit(127);
      }
      running[pid] = i;
    }
    if (g_signal) break;
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      finish(pid, status);
    } else {
      // Nothing finished: sleep a little (a signal cuts it short).
      const struct timespec pause {0, 20'000'000};
      nanosleep(&pause, nullptr);
    }
  }
  if (g_signal) {
    const int sig = g_signal;
    folder.remove();
    signal(sig, SIG_DFL);
    raise(sig);  // ends the process as the signal would have
  }
}

}  // namespace trainsim::cli
