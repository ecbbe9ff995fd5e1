#include "cmd_copy.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common.h"
#include "progress_bar.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

// Copies over this size get a progress bar, when stderr is a terminal.
constexpr uint64_t kCopyProgressBarAbove = uint64_t{1} << 30;

struct CopyArgs : StoreArgs {
  std::string destination;
  uint32_t protocol = 0;
  uint64_t data_size = 0;
  std::vector<std::string> checkpoints;  // NAME:CAPACITY[:LAYOUT], as typed
  uint32_t slots = 0;                    // --slots: 0 keeps each region's
  bool force = false;
  bool wait_idle = false;
  double wait_seconds = 10;
  bool json = false;
};

// --wait-idle: the store as its writer, so that no other writer changes it
// (the data area included) during the copy. A writer holding it is waited
// for, up to `seconds`, then kBusy.
Result<Store> OpenIdle(const CopyArgs& args) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(args.wait_seconds));
  for (;;) {
    Result<Store> store = Store::Open(args.path, OpenMode::kReadWrite, {.symlinks = args.symlinks});
    if (store.ok() || store.status().code() != StatusCode::kBusy) return store;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::ostringstream waited;
      waited << args.wait_seconds;
      return Status::Error(StatusCode::kBusy, "copy --wait-idle", args.path,
                           "a writer held the store for all of " + waited.str() +
                               " s (--wait-seconds); nothing was copied");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status RunCopy(const CopyArgs& args) {
  // Read-only: no lock, so a live writer goes on committing meanwhile; with
  // --wait-idle, as the writer.
  Result<Store> store =
      args.wait_idle ? OpenIdle(args)
                     : Store::Open(args.path, OpenMode::kReadOnly, {.symlinks = args.symlinks});
  if (!store.ok()) return store.status();
  CopyOptions options;
  options.replace_existing = args.force;
  options.protocol = args.protocol;
  options.data_size = args.data_size;
  for (const std::string& text : args.checkpoints) {
    Result<CheckpointSpec> spec = ParseCheckpointSpec(args.destination, text);
    if (!spec.ok()) return spec.status().WithOperation("copy", args.destination);
    options.checkpoints.push_back(std::move(*spec));
  }
  options.slots = args.slots;
  std::vector<std::string> warnings;
  options.warnings = &warnings;
  std::optional<CopyReport> report;
  {
    ProgressBar bar("copy", StderrIsTerminal(), "fsync");
    options.progress = [&bar](uint64_t done, uint64_t total) {
      if (total > kCopyProgressBarAbove) bar.Update(done, total);
    };
    Result<CopyReport> copied = store->CopyTo(args.destination, options);
    if (!copied.ok()) return copied.status();
    report = *copied;
    SetStoreChanged();
  }
  // The library reports the source's regions; DST also has every region
  // --checkpoint added (a name the source lacks), and those are what a
  // reader of DST finds.
  uint64_t destination_regions = store->info().regions.size();
  std::vector<std::string_view> added;
  for (const CheckpointSpec& spec : options.checkpoints) {
    const auto same_name = [&spec](const auto& region) { return region.name == spec.name; };
    if (std::none_of(store->info().regions.begin(), store->info().regions.end(), same_name) &&
        std::find(added.begin(), added.end(), spec.name) == added.end()) {
      added.push_back(spec.name);
    }
  }
  destination_regions += added.size();
  for (const std::string& warning : warnings) {
    std::cerr << "regionctl: warning: " << warning << '\n';
  }
  if (args.json) {
    PrintJsonDocument({{"schema_version", kJsonSchemaVersion},
                       {"source", args.path},
                       {"destination", args.destination},
                       {"protocol", report->protocol},
                       {"regions", report->regions},
                       {"destination_regions", destination_regions},
                       {"regions_committed", report->regions_committed},
                       {"payload_bytes", report->payload_bytes},
                       {"data_bytes", report->data_bytes},
                       {"file_size", report->file_size}});
    return Status::Ok();
  }
  std::cout << "copied " << QuoteName(args.path) << " to " << QuoteName(args.destination)
            << " (protocol " << report->protocol << "): " << report->regions_committed << " of "
            << destination_regions << " regions with a commit, "
            << HumanBytes(report->payload_bytes) << " of payloads, data area "
            << HumanBytes(report->data_bytes) << ", file " << HumanBytes(report->file_size) << '\n';
  return Status::Ok();
}

}  // namespace

