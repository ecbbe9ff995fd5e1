#include "support/regionctl_runner.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH (and links nlohmann_json) only
// when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {

ProcessResult Regionctl(const std::vector<std::string>& args,
                        std::optional<std::span<const std::byte>> stdin_bytes) {
  RunOptions options;
  options.stdin_bytes = stdin_bytes;
  return RunProcess(REGIONCTL_PATH, args, options);
}

std::span<const std::byte> TextBytes(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

pid_t StartRegionctl(const std::vector<std::string>& args, const std::function<bool()>& in_child) {
  std::vector<char*> argv = {const_cast<char*>(REGIONCTL_PATH)};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Catch2's handlers must not run in the child; the signals the test
    // runner may have ignored must reach the tool.
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
    if (in_child && !in_child()) ::_exit(125);
    ::execv(REGIONCTL_PATH, argv.data());
    ::_exit(127);
  }
  return pid;
}

std::string Describe(const std::vector<std::string>& args) {
  std::string text = "regionctl";
  for (const std::string& arg : args) text += " '" + arg + "'";
  return text;
}

void RequireSuccess(const ProcessResult& result) {
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == 0);
  for (const std::string& line : result.StderrLines()) {
    REQUIRE(line.rfind("regionctl: warning: ", 0) == 0);
  }
}

void RequireFailure(const ProcessResult& result, int expected_exit_code) {
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == expected_exit_code);
  REQUIRE(result.stdout_bytes.empty());
  REQUIRE(result.StderrLines().size() == 1);
  REQUIRE(result.stderr_bytes.back() == '\n');
  REQUIRE(result.stderr_bytes.rfind("regionctl: ", 0) == 0);
}

nlohmann::json ParseJson(const ProcessResult& result) {
  nlohmann::json document;
  INFO("stdout: " << result.stdout_bytes.substr(0, 2000));
  REQUIRE_NOTHROW(document = nlohmann::json::parse(result.stdout_bytes));
  REQUIRE(document.is_object());
  return document;
}

nlohmann::json JsonOf(const std::vector<std::string>& args) {
  const ProcessResult result = Regionctl(args);
  RequireSuccess(result);
  return ParseJson(result);
}

nlohmann::json InspectJson(const std::string& path) { return JsonOf({"inspect", path, "--json"}); }

std::set<std::string> RegionctlCommands() {
  const ProcessResult help = Regionctl({"--help"});
  RequireSuccess(help);
  std::set<std::string> commands;
  std::istringstream lines(help.stdout_bytes);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "Subcommands:") {
      inside = true;
    } else if (inside && line.empty()) {
      break;
    } else if (inside && line.rfind("  ", 0) == 0) {
      std::istringstream words(line);
      std::string command;
      words >> command;
      commands.insert(command);
    }
  }
  return commands;
}

ProcessResult ValidateJsonFiles(const std::vector<std::pair<std::string, std::string>>& documents,
                                bool strict) {
  const std::string source = REGIONSTORE_SOURCE_DIR;
  std::vector<std::string> args = {source + "/scripts/check-json-schema.py"};
  if (strict) args.push_back("--strict");
  args.push_back(source + "/docs/schemas");
  for (const auto& [verb, path] : documents) {
    args.push_back(verb);
    args.push_back(path);
  }
  // Debian's python3, which python3-jsonschema is installed for.
  return RunProcess("/usr/bin/python3", args);
}

void RequireMatchesSchema(const std::string& verb, const ProcessResult& result) {
  TempDir dir;
  const std::string path = dir.File(verb + ".json");
  std::ofstream(path, std::ios::binary) << result.stdout_bytes;
  const ProcessResult checked = ValidateJsonFiles({{verb, path}});
  INFO("regionctl " << verb << " --json: " << checked.stdout_bytes << checked.stderr_bytes);
  REQUIRE(checked.exit_code == 0);
}

}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
