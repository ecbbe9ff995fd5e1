#include "cmd_load.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct LoadArgs : StoreArgs {
  std::string name;
  std::string output_path;                     // empty: standard output
  std::vector<std::string> gets;               // NAME=FILE, one consistent set
  std::optional<std::string> wait_newer_than;  // --wait-newer-than G, as typed
  std::optional<std::string> timeout_seconds;  // --timeout SECONDS, as typed (none: for ever)
};

Status Usage(const LoadArgs& args, std::string message) {
  return Status::Error(StatusCode::kInvalidArgument, "load", args.path, std::move(message));
}

// The longest --timeout: a little over 31 years, far past any wait a caller
// means, and well inside what a nanosecond count holds.
constexpr double kMaxTimeoutSeconds = 1e9;

// A generation as typed: decimal digits only (no sign, no 0x, no spaces),
// at most the largest generation a commit can have (FORMAT.md). CLI11's own
// conversion wraps "-1" and clamps what overflows, so it is parsed here.
Result<uint64_t> ParseGeneration(const LoadArgs& args, const std::string& text) {
  constexpr uint64_t kMax = (uint64_t{1} << 63) - 1;
  uint64_t value = 0;
  bool ok = !text.empty() && text.size() <= 19;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || value > kMax) {
    return Usage(args, "--wait-newer-than " + QuoteName(text) +
                           ": expected a generation, a whole number from 0 to " +
                           std::to_string(kMax));
  }
  return value;
}

// Seconds as typed: a finite number above 0, at most kMaxTimeoutSeconds.
Result<std::chrono::nanoseconds> ParseTimeout(const LoadArgs& args, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text.c_str(), &end);
  const bool parsed = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
  if (!parsed || !std::isfinite(seconds) || seconds <= 0 || seconds > kMaxTimeoutSeconds) {
    return Usage(args, "--timeout " + QuoteName(text) +
                           ": expected a number of seconds above 0 and at most 1e9");
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
}

// load PATH --get NAME=FILE ...: every region found and every output
// checked, then one LoadSet, then each output written.
Status RunLoadSet(const LoadArgs& args) {
  if (!args.name.empty() || !args.output_path.empty()) {
    return Usage(args, "--get loads a set: give no NAME or --output beside it");
  }
  if (args.wait_newer_than) {
    return Usage(args, "--wait-newer-than waits for one region: give NAME, not --get");
  }
  if (args.timeout_seconds) {
    return Usage(args, "--timeout goes with --wait-newer-than, which waits for one region");
  }
  std::vector<std::string> names, files;
  for (const std::string& text : args.gets) {
    // The name ends at the first '=', as for commit --set.
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
      return Usage(args, "--get " + QuoteName(text) + ": expected NAME=FILE");
    }
    names.push_back(text.substr(0, equals));
    files.push_back(text.substr(equals + 1));
  }
  size_t to_stdout = 0;
  for (const std::string& file : files) to_stdout += file == "-" ? 1 : 0;
  if (to_stdout > 1) return Usage(args, "--get: standard output ('-') can be written only once");
  Result<Store> store = Store::Open(args.path, OpenMode::kReadOnly, {.symlinks = args.symlinks});
  if (!store.ok()) return store.status();
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t earlier = 0; earlier < i; ++earlier) {
      if (names[earlier] == names[i]) {
        return Usage(args, "region " + QuoteName(names[i]) + " is named twice");
      }
    }
    Result<RegionEntry> region = FindRegionEntry(store->info(), names[i], args.path, "load");
    if (!region.ok()) return region.status();
  }
  // Every output opened and checked before anything loads or is written:
  // a bad one (the store, a missing directory, one named twice) fails the
  // command with no file written, and files this run made are removed.
  std::vector<OutputFile> outputs;
  const auto discard_all = [&outputs] {
    for (OutputFile& output : outputs) output.Discard();
  };
  for (size_t i = 0; i < files.size(); ++i) {
    Result<OutputFile> output = OutputFile::Open(files[i] == "-" ? "" : files[i], args.path);
    if (!output.ok()) {
      discard_all();
      return output.status();
    }
    // One regular file named twice would be truncated by the second Write
    // and hold only the last region. A sink (/dev/null) or a FIFO named
    // twice takes each region in turn, as scripts checking that a set loads
    // expect.
    const auto identity = output->regular_identity();
    for (size_t earlier = 0; earlier < outputs.size(); ++earlier) {
      if (identity && outputs[earlier].regular_identity() == identity) {
        output->Discard();
        discard_all();
        return Usage(args, "--get: " + QuoteName(files[earlier]) + " and " + QuoteName(files[i]) +
                               " are the same file: give each region its own");
      }
    }
    outputs.push_back(std::move(*output));
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  std::vector<std::vector<std::byte>> payloads;
  Result<std::vector<CheckpointMeta>> loaded = store->LoadSet(views, payloads);
  if (!loaded.ok()) {
    discard_all();
    return loaded.status();
  }
  for (size_t i = 0; i < names.size(); ++i) WarnAboutLoaded(names[i], (*loaded)[i]);
  for (size_t i = 0; i < names.size(); ++i) {
    if (Status s = outputs[i].Write(payloads[i]); !s.ok()) return s;
  }
  return Status::Ok();
}