void SetupCopy(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<CopyArgs>();
  CLI::App* command = AddCommand(
      app, "copy", "Copy a store, live or not, into a new store (also to change its protocol)",
      "Example:\n"
      "  regionctl copy state.rs backup.rs\n"
      "  regionctl copy old.rs new.rs --protocol 2\n"
      "  regionctl copy small.rs big.rs --size 1GiB --checkpoint state:64MiB --checkpoint "
      "log:1MiB\n"
      "DST gets SRC's regions (names, capacities, slot layouts and counts), each region's newest\n"
      "commit with its generation and time, and the data area. The regions are one\n"
      "consistent set, as `load --get` gives them, even while a writer commits batches;\n"
      "the data area is copied as its bytes stand meanwhile (raw writes carry no\n"
      "atomicity). Generations carry on: DST's next commit of a region is numbered\n"
      "above the one copied. DST is a new store (its own uuid), built in a temp file\n"
      "beside it, synced and renamed into place: after a failure or a kill DST is as it\n"
      "was, or absent, never partial. SRC is only read and never locked.\n"
      "--wait-idle copies as the store's writer: the data area is then a snapshot too;\n"
      "a live writer is waited for (--wait-seconds), then exit 4. Its open is a\n"
      "writer's open: it finishes what a crashed writer left, as any writer does.\n"
      "--size and --checkpoint make the copy an offline grow: --checkpoint NAME:CAPACITY\n"
      "gives an existing region a larger capacity (never smaller) or adds a new, empty\n"
      "region; every region keeps its newest commit and its generations. --slots N gives\n"
      "every region of DST N slots (3 to 64; a fourth is a spare, see `create --help`).\n"
      "A progress bar goes to stderr when it is a terminal and DST is larger than 1 GiB.");
  AddStoreArguments(command, *args);
  command->add_option("DST", args->destination, "Path of the new store")->required()->type_name("");
  command
      ->add_option("--protocol", args->protocol,
                   "Commit protocol of DST: 1 or 2 (default: SRC's); see `create --protocol`")
      ->type_name("N")
      ->check(CLI::IsMember({1u, 2u}));
  command
      ->add_option("--size", args->data_size,
                   "Data area of DST, at least SRC's (default: SRC's); the rest is zero")
      ->type_name("SIZE")
      ->transform(SizeTransform());
  command
      ->add_option("--checkpoint", args->checkpoints,
                   "Give region NAME of SRC a larger CAPACITY in DST, or add region NAME "
                   "(repeatable; LAYOUT: auto, compact, aligned)")
      ->type_name("NAME:CAPACITY[:LAYOUT]");
  command
      ->add_option("--slots", args->slots,
                   "Slots of every region of DST, 3 to 64 (default: SRC's count)")
      ->type_name("N")
      ->check(CLI::Range(kDefaultSlots, kMaxSlots));
  command->add_flag("--wait-idle", args->wait_idle,
                    "Copy as the store's writer, so that no writer changes it (its data area "
                    "too) meanwhile; a writer holding it is waited for up to --wait-seconds");
  command
      ->add_option("--wait-seconds", args->wait_seconds,
                   "With --wait-idle: how long to wait for a writer to close (default 10)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 86400.0));
  command->add_flag("--force", args->force,
                    "Replace an existing file at DST (refused while a writer holds it, if it is "
                    "a symbolic link, or if it is SRC itself)");
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunCopy(*args); });
}

}  // namespace regionstore::regionctl
