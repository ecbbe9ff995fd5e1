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

#include "cmd_bench.h"
#include "cmd_commit.h"
#include "cmd_copy.h"
#include "cmd_create.h"
#include "cmd_dump.h"
#include "cmd_export.h"
#include "cmd_import.h"
#include "cmd_inspect.h"
#include "cmd_load.h"
#include "cmd_read.h"
#include "cmd_stat.h"
#include "cmd_unshare.h"
#include "cmd_verify.h"
#include "cmd_write.h"
#include "common.h"
#include "regionstore/status.h"
#include "regionstore/version.h"
#include "signals.h"

// CMake passes the project version, which it reads from version.h; a build
// without it takes the same version from the header.
#ifndef REGIONCTL_VERSION
#define REGIONCTL_VERSION REGIONSTORE_VERSION_STRING
#endif

namespace regionstore::regionctl {
namespace {

// Every --help ends with these: the same codes for every command.
constexpr const char* kExitCodes =
    "Exit codes: 0 success, 1 failure, 2 usage error, 3 not a valid store or damaged,\n"
    "4 busy (another writer holds the store), 5 timed out (load --wait-newer-than),\n"
    "6 torn commit (a region's newest commit header is intact but its payload does\n"
    "not match: a power loss interrupted that commit, or it was damaged after it\n"
    "returned; for verify also a slot header that fails its checks beside a valid\n"
    "commit), 7 done but not reported (the store or the export's FILE was changed as\n"
    "asked, but the report on standard output could not be written: do not retry).";

// The commands, for messages about a missing or unknown one.
constexpr const char* kCommandList =
    "create, inspect, stat, verify, dump, commit, load, export, import, copy, write, read, unshare "
    "or bench";

// Writes "regionctl: <text><detail>\n" as one line with no allocation, so it
// also works after std::bad_alloc. Line breaks inside the text become spaces;
// other control bytes (from a path or a damaged file) become \xNN, so the
// line cannot move the cursor or retitle the terminal.
void PrintFailureLine(std::string_view text, std::string_view detail = {}) {
  std::fputs("regionctl: ", stderr);
  for (const std::string_view part : {text, detail}) {
    for (const char letter : part) {
      const auto byte = static_cast<unsigned char>(letter);
      if (letter == '\n' || letter == '\r') {
        std::fputc(' ', stderr);
      } else if (byte < 0x20 || byte == 0x7f) {
        std::fprintf(stderr, "\\x%02x", byte);
      } else {
        std::fputc(letter, stderr);
      }
    }
  }
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

int ToInt(ExitCode code) { return static_cast<int>(code); }

// A check on a command's PATH: standard output must not be that file.
CLI::Validator StandardOutputIsNotTheStore() {
  return {[](std::string& path) -> std::string {
            const Status refused = RefuseOutputOntoStore(path, "", "open");
            return refused.ok() ? std::string() : refused.message();
          },
          "", "stdout-is-not-store"};
}

// Text written to std::cout sits in a buffer until exit: flush it now so a
// full disk or a closed pipe is an error, not a silently truncated output.
int FinishStandardOutput() {
  if (StdoutClosedByReader()) return ToInt(ExitCode::kSuccess);
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout) {
    const int flush_errno = errno != 0 ? errno : EIO;
    const Status failed =
        StandardOutputWasClosed()
            ? Status::Error(StatusCode::kIOError, "write output", std::string(kStdoutName),
                            "standard output is closed: the report was not written")
            : Status::FromErrno(flush_errno, "write output", std::string(kStdoutName));
    if (StoreChanged()) {
      // The change stands: say so, so that nobody retries it.
      PrintFailureLine(failed.ToString(),
                       " (the command itself succeeded and its change stands; only its report "
                       "was lost: do not retry it)");
      return ToInt(ExitCode::kChangedReportLost);
    }
    PrintFailureLine(failed.ToString());
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
  RemoveTempFilesOnTerminatingSignals();  // SIGINT/SIGTERM/SIGHUP: no named temp left

  // The subcommand callbacks leave their result here; it outlives app.parse().
  Status outcome;
  CLI::App app(
      "Create, inspect and verify regionstore files; write and read the data area; commit\n"
      "and load checkpoint regions; benchmark the durability modes on this disk.",
      "regionctl");
  app.footer(
      "Example:\n"
      "  regionctl create state.rs --size 16MiB --checkpoint state:64KiB\n"
      "  head -c 1MiB /dev/urandom | regionctl write state.rs --offset 2MiB\n"
      "  regionctl commit state.rs state --input snapshot.bin\n"
      "  regionctl load state.rs state --output restored.bin\n"
      "  regionctl export state.rs state --output /backup/state.bin\n"
      "  regionctl copy state.rs /backup/state.rs\n"
      "  regionctl verify state.rs\n"
      "  regionctl inspect state.rs --json\n"
      "  regionctl stat state.rs\n"
      "  regionctl dump state.rs --region state | head\n"
      "  regionctl bench --dir /var/lib/myapp\n" +
      std::string(kExitCodes));
  app.set_version_flag("-V,--version", std::string("regionctl ") + REGIONCTL_VERSION);
  app.require_subcommand(1);
  SetupCreate(app, outcome);
  SetupInspect(app, outcome);
  SetupStat(app, outcome);
  SetupVerify(app, outcome);
  SetupDump(app, outcome);
  SetupCommit(app, outcome);
  SetupLoad(app, outcome);
  SetupExport(app, outcome);
  SetupImport(app, outcome);
  SetupCopy(app, outcome);
  SetupWrite(app, outcome);
  SetupRead(app, outcome);
  SetupUnshare(app, outcome);
  SetupBench(app, outcome);
  for (CLI::App* command : app.get_subcommands({})) {
    command->footer(command->get_footer() + "\n" + kExitCodes);
    // `regionctl inspect s.rs >> s.rs` would append the report to the store
    // (and a writer's next open would find the wrong size): refused before
    // the command runs. create makes a new file at PATH, so it cannot be
    // standard output's file unless it is replaced, which is harmless.
    if (CLI::Option* store_path = command->get_option_no_throw("PATH");
        store_path != nullptr && command->get_name() != "create") {
      store_path->check(StandardOutputIsNotTheStore());
    }
  }

  if (argc <= 1) {
    std::cout << app.help();
    std::cout.flush();
    PrintFailureLine("usage error: a command is required: ", kCommandList);
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
      message = "unknown command '";
      message += argv[1];
      message += "': use ";
      message += kCommandList;
    }
    PrintFailureLine("usage error: " + message + " (" + HelpHint(app) + ")");
    return ToInt(ExitCode::kUsage);
  }
  if (!outcome.ok()) {
    // What a failed command did print (verify's report of a damaged store)
    // goes out before the line that says why it failed.
    std::cout.flush();
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
  // Before anything is opened: a closed standard descriptor would be handed
  // to the store, which would then be read as input or written as output.
  if (!regionstore::regionctl::OpenClosedStandardDescriptors()) {
    PrintFailureLine(
        "a standard descriptor (0, 1 or 2) is closed and /dev/null cannot be opened "
        "in its place");
    return static_cast<int>(ExitCode::kFailure);
  }
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
