#include "cli/child_runs.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace trainsim::cli {
namespace fs = std::filesystem;

std::string self_executable(const char* argv0) {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
  return argv0;
}

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

void run_children(const std::string& self, std::vector<ChildRun>& runs, int jobs,
                  const std::vector<std::string>& extra_args,
                  const std::function<void(std::size_t)>& on_done) {
  char tmpl[] = "/tmp/trainsim-children-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary folder for child runs");
  const fs::path dir(tmpl);
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  auto reap_one = [&]() {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid <= 0) return;
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
    while (next < runs.size() && static_cast<int>(running.size()) < std::max(1, jobs)) {
      const std::size_t i = next++;
      const fs::path scenario = dir / (std::to_string(i) + ".json");
      std::ofstream(scenario) << runs[i].scenario_json;
      const std::string out = (dir / (std::to_string(i) + ".out")).string();
      const std::string err = (dir / (std::to_string(i) + ".err")).string();
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        const int fo = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int fe = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo >= 0) dup2(fo, 1);
        if (fe >= 0) dup2(fe, 2);
        std::vector<std::string> args = {self, "run", scenario.string()};
        for (const auto& a : extra_args) args.push_back(a);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(self.c_str(), argv.data());
        _exit(127);
      }
      running[pid] = i;
    }
    if (!running.empty()) reap_one();
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace trainsim::cli
