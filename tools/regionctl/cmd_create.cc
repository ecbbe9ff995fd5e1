#include "cmd_create.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"

namespace regionstore::regionctl {
namespace {

struct CreateArgs {
  std::string path;
  uint64_t data_size = 0;
  bool force = false;
};

Status RunCreate(const CreateArgs& args) {
  CreateOptions options;
  options.replace_existing = args.force;
  std::vector<std::string> warnings;
  options.warnings = &warnings;
  Status created = Store::Create(args.path, args.data_size, options);
  if (!created.ok()) return created;
  for (const std::string& warning : warnings) std::cerr << "regionctl: warning: " << warning << '\n';
  // Report what is on disk rather than what was asked for: the file also
  // holds the metadata.
  Result<StoreInfo> info = ReadStoreInfo(args.path);
  if (!info.ok()) return info.status();
  std::cout << "created " << args.path << ": data area " << HumanBytes(info->data_size) << ", file "
            << HumanBytes(info->file_size) << '\n';
  return Status::Ok();
}

}  // namespace

void SetupCreate(CLI::App& app, Status& outcome) {
  // Shared with the callback, which runs after parse() has filled it.
  auto args = std::make_shared<CreateArgs>();
  CLI::App* command = app.add_subcommand(
      "create", "Create a store whose data area holds SIZE bytes (the file adds its metadata)");
  command->footer(
      "Example:\n"
      "  regionctl create state.rs --size 16MiB\n"
      "SIZE is a byte count with an optional binary unit: 4096, 64KiB, 16MiB, 1GiB\n"
      "(K, M, G, T also mean powers of 1024; KB, MB, ... are refused as ambiguous).");
  command->add_option("PATH", args->path, "Path of the store file to create")
      ->required()
      ->type_name("");
  command->add_option("--size", args->data_size, "Size of the data area")
      ->required()
      ->type_name("SIZE")
      ->transform(SizeTransform());
  command->add_flag("--force", args->force,
                    "Replace an existing file at PATH (refused while a writer holds it)");
  command->callback([args, &outcome] { outcome = RunCreate(*args); });
}

}  // namespace regionstore::regionctl
