#include "cmd_unshare.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "common.h"
#include "progress_bar.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct UnshareArgs : StoreArgs {
  bool json = false;
};

Status RunUnshare(const UnshareArgs& args) {
  ProgressBar bar("unshare", StderrIsTerminal(), "fsync");
  UnshareOptions options;
  options.symlinks = args.symlinks;
  options.progress = [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); };
  Result<UnshareReport> report = UnshareStore(args.path, options);
  if (!report.ok()) return report.status();
  if (report->shared_bytes != 0) SetStoreChanged();  // its blocks, not its bytes
  if (args.json) {
    PrintJsonDocument({{"schema_version", kJsonSchemaVersion},
                       {"path", args.path},
                       {"shared_bytes", report->shared_bytes},
                       {"shared_ranges", report->shared_ranges},
                       {"method", report->method},
                       {"shared_bytes_after", report->shared_bytes_after}});
    return Status::Ok();
  }
  if (report->shared_bytes == 0) {
    std::cout << "nothing to do: no block of the store is shared\n";
    return Status::Ok();
  }
  const char* ranges = report->shared_ranges == 1 ? " range" : " ranges";
  std::cout << "unshared " << report->shared_bytes << " bytes (" << HumanBytes(report->shared_bytes)
            << ") in " << report->shared_ranges << ranges << " by " << report->method
            << "; no block is shared now\n";
  return Status::Ok();
}

}  // namespace

void SetupUnshare(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<UnshareArgs>();
  CLI::App* command = AddCommand(
      app, "unshare",
      "Give a store blocks of its own where it shares them (reflink copy, snapshot)",
      "Example:\n"
      "  cp --reflink=always state.rs backup.rs && regionctl unshare state.rs\n"
      "A store whose blocks are shared with another file faults (SIGBUS) on a mapped\n"
      "write once the filesystem is full, so a writer's open refuses it on XFS and warns\n"
      "on btrfs. This command takes the writer lock, finds the shared ranges (FIEMAP) and:\n"
      "  XFS:   fallocate(FALLOC_FL_UNSHARE_RANGE), which copies the blocks;\n"
      "  btrfs: reads each shared range and writes the same bytes back (copy on write);\n"
      "then fsyncs and checks again. The bytes never change; the other file keeps its\n"
      "blocks. Needs free space for the copies. Progress on stderr when it is a terminal.\n"
      "Exit codes: 0 done (or nothing shared); 1 no space (the data is unchanged, part of\n"
      "it may stay shared), I/O error, missing file; 2 usage; 3 not a valid store;\n"
      "4 a writer has the store open.");
  AddStoreArguments(command, *args);
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunUnshare(*args); });
}

}  // namespace regionstore::regionctl
