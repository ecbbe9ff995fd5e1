#include "cmd_import.h"

#include <memory>

#include "cmd_commit.h"
#include "common.h"

namespace regionstore::regionctl {

void SetupImport(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<CommitArgs>();
  CLI::App* command = app.add_subcommand(
      "import", "Commit the bytes of FILE to checkpoint region NAME (the inverse of export)");
  command->footer(
      "Example:\n"
      "  regionctl import state.rs state --input state.bin --durability pwrite-fdatasync\n"
      "A commit: all or nothing, durable as --durability says (default sync). A file\n"
      "longer than the region's capacity is refused (exit 2) and nothing changes.");
  command->add_option("PATH", args->path, "Path of the store file")->required()->type_name("");
  command->add_option("NAME", args->name, "Name of the checkpoint region")
      ->required()
      ->type_name("");
  command->add_option("--input", args->input_path, "The file to commit")
      ->required()
      ->type_name("FILE");
  command
      ->add_option("--durability", args->durability_name,
                   "What the commit survives once it returns: none|async|sync|pwrite-fdatasync")
      ->type_name("MODE")
      ->capture_default_str()
      ->check(DurabilityCheck());
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunCommit(*args); });
}

}  // namespace regionstore::regionctl