Status RunLoad(const LoadArgs& args) {
  if (!args.gets.empty()) return RunLoadSet(args);
  if (args.name.empty())
    return Usage(args, "name a region (load PATH NAME), or give --get NAME=FILE");
  // Read-only: no lock, so this works while a writer holds the store.
  Result<Store> store = Store::Open(args.path, OpenMode::kReadOnly, {.symlinks = args.symlinks});
  if (!store.ok()) return store.status();
  // A name the store lacks is a usage error (exit 2); Load would call it
  // kNotFound, which is also what "no commit yet" is (exit 1).
  Result<RegionEntry> region = FindRegionEntry(store->info(), args.name, args.path, "load");
  if (!region.ok()) return region.status();
  // Load before opening --output: a failed load leaves no file.
  std::vector<std::byte> payload;
  if (args.wait_newer_than) {
    Result<uint64_t> generation = ParseGeneration(args, *args.wait_newer_than);
    if (!generation.ok()) return generation.status();
    // No --timeout: wait for ever (a signal still ends the process).
    std::chrono::nanoseconds timeout = std::chrono::nanoseconds::max();
    if (args.timeout_seconds) {
      Result<std::chrono::nanoseconds> parsed = ParseTimeout(args, *args.timeout_seconds);
      if (!parsed.ok()) return parsed.status();
      timeout = *parsed;
    }
    Result<CheckpointMeta> loaded = store->WaitForNewer(args.name, *generation, timeout, payload);
    if (!loaded.ok()) return loaded.status();
    WarnAboutLoaded(args.name, *loaded);
    return WriteOutput(args.output_path, payload, args.path);
  }
  if (args.timeout_seconds) return Usage(args, "--timeout goes with --wait-newer-than");
  Result<CheckpointMeta> loaded = LoadRegionWarningIfTorn(*store, args.name, payload);
  if (!loaded.ok()) return loaded.status();
  return WriteOutput(args.output_path, payload, args.path);
}

}  // namespace

void SetupLoad(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<LoadArgs>();
  CLI::App* command = AddCommand(
      app, "load",
      "Copy the newest valid commit of checkpoint region NAME to standard output (or --output)",
      "Example:\n"
      "  regionctl load state.rs state --output snapshot.bin\n"
      "The output is the payload, nothing added. Takes no lock: works while a writer\n"
      "holds the store. Exit 1 if the region has no commit yet, 3 if its slots hold\n"
      "data but none is valid, 4 if a writer kept replacing the slot being read, 6 if\n"
      "its newest commit is torn (intact header, payload does not match) and no older\n"
      "commit is intact. With an older intact commit, that one is written (exit 0) and a\n"
      "warning on stderr names the torn generation.\n"
      "--output FILE is truncated, then written (not atomic: a failure part-way leaves\n"
      "it part-written); use export to replace a file atomically. An --output, or a\n"
      "standard output, that is the store itself is refused (exit 2).\n"
      "Several regions as one consistent set (all as of one moment, never one region\n"
      "from before a batch or commit and another from after it):\n"
      "  regionctl load state.rs --get model=model.bin --get step=step.bin\n"
      "Every FILE is opened and checked first (not the store; a regular file named\n"
      "once; a device such as /dev/null or a FIFO may be named again and takes each\n"
      "region in turn), and none is written unless the whole set loaded; exit codes\n"
      "as above.\n"
      "Waiting for the next commit (no polling: the writer wakes the waiter):\n"
      "  regionctl load state.rs state --wait-newer-than 41 --timeout 30\n"
      "returns the first commit above generation 41 once there is one (at once if\n"
      "there is one already); exit 5 if none came within SECONDS (no --timeout: wait\n"
      "for ever).");
  AddStoreArguments(command, *args);
  command->add_option("NAME", args->name, "Name of the checkpoint region (not with --get)")
      ->type_name("");
  command
      ->add_option("--get", args->gets,
                   "Load region NAME into FILE, as one consistent set with the other --get "
                   "regions ('-': standard output)")
      ->type_name("NAME=FILE");
  DashMeansStandardStream(
      command
          ->add_option("--output", args->output_path,
                       "Write the payload to FILE (created or truncated, mode 0644; '-': "
                       "standard output)")
          ->type_name("FILE"));
  command
      ->add_option("--wait-newer-than", args->wait_newer_than,
                   "Wait until region NAME holds a commit above generation G, then load it")
      ->type_name("G");
  command
      ->add_option("--timeout", args->timeout_seconds,
                   "With --wait-newer-than: give up after SECONDS (exit 5)")
      ->type_name("SECONDS");
  command->callback([args, &outcome] { outcome = RunLoad(*args); });
}

}  // namespace regionstore::regionctl
