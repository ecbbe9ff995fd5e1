#include "cmd_export.h"

#include <cstddef>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/atomic_file.h"
#include "regionstore/io.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct ExportArgs : StoreArgs {
  std::string name;
  std::string output_path;
  bool no_fsync = false;
  bool in_place = false;
  bool json = false;
};

Status RunExport(const ExportArgs& args) {
  if (args.output_path == "-") {
    return Status::Error(StatusCode::kInvalidArgument, "export", args.path,
                         "--output - : export replaces a file atomically, which standard output "
                         "is not; to write the commit to standard output, use `regionctl load "
                         "PATH NAME` (or its --output -)");
  }
  // Read-only: no lock, so this works while a writer holds the store.
  Result<Store> store = Store::Open(args.path, OpenMode::kReadOnly, {.symlinks = args.symlinks});
  if (!store.ok()) return store.status();
  Result<RegionEntry> region = FindRegionEntry(store->info(), args.name, args.path, "export");
  if (!region.ok()) return region.status();
  // Renaming over the store would replace it (and a live writer would go on
  // committing into an unlinked file): refuse.
  Result<FileStat> output = Io::Default()->StatPath(args.output_path);
  Result<FileStat> self = Io::Default()->StatPath(args.path);
  if (output.ok() && self.ok() && output->device == self->device && output->inode == self->inode) {
    return Status::Error(StatusCode::kInvalidArgument, "export", args.output_path,
                         "--output is the store itself; export to another file");
  }
  // A rename would swap a FIFO, a device or a socket for a regular file
  // (its reader would wait forever; /dev/full would stop being a device).
  if (output.ok() && !output->is_regular && !output->is_directory && !args.in_place) {
    return Status::Error(StatusCode::kInvalidArgument, "export", args.output_path,
                         "exists and is not a regular file (a FIFO, a device or a socket): an "
                         "atomic replace would put a regular file in its place; use --in-place "
                         "to write into it as it is");
  }
  // Load first: a region with no (valid) commit leaves FILE as it was.
  std::vector<std::byte> payload;
  Result<CheckpointMeta> loaded = LoadRegionWarningIfTorn(*store, args.name, payload);
  if (!loaded.ok()) return loaded.status();
  // What survives a power loss: with --in-place, only a regular FILE, once
  // it and its directory (it may be new) are fsynced.
  bool durable = !args.no_fsync;
  if (args.in_place) {
    if (Status s = WriteOutput(args.output_path, payload, args.path,
                               /*sync_regular_file=*/!args.no_fsync);
        !s.ok()) {
      return s.WithOperation("export --in-place", args.output_path);
    }
    Result<FileStat> written = Io::Default()->StatPath(args.output_path);
    durable = durable && written.ok() && written->is_regular;
    if (durable) {
      std::string directory = std::filesystem::path(args.output_path).parent_path().string();
      if (directory.empty()) directory = ".";
      if (Status s = Io::Default()->SyncDirectory(directory); !s.ok()) {
        return s.WithOperation("export --in-place: fsync directory (FILE is written)",
                               args.output_path);
      }
    }
  } else if (Status s =
                 ReplaceFileAtomically(args.output_path, payload, {.durable = !args.no_fsync});
             !s.ok()) {
    return s;
  }
  SetStoreChanged();
  if (args.json) {
    const nlohmann::ordered_json document = {
        {"schema_version", kJsonSchemaVersion},
        {"path", args.path},
        {"region", region->name},
        {"generation", loaded->generation},
        {"length", payload.size()},
        {"output", args.output_path},
        {"durable", durable},
        {"atomic", !args.in_place},
        // Non-null when Load passed over a torn newer commit (also warned on stderr).
        {"skipped_torn_generation", loaded->skipped_torn_generation != 0
                                        ? nlohmann::ordered_json(loaded->skipped_torn_generation)
                                        : nlohmann::ordered_json(nullptr)},
    };
    // Paths need not be UTF-8: replace bad bytes rather than let dump() throw.
    PrintJsonDocument(document);
  } else {
    std::cout << "exported generation " << loaded->generation << " (" << HumanBytes(payload.size())
              << ") of " << QuoteName(region->name) << " to " << QuoteName(args.output_path)
              << (args.in_place ? " in place (not atomic)" : "")
              << (durable         ? ", fsynced with its directory"
                  : args.in_place ? ""
                                  : ", not fsynced")
              << '\n';
  }
  return Status::Ok();
}

}  // namespace

void SetupExport(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* command = AddCommand(
      app, "export", "Write the newest valid commit of checkpoint region NAME to FILE, atomically",
      "Example:\n"
      "  regionctl export state.rs state --output /backup/state.bin\n"
      "FILE is replaced the safe way: a temp file in FILE's directory, write, fsync,\n"
      "rename over FILE, fsync of the directory. Readers of FILE see the old content or\n"
      "the new, never a part; on failure FILE is untouched and the temp removed (except a\n"
      "failed directory fsync, which leaves the new FILE in place and says so). The new\n"
      "FILE has mode 0600. --no-fsync skips both fsyncs (after a power loss FILE may be\n"
      "old, new or empty). Takes no lock. Exit 1 if the region has no commit yet or\n"
      "FILE's directory is missing, 3 if the region's slots hold data but none is valid,\n"
      "6 if its newest commit is torn (intact header, payload does not match) and no older\n"
      "commit is intact (FILE untouched in all three). With an older intact commit, that\n"
      "one is exported (exit 0) and a warning on stderr names the torn generation.\n"
      "A FILE that exists and is not a regular file (a FIFO, a device; also through a\n"
      "symbolic link) is refused (exit 2): the rename would replace it with a regular\n"
      "file. --in-place writes into FILE as it is instead, not atomically: a regular\n"
      "FILE is truncated, written and fsynced (unless --no-fsync); a reader may see it\n"
      "part-written, and a crash can leave it so.");
  AddStoreRegionArguments(command, *args, args->name);
  command->add_option("--output", args->output_path, "The file to create or replace")
      ->required()
      ->type_name("FILE");
  command->add_flag("--no-fsync", args->no_fsync,
                    "Skip the fsync of FILE and of its directory (faster, not durable)");
  command->add_flag("--in-place", args->in_place,
                    "Write into FILE as it is (a FIFO, a device, or a file kept by inode), "
                    "not atomically; needed when FILE is not a regular file");
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunExport(*args); });
}

}  // namespace regionstore::regionctl
