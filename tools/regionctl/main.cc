// regionctl: the command-line tool for regionstore files.
//
// Every subcommand ends the same way: exit 0 on success, or exactly one line
// "regionctl: ..." on stderr and an exit code from ExitCode (common.h).

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>

#include "cmd_create.h"
#include "cmd_inspect.h"
#include "cmd_read.h"
#include "cmd_write.h"
#include "common.h"
#include "regionstore/status.h"

#ifndef REGIONCTL_VERSION
#define REGIONCTL_VERSION "0.1.0"
#endif

namespace regionstore::regionctl {
namespace {

// Writes "regionctl: <text><detail>\n" as one line with no allocation, so it
// also works after std::bad_alloc. Line breaks inside the text become spaces.
void PrintFailureLine(std::string_view text, std::string_view detail = {}) {
  std::fputs("regionctl: ", stderr);
  for (const std::string_view part : {text, detail}) {
    for (const char letter : part) {
      std::fputc(letter == '\n' || letter == '\r' ? ' ' : letter, stderr);
    }
  }
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

int ToInt(ExitCode code) { return static_cast<int>(code); }

// Text written to std::cout sits in a buffer until exit: flush it now so a
// full disk or a closed pipe is an error, not a silently truncated output.
int FinishStandardOutput() {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout) {
    const int flush_errno = errno != 0 ? errno : EIO;
    PrintFailureLine(
        Status::FromErrno(flush_errno, "write output", std::string(kStdoutName)).ToString());
    return ToInt(ExitCode::kFailure);
  }
  return ToInt(ExitCode::kSuccess);
}

// "regionctl write --help" if a subcommand was named, else "regionctl --help".
std::string HelpHint(const CLI::App& app) {
  std::string hint = "see 'regionctl";
  for (const CLI::App* command : app.get_subcommands()) hint += " " + command->get_name();
  return hint + " --help'";
}

int Run(int argc, char** argv) {
  // A reader that closes the pipe early makes write() fail with EPIPE, which
  // is reported like any other output error instead of killing the process.
  std::signal(SIGPIPE, SIG_IGN);

  // The subcommand callbacks leave their result here; it outlives app.parse().
  Status outcome;
  CLI::App app("Create, inspect, write and read regionstore files.", "regionctl");
  app.footer(
      "Example:\n"
      "  regionctl create state.rs --size 16MiB\n"
      "  head -c 1MiB /dev/urandom | regionctl write state.rs --offset 2MiB\n"
      "  regionctl inspect state.rs --json\n"
      "Exit codes: 0 success, 1 failure, 2 usage error, 3 not a valid store or damaged,\n"
      "4 busy (another writer holds the store).");
  app.set_version_flag("--version", std::string("regionctl ") + REGIONCTL_VERSION);
  app.require_subcommand(1);
  SetupCreate(app, outcome);
  SetupInspect(app, outcome);
  SetupWrite(app, outcome);
  SetupRead(app, outcome);

  if (argc <= 1) {
    std::cout << app.help();
    std::cout.flush();
    PrintFailureLine("usage error: a command is required: create, inspect, write or read");
    return ToInt(ExitCode::kUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version arrive as "successful" parse errors.
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(error);
      return FinishStandardOutput();
    }
    // CLI11's own codes are 100 and up; every parse error is a usage error here.
    std::string message = error.what();
    // CLI11 calls an unknown command a missing one; name it instead.
    if (app.get_subcommands().empty() && argv[1][0] != '-') {
      message =
          "unknown command '" + std::string(argv[1]) + "': use create, inspect, write or read";
    }
    PrintFailureLine("usage error: " + message + " (" + HelpHint(app) + ")");
    return ToInt(ExitCode::kUsage);
  }
  if (!outcome.ok()) {
    PrintFailureLine(outcome.ToString());
    return ToInt(ExitCodeFor(outcome.code()));
  }
  return FinishStandardOutput();
}

}  // namespace
}  // namespace regionstore::regionctl

int main(int argc, char** argv) {
  using regionstore::regionctl::ExitCode;
  using regionstore::regionctl::PrintFailureLine;
  // Nothing escapes main: the library reports errors as values, and anything
  // thrown anyway (allocation failure, a bug) still ends with one line.
  try {
    return regionstore::regionctl::Run(argc, argv);
  } catch (const std::bad_alloc&) {
    PrintFailureLine("out of memory");
  } catch (const std::exception& error) {
    PrintFailureLine("unexpected error: ", error.what());
  } catch (...) {
    PrintFailureLine("unexpected error of unknown type");
  }
  return static_cast<int>(ExitCode::kFailure);
}
