#include "cmd_load.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct LoadArgs : StoreArgs {
  std::string name;
  std::string output_path;  // empty: standard output
};

Status RunLoad(const LoadArgs& args) {
  // Read-only: no lock, so this works while a writer holds the store.
  Result<Store> store =
      Store::Open(args.path, OpenMode::kReadOnly, {.symlinks = args.symlinks});
  if (!store.ok()) return store.status();
  // A name the store lacks is a usage error (exit 2); Load would call it
  // kNotFound, which is also what "no commit yet" is (exit 1).
  Result<RegionEntry> region = FindRegionEntry(store->info(), args.name, args.path, "load");
  if (!region.ok()) return region.status();
  // Load before opening --output: a failed load leaves no file.
  std::vector<std::byte> payload;
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
      "standard output, that is the store itself is refused (exit 2).");
  AddStoreRegionArguments(command, *args, args->name);
  command
      ->add_option("--output", args->output_path,
                   "Write the payload to FILE (created or truncated, mode 0644)")
      ->type_name("FILE");
  command->callback([args, &outcome] { outcome = RunLoad(*args); });
}

}  // namespace regionstore::regionctl
